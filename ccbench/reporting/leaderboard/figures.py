"""The leaderboard's figures: noise effect, quality against time, gains heatmap and per-data-set gains.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._format import axis_label

__all__ = ["noise_figure", "quality_time_scatter", "gain_heatmap", "gain_figure", "COVERAGE_MIN"]


#: Below this share of its cells completed, a method's point on the quality-vs-time scatter is hollow:
#: its quality is a mean over the cells it survived (easier ones), not over the benchmark.
COVERAGE_MIN = 0.8


def noise_figure(effect: pd.DataFrame, metric: str, colors: dict):
    """Each method's mean change under noise with its bootstrap interval, grouped by family."""
    from matplotlib.figure import Figure

    effect = effect.sort_values(["family", "method"])
    labels = [f"{m} ({n})" if effect["noise"].nunique() > 1 else m
              for m, n in zip(effect["method"], effect["noise"])]
    fig = Figure(figsize=(7.5, 1.0 + 0.22 * len(effect)), layout="constrained")
    ax = fig.subplots()
    y = np.arange(len(effect))
    err = np.vstack([effect["change"] - effect["ci_low"], effect["ci_high"] - effect["change"]])
    for i, (m, c) in enumerate(zip(effect["method"], effect["change"])):
        ax.errorbar([c], [y[i]], xerr=np.nan_to_num(err[:, i:i + 1]), fmt="o", color=colors.get(m, "k"),
                    markersize=4, capsize=2, elinewidth=0.8)
    ax.axvline(0.0, color="k", linewidth=0.8)
    ax.set_yticks(y, [f"{f}: {lab}" for f, lab in zip(effect["family"], labels)], fontsize="x-small")
    ax.set_ylim(len(effect) - 0.5, -0.5)
    ax.set_xlabel(f"change in {axis_label(metric)} under noise (paired with the noiseless run, 95% CI)")
    ax.grid(alpha=0.3, axis="x")
    return fig


def quality_time_scatter(cost: pd.DataFrame, metric: str, colors: dict, coverage_min: float = COVERAGE_MIN):
    """One point per method: mean quality over its completed cells against its median fit time. With a
    ``coverage`` column (share of the method's cells completed) the point's label gives it, and a
    point below ``coverage_min`` is hollow (its quality is over the cells it survived)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.0, 5.5), layout="constrained")
    ax = fig.subplots()
    shown = cost.dropna(subset=["quality", "fit_time_median_s"])
    for method, rec in shown.iterrows():
        cov = rec.get("coverage", np.nan)
        hollow = bool(np.isfinite(cov) and cov < coverage_min)
        ax.scatter(max(rec["fit_time_median_s"], 1e-6), rec["quality"], s=40, label=method,
                   facecolors="none" if hollow else colors[method],
                   edgecolors=colors[method] if hollow else "k", linewidth=1.2 if hollow else 0.5)
        text = method if not np.isfinite(cov) else f"{method} ({cov:.0%})"
        ax.annotate(text, (max(rec["fit_time_median_s"], 1e-6), rec["quality"]), fontsize="x-small",
                    xytext=(4, 3), textcoords="offset points")
    ax.set_xscale("log")
    # plain tick text: with mathtext off (plain_text) the log formatter's $10^{-2}$ would print raw
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("median fit time per trial (s, log scale)")
    ax.set_ylabel(f"{axis_label(metric)}: mean over completed cells")
    ax.grid(alpha=0.3, which="both")
    if len(shown) <= 20:
        ax.legend(fontsize="x-small", loc="best")
    covered = "coverage" in cost
    ax.set_title("quality against fit time (one point per method" + (
        f"; in brackets the share of its cells completed, hollow below {coverage_min:.0%})" if covered else ")"),
        fontsize="medium")
    return fig


def gain_heatmap(g: pd.DataFrame, metric: str):
    """Data sets x methods, colour = gain (diverging around 0), the value written in each square;
    ``*`` where the bootstrap interval excludes 0. Readable where one dot per pair would not be."""
    from matplotlib.figure import Figure

    gain = g.pivot_table(index="dataset", columns="method", values="gain", aggfunc="mean")
    sure = g.assign(sure=(g["ci_low"] > 0) | (g["ci_high"] < 0)).pivot_table(
        index="dataset", columns="method", values="sure", aggfunc="max").reindex_like(gain)
    fig = Figure(figsize=(2.0 + 0.55 * gain.shape[1], 1.6 + 0.32 * gain.shape[0]), layout="constrained")
    ax = fig.subplots()
    bound = float(np.nanmax(np.abs(gain.to_numpy()))) if np.isfinite(gain.to_numpy()).any() else 1.0
    image = ax.imshow(gain.to_numpy(float), cmap="RdBu", vmin=-bound, vmax=bound, aspect="auto")
    for (i, j), v in np.ndenumerate(gain.to_numpy(float)):
        if np.isfinite(v):
            ax.text(j, i, f"{v:+.2f}" + ("*" if sure.iat[i, j] is True or sure.iat[i, j] == 1 else ""),
                    ha="center", va="center", fontsize="xx-small")
    ax.set_xticks(range(gain.shape[1]), gain.columns, rotation=60, ha="right", fontsize="x-small")
    ax.set_yticks(range(gain.shape[0]), gain.index, fontsize="x-small")
    fig.colorbar(image, ax=ax, label="gain (* = 95% CI excludes 0)")
    ax.set_title(f"gain in {axis_label(metric)} over the best unsupervised baseline", fontsize="medium")
    return fig


def gain_figure(g: pd.DataFrame, metric: str, colors: dict):
    """Per data set, each method's gain with its bootstrap interval (a dot and a bar); a heatmap
    (:func:`gain_heatmap`) when there are more than 40 (data set, method) pairs."""
    from matplotlib.figure import Figure

    datasets = sorted(g["dataset"].unique())
    methods = sorted(g["method"].unique())
    if len(datasets) * len(methods) > 40:
        return gain_heatmap(g, metric)
    fig = Figure(figsize=(8.0, 1.2 + 0.28 * len(datasets) * max(1, len(methods)) ** 0.5 + 0.3 * len(datasets)),
                 layout="constrained")
    ax = fig.subplots()
    step = 0.8 / max(1, len(methods))
    for j, m in enumerate(methods):
        rows = g[g["method"] == m].set_index("dataset").reindex(datasets)
        y = np.arange(len(datasets)) + (j - (len(methods) - 1) / 2) * step
        err = np.vstack([rows["gain"] - rows["ci_low"], rows["ci_high"] - rows["gain"]])
        ax.errorbar(rows["gain"], y, xerr=np.nan_to_num(err), fmt="o", color=colors[m], label=m, markersize=4,
                    capsize=2, elinewidth=0.8)
    ax.axvline(0.0, color="k", linewidth=0.8)
    ax.set_yticks(range(len(datasets)), datasets)
    ax.set_ylim(len(datasets) - 0.5, -0.5)
    ax.set_xlabel(f"gain in {axis_label(metric)} over the best unsupervised baseline (95% bootstrap CI)")
    ax.legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.grid(alpha=0.3, axis="x")
    return fig
