"""Stale rows that were not marked stale (issue 42, item 4): what shapes a row besides its method's
own modules — the tuning grid, the method a cell takes its k from, a helper loaded with
``importlib.import_module("literal")``, the metrics' code — now makes the row stale when it changes.

Each test failed on the code before the fix.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ccbench import registry
from ccbench.running import provenance
from ccbench.running.harness import run_job
from ccbench.running.results import read_results

PLUGIN = textwrap.dedent("""
    import importlib
    import numpy as np
    from ccbench import ConstrainedClusterer, MetricSpec, MethodSpec, hookimpl

    class Finder(ConstrainedClusterer):
        '''Finds k itself (two clusters), or, with a helper, loads it by a literal name.'''
        def __init__(self, random_state=None):
            self.random_state = random_state

        def fit(self, X, y=None, *, constraints=None):
            helper = importlib.import_module("{helper}")
            self.labels_ = (np.arange(len(X)) % helper.K).astype(int)
            return self

    @hookimpl
    def ccbench_methods():
        return [MethodSpec("{name}", Finder, "k from a helper")]

    @hookimpl
    def ccbench_metrics():
        from scored_by import share_first
        return [MetricSpec("share_first", share_first, "share of points in cluster 0", direction="none")]
""")


def _touch(path: Path, text: str) -> None:
    path.write_text(text)
    later = time.time() + 5  # a new mtime even on coarse file-system clocks
    os.utime(path, (later, later))


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    pkg = tmp_path / "thirdparty"
    pkg.mkdir()
    (pkg / "dyn_helper.py").write_text("K = 2\n")
    (pkg / "scored_by.py").write_text("def share_first(y_true, y_pred, *, constraints=None):\n"
                                      "    return float((y_pred == 0).mean())\n")
    (pkg / "finder_plugin.py").write_text(PLUGIN.format(helper="dyn_helper", name="finder"))
    monkeypatch.syspath_prepend(str(pkg))
    yield pkg
    registry.unregister_plugin("finder_plugin")
    for name in ("finder_plugin", "dyn_helper", "scored_by"):
        sys.modules.pop(name, None)


def _cell(method, **extra):
    return {"dataset": {"name": "iris"}, "method": method, "constraints": {"name": "random_pairs", "n_constraints": 20},
            "noise": {"name": "none"}, "n_trials": 2, "plugins": ["finder_plugin"], "metrics": ["ari"], **extra}


def _reran(first, again) -> bool:
    return bool((again["timestamp"] > first["timestamp"].max()).all())


def test_a_helper_loaded_with_import_module_of_a_literal_is_part_of_the_method_code(plugin, tmp_path):
    cell = _cell({"name": "finder"})
    run_job(cell, out_dir=tmp_path)
    first = read_results(tmp_path)
    assert "dyn_helper" in json.loads(first["code.method_files"].iloc[0])
    _touch(plugin / "dyn_helper.py", "K = 3  # edited\n")
    run_job(cell, out_dir=tmp_path)
    again = read_results(tmp_path)
    assert _reran(first, again) and again["rerun_reason"].str.contains("dyn_helper").all()


def test_editing_the_method_that_gives_k_makes_the_rows_stale(plugin, tmp_path):
    cell = _cell({"name": "kmeans", "n_clusters": "from_method=finder"})
    run_job(cell, out_dir=tmp_path)
    first = read_results(tmp_path)
    assert "from_method:finder" in json.loads(first[provenance.INPUTS].iloc[0])
    _touch(plugin / "finder_plugin.py", (plugin / "finder_plugin.py").read_text() + "\n# edited\n")
    run_job(cell, out_dir=tmp_path)
    again = read_results(tmp_path)
    assert _reran(first, again) and again["rerun_reason"].str.contains("from_method:finder").all()


def test_editing_a_metrics_code_makes_the_rows_stale(plugin, tmp_path):
    cell = _cell({"name": "kmeans", "n_clusters": 3}, metrics=["ari", "share_first"])
    registry.load_plugins(["finder_plugin"])  # its metric is checked before the job loads plugins
    run_job(cell, out_dir=tmp_path)
    first = read_results(tmp_path)
    inputs = json.loads(first[provenance.INPUTS].iloc[0])
    import ccbench.metrics

    # the built-in metrics are hashed by their module, ccbench/metrics.py
    assert inputs["metric:ari"] == provenance._file_hash(Path(ccbench.metrics.__file__))
    _touch(plugin / "scored_by.py", (plugin / "scored_by.py").read_text() + "\n# edited\n")
    run_job(cell, out_dir=tmp_path)
    again = read_results(tmp_path)
    assert _reran(first, again) and again["rerun_reason"].str.contains("metric:share_first").all()
    from ccbench.reporting import origins, summary

    # keep_stale rows are marked by the report too
    _touch(plugin / "scored_by.py", (plugin / "scored_by.py").read_text() + "\n# again\n")
    run_job({**cell, "keep_stale": True}, out_dir=tmp_path)
    assert origins.stale_rows(summary.load(tmp_path)).all()


def test_editing_the_tuning_grid_makes_tuned_rows_stale(tmp_path, monkeypatch):
    cell = {"dataset": {"name": "iris"}, "method": {"name": "pck_means", "n_clusters": 3},
            "constraints": {"name": "random_pairs", "n_constraints": 20}, "noise": {"name": "none"},
            "n_trials": 1, "metrics": ["ari"], "tune": "cvcp", "tune_folds": 2}
    run_job(cell, out_dir=tmp_path)
    first = read_results(tmp_path)
    real = registry.get_method_spec

    def edited(name):
        spec = real(name)
        return dataclasses.replace(spec, grid={"penalty": (0.1, 1.0, 100.0)}) if name == "pck_means" else spec

    monkeypatch.setattr(registry, "get_method_spec", edited)
    run_job(cell, out_dir=tmp_path)
    again = read_results(tmp_path)
    assert _reran(first, again) and again["rerun_reason"].str.contains("grid").all()


def test_the_built_in_methods_keep_their_method_hash():
    """A guard, not a regression: the new inputs are a column of their own, and no built-in module
    loads a helper with import_module, so ``code.method_hash`` of every built-in method is what it was
    and the shipped sweeps stay fresh."""
    import ast

    for spec in registry.list_methods():
        for name, path in provenance._import_graph(spec.estimator.__module__).items():
            calls = [n for n in ast.walk(ast.parse(path.read_bytes()))
                     if isinstance(n, ast.Call) and provenance._is_import_module(n.func)]
            assert not calls, (spec.name, name)


# -- item 5: the FasterPAM and SDPA versions are recorded; a cell mixing library versions warns ---


def test_kmedoids_and_sdpa_versions_are_recorded_and_a_cell_mixing_library_versions_warns(tmp_path):
    from importlib.metadata import version

    from ccbench.reporting import origins, summary
    from ccbench.running.results import write_results

    cell = {"dataset": {"name": "iris"}, "method": {"name": "kmeans", "n_clusters": 3},
            "constraints": {"name": "none"}, "noise": {"name": "none"}, "n_trials": 2, "metrics": ["ari"]}
    run_job(cell, out_dir=tmp_path)
    rows = read_results(tmp_path)
    assert set(rows["env.kmedoids"]) == {version("kmedoids")}
    assert set(rows["env.sdpa-python"]) == {version("sdpa-python")}
    assert not any("library versions" in w for w in origins.provenance_warnings(summary.load(tmp_path)))
    rows.loc[0, "env.kmedoids"] = "0.4.0"
    write_results(rows, tmp_path / "results.parquet")
    warned = [w for w in origins.provenance_warnings(summary.load(tmp_path)) if "library versions" in w]
    assert len(warned) == 1 and "kmedoids 0.4.0 (1 rows)" in warned[0] and "iris/kmeans" in warned[0]


def test_editing_the_shared_search_for_k_makes_the_ap_familys_rows_stale(tmp_path, monkeypatch):
    # ccbench/similarity.py holds the AP family's search for k (fit_for_n_clusters): a fix there changed
    # AP's rows on voting while their method hash, over the plugin's own modules, stayed the same
    import ccbench.similarity

    cell = {"dataset": {"name": "iris"}, "method": {"name": "ap", "n_clusters": 3}, "constraints": {"name": "none"},
            "noise": {"name": "none"}, "n_trials": 2, "metrics": ["ari"]}
    run_job(cell, out_dir=tmp_path)
    first = read_results(tmp_path)
    shared = Path(ccbench.similarity.__file__)
    assert json.loads(first[provenance.INPUTS].iloc[0])["core:ccbench.similarity"] == provenance._file_hash(shared)
    assert "core:ccbench.similarity" not in provenance.cell_inputs("kmeans")[provenance.INPUTS]  # kmeans runs none
    real = provenance._file_hash
    monkeypatch.setattr(provenance, "_file_hash", lambda p: "edited" if Path(p) == shared else real(p))
    run_job(cell, out_dir=tmp_path)
    again = read_results(tmp_path)
    assert _reran(first, again) and again["rerun_reason"].str.contains("core:ccbench.similarity").all()


def test_rows_recorded_before_an_input_was_tracked_are_kept_and_said(tmp_path, caplog):
    # the leaderboard's AP-family rows made before ccbench.similarity was tracked carry no core: input: whether
    # the search that made them is today's cannot be told, so they are kept (re-running every such row when a
    # new input is tracked would redo whole sweeps), but the command says so instead of nothing
    import logging

    from ccbench.running.results import write_results

    cell = {"dataset": {"name": "iris"}, "method": {"name": "ap", "n_clusters": 3}, "constraints": {"name": "none"},
            "noise": {"name": "none"}, "n_trials": 2, "metrics": ["ari"]}
    run_job(cell, out_dir=tmp_path)
    rows = read_results(tmp_path)
    older = {k: v for k, v in json.loads(rows[provenance.INPUTS].iloc[0]).items() if not k.startswith("core:")}
    rows[provenance.INPUTS] = json.dumps(older)
    write_results(rows, next(tmp_path.rglob("results.parquet")))
    with caplog.at_level(logging.WARNING, logger="ccbench"):
        run_job(cell, out_dir=tmp_path)
    assert read_results(tmp_path)["timestamp"].tolist() == rows["timestamp"].tolist()  # kept
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "keeping 2 trial(s) recorded before ccbench tracked core:ccbench.similarity" in said
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ccbench"):
        run_job(cell, out_dir=tmp_path / "fresh")
        run_job(cell, out_dir=tmp_path / "fresh")
    assert "recorded before" not in " ".join(r.getMessage() for r in caplog.records)  # rows of today's inputs
