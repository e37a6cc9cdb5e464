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

import functools
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .config import CELL_FILE, DEFAULT_X_AXIS
from .results import FAILED_STATUSES, STATUSES, gather, last_line, write_results

__all__ = [
    "DEFAULT_METRIC",
    "DEFAULT_X",
    "load",
    "resolve_x",
    "first_metric",
    "method_labels",
    "summarise",
    "markdown_table",
    "problems_table",
    "plot_metric",
    "axis_label",
    "method_colors",
    "mean_ci",
    "AXIS_LABELS",
    "write_report",
    "paper_reference",
    "paper_table",
    "error_summary",
    "drop_not_converged",
    "provenance_table",
    "provenance_warnings",
    "stale_rows",
]

DEFAULT_METRIC = "modified_rand"
DEFAULT_X = DEFAULT_X_AXIS
# Non-method column groups whose varying values make separate lines (settings) within a data set.
# evaluate_on: the same method scored on all points and on held-out points is two lines;
# share_unsupervised_fits: shared fits are seeded differently, so on and off are two lines too
_SETTING_PREFIXES = ("dataset.", "constraints.", "noise.", "evaluate_on", "share_unsupervised_fits")


def load(*paths, damaged: str | list = "raise") -> pd.DataFrame:
    """All results under ``paths`` with a ``method_label`` and ``setting`` column.

    ``damaged="skip"`` leaves out damaged results files with a warning naming each
    (:func:`ccbench.results.gather`); by default a damaged file is an error naming it.
    """
    return prepare(gather(*paths, damaged=damaged), paths)


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
    data["method_label"] = method_labels(data)
    return data


def resolve_x(data: pd.DataFrame, x: str | None = None) -> str:
    """The x-axis column: ``x`` if given, else the runs' most common ``x_axis``, else the schema default."""
    if x is not None:
        return x
    if "x_axis" in data and data["x_axis"].notna().any():
        return str(data["x_axis"].mode().iloc[0])
    return DEFAULT_X


def first_metric(data: pd.DataFrame) -> str:
    """The first metric the runs asked for (their ``metrics`` column), else :data:`DEFAULT_METRIC`."""
    import json

    if "metrics" in data and data["metrics"].notna().any():
        names = json.loads(data["metrics"].dropna().iloc[0])
        if names:
            return names[0]
    return DEFAULT_METRIC


def md_text(value) -> str:
    """``value`` as text safe inside a markdown table cell: a ``|`` would start a new column and
    markup would render (``<b>``, a link); both are escaped."""
    import html

    return html.escape(str(value), quote=False).replace("|", "\\|")


def _fmt(value) -> str:
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return "nan"
        return f"{value:g}"
    return str(value)


def _varying(frame: pd.DataFrame, columns) -> list[str]:
    return [c for c in columns if frame[c].astype(str).nunique(dropna=False) > 1]


@functools.lru_cache(maxsize=None)
def _estimator_defaults(name: str) -> dict:
    """The registered estimator's ``get_params()`` (empty when the method is not installed here)."""
    from . import registry

    try:
        return registry.get_method_spec(name).estimator().get_params()
    except Exception:  # noqa: BLE001 - a report must open without the method's package
        return {}


def _fill_defaults(rows: pd.DataFrame, name: str, columns) -> pd.DataFrame:
    """Method files list only deviations: a parameter missing from some rows had its default there."""
    gaps = [c for c in columns if rows[c].isna().any()]
    defaults = _estimator_defaults(name) if gaps else {}
    filled = {c: rows[c].where(rows[c].notna(), defaults[c.removeprefix("method.")])
              for c in gaps if defaults.get(c.removeprefix("method.")) is not None}
    return rows.assign(**filled) if filled else rows


def method_labels(data: pd.DataFrame, x: str | None = None) -> pd.Series:
    """``name`` or ``name(p=v, ...)`` with the method params that vary for that name.

    The x-axis column never enters a label (a sweep over ``method.p`` is one line).
    A parameter some rows leave out is read as the estimator's default there
    (``nnc`` beside ``nnc(metric=lp_diag)`` is ``nnc(metric=euclidean)``).
    """
    labels = pd.Series(index=data.index, dtype=object)
    params = [c for c in data.columns if c.startswith("method.") and c not in ("method.name", x)]
    for name, rows in data.groupby("method.name", sort=False):
        present = [c for c in params if rows[c].notna().any()]
        rows = _fill_defaults(rows, name, present)
        varying = _varying(rows, present)
        if not varying:
            labels[rows.index] = name
            continue
        text = rows[varying].apply(
            lambda r: ", ".join(f"{c.removeprefix('method.')}={_fmt(v)}" for c, v in r.items()), axis=1
        )
        labels[rows.index] = name + "(" + text + ")"
    return _tuned_suffix(data, labels)


def _tuned_suffix(data: pd.DataFrame, labels: pd.Series) -> pd.Series:
    """``pck_means+cvcp`` for rows whose method was tuned (``tune`` other than none), so the
    defaults and the tuned variant of a method are two lines; ``+cvcp(folds=2)`` off the default folds."""
    if "tune" not in data:
        return labels
    tuned = (data["tune"].notna() & (data["tune"] != "none")).to_numpy()
    if not tuned.any():
        return labels
    folds = data["tune_folds"] if "tune_folds" in data else pd.Series(3, index=data.index)
    suffix = "+" + data["tune"].astype(str) + folds.map(
        lambda k: "" if pd.isna(k) or int(k) == 3 else f"(folds={int(k)})")
    labels = labels.copy()
    labels[tuned] = labels[tuned] + suffix[tuned]
    return labels


def _settings(data: pd.DataFrame, x: str, pool=()) -> pd.Series:
    """Non-method settings that vary within a data set's rows, as ``key=value`` text.

    Computed per data set: an option only some sets have (``dataset.missing``)
    does not split lines, nor does one that the x value determines.
    """
    cols = [
        c for c in data.columns
        if c.startswith(_SETTING_PREFIXES) and c not in ("dataset.name", x, *pool)
    ]
    settings = pd.Series("", index=data.index, dtype=object)
    for _, rows in data.groupby("dataset.name", sort=False):
        varying = _varying(rows, [c for c in cols if rows[c].notna().any()])
        if x in rows:  # a setting fixed by the x value (a scheme's own parameter) is no line of its own
            by_x = rows.astype({c: str for c in varying}).groupby(rows[x].astype(str))
            varying = [c for c in varying if by_x[c].nunique().max() > 1]
        if varying:
            settings[rows.index] = rows[varying].apply(
                lambda r: ", ".join(f"{c}={_fmt(v)}" for c, v in r.items()), axis=1
            )
    return settings


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
    data["setting"] = _settings(data, x, pool)
    data["x"] = data[x] if x in data else np.nan
    keys = ["dataset.name", "method_label", "setting", "x"]
    out = []
    for key, rows in data.groupby(keys, dropna=False, sort=True):
        ok = rows[rows["status"] == "ok"]
        rec = dict(zip(["dataset", "method_label", "setting", "x"], key))
        values = pd.to_numeric(ok[metric], errors="coerce")
        rec.update(
            metric=metric,
            mean=values.mean() if len(values) else np.nan,
            std=values.std(),  # ddof=1: NaN for a single trial
            n_trials=len(rows),
            fit_time_mean=pd.to_numeric(ok.get("fit_time"), errors="coerce").mean() if len(ok) else np.nan,
        )
        for s in STATUSES:
            rec[f"n_{s}"] = int((rows["status"] == s).sum())
        rec["n_not_converged"] = _n_not_converged(ok)
        out.append(rec)
    return pd.DataFrame(out)


def _sorted_values(values: list) -> list:
    """Numbers in numeric order, anything else (scheme names, ...) as text."""
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=str)


def _line_label(summary: pd.DataFrame) -> pd.Series:
    return summary["method_label"] + summary["setting"].map(lambda s: f" [{s}]" if s else "")


def _cell(rec) -> str:
    if rec["n_ok"] == 0:
        worst = max((s for s in STATUSES if s != "ok"), key=lambda s: rec[f"n_{s}"])
        return worst
    text = f"{rec['mean']:.3f}" + ("" if pd.isna(rec["std"]) else f" ± {rec['std']:.3f}")
    if rec["n_ok"] < rec["n_trials"]:
        text += f" ({rec['n_ok']}/{rec['n_trials']})"
    if rec.get("n_not_converged", 0):
        text += f" (nc {rec['n_not_converged']})"
    return text


def markdown_table(summary: pd.DataFrame, metric: str = DEFAULT_METRIC, x: str = DEFAULT_X) -> str:
    """One markdown table: rows (dataset, method label), columns x values, cells mean ± std."""
    s = summary.copy()
    s["line"] = _line_label(s)
    s["cell"] = s.apply(_cell, axis=1)
    xs = _sorted_values(s["x"].dropna().unique().tolist()) + (["n/a"] if s["x"].isna().any() else [])
    s["x"] = s["x"].map(lambda v: "n/a" if pd.isna(v) else v)
    header = "| dataset | method | " + " | ".join(md_text(f"{x}={_fmt(v)}") for v in xs) + " |"
    note = "; nc k: k of them did not converge" if s.get("n_not_converged", pd.Series(0)).sum() else ""
    lines = [f"{metric}: mean ± std over ok trials (n ok / trials when some failed{note})", "", header,
             "|" + "---|" * (2 + len(xs))]
    for (dataset, line), rows in s.groupby(["dataset", "line"], sort=True):
        cells = dict(zip(rows["x"], rows["cell"]))
        lines.append(f"| {md_text(dataset)} | {md_text(line)} | " + " | ".join(cells.get(v, "") for v in xs) + " |")
    return "\n".join(lines)


def error_summary(data: pd.DataFrame, width: int = 200) -> list[str]:
    """One line per distinct error message: how many trials hit it and the first cell that did."""
    bad = data[data["status"].isin(FAILED_STATUSES)] if "status" in data else data.iloc[:0]
    if bad.empty:
        return []
    messages = bad["error"].map(lambda e: last_line(e)[:width])
    lines = []
    for message, rows in bad.groupby(messages, sort=False):
        first = rows.iloc[0]
        cell = ", ".join(f"{g}={first.get(f'{g}.name')}" for g in ("dataset", "method", "constraints", "noise"))
        lines.append(f"{len(rows)} of {len(data)} trials failed: {message} (e.g. {cell})")
    return lines


def _n_not_converged(rows: pd.DataFrame) -> int:
    if "converged" not in rows:
        return 0
    return int(rows["converged"].astype("boolean").eq(False).fillna(False).sum())


def problems_table(data: pd.DataFrame, width: int = 160) -> str:
    """What the means hide, per (dataset, method label): failed trials with their first message,
    ``ok`` trials that did not converge, and hard-constraint methods that violated given constraints."""
    lines = ["| dataset | method | status | rows | first message |", "|---|---|---|---|---|"]
    for (d, m, st), rows in data[data["status"] != "ok"].groupby(["dataset.name", "method_label", "status"], sort=True):
        msg = str(rows["error"].dropna().iloc[0]) if rows["error"].notna().any() else ""
        msg = last_line(msg)
        lines.append(f"| {md_text(d)} | {md_text(m)} | {st} | {len(rows)} | {md_text(msg[:width])} |")
    ok = data[data["status"] == "ok"]
    for (d, m), rows in ok.groupby(["dataset.name", "method_label"], sort=True):
        not_converged = _n_not_converged(rows)
        if not_converged:
            lines.append(f"| {md_text(d)} | {md_text(m)} | ok, not converged | {not_converged} of {len(rows)} | "
                         f"counted in the means; raise max_iter or see the method's warnings |")
        if "constraints_consistent" in rows:
            contradictory = int(rows["constraints_consistent"].astype("boolean").eq(False).fillna(False).sum())
            if contradictory:
                lines.append(f"| {md_text(d)} | {md_text(m)} | ok, contradictory constraints | {contradictory} of {len(rows)} | "
                             f"no clustering meets them all (noise can chain must-links across a cannot-link) |")
        hard = rows["constraint_kind"].eq("hard") if "constraint_kind" in rows else None
        if "n_violated" in rows and hard is not None and hard.any():
            violated = int((pd.to_numeric(rows["n_violated"], errors="coerce") > 0)[hard].sum())
            if violated:
                lines.append(f"| {md_text(d)} | {md_text(m)} | ok, hard constraints violated | {violated} of {len(rows)} | "
                             f"a hard-constraint method left given constraints unmet |")
    if len(lines) == 2:
        return f"All {len(data)} trials ok and converged where the method reports it."
    return "\n".join(lines)


# Readable axis labels for the x keys the experiments use; any other key reads "name (group)".
AXIS_LABELS = {
    "constraints.n_constraints": "number of constraints",
    "constraints.n_pairs": "constraint pairs per class (ML) and class pair (CL)",
    "constraints.per_class": "labeled points per class",
    "constraints.name": "constraint scheme",
    "noise.rate": "noise rate",
    "noise.name": "noise",
    "dataset.name": "data set",
    "method.p": "preference p",
    "fit_time": "fit time (s)",
}
# Marker and line style per line of a figure (cycled in step): lines that coincide stay visible
# through their distinct open markers, a small sideways offset, and their dash patterns.
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
_LINESTYLES = ("-", "--", ":", "-.", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)))
# Sideways offset between neighbouring lines (points): the x values stay exact in the data.
_DODGE_PT = 2.5
# More lines than this per panel get one legend beside the figure instead of one per panel.
_LEGEND_PER_PANEL = 6
#: Confidence level of the error bars (t interval of the mean over the ok trials).
CI_LEVEL = 0.95


def axis_label(key: str) -> str:
    """A readable label for a results column: :data:`AXIS_LABELS`, a metric's registered label,
    else ``name (group)`` from ``group.name``."""
    if key in AXIS_LABELS:
        return AXIS_LABELS[key]
    from . import registry

    from .protocol import UNCONSTRAINED_SUFFIX

    base = key.removesuffix(UNCONSTRAINED_SUFFIX)
    try:  # <metric>_unconstrained (evaluate_on=both): the metric on the unconstrained points
        label = registry.get_metric_spec(base).label
        return label if base == key else f"{label}, unconstrained points"
    except Exception:  # noqa: BLE001 - not a registered metric
        pass
    group, _, name = key.rpartition(".")
    name = name.replace("_", " ")
    return f"{name} ({group})" if group else name


def method_colors(labels) -> dict:
    """One colour per method label, from the sorted set of labels: pass the whole page's labels so
    a method has the same colour in every line plot and CD diagram of the page."""
    from matplotlib import colormaps

    names = sorted({str(v) for v in labels})
    # tab10, then tab20 / tab20b + tab20c: qualitative palettes, distinct up to 60 labels
    palettes = ["tab10"] if len(names) <= 10 else ["tab20"] if len(names) <= 20 else ["tab20", "tab20b", "tab20c"]
    colours = [c for name in palettes for c in colormaps[name].colors]
    return {name: colours[i % len(colours)] for i, name in enumerate(names)}


def mean_ci(summary: pd.DataFrame, metric: str, level: float = CI_LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper ends of the t confidence interval of the mean, clipped to the metric's range.

    mean ± t_{(1+level)/2, n-1} · std / sqrt(n) over the ``n_ok`` trials (NaN for a
    single trial: no interval), then clipped to ``MetricSpec.bounds`` (a Rand index
    never goes below 0 or above 1, so neither does its interval).
    """
    from scipy.stats import t

    from . import stats

    lo, hi = stats.metric_bounds(metric)
    n = summary["n_ok"].to_numpy(float)
    mean, std = summary["mean"].to_numpy(float), summary["std"].to_numpy(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = t.ppf(0.5 + level / 2, n - 1) * std / np.sqrt(n)
    return np.clip(mean - half, lo, hi), np.clip(mean + half, lo, hi)


def _line_styles(lines: list[str], label_of: dict, colors: dict) -> dict:
    """(color, marker, linestyle) per line: colour by method label (the page's mapping), marker and
    line style by the line's place in the figure (distinct for up to 12 lines)."""
    return {line: (colors[label_of[line]], _MARKERS[i % len(_MARKERS)], _LINESTYLES[i % len(_LINESTYLES)])
            for i, line in enumerate(lines)}


def _dodge(container, ax, i: int, n: int) -> None:
    """Shift an errorbar's artists sideways by the line's slot (points), centred on the true x.

    Applied after plotting, so the data limits came from the true values; the
    artists' data stay the true x values.
    """
    from matplotlib.transforms import ScaledTranslation

    shift = ScaledTranslation((i - (n - 1) / 2) * _DODGE_PT / 72.0, 0.0, ax.figure.dpi_scale_trans)
    for artist in container.get_children():
        artist.set_transform(artist.get_transform() + shift)


def _keep_in_range(ax, metric: str, axis: str = "y") -> None:
    """Never show values the metric cannot take (a Rand index below 0): limit the axis to its range."""
    from . import stats

    lo, hi = stats.metric_bounds(metric)
    get, set_ = (ax.get_ylim, ax.set_ylim) if axis == "y" else (ax.get_xlim, ax.set_xlim)
    a, b = get()
    set_(max(a, lo), min(b, hi))


def plot_metric(summary: pd.DataFrame, metric: str = DEFAULT_METRIC, x: str = DEFAULT_X, colors: dict | None = None):
    """Metric against x: one panel per data set, one line per label, error bars = a 95 % confidence
    interval of the mean clipped to the metric's range.

    Colour tells the method label (``colors``, default :func:`method_colors` of the
    summary's labels: pass the page's mapping to share it with other figures); every
    line has its own marker and line style. With a single x value there is no
    curve to draw: a dot chart (one row per line, the metric along the axis).
    Returns a :class:`matplotlib.figure.Figure` (no pyplot state involved).
    """
    from matplotlib.figure import Figure

    s = summary.copy()
    s["line"] = _line_label(s)
    colors = colors or method_colors(s["method_label"])
    label_of = dict(zip(s["line"], s["method_label"]))
    lines = sorted(s["line"].unique())
    styles = _line_styles(lines, label_of, colors)
    s["ci_low"], s["ci_high"] = mean_ci(s, metric)
    s = s[s["n_ok"] > 0]
    datasets = sorted(summary["dataset"].unique())
    ncols = min(len(datasets), 3)
    nrows = math.ceil(len(datasets) / ncols)
    if summary.groupby("dataset")["x"].nunique(dropna=False).max() == 1:  # one x per panel: no curves
        return _dot_chart(s, metric, x, datasets, ncols, nrows, lines, styles)
    shared_legend = s["line"].nunique() > _LEGEND_PER_PANEL
    width = 4.6 * ncols + (3.2 if shared_legend else 0)
    fig = Figure(figsize=(width, 3.6 * nrows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    numeric = pd.api.types.is_numeric_dtype(summary["x"])
    # a categorical x (e.g. constraints.name) is placed at 0, 1, ... with its values as ticks
    categories = [] if numeric else _sorted_values(summary["x"].fillna("n/a").unique().tolist())
    handles = {}
    for ax, dataset in zip(axes, datasets):
        rows = s[s["dataset"] == dataset]
        present = [line for line in lines if line in set(rows["line"])]
        for slot, line in enumerate(present):
            g = rows[rows["line"] == line]
            if numeric:
                g = g.sort_values("x")
                xv = g["x"].fillna(0).to_numpy(dtype=float)
            else:
                xv = g["x"].fillna("n/a").map(categories.index).to_numpy(dtype=float)
                order = np.argsort(xv)
                g, xv = g.iloc[order], xv[order]
            color, marker, linestyle = styles[line]
            yerr = np.vstack([g["mean"] - g["ci_low"], g["ci_high"] - g["mean"]])
            handles[line] = ax.errorbar(
                xv, g["mean"], yerr=np.nan_to_num(yerr), color=color, marker=marker, linestyle=linestyle,
                markerfacecolor="none", capsize=2, elinewidth=0.8, label=line, clip_on=False,
            )
            _dodge(handles[line], ax, slot, len(present))
        if categories:
            ax.set_xticks(range(len(categories)), [str(c) for c in categories])
        ax.set_title(dataset)
        ax.set_xlabel(axis_label(x))
        ax.set_ylabel(axis_label(metric))
        ax.grid(alpha=0.3)
        _keep_in_range(ax, metric)
        if len(rows) and not shared_legend:
            ax.legend(fontsize="small")
    for ax in axes[len(datasets):]:
        ax.set_visible(False)
    if shared_legend:
        names = sorted(handles)
        fig.legend([handles[n] for n in names], names, loc="outside right upper", fontsize="small")
    fig.ccbench_layout = "lines"
    return fig


def _dot_chart(s, metric, x, datasets, ncols, nrows, lines, styles):
    """One x value per data set: per data set, one row per line with its mean and confidence interval."""
    from matplotlib.figure import Figure

    rows_of = {line: i for i, line in enumerate(lines)}
    xs = s["x"].unique()
    fig = Figure(figsize=(3.6 * ncols + 0.07 * max(map(len, lines)) + 0.6, 0.8 + 0.28 * len(lines) * nrows + 0.6),
                 layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False, sharey=True)).ravel()
    for ax, dataset in zip(axes, datasets):
        rows = s[s["dataset"] == dataset]
        for line, g in rows.groupby("line", sort=True):
            color, marker, _ = styles[line]
            xerr = np.vstack([g["mean"] - g["ci_low"], g["ci_high"] - g["mean"]])
            ax.errorbar(g["mean"], [rows_of[line]] * len(g), xerr=np.nan_to_num(xerr), color=color,
                        marker=marker, linestyle="none", markerfacecolor="none", capsize=2, elinewidth=0.8,
                        label=line, clip_on=False)
        ax.set_yticks(range(len(lines)), lines, fontsize="small")
        ax.set_ylim(len(lines) - 0.5, -0.5)  # first line on top
        values = rows["x"].unique()
        ax.set_title(dataset if len(xs) == 1 or len(values) != 1 else f"{dataset} ({_fmt(values[0])})")
        ax.set_xlabel(axis_label(metric))
        ax.grid(alpha=0.3, axis="x")
        _keep_in_range(ax, metric, axis="x")
    for ax in axes[len(datasets):]:
        ax.set_visible(False)
    where = f"= {_fmt(xs[0])}" if len(xs) == 1 else "in brackets after each data set"
    fig.suptitle(f"{axis_label(x)} {where} (one value per data set: no curve to draw)", fontsize="medium")
    fig.ccbench_layout = "dots"
    fig.ccbench_rows = rows_of
    return fig


def _draw_paper(fig, paper: dict) -> None:
    if "values" not in paper:  # a per-data-set table (see paper_grid) has no curve to draw
        return
    xs = np.array([float(k) for k in paper["values"]])
    ys = np.array([float(v) for v in paper["values"].values()])
    dots = getattr(fig, "ccbench_layout", "lines") == "dots"
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        if dots:  # the metric runs along x: the paper's value on its method's row, else a vertical line
            row = getattr(fig, "ccbench_rows", {}).get(paper["method"])
            if row is None:
                ax.axvline(ys[0], color="k", linestyle=":", label=f"paper: {paper['method']}")
            else:
                ax.plot(ys[:1], [row], "kx", markersize=8, mew=2, label=f"paper: {paper['method']}")
            continue
        ax.plot(xs, ys, "kx", markersize=8, mew=2, label=f"paper: {paper['method']}")
        ax.legend(fontsize="small")


def paper_reference(data: pd.DataFrame) -> dict | None:
    """The ``paper`` block of the cells behind ``data`` (from each job's ``cell.json``).

    ``None`` when no cell has one. The block names ``source``, ``metric``,
    ``method`` (a method label) and ``values`` ({x value: number the paper prints}).
    """
    for source in sorted(data["source"].dropna().unique()) if "source" in data else ():
        paper = read_cell(Path(source) / CELL_FILE).get("paper")
        if paper:
            return paper
    return None


# What says which machine and code made a row (ccbench.provenance); shown once per distinct combination.
_ORIGIN_COLUMNS = ("env.hostname", "env.cpu", "env.n_cores", "env.python", "env.numpy", "env.scipy",
                   "env.scikit-learn", "env.blas", "env.blas_threads", "code.ccbench_version", "code.git_commit",
                   "code.git_dirty")


def provenance_table(data: pd.DataFrame) -> pd.DataFrame:
    """The machines and code versions found in the rows (not the report writer's), with row counts.

    One row per distinct (machine, libraries, ccbench commit) plus, per method, one row per
    distinct ``code.method_hash``; ``jobs`` names the job directories the rows came from.
    """
    cols = [c for c in _ORIGIN_COLUMNS if c in data]
    if not cols:
        return pd.DataFrame({"origin": ["unknown: rows recorded before ccbench kept provenance"],
                             "rows": [len(data)]})
    filled = data[cols].astype(str).replace({"nan": "?", "None": "?", "<NA>": "?"})
    sources = data["source"].astype(str) if "source" in data else pd.Series("", index=data.index)

    def where(dirs: pd.Series) -> str:
        names = sorted({Path(d).name for d in dirs})
        return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")

    table = (filled.assign(rows=1, jobs=sources, job_dirs=sources)
             .groupby(cols, sort=True).agg(rows=("rows", "sum"), jobs=("jobs", "nunique"), job_dirs=("job_dirs", where))
             .reset_index())
    table.columns = [c.removeprefix("env.").removeprefix("code.") for c in table.columns]
    return table


def method_versions(data: pd.DataFrame) -> pd.DataFrame:
    """Per method: each ``code.method_hash`` found, its rows, and whether it is the installed code."""
    if "code.method_hash" not in data:
        return pd.DataFrame(columns=["method", "method_hash", "rows", "installed"])
    keys = _code_keys(data)
    current = _installed_hashes(tuple(keys.dropna().unique()))
    hashes = data["code.method_hash"].astype(object).where(data["code.method_hash"].notna(), "(none)")
    out = (data.assign(_h=hashes, _k=keys).groupby(["_k", "_h"], sort=True).size()
           .rename("rows").reset_index().rename(columns={"_k": "method", "_h": "method_hash"}))
    out["installed"] = [("?" if current.get(m) is None else "yes" if current[m] == h else "no")
                        for m, h in zip(out["method"], out["method_hash"])]
    return out


def _code_keys(data: pd.DataFrame) -> pd.Series:
    """Per row, whose code made it: ``method.name``, or ``name+tuner`` for a tuned cell (its hash
    includes the tuner's code: :func:`ccbench.provenance.cell_method_code`)."""
    keys = data["method.name"].astype(object)
    if "tune" in data:
        tuned = (data["tune"].notna() & (data["tune"] != "none")).to_numpy()
        keys = keys.where(~tuned, keys + "+" + data["tune"].astype(str))
    return keys


def _installed_hashes(keys: tuple) -> dict:
    """``code.method_hash`` of each method's (``name`` or ``name+tuner``) code as installed here
    (None when not installed)."""
    from . import provenance

    out = {}
    for key in keys:
        name, _, tune = str(key).partition("+")
        try:
            out[key] = provenance.cell_method_code(name, tune or "none")[provenance.METHOD_HASH]
        except Exception:  # noqa: BLE001 - a report must open without the method's package
            out[key] = None
    return out


def stale_rows(data: pd.DataFrame) -> pd.Series:
    """``ok`` rows not made by the method code installed here (kept with ``keep_stale=true``, or
    recorded before provenance); False where the method is not installed (cannot be judged)."""
    if "method.name" not in data:
        return pd.Series(False, index=data.index)
    keys = _code_keys(data)
    current = _installed_hashes(tuple(keys.dropna().unique()))
    recorded = data["code.method_hash"] if "code.method_hash" in data else pd.Series(None, index=data.index)
    installed = keys.map(current)
    return (data["status"].eq("ok") & installed.notna() & (recorded.isna() | (recorded != installed))).astype(bool)


def provenance_warnings(data: pd.DataFrame) -> list[str]:
    """Cells whose rows mix code versions or machines, and rows made by code other than the installed."""
    out = []
    key = "config_hash" if "config_hash" in data else None
    for col, what in (("code.method_hash", "code versions of the method"), ("env.hostname", "machines")):
        if key is None or col not in data:
            continue
        mixed = data.groupby(key)[col].nunique(dropna=False)
        mixed = mixed[mixed > 1]
        for chash in mixed.index[:5]:
            rows = data[data[key] == chash]
            first = rows.iloc[0]
            out.append(f"cell {first.get('dataset.name')}/{first.get('method_label', first.get('method.name'))} "
                       f"({chash}) mixes {mixed[chash]} {what}: "
                       + ", ".join(f"{v} ({n} rows)" for v, n in rows[col].astype(str).value_counts().items()))
        if len(mixed) > 5:
            out.append(f"... and {len(mixed) - 5} more cells mixing {what}")
    if "code.method_hash" not in data:
        out.append("the rows carry no provenance (recorded before ccbench kept it): the code and machine "
                   "that made them are unknown")
    else:
        stale = stale_rows(data)
        if stale.any():
            methods = sorted(data.loc[stale, "method.name"].astype(str).unique())
            out.append(f"{int(stale.sum())} ok row(s) were made by code other than the installed one "
                       f"({', '.join(methods)}): marked stale; re-run without keep_stale=true to refresh them")
    return out


def provenance_markdown(data: pd.DataFrame) -> str:
    """The Provenance section of ``summary.md``: machines and code, method versions, warnings."""
    parts = ["Machines and code that made these rows (from the rows themselves):", "",
             _frame_markdown(provenance_table(data))]
    versions = method_versions(data)
    if len(versions):
        parts += ["", "Method code (`code.method_hash`; installed = the code installed where this report was written):",
                  "", _frame_markdown(versions)]
    warn = provenance_warnings(data)
    if warn:
        parts += ["", "Warnings:", ""] + [f"- {md_text(w)}" for w in warn]
    return "\n".join(parts)


def _frame_markdown(frame: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(md_text(c) for c in frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(md_text(_fmt(v)) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def read_cell(path) -> dict:
    """A job's ``cell.json`` (empty when absent); a damaged one is an error naming it and the fix."""
    import json

    path = Path(path)
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is damaged ({exc}); move it aside (mv '{path}' '{path}.damaged') and re-run "
                         f"the sweep command, which rewrites it, or report without that job directory") from None


def paper_grid(summary: pd.DataFrame, paper: dict) -> str:
    """Markdown for a paper block with ``methods`` ({paper column: our method label}) and
    ``table`` ({data set: {paper column: [mean, std]}}; a ``mean`` row compares the
    averages over the data sets): per data set and column, ours beside the paper's."""
    ours = {(r["dataset"], r["method_label"]): r for _, r in summary.iterrows()}
    lines = [f"Ours (mean ± std over trials) beside {paper['source']}; diff = ours - paper.", "",
             "| dataset | method | ours | paper | diff |", "|---|---|---|---|---|"]
    for dataset, cols in paper["table"].items():
        for col, (mean, std) in cols.items():
            label = paper["methods"][col]
            if dataset == "mean":
                means = [r["mean"] for (d, m), r in ours.items() if m == label and d in paper["table"]]
                ours_mean = float(np.mean(means)) if means else float("nan")
                text = f"{ours_mean:.3f} ({len(means)} sets)"
            else:
                rec = ours.get((dataset, label))
                ours_mean = float("nan") if rec is None else rec["mean"]
                text = "" if rec is None else _cell(rec)
            lines.append(f"| {dataset} | {col} (`{label}`) | {text} | {mean:.3f} ± {std:.3f} | {ours_mean - mean:+.3f} |")
    return "\n".join(lines)


def paper_table(summary: pd.DataFrame, paper: dict) -> str:
    """Markdown: per data set and x, our mean ± std for the paper's method beside the paper's number."""
    if "table" in paper:
        return paper_grid(summary, paper)
    ours = summary[summary["method_label"] == paper["method"]]
    lines = [f"Ours (`{paper['method']}`, mean ± std over trials) beside {paper['source']}.", "",
             "| dataset | x | ours | paper |", "|---|---|---|---|"]
    values = {str(k): v for k, v in paper["values"].items()}
    for _, rec in ours.sort_values(["dataset", "x"]).iterrows():
        lines.append(f"| {rec['dataset']} | {_fmt(rec['x'])} | {_cell(rec)} | {values.get(_fmt(rec['x']), '')} |")
    return "\n".join(lines)


def _trials_note(data: pd.DataFrame) -> str:
    per_cell = data.groupby("config_hash").size() if "config_hash" in data else pd.Series([len(data)])
    n = f"{per_cell.min()}" if per_cell.min() == per_cell.max() else f"{per_cell.min()} to {per_cell.max()}"
    return (f"Each cell (data set, method, setting, x) has {n} paired trials: every method saw the same "
            f"constraint sets. Tables show mean ± one standard deviation (ddof=1) over the ok trials; plots show "
            f"the mean with a {CI_LEVEL:.0%} confidence interval of the mean (t, clipped to the metric's "
            f"range); other statuses are counted, never averaged.")


def write_report(data: pd.DataFrame, out_dir, metrics=(DEFAULT_METRIC,), x: str = DEFAULT_X,
                 pool=(), paper: dict | None = None, command: str | None = None, formats=()) -> dict:
    """Write ``summary.parquet``, ``summary.md`` and ``<metric>.png`` per metric to ``out_dir``.

    ``paper`` (see :func:`paper_reference`) adds the paper's printed numbers
    beside ours for its metric, in a table and as black crosses on the plot;
    ``command`` is recorded in the markdown so the report says how it was made;
    ``formats`` (``"latex"``, ``"csv"``) also exports the tables (:mod:`ccbench.report_export`).
    Returns the paths written (keys ``summary_parquet``, ``summary_md``, ``png_<metric>``).
    """
    with plain_text():
        return _write_report(data, out_dir, metrics, x, pool, paper, command, formats)


def plain_text():
    """Matplotlib context in which labels are literal text: a ``$`` in a method label or x axis
    would otherwise be parsed as mathtext, and an invalid expression stops the whole report."""
    import matplotlib

    return matplotlib.rc_context({"text.parse_math": False})


def _write_report(data, out_dir, metrics, x, pool, paper, command, formats) -> dict:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if "method_label" not in data:
        data = data.assign(method_label=method_labels(data))
    summaries = [summarise(data, m, x, pool) for m in metrics]
    paths = {"summary_parquet": out / "summary.parquet", "summary_md": out / "summary.md"}
    write_results(pd.concat(summaries, ignore_index=True), paths["summary_parquet"])
    parts = [f"# ccbench report\n\n{len(data)} trials from {data['source'].nunique() if 'source' in data else 1} job(s); x = `{x}`.\n",
             f"{_trials_note(data)}\n"]
    if command:
        parts.append(f"Generated by `{command}`.\n")
    for m, s in zip(metrics, summaries):
        parts.append(f"## {m}\n\n{markdown_table(s, m, x)}\n")
        fig = plot_metric(s, m, x)
        if paper and paper.get("metric") == m:
            parts.append(f"### Beside the paper\n\n{paper_table(s, paper)}\n")
            _draw_paper(fig, paper)
        png = out / f"{m}.png"
        fig.savefig(png, dpi=110)
        paths[f"png_{m}"] = png
        parts.append(f"![{m}]({png.name})\n")
    parts.append(f"## Problems\n\n{problems_table(data)}\n")
    parts.append(f"## Provenance\n\n{provenance_markdown(data)}\n")
    paths["summary_md"].write_text("\n".join(parts))
    if formats:
        from .report_export import export_tables

        paths.update(export_tables(summaries, metrics, x, out, formats))
    return paths
