"""A new method ranked against shipped rows (``ccbench report MINE --leaderboard --with SHIPPED``) when it
ran fewer data sets than the board: a partial run, placed against the board instead of joining it.

Why: the rank over data sets (:func:`.ranks.rank_over_data_sets`) averages over the data sets where every
ranked method has a value. A method run on 6 of 24 data sets made every shipped method's rank one over
those 6 (scap 11.54 -> 7.83 on pairs) while the page still said 24; and a method's rank over 6 data sets,
listed among ranks over 24, reads as a place on the board that nothing measured. So:

- the *board* (every method with shipped rows, and a new method that ran every data set of the kind)
  keeps its numbers, those of the board without the new rows;
- a *partial* new method (every row of it new, and some data set of a kind that the board has it did not
  run) gets the headline's numbers (:func:`.effects.headline_effects`: the paired difference in the
  metric per data set against k-means and against the best, with its data-set bootstrap interval,
  win/loss counts, Wilcoxon-Holm, the Bayesian signed-rank posterior and the leave-one-out verdict)
  computed over the data sets it ran, with every board method in the family, and says over how many;
- every page says the run is partial (the banner of :func:`.site.write_site`).

The "best" of a partial comparison is the best over those data sets (the board's best over all of them
may not be it there): the page names both.
"""

from __future__ import annotations

import pandas as pd

from ...running.results import KEY
from ._frame import KINDS, _cells, _of_kind, attempted_cells, cell_means, main_methods
from ._site_html import esc, interval_svg, slug, table
from .ranks import dataset_blocks, rank_over_data_sets

__all__ = ["new_methods", "placed_apart", "partial_blocks"]


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


def _rank_among(rows: pd.DataFrame, metric: str) -> pd.Series:
    """Every ranked method's average rank over the data sets of ``rows`` (as the board ranks: per-cell
    ranks, failures last, averaged per data set, ranked per data set, averaged)."""
    cells = _cells(rows)
    means, attempted = cell_means(cells), attempted_cells(cells)
    main = [m for m in main_methods(cells) if m in means.columns]
    return rank_over_data_sets(dataset_blocks(means[main], metric, attempted[main])).sort_values()


def partial_blocks(frame: pd.DataFrame, board: pd.DataFrame, outside: dict, metric: str, margin: float,
                   alpha: float, effects) -> dict:
    """The site's blocks for the partial new methods: ``{kind: {"html": ...}}`` for the kind pages and
    ``{("method", name): html}`` for the method pages. ``effects``: the headline function
    (:func:`.site._effects`), called on the kind's rows of the data sets the method ran (the board's
    methods and this one)."""
    from ..html import _inline

    blocks: dict = {}
    for method in outside:
        mine_all = []
        for kind in KINDS:
            rows = _of_kind(frame, kind)
            sets = sorted(set(_cells(rows[rows["method"] == method])["dataset"]))
            n_board = board.loc[~board["unconstrained"] & (board["kind"] == kind), "dataset"].nunique()
            if not sets or not n_board:
                continue
            here = rows[rows["dataset"].isin(sets) & (rows["method"].isin(set(board["method"])) | (rows["method"] == method))]
            result = effects(here, metric, margin, alpha)
            eff = result["effects"]
            head = eff[(eff["convention"] == "missing") & (eff["subset"] == "all")]
            own = head[(head["method"] == method) & (head["method"] != head["reference_name"])]
            best = head.loc[head["reference"] == "best", "reference_name"]
            best_name = str(best.iloc[0]) if len(best) else ""
            ranks = _rank_among(here, metric)
            place = ranks.index.get_loc(method) + 1 if method in ranks.index else None
            cols = ["reference_name", "n_sets", "mean_diff", "ci_low", "ci_high", "wins", "ties", "losses", "p_holm",
                    "p_ahead", "p_rope", "p_behind", "verdict", "loo_flips", "loo_n"]
            lead = (f"<h2 id=\"partial-{esc(slug('m', method))}\">{esc(method)}: a partial run, over {len(sets)} of "
                    f"{n_board} data sets</h2><p><b>{esc(method)}</b> ran {len(sets)} of the board's {n_board} data "
                    f"sets of this kind ({esc(', '.join(sets))}). It is not ranked on the board above (the board's "
                    f"numbers are over all {n_board} data sets, without it); here are the same effect sizes as the "
                    f"board's, over its {len(sets)} data sets only, with every board method in the Holm family "
                    f"there. The best over these {len(sets)} data sets is <code>{esc(best_name)}</code>.</p>")
            if own.empty:  # the method is the best there: the others against it say by how much
                others = head[(head["reference"] == "best") & (head["method"] != method)]
                text = (f"<p>Over these {len(sets)} data sets {esc(method)} is the best; every board method against "
                        f"it (negative = behind it):</p>" + table(others[["method", *cols]], table_id=f"partial-{kind}")
                        if len(others) else "<p>No comparison: too few data sets.</p>")
            else:
                text = (interval_svg(own.set_index("reference_name"), f"{method} against k-means and the best over "
                                     f"its {len(sets)} data sets ({kind})") + table(own[cols], table_id=f"partial-{kind}"))
            rank_text = (f"<p>Its average rank over those {len(sets)} data sets, among the {len(ranks)} methods run "
                         f"there: {ranks[method]:.2f} ({place} of {len(ranks)}). Not comparable with the board's "
                         f"ranks over {n_board} data sets.</p>" if place else "")
            said = "".join(f"<p>{_inline(str(t))}</p>" for t in (result.get("text") or []) if method in str(t))
            html = lead + text + rank_text + said
            blocks[kind] = {"html": blocks.get(kind, {}).get("html", "") + html}
            mine_all.append(f"<h2>{esc(kind)}</h2>" + html)
        blocks[("method", method)] = (f"<p class=\"banner\">A partial run: {esc(method)} ran {esc(outside[method])}. "
                                      f"It is compared with k-means and the best over the data sets it ran; the "
                                      f"board's ranks leave it out.</p>" + "".join(mine_all))
    return blocks
