"""Ranks over cells, win/tie/loss between every two methods, and the cells where nothing beats a method.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._format import fmt
from ..stats import (
    _sign,
    _wilcoxon,
    min_pairs,
)
from ._frame import CELL, _worst_filled

__all__ = ["rank_table", "win_tie_loss_cells", "unbeaten", "ranks_by_condition"]


def rank_table(means: pd.DataFrame, metric: str, attempted: pd.DataFrame | None = None) -> pd.DataFrame:
    """Average ranks both ways, per method (1 = best; ties share the average rank):

    ``rank_completed`` (a): per cell, ranks among the methods that completed it, averaged over the
    cells the method completed (``cells_completed``); ``rank_failed_last`` (b): per cell over every
    method, a cell not completed ranked last (tied with the other failures), averaged over all
    ``cells``. With ``attempted`` (:func:`attempted_cells`), (b) counts only the cells where the
    method has rows (a sweep that runs a variant on some cells only). Sorted by (b).
    """
    ascending = _sign(metric) < 0
    a = means.rank(axis=1, ascending=ascending, method="average")
    worst = _worst_filled(means, metric, attempted)
    b = worst.rank(axis=1, ascending=ascending, method="average")
    out = pd.DataFrame({"rank_completed": a.mean(), "cells_completed": means.notna().sum(),
                        "rank_failed_last": b.mean(), "cells": worst.notna().sum()})
    out.index.name = "method"
    return out.sort_values(["rank_failed_last", "rank_completed"])


def _paired(frame: pd.DataFrame) -> pd.DataFrame:
    """Index (cell, trial), columns methods: the metric of completed cells only."""
    not_ok = (frame["status"] != "ok").groupby([frame[c] for c in [*CELL, "method"]]).transform("any")
    return frame[~not_ok.astype(bool)].pivot_table(index=[*CELL, "trial"], columns="method", values="value",
                                                   aggfunc="first")


def win_tie_loss_cells(frame: pd.DataFrame, metric: str, margin: float = 0.03, alpha: float = 0.05) -> dict:
    """Win/tie/loss counts of every ordered pair of methods over the cells both completed.

    A cell is a *win* for A over B when A's mean over the paired trials is better by at least
    ``margin`` and, where the cell has enough trials for a test to reach ``alpha``
    (:func:`ccbench.min_pairs`: 6), the two-sided Wilcoxon signed-rank test on the paired
    differences says p < ``alpha`` (one test per pair and cell, not corrected: each matrix entry
    is about one pair); a *loss* when the same holds for B; a *tie* otherwise. The rule is
    symmetric, so wins(A, B) = losses(B, A). Returns ``{"wins", "ties", "losses"}`` square
    DataFrames (row method against column method), ``"table"`` with ``w/t/l`` text, and ``"beaten_by"``:
    index cells, columns methods, how many methods win over the method in that cell (NaN where it did
    not complete the cell; 0 = unbeaten there).
    """
    sign = _sign(metric)
    wide = _paired(frame)
    methods = sorted(wide.columns)
    wide = wide[methods]
    first, second = np.triu_indices(len(methods), k=1)
    wins, ties = np.zeros((len(methods),) * 2, dtype=int), np.zeros((len(methods),) * 2, dtype=int)
    need = min_pairs(alpha)
    beaten_by = {}
    for cell, rows in wide.groupby(level=CELL, sort=False):
        values = rows.to_numpy(float)
        d = sign * (values[:, first] - values[:, second])  # trials x pairs, NaN where either is missing
        n = np.isfinite(d).sum(axis=0)
        mean = np.nansum(d, axis=0) / np.maximum(n, 1)
        decided = (n > 0) & (np.abs(mean) >= margin)
        for j in np.flatnonzero(decided & (n >= need)):  # the test only where the margin is met
            both = np.isfinite(d[:, j])
            decided[j] = _wilcoxon(d[both, j], np.zeros(both.sum()))[1] < alpha
        a_wins, b_wins = decided & (mean > 0), decided & (mean < 0)
        np.add.at(wins, (first[a_wins], second[a_wins]), 1)
        np.add.at(wins, (second[b_wins], first[b_wins]), 1)
        tied = (n > 0) & ~decided
        np.add.at(ties, (first[tied], second[tied]), 1)
        np.add.at(ties, (second[tied], first[tied]), 1)
        beaten = np.bincount(second[a_wins], minlength=len(methods)) + np.bincount(first[b_wins], minlength=len(methods))
        beaten_by[cell] = np.where(np.isfinite(values).any(axis=0), beaten, np.nan)
    counts = {k: pd.DataFrame(v, index=methods, columns=methods)
              for k, v in (("wins", wins), ("ties", ties), ("losses", wins.T.copy()))}
    w, t, lo = (counts[k].to_numpy() for k in ("wins", "ties", "losses"))
    text = np.char.add(np.char.add(np.char.add(np.char.add(w.astype(str), "/"), t.astype(str)), "/"), lo.astype(str))
    text = text.astype(object)
    np.fill_diagonal(text, "")
    table = pd.DataFrame(text, index=pd.Index(methods, name="method"), columns=methods)
    beaten = pd.DataFrame.from_dict(beaten_by, orient="index", columns=methods)
    if len(beaten):
        beaten.index = pd.MultiIndex.from_tuples(beaten.index, names=CELL)
    return {**counts, "table": table, "beaten_by": beaten}


def unbeaten(beaten_by: pd.DataFrame) -> pd.DataFrame:
    """Per method: ``cells`` it completed, ``unbeaten`` (cells where no method wins over it, by the rule
    of :func:`win_tie_loss_cells`) and their share; per data set as ``unbeaten_sets`` (data sets where
    it is unbeaten in every cell it completed)."""
    if beaten_by.empty:
        return pd.DataFrame(columns=["cells", "unbeaten", "share_unbeaten", "unbeaten_sets"])
    done = beaten_by.notna()
    zero = beaten_by.eq(0) & done
    per_set = zero.groupby(level="dataset").all() & done.groupby(level="dataset").any()
    out = pd.DataFrame({"cells": done.sum(), "unbeaten": zero.sum()})
    out["share_unbeaten"] = out["unbeaten"] / out["cells"].where(out["cells"] > 0)
    out["unbeaten_sets"] = [", ".join(per_set.index[per_set[m]]) for m in out.index]
    out.index.name = "method"
    return out.sort_values(["share_unbeaten", "unbeaten"], ascending=False)


def _cd_selection(attempted: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """The methods and cells of the CD diagram: the methods run on more than half of the cells (a variant
    the experiment runs on some cells only, a tuned one, is left out), and the cells where every one of
    them was run (an unfinished data set, where only some jobs are done, is left out)."""
    counts = attempted.sum(axis=0)
    core = counts > 0.5 * counts.max()
    return core, attempted.loc[:, core].all(axis=1)


def ranks_by_condition(means: pd.DataFrame, metric: str, attempted: pd.DataFrame | None = None) -> pd.DataFrame:
    """Average rank (b) per method within each (budget, noise): where a method's standing moves with
    the supervision budget or the noise. Columns ``budget / noise``, rows methods."""
    ranks = _worst_filled(means, metric, attempted).rank(axis=1, ascending=_sign(metric) < 0, method="average")
    keys = ranks.index.to_frame(index=False)
    label = keys["budget"].map(fmt) + " / " + keys["noise"].astype(str)
    order = keys.assign(label=label).sort_values(["noise", "budget"])["label"].unique()
    return ranks.set_axis(label.to_numpy()).groupby(level=0).mean().T.reindex(columns=order)
