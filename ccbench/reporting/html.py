"""A self-contained HTML page per sweep: tables, plots, statistics, config, problems, metadata.

Everything is inline (CSS in a ``<style>`` element, figures as base64 PNG
``data:`` URIs), so the file opens offline and can be mailed or archived as one
file. The tables reuse :mod:`ccbench.reporting.summary` (the same text as ``summary.md``)
and :mod:`ccbench.reporting.stats` (paired tests, ranks, Friedman, the critical-difference
diagram)::

    data = load("multirun/2026-01-01/12-00-00")
    write_html(data, "out", metrics=["ari"], x="constraints.n_constraints")
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
from pathlib import Path

import pandas as pd

from ..running.config import CELL_FILE
from ._format import (
    DEFAULT_METRIC,
    DEFAULT_X,
    fmt,
    is_ranked,
    method_colors,
    method_labels,
)
from ._safe import output_dir, write_text
from .origins import method_versions, provenance_table, provenance_warnings
from .plots import CI_LEVEL, _draw_paper, plot_metric
from .stats import (
    CELL,
    average_ranks,
    block_means,
    cd_diagram,
    friedman,
    friedman_min_p,
    min_pairs,
    paired_tests,
    _same,
    resolve_at,
    wilcoxon_min_p,
)
from .summary import (
    markdown_table,
    paper_for_metric,
    paper_table,
    plain_text,
    problems_table,
    read_cell,
    summarise,
)
from .constraint_utility import utility
from .bound_gap import bound_section_html, bound_table, gap_figure, has_bound

__all__ = ["write_html", "html_page", "markdown_to_html", "HTML_FILE"]

HTML_FILE = "report.html"
_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.6em 0 1.2em; font-size: 0.85em; display: block;
        overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }
th { background: #f0f0f0; }
tr:nth-child(even) td { background: #fafafa; }
img { max-width: 100%; }
code, pre { background: #f5f5f5; font-size: 0.85em; }
pre { padding: 0.6em; overflow-x: auto; }
details { margin: 0.5em 0 1em; }
.note { color: #555; font-size: 0.9em; }
"""
_PIPE = re.compile(r"(?<!\\)\|")


def _inline(text: str) -> str:
    """Escape, then turn markdown `code` spans into <code> and **bold** spans (outside code) into <strong>.

    The bold rule runs on the escaped text with the code spans held out: ``**`` inside a code span stays
    literal, a bold span may hold a code span, and an unpaired ``**`` stays as typed (text, not markup)."""
    escaped = html.escape(html.unescape(text.replace("\\|", "|").replace("\\[", "[").replace("\\]", "]")))
    escaped = escaped.replace("\x00", " ")  # the placeholder below: a NUL in the text is no code span
    codes = re.findall(r"`([^`]*)`", escaped)
    held = re.sub(r"`[^`]*`", "\x00", escaped)  # code spans held out while bold is found
    held = re.sub(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", r"<strong>\1</strong>", held)
    spans = iter(codes)
    return re.sub("\x00", lambda _: f"<code>{next(spans)}</code>", held)


def markdown_to_html(text: str) -> str:
    """The report's markdown (pipe tables, paragraphs, `code`) as HTML; nothing else is needed."""
    out, table = [], []

    def flush():
        if table:
            rows = [[c.strip() for c in _PIPE.split(line.strip())[1:-1]] for line in table]
            rows = [r for r in rows if not all(set(c) <= set("-: ") and c for c in r)]
            head, body = rows[0], rows[1:]
            out.append("<table><thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr></thead><tbody>"
                       + "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in body)
                       + "</tbody></table>")
            table.clear()

    for line in text.splitlines():
        if line.strip().startswith("|"):
            table.append(line)
            continue
        flush()
        if line.strip():
            out.append(f"<p>{_inline(line.strip())}</p>")
    flush()
    return "\n".join(out)


def _frame_html(frame: pd.DataFrame, index: bool = True, floats: str = "{:.3g}") -> str:
    return frame.to_html(index=index, border=0, float_format=floats.format, na_rep="", escape=True)


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="figure" src="data:image/png;base64,{data}">'


def _config_section(data: pd.DataFrame) -> str:
    sources = sorted(data["source"].dropna().unique()) if "source" in data else []
    cells = [c for c in (read_cell(Path(s) / CELL_FILE) for s in sources) if c]
    if not cells:
        return "<p>No cell.json found beside the results.</p>"
    flat = pd.json_normalize(cells)
    varying = [c for c in flat.columns if flat[c].astype(str).nunique() > 1]
    fixed = {c: flat[c].iloc[0] for c in flat.columns if c not in varying}
    parts = [f"<p>{len(cells)} job(s). Keys that vary between jobs: "
             f"{', '.join(f'<code>{html.escape(c)}</code>' for c in varying) or 'none'}.</p>",
             "<details><summary>Values shared by every job</summary><pre>"
             + html.escape(json.dumps(fixed, indent=1, sort_keys=True, default=str)) + "</pre></details>"]
    return "\n".join(parts)


def _stats_section(data: pd.DataFrame, metric: str, x: str, pool, margin: float, alpha: float, at=None,
                   colors: dict | None = None) -> str:
    """Across data sets at one x value (ranks, Friedman, CD diagram, win/tie/loss; ranked metrics
    only) and per cell (Wilcoxon-Holm), each with what its sample size allows."""
    parts = []
    tests = paired_tests(data, metric, x, pool, margin=margin, alpha=alpha)
    if not is_ranked(metric):
        parts.append(f"<h3>Across data sets</h3><p class='note'><code>{html.escape(metric)}</code> is not ranked "
                     f"(direction 'none': e.g. a count, where fewer is not better): no ranks, Friedman test, "
                     f"CD diagram or win/tie/loss. The per-cell tests below ask only whether two methods differ.</p>")
    else:
        try:
            chosen = resolve_at(data, metric, x, pool, at)
            all_means = block_means(data, metric, x, pool, at=chosen, complete=False)
        except ValueError as exc:
            return f"<p>No statistics: {html.escape(str(exc))}</p>"
        parts.append(_across_section(all_means, metric, x, chosen, at is None, margin, alpha, colors, tests))
    if len(tests):
        significant = int(tests["verdict"].str.endswith((" better", " higher")).sum())
        too_few = int((tests["p_min"] > alpha).sum())
        per_cell = tests.groupby(CELL, dropna=False).size()
        need = min_pairs(alpha, int(per_cell.max()))
        parts.append(f"<h3>Per cell: paired Wilcoxon signed-rank tests</h3><p class='note'>{len(tests)} method pairs "
                     f"over paired trials, Holm-corrected within each (data set, setting, x). One verdict rule "
                     f"everywhere on this page: a method is better only when p_holm &lt;= {alpha} AND "
                     + (f"its mean is better by at least {margin:g}" if is_ranked(metric) else "they differ")
                     + f"; {significant} pair(s) get a verdict. "
                     + ("W/T/L per trial with margin {margin:g} (counts, not a verdict). ".format(margin=margin)
                        if is_ranked(metric) else "")
                     + f"p_min is the smallest Holm-adjusted p the cell's trials can give: with "
                     f"{int(per_cell.max())} method pair(s) per cell to correct for, a difference needs at least "
                     f"{need} paired trials (a single Wilcoxon test needs {min_pairs(alpha)})"
                     + (f"; {too_few} pair(s) have too few trials to reach alpha and get no verdict" if too_few else "")
                     + ".</p>")
        parts.append(_pairs_table(tests))
    return "\n".join(parts)


#: method pairs listed on the page: past this, the pairs with a verdict first, and where to get all
MAX_PAIR_ROWS = 2000


def _pairs_table(tests: pd.DataFrame) -> str:
    """Every per-cell pair, or at most :data:`MAX_PAIR_ROWS` of them (those with a verdict first): a
    sweep of 100,000 jobs has a million pairs, an HTML table nobody reads and the page's largest cost."""
    if len(tests) <= MAX_PAIR_ROWS:
        return "<details><summary>All pairs</summary>" + _frame_html(tests, index=False) + "</details>"
    decided = tests["verdict"].str.endswith((" better", " higher"))
    shown = pd.concat([tests[decided], tests[~decided]]).head(MAX_PAIR_ROWS)
    return (f"<details><summary>{MAX_PAIR_ROWS:,} of the {len(tests):,} pairs (those with a verdict first)</summary>"
            "<p class='note'>Every pair: <code>ccbench.reporting.stats.paired_tests(ccbench.running.results.gather("
            "DIR), metric)</code>.</p>" + _frame_html(shown, index=False) + "</details>")


def _block_verdicts(tests: pd.DataFrame, means: pd.DataFrame, at) -> pd.DataFrame:
    """The per-cell verdicts (:func:`paired_tests`, the one rule) of the blocks of ``means`` at their x:
    ``at``, or each block's largest x with tests when ``at`` is None."""
    if tests.empty:
        return tests
    blocks = tests.set_index(["dataset", "setting"]).index.isin(means.index)
    rows = tests[blocks]
    if at is None:
        xs = pd.to_numeric(rows["x"], errors="coerce")
        top = xs.groupby([rows["dataset"], rows["setting"]]).transform("max")
        return rows[xs == top]
    return rows[rows["x"].map(_same(at))]


def _rule_table(verdicts: pd.DataFrame, methods: list, word: str = "better") -> pd.DataFrame:
    """w/t/l of the row method against the column method over blocks, by the per-cell verdicts."""
    table = pd.DataFrame("", index=methods, columns=methods)
    for a in methods:
        for b in methods:
            if a == b:
                continue
            pair = verdicts[((verdicts["A"] == a) & (verdicts["B"] == b)) | ((verdicts["A"] == b) & (verdicts["B"] == a))]
            w = int((pair["verdict"] == f"{a} {word}").sum())
            lo = int((pair["verdict"] == f"{b} {word}").sum())
            table.loc[a, b] = f"{w}/{len(pair) - w - lo}/{lo}"
    return table


def _across_section(all_means: pd.DataFrame, metric: str, x: str, at, default: bool, margin: float,
                    alpha: float, colors: dict | None, tests: pd.DataFrame | None = None) -> str:
    absent = [m for m in all_means.columns if all_means[m].isna().all()]
    block_values = all_means.drop(columns=absent).dropna()
    dropped = len(all_means) - len(block_values)
    n_blocks = len(block_values)
    # the statistics' blocks are data sets: several settings (noise levels, options) of one data set share
    # its points, so they are averaged into one block per data set first
    means = block_values.groupby(level="dataset").mean()
    means.attrs["at"] = at
    n, k = means.shape
    if at is None:  # the blocks' largest x differ (a budget per data set)
        where = (f"each data set's largest <code>{html.escape(x)}</code> "
                 f"(<code>ccbench report --at X</code> picks one value)")
    else:
        where = (f"<code>{html.escape(x)}</code> = {html.escape(fmt(at))}"
                 + (" (the largest value; <code>ccbench report --at X</code> picks another)" if default else ""))
    parts = [f"<h3>Across data sets at {where}</h3><p class='note'>Blocks are data sets at this one x "
             f"value (never pooled over x: x = 0 has no supervision); a block's value is the method's mean "
             f"over trials, averaged over the data set's settings. {n} complete data set(s)"
             + (f" from {n_blocks} (data set, setting) blocks" if n_blocks != n else "")
             + (f" ({dropped} block(s) left out: some method has no ok trial there)" if dropped else "")
             + (f"; not ranked, no ok trial at this x: {', '.join(map(html.escape, absent))}" if absent else "")
             + ".</p>"]
    floor = friedman_min_p(n, k) if n >= 2 and k >= 3 else 1.0
    if n >= 2 and k >= 3 and floor <= alpha:
        ranks = average_ranks(means, metric).rename_axis("method").reset_index(name="average rank")
        parts.append(_frame_html(ranks, index=False, floats="{:.2f}"))
        fr = friedman(means)
        parts.append(f"<p>Friedman chi² = {fr['statistic']:.3f}, p = {fr['pvalue']:.3g} "
                     f"(Iman-Davenport F = {fr['iman_davenport']:.3f}, p = {fr['pvalue_iman_davenport']:.3g}) "
                     f"over {n} data sets and {k} methods; the smallest p Friedman's test can give here is "
                     f"{floor:.3g}.</p>")
        parts.append(_png(cd_diagram(means, metric, alpha=alpha, colors=colors)))
    elif n >= 2 and k >= 3:
        parts.append(f"<p>No ranks across data sets, Friedman test or CD diagram: with {n} data set(s) and {k} "
                     f"methods the smallest p Friedman's test can give is {floor:.3g}, above alpha = {alpha} (too few "
                     f"data sets for the test to reach its level).</p>")
    elif k == 2 and n >= 1:
        parts.append(f"<p>No ranks across data sets: two methods over {n} data set(s); a Wilcoxon test over "
                     f"them can give p >= {wilcoxon_min_p(n):.3g}"
                     + (" (too few data sets to reach alpha)" if wilcoxon_min_p(n) > alpha else "") + ".</p>")
    else:
        parts.append("<p>No Friedman test or CD diagram: they need at least 3 methods on 2 complete data sets.</p>")
    verdicts = _block_verdicts(tests if tests is not None else pd.DataFrame(), block_values, at)
    if n_blocks >= 1 and k >= 2 and len(verdicts):
        parts.append(f"<p>Win/tie/loss of the row method against the column method over the (data set, setting) "
                     f"blocks, by the one verdict rule of the per-cell tests below (p_holm &lt;= {alpha} AND a "
                     f"difference of at least {margin:g}); a block with no verdict (too few trials, or not "
                     f"significant) is a tie:</p>")
        parts.append(_frame_html(_rule_table(verdicts, list(block_values.columns)).rename_axis(None)))
    return "\n".join(parts)


def _utility_section(data: pd.DataFrame, baseline: str, metric: str, x: str, pool) -> str:
    note = ""
    try:
        table = utility(data, baseline, metric, x, pool, with_coherence=True)
    except (OSError, ImportError) as exc:  # coherence re-draws the constraints: the data must be at hand
        table = utility(data, baseline, metric, x, pool)
        note = f" Coherence left out: {exc}."
    return (f"<h3>Constraint-set utility against {html.escape(baseline)}</h3><p class='note'>Davidson, Wagstaff "
            f"&amp; Basu 2006: informativeness is the share of the constraints the unconstrained baseline violates "
            f"on the same trial, coherence the share of (must-link, cannot-link) pairs whose segments do not "
            f"overlap; gain is the method minus the baseline and share_worse the share of trials in which the "
            f"constraints made the method worse.{html.escape(note)}</p>" + _frame_html(_per_method(table), index=False)
            + "<details><summary>Per data set, setting and x</summary>" + _frame_html(table, index=False)
            + "</details>")


def _per_method(table: pd.DataFrame) -> pd.DataFrame:
    """The utility table pooled over cells: trial-weighted means per method."""
    cols = [c for c in ("informativeness", "coherence", "gain", "share_worse") if c in table]
    weighted = table[cols].mul(table["n_pairs"], axis=0).groupby(table["method"]).sum()
    n = table.groupby("method")["n_pairs"].sum()
    return weighted.div(n, axis=0).assign(n_pairs=n).reset_index()[["method", "n_pairs", *cols]]


def html_page(data: pd.DataFrame, metrics=(DEFAULT_METRIC,), x: str = DEFAULT_X, pool=(),
              paper: dict | None = None, command: str | None = None, margin: float = 0.03,
              alpha: float = 0.05, baseline: str | None = None, at=None) -> str:
    """The report of ``data`` as one HTML string (see the module docstring); ``baseline`` (an
    unconstrained method label) adds the constraint-set utility of every method against it;
    ``at`` is the x value at which methods are ranked across data sets (default: the largest)."""
    if "method_label" not in data:
        data = data.assign(method_label=method_labels(data))
    # one colour per method label on the whole page: line plots and CD diagrams alike
    colors = method_colors(method_labels(data, x))
    n_jobs = data["source"].nunique() if "source" in data else 1
    body = [f"<h1>ccbench report</h1><p>{len(data)} trials from {n_jobs} job(s); x = <code>{html.escape(x)}</code>. "
            f"Every method of a cell saw the same constraint sets (paired trials); tables show mean ± std "
            f"(ddof=1) over the ok trials, plots the mean with a {CI_LEVEL:.0%} confidence interval of "
            f"the mean clipped to the metric's range.</p>"]
    if command:
        body.append(f"<p>Generated by <code>{html.escape(command)}</code>.</p>")
    body.append("<nav><ul>" + "".join(f'<li><a href="#metric-{html.escape(m)}">{html.escape(m)}</a></li>' for m in metrics)
                + '<li><a href="#problems">Problems</a></li><li><a href="#config">Config</a></li>'
                  '<li><a href="#environment">Environment</a></li></ul></nav>')
    for m in metrics:
        summary = summarise(data, m, x, pool)
        body.append(f'<h2 id="metric-{html.escape(m)}">{html.escape(m)}</h2>')
        body.append(markdown_to_html(markdown_table(summary, m, x)))
        fig = plot_metric(summary, m, x, colors=colors)
        block = paper_for_metric(paper, m)
        if block:
            body.append("<h3>Beside the paper</h3>" + markdown_to_html(paper_table(summary, block)))
            _draw_paper(fig, paper)
        body.append(_png(fig))
        try:
            body.append(_stats_section(data, m, x, pool, margin, alpha, at=at, colors=colors))
        except ValueError as exc:  # e.g. replicates that need --pool: the rest of the page still helps
            body.append(f"<p>No statistics for {html.escape(m)}: {html.escape(str(exc))}</p>")
        if baseline:
            body.append(_utility_section(data, baseline, m, x, pool))
    if has_bound(data):  # k-means-cost rows with the certified bound (issue 52, experiment=pcsos)
        table = bound_table(data)
        body.append('<h2 id="lower-bound">Against the certified lower bound</h2>' + bound_section_html(table)
                    + _png(gap_figure(table)))
    body.append('<h2 id="problems">Problems</h2>' + markdown_to_html(problems_table(data)))
    body.append('<h2 id="config">Config</h2>' + _config_section(data))
    body.append('<h2 id="environment">Environment</h2><p class="note">The machines and code that made these rows, '
                'read from the rows themselves (<code>env.*</code>, <code>code.*</code> columns).</p>'
                + _frame_html(provenance_table(data), index=False))
    versions = method_versions(data)
    if len(versions):
        body.append("<h3>Method code</h3><p class='note'>installed = the code installed where this report was "
                    "written.</p>" + _frame_html(versions, index=False))
    warn = provenance_warnings(data)
    if warn:
        body.append("<h3>Provenance warnings</h3><ul>" + "".join(f"<li>{html.escape(w)}</li>" for w in warn) + "</ul>")
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>ccbench report</title>"
            f"<style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def write_html(data: pd.DataFrame, out_dir, **kwargs) -> Path:
    """Write :func:`html_page` to ``out_dir/report.html``; return its path."""
    out = output_dir(out_dir)
    path = out / HTML_FILE
    with plain_text():
        page = html_page(data, **kwargs)
    return write_text(path, page, out)
