"""Ranks over cells, win/tie/loss between every two methods, and the cells where nothing beats a method.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._format import fmt
from ..stats import (
    _holm_floor,
    _wilcoxon,
    decide,
    holm,
    wilcoxon_min_p,
)
from ._frame import CELL, _worst_filled, completed, ranked_metric

__all__ = ["rank_table", "win_tie_loss_cells", "unbeaten", "ranks_by_condition", "dataset_blocks",
           "tuned_vs_default", "k_free_vs_given", "kept_default"]


def rank_table(means: pd.DataFrame, metric: str, attempted: pd.DataFrame | None = None,
               unmeasured: pd.DataFrame | None = None) -> pd.DataFrame:
    """Average ranks, per method (1 = best; ties share the average rank):

    ``rank_completed`` (a): per cell, ranks among the methods that completed it, averaged over the
    cells the method completed (``cells_completed``); ``rank_failed_last`` (b): per cell over every
    method, a cell not completed by a *measured* failure (timeout, error, infeasible:
    :data:`~._frame.MEASURED_FAILURES`) ranked last (tied with the other failures), a cell whose
    failure is no measurement (refused by a prediction, skipped: ``unmeasured``,
    :func:`~._frame.unmeasured_cells`) left out, averaged over the ``cells`` it is ranked in (the
    ``missing`` convention, issue 50 item 3); ``rank_all_failures_last``: the same with every cell not
    completed ranked last (the ``last`` convention, the pages' (b) before issue 50), over ``cells_all``.
    Without ``unmeasured`` the two are equal. With ``attempted`` (:func:`attempted_cells`), both count
    only the cells where the method has rows (a sweep that runs a variant on some cells only). Sorted
    by (b).
    """
    metric = ranked_metric(metric)
    ascending = metric.sign < 0
    a = means.rank(axis=1, ascending=ascending, method="average")
    worst = _worst_filled(means, metric, attempted, unmeasured)
    every = _worst_filled(means, metric, attempted)
    b = worst.rank(axis=1, ascending=ascending, method="average")
    out = pd.DataFrame({"rank_completed": a.mean(), "cells_completed": means.notna().sum(),
                        "rank_failed_last": b.mean(), "cells": worst.notna().sum(),
                        "rank_all_failures_last": every.rank(axis=1, ascending=ascending, method="average").mean(),
                        "cells_all": every.notna().sum()})
    out.index.name = "method"
    return out.sort_values(["rank_failed_last", "rank_completed"])


def _paired(frame: pd.DataFrame) -> pd.DataFrame:
    """Index (cell, trial), columns methods: the metric of completed cells only."""
    not_ok = (frame["status"] != "ok").groupby([frame[c] for c in [*CELL, "method"]]).transform("any")
    return frame[~not_ok.astype(bool)].pivot_table(index=[*CELL, "trial"], columns="method", values="value",
                                                   aggfunc="first")


def win_tie_loss_cells(frame: pd.DataFrame, metric: str, margin: float = 0.03, alpha: float = 0.05) -> dict:
    """Win/tie/loss counts of every ordered pair of methods over the cells both completed.

    A cell is a *win* for A over B by the one verdict rule (:func:`ccbench.reporting.stats.decide`):
    the two-sided Wilcoxon signed-rank test on the paired differences gives p <= ``alpha`` (one test
    per pair and cell: each matrix entry is about one pair, a family of one) AND A's mean over the
    paired trials is better by at least ``margin``; a *loss* when the same holds for B; a *tie*
    otherwise, including a cell with too few paired trials for the test to reach ``alpha``
    (:func:`ccbench.min_pairs`: 6), where no verdict is given. The rule is
    symmetric, so wins(A, B) = losses(B, A). Returns ``{"wins", "ties", "losses"}`` square
    DataFrames (row method against column method), ``"table"`` with ``w/t/l`` text, and ``"beaten_by"``:
    index cells, columns methods, how many methods win over the method in that cell (NaN where it did
    not complete the cell; 0 = unbeaten there).
    """
    sign = ranked_metric(metric).sign
    wide = _paired(frame)
    methods = sorted(wide.columns)
    wide = wide[methods]
    first, second = np.triu_indices(len(methods), k=1)
    wins, ties = np.zeros((len(methods),) * 2, dtype=int), np.zeros((len(methods),) * 2, dtype=int)
    beaten_by = {}
    for cell, rows in wide.groupby(level=CELL, sort=False):
        values = rows.to_numpy(float)
        d = sign * (values[:, first] - values[:, second])  # trials x pairs, NaN where either is missing
        n = np.isfinite(d).sum(axis=0)
        mean = np.nansum(d, axis=0) / np.maximum(n, 1)
        decided = (n > 0) & (np.abs(mean) >= margin)
        for j in np.flatnonzero(decided):  # the test only where the margin is met
            both = np.isfinite(d[:, j])
            nonzero = int((d[both, j] != 0).sum())
            p = _wilcoxon(d[both, j], np.zeros(both.sum()))[1]
            decided[j] = decide(mean[j], p, wilcoxon_min_p(nonzero), margin, alpha) in ("A", "B")
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


def ranks_by_condition(means: pd.DataFrame, metric: str, attempted: pd.DataFrame | None = None,
                       unmeasured: pd.DataFrame | None = None) -> pd.DataFrame:
    """Average rank (b) per method within each (budget, noise): where a method's standing moves with
    the supervision budget or the noise. Columns ``budget / noise``, rows methods. ``unmeasured``: as
    :func:`rank_table` (refused and skipped cells left out)."""
    metric = ranked_metric(metric)
    ranks = _worst_filled(means, metric, attempted, unmeasured).rank(axis=1, ascending=metric.sign < 0, method="average")
    keys = ranks.index.to_frame(index=False)
    label = keys["budget"].map(fmt) + " / " + keys["noise"].astype(str)
    order = keys.assign(label=label).sort_values(["noise", "budget"])["label"].unique()
    return ranks.set_axis(label.to_numpy()).groupby(level=0).mean().T.reindex(columns=order)


def dataset_blocks(means: pd.DataFrame, metric: str, attempted: pd.DataFrame | None = None,
                   unmeasured: pd.DataFrame | None = None) -> pd.DataFrame:
    """Index data sets, columns methods: a method's average rank (b) (:func:`rank_table`'s per-cell ranks,
    failures last) over the data set's cells, oriented as the metric (higher is better for a higher-is-
    better metric: the negated rank), so a data set is one Friedman block: the cells of one data set
    (budgets, noise, settings) share its points and are not independent. NaN where a method has no
    ranked cell in the data set. With ``unmeasured`` (:func:`~._frame.unmeasured_cells`), the default
    ``missing`` convention of :func:`rank_table`'s (b): a refused or skipped cell is not ranked, so a
    method refused on every cell of a data set has no block there (the CD then leaves the data set out)."""
    metric = ranked_metric(metric)
    ranks = _worst_filled(means, metric, attempted, unmeasured).rank(axis=1, ascending=metric.sign < 0, method="average")
    per_set = ranks.groupby(level="dataset").mean()
    return -metric.sign * per_set


def rank_over_data_sets(blocks: pd.DataFrame) -> pd.Series:
    """A method's average rank over data sets, as the CD diagram ranks it: its blocks
    (:func:`dataset_blocks`) ranked within each data set (1 = best), averaged over the data sets where
    every method has one. Not the mean of the blocks themselves: a data set is one Friedman block, so
    its methods are ranked 1..k in it whatever its number of cells."""
    return blocks.dropna().rank(axis=1, ascending=False, method="average").mean()


def kept_default(frame: pd.DataFrame) -> pd.Series:
    """Per tuned row (index of ``frame``): True when the tuner chose the method's defaults (``tuned_params``
    equal to the estimator's ``__init__`` defaults on every tuned key, ``"k"`` for ``n_clusters``: the k
    the trial was given; ``{}``, nothing tuned, counts as kept), NaN where the row carries no ``tuned_params`` or the method is not installed here."""
    import json

    from ...running import protocol
    from ... import registry

    out = pd.Series(np.nan, index=frame.index, dtype=object)
    if "tuned_params" not in frame:
        return out
    defaults = {}
    for idx, name, text in zip(frame.index, frame["method_name"], frame["tuned_params"]):
        if not isinstance(text, str) or not text:
            continue
        if name not in defaults:
            try:
                defaults[name] = protocol.estimator_defaults(registry.get_method_spec(name))
            except Exception:  # noqa: BLE001 - a report must open without the method's package
                defaults[name] = None
        if defaults[name] is None:
            continue
        chosen = json.loads(text)
        # a k grid is relative to the k the trial was given: "k" is its default
        out[idx] = all(_same_value(v, "k" if k == "n_clusters" else defaults[name].get(k)) for k, v in chosen.items())
    return out


def _same_value(a, b) -> bool:
    try:
        return bool(np.isclose(float(a), float(b)))
    except (TypeError, ValueError):
        return a == b


def tuned_vs_default(frame: pd.DataFrame, metric: str, margin: float = 0.03, alpha: float = 0.05,
                     seed: int = 0) -> pd.DataFrame:
    """Each tuned variant (``name+tuner``) against its own default (``name``), paired per cell over the
    cells both completed: ``cells``, ``mean_diff`` (variant minus default in the metric's direction,
    positive = tuning helped, averaged over the cells' means) with a bootstrap interval over the cells
    (``ci_low``, ``ci_high``), ``wins``/``ties``/``losses`` per cell by :func:`win_tie_loss_cells`' rule
    (paired trials of the cell, Wilcoxon p <= ``alpha`` and a mean difference of at least ``margin``),
    ``p``, ``p_holm``, ``verdict`` (:func:`_variant_verdicts`: the multiplicity correction over the
    table's variants), ``tuned_trials`` and ``kept_default`` (share of the variant's ok trials where the tuner chose the
    defaults, :func:`kept_default`; NaN when the rows carry no ``tuned_params``)."""
    return _variant_vs_default(frame, "tuned", "default_method", ranked_metric(metric), margin, alpha, seed)


def k_free_vs_given(frame: pd.DataFrame, metric: str, margin: float = 0.03, alpha: float = 0.05,
                    seed: int = 0) -> pd.DataFrame:
    """The k-free track: each k-free run (``ap[k-free]``) against the same method given the true k
    (``ap``), paired per cell as :func:`tuned_vs_default` (``mean_diff`` positive = finding k itself did
    better than being given it); ``ok_trials`` counts the k-free run's ok trials (nothing is tuned: no
    ``kept_default``)."""
    table = _variant_vs_default(frame, "k_free", "k_free_of", ranked_metric(metric), margin, alpha, seed)
    return table.drop(columns="kept_default").rename(columns={"tuned_trials": "ok_trials"})


#: The ``verdict`` words of :func:`_variant_verdicts`.
HELPED, HURT, NO_DIFFERENCE, TOO_FEW = "helped", "hurt", "no supported difference", "too few cells"


def _variant_verdicts(table: pd.DataFrame, margin: float, alpha: float) -> pd.DataFrame:
    """``p_holm`` and ``verdict`` of each variant of ``table``, corrected for the family of its variants.

    The family is the table's variants (one page's section 1b, or its section 1c), every one with at
    least one cell both completed (a raw ``p``): m tests. A variant's ``p`` is the two-sided Wilcoxon
    signed-rank test of its per-cell differences from its default (the cells as paired values; the
    bootstrap interval beside it is per variant and uncorrected, a description, not the verdict);
    ``p_holm`` is Holm's step-down adjustment over the m tests (:func:`~ccbench.reporting.stats.holm`).
    ``verdict`` by the one rule of the pages (:func:`~ccbench.reporting.stats.decide`): ``helped``
    (``hurt``) when ``p_holm`` <= ``alpha`` AND ``mean_diff`` >= ``margin`` (<= -``margin``); ``too few
    cells`` when no sample of its size could reach ``alpha`` after the correction (its Holm floor,
    :func:`~ccbench.reporting.stats._holm_floor`, is above it); else ``no supported difference``. Why
    Holm on a test and not Bonferroni-widened bootstrap intervals: at 1 - 0.05 / 29 the percentile
    interval of 2,000 resamples rests on its one or two most extreme resamples."""
    p = table["p"].to_numpy(float)
    adjusted = holm(p)
    tested = np.isfinite(p)
    floors = np.full(p.shape, np.nan)
    floors[tested] = _holm_floor(table.loc[tested, "nonzero"].to_numpy(int))
    words = {"A": HELPED, "B": HURT, "tie": NO_DIFFERENCE, "too few": TOO_FEW}
    verdict = [TOO_FEW if not ok else words[decide(d, ph, floor, margin, alpha)]
               for ok, d, ph, floor in zip(tested, table["mean_diff"].to_numpy(float), adjusted, floors)]
    return table.assign(p_holm=adjusted, verdict=verdict)


def _variant_vs_default(frame, flag, default_column, metric, margin, alpha, seed) -> pd.DataFrame:
    from .gains import bootstrap_ci

    cols = ["variant", "default", "cells", "mean_diff", "ci_low", "ci_high", "p", "p_holm", "verdict", "wins",
            "ties", "losses", "tuned_trials", "kept_default"]
    if flag not in frame or not frame[flag].any():
        return pd.DataFrame(columns=cols)
    sign = metric.sign
    done = completed(frame)
    means = frame.groupby([*CELL, "method"])["value"].mean().unstack("method")
    out = []
    pairs = frame[frame[flag]].drop_duplicates("method")[["method", default_column]]
    for variant, default in pairs.itertuples(index=False):
        if default not in done.columns:
            continue
        both = done[variant].eq(True) & done[default].eq(True)
        d = sign * (means.loc[both[both].index, variant] - means.loc[both[both].index, default])
        wtl = win_tie_loss_cells(frame[frame["method"].isin([variant, default])], metric, margin, alpha)
        rows = frame[(frame["method"] == variant) & (frame["status"] == "ok")]
        kept = kept_default(rows).dropna() if flag == "tuned" else pd.Series(dtype=float)
        lo, hi = bootstrap_ci(d.to_numpy(float), seed=seed)
        # a variant (or default) with no ok trial anywhere (every trial refused) is in no matrix: 0 cells
        counted = {k: int(wtl[k].loc[variant, default]) if variant in wtl[k].index and default in wtl[k].columns
                   else 0 for k in ("wins", "ties", "losses")}
        diffs = d.to_numpy(float)
        out.append(dict(variant=variant, default=default, cells=int(both.sum()),
                        mean_diff=float(d.mean()) if len(d) else np.nan, ci_low=lo, ci_high=hi,
                        p=_wilcoxon(diffs, np.zeros_like(diffs))[1] if len(d) else np.nan,
                        nonzero=int((diffs != 0).sum()), **counted, tuned_trials=len(rows),
                        kept_default=float(kept.astype(bool).mean()) if len(kept) else np.nan))
    table = pd.DataFrame(out, columns=[*cols, "nonzero"]).sort_values("variant").reset_index(drop=True)
    if table.empty:
        return table[cols]
    return _variant_verdicts(table, margin, alpha)[cols]
