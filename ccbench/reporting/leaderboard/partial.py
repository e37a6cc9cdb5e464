"""A new method ranked against shipped rows (``ccbench report MINE --leaderboard --with SHIPPED``) when it
ran fewer data sets than the board: a partial run, placed against the board instead of joining it.

Why: the rank over data sets (:func:`.ranks.rank_over_data_sets`) averages over the data sets where every
ranked method has a value. A method run on 6 of 24 data sets made every shipped method's rank one over
those 6 (scap 11.54 -> 7.83 on pairs) while the page still said 24; and a method's rank over 6 data sets,
listed among ranks over 24, reads as a place on the board that nothing measured. So, on the pages
(:func:`.pages.write_leaderboard`) and the site (:func:`.site.write_site`) alike:

- the *board* (every method with shipped rows, and a new method that ran every data set of the kind)
  keeps its numbers, those of the board without the new rows: headline, ranks, CD diagram, every table;
- a *partial* new method (every row of it new, and some data set of a kind that the board has it did not
  run: :func:`placed_apart`) gets the headline's numbers (:func:`.effects.headline_effects`: the paired
  difference in the metric per data set against k-means and against the best, with its data-set
  bootstrap interval, win/loss counts, Wilcoxon-Holm, the Bayesian signed-rank posterior and the
  leave-one-out verdict) computed over the data sets it ran (:func:`partial_comparison`). Holm's family
  there is every method with a value on those data sets compared with the same reference (the board's
  methods and this one); the page states its size. The block says over how many data sets;
- every page says the run is partial (a banner on each).

The "best" of a partial comparison is the best over those data sets (the board's best over all of them
may not be it there): the page names it. The method's average rank among the methods run on those data
sets is shown too, as a rank over those data sets only, never beside the board's ranks.
"""

from __future__ import annotations

import pandas as pd

from ...running.results import KEY
from ._frame import KINDS, _cells, _of_kind, attempted_cells, cell_means, main_methods, unmeasured_cells
from ._site_html import esc, interval_svg, slug, table
from .ranks import dataset_blocks, rank_over_data_sets

__all__ = ["new_methods", "placed_apart", "partial_comparison", "partial_blocks", "partial_page_blocks",
           "partial_banner", "partial_section", "PARTIAL_TITLE", "PARTIAL_PREFIX"]

#: How a partial method's sentence on a leaderboard page starts (the index quotes it).
PARTIAL_PREFIX = "**Partial run ("

#: The heading of a partial method's block on a leaderboard page (one per method).
PARTIAL_TITLE = "Partial run: `{method}`, over {n} of {n_board} data sets (not ranked on the board)"

_COLS = ["reference_name", "n_sets", "mean_diff", "ci_low", "ci_high", "wins", "ties", "losses", "p_holm",
         "p_ahead", "p_rope", "p_behind", "verdict", "loo_flips", "loo_n"]


def new_methods(data: pd.DataFrame, frame: pd.DataFrame, new_rows: pd.DataFrame | None) -> set:
    """The methods (labels of ``frame``, a :func:`long_frame` of ``data``) every row of which is one of
    ``new_rows`` (matched on ``config_hash`` and ``trial``): a method the shipped rows do not have. A
    shipped method re-run in the new rows is no new method. Empty without ``new_rows``."""
    if new_rows is None or not len(new_rows):
        return set()
    missing = [c for c in KEY if c not in data or c not in new_rows]
    if missing:
        raise ValueError(f"cannot tell the new rows from the shipped ones: no {', '.join(missing)} column; rows made "
                         f"by the ccbench harness carry config_hash and trial (re-run the sweep with this ccbench)")
    mine = pd.MultiIndex.from_frame(new_rows[list(KEY)].astype({"config_hash": str, "trial": int}))
    rows = data.reset_index(drop=True).iloc[frame["row"].to_numpy()]
    is_new = pd.MultiIndex.from_frame(rows[list(KEY)].astype({"config_hash": str, "trial": int})).isin(mine)
    every = pd.Series(is_new, index=frame.index).groupby(frame["method"]).all()
    return set(every.index[every])


def placed_apart(frame: pd.DataFrame, new: set) -> dict:
    """{method: "N of M data sets (kind), ..."} of the new methods that, in some kind, ran fewer of the
    data sets the board (the other methods) has; in the order of their names. A new method that ran them
    all joins the board."""
    out = {}
    board = frame[~frame["method"].isin(new)]
    for method in sorted(new):
        parts, short = [], False
        for kind in KINDS:
            theirs = set(_cells(_of_kind(board, kind))["dataset"])
            mine = set(_cells(_of_kind(frame[frame["method"] == method], kind))["dataset"])
            if mine and theirs:
                parts.append(f"{len(mine & theirs)} of {len(theirs)} data sets ({kind})")
                short |= bool(theirs - mine)
        if short:
            out[method] = ", ".join(parts)
    return out


def partial_banner(outside: dict, markdown: bool = False) -> str:
    """The sentence every page of a partial run carries: plain text (the site escapes it), or with
    ``markdown`` the method names as code and the lead in bold."""
    name = (lambda m: f"`{m}`") if markdown else str
    lead = "**Partial run ranked against the board:**" if markdown else "Partial run ranked against the board:"
    return (f"{lead} " + "; ".join(f"{name(m)} ran {text}" for m, text in outside.items())
            + ". The board's methods keep their numbers over every data set; each new method is compared with "
              "k-means and the best over the data sets it ran.")


def _rank_among(rows: pd.DataFrame, metric: str) -> pd.Series:
    """Every ranked method's average rank over the data sets of ``rows``, as the board ranks them (per-cell
    ranks under the ``missing`` convention: a measured failure last, a refused or skipped cell not
    ranked; averaged per data set, ranked per data set, averaged over the data sets where every method
    has a block)."""
    cells = _cells(rows)
    means, attempted = cell_means(cells), attempted_cells(cells)
    unmeasured = unmeasured_cells(cells).reindex_like(means).fillna(False).astype(bool)
    main = [m for m in main_methods(cells) if m in means.columns]
    return rank_over_data_sets(dataset_blocks(means[main], metric, attempted[main], unmeasured[main])).sort_values()


def partial_comparison(rows: pd.DataFrame, board_methods: set, method: str, metric: str, margin: float,
                       alpha: float, effects) -> dict | None:
    """One partial method against the board on one kind: ``rows`` the kind's rows (every method; the base
    seed is kept), ``effects`` the headline function (``effects(rows, metric, margin, alpha)``, e.g.
    :func:`.effects.headline_effects`), called on the rows of the data sets the method ran, of the board's
    methods and this one. None where the method or the board has no ranking cell of the kind.

    Returns ``sets`` (the data sets it ran), ``n_board`` (the board's), ``own`` (its effect rows against
    k-means and the best: convention ``missing``, every data set), ``best`` (the best over ``sets``),
    ``others`` (every board method against it, where it is that best), ``family`` ({reference: the number
    of methods Holm's correction is over}), ``p_best``, ``ranks`` (every method's average rank over ``sets``)."""
    if "seed" in rows and len(rows):
        rows = rows[rows["seed"] == rows["seed"].min()]
    sets = sorted(set(_cells(rows[rows["method"] == method])["dataset"]))
    n_board = len(set(_cells(rows[rows["method"].isin(board_methods)])["dataset"]))
    if not sets or not n_board:
        return None
    here = rows[rows["dataset"].isin(sets) & rows["method"].isin(set(board_methods) | {method})]
    result = effects(here, metric, margin, alpha)
    eff = result["effects"]
    head = eff[(eff["convention"] == "missing") & (eff["subset"] == "all")]
    best = head.loc[head["reference"] == "best", "reference_name"]
    best = str(best.iloc[0]) if len(best) else ""
    p_best = result["p_best"]
    p_best = p_best[(p_best["convention"] == "missing") & (p_best["subset"] == "all") & (p_best["method"] == method)]
    return {"sets": sets, "n_board": n_board, "best": best,
            "own": head[(head["method"] == method) & (head["method"] != head["reference_name"])],
            "others": head[(head["reference"] == "best") & (head["method"] != method)] if best == method
            else head.iloc[:0],
            "family": {r: int(head.loc[head["reference"] == r, "p_wilcoxon"].notna().sum()) for r in ("kmeans", "best")},
            "p_best": float(p_best["p_best"].iloc[0]) if len(p_best) else float("nan"),
            "ranks": _rank_among(here, metric)}


def _family_text(comp: dict, reference: str) -> str:
    """Which family Holm's correction of one reference is over, in words."""
    name = "k-means" if reference == "kmeans" else f"the best there, {comp['best']},"
    return (f"Holm over the family of the {comp['family'][reference]} methods compared with {name} on these "
            f"{len(comp['sets'])} data sets: the board's methods with a value there and this one")


def _rank_text(method: str, comp: dict) -> str:
    ranks = comp["ranks"].dropna()
    if method not in ranks.index:  # no block in some data set there (every cell refused): no rank
        return ""
    return (f"Its average rank over those {len(comp['sets'])} data sets, among the {len(ranks)} methods run there: "
            f"{ranks[method]:.2f} ({ranks.index.get_loc(method) + 1} of {len(ranks)}). Not comparable with the "
            f"board's ranks over {comp['n_board']} data sets.")


def partial_page_blocks(frames: dict, board_methods: set, outside: dict, alpha: float, margin: float, effects,
                        md_frame) -> tuple[list, pd.DataFrame]:
    """A leaderboard page's blocks (``("h", ...)``, ``("md", ...)``) for its kind's partial new methods, one
    section each, and their effect rows (one per metric, method and reference: the ``partial_effects``
    table of ``leaderboard.parquet``). ``frames``: {metric: the kind's long frame on it, every method},
    the page's metric first; ``effects``: the headline function; ``md_frame``: a table as markdown."""
    blocks, tables = [], []
    for method in outside:
        section = []
        for metric, rows in frames.items():
            comp = partial_comparison(rows, board_methods, method, metric, margin, alpha, effects)
            if comp is None:
                continue
            n, n_board = len(comp["sets"]), comp["n_board"]
            if not section:
                section += [("h", 2, PARTIAL_TITLE.format(method=method, n=n, n_board=n_board)),
                            ("md", f"A partial run: `{method}` ran {n} of the board's {n_board} data sets of this kind "
                                   f"({', '.join(comp['sets'])}). It is not on the board: the headline, the ranks, "
                                   f"the CD diagram and every table of this page are the board's over its "
                                   f"{n_board} data sets, without it (a rank over {n} data sets is no place among "
                                   f"ranks over {n_board}). Here it gets the headline's effect sizes over its {n} "
                                   f"data sets only: the paired difference per data set against `kmeans` and "
                                   f"against the best over those data sets, with a data-set bootstrap interval, "
                                   f"wins/ties/losses, Wilcoxon with Holm over the family stated, the Bayesian "
                                   f"signed-rank posterior (ROPE {margin:g}) and the leave-one-out verdict (alpha = "
                                   f"{alpha}).")]
            own = comp["own"]
            lines = [f"against {'`kmeans`' if r.reference == 'kmeans' else f'the best there, `{r.reference_name}`'}"
                     f" {r.mean_diff:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}] over {r.n_sets} data sets "
                     f"({r.wins}/{r.losses} wins/losses), p_holm = {r.p_holm:.2g} ({_family_text(comp, r.reference)}),"
                     f" {r.verdict}" for r in own.itertuples()]
            p_best = (f"{comp['p_best']:.2f}" if comp["p_best"] == comp["p_best"] else
                      "none (it has no value on some of them)")
            if comp["best"] == method:
                lines.append(f"it is the best over these {n} data sets (P(best) {p_best}); every board "
                             f"method against it is in the table below ({_family_text(comp, 'best')})")
            else:
                lines.append(f"P(best) over these {n} data sets: {p_best}")
            section.append(("md", f"{PARTIAL_PREFIX}`{metric}`), `{method}` over {n} of {n_board} data sets:** "
                                  + "; ".join(lines) + ". " + _rank_text(method, comp)))
            shown = own if comp["best"] != method else pd.concat([own, comp["others"]], ignore_index=True)
            shown = shown.assign(holm_family=shown["reference"].map(comp["family"]))
            if len(shown):
                section.append(("md", md_frame(shown[["method", "reference", *_COLS[:9], "holm_family", *_COLS[9:]]]
                                               .set_index("method"))))
            tables.append(shown.assign(metric=metric, partial_method=method, n_board=n_board,
                                       data_sets=", ".join(comp["sets"])))
        blocks += section
    return blocks, (pd.concat(tables, ignore_index=True) if tables else pd.DataFrame())


def partial_blocks(frame: pd.DataFrame, board: pd.DataFrame, outside: dict, metric: str, margin: float,
                   alpha: float, effects) -> dict:
    """The site's blocks for the partial new methods: ``{kind: {"html": ...}}`` for the kind pages and
    ``{("method", name): html}`` for the method pages. ``effects``: the headline function
    (:func:`.site._effects`), called on the kind's rows of the data sets the method ran (the board's
    methods and this one): :func:`partial_comparison`."""
    blocks: dict = {}
    board_methods = set(board["method"])
    for method in outside:
        mine_all = []
        for kind in KINDS:
            comp = partial_comparison(_of_kind(frame, kind), board_methods, method, metric, margin, alpha, effects)
            if comp is None:
                continue
            sets, n_board, own = comp["sets"], comp["n_board"], comp["own"]
            lead = (f"<h2 id=\"partial-{esc(slug('m', method))}\">{esc(method)}: a partial run, over {len(sets)} of "
                    f"{n_board} data sets</h2><p><b>{esc(method)}</b> ran {len(sets)} of the board's {n_board} data "
                    f"sets of this kind ({esc(', '.join(sets))}). It is not ranked on the board above (the board's "
                    f"numbers are over all {n_board} data sets, without it); here are the same effect sizes as the "
                    f"board's, over its {len(sets)} data sets only: {esc(_family_text(comp, 'kmeans'))}; "
                    f"{esc(_family_text(comp, 'best'))}. The best over these {len(sets)} data sets is "
                    f"<code>{esc(comp['best'])}</code>.</p>")
            text = (interval_svg(own.set_index("reference_name"), f"{method} against k-means and the best over "
                                 f"its {len(sets)} data sets ({kind})") + table(own[_COLS], table_id=f"partial-{kind}")
                    if len(own) else "")
            if comp["best"] == method:  # the best there: the others against it say by how much
                others = comp["others"]
                text += (f"<p>Over these {len(sets)} data sets {esc(method)} is the best; every board method against "
                         f"it (negative = behind it):</p>" + table(others[["method", *_COLS]],
                                                                  table_id=f"partial-best-{kind}")
                         if len(others) else "<p>No comparison with the best: too few data sets.</p>")
            rank = _rank_text(method, comp)
            html = lead + text + (f"<p>{esc(rank)}</p>" if rank else "")
            blocks[kind] = {"html": blocks.get(kind, {}).get("html", "") + html}
            mine_all.append(f"<h2>{esc(kind)}</h2>" + html)
        blocks[("method", method)] = (f"<p class=\"banner\">A partial run: {esc(method)} ran {esc(outside[method])}. "
                                      f"It is compared with k-means and the best over the data sets it ran; the "
                                      f"board's ranks leave it out.</p>" + "".join(mine_all))
    return blocks


def partial_section(frames: dict, board: pd.DataFrame, outside: dict, kind: str, margin: float, alpha: float,
                    md_frame) -> tuple[list, pd.DataFrame]:
    """A kind page's blocks for the partial new methods (:func:`partial_page_blocks`: their effect sizes
    over the data sets they ran, by :func:`.effects.headline_effects`) on every headline metric of
    ``frames`` ({metric: long frame, every method}) with a known failure score; ``board``: the board's rows."""
    from ._frame import N_BOOT
    from .effects import FAILURE_SCORE, headline_effects

    frames = {m: _of_kind(f, kind) for m, f in frames.items() if m in FAILURE_SCORE}
    if not frames:
        return [("h", 2, "Partial run"), ("md", f"No effect sizes for {', '.join(f'`{m}`' for m in outside)}: a "
                                                f"measured failure's score is known for {', '.join(sorted(FAILURE_SCORE))} "
                                                f"only; not ranked on the board (a partial run).")], pd.DataFrame()
    return partial_page_blocks(frames, set(_of_kind(board, kind)["method"]), outside, alpha, margin,
                               lambda r, m, mg, a: headline_effects(r, m, margin=mg, alpha=a, n_boot=N_BOOT), md_frame)
