"""PCCC collection 1 (Baumann & Hochbaum, arXiv:2212.14437): the pccc_file scheme reads PCCC's constraint
sets in our row order, the report puts PCCC's published table beside ours (reports/pccc_col1)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _pccc_dir() -> Path | None:
    from ccbench_plugins.datasets.pccc import pccc_dir

    return pccc_dir()


def _needs_pccc():
    root = _pccc_dir()
    if root is None or not (root / "pccc_col1_constraint_counts.tsv").exists():
        pytest.skip(f"PCCC's files are not here ({root}); set CCBENCH_PCCC_DIR to shared/pccc")
    return root


@pytest.mark.parametrize("dataset,pccc", [("soybean_small", "soybean"), ("iris_uci", "iris"),
                                          ("wine_uci", "wine"), ("spectf", "spectfheart"),
                                          ("breast_cancer", "breast_cancer")])
def test_pccc_file_gives_table_w1_counts_in_our_row_order(dataset, pccc):
    root = _needs_pccc()
    from ccbench import load_dataset, registry

    counts = {(r["dataset"], int(r["level_pct"])): (int(r["n_ml"]), int(r["n_cl"]))
              for r in csv.DictReader(open(root / "pccc_col1_constraint_counts.tsv"), delimiter="\t")}
    registry.load_plugins(["ccbench_plugins.datasets.pccc"])  # loaded on request, as the experiment does
    scheme = registry.get_scheme_spec("pccc_file").func
    y = load_dataset(dataset).y
    for level in (5, 10, 15, 20):
        cons = scheme(y, dataset=dataset, fraction=level / 100, rng=np.random.default_rng(0))
        assert (cons.n_must_link, cons.n_cannot_link) == counts[(pccc, level)]
        # every pair agrees with our labels: the row order is ours (the scheme refuses otherwise)
        assert cons.violations(y) == (0, 0)


def test_absent_files_skip_the_trial_with_the_reason(tmp_path, monkeypatch):
    from ccbench.running.harness import run_job

    monkeypatch.setenv("CCBENCH_PCCC_DIR", str(tmp_path / "nowhere"))
    cell = {"dataset": {"name": "iris_uci"}, "method": {"name": "kmeans"}, "n_trials": 1, "metrics": ["ari"],
            "constraints": {"name": "pccc_file", "dataset": "iris_uci", "fraction": 0.1},
            "noise": {"name": "none"}, "plugins": ["ccbench_plugins.datasets.pccc"]}
    if not os.environ.get("CCBENCH_DATA_DIR"):
        pytest.skip("CCBENCH_DATA_DIR is not set")
    row = run_job(cell, out_dir=tmp_path / "job").iloc[0]
    assert row["status"] == "skipped" and "CCBENCH_PCCC_DIR" in row["error"]
    assert "nowhere" in row["error"]


def test_keel_only_sets_are_refused_by_name():
    from ccbench.base import InsufficientSupervisionError
    from ccbench_plugins.datasets.pccc import pccc_file

    with pytest.raises(InsufficientSupervisionError, match="KEEL"):
        pccc_file(np.zeros(214, int), dataset="glass", fraction=0.1)


def test_inertia_and_violation_counts():
    from ccbench import Constraints, registry

    X = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 0.0], [10.0, 4.0]])
    labels = np.array([0, 0, 1, 1])
    assert registry.get_metric_spec("inertia").func(None, labels, X=X) == pytest.approx(2.0 + 8.0)
    cons = Constraints([[0, 2]], [[0, 1], [2, 3]], n_samples=4)
    assert registry.get_metric_spec("violated_constraints").func(None, labels, constraints=cons) == 3
    assert registry.get_metric_spec("violated_cannot_links").func(None, labels, constraints=cons) == 2


def test_paper_grid_puts_a_per_level_table_beside_ours():
    from ccbench.reporting.summary import paper_for_metric, paper_table

    summary = pd.DataFrame({"dataset": ["iris_uci"] * 2, "method_label": ["kmeans"] * 2, "x": [0.05, 0.1],
                            "mean": [0.61, 0.62], "std": [0.01, 0.0], "n_ok": [10, 10], "n_trials": [10, 10]})
    paper = {"source": "PCCC", "metric": "ari", "methods": {"KMEANS": "kmeans", "PCCC": None},
             "table": {"iris_uci": {"0.05": {"KMEANS": 0.626, "PCCC": 0.698}, "0.1": {"KMEANS": 0.626, "PCCC": None}}},
             "by_metric": {"inertia": {"table": {"iris_uci": {"0.05": {"KMEANS": 141.2}}}}}}
    text = paper_table(summary, paper_for_metric(paper, "ari"))
    assert "| iris_uci | 0.05 | KMEANS (`kmeans`) | 0.610 ± 0.010 | 0.626 | -0.016 |" in text
    assert "| iris_uci | 0.1 | PCCC |  | NA |  |" in text
    assert "141.2" in paper_table(summary, paper_for_metric(paper, "inertia"))
    assert paper_for_metric(paper, "nmi") is None


def test_the_committed_report_compares_ari_inertia_and_violations():
    text = (ROOT / "reports" / "pccc_col1" / "summary.md").read_text()
    for metric in ("ari", "inertia", "violated_constraints", "violated_cannot_links"):
        section = text.split(f"## {metric}\n")[1].split("\n## ")[0]
        # the source as text, its "&" escaped or not (markdown renders "&amp;" as "&")
        assert "### Beside the paper" in section, metric
        assert "Baumann & Hochbaum" in section or "Baumann &amp; Hochbaum" in section, metric
    assert "PCCC collection 1" in (ROOT / "reports" / "README.md").read_text()


def test_an_index_outside_the_rows_is_refused_not_wrapped(tmp_path, monkeypatch):
    """Issue 54: a -1 in PCCC's iris/wine sets wrapped to the last row (numpy indexing): a wrong pair, silently."""
    import json

    from ccbench import load_dataset
    from ccbench_plugins.datasets import pccc

    root = _needs_pccc()
    sets = json.loads((root / "pccc_iris_wine_keel.json").read_text())
    sets["iris"]["constraint_sets_keel_index"]["0.05"]["ml"][0][1] = -1
    (tmp_path / "pccc_iris_wine_keel.json").write_text(json.dumps(sets))
    monkeypatch.setenv("CCBENCH_PCCC_DIR", str(tmp_path))
    getattr(pccc._pairs, "cache_clear", lambda: None)()
    y = load_dataset("iris_uci").y
    with pytest.raises(ValueError, match=r"index -1, outside 0\.\.149"):
        pccc.pccc_file(y, "iris_uci", 0.05)
    getattr(pccc._pairs, "cache_clear", lambda: None)()
