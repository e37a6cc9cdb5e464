"""The leaderboard as a static, offline site (``ccbench report DIR --leaderboard --site SITE``).

Why: the leaderboard pages are long documents, one per supervision kind; a researcher asking "how does
my kind of data set behave" or "where does this method fail" must read them all. The site answers
those questions one page each, from the same rows and the same definitions (:mod:`._frame`):

- ``index.html``: the kinds, every data set (n, d, k as counts) and every method, with links; its trial
  count says what it counts (the base seed's trials, of the rows);
- the ranks, cell statistics and data-set pages are the base seed's, as the pages rank it; the kind pages'
  effect sizes pool every base seed, as the pages' headline does (:mod:`.pooling`);
- ``kind-<kind>.html``: the pages' headline (:func:`.effects.headline_effects`): what the numbers support,
  each method's paired difference over data sets against k-means and the kind's best with its interval
  (a chart and a table; convention ``missing``, every data set first, every other view in a fold) and
  verdict, P(best); then the average ranks (2 decimals) as the secondary view; links to the kind's
  leaderboard pages and CD figure when they were written beside the site;
- ``dataset-<name>.html``: every method's mean and 95 % interval (Student's t over the trials) per
  cell, its status and fit time, the cell's top tie group, and a winner only where the data separate it
  (:func:`_best_group`: the pages' one verdict rule against every other completed method);
- ``method-<name>.html``: where the method wins, fails and is refused, and its cost (fit time and the
  memory its fit added, ``fit_rss_mb``, not the worker's peak; a fit-time curve against the data set's size).

A new method ranked against shipped rows (``--with``) from a partial run is placed against the board
(:mod:`.partial`): the board keeps its numbers, the new method gets the same effect sizes over the data
sets it ran, and every page says the run is partial (with the sweep's coverage line).

Every table sorts by clicking a column header and filters by typing (a few dozen lines of inline
JavaScript, :data:`._site_html.SCRIPT`; no CDN, no framework). Every text from the rows is escaped and
every file is written by replacing, never through a symlink (:mod:`ccbench.reporting._safe`).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from .._format import fmt
from .._safe import staged_dir, write_text
from ..stats import _wilcoxon, decide, wilcoxon_min_p
from ._frame import (CELL, DEFAULT_METRIC, KINDS, _cells, _of_kind, attempted_cells, cell_means,
                     main_methods, ranked_long_frame, ranked_metric, unmeasured_cells)
from ._site_size_classes import size_class_members, size_class_page
from ._site_html import esc, interval_svg, page, scatter_svg, slug, table
from .partial import new_methods, partial_banner, partial_blocks, placed_apart
from .ranks import rank_table
from .seeds import base_seed

__all__ = ["write_site"]

_FAILED = ("error", "timeout", "not_found", "infeasible")


def _cell_stats(frame: pd.DataFrame, metric: str, margin: float = 0.03, alpha: float = 0.05) -> pd.DataFrame:
    """Per (kind, cell, method): trials, ok, mean, the 95 % t interval, status, fit time, what the fit added
    to memory (``fit_rss_mb``, max over the ok trials), and the cell's verdict (:func:`_best_group`):
    ``best_group`` (the method is in the cell's top tie group) and ``winner`` (it alone is)."""
    from scipy import stats

    metric = ranked_metric(metric)

    keys = ["kind", *CELL, "method"]
    g = frame.groupby(keys, sort=True)
    ok = frame["status"].eq("ok")
    bad = frame[~ok]  # the most common status that is not ok, where a cell has one (ties: the first by name)
    other = (bad.groupby([*keys, "status"]).size().reset_index(name="n")
             .sort_values([*keys, "n", "status"], ascending=[True] * len(keys) + [False, True])
             .drop_duplicates(keys).set_index(keys)["status"])
    out = pd.DataFrame({"trials": g.size(), "ok": ok.groupby([frame[c] for c in keys]).sum().astype(int),
                        "mean": g["value"].mean(), "sd": g["value"].std(ddof=1),
                        "fit_time_s": g["fit_time"].mean(), "fit_rss_mb": g["fit_rss_mb"].max()})
    out["status"] = other.reindex(out.index).fillna("completed")
    out = out.reset_index()
    done = out["status"] == "completed"
    out["mean"] = out["mean"].where(done)
    half = stats.t.ppf(0.975, (out["ok"] - 1).clip(lower=1)) * out["sd"] / np.sqrt(out["ok"].clip(lower=1))
    out["ci_low"] = (out["mean"] - half).where(out["ok"] > 1)
    out["ci_high"] = (out["mean"] + half).where(out["ok"] > 1)
    # crowned among the ranked methods only, as the pages rank them: a tuned variant or a k-free run is
    # shown beside them, compared with its own default (sections 1b, 1c), never the cell's winner
    ranked = out["method"].isin(main_methods(frame))
    group = _best_group(frame[frame["method"].isin(out.loc[ranked & done, "method"].unique())], metric, margin, alpha)
    key = list(zip(out["kind"], *(out[c] for c in CELL), out["method"]))
    out["best_group"] = (ranked & done).to_numpy() & np.array([k in group for k in key], dtype=bool)
    size = out.groupby(["kind", *CELL])["best_group"].transform("sum")
    out["winner"] = out["best_group"] & (size == 1)
    return out


def _best_group(frame: pd.DataFrame, metric: str, margin: float, alpha: float) -> set:
    """{(kind, *cell, method)} of each cell's top tie group, among the methods that completed the cell.

    The cell's best mean is compared with every other completed method on their paired trials (same
    trial index) by the one verdict rule (:func:`ccbench.reporting.stats.decide`): the two-sided
    Wilcoxon signed-rank test p <= ``alpha`` AND a mean difference of at least ``margin``; a cell with
    too few pairs for the test to reach ``alpha`` is a tie. The group is the best and every method it
    does not beat; the best is the cell's *winner* only when that group is itself alone. No Holm
    correction: "the best beats every other" is an intersection of the one-pair claims, true at level
    ``alpha`` when each is (an intersection-union test), and each pair's verdict is the one section 2
    of the pages gives for that pair and cell.
    """
    sign = metric.sign
    done = frame["status"].eq("ok").groupby([frame[c] for c in ["kind", *CELL, "method"]]).transform("all")
    wide = frame[done.astype(bool)].pivot_table(index=["kind", *CELL, "trial"], columns="method", values="value",
                                                aggfunc="first")
    methods = wide.columns.to_numpy()
    group = set()
    for cell, rows in wide.groupby(level=["kind", *CELL], sort=False):
        values = sign * rows.to_numpy(float)  # trials x methods, NaN where a method did not complete the cell
        ran = np.isfinite(values).any(axis=0)
        if not ran.any():
            continue
        best = int(np.nanargmax(np.where(ran, np.nanmean(np.where(ran, values, 0.0), axis=0), -np.inf)))
        group.add((*cell, methods[best]))
        for j in np.flatnonzero(ran):
            if j == best:
                continue
            d = values[:, best] - values[:, j]
            d = d[np.isfinite(d)]
            if d.size and abs(d.mean()) >= margin:  # the test only where the margin is met, as section 2
                p = _wilcoxon(d, np.zeros(d.size))[1]
                if decide(float(d.mean()), p, wilcoxon_min_p(int((d != 0).sum())), margin, alpha) == "A":
                    continue
            group.add((*cell, methods[j]))
    return group


def _nav(kinds, index: str = "index.html") -> list[tuple[str, str]]:
    return [(index, "ccbench leaderboard")] + [(slug("kind", k), k) for k in kinds]


def _effects(frame: pd.DataFrame, metric: str, margin: float, alpha: float) -> dict:
    """The pages' headline (:func:`.effects.headline_effects`) of one kind's rows (every base seed): the
    same numbers as the pages' section 1, never recomputed another way here."""
    from .effects import headline_effects

    return headline_effects(frame, metric=metric, margin=margin, alpha=alpha)


_EFFECT_COLS = ["method", "reference_name", "n_sets", "mean_diff", "ci_low", "ci_high", "wins", "ties", "losses",
                "p_holm", "p_ahead", "p_rope", "p_behind", "verdict", "loo_flips", "loo_n"]
_HEAD = {"convention": "missing", "subset": "all"}  # the headline's view; the others are one click away


def _effect_rows(effects: pd.DataFrame, reference: str, **view) -> pd.DataFrame:
    """The effects against ``reference`` ("kmeans" or "best") in one view (convention, subset), the
    reference itself left out (a difference with itself is no result), sorted by the difference."""
    view = {**_HEAD, **view}
    rows = effects[(effects["reference"] == reference) & (effects["convention"] == view["convention"])
                   & (effects["subset"] == view["subset"]) & (effects["method"] != effects["reference_name"])]
    return rows.sort_values("mean_diff", ascending=False, kind="stable")


def _effects_html(result: dict, metric: str, kind: str, margin: float, alpha: float, new: dict | None = None) -> str:
    """The headline on a kind page: what the numbers support, the effect sizes against k-means and the
    best with their intervals (chart and table), every other view in a fold, and P(best)."""
    from ..html import _inline
    from .headline_text import per_budget_table, size_class_table

    effects, p_best = result["effects"], result["p_best"]
    text = "".join(f"<p>{_inline(str(t))}</p>" for t in result.get("text") or [])
    parts = [f'<h2 id="support">What these numbers support</h2>{text or "<p>No headline: too few data sets.</p>"}',
             "<h2>Effect sizes against k-means and the best</h2>"
             f"<p>Per method and data set, the mean over its base seeds of the mean over "
             + ("the curves both have of the area under its curve minus the reference's (a curve: one data set, "
                "setting, noise and seed over its budgets; its area: the trapezoid over log budget divided by "
                "its range; a cell score: the mean " if result.get("unit") == "curve" else
                "the cells both have of its cell score minus the reference's (a cell score: the mean ")
             + f"<code>{esc(metric)}</code> over the cell's trials); "
             f"<b>mean_diff</b> is the mean of those differences over the <b>n_sets</b> data sets (positive "
             f"= the method is better), with a 95 % bootstrap interval over data sets and their seeds "
             f"(<b>ci_low</b>, <b>ci_high</b>); "
             f"<b>wins / ties / losses</b> count data sets; <b>p_holm</b>: Wilcoxon signed-rank over the data sets, "
             f"Holm-corrected over the family of the page's comparisons with that reference; <b>p_ahead / p_rope / "
             f"p_behind</b>: the Bayesian signed-rank posterior with a region of practical equivalence of "
             f"&plusmn;{margin:g}; <b>verdict</b> at alpha = {alpha} (<i>undetermined</i> where dropping one data set "
             f"flips it: <b>loo_flips</b> of <b>loo_n</b> drops). Convention <i>missing</i> (a cell refused by a "
             f"prediction or a skipped draw is left out; a measured failure, a timeout, error or infeasible "
             f"trial, scores as one cluster would), every data set; the other conventions and "
             f"subsets are in the fold below.</p>"]
    for reference in ("kmeans", "best"):
        rows = _effect_rows(effects, reference)
        if rows.empty:
            parts.append(f"<p>No comparison with {esc(reference)} in these rows.</p>")
            continue
        name = rows["reference_name"].iloc[0]
        parts.append(interval_svg(rows.set_index("method"), f"{metric} difference against {name} ({kind}), "
                                  f"95 % interval over data sets", colour_by="verdict"))
        parts.append(table(rows[_EFFECT_COLS], links={"method": lambda m: slug("method", m)},
                           table_id=f"effects-{reference}", digits={"p_holm": 3}))
    budgets, classes = per_budget_table(result.get("per_budget")), size_class_table(effects)
    if not budgets.empty:
        parts.append("<h2>At each budget</h2><p>Each method minus k-means at each budget, over the data sets with "
                     "that budget (the points of the curves whose areas are compared above; 95 % interval).</p>"
                     + table(budgets.reset_index(), table_id="per-budget"))
    if not classes.empty:
        parts.append("<h2>Per size class</h2><p>Each method minus k-means over the data sets of each size class "
                     "(its own Holm family), the verdict and (the data sets); <i>not measured</i>: refused or "
                     "skipped on every data set of the class, not ranked there.</p>"
                     + table(classes.reset_index(), table_id="size-classes"))
    if new:
        parts.append(new["html"])
    every = effects.sort_values(["convention", "subset", "reference", "mean_diff"], ascending=[True, True, True, False])
    parts.append("<details><summary>Every convention (missing, last) and subset (all data sets, informative "
                 "ones only, each size class)</summary>" + table(every[["convention", "subset", "reference", *_EFFECT_COLS]],
                                                 links={"method": lambda m: slug("method", m)}, table_id="effects-all")
                 + "</details>")
    head = p_best[(p_best["convention"] == _HEAD["convention"]) & (p_best["subset"] == _HEAD["subset"])]
    parts.append("<h2>P(best)</h2><p>The share of data-set bootstrap resamples in which the method has the best "
                 f"mean <code>{esc(metric)}</code> over the resampled data sets (convention missing, every data set; "
                 "the other views are in the fold).</p>"
                 + table(head.sort_values("p_best", ascending=False)[["method", "p_best", "mean", "n_sets"]],
                         links={"method": lambda m: slug("method", m)}, table_id="p-best")
                 + "<details><summary>P(best) in every view</summary>"
                 + table(p_best, links={"method": lambda m: slug("method", m)}, table_id="p-best-all") + "</details>")
    return "".join(parts)


def _pages_links(kind: str, pages: Path | None, out: Path) -> str:
    """Links to the kind's leaderboard pages and CD figure, where they were written beside this site."""
    if pages is None:
        return ""
    found = [(f"{kind}.html", "page (HTML)"), (f"{kind}.md", "page (markdown)"), (f"{kind}_cd.png", "CD diagram")]
    links = [f'<a href="{esc(Path(os.path.relpath(pages / name, out)).as_posix())}">{label}</a>'
             for name, label in found if (pages / name).is_file() and not (pages / name).is_symlink()]
    return f"<p>The full leaderboard page of {esc(kind)}: {', '.join(links)}.</p>" if links else ""


def _k_free_link(pages: Path | None, out: Path) -> str:
    """The index's link to the k-free board page (``k_free.html``, :mod:`.k_free_board`), where it was written
    beside this site: the second leaderboard, every method choosing k itself."""
    if pages is None or not (pages / "k_free.html").is_file() or (pages / "k_free.html").is_symlink():
        return ""
    href = esc(Path(os.path.relpath(pages / "k_free.html", out)).as_posix())
    return (f'<h2>The k-free board</h2><p>Every method choosing k itself, as a user must (its own rule, or CVCP '
            f'over k): <a href="{href}">the k-free board</a>, ranked like the kind pages against k-means choosing '
            f'k. Its entries are the <code>[k-free]</code> variants in the table below.</p>')


def _kind_page(kind: str, frame: pd.DataFrame, metric: str, margin: float, alpha: float, nav, links: str,
               partial: dict, banner: str, result: dict | None = None) -> tuple[str, pd.DataFrame]:
    """The kind's headline (effects, P(best), what they support) first, the average ranks as the secondary
    view; ``frame``: the kind's base-seed rows of the board (the shipped methods, when ranking new ones),
    ``result``: its headline (:func:`_effects` of every base seed's rows; default: of ``frame``)."""
    from .pages import cd_ranks  # the pages' own rank view: the same numbers, never recomputed another way

    rows = _of_kind(frame, kind)
    cells = _cells(rows)
    means = cell_means(cells)
    attempted = attempted_cells(cells).reindex_like(means).fillna(False).astype(bool)
    unmeasured = unmeasured_cells(cells).reindex_like(means).fillna(False).astype(bool)
    main = [m for m in main_methods(cells) if m in means.columns]
    ranks = rank_table(means[main], metric, attempted[main], unmeasured[main]).reset_index()
    by_set = cd_ranks(means[main], attempted[main], metric, unmeasured[main])["ranks"]["rank_over_data_sets"]
    ranks["rank_over_data_sets"] = ranks["method"].map(by_set)
    ranks = ranks.sort_values("rank_over_data_sets", kind="stable")
    sets = sorted(cells["dataset"].unique())
    result = _effects(rows, metric, margin, alpha) if result is None else result
    rank_cols = {c: 2 for c in ranks.columns if c.startswith("rank")}
    body = (links
            + f'<p>{len(main)} methods at their defaults over {len(sets)} data sets and {len(means)} cells (data set '
              f'x setting x budget x noise) on <code>{esc(metric)}</code>; the numbers of the leaderboard pages.</p>'
            + _effects_html(result, metric, kind, margin, alpha, partial.get(kind))
            + "<h2>Average ranks (secondary view)</h2>"
              f"<p><b>rank_over_data_sets</b>: a method's per-cell ranks averaged within each data set, the methods "
              f"ranked within each data set on that average (a data set is one Friedman block of the pages' CD "
              f"diagram), then averaged over the data sets where every method has a ranked cell (of the "
              f"{len(sets)}); 1 is best; the pages' numbers (their table <code>cd_blocks</code>), empty for a method "
              f"the CD view leaves out. Per cell, as the pages rank (<b>rank_failed_last</b>): a measured failure "
              f"(timeout, error, infeasible) ranks last; a cell refused by a time or memory model's prediction, or a "
              f"skipped draw, is missing, not ranked (<b>rank_all_failures_last</b>: every failure last, the "
              f"convention before). A rank says where a method stands, not by how much: two ranks apart can be a tie "
              f"(the effect sizes above say which).</p>"
            + table(ranks, links={"method": lambda m: slug("method", m)}, table_id="ranks", digits=rank_cols)
            + "<h2>Data sets</h2><p>" + ", ".join(f'<a href="{esc(slug("dataset", d))}">{esc(d)}</a>' for d in sets)
            + "</p>")
    return page(f"{kind}: effect sizes and ranks", body, nav, banner=banner), ranks


def _dataset_page(name: str, stats: pd.DataFrame, info: dict, metric: str, margin: float, alpha: float, nav,
                  banner: str) -> str:
    rows = stats[stats["dataset"] == name]
    shown = rows[["kind", "setting", "budget", "noise", "method", "mean", "ci_low", "ci_high", "status", "ok",
                  "trials", "fit_time_s", "best_group", "winner"]].rename(columns={"mean": metric})
    shown = shown.assign(setting=shown["setting"].replace("", "-"), budget=shown["budget"].map(fmt))
    winners = rows[rows["winner"]].groupby("method").size().sort_values(ascending=False)
    tied = rows[rows["best_group"]].groupby(["kind", *CELL]).size()
    def count(key):  # a size column is float after its NaN-tolerant max: 150 points, not 150.0
        value = pd.to_numeric(info.get(key), errors="coerce")
        return f"{int(value):,}" if pd.notna(value) else "?"

    body = (f'<p>{count("n")} points, {count("d")} features, {count("k")} '
            f'classes. Per cell (kind, setting, budget, noise) every method\'s mean of <code>{esc(metric)}</code> over '
            f'its trials with a 95 % t interval (completed cells only: every trial ok), its status (completed or '
            f'the most common other status), mean fit time. <b>best_group</b>: the cell\'s best completed method '
            f'among the ranked ones and every completed method it does not beat on their paired trials (Wilcoxon '
            f'signed-rank p &le; {alpha} and a difference of at least {margin:g}, the pages\' one verdict rule); '
            f'<b>winner</b> (green) only where that group is the best alone: the data separate it. A tuned variant '
            f'or a k-free run is shown, never crowned; so is a partial run\'s new method (the board\'s verdicts '
            f'are the board\'s own).</p><p>Cells won outright: '
            + (", ".join(f'<a href="{esc(slug("method", m))}">{esc(m)}</a> {int(n)}' for m, n in winners.items())
               or "none") + f"; cells whose best is a tie group of two or more: {int((tied > 1).sum())} of "
            f"{len(tied)}.</p>"
            + table(shown, links={"method": lambda m: slug("method", m)},
                    row_class=shown["winner"].map(lambda w: "win" if w else "")
                    .where(shown["winner"], shown["best_group"].map(lambda g: "tie" if g else "")),
                    table_id="cells"))
    return page(f"Data set {name}", body, nav, banner=banner)


def _method_page(name: str, stats: pd.DataFrame, frame: pd.DataFrame, sizes: pd.Series, metric: str, nav,
                 banner: str, partial: str = "") -> str:
    rows = stats[stats["method"] == name]
    mine = frame[frame["method"] == name]
    per_set = rows.groupby("dataset").agg(cells=("winner", "size"), won=("winner", "sum"),
                                          best_group=("best_group", "sum"),
                                          completed=("status", lambda s: int((s == "completed").sum())),
                                          failed=("status", lambda s: int(s.isin(_FAILED).sum())),
                                          refused=("status", lambda s: int((s == "refused").sum())),
                                          mean=("mean", "mean"))
    cost = mine[mine["status"] == "ok"].groupby("dataset").agg(median_fit_time_s=("fit_time", "median"),
                                                               fit_added_mb_max=("fit_rss_mb", "max"))
    per_set = per_set.join(cost).reset_index()
    per_set.insert(1, "n_points", per_set["dataset"].map(sizes).round().astype("Int64"))  # counts, not 336.000
    per_set = per_set.rename(columns={"mean": f"mean {metric} (completed cells)"})
    failures = rows[rows["status"].isin([*_FAILED, "refused"])][["kind", "dataset", "setting", "budget", "noise",
                                                                 "status", "ok", "trials"]]
    curve = per_set.set_index("dataset")[["n_points", "median_fit_time_s"]].dropna()
    statuses = mine["status"].value_counts()
    body = (partial + f'<p>Trials at the base seed: {", ".join(f"{esc(s)} {int(n)}" for s, n in statuses.items())}. '
            f'Cells won outright (the data separate it from every other method): {int(rows["winner"].sum())} of '
            f'{len(rows)}; in the cell\'s top tie group: {int(rows["best_group"].sum())}; failed (error, timeout, '
            f'not found, infeasible): {int(rows["status"].isin(_FAILED).sum())}; refused by the time or memory '
            f'budget: {int((rows["status"] == "refused").sum())}.</p>'
            '<p><b>fit_added_mb_max</b>: the most memory one fit added, over the data set\'s ok trials (the row\'s '
            '<code>fit_rss_mb</code>: the peak resident size during <code>fit</code> minus the size just before it). '
            'Not the worker\'s peak (<code>peak_rss_mb</code>), which counts the data, the imports and the Python '
            'process around the fit: that is the harness\'s memory, not the method\'s.</p>'
            + scatter_svg(curve, "n_points", "median_fit_time_s", f"{name}: median fit time per data set",
                          "data set size (points)", "fit time (s)")
            + "<h2>Per data set</h2>" + table(per_set, links={"dataset": lambda d: slug("dataset", d)}, table_id="sets")
            + "<h2>Where it fails or is refused</h2>"
            + (table(failures, links={"dataset": lambda d: slug("dataset", d)}, table_id="failures")
               if len(failures) else "<p>Nowhere: every cell it ran completed or was skipped by design.</p>"))
    return page(f"Method {name}", body, nav, banner=banner)


def _trial_count(data: pd.DataFrame, every_seed: pd.DataFrame, frame: pd.DataFrame) -> str:
    """What the header's number counts: the base seed's trials ranked here, of the rows."""
    seed = base_seed(every_seed)
    other = len(every_seed) - len(frame)
    unused = len(data) - len(every_seed)
    seeds = sorted(set(every_seed["seed"]) - {seed}) if "seed" in every_seed else []
    return (f"{len(frame):,} trials at base seed {seed} (the ranks, cells and data-set pages are theirs), of the "
            f"{len(data):,} rows"
            + (f"; the other {other:,} are seed {', '.join(map(str, seeds))}, pooled with them in the kind pages' "
               f"effect sizes (their intervals carry the seed-to-seed spread)" if other else "")
            + (f"; {unused:,} rows are of no leaderboard scheme or a re-run's older copy" if unused else ""))


def _index(kinds: dict, stats: pd.DataFrame, frame: pd.DataFrame, info: pd.DataFrame, metric: str,
           command: str, count: str, nav, banner: str, new: dict, classes: dict | None = None,
           k_free: str = "") -> str:
    methods = frame.groupby("method").agg(trials=("status", "size"), ok=("status", lambda s: int((s == "ok").sum())),
                                          data_sets=("dataset", "nunique"), family=("family", "first"))
    wins = stats.groupby("method")["winner"].sum().astype(int)
    methods["cells_won"] = wins.reindex(methods.index).fillna(0).astype(int)
    for kind, ranks in kinds.items():
        methods[f"rank {kind}"] = ranks.set_index("method")["rank_over_data_sets"].reindex(methods.index)
    methods = methods.reset_index()
    kind_list = "".join(f'<li><a href="{esc(slug("kind", k))}">{esc(k)}</a>: {len(r)} ranked methods</li>'
                        for k, r in kinds.items())
    mine = ("<p>Ranked against the board without joining it (run on fewer data sets than the board): "
            + ", ".join(f'<a href="{esc(slug("method", m))}">{esc(m)}</a> ({esc(text)})' for m, text in new.items())
            + ". Its rank columns are empty: a rank over fewer data sets is no rank among ranks over all of them; "
              "its effect sizes against k-means and the best are on its page and the kind pages.</p>") if new else ""
    body = (f"<p>Constrained clustering methods compared on <code>{esc(metric)}</code> over "
            f"{frame['dataset'].nunique()} data sets: {esc(count)}. Generated by "
            f"<code>{esc(command)}</code>. The definitions are those of the leaderboard pages "
            f"(docs/leaderboard.md). Each kind page leads with the effect sizes over data sets against k-means and "
            f"the kind's best, with intervals and verdicts; the average ranks are its secondary view.</p>"
            f"<h2>Supervision kinds</h2><ul>{kind_list}</ul>" + k_free + mine
            + ("<h2>Size classes</h2><ul>" + "".join(
                f'<li><a href="{esc(slug("size", c))}">{esc(c)}</a>: {len(m)} data sets</li>'
                for c, m in classes.items()) + "</ul>" if classes else "")
            + "<h2>Methods</h2>" + table(methods, links={"method": lambda m: slug("method", m)}, table_id="methods",
                                         digits={c: 2 for c in methods.columns if c.startswith("rank")})
            + "<h2>Data sets</h2>" + table(info, links={"dataset": lambda d: slug("dataset", d)}, table_id="datasets"))
    return page("ccbench leaderboard", body, nav, banner=banner)


def write_site(data: pd.DataFrame, out, metric: str = DEFAULT_METRIC, margin: float = 0.03,
               command: str = "ccbench report --site", alpha: float = 0.05, coverage: str | None = None,
               new_rows: pd.DataFrame | None = None, pages=None) -> Path:
    """Write the site into ``out`` (created; a symlink there is refused); return the index's path.

    ``coverage``: the pages' sweep-coverage line, shown atop every page (a partial run says so on each).
    ``new_rows``: the rows of a sweep ranked against shipped ones (``--with``), a subset of ``data``
    (matched on ``config_hash`` and ``trial``); a method all of whose rows are new and that ran fewer of
    a kind's data sets than the board is placed against the board (:func:`.partial.partial_blocks`)
    instead of joining it, so the shipped methods keep their full-board numbers. ``pages``: the folder
    of the leaderboard pages, linked from each kind page where its files are. Written as a whole
    (:func:`.._safe.staged_dir`): a writer killed midway leaves the old site, not pages of two runs.
    """
    with staged_dir(out, "--site") as staging:
        index = _write_site(data, staging, metric, margin, command, alpha, coverage, new_rows,
                            _rebased(pages, out, staging))
    return Path(out) / index.name


def _rebased(pages, out, staging: Path):
    """``pages`` as seen from the staging folder: the same folder, unless it is ``out`` or inside it (then
    its staged copy), so the kind pages' links and their existence checks hold once the site is in place."""
    if pages is None:
        return None
    pages, target = Path(pages).absolute(), Path(out).absolute()
    if pages == target or target in pages.parents:
        return staging / pages.relative_to(target)
    return pages


def _write_site(data, out: Path, metric, margin, command, alpha, coverage, new_rows, pages) -> Path:
    every_seed, metric = ranked_long_frame(data, metric)  # its direction, once, for every ranking of every page
    frame = every_seed
    if "seed" in frame:  # the base seed, as the pages rank it (a second seed only measures their spread)
        frame = frame[frame["seed"] == base_seed(frame)]
    kinds_present = [k for k in KINDS if (frame["kind"] == k).any()]
    nav = _nav(kinds_present)
    banner = coverage or ""
    new = new_methods(data, frame, new_rows)
    outside = placed_apart(frame, new)
    board = frame[~frame["method"].isin(set(outside))]
    board_seeds = every_seed[~every_seed["method"].isin(set(outside))]  # the headline pools every base seed
    partial = partial_blocks(every_seed, board_seeds, outside, metric, margin, alpha, _effects)
    if outside:
        banner += (" " if banner else "") + partial_banner(outside)
    stats = _cell_stats(board[~board["unconstrained"]], metric, margin, alpha)
    stats = pd.concat([stats, _cell_stats(frame[frame["method"].isin(set(outside)) & ~frame["unconstrained"]],
                                          metric, margin, alpha).assign(best_group=False, winner=False)],
                      ignore_index=True) if outside else stats
    sizes = (pd.to_numeric(data["n_samples"], errors="coerce").groupby(data["dataset.name"].astype(str)).max()
             if "n_samples" in data else pd.Series(dtype=float))
    info = pd.DataFrame({"dataset": sorted(frame["dataset"].unique())})
    for col, name in (("n_samples", "n"), ("n_features", "d"), ("n_classes", "k")):
        values = (pd.to_numeric(data[col], errors="coerce").groupby(data["dataset.name"].astype(str)).max()
                  if col in data else pd.Series(dtype=float))
        info[name] = info["dataset"].map(values).round().astype("Int64")  # counts: 625, not 625.000
    kinds = {}
    pages = Path(pages) if pages is not None else None
    results = {kind: _effects(_of_kind(board_seeds, kind), metric, margin, alpha) for kind in kinds_present}
    for kind in kinds_present:
        text, kinds[kind] = _kind_page(kind, board, metric, margin, alpha, nav, _pages_links(kind, pages, out),
                                       partial, banner, results[kind])
        write_text(out / slug("kind", kind), text, out)
    classes = size_class_members(results)
    for label, members in classes.items():
        write_text(out / slug("size", label), size_class_page(label, members, results, metric, nav, banner), out)
    for _, rec in info.iterrows():
        write_text(out / slug("dataset", rec["dataset"]),
                   _dataset_page(rec["dataset"], stats, rec.to_dict(), metric, margin, alpha, nav, banner), out)
    for method in sorted(frame["method"].unique()):
        write_text(out / slug("method", method),
                   _method_page(method, stats, frame, sizes, metric, nav, banner, partial.get(("method", method), "")),
                   out)
    info = info.assign(methods_completed=info["dataset"].map(
        stats[stats["status"] == "completed"].groupby("dataset")["method"].nunique()).fillna(0).astype(int))
    count = _trial_count(data, every_seed, frame)
    return write_text(out / "index.html", _index(kinds, stats, frame, info, metric, command, count, nav, banner,
                                                 outside, classes, _k_free_link(pages, out)), out)
