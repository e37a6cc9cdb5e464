"""The HTML report: one self-contained file holding every table and figure, nothing fetched."""

from __future__ import annotations

import base64
import io
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from ccbench.reporting import html as report_html
from ccbench.running.cli import main
from ccbench.running.results import write_results

X = "constraints.n_constraints"


def _data() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for d in ("iris", "wine", "glass"):
        for n in (10, 40):
            base = rng.uniform(0.4, 0.7, 5)
            for shift, method in ((0.1, "scssap"), (0.05, "kmeans"), (0.0, "ap")):
                for t in range(5):
                    failed = method == "ap" and d == "glass" and n == 40 and t == 4
                    rows.append({
                        "dataset.name": d, "method.name": method, "constraints.name": "random_pairs",
                        X: n, "noise.name": "none", "x_axis": X, "trial": t, "trial_seed": 1000 * n + t,
                        "config_hash": f"{d}-{method}-{n}", "status": "error" if failed else "ok",
                        "error": "ValueError: boom | bad" if failed else None,
                        "ari": np.nan if failed else base[t] + shift + rng.normal(0, 0.01),
                        "fit_time": 0.1,
                    })
    return pd.DataFrame(rows)


class _Tables(HTMLParser):
    """Collects every <table> as a list of rows of cell texts, and every src/href."""

    def __init__(self):
        super().__init__()
        self.tables, self.links, self._cell = [], [], None

    def handle_starttag(self, tag, attrs):
        self.links += [v for k, v in attrs if k in ("src", "href") and v]
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(self._cell.strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    data = _data()
    path = report_html.write_html(data, tmp_path_factory.mktemp("html"), metrics=["ari"], x=X,
                                  command="ccbench report sweep --metric ari")
    text = path.read_text(encoding="utf-8")
    parser = _Tables()
    parser.feed(text)
    return text, parser


def _find(tables, header_cell):
    return [t for t in tables if t and header_cell in t[0]]


def test_page_holds_every_table(page):
    text, parsed = page
    summary = _find(parsed.tables, f"{X}=10")
    assert len(summary) == 1 and len(summary[0]) == 1 + 9  # header + 3 data sets x 3 methods
    assert ["glass", "ap"] == summary[0][1][:2] and "(4/5)" in summary[0][1][3]  # a failed trial is counted
    ranks = _find(parsed.tables, "average rank")
    assert len(ranks) == 1
    order = [r[0] for r in ranks[0][1:]]
    assert order[:3] == ["scssap", "kmeans", "ap"]  # better by construction
    # win/tie/loss over blocks follows the per-cell tests' one verdict rule: 5 trials per cell and 3 pairs to
    # correct for cannot reach alpha, so no block is a win however large the margin (issue 38, item 14)
    assert _find(parsed.tables, "scssap") and any("0/3/0" in row for t in parsed.tables for row in t)
    assert not any("3/0/0" in row for t in parsed.tables for row in t)
    tests = _find(parsed.tables, "p_holm")
    assert len(tests) == 1 and len(tests[0]) == 1 + 3 * 2 * 3  # 6 cells x 3 pairs
    problems = _find(parsed.tables, "first message")
    assert problems and any("ValueError: boom | bad" in row for row in problems[0])  # escaped pipe survives
    assert "Friedman chi²" in text and "ccbench report sweep --metric ari" in text
    # the environment table comes from the rows: these synthetic rows carry no provenance, and the page
    # says so instead of describing the machine that wrote the report
    assert _find(parsed.tables, "origin")  # ... from the rows, which predate provenance
    assert "unknown: rows recorded before ccbench kept provenance" in text


def test_page_is_self_contained(page):
    import matplotlib.image

    text, parsed = page
    assert "http://" not in text and "https://" not in text and "<script" not in text and "<link" not in text
    external = [link for link in parsed.links if not link.startswith(("data:image/png;base64,", "#"))]
    assert external == []
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(images) == 2  # the metric plot and the CD diagram
    for b64 in images:
        img = matplotlib.image.imread(io.BytesIO(base64.b64decode(b64)), format="png")
        assert img.ndim == 3 and min(img.shape[:2]) > 100


def test_markdown_tables_become_html_tables():
    out = report_html.markdown_to_html("intro `code`\n\n| a | b |\n|---|---|\n| 1 \\| 2 | <x> |\n")
    assert "<p>intro <code>code</code></p>" in out
    assert "<th>a</th><th>b</th>" in out and "<td>1 | 2</td><td>&lt;x&gt;</td>" in out


def test_report_command_writes_the_html_beside_summary_md(tmp_path):
    data = _data()
    for i, (_, part) in enumerate(data.groupby("config_hash")):
        write_results(part, tmp_path / "sweep" / str(i) / "results.parquet")
    out = tmp_path / "out"
    assert main(["report", str(tmp_path / "sweep"), "--metric", "ari", "--out", str(out)]) == 0
    assert (out / "summary.md").exists() and (out / report_html.HTML_FILE).exists()
    assert "<h2 id=\"config\">" in (out / report_html.HTML_FILE).read_text()
    assert main(["report", str(tmp_path / "sweep"), "--metric", "ari", "--out", str(tmp_path / "o2"),
                 "--no-html"]) == 0
    assert not (tmp_path / "o2" / report_html.HTML_FILE).exists()


def test_a_page_of_many_pairs_lists_the_ones_with_a_verdict_first_and_says_how_many(monkeypatch):
    """Past MAX_PAIR_ROWS, the pairs table holds that many rows, every pair with a verdict before any
    without, and says how many there are in all (a million-pair HTML table was a 1M-row report's cost)."""
    from ccbench.reporting.stats import paired_tests

    data = _data()
    twin = data[data["method.name"] == "ap"].assign(**{"method.name": "ap_twin"})
    twin["ari"] += 0.001  # below the margin: no verdict against ap
    data = pd.concat([data, twin], ignore_index=True)
    big = pd.concat([data.assign(**{"trial_seed": data["trial_seed"] + 100 * k, "trial": data["trial"] + 5 * k})
                     for k in range(4)], ignore_index=True)  # 20 paired trials a cell: verdicts exist
    tests = paired_tests(big, "ari", X)
    decided = tests["verdict"].str.endswith(" better")
    assert 0 < decided.sum() < len(tests)
    monkeypatch.setattr(report_html, "MAX_PAIR_ROWS", int(decided.sum()) + 1)
    text = report_html.html_page(big, metrics=["ari"], x=X)
    parser = _Tables()
    parser.feed(text)
    (table,) = _find(parser.tables, "p_holm")
    verdicts = [row[table[0].index("verdict")] for row in table[1:]]
    assert len(verdicts) == decided.sum() + 1
    assert all(v.endswith(" better") for v in verdicts[:-1]) and not verdicts[-1].endswith(" better")
    assert f"of the {len(tests):,} pairs (those with a verdict first)" in text
