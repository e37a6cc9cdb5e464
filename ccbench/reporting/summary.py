"""Reports: gather results, summarise mean ± std, tabulate in markdown, plot.

Everything is a small function of a DataFrame (benchopt style), so a notebook
can reuse any step::

    data = load("multirun/2026-01-01/12-00-00")
    summary = summarise(data, "modified_rand", "constraints.n_constraints")
    fig = plot_metric(summary, "modified_rand", "constraints.n_constraints")

Groups: one panel per data set; one line per *label* = method name plus the
method parameters that vary among that method's rows (``scssap(confidence=0.5)``),
plus any other varying setting (noise, scheme, preprocessing) in brackets.
Only ``ok`` trials enter the mean and the standard deviation (ddof=1); the
other statuses are counted.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ..running.config import CELL_FILE
from ..running.results import (
    FAILED_STATUSES,
    STATUSES,
    gather,
    last_line,
)
from ._format import _CONTROL as _CONTROL_CHARS
from ._format import (
    DEFAULT_METRIC,
    DEFAULT_X,
    cell_text,
    clean,
    clean_text,
    fmt,
    line_label,
    md_plain,
    md_text,
    method_labels,
    setting_labels,
    sorted_values,
)
from ._safe import output_dir, save_figure, write_table, write_text
from .origins import provenance_markdown
from .plots import CI_LEVEL, _draw_paper, plot_metric

__all__ = ["load", "summarise", "markdown_table", "problems_table", "write_report", "paper_reference", "paper_table", "paper_for_metric", "error_summary", "drop_not_converged"]


def load(*paths, damaged: str | list = "raise") -> pd.DataFrame:
    """All results under ``paths`` with a ``method_label`` and ``setting`` column.

    ``damaged="skip"`` leaves out damaged results files with a warning naming each
    (:func:`ccbench.running.results.gather`); by default a damaged file is an error naming it. A shipped
    folder (``rows.parquet`` + ``manifest.jsonl``, :mod:`.shipped`) is read like a sweep, checked against
    its manifest; the newest row per ``(config_hash, trial)`` is kept across all of them.
    """
    from .shipped import is_shipped, newest_rows, read_shipped

    shipped = [p for p in paths if is_shipped(p)]
    if not shipped:
        return prepare(_gather_regular(paths, damaged), paths)
    others = [p for p in paths if p not in shipped]
    frames = [read_shipped(p) for p in shipped] + ([_gather_regular(others, damaged)] if others else [])
    data = newest_rows(pd.concat(frames, ignore_index=True))
    data.attrs["shipped_from"] = [str(p) for p in shipped]
    return prepare(data, paths)


def _gather_regular(paths, damaged):
    """:func:`gather` of the ``results.parquet`` files under ``paths`` that are regular files
    (:func:`._safe.results_files`): a FIFO of that name would block the report for ever, a link may point
    anywhere. Such a file is damaged as far as ``damaged`` goes: an error naming it by default."""
    from ._safe import results_files

    files, refused = results_files(paths)
    for message in refused:
        if isinstance(damaged, list):
            damaged.append(message)
        elif damaged == "skip":
            warnings.warn(message, stacklevel=3)
        else:
            raise ValueError(message)
    if not files:  # none at all: gather's own error; only refused ones (left out): no rows
        return gather(*paths, damaged=damaged) if not refused else pd.DataFrame()
    return gather(*files, damaged=damaged)


def prepare(data: pd.DataFrame, paths=()) -> pd.DataFrame:
    """Gathered rows ready for a report: rows without a method left out (with a warning), labels added."""
    if data.empty:
        return data
    unnamed = data["method.name"].isna() if "method.name" in data else pd.Series(True, index=data.index)
    if unnamed.all():
        raise ValueError(f"no rows with a method.name under {', '.join(map(str, paths))}: "
                         f"these are not ccbench run results")
    if unnamed.any():
        sources = sorted(data.loc[unnamed, "source"].unique()) if "source" in data else []
        warnings.warn(f"left out {int(unnamed.sum())} row(s) with no method.name (not ccbench run results): "
                      f"{', '.join(sources[:3])}{' ...' if len(sources) > 3 else ''}", stacklevel=2)
        data = data[~unnamed].reset_index(drop=True)
    data = _one_line_texts(data)
    data["method_label"] = method_labels(data)
    return data


# text columns that legitimately span lines (a traceback tail, the warnings of a fit) or name a place
_MULTILINE = ("error", "warnings", "source")


def _one_line_texts(data: pd.DataFrame) -> pd.DataFrame:
    """Rows with every control character (a newline in a crafted method name, a terminal escape) in
    their text columns turned into a space (:func:`clean_text`): names and labels stay one line in
    every table, page and terminal line a report writes."""
    cleaned = {}
    for col in data.columns:
        if col in _MULTILINE or not (data[col].dtype == object or pd.api.types.is_string_dtype(data[col].dtype)):
            continue
        values = data[col]
        text = values.map(lambda v: isinstance(v, str))
        if text.any():
            bad = values[text].str.contains(_CONTROL_CHARS, regex=True)
            if bad.any():
                cleaned[col] = values.where(~(text & bad.reindex(values.index, fill_value=False)),
                                            values.map(lambda v: clean_text(v) if isinstance(v, str) else v))
    return data.assign(**cleaned) if cleaned else data


def drop_not_converged(data: pd.DataFrame) -> pd.DataFrame:
    """``data`` without the ``ok`` trials whose method reported ``converged_ = False``."""
    if "converged" not in data:
        return data
    bad = (data["status"] == "ok") & data["converged"].astype("boolean").eq(False).fillna(False)
    return data[~bad.to_numpy()]


def summarise(data: pd.DataFrame, metric: str = DEFAULT_METRIC, x: str = DEFAULT_X, pool=()) -> pd.DataFrame:
    """Mean ± std of ``metric`` per (dataset, method label, setting, x value).

    ``pool`` names setting columns whose values are replicates rather than
    settings (e.g. ``dataset.seed`` for generated data): rows that differ only
    there are averaged together instead of drawn as separate lines.

    Returns a long table with columns ``dataset, method_label, setting, x,
    metric, mean, std, n_ok, n_error, n_skipped, n_infeasible, n_trials,
    fit_time_mean, n_not_converged`` (ok trials whose method did not converge:
    counted in the mean; :func:`drop_not_converged` removes them first).
    """
    if data.empty:
        raise ValueError("no results to summarise")
    if metric not in data:
        if (data["status"] == "ok").any():
            known = [c for c in data.columns if pd.api.types.is_numeric_dtype(data[c])]
            raise ValueError(f"metric {metric!r} is not a results column; numeric columns: {known}")
        data = data.assign(**{metric: np.nan})  # no trial succeeded: the table shows the statuses
    data = data.copy()
    data["method_label"] = method_labels(data, x)
    data["setting"] = setting_labels(data, x, pool)
    data["x"] = data[x] if x in data else np.nan
    keys = ["dataset.name", "method_label", "setting", "x"]
    # one grouped pass per quantity (a Python loop over 100,000 groups took minutes at 1M rows)
    ok = data["status"] == "ok"
    cols = {"value": pd.to_numeric(data[metric], errors="coerce").where(ok),
            "fit": pd.to_numeric(data["fit_time"], errors="coerce").where(ok) if "fit_time" in data
            else pd.Series(np.nan, index=data.index),
            "not_converged": ok & _not_converged(data)}
    cols.update({f"n_{s}": data["status"] == s for s in STATUSES})
    grouped = pd.DataFrame(cols).groupby([data[k] for k in keys], dropna=False, sort=True)
    out = pd.DataFrame({
        "metric": metric,
        "mean": grouped["value"].mean(),
        "std": grouped["value"].std(),  # ddof=1: NaN for a single trial
        "n_trials": grouped.size(),
        "fit_time_mean": grouped["fit"].mean(),
        **{f"n_{s}": grouped[f"n_{s}"].sum().astype(int) for s in STATUSES},
        "n_not_converged": grouped["not_converged"].sum().astype(int),
    })
    out.index = out.index.set_names(["dataset", "method_label", "setting", "x"])
    return out.reset_index()


def markdown_table(summary: pd.DataFrame, metric: str = DEFAULT_METRIC, x: str = DEFAULT_X) -> str:
    """One markdown table: rows (dataset, method label), columns x values, cells mean ± std."""
    s = summary.copy()
    s["line"] = line_label(s)
    s["cell"] = s.apply(cell_text, axis=1)
    xs = sorted_values(s["x"].dropna().unique().tolist()) + (["n/a"] if s["x"].isna().any() else [])
    s["x"] = s["x"].map(lambda v: "n/a" if pd.isna(v) else v)
    header = "| dataset | method | " + " | ".join(md_text(f"{x}={fmt(v)}") for v in xs) + " |"
    note = "; nc k: k of them did not converge" if s.get("n_not_converged", pd.Series(0)).sum() else ""
    lines = [f"{metric}: mean ± std over ok trials (n ok / trials when some failed{note})", "", header,
             "|" + "---|" * (2 + len(xs))]
    for (dataset, line), rows in s.groupby(["dataset", "line"], sort=True):
        cells = dict(zip(rows["x"], rows["cell"]))
        lines.append(f"| {md_text(dataset)} | {md_text(line)} | " + " | ".join(cells.get(v, "") for v in xs) + " |")
    return "\n".join(lines)


def error_summary(data: pd.DataFrame, width: int = 200, statuses: tuple = FAILED_STATUSES) -> list[str]:
    """One line per kind of error message (messages equal but for their numbers, e.g. the seconds of a
    timeout, are one kind) among the rows whose status is in ``statuses``: how many trials hit it, its
    first message, the methods it hit with their counts when more than one, and the first cell that did."""
    import re

    bad = data[data["status"].isin(statuses)] if "status" in data else data.iloc[:0]
    if bad.empty:
        return []
    messages = bad["error"].map(lambda e: last_line(e)[:width])
    kinds = messages.map(lambda m: re.sub(r"\d+(\.\d+)?", "#", m))
    lines = []
    for _, rows in bad.groupby(kinds, sort=False):
        first = rows.iloc[0]
        cell = ", ".join(f"{g}={first.get(f'{g}.name')}" for g in ("dataset", "method", "constraints", "noise"))
        variants = messages[rows.index].nunique()
        more = f" (and {variants - 1} like it but for their numbers)" if variants > 1 else ""
        methods = rows["method_label"] if "method_label" in rows else rows.get("method.name", pd.Series(dtype=object))
        by_method = methods.value_counts()
        hit = (f"; by method: {', '.join(f'{m} {n}' for m, n in by_method.items())}" if len(by_method) > 1 else "")
        lines.append(f"{len(rows)} of {len(data)} trials failed: {messages[rows.index[0]]}{more}{hit} (e.g. {cell})")
    return lines


def _not_converged(rows: pd.DataFrame) -> pd.Series:
    """Per row: the method said it did not converge (``converged`` is False; missing is not)."""
    if "converged" not in rows:
        return pd.Series(False, index=rows.index)
    return rows["converged"].astype("boolean").eq(False).fillna(False).astype(bool)


def problems_table(data: pd.DataFrame, width: int = 160) -> str:
    """What the means hide, per (dataset, method label): failed trials with their first message,
    ``ok`` trials that did not converge, and hard-constraint methods that violated given constraints."""
    lines = ["| dataset | method | status | rows | first message |", "|---|---|---|---|---|"]
    failed = data[data["status"] != "ok"]
    errors = failed["error"] if "error" in failed else pd.Series(None, index=failed.index, dtype=object)
    firsts = errors.groupby([failed["dataset.name"], failed["method_label"], failed["status"]], sort=True)
    for (d, m, st), n, first in zip(firsts.size().index, firsts.size(), firsts.first()):  # first: the first non-missing
        msg = last_line("" if pd.isna(first) else str(first))
        lines.append(f"| {md_text(d)} | {md_text(m)} | {st} | {n} | {md_text(msg[:width])} |")
    ok = data[data["status"] == "ok"]
    no = pd.Series(False, index=ok.index)
    flags = pd.DataFrame({
        "rows": 1,
        "not_converged": _not_converged(ok),
        "contradictory": ok["constraints_consistent"].astype("boolean").eq(False).fillna(False).astype(bool)
        if "constraints_consistent" in ok else no,
        "violated": ((pd.to_numeric(ok["n_violated"], errors="coerce") > 0) & ok["constraint_kind"].eq("hard"))
        if "n_violated" in ok and "constraint_kind" in ok else no,
    })
    counts = flags.groupby([ok["dataset.name"], ok["method_label"]], sort=True).sum()
    for (d, m), n, not_converged, contradictory, violated in counts.itertuples(name=None):
        if not_converged:
            lines.append(f"| {md_text(d)} | {md_text(m)} | ok, not converged | {not_converged} of {n} | "
                         f"counted in the means; raise max_iter or see the method's warnings |")
        if contradictory:
            lines.append(f"| {md_text(d)} | {md_text(m)} | ok, contradictory constraints | {contradictory} of {n} | "
                         f"no clustering meets them all (noise can chain must-links across a cannot-link) |")
        if violated:
            lines.append(f"| {md_text(d)} | {md_text(m)} | ok, hard constraints violated | {violated} of {n} | "
                         f"a hard-constraint method left given constraints unmet |")
    if len(lines) == 2:
        return f"All {len(data)} trials ok and converged where the method reports it."
    return "\n".join(lines)


def paper_reference(data: pd.DataFrame) -> dict | None:
    """The ``paper`` block of the cells behind ``data`` (from each job's ``cell.json``).

    ``None`` when no cell has one. The block names ``source``, ``metric``,
    ``method`` (a method label) and ``values`` ({x value: number the paper prints}).
    """
    for source in sorted(data["source"].dropna().unique()) if "source" in data else ():
        path = Path(source) / CELL_FILE
        paper = read_cell(path).get("paper")
        if paper:
            return _checked_paper(paper, path)
    return None


def _is_number(value) -> bool:
    import numbers

    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _checked_paper(paper, path) -> dict:
    """``paper`` when its numbers are numbers; else a ValueError naming ``path`` and the entry."""
    def bad(where, value, what="a number"):
        return ValueError(f"{path}: paper.{where} is {value!r}, not {what}; fix or remove the paper block of "
                          f"that cell.json, or report without that job directory")

    if not isinstance(paper, dict):
        raise bad("", paper, "a mapping")
    values = paper.get("values")
    if values is not None:
        if not isinstance(values, dict):
            raise bad("values", values, "a mapping {x: number}")
        for key, value in values.items():
            try:
                float(key)
            except (TypeError, ValueError):
                raise bad(f"values key {key!r}", key, "a number (an x value)") from None
            if not _is_number(value):
                raise bad(f"values[{key!r}]", value)
    table = paper.get("table")
    if table is not None:
        if not isinstance(table, dict) or not isinstance(paper.get("methods"), dict):
            raise bad("table", table, "a mapping {data set: {column: [mean, std]}} with paper.methods")
        for dataset, cols in table.items():
            if not isinstance(cols, dict):
                raise bad(f"table[{dataset!r}]", cols, "a mapping {column: [mean, std]}")
            for col, pair in cols.items():
                if isinstance(pair, dict):  # {x: {column: value}}, paper_grid's nested form
                    for sub, value in pair.items():
                        published = _is_number(value) or value is None or (
                            isinstance(value, str) and value.upper() in ("NA", ""))
                        if not published:
                            raise bad(f"table[{dataset!r}][{col!r}][{sub!r}]", value, "a number or null/NA")
                        if sub not in paper["methods"]:
                            raise bad(f"methods[{sub!r}]", None, "a method label")
                    continue
                if (not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(map(_is_number, pair))):
                    raise bad(f"table[{dataset!r}][{col!r}]", pair, "[mean, std] numbers")
                if col not in paper["methods"]:
                    raise bad(f"methods[{col!r}]", None, "a method label")
    return paper


def read_cell(path) -> dict:
    """A job's ``cell.json`` (empty when absent); a damaged one is an error naming it and the fix."""
    import json

    from ._safe import MAX_YAML_BYTES, read_regular

    path = Path(path)
    if not os.path.lexists(path):
        return {}
    payload = read_regular(path, MAX_YAML_BYTES)  # a FIFO or link of that name is refused, not opened
    try:
        # every text in it (a paper's source, names) as one line: see clean_text
        return clean(json.loads(payload.decode("utf-8")))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is damaged ({exc}); move it aside (mv '{path}' '{path}.damaged') and re-run "
                         f"the sweep command, which rewrites it, or report without that job directory") from None


def paper_for_metric(paper: dict | None, metric: str) -> dict | None:
    """The paper block that compares ``metric``: ``paper`` itself when its ``metric`` is that one, else
    its ``by_metric[metric]`` entry (``table``, ``source``... over the block's other keys), else None."""
    if not paper:
        return None
    if paper.get("metric") == metric:
        return paper
    extra = (paper.get("by_metric") or {}).get(metric)
    return None if extra is None else {**paper, **extra, "metric": metric}


def _paper_value(value) -> tuple[float, str]:
    """A published cell: a number, ``[mean, std]``, or null/"NA" (the paper printed no number)."""
    if value is None or (isinstance(value, str) and value.upper() in ("NA", "")):
        return float("nan"), "NA"
    if isinstance(value, (list, tuple)):
        mean, std = (float(v) for v in value)
        return mean, f"{mean:.3f} ± {std:.3f}"
    return float(value), fmt(float(value))


def _code(value) -> str:
    """``value`` for a markdown code span: one line, no backtick (which would close the span)."""
    return md_text(value).replace("`", "'")


def paper_grid(summary: pd.DataFrame, paper: dict) -> str:
    """Markdown for a paper block with ``methods`` ({paper column: our method label, or null for a
    column we do not run}) and ``table``: {data set: {paper column: [mean, std] or a number}} (a
    ``mean`` row compares the averages over the data sets), or {data set: {x value: {paper column:
    value}}} (one row per x, ours at that x): per data set and column, ours beside the paper's."""
    ours = {(r["dataset"], r["method_label"]): r for _, r in summary.iterrows()}
    by_x = {(r["dataset"], r["method_label"], fmt(r["x"])): r for _, r in summary.iterrows()} \
        if "x" in summary else {}
    nested = any(isinstance(v, dict) for cols in paper["table"].values() for v in cols.values())
    head = "| dataset | x | method | ours | paper | diff |" if nested else "| dataset | method | ours | paper | diff |"
    lines = [f"Ours (mean ± std over trials) beside {md_plain(paper.get('source', 'the paper'))}; diff = ours - paper.", "",
             head, "|---|---|---|---|---|---|" if nested else "|---|---|---|---|---|"]

    def line(dataset, x, col, value, rec):
        label = paper["methods"].get(col)
        published, text_p = _paper_value(value)
        ours_mean = float("nan") if rec is None or rec["n_ok"] == 0 else rec["mean"]
        text = "" if rec is None else cell_text(rec)
        diff = "" if np.isnan(ours_mean) or np.isnan(published) else f"{ours_mean - published:+.3f}"
        name = md_plain(col) if label is None else f"{md_plain(col)} (`{_code(label)}`)"
        return "| " + " | ".join([md_plain(dataset), *([md_plain(x)] if nested else []), name, text, text_p, diff]) + " |"

    for dataset, cols in paper["table"].items():
        if nested:
            for x, row in cols.items():
                for col, value in row.items():
                    label = paper["methods"].get(col)
                    lines.append(line(dataset, fmt(x), col, value, by_x.get((dataset, label, fmt(x)))))
            continue
        for col, value in cols.items():
            label = paper["methods"][col]
            if dataset == "mean":
                mean, std = value
                means = [r["mean"] for (d, m), r in ours.items() if m == label and d in paper["table"]]
                ours_mean = float(np.mean(means)) if means else float("nan")
                text = f"{ours_mean:.3f} ({len(means)} sets)"
                lines.append(f"| {md_plain(dataset)} | {md_plain(col)} (`{_code(label)}`) | {text} | {mean:.3f} ± {std:.3f} | "
                             f"{ours_mean - mean:+.3f} |")
            else:
                lines.append(line(dataset, None, col, value, ours.get((dataset, label))))
    return "\n".join(lines)


def paper_table(summary: pd.DataFrame, paper: dict) -> str:
    """Markdown: per data set and x, our mean ± std for the paper's method beside the paper's number."""
    if "table" in paper:
        return paper_grid(summary, paper)
    ours = summary[summary["method_label"] == paper["method"]]
    lines = [f"Ours (`{_code(paper.get('method'))}`, mean ± std over trials) beside "
             f"{md_plain(paper.get('source', 'the paper'))}.", "",
             "| dataset | x | ours | paper |", "|---|---|---|---|"]
    values = {str(k): v for k, v in paper["values"].items()}
    for _, rec in ours.sort_values(["dataset", "x"]).iterrows():
        lines.append(f"| {md_plain(rec['dataset'])} | {md_text(fmt(rec['x']))} | {cell_text(rec)} "
                     f"| {values.get(fmt(rec['x']), '')} |")
    return "\n".join(lines)


def _trials_note(data: pd.DataFrame) -> str:
    per_cell = data.groupby("config_hash").size() if "config_hash" in data else pd.Series([len(data)])
    n = f"{per_cell.min()}" if per_cell.min() == per_cell.max() else f"{per_cell.min()} to {per_cell.max()}"
    return (f"Each cell (data set, method, setting, x) has {n} paired trials: every method saw the same "
            f"constraint sets. Tables show mean ± one standard deviation (ddof=1) over the ok trials; plots show "
            f"the mean with a {CI_LEVEL:.0%} confidence interval of the mean (t, clipped to the metric's "
            f"range); other statuses are counted, never averaged.")


def write_report(data: pd.DataFrame, out_dir, metrics=(DEFAULT_METRIC,), x: str = DEFAULT_X,
                 pool=(), paper: dict | None = None, command: str | None = None, formats=(),
                 sections=()) -> dict:
    """Write ``summary.parquet``, ``summary.md`` and ``<metric>.png`` per metric to ``out_dir``.

    ``paper`` (see :func:`paper_reference`) adds the paper's printed numbers
    beside ours for its metric, in a table and as black crosses on the plot;
    ``command`` is recorded in the markdown so the report says how it was made;
    ``formats`` (``"latex"``, ``"csv"``) also exports the tables (:mod:`ccbench.reporting.export`);
    ``sections`` (markdown, e.g. the paper figures of :func:`ccbench.reporting.paper_figures.write_paper_figures`)
    go after the metrics, before Problems.
    Returns the paths written (keys ``summary_parquet``, ``summary_md``, ``png_<metric>``).
    """
    with plain_text():
        return _write_report(data, out_dir, metrics, x, pool, paper, command, formats, sections)


def plain_text():
    """Matplotlib context in which labels are literal text: a ``$`` in a method label or x axis
    would otherwise be parsed as mathtext, and an invalid expression stops the whole report."""
    import matplotlib

    return matplotlib.rc_context({"text.parse_math": False})


def _write_report(data, out_dir, metrics, x, pool, paper, command, formats, sections=()) -> dict:
    out = output_dir(out_dir)
    if "method_label" not in data:
        data = data.assign(method_label=method_labels(data))
    summaries = [summarise(data, m, x, pool) for m in metrics]
    paths = {"summary_parquet": out / "summary.parquet", "summary_md": out / "summary.md"}
    write_table(pd.concat(summaries, ignore_index=True), paths["summary_parquet"], out)
    parts = [f"# ccbench report\n\n{len(data)} trials from {data['source'].nunique() if 'source' in data else 1} job(s); x = `{x}`.\n",
             f"{_trials_note(data)}\n"]
    if command:
        parts.append(f"Generated by `{command}`.\n")
    for m, s in zip(metrics, summaries):
        parts.append(f"## {m}\n\n{markdown_table(s, m, x)}\n")
        fig = plot_metric(s, m, x)
        block = paper_for_metric(paper, m)
        if block:
            parts.append(f"### Beside the paper\n\n{paper_table(s, block)}\n")
            _draw_paper(fig, block)
        png = out / f"{m}.png"
        save_figure(fig, png, out, dpi=110)
        paths[f"png_{m}"] = png
        parts.append(f"![{m}]({png.name})\n")
    parts += [section for section in sections if section]
    parts.append(f"## Problems\n\n{problems_table(data)}\n")
    parts.append(f"## Provenance\n\n{provenance_markdown(data)}\n")
    write_text(paths["summary_md"], "\n".join(parts), out)
    if formats:
        from .export import export_tables

        paths.update(export_tables(summaries, metrics, x, out, formats))
    return paths
