"""The active track as a static, offline site (``ccbench report DIR --out PAGE --site SITE`` on anytime rows).

Why: the active page (:mod:`.active_page`) is one long document, a table of 11 entries x 96 cells among
it; a reader asking "how do the strategies do on data like mine" or "where does this strategy lose to
random" wants one page each. The site answers from the same numbers the page prints (the page's
ranking, areas and costs are passed in, never recomputed):

- ``index.html``: the headline (each entry against ``random/<method>`` and against the best entry: a
  forest plot and a sortable table with the interval, wins, Holm p, the Bayesian posterior and the
  verdict), P(best), the comparison with random at each noise rate, and links to every data set and entry;
- ``dataset-<name>.html``: every entry's area per noise rate with its interval over the trials (all points
  and the points in no asked pair), and a link to the page's figure of its curves where one was drawn;
- ``entry-<name>.html``: the entry's area per data set and noise rate, its comparison with random at each
  rate, and its cost.

Every text from the rows is escaped (:func:`._site_html.esc`), file names come from :func:`._site_html.slug`
(never a row's text as a path), and the site is written as a whole (:func:`._safe.staged_dir`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ._safe import staged_dir, write_text
from .leaderboard._site_html import esc, interval_svg, page, slug, table

__all__ = ["write_active_site"]

_EFFECT_COLUMNS = {"method": "entry", "reference_name": "against", "mean_diff": "difference", "ci_low": "ci low",
                   "ci_high": "ci high", "n_sets": "data sets", "wins": "wins", "losses": "losses",
                   "p_holm": "Holm p", "p_ahead": "P(ahead)", "p_rope": "P(ROPE)", "p_behind": "P(behind)",
                   "verdict": "verdict", "loo_flips": "drops that flip it"}


def _nav(datasets, entries) -> list[tuple[str, str]]:
    return [("index.html", "headline"), ("index.html#datasets", f"{len(datasets)} data sets"),
            ("index.html#entries", f"{len(entries)} entries")]


def _effects_frame(effects: pd.DataFrame) -> pd.DataFrame:
    frame = effects[[c for c in _EFFECT_COLUMNS if c in effects]].rename(columns=_EFFECT_COLUMNS)
    for col in ("data sets", "wins", "losses", "drops that flip it"):
        if col in frame:
            frame[col] = frame[col].round().astype("Int64")
    return frame


def _forest(effects: pd.DataFrame, reference: str, title: str) -> str:
    rows = effects[effects["reference_name"] == reference].sort_values("mean_diff", ascending=False)
    return interval_svg(rows.set_index("method"), title) if len(rows) else ""


def _noise_frame(by_noise: pd.DataFrame) -> pd.DataFrame:
    if by_noise is None or by_noise.empty:
        return pd.DataFrame()
    frame = by_noise.assign(noise=(by_noise["noise"] * 100).round(1))
    out = _effects_frame(frame)
    out.insert(2, "wrong answers (%)", frame["noise"].to_numpy())
    return out


def _area_frame(aucs: pd.DataFrame, unqueried: pd.DataFrame | None, by: str) -> pd.DataFrame:
    """Long table of the areas: one row per (data set or entry, noise rate) with both areas' intervals."""
    keys = ["dataset", "entry", "noise"]
    frame = aucs[keys + ["mean", "ci_low", "ci_high"]].rename(
        columns={"mean": "AUC", "ci_low": "AUC low", "ci_high": "AUC high"})
    if unqueried is not None and len(unqueried):
        frame = frame.merge(unqueried[keys + ["mean", "ci_low", "ci_high"]].rename(
            columns={"mean": "unqueried AUC", "ci_low": "unqueried low", "ci_high": "unqueried high"}),
            on=keys, how="left")
    frame = frame.assign(noise=(frame["noise"] * 100).round(1)).rename(columns={"noise": "wrong answers (%)"})
    other = "entry" if by == "dataset" else "dataset"
    return frame.drop(columns=[by]).sort_values([other, "wrong answers (%)"])[
        [other, "wrong answers (%)", *[c for c in frame.columns if c not in keys + ["wrong answers (%)"]]]]


def write_active_site(out, *, ranking: dict, aucs: pd.DataFrame, costs: pd.DataFrame, title_note: str,
                      by_noise: pd.DataFrame | None = None, unqueried: pd.DataFrame | None = None,
                      figures: dict | None = None, figure_dir=None, banner: str = "") -> Path:
    """Write the site into ``out`` (created; a symlink there is refused); return the index's path.

    ``ranking``, ``aucs``, ``costs``, ``by_noise``: the page's (:func:`.active.effects`,
    :func:`.active.auc_table`, :func:`.active.cost_table`, :func:`.active.effects_by_noise`);
    ``unqueried``: the page's per-cell unqueried areas or None; ``figures``: {data set: file name} of the
    page's figures in ``figure_dir`` (linked, not copied); ``title_note``: the page's "what these rows
    are" text; ``banner``: shown atop every page (a partial track says so)."""
    with staged_dir(out, "--site") as staging:
        index = _write(Path(staging), ranking, aucs, costs, title_note, by_noise, unqueried, figures or {},
                       figure_dir, Path(out).absolute(), banner)
    return Path(out) / index.name


def _figure_link(dataset, figures: dict, figure_dir, site: Path) -> str:
    name = figures.get(dataset)
    if name is None or figure_dir is None:
        return ""
    href = os.path.relpath(Path(figure_dir).absolute() / name, site).replace(os.sep, "/")
    return f'<p><a href="{esc(href)}">The curves (ARI against q, the page\'s figure)</a></p>'


def _write(out: Path, ranking, aucs, costs, title_note, by_noise, unqueried, figures, figure_dir, final: Path,
           banner: str) -> Path:
    effects = ranking["effects"]
    datasets = sorted(aucs["dataset"].unique())
    entries = sorted(aucs["entry"].unique())
    nav = _nav(datasets, entries)
    dataset_link = lambda d: slug("dataset", d)  # noqa: E731
    entry_link = lambda e: slug("entry", e)  # noqa: E731
    links = {"entry": entry_link, "against": entry_link, "dataset": dataset_link}

    body = [f"<p>{esc(title_note)}</p>", "<h2>Headline: area under the curve (AUC, a mean ARI over q)</h2>",
            "<p>Each entry against <code>random/&lt;method&gt;</code> and against the best entry: the mean over the "
            "data sets of the paired difference with its 95 % bootstrap interval, Wilcoxon with Holm over each "
            "reference's family, the Bayesian signed-rank posterior; a verdict a single dropped data set changes "
            "is <em>undetermined</em>, one not significant after Holm is <em>tied</em>.</p>"]
    for reference in effects["reference_name"].drop_duplicates() if len(effects) else []:
        body.append(_forest(effects, reference, f"AUC against {reference}"))
    if len(effects):
        body.append(table(_effects_frame(effects), links=links, table_id="headline"))
    p_best = ranking["p_best"].rename(columns={"method": "entry", "mean": "mean AUC over data sets",
                                              "n_sets": "data sets", "p_best": "P(best)"})
    body += ["<h2>P(best)</h2>", table(p_best.assign(**{"data sets": p_best["data sets"].round().astype("Int64")}),
                                          links=links)]
    noise = _noise_frame(by_noise)
    if len(noise):
        body += ["<h2>Against random at each oracle noise rate</h2>",
                 "<p>The same comparison on the cells of one noise rate at a time (Holm over each random family "
                 "at that rate): whether a strategy's lead over random survives wrong answers.</p>",
                 table(noise, links=links, table_id="by-noise")]
    best_at = aucs.loc[aucs.groupby(["dataset", "noise"])["mean"].idxmax().dropna()]
    sets = (best_at.assign(noise=(best_at["noise"] * 100).round(1))
            .pivot(index="dataset", columns="noise", values="entry").add_prefix("highest mean AUC, ")
            .add_suffix(" % wrong").reset_index())
    body += ["<h2 id=\"datasets\">Data sets</h2>", "<p>The entry with the highest mean area in each cell (a "
             "mean, not a verdict: the data-set page shows the intervals).</p>",
             table(sets, links={"dataset": dataset_link, **{c: entry_link for c in sets.columns if c != "dataset"}})]
    costs_view = costs.rename(columns={"strategy_cpu_per_query": "strategy CPU s per question (median)",
                                       "refit_cpu_mean": "refit CPU s (median of the mean)",
                                       "curve_cpu_seconds": "curves' CPU s in all"})
    body += ["<h2 id=\"entries\">Entries and their cost</h2>", table(costs_view, links=links,
                                                                       digits={"strategy CPU s per question (median)": 4,
                                                                               "refit CPU s (median of the mean)": 4,
                                                                               "curves' CPU s in all": 1})]
    index = write_text(out / "index.html", page("The active track", "\n".join(body), nav, banner), out)

    for dataset in datasets:
        rows = _area_frame(aucs[aucs["dataset"] == dataset],
                           None if unqueried is None else unqueried[unqueried["dataset"] == dataset], "dataset")
        text = [_figure_link(dataset, figures, figure_dir, final),
                "<p>Each entry's area per oracle noise rate: the mean over the trials with its 95 % bootstrap "
                "interval; the unqueried area is on the points in no asked pair (- where, at some budget, fewer "
                "than two were left).</p>", table(rows, links=links)]
        write_text(out / dataset_link(dataset), page(f"The active track on {dataset}", "\n".join(text), nav,
                                                     banner), out)
    for entry in entries:
        rows = _area_frame(aucs[aucs["entry"] == entry],
                           None if unqueried is None else unqueried[unqueried["entry"] == entry], "entry")
        text = []
        mine = effects[effects["method"] == entry] if len(effects) else effects
        if len(mine):
            text += ["<h2>Against its references (all noise rates)</h2>", table(_effects_frame(mine), links=links)]
        if len(noise):
            own = noise[noise["entry"] == entry]
            if len(own):
                text += ["<h2>Against random at each noise rate</h2>", table(own, links=links)]
        own_cost = costs_view[costs_view["entry"] == entry]
        if len(own_cost):
            text += ["<h2>Cost</h2>", table(own_cost, links=links, digits={"curves' CPU s in all": 1})]
        text += ["<h2>Area per data set and noise rate</h2>", table(rows, links=links)]
        write_text(out / entry_link(entry), page(f"The active track: {entry}", "\n".join(text), nav, banner), out)
    return index
