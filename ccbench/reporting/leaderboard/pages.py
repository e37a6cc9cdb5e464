"""The leaderboard's pages: per supervision kind, the blocks of :func:`write_leaderboard` as markdown and
HTML, the sweep's coverage, and the request a cell's ``paper`` block makes for a leaderboard."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from .._format import fmt, md_text, method_colors
from .._safe import output_dir, save_figure, write_table, write_text
from ..origins import _frame_markdown, provenance_markdown
from ..stats import (
    cd_diagram,
    critical_difference,
    friedman,
    friedman_min_p,
    min_pairs,
)
from ..summary import error_summary, paper_reference, plain_text
from ._frame import (
    CI,
    DEFAULT_METRIC,
    KINDS,
    N_BOOT,
    _cells,
    _of_kind,
    _worst_filled,
    attempted_cells,
    cell_means,
    cell_table,
    main_methods,
    not_fitted_counts,
    ranked_long_frame,
    ranked_metric,
    split_not_fitted,
    unmeasured_cells,
)
from .effects import FAILURE_SCORE, headline_effects
from .headline_text import headline_blocks
from .figures import COVERAGE_MIN, gain_figure, noise_figure, quality_time_scatter
from .gains import (
    best_baseline,
    cost_table,
    gains,
    hurt_exclusions,
    hurt_share,
    noise_effect,
    same_fit_note,
    not_fitted_note,
    status_counts,
)
from .ranks import (
    _cd_selection,
    dataset_blocks,
    rank_over_data_sets,
    k_free_vs_given,
    rank_table,
    ranks_by_condition,
    tuned_vs_default,
    unbeaten,
    win_tie_loss_cells,
)
from .claims import index_summary
from .coverage import AS_SHIPPED
from .partial import PARTIAL_PREFIX, new_methods, partial_banner, partial_section, placed_apart
from .seeds import base_seed, headline, seed_blocks
from .k_free_board import write_k_free_board


#: Section 1's title: the ranks are the pages' secondary view, under the headline (issue 50).
RANKS_TITLE = "1. Average ranks (the secondary view)"


def _md_frame(frame: pd.DataFrame, index: bool = True, floats: str = "{:.3g}") -> str:
    f = frame.reset_index() if index else frame
    f = f.map(lambda v: floats.format(v) if isinstance(v, (float, np.floating)) and np.isfinite(v) else
              ("" if isinstance(v, (float, np.floating)) else v))
    return _frame_markdown(f)


def _headline(cells: pd.DataFrame) -> tuple:
    """The (budget, noise) of the gains table: the largest budget without noise (else the most common noise)."""
    noise = "none" if (cells["noise"] == "none").any() else cells["noise"].mode().iloc[0]
    return float(cells.loc[cells["noise"] == noise, "budget"].max()), noise


def _tie_rules(rows: pd.DataFrame) -> list:
    """One line per method whose rows carry the rule that broke ties in its pool (a column whose name
    ends in ``tie_rule``, e.g. the cobs plugin's): the rule's text as the rows state it."""
    cols = [c for c in rows.columns if str(c).endswith("tie_rule")]
    if not cols or "method.name" not in rows:
        return []
    out = []
    for col in cols:
        texts = rows[[col, "method.name"]].dropna().astype(str)
        texts = texts[texts[col].str.strip() != ""]
        for method, g in texts.groupby("method.name", sort=True):
            rules = sorted(g[col].unique())
            out.append(f"`{method}` tie rule (from its rows' `{col}`): " + "; ".join(rules)
                       + ("" if len(rules) == 1 else " (the rows carry several rules: sweeps from different code)"))
    return out


def _friedman_or_why(values: pd.DataFrame, what: str, alpha: float) -> tuple[dict | None, str]:
    """Friedman's test over ``values`` (blocks x methods), or None and why not: fewer than 2 blocks or 3
    methods, too few blocks for the test to reach ``alpha`` (:func:`friedman_min_p`), or a degenerate table."""
    n, k = values.shape
    if n < 2 or k < 3:
        return None, f"it needs at least 3 methods and 2 {what}"
    floor = friedman_min_p(n, k)
    if floor > alpha:
        return None, (f"with {n} {what} and {k} methods the smallest p Friedman's test can give is {floor:.3g}, "
                      f"above alpha = {alpha}")
    try:
        fr = friedman(values)
    except ValueError as exc:
        return None, str(exc)
    if not np.isfinite(fr["statistic"]):
        return None, f"Friedman's statistic is undefined here (every method ties in every {what[:-1]})"
    return fr, ""


def cd_ranks(means: pd.DataFrame, attempted: pd.DataFrame, metric: str,
             unmeasured: pd.DataFrame | None = None) -> dict:
    """The rank view of the pages' CD diagram (section 1; the site's kind pages show the same numbers):
    the methods run on most cells and the cells where all of them were run (:func:`_cd_selection`);
    their blocks per data set (:func:`dataset_blocks`, refused and skipped cells missing under
    ``unmeasured``); where some method has no block in a data set (refused on its every cell) and at least
    3 methods have one in every data set, those methods only; the data sets where every kept method has a
    block. Returns ``core``, ``cd_cells``, ``first_blocks`` (before dropping methods), ``every_set`` and
    ``per_set`` (after; with and without the incomplete data sets), ``worst`` (the per-cell view) and
    ``ranks`` (``rank_over_data_sets`` and ``rank_over_cells`` per kept method, sorted)."""
    metric = ranked_metric(metric)
    core, cd_cells = _cd_selection(attempted)
    sub_means, sub_attempted = means.loc[cd_cells, core], attempted.loc[cd_cells, core]
    sub_unmeasured = None if unmeasured is None else unmeasured.reindex_like(sub_means).fillna(False).astype(bool)
    first = every_set = dataset_blocks(sub_means, metric, sub_attempted, sub_unmeasured)
    whole = every_set.notna().all()
    if not whole.all() and whole.sum() >= 3:
        keep = whole.index[whole]
        sub_means, sub_attempted, sub_unmeasured = (sub_means[keep], sub_attempted[keep],
                                                    None if sub_unmeasured is None else sub_unmeasured[keep])
        every_set = dataset_blocks(sub_means, metric, sub_attempted, sub_unmeasured)
    worst = _worst_filled(sub_means, metric, unmeasured=sub_unmeasured).dropna()
    per_set = every_set.dropna()
    ranks = pd.DataFrame({
        "rank_over_data_sets": rank_over_data_sets(per_set) if len(per_set) else np.nan,
        "rank_over_cells": worst.rank(axis=1, ascending=metric.sign < 0, method="average").mean()},
        index=pd.Index(sorted(sub_means.columns), name="method")).sort_values("rank_over_data_sets")
    return {"core": core, "cd_cells": cd_cells, "first_blocks": first, "every_set": every_set, "per_set": per_set,
            "worst": worst, "ranks": ranks}


def _cd_section(means: pd.DataFrame, attempted: pd.DataFrame, metric: str, kind: str, alpha: float,
                colors: dict, unmeasured: pd.DataFrame | None = None) -> tuple[list, dict]:
    """The CD diagram with data sets as Friedman blocks (a method's per-cell ranks averaged within each
    data set first), and the per-cell view (cells as blocks) as a secondary table. ``unmeasured``: the
    refused and skipped cells, left out of the ranks (the ``missing`` convention): a method with no ranked
    cell in some data set has no complete Friedman row, so the diagram ranks the methods with a block in
    every data set (at least 3; else the data sets where some method has none are left out instead), and
    the page names what it leaves out. Those methods are compared in the headline over the data sets they
    have."""
    blocks = []
    view = cd_ranks(means, attempted, metric, unmeasured)
    core, cd_cells, every_set, per_set, worst = (view[k] for k in ("core", "cd_cells", "every_set", "per_set", "worst"))
    if not core.all():
        blocks.append(("md", "The CD diagram ranks the methods run on most cells; left out (run on some cells "
                             "only, ranked in the table above on those): "
                             + ", ".join(f"`{m}`" for m in core.index[~core]) + "."))
    if not cd_cells.all():
        blocks.append(("md", f"The CD diagram leaves out {int((~cd_cells).sum())} cell(s) where not every one of "
                             f"those methods was run (an unfinished data set: "
                             + ", ".join(sorted(set(means.index[~cd_cells].get_level_values("dataset"))))
                             + ")."))
    whole = view["first_blocks"].notna().all()
    if not whole.all() and whole.sum() >= 3:
        gaps = view["first_blocks"].isna()
        blocks.append(("md", f"The rank view below covers the {int(whole.sum())} methods with a ranked cell in every "
                             f"data set. Left out (refused or skipped on every cell of a data set: missing there, "
                             f"not last; the headline compares them over the data sets they have): "
                             + "; ".join(f"`{m}` ({', '.join(gaps.index[gaps[m]])})" for m in gaps.columns[~whole])
                             + "."))
    if len(per_set) < len(every_set):
        gaps = every_set.isna()
        blocks.append(("md", f"The CD diagram leaves out {len(every_set) - len(per_set)} data set(s) where some method "
                             f"has no ranked cell (every cell refused or skipped: missing, not last): "
                             + "; ".join(f"{d} ({', '.join(f'`{m}`' for m in gaps.columns[gaps.loc[d]])})"
                                         for d in gaps.index[gaps.any(axis=1)]) + "."))
    n_cd, n_sets = len(worst), len(per_set)
    fr, why = _friedman_or_why(per_set, "data sets", alpha)
    if fr is not None:
        blocks.append(("md", f"Secondary view: critical-difference diagram on convention (b) with the **data sets as Friedman "
                             f"blocks**: a method's value in a data set is its average rank (b) over the data set's "
                             f"cells (its budgets, noise levels and settings share the data set's points, so they "
                             f"are no independent blocks; refused and skipped cells are missing, measured failures rank "
                             f"last). Friedman chi² = {fr['statistic']:.2f}, p = "
                             f"{fr['pvalue']:.3g} over {n_sets} data sets and {per_set.shape[1]} methods; Nemenyi "
                             f"post-hoc test at alpha = {alpha}."))
        blocks.append(("fig", f"{kind}_cd", cd_diagram(
            per_set, metric, alpha=alpha, colors=colors,
            title=f"{metric}, {kind}: average ranks over {n_sets} data sets (each a method's mean rank over the data "
                  f"set's cells, failures ranked last; 1 = best)\na bar joins methods the Nemenyi test does not "
                  f"separate (CD = {critical_difference(per_set.shape[1], n_sets, alpha):.2f})")))
    else:
        blocks.append(("md", f"No CD diagram: {why}."))
    cell_fr, cell_why = _friedman_or_why(worst, "cells", alpha)
    per_cell = view["ranks"]
    if cell_fr is not None:
        cd_cell = critical_difference(worst.shape[1], n_cd, alpha)
        text = (f"Secondary, per-cell view (cells as blocks; optimistic, as the cells of one data set are "
                f"correlated): Friedman chi² = {cell_fr['statistic']:.2f}, p = {cell_fr['pvalue']:.3g} over {n_cd} "
                f"cells (those where every method is ranked); its Nemenyi CD would be {cd_cell:.2f} against "
                f"{critical_difference(per_set.shape[1], max(n_sets, 1), alpha):.2f} over data sets.")
    else:
        text = f"Secondary, per-cell view (cells as blocks): no Friedman test: {cell_why}."
    blocks += [("md", text), ("md", _md_frame(per_cell, floats="{:.2f}"))]
    cd = critical_difference(per_set.shape[1], n_sets, alpha) if fr is not None else None
    return blocks, {"cd_blocks": per_cell.reset_index(), "ranks_over_sets": per_cell["rank_over_data_sets"].dropna(),
                    "cd": cd, "n_sets": n_sets}


def _supervision_text(schemes) -> str:
    """What the page's supervision is, in each scheme's own words (its ``SchemeSpec.summary``), so a page
    names its track for what it draws (issue 50, item 11: the dense track is all pairs among f n random
    points, not PCCC's random pairs over all points)."""
    from ... import registry

    parts = []
    for name in sorted(set(map(str, schemes)) - {"none"}):
        try:
            summary = registry.get_scheme_spec(name).summary or "no summary"
        except Exception:  # noqa: BLE001 - a report must open without the scheme's package
            summary = "a scheme not installed here"
        parts.append(f"`{md_text(name)}`: {md_text(summary)}")
    return "Supervision on this page: " + "; ".join(parts) + "." if parts else ""


def _variant_section(title: str, table: pd.DataFrame, none: str, text: str) -> list:
    """A section comparing variants with their defaults (tuned: 1b; k-free: 1c)."""
    if table.empty:
        return [("h", 2, title), ("md", none)]
    return [("h", 2, title), ("md", text), ("md", _md_frame(table.set_index("variant"), floats="{:.3f}"))]


def headline_metrics(metric: str, data: pd.DataFrame | None) -> list[str]:
    """The metrics of the page's headline: the page's, and ``ari_unconstrained`` beside ``ari`` where the rows
    have it (issue 50, item 7: ARI on all points credits copying the supervision)."""
    return [metric] + (["ari_unconstrained"] if metric == "ari" and data is not None and "ari_unconstrained" in data
                       and pd.to_numeric(data["ari_unconstrained"], errors="coerce").notna().any() else [])


def _headline_section(frames: dict, margin: float, alpha: float) -> tuple[list, dict]:
    """The headline (:func:`~.effects.headline_effects`) per metric of ``frames`` ({metric: the kind's long
    frame on it}), as page blocks and tables (``effects``, ``p_best``, ``flags``, each with a ``metric``
    column). A metric with no known failure score is left out, and the page says so."""
    results, skipped = {}, []
    for m, rows in frames.items():
        if m not in FAILURE_SCORE:
            skipped.append(m)
            continue
        results[m] = headline_effects(rows, m, margin=margin, alpha=alpha, n_boot=N_BOOT)
    if not results:
        return [("h", 2, "Headline: paired effect sizes over data sets"),
                ("md", f"No headline for `{', '.join(skipped)}`: a measured failure's score (the one-cluster "
                       f"partition's value) is known for {', '.join(sorted(FAILURE_SCORE))} only; the average "
                       f"ranks of section 1 are the only view.")], {}
    blocks = headline_blocks(results, alpha, margin, N_BOOT, lambda t: _md_frame(t))
    tables = {name: pd.concat([r[name].assign(metric=m) for m, r in results.items()], ignore_index=True)
              for name in ("effects", "p_best", "flags")}
    return blocks, tables


def _page_blocks(frame: pd.DataFrame, kind: str, metric: str, margin: float, alpha: float, colors: dict,
                 command: str | None, data: pd.DataFrame | None = None,
                 other_metrics: dict | None = None, unfitted: pd.DataFrame | None = None) -> tuple[list, dict]:
    """The page as blocks: ``("h", level, text)``, ``("md", markdown)``, ``("fig", name, figure)``;
    and its tables for the parquet file. ``other_metrics``: {metric: the kind's long frame on it} for the
    headline beside the page's metric (:func:`headline_metrics`); ``unfitted``: :func:`._frame.not_fitted_frame`."""
    every_seed = frame
    frame = frame[frame["seed"] == base_seed(frame)] if "seed" in frame else frame
    cells = _cells(frame)
    all_means = cell_means(cells)
    all_attempted = attempted_cells(cells).reindex_like(all_means).fillna(False).astype(bool)
    all_unmeasured = unmeasured_cells(cells).reindex_like(all_means).fillna(False).astype(bool)
    main = main_methods(cells)
    tuned = [m for m in all_means.columns if m not in main]
    main_cells = cells[cells["method"].isin(main)]
    means, attempted, unmeasured = all_means[main], all_attempted[main], all_unmeasured[main]
    ranks = rank_table(means, metric, attempted, unmeasured)
    n_cells, n_sets = len(means), cells["dataset"].nunique()
    blocks = [("h", 1, f"ccbench leaderboard: {kind} supervision"),
              ("md", f"{len(frame)} trials, {n_sets} data set(s), {n_cells} ranking cells (data set x budget x "
                     f"noise x setting), {len(main)} methods ranked"
                     + (f" and {len(tuned)} variant(s) compared with their defaults (tuned: section 1b; "
                        f"k-free: section 1c)" if tuned else "")
                     + f"; metric `{metric}` ({'higher' if metric.sign > 0 else 'lower'} is better)."
                     + (f" Generated by `{command}`." if command else "") + f" {AS_SHIPPED}")]
    blocks += [("h", 2, RANKS_TITLE),
               ("md", "Ranked per cell on the method's mean over the cell's trials (1 = best, ties share the "
                      "average rank), over one fixed set of methods: every method at its defaults (a tuned variant, "
                      "`name+tuner`, is run on some cells only and is compared with its own default in section 1b, "
                      "not ranked here). Scale honesty: a method completes a cell when every one of its trials there "
                      "is ok. (a) `rank_completed`: ranked only among the methods that completed the cell, "
                      "averaged over the cells it completed; (b) `rank_failed_last`: a cell it did not complete "
                      "by a *measured* failure (timeout, error, infeasible) ranks it last there, tied with the other "
                      "failures; a cell it was refused (a time or memory model's prediction, not a measurement) or "
                      "skipped (a draw it cannot take) is missing, not ranked; averaged over the cells it is ranked "
                      "in (`cells`). `rank_all_failures_last`: every cell not completed ranked last (refusals and "
                      "skips too; the convention before issue 50), over `cells_all`. The table is sorted by (b). Every (cell, method) mean, its number of trials and status is in "
                      "`leaderboard.parquet` (table `cell_means`): the ranks can be recomputed from it."),
               ("md", _md_frame(ranks, floats="{:.2f}"))]
    cd_blocks, cd_tables = _cd_section(means, attempted, metric, kind, alpha, colors, unmeasured)
    blocks += cd_blocks
    by_condition = ranks_by_condition(means, metric, attempted, unmeasured).reindex(ranks.index)
    blocks += [("md", "Average rank (b) within each budget / noise (columns): how a method's standing moves "
                      "with the amount of supervision and with noise."),
               ("md", _md_frame(by_condition, floats="{:.2f}"))]
    versus = tuned_vs_default(cells, metric, margin=margin, alpha=alpha)
    blocks += _variant_section(
        "1b. Tuned variants against their defaults", versus, "No tuned variant in these rows.",
        f"Each tuned variant against its own default, paired per cell over the cells both completed: "
        f"`mean_diff` = variant minus default (positive = tuning helped), the mean over those "
        f"cells with a {CI:.0%} bootstrap interval over the cells (per variant, uncorrected: a description, "
        f"not a verdict). `verdict`, corrected for the family of the {len(versus)} variants of this table: "
        f"`p` is the two-sided Wilcoxon signed-rank test of the variant's per-cell differences, `p_holm` "
        f"its Holm adjustment over the {int(versus['p'].notna().sum()) if len(versus) else 0} variants "
        f"with a test; `helped` / `hurt` only when `p_holm` <= {alpha} AND |`mean_diff`| >= {margin:g} "
        f"(the rule of section 2), `too few cells` when no test of that size could reach {alpha} after "
        f"the correction; an interval that excludes 0 alone is no verdict. w/t/l per cell by the rule of "
        f"section 2 (Wilcoxon p <= {alpha} over the cell's paired trials AND a difference of at "
        f"least {margin:g}); `kept_default`: the share of the variant's ok trials in which the tuner "
        f"chose the estimator's defaults (its rows' `tuned_params`; empty where they carry none).")
    k_free = k_free_vs_given(cells, metric, margin=margin, alpha=alpha)
    blocks += _variant_section(
        "1c. The k-free track", k_free,
        "No method ran both given the true k and k-free in these rows.",
        f"Methods that find k themselves (affinity propagation's family, COBS) are ranked above "
        f"given the true k, as the k-means-type methods are (AP's preference searched by "
        f"bisection for k, COBS's pool restricted to k). Their k-free runs (`name[k-free]`: the "
        f"method chooses k) are this track, each against the same method given k, paired per "
        f"cell over the cells both completed: `mean_diff` = k-free minus given k (negative = "
        f"the method's own k did worse), with a {CI:.0%} bootstrap interval over the cells (per "
        f"variant, uncorrected); `verdict` as in section 1b, Holm's correction over the family of the "
        f"{len(k_free)} k-free runs of this table (Wilcoxon over the cells; `p_holm` <= {alpha} AND "
        f"|`mean_diff`| >= {margin:g}); w/t/l by the rule of section 2; `ok_trials`: the k-free run's ok "
        f"trials.")
    seed_section, seed_table, seed_summary = seed_blocks(_cells(every_seed), main, metric, _md_frame)
    blocks += seed_section
    secondary = headline(cd_tables["ranks_over_sets"], cd_tables["cd"], seed_summary.get("avg_rank_shift"),
                         cd_tables["n_sets"])
    blocks.insert(blocks.index(("h", 2, RANKS_TITLE)) + 1, ("md", secondary))
    # the headline pools every base seed (its interval carries their spread); the ranks rank the base seed
    frames = {metric: every_seed, **{m: f for m, f in (other_metrics or {}).items() if m != metric}}
    head_blocks, head_tables = _headline_section(frames, margin, alpha)
    blocks[2:2] = head_blocks
    wtl = win_tie_loss_cells(main_cells, metric, margin=margin, alpha=alpha)
    blocks += [("h", 2, "2. Win/tie/loss"),
               ("md", f"Row method against column method, counted over the cells both completed (w/t/l). One rule "
                      f"decides a win everywhere on these pages: the two-sided Wilcoxon signed-rank test on the "
                      f"paired per-trial differences gives p <= {alpha} (one test per pair and cell, a family of "
                      f"one) AND the row's mean is better by at least {margin:g}. A cell with fewer than "
                      f"{min_pairs(alpha)} paired trials (where no test can reach {alpha}) is a tie: no verdict "
                      f"without the test. Symmetric: win(A, B) = loss(B, A)."),
               ("md", _md_frame(wtl["table"]))]
    never_beaten = unbeaten(wtl["beaten_by"])
    blocks += [("md", "Where nothing beats a method: the cells it completed in which no other method wins over it "
                      "by the rule above (`unbeaten`), and the data sets where that holds in every cell it "
                      "completed (`unbeaten_sets`). For `cobs`, an unconstrained pool chosen by the constraints, "
                      "these are the cells where no semi-supervised method is better than the selection baseline."),
               ("md", _md_frame(never_beaten, floats="{:.2f}"))]
    if data is not None:
        blocks += [("md", t) for t in _tie_rules(data.iloc[frame["row"].to_numpy()])]
    g = gains(frame, metric)
    blocks.append(("h", 2, "3. Gain over the best unsupervised baseline"))
    if g.empty:
        blocks.append(("md", "No gains: no unsupervised method (empty `MethodSpec.supervision`) has ok trials here."))
    else:
        budget, noise = _headline(cells)
        head = g[(g["budget"] == budget) & (g["noise"] == noise)]
        base = best_baseline(frame, metric)
        text = head.assign(cell=[f"{v:+.3f} [{lo:+.3f}, {hi:+.3f}]" for v, lo, hi in
                                 zip(head["gain"], head["ci_low"], head["ci_high"])])
        table = text.pivot_table(index=["dataset", "setting"], columns="method", values="cell", aggfunc="first")
        table.insert(0, "baseline", [base.get(d, "") for d, _ in table.index])
        if not any(s for _, s in table.index):  # no setting varies: the column would be empty
            table.index = table.index.droplevel("setting")
        blocks += [("md", f"Per data set, the best unsupervised method (best mean over its ok trials there, among "
                          f"{', '.join(sorted(frame.loc[frame['unsupervised'], 'method'].unique()))}) is the baseline; "
                          f"gain = method minus baseline on the same trial (positive = better), its mean and a "
                          f"{CI:.0%} percentile bootstrap interval over the trials ({N_BOOT} resamples, seed 0). "
                          f"Completed cells only, as the ranks: a method with a trial that is not ok in a cell "
                          f"has no gain there (a mean over the draws that survived a time limit is no gain; an "
                          f"empty square here, and in the figure). "
                          f"Shown at budget {fmt(budget)}, noise {noise}; every cell is in "
                          f"`leaderboard.parquet` (table `gains`)."),
                   ("md", _md_frame(table.rename_axis(columns=None))),
                   ("fig", f"{kind}_gains", gain_figure(head, metric, colors))]
    hurt = hurt_share(frame, metric)
    hurt_cells = hurt_share(frame, metric, by=("method", "budget", "noise"))
    excluded = hurt_exclusions(frame)
    blocks += [("h", 2, "4. Did the supervision hurt?"),
               ("md", "Share of a method's ok supervised trials in which it scored worse than its own "
                      "unconstrained run (its row with `constraints=none` or budget 0: `n_constraints=0`, "
                      "`per_class=0`) on the same data set, setting and trial index; the noiseless "
                      "unconstrained run where there is one. A supervised method's two runs draw their method "
                      "seeds in different cells, so part of its change is seed variance. `same_fit`: the share of "
                      "the trials that re-scored the unconstrained run's own fit (the same `fit_key`)."
                      + (" `cobs` is in the table: given k, with no constraints every member of its pool "
                         "satisfies none and its silhouette tie rule selects one (a pool restricted to k: k-means "
                         "and NCuts with k, AP searched for k), so its share is how often selecting by the "
                         "constraints did worse than selecting by the silhouette." if "cobs" in set(hurt["method"])
                         else "")
                      + same_fit_note(hurt) + " The join is on the data set, its options "
                      "and `evaluate_on`, and the trial index, never on a constraints key (the labeled rows' "
                      "`constraints.small_classes` is no option of an unconstrained run). Methods without an "
                      "unconstrained run are absent."
                      + ("" if not excluded else " Left out, as their run without supervision is not the method: "
                         + "; ".join(f"`{m}`: {why}" for m, why in sorted(excluded.items())) + ".")),
               ("md", _md_frame(hurt.set_index("method"), floats="{:.3f}") if len(hurt) else
                "No method has an unconstrained run in these results."),
               ("md", _md_frame(hurt_cells.assign(budget=hurt_cells["budget"].map(fmt)), index=False,
                                floats="{:.3f}") if len(hurt_cells) else "")]
    effect = noise_effect(frame, metric)
    blocks.append(("h", 2, "5. What noise does"))
    if effect.empty:
        blocks.append(("md", "No noisy cell with a noiseless twin (same data set, setting and budget) here."))
    else:
        by_family = effect.groupby(["family", "noise"]).apply(
            lambda g: pd.Series({"methods": g["method"].nunique(), "n_pairs": int(g["n_pairs"].sum()),
                                 "mean_change": float(np.average(g["change"], weights=g["n_pairs"])),
                                 "worst_method": g.loc[g["change"].idxmin(), "method"],
                                 "worst_change": float(g["change"].min())}), include_groups=False)
        blocks += [("md", "Each noisy cell against the same method's noiseless cell of the same data set, setting and "
                          "budget, paired by trial index: the change in the metric (negative = the noise hurt), its "
                          f"mean over the pairs and a {CI:.0%} bootstrap interval. A hard-constraint method can also "
                          "fail outright under noise (`infeasible`: contradictory constraints); those trials are not "
                          "pairs here but are counted in section 7. Per family (pair-weighted mean over its methods):"),
                   ("md", _md_frame(by_family, floats="{:.3f}")),
                   ("md", _md_frame(effect.assign(budget=effect["budget"].map(fmt)), index=False,
                                    floats="{:.3f}")),
                   ("fig", f"{kind}_noise", noise_figure(effect, metric, colors))]
    cost = cost_table(frame, all_means, ranks)
    cost.insert(1, "coverage", (all_means.notna().sum() / all_attempted.sum()).reindex(cost.index))
    blocks += [("h", 2, "6. Cost beside quality"),
               ("md", "Fit time: seconds in `fit` per ok supervised trial (`fit_time_median_s`); "
                      "`fit_time_total_s`: the seconds of the `fits` behind those trials, a shared unsupervised "
                      "fit (`share_unsupervised_fits`: one `fit_key`, re-scored in every cell of its data set and "
                      "trial) counted once, not once per cell that re-scored it; a fit shared with another kind's "
                      "page counts on both (the sweep's cost, each fit once: `tests/benchmarks/leaderboard_costs.py`). "
                      "Peak memory: the row's `peak_rss_mb`, the "
                      "peak resident set size of the process that ran `fit`, reset right before it (Linux "
                      "/proc/self/clear_refs): with `trial_timeout` the worker process's, else the whole job "
                      "process's (data and imports included); `fit_rss` is that peak minus the resident size "
                      "just before `fit` (what the fit itself added). Empty for rows recorded before these columns existed. "
                      f"`coverage`: the share of the cells the method was run on that it completed; on the scatter a "
                      f"method below {COVERAGE_MIN:.0%} is a hollow point (its quality is a mean over the cells it "
                      f"survived, not over the benchmark)."),
               ("md", _md_frame(cost, floats="{:.3g}")),
               ("fig", f"{kind}_time", quality_time_scatter(cost, metric, colors))]
    counts = status_counts(frame, not_fitted_counts(unfitted, kind, base_seed(frame) if "seed" in frame else None))
    blocks += [("h", 2, "7. Scale honesty: every trial counted"),
               ("md", "Trials per method and status over every row of this kind (unconstrained runs included); "
                      "`cells_missing` counts ranking cells where the method has no row at all. Both rankings of "
                      "section 1 follow from these: (a) ignores the cells a method did not complete, (b) ranks them "
                      "last." + not_fitted_note(counts)),
               ("md", _md_frame(counts))]
    from .budget import budget_blocks  # section 8: the method-set pairs near the time budget
    from .fidelity import fidelity_blocks  # section 9: ok trials that did not converge or missed k
    blocks += budget_blocks(frame, data) + fidelity_blocks(frame, data)
    from .budget_sensitivity import budget_sensitivity_blocks  # the board's verdicts at a larger budget (item 4)
    blocks += budget_sensitivity_blocks(every_seed, kind, data, metric, margin, alpha, _md_frame)
    if data is not None:
        rows = data.iloc[frame["row"].to_numpy()]
        rows = rows if "error" in rows else rows.assign(error=None)  # rows made outside the harness
        errors = error_summary(rows)
        blocks += [("h", 2, "Problems"),
                   ("md", "\n".join(f"- {md_text(e)}" for e in errors) if errors else "No failed trial."),
                   ("h", 2, "Provenance"), ("md", provenance_markdown(rows))]
    tables = {"cd_blocks": cd_tables["cd_blocks"], "cell_means": cell_table(cells), "tuned_vs_default": versus, "k_free_vs_given": k_free, "seed_spread": seed_table,
              "ranks": ranks.reset_index(), "ranks_by_condition": by_condition.reset_index(), "gains": g, "hurt": hurt_cells, "cost": cost.reset_index(),
              "status": counts.reset_index(), "unbeaten": never_beaten.reset_index(), "noise": effect, "wtl": wtl["table"].rename_axis("method").reset_index(),
              **head_tables}
    return blocks, tables


def _to_markdown(blocks: list, out: Path) -> str:
    parts = []
    for block in blocks:
        if block[0] == "h":
            parts.append("#" * block[1] + " " + block[2])
        elif block[0] == "md":
            if block[1]:
                parts.append(block[1])
        else:
            save_figure(block[2], out / f"{block[1]}.png", out, dpi=100)
            parts.append(f"![{block[1]}]({block[1]}.png)")
    return "\n\n".join(parts) + "\n"


def _to_html(blocks: list, title: str) -> str:
    from .. import html as report_html

    body = []
    for block in blocks:
        if block[0] == "h":
            body.append(f"<h{block[1]}>{html.escape(block[2])}</h{block[1]}>")
        elif block[0] == "md":
            body.append(report_html.markdown_to_html(block[1]))
        else:
            body.append(report_html._png(block[2]))
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{report_html._CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def config_request(data: pd.DataFrame) -> dict | None:
    """The ``leaderboard`` entry of the cells' ``paper`` block (``paper: {leaderboard: {metric: ari,
    margin: 0.03}}`` in an experiment file), or None: with it, plain ``ccbench report DIR`` writes the
    leaderboard, on the metric the experiment chose."""
    paper = paper_reference(data) or {}
    request = paper.get("leaderboard")
    if request is None:
        return None
    if request is True:
        return {}
    if not isinstance(request, dict) or set(request) - {"metric", "margin"}:
        raise ValueError(f"paper.leaderboard must be true or a mapping with metric and/or margin, got {request!r}")
    return dict(request)


def write_leaderboard(data: pd.DataFrame, out_dir, metric: str = DEFAULT_METRIC, margin: float = 0.03,
                      alpha: float = 0.05, command: str | None = None, coverage: str | None = None,
                      new_rows: pd.DataFrame | None = None) -> dict:
    """Write ``<kind>.md``, ``<kind>.html`` (and the markdown's PNGs) per supervision kind found in
    ``data``, ``index.md`` and ``leaderboard.parquet``; return the paths written.

    ``new_rows``: the rows of a sweep ranked against shipped ones (``--with``), a subset of ``data``
    (matched on ``config_hash`` and ``trial``). A new method that ran fewer of a kind's data sets than the
    board (:func:`.partial.placed_apart`) is placed against the board as the site places it: every page
    is the board's without it (the same numbers, tables and CD diagram), its effect sizes over the data
    sets it ran are a section of their own before the ranks (table ``partial_effects``), and every page
    says the run is partial."""
    out = output_dir(out_dir)
    every, metric = ranked_long_frame(data, metric, keep_not_fitted=True)  # its direction, once, for every page
    frame, unfitted = split_not_fitted(every)  # the not-fitted kills: counted apart (section 7), scored nowhere
    others = {other: other_frame for other_frame, other in
              (ranked_long_frame(data, name) for name in headline_metrics(metric, data)[1:])}
    outside = placed_apart(frame, new_methods(data, frame, new_rows))
    board = frame[~frame["method"].isin(set(outside))]
    board_others = {m: f[~f["method"].isin(set(outside))] for m, f in others.items()}
    colors = method_colors(board["method"])  # one colour per method on both pages (the board's, as shipped)
    banner = partial_banner(outside, markdown=True) if outside else None
    paths, tables, index = {}, [], ["# ccbench leaderboard", "", *([banner, ""] if banner else [])]
    with plain_text():
        for kind in KINDS:
            rows = _of_kind(board, kind)
            if _cells(rows[rows["kind"] == kind]).empty:
                continue
            blocks, kind_tables = _page_blocks(rows, kind, metric, margin, alpha, colors, command,
                                               data.reset_index(drop=True),
                                               {m: _of_kind(f, kind) for m, f in board_others.items()}, unfitted)
            supervision = _supervision_text(data["constraints.name"].iloc[rows["row"].to_numpy()])
            blocks.insert(1, ("md", supervision))
            if coverage:
                blocks.insert(2, ("md", coverage))
            if outside:  # the board's page as shipped, a banner and the new methods' own section
                part, part_table = partial_section({metric: frame, **others}, board, outside, kind, margin, alpha,
                                                   _md_frame)
                at = blocks.index(("h", 2, RANKS_TITLE))
                blocks[at:at] = part
                blocks.insert(3 if coverage else 2, ("md", banner))
                if len(part_table):
                    kind_tables["partial_effects"] = part_table
            paths[f"{kind}_md"] = out / f"{kind}.md"
            write_text(paths[f"{kind}_md"], _to_markdown(blocks, out), out)
            paths[f"{kind}_html"] = out / f"{kind}.html"
            write_text(paths[f"{kind}_html"], _to_html(blocks, f"ccbench leaderboard: {kind}"), out)
            for name, t in kind_tables.items():
                tables.append(t.assign(kind=kind, table=name).astype({c: str for c in t.columns
                                                                      if t[c].dtype == object}))
            index.append(f"- {kind} supervision: [{kind}.md]({kind}.md), [{kind}.html]({kind}.html)")
            index += [f"  {supervision}"] if supervision else []
            index += [f"  {line}" for line in index_summary(blocks, kind_tables)]
            index += [f"  {b[1]}" for b in blocks if b[0] == "md" and str(b[1]).startswith(PARTIAL_PREFIX)]
        k_paths, k_tables, k_index = write_k_free_board(frame, data.reset_index(drop=True), out, metric, margin,
                                                        alpha, _to_markdown, _to_html, unfitted)  # issue 50 item 5
        paths.update(k_paths), tables.extend(k_tables), index.extend(k_index)
    if not paths:
        raise ValueError("no leaderboard cells: the rows need constraints=random_pairs/per_class_pairs (pairs) or "
                         "labeled_subsets (labels) with a budget above 0")
    paths["parquet"] = out / "leaderboard.parquet"
    write_table(pd.concat(tables, ignore_index=True), paths["parquet"], out)
    paths["index"] = out / "index.md"
    write_text(paths["index"], "\n".join(index + ["", *([coverage, ""] if coverage else []), f"Metric `{metric}`."
                                                 + (f" Generated by `{command}`." if command else "")
                                                 + f" {AS_SHIPPED}"]) + "\n")
    return paths
