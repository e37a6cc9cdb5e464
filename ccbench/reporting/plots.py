"""The report's figures: a metric against x per data set (one line per method label, 95 % confidence
intervals of the mean), a dot chart where there is one x value, the paper's points beside ours.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ._format import (
    DEFAULT_METRIC,
    DEFAULT_X,
    axis_label,
    fmt,
    line_label,
    method_colors,
    metric_bounds,
    sorted_values,
)

__all__ = ["CI_LEVEL", "mean_ci", "plot_metric"]

# Marker and line style per line of a figure (cycled in step): lines that coincide stay visible
# through their distinct open markers, a small sideways offset, and their dash patterns.
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")


_LINESTYLES = ("-", "--", ":", "-.", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)))


# Sideways offset between neighbouring lines (points): the x values stay exact in the data.
_DODGE_PT = 2.5


# More lines than this per panel get one legend beside the figure instead of one per panel.
_LEGEND_PER_PANEL = 6
#: data-set panels per figure: past this, the figure shows the first ones by name and says so (a
#: 455-panel figure took most of a 1M-row report's time and could not be read); the tables hold all
MAX_PANELS = 36


#: Confidence level of the error bars (t interval of the mean over the ok trials).
CI_LEVEL = 0.95


def mean_ci(summary: pd.DataFrame, metric: str, level: float = CI_LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper ends of the t confidence interval of the mean, clipped to the metric's range.

    mean ± t_{(1+level)/2, n-1} · std / sqrt(n) over the ``n_ok`` trials (NaN for a
    single trial: no interval), then clipped to ``MetricSpec.bounds`` (a Rand index
    never goes below 0 or above 1, so neither does its interval).
    """
    from scipy.stats import t

    lo, hi = metric_bounds(metric)
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

    lo, hi = metric_bounds(metric)
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
    At most :data:`MAX_PANELS` panels: the first data sets by name, the figure saying how many
    more the tables hold. Returns a :class:`matplotlib.figure.Figure` (no pyplot state involved).
    """
    from matplotlib.figure import Figure

    datasets = sorted(summary["dataset"].unique())
    omitted = max(0, len(datasets) - MAX_PANELS)
    if omitted:
        summary = summary[summary["dataset"].isin(datasets[:MAX_PANELS])]
    s = summary.copy()
    s["line"] = line_label(s)
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
        return _omitted_note(_dot_chart(s, metric, x, datasets, ncols, nrows, lines, styles), omitted)
    shared_legend = s["line"].nunique() > _LEGEND_PER_PANEL
    width = 4.6 * ncols + (3.2 if shared_legend else 0)
    fig = Figure(figsize=(width, 3.6 * nrows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    numeric = pd.api.types.is_numeric_dtype(summary["x"])
    # a categorical x (e.g. constraints.name) is placed at 0, 1, ... with its values as ticks
    categories = [] if numeric else sorted_values(summary["x"].fillna("n/a").unique().tolist())
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
    return _omitted_note(fig, omitted)


def _omitted_note(fig, omitted: int):
    """Say on the figure that data sets were left out (and where they are)."""
    if omitted:
        title = fig.get_suptitle() + "\n" if fig.get_suptitle() else ""
        fig.suptitle(f"{title}the first {MAX_PANELS} data sets by name; {omitted} more are in the tables",
                     fontsize="medium")
    return fig


def _dot_chart(s, metric, x, datasets, ncols, nrows, lines, styles):
    """One x value per data set: per data set, one row per line with its mean and confidence interval."""
    from matplotlib.figure import Figure

    rows_of = {line: i for i, line in enumerate(lines)}
    xs = s["x"].unique()
    # each row of panels has its title and axis label besides its lines (0.28 in each): many data sets of one
    # method would otherwise leave constrained layout no room for the axes
    fig = Figure(figsize=(3.6 * ncols + 0.07 * max(map(len, lines)) + 0.6, 0.6 + nrows * (0.8 + 0.28 * len(lines))),
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
        ax.set_title(dataset if len(xs) == 1 or len(values) != 1 else f"{dataset} ({fmt(values[0])})")
        ax.set_xlabel(axis_label(metric))
        ax.grid(alpha=0.3, axis="x")
        _keep_in_range(ax, metric, axis="x")
    for ax in axes[len(datasets):]:
        ax.set_visible(False)
    where = f"= {fmt(xs[0])}" if len(xs) == 1 else "in brackets after each data set"
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
