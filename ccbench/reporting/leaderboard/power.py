"""Power of the headline test (issue 51, deliverable 4): how many data sets, base seeds and trials per
cell it takes to separate two methods a given ARI apart, estimated from a board's own rows.

**The model** of a paired trial difference between two methods A and B (A's score minus B's, the same
trial of the same cell: the trials are paired across methods, ``trial_seed`` leaves the method out)::

    d[s, c, r, t] = mu + a[s] + b[s, c] + g[s, c, r] + e[s, c, r, t]

with ``s`` the data set, ``c`` its supervision cell (budget x noise x setting), ``r`` the base seed, ``t``
the trial; ``a``, ``b``, ``g``, ``e`` independent, mean 0, standard deviations ``sd_set`` (how far the
*true* per-data-set difference varies over data sets: no number of trials removes it), ``sd_cell`` (cell
to cell within a data set), ``sd_seed`` (what a base seed adds to a cell beyond its trials) and
``sd_trial`` (trial to trial within a cell and seed). The board's per-data-set difference averages the
cells' scores (each the mean over its seeds' trials: the cell score) and then the cells
(:func:`~.effects.cell_scores`, ``_set_means``), so with ``C`` cells, ``S`` seeds and ``T`` trials::

    D[s] = mu + a[s] + mean_c b + mean_cr g + mean_crt e
    Var(D[s]) = sd_set^2 + sd_cell^2 / C + sd_seed^2 / (C S) + sd_trial^2 / (C S T)

**The estimator** (:func:`variance_components`, method of moments on the paired differences; every
variance with ``ddof=1``; a component whose estimate is negative is reported as 0):

- ``sd_trial^2``: the pooled within-(cell, seed) variance of ``d`` over the trials (mean of the groups'
  variances ``v[s, c, r]``);
- ``sd_seed^2``: over the cells with two seeds, ``mean(delta^2) / 2 - mean((v0 + v1) / 2) / T``, ``delta``
  the difference of the two seeds' cell means (``a`` and ``b`` cancel in it);
- ``sd_cell^2``: per data set the variance over its seed-0 cell means, less its cells' mean ``v / T``,
  averaged over the data sets with 2 cells or more, less ``sd_seed^2`` (one seed confounds the two);
- ``sd_set^2``: the variance over data sets of the seed-0 ``D[s]``, less the mean over data sets of the
  noise of ``D[s]`` (``(sd_cell^2 + sd_seed^2) / C_s + mean_c(v) / (C_s T)``).

**The test** (:func:`simulate_power`): per replicate, ``N`` data sets' ``D[s]`` drawn from the model
(``normal``: ``a`` normal; ``resampled``: ``a`` drawn from a pair's observed per-data-set differences,
centred and rescaled to ``sd_set``, each drawn data set carrying its own trial spread: heavier tails,
unequal noise), ``mu`` the true effect; then the board's two-sided Wilcoxon signed-rank p-value over the
data sets (:func:`signed_rank_p`: what :func:`~._effect_stats.signed_rank` computes, vectorised over
replicates) compared with each of ``alphas`` (Holm over a family of ``m`` methods rejects a comparison at
``alpha / m`` at its first step and at ``alpha`` at its last: the two bounds of Holm's threshold), and
whether the 95 % percentile bootstrap interval of the mean over data sets excludes 0
(:func:`bootstrap_excludes_zero`: :func:`~.gains.bootstrap_ci`'s interval). Power: the share of
replicates that reject.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from ._effect_stats import _EXACT_MAX_N, _exact_pmf
from ._frame import CELL, NOT_MEASURED, _cells, _of_kind, main_methods
from .effects import FAILURE_SCORE, _best

__all__ = ["COMPONENTS", "trial_scores", "paired_differences", "variance_components", "pair_components",
           "pooled_components", "set_variance", "sets_for_power", "wilcoxon_power", "signed_rank_p",
           "bootstrap_excludes_zero", "simulate_power", "power_grid"]

#: The standard deviations of the model (module docstring), from the widest to the narrowest.
COMPONENTS = ("sd_set", "sd_cell", "sd_seed", "sd_trial")

_TRIAL_INDEX = [*CELL, "seed", "trial"]


def trial_scores(rows: pd.DataFrame, metric: str = "ari") -> pd.DataFrame:
    """Index (cell, seed, trial), columns methods: each trial's score as the headline counts it under the
    ``missing`` convention (:func:`~.effects.cell_scores`): the metric when ``ok``, NaN for a trial that is
    no measurement, the one-cluster value for a measured failure; a (cell, seed, method) with one missing
    trial is missing as a whole. ``rows``: a long frame's ranking rows (every seed kept)."""
    fail = FAILURE_SCORE[metric]
    score = rows["value"].where(rows["status"].eq("ok"), np.where(rows["status"].isin(NOT_MEASURED), np.nan, fail))
    keys = [*CELL, "seed", "method"]
    whole = score.notna().groupby([rows[k] for k in keys]).transform("all")
    table = rows.assign(score=score.where(whole)).set_index([*_TRIAL_INDEX, "method"])["score"]
    return table.unstack("method")


def paired_differences(scores: pd.DataFrame, a: str, b: str) -> pd.Series:
    """The paired trial differences ``a - b`` (index: cell, seed, trial), over the trials both have."""
    return (scores[a] - scores[b]).dropna()


def _cell_key(index: pd.MultiIndex) -> list:
    return [index.get_level_values(k) for k in CELL]


def variance_components(d: pd.Series) -> dict:
    """The model's components (module docstring) from paired trial differences ``d`` indexed by
    ``dataset``, the other :data:`~._frame.CELL` levels, ``seed`` and ``trial``. Returns ``mean`` (the
    seed-0 mean over data sets of ``D[s]``, the board's effect), ``sd_*`` (:data:`COMPONENTS`), ``n_sets``,
    ``cells`` (mean cells per data set), ``trials`` (mean trials per cell and seed) and ``set_means`` (the
    seed-0 ``D[s]``, a Series by data set) and ``set_sd_trial`` (per data set, its pooled trial spread)."""
    if d.empty:
        raise ValueError("no paired trial in common: the two methods share no complete cell")
    idx = d.index
    seed = idx.get_level_values("seed")
    group = [*_cell_key(idx), seed]
    grouped = d.groupby(group)
    m, v, t = grouped.mean(), grouped.var(ddof=1), grouped.size()
    if (t < 2).all():
        raise ValueError("every (cell, seed) holds one trial: the trial spread needs two or more per cell")
    v = v.where(t >= 2)
    trials = float(t.mean())
    var_trial = float(v.mean())
    base = m.index.get_level_values("seed").min()
    # two seeds of one cell (the base seed and the next): their means differ by the seed effect and the trials
    wide_m, wide_v = m.unstack("seed"), v.unstack("seed")
    noise_t = (v / t).unstack("seed")
    var_seed = 0.0
    if wide_m.shape[1] >= 2:
        other = [s for s in wide_m.columns if s != base][0]
        both = wide_m[[base, other]].dropna().index
        if len(both):
            delta = wide_m.loc[both, base] - wide_m.loc[both, other]
            var_seed = float((delta ** 2).mean() / 2 - noise_t.loc[both, [base, other]].mean(axis=1).mean())
    var_seed = max(var_seed, 0.0)
    m0 = wide_m[base].dropna()
    per_set = pd.DataFrame({"m": m0.to_numpy(), "noise": noise_t[base].reindex(m0.index).to_numpy(),
                            "v": wide_v[base].reindex(m0.index).to_numpy()}, index=m0.index.get_level_values("dataset"))
    g = per_set.groupby(level=0)
    cells = g.size()
    within = (g["m"].var(ddof=1) - g["noise"].mean())[cells >= 2]
    var_cell = max(float(within.mean()) - var_seed, 0.0) if len(within) else 0.0
    set_means = g["m"].mean()
    noise_of_set = (var_cell + var_seed) / cells + g["noise"].mean() / cells
    var_set = float(set_means.var(ddof=1) - noise_of_set.mean()) if len(set_means) >= 2 else 0.0
    return {"mean": float(set_means.mean()), "sd_set": np.sqrt(max(var_set, 0.0)), "sd_cell": np.sqrt(var_cell),
            "sd_seed": np.sqrt(var_seed), "sd_trial": np.sqrt(var_trial), "n_sets": int(set_means.size),
            "cells": float(cells.mean()), "trials": trials, "set_means": set_means,
            "set_sd_trial": np.sqrt(g["v"].mean())}


def _headline_order(scores: pd.DataFrame) -> tuple[list, str]:
    """The methods by their seed-0 mean score over the data sets each has (cells, then data sets), best
    first, and the kind's best as the headline names it (:func:`~.effects._best`: the highest mean among
    the methods with a value on every data set)."""
    seed0 = scores[scores.index.get_level_values("seed") == scores.index.get_level_values("seed").min()]
    per_set = seed0.groupby(level=CELL).mean().groupby(level="dataset").mean()
    best, _ = _best(per_set)
    return list(per_set.mean().sort_values(ascending=False, kind="stable").index), best


def _pairs(frame: pd.DataFrame, kind: str, metric: str, reference: str):
    """Yield ``(pair, a, b, components)`` for :func:`pair_components`."""
    rows = _cells(_of_kind(frame, kind))
    rows = rows[rows["method"].isin(main_methods(rows))]
    scores = trial_scores(rows, metric)
    order, best = _headline_order(scores)
    pairs = [("neighbour", a, b) for a, b in zip(order[:-1], order[1:])]
    pairs += [("kmeans", m, reference) for m in order if m != reference and reference in order]
    pairs += [("best", best, m) for m in order if m != best]
    for which, a, b in pairs:  # a few dozen pairs, each vectorised over its rows
        d = paired_differences(scores, a, b)
        if not d.empty:
            yield which, a, b, variance_components(d)


def pair_components(frame: pd.DataFrame, kind: str, metric: str = "ari", reference: str = "kmeans",
                    with_sets: bool = False):
    """One row per compared pair of one kind's main methods (every seed): ``pair`` = ``neighbour`` (adjacent
    in the order of mean score over the data sets each has, the better one first), ``kmeans`` (each method
    against ``reference``) or ``best`` (the kind's best against each); ``a``, ``b`` and
    :func:`variance_components`' scalars. ``frame``: a :func:`~._frame.long_frame`. With ``with_sets``,
    also the per-data-set values (``pair``, ``a``, ``b``, ``dataset``, ``D``: the seed-0 ``D[s]``; ``z``:
    ``D`` centred and scaled to sd 1 within its pair; ``rel_sd_trial``: the data set's trial spread over the
    pair's pooled one): what the ``resampled`` model draws from."""
    table, sets = [], []
    for which, a, b, comp in _pairs(frame, kind, metric, reference):
        table.append({"kind": kind, "pair": which, "a": a, "b": b,
                      **{k: v for k, v in comp.items() if not isinstance(v, pd.Series)}})
        D = comp["set_means"]
        sd = D.std(ddof=1)
        rel = comp["set_sd_trial"].reindex(D.index) / comp["sd_trial"] if comp["sd_trial"] > 0 else 1.0
        sets.append(pd.DataFrame({"kind": kind, "pair": which, "a": a, "b": b, "dataset": D.index,
                                  "D": D.to_numpy(), "z": (D - D.mean()).to_numpy() / sd if sd > 0 else 0.0,
                                  "rel_sd_trial": np.asarray(rel, dtype=float)}))
    table = pd.DataFrame(table)
    return (table, pd.concat(sets, ignore_index=True)) if with_sets else table


def pooled_components(pairs: pd.DataFrame, quantile: float = 0.5) -> pd.Series:
    """Each component's ``quantile`` over the pairs (0.5: the median pair; a higher one is pessimistic: each
    component at that quantile, more pessimistic than the quantile of the sum), and the median ``cells``."""
    out = pairs[list(COMPONENTS)].quantile(quantile)
    out["cells"] = float(pairs["cells"].median())
    return out


def set_variance(sd_set: float, sd_cell: float, sd_seed: float, sd_trial: float, cells: float, seeds: int,
                 trials: int) -> float:
    """``Var(D[s])`` of the model (module docstring): what the data sets' mean difference varies by."""
    return (sd_set ** 2 + sd_cell ** 2 / cells + sd_seed ** 2 / (cells * seeds)
            + sd_trial ** 2 / (cells * seeds * trials))


def _ranks(a: np.ndarray) -> np.ndarray:
    """Ranks 1..n along the last axis (continuous draws: no ties)."""
    order = np.argsort(a, axis=-1)
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, a.shape[-1] + 1), axis=-1)
    return ranks


def signed_rank_p(D: np.ndarray) -> np.ndarray:
    """Two-sided Wilcoxon signed-rank p-value of each row of ``D`` (replicates x data sets), as
    :func:`~._effect_stats.signed_rank` gives it for differences with no ties and no zeros: the exact null
    distribution up to 50 data sets, the normal approximation above."""
    D = np.atleast_2d(np.asarray(D, dtype=float))
    n = D.shape[1]
    r_plus = np.where(D > 0, _ranks(np.abs(D)), 0).sum(axis=1)
    if n <= _EXACT_MAX_N:
        cdf = np.cumsum(_exact_pmf(n))
        lower = cdf[r_plus]
        upper = 1.0 - np.r_[0.0, cdf][r_plus]
        return np.minimum(1.0, 2.0 * np.minimum(lower, upper))
    z = (r_plus - n * (n + 1) / 4.0) / np.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
    return 2.0 * norm.sf(np.abs(z))


def bootstrap_excludes_zero(D: np.ndarray, rng: np.random.Generator, n_boot: int = 1000,
                            level: float = 0.95) -> np.ndarray:
    """Per row of ``D``: whether the percentile bootstrap interval of the mean over its data sets
    (:func:`~.gains.bootstrap_ci`) excludes 0. One set of ``n_boot`` resamples serves every replicate (a
    resample is a count per data set: the means are one matrix product)."""
    D = np.atleast_2d(np.asarray(D, dtype=float))
    n = D.shape[1]
    counts = np.zeros((n, n_boot))
    idx = rng.integers(0, n, size=(n_boot, n))
    np.add.at(counts, (idx, np.arange(n_boot)[:, None]), 1.0)
    means = D @ counts / n
    q = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [q, 1.0 - q], axis=1)
    return (lo > 0) | (hi < 0)


def simulate_power(components, n_sets: int, seeds: int, trials: int, effect: float, cells: int, reps: int = 2000,
                   alphas=(0.05,), n_boot: int = 1000, seed: int = 0, residuals=None, set_sd_trial=None) -> dict:
    """Power of the headline test (module docstring) for one design, by simulation over ``reps`` replicates
    (vectorised: one array per level of the model). ``components``: a mapping with :data:`COMPONENTS`.
    ``residuals`` (optional): observed per-data-set differences; when given, ``a[s]`` is drawn from them
    centred and rescaled to ``sd_set`` (the ``resampled`` model), and with ``set_sd_trial`` (the same data
    sets' trial spreads over the pooled one) each drawn data set carries ``sd_trial`` times its own.
    Returns ``{"p<=alpha": power, ..., "ci_excludes_0": power, "sd_D": the simulated spread of D[s]}``."""
    rng = np.random.default_rng(seed)
    sd = {k: float(components[k]) for k in COMPONENTS}
    shape = (reps, n_sets)
    if residuals is None:
        a = rng.normal(0.0, sd["sd_set"], shape)
        sd_t = np.full(shape, sd["sd_trial"])
    else:
        res = np.asarray(residuals, dtype=float)
        centred = res - res.mean()
        scale = sd["sd_set"] / centred.std(ddof=1) if centred.std(ddof=1) > 0 else 0.0
        pick = rng.integers(0, res.size, shape)
        a = centred[pick] * scale
        rel = np.asarray(set_sd_trial, dtype=float)[pick] if set_sd_trial is not None else 1.0
        sd_t = np.broadcast_to(sd["sd_trial"] * rel, shape)
    b = rng.normal(0.0, sd["sd_cell"], (*shape, cells))
    g = rng.normal(0.0, sd["sd_seed"], (*shape, cells, seeds))
    # a cell-seed's mean over its T trials: exactly normal with sd_trial / sqrt(T) for normal trials
    e = rng.normal(0.0, 1.0, (*shape, cells, seeds)) * (sd_t / np.sqrt(trials))[..., None, None]
    cell_scores = b + (g + e).mean(axis=-1)  # the cell: its seeds' trials together
    D = effect + a + cell_scores.mean(axis=-1)  # the data set: its cells' mean
    p = signed_rank_p(D)
    out = {f"p<={alpha:.3g}": float((p <= alpha).mean()) for alpha in alphas}
    out["ci_excludes_0"] = float(bootstrap_excludes_zero(D, rng, n_boot).mean())
    out["sd_D"] = float(D.std(ddof=1, axis=1).mean())
    return out


def power_grid(components, cells: int, n_sets=(24, 40, 60, 71), seeds=(1, 3, 5), trials=(3, 5, 10),
               effects=(0.02, 0.05), reps: int = 2000, alphas=(0.05,), n_boot: int = 1000, seed: int = 0,
               residuals=None, set_sd_trial=None, today=(24, 1, 10)) -> pd.DataFrame:
    """:func:`simulate_power` over every design (``n_sets`` x ``seeds`` x ``trials``) and effect, with the
    same random numbers for every design (common random numbers: designs differ by the design only), and
    ``cost``: trials x seeds x data sets relative to ``today`` (N, S, T)."""
    rows = []
    for effect in effects:
        for n in n_sets:
            for s in seeds:
                for t in trials:
                    res = simulate_power(components, n, s, t, effect, cells, reps, alphas, n_boot, seed,
                                         residuals, set_sd_trial)
                    rows.append({"effect": effect, "N": n, "S": s, "T": t,
                                 "cost": n * s * t / float(np.prod(today)), **res})
    return pd.DataFrame(rows)


def sets_for_power(sd_D: float, effect: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The data sets a two-sided test at ``alpha`` needs for ``power`` against ``effect`` when ``D[s]`` is
    normal with spread ``sd_D``: the paired z-test's ``((z_{1-alpha/2} + z_power) sd_D / effect)^2``,
    divided by the signed-rank test's asymptotic relative efficiency for normal data, 3/pi (Noether 1987)."""
    return ((norm.isf(alpha / 2) + norm.ppf(power)) * sd_D / effect) ** 2 / (3.0 / np.pi)


def wilcoxon_power(sd_D: float, effect: float, n_sets: int, alpha: float = 0.05) -> float:
    """The closed form :func:`sets_for_power` inverts: the power of the two-sided signed-rank test over
    ``n_sets`` normal ``D[s]`` (mean ``effect``, spread ``sd_D``), the z-test's at the efficiency 3/pi."""
    shift = np.sqrt(n_sets * 3.0 / np.pi) * effect / sd_D if sd_D > 0 else np.inf
    z = norm.isf(alpha / 2)
    return float(norm.sf(z - shift) + norm.cdf(-z - shift))
