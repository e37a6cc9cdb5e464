"""Tables of a report as LaTeX and CSV (``ccbench report DIR --format latex,csv``).

Papers are written in LaTeX: ``summary_<metric>.tex`` is one ``booktabs`` table per
metric, rows (data set, method label), columns the x values, cells ``mean ± std`` over
the ok trials exactly as ``summary.md`` shows them (``(n ok/trials)`` when some failed,
the status when none succeeded). ``summary.csv`` is the long summary (one row per data
set, method label, setting, x and metric: mean, std, counts), for any other tool.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ._safe import write_csv, write_text

__all__ = ["FORMATS", "parse_formats", "latex_escape", "latex_table", "export_tables"]

FORMATS = ("latex", "csv")

# LaTeX's special characters in text mode, and what prints them.
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}
_LATEX_RE = re.compile("|".join(re.escape(c) for c in _LATEX_SPECIAL))


def parse_formats(text: str | None) -> list[str]:
    """``"latex,csv"`` -> ``["latex", "csv"]``; a ``ValueError`` names an unknown format."""
    formats = [f.strip().lower() for f in (text or "").split(",") if f.strip()]
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise ValueError(f"unknown --format {unknown}; choose from {','.join(FORMATS)}")
    return list(dict.fromkeys(formats))


def latex_escape(text) -> str:
    return _LATEX_RE.sub(lambda m: _LATEX_SPECIAL[m.group(0)], str(text))


def _latex_cell(text: str) -> str:
    """``0.812 ± 0.034 (9/10)`` -> ``$0.812 \\pm 0.034$ (9/10)``; a status word stays text."""
    m = re.match(r"^(-?[\d.]+(?:e[-+]?\d+)?)(?: ± (-?[\d.]+(?:e[-+]?\d+)?))?(.*)$", text)
    if not m:
        return latex_escape(text)
    mean, std, rest = m.groups()
    number = f"${mean} \\pm {std}$" if std else f"${mean}$"
    return number + latex_escape(rest)


def latex_table(summary: pd.DataFrame, metric: str, x: str) -> str:
    """One ``table`` environment (needs ``\\usepackage{booktabs}``) for ``metric``'s summary."""
    from ._format import cell_text, fmt, line_label, sorted_values

    s = summary.copy()
    s["line"] = line_label(s)
    s["cell"] = s.apply(cell_text, axis=1)
    xs = sorted_values(s["x"].dropna().unique().tolist()) + (["n/a"] if s["x"].isna().any() else [])
    s["x"] = s["x"].map(lambda v: "n/a" if pd.isna(v) else v)
    lines = [
        f"% ccbench report: {metric}, mean ± std (ddof=1) over the ok trials; x = {x}. Needs \\usepackage{{booktabs}}.",
        r"\begin{table}",
        r"\centering",
        f"\\caption{{{latex_escape(metric)}: mean $\\pm$ standard deviation over the ok trials "
        f"(columns: {latex_escape(x)}).}}",
        f"\\label{{tab:ccbench-{re.sub(r'[^A-Za-z0-9]+', '-', metric)}}}",
        r"\begin{tabular}{ll" + "r" * len(xs) + "}",
        r"\toprule",
        "data set & method & " + " & ".join(latex_escape(fmt(v)) for v in xs) + r" \\",
        r"\midrule",
    ]
    for (dataset, line), rows in s.groupby(["dataset", "line"], sort=True):
        cells = dict(zip(rows["x"], rows["cell"]))
        lines.append(f"{latex_escape(dataset)} & {latex_escape(line)} & "
                     + " & ".join(_latex_cell(cells[v]) if v in cells else "" for v in xs) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def export_tables(summaries, metrics, x: str, out_dir, formats) -> dict:
    """Write the requested formats of ``summaries`` (one per metric) to ``out_dir``;
    returns the paths (keys ``csv``, ``latex_<metric>``)."""
    out = Path(out_dir)
    paths = {}
    if "csv" in formats:
        paths["csv"] = out / "summary.csv"
        write_csv(pd.concat(list(summaries), ignore_index=True), paths["csv"], out)
    if "latex" in formats:
        for metric, summary in zip(metrics, summaries):
            path = out / f"summary_{re.sub(r'[^A-Za-z0-9_.-]+', '_', metric)}.tex"
            write_text(path, latex_table(summary, metric, x), out)
            paths[f"latex_{metric}"] = path
    return paths
