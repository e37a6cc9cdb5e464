"""``ccbench report DIR --format latex,csv`` (issue 30, item 10)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from ccbench.reporting.export import latex_escape, parse_formats
from ccbench.reporting.summary import load, summarise
from ccbench.running.cli import main
from ccbench.running.results import write_results

X = "constraints.n_constraints"


def _rows(dataset, method, n_constraints, scores, status=None):
    status = status or ["ok"] * len(scores)
    return [{
        "dataset.name": dataset, "dataset.preprocess": "none", "method.name": method,
        "constraints.name": "random_pairs", X: n_constraints, "noise.name": "none", "noise.rate": 0.0,
        "seed": 0, "config_hash": f"{dataset}-{method}-{n_constraints}", "trial": t, "status": st,
        "error": None if st == "ok" else f"{st}: boom", "modified_rand": score if st == "ok" else np.nan,
        "fit_time": 0.1, "timestamp": f"2026-01-01T00:00:{t:02d}",
    } for t, (score, st) in enumerate(zip(scores, status))]


@pytest.fixture
def sweep(tmp_path):
    rows = []
    for n in (0, 50):
        rows += _rows("breast_cancer", "kmeans", n, [0.80, 0.82, 0.84])
        rows += _rows("breast_cancer", "cop_kmeans", n, [0.90, 0.92, 0.94, 0.0], ["ok", "ok", "ok", "error"])
        rows += _rows("iris", "kmeans", n, [0.5, 0.5, 0.5])
    data = pd.DataFrame(rows)
    for i, (_, part) in enumerate(data.groupby("config_hash")):
        write_results(part, tmp_path / "sweep" / str(i) / "results.parquet")
    return tmp_path / "sweep"


def test_report_exports_latex_and_csv(sweep, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["report", str(sweep), "--x", X, "--out", str(out), "--no-html", "--format", "latex,csv"]) == 0
    wrote = capsys.readouterr().out
    assert "summary.csv" in wrote and "summary_modified_rand.tex" in wrote

    csv = pd.read_csv(out / "summary.csv", dtype={"setting": str}, keep_default_na=False, na_values={"mean": [""], "std": [""]})
    expected = summarise(load(sweep), "modified_rand", X)
    pd.testing.assert_frame_equal(csv[expected.columns].reset_index(drop=True), expected.reset_index(drop=True),
                                  check_dtype=False)

    tex = (out / "summary_modified_rand.tex").read_text()
    assert tex.count(r"\begin{tabular}{llrr}") == 1 and r"\toprule" in tex and r"\end{table}" in tex
    body = tex[tex.index(r"\midrule") + len(r"\midrule"):tex.index(r"\bottomrule")].strip().splitlines()
    rows = {tuple(c.strip() for c in line.removesuffix(r"\\").split(" & ")[:2]): line for line in body}
    assert sorted(rows) == [(r"breast\_cancer", r"cop\_kmeans"), (r"breast\_cancer", "kmeans"), ("iris", "kmeans")]
    assert all(line.count(" & ") == 3 and line.endswith(r"\\") for line in body)  # 2 + 2 x values
    # mean ± std (ddof=1) of 0.80/0.82/0.84, as in summary.md, in math mode
    assert rows[(r"breast\_cancer", "kmeans")].split(" & ")[2] == r"$0.820 \pm 0.020$"
    # 3 of 4 trials ok: said, as summary.md says it
    assert rows[(r"breast\_cancer", r"cop\_kmeans")].split(" & ")[2] == r"$0.920 \pm 0.020$ (3/4)"
    # std 0 is a number, not a missing value
    assert rows[("iris", "kmeans")].split(" & ")[3].startswith(r"$0.500 \pm 0.000$")
    header = next(line for line in tex.splitlines() if line.startswith("data set & method"))
    assert re.fullmatch(r"data set & method & 0 & 50 \\\\", header), header


def test_report_without_format_writes_no_export(sweep, tmp_path):
    out = tmp_path / "out"
    assert main(["report", str(sweep), "--x", X, "--out", str(out), "--no-html"]) == 0
    assert not list(out.glob("*.tex")) and not (out / "summary.csv").exists()


def test_unknown_format_is_one_line_and_exit_2(sweep, tmp_path, capsys):
    assert main(["report", str(sweep), "--out", str(tmp_path / "o"), "--no-html", "--format", "latex,docx"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["ccbench report: error: unknown --format ['docx']; choose from latex,csv"]


def test_latex_escape_and_format_parsing():
    assert latex_escape(r"a_b & 5% #1 $x$ {y} ~ ^ \ ") == (
        r"a\_b \& 5\% \#1 \$x\$ \{y\} \textasciitilde{} \textasciicircum{} \textbackslash{} ")
    assert parse_formats(" LaTeX, csv,latex ") == ["latex", "csv"]
    assert parse_formats(None) == []
