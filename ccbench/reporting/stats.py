"""Paired statistics over a results DataFrame: comparisons users can trust.

Every trial in ccbench is paired: for one data set, setting and x value, all
methods see the same constraint sets (the same ``trial_seed``). The mean ± std
of the report ignores that pairing; these small functions use it.

Within one cell (data set, setting, x):

- :func:`paired_tests`: Wilcoxon signed-rank test between every two methods over
  their paired trials (:func:`scipy.stats.wilcoxon`), Holm-corrected within the
  cell (:func:`holm`), with per-trial win/tie/loss counts under a margin.

Across data sets (Demšar 2006; Benavoli et al. 2017), on the per-data-set means
of :func:`block_means` (one block per data set and setting, the metric averaged
over the trials at one x value):

- :func:`win_tie_loss`: the NNC paper's convention (Yang et al. 2015, Sect. 5.3):
  A beats B on a data set when its mean is better by at least ``margin`` (0.03
  there), a smaller difference is a tie;
- :func:`average_ranks`, :func:`friedman` (:func:`scipy.stats.friedmanchisquare`),
  :func:`nemenyi` (scikit-posthocs) and :func:`cd_diagram` (scikit-posthocs'
  ``critical_difference_diagram``);
- :func:`bayesian_signed_rank`: baycomp's Bayesian signed-rank test with a
  region of practical equivalence (ROPE); :func:`compare` prints a verdict.

Across data sets, blocks are taken at **one x value** (``at``; default: the
largest, e.g. the largest constraint budget, of each data set): averaging a
learning curve would pool x = 0, where supervision plays no role, with the
supervised points.

Only ``ok`` trials enter. Direction comes from the metric's registry entry
(:attr:`ccbench.registry.MetricSpec.direction`; ``<metric>_unconstrained``, written by
``evaluate_on=both``, takes its base metric's); ``fit_time`` is "lower", any
other column is not ranked. Unranked metrics (``n_clusters_found``: fewer
clusters is not better) get per-cell tests of a *difference* ("A higher"),
never "better", ranks, Friedman, CD diagrams or win/tie/loss.

Small samples (see :func:`wilcoxon_min_p`, :func:`min_pairs`): every test
states the smallest p-value it can reach with the trials at hand; below the
minimum n a test prints "too few trials" instead of a verdict (a two-sided
Wilcoxon signed-rank test needs 6 non-zero pairs to reach p < 0.05, more after
Holm's correction; the Bayesian test is held to the same minimum).

References
----------
J. Demšar, "Statistical comparisons of classifiers over multiple data sets", JMLR 7, 2006.
A. Benavoli, G. Corani, J. Demšar, M. Zaffalon, "Time for a change: a tutorial for
comparing multiple classifiers through Bayesian analysis", JMLR 18, 2017.
S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Stat. 6, 1979.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pandas as pd

from ._format import (
    direction,
    fmt,
    is_ranked,
    method_colors,
    method_labels,
    resolve_x,
    setting_labels,
)

__all__ = ["decide", "greater_is_better", "wilcoxon_min_p", "min_pairs", "friedman_min_p", "resolve_at", "x_values", "holm", "paired_frame", "paired_tests", "block_means", "win_tie_loss", "average_ranks", "friedman", "nemenyi", "cd_diagram", "bayesian_signed_rank"]


CELL = ["dataset", "setting", "x"]


BLOCK = ["dataset", "setting"]


# A posterior probability above this makes a Bayesian verdict (Benavoli et al. 2017 use 0.95).
DECISION = 0.95


def greater_is_better(metric: str) -> bool:
    """True when higher is better; a metric that is not ranked raises (it has no "better")."""
    return _sign(metric) > 0


def _sign(metric: str) -> float:
    d = direction(metric)
    if d == "none":
        raise ValueError(f"metric {metric!r} is not ranked (direction 'none': e.g. a count, where fewer is "
                         f"not better); rank a metric with a direction (n_clusters_error = |found - classes|)")
    return 1.0 if d == "higher" else -1.0


@functools.lru_cache(maxsize=None)
def wilcoxon_min_p(n: int) -> float:
    """Smallest two-sided p-value the Wilcoxon signed-rank test can give with ``n`` non-zero pairs.

    Computed by :func:`scipy.stats.wilcoxon` itself on the most extreme sample
    (all differences of one sign, distinct): ``2 / 2**n`` where scipy uses the
    exact null distribution (n <= 50). 1.0 for n < 1.
    """
    from scipy.stats import wilcoxon

    if n < 1:
        return 1.0
    return float(wilcoxon(np.arange(1.0, n + 1.0)).pvalue)


def min_pairs(alpha: float = 0.05, n_tests: int = 1) -> int:
    """Smallest number of paired values with which a Wilcoxon test, Holm-corrected over ``n_tests``,
    can reach ``alpha`` (6 at 0.05 for one test: ``2 / 2**5 = 0.0625``)."""
    n = 1
    while n_tests * wilcoxon_min_p(n) > alpha:
        n += 1
    return n


def friedman_min_p(n_blocks: int, k: int) -> float:
    """Smallest p-value of Friedman's chi-square (as scipy computes it) over ``n_blocks`` blocks and
    ``k`` methods: every block ranks the methods alike, chi² = n (k - 1) (Demšar eq. 3)."""
    from scipy.stats import chi2

    return float(chi2.sf(n_blocks * (k - 1), k - 1))


def _nemenyi_can_separate(k: int, n: int, alpha: float) -> bool:
    """Whether any two of ``k`` methods can be told apart over ``n`` blocks: the largest possible
    difference of average ranks, k - 1, reaches the critical difference."""
    return k - 1 >= critical_difference(k, n, alpha)


# The Bayesian signed-rank test has no p-value to bound: its posterior with baycomp's prior already
# says P = 0.97 from 2 paired trials. Held to the frequentist minimum at the same error rate
# (1 - DECISION = 0.05): no verdict from fewer paired values than Wilcoxon needs to reach it.
def _bayes_min_n() -> int:
    return min_pairs(1.0 - DECISION)


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN stays NaN and does not count as a test).

    Sorted ascending, ``p_(i) * (m - i + 1)`` (i from 1), made non-decreasing by a
    running maximum and clipped at 1; reject where the adjusted value is ≤ alpha.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = order.size
    scaled = p[order] * (m - np.arange(m))
    out[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return out


def _prepare(data: pd.DataFrame, metric: str, x: str | None, pool=()) -> pd.DataFrame:
    """``ok`` rows with ``dataset, setting, x, method_label, pair, value`` columns."""

    if data.empty:
        raise ValueError("no results to compare")
    if metric not in data:
        known = [c for c in data.columns if pd.api.types.is_numeric_dtype(data[c])]
        raise ValueError(f"metric {metric!r} is not a results column; numeric columns: {known}")
    x = resolve_x(data, x)
    data = data.reset_index(drop=True)  # concatenated sweeps can repeat index labels
    frame = pd.DataFrame({
        "dataset": data["dataset.name"],
        "method_label": method_labels(data, x),
        "setting": setting_labels(data, x, pool),
        "x": data[x] if x in data else np.nan,
        "value": pd.to_numeric(data[metric], errors="coerce"),
    })
    # trial_seed is the same for every method of a (data set, setting, x, trial): the pairing key
    if "trial_seed" in data and data["trial_seed"].notna().all():
        frame["pair"] = data["trial_seed"].astype("int64")
    else:
        frame["pair"] = data[["trial", *pool]].astype(str).agg("/".join, axis=1)
    frame["x"] = frame["x"].map(lambda v: "n/a" if pd.isna(v) else v)
    return frame[data["status"].eq("ok") & frame["value"].notna()]


def paired_frame(data: pd.DataFrame, metric: str, x: str | None = None, pool=()) -> pd.DataFrame:
    """Wide table of paired trials: index (dataset, setting, x, pair), one column per method label."""
    frame = _prepare(data, metric, x, pool)
    dup = frame.duplicated([*CELL, "pair", "method_label"])
    if dup.any():
        raise ValueError(
            f"{int(dup.sum())} rows share (data set, setting, x, trial, method): pass the replicate "
            f"columns as pool (e.g. --pool dataset.seed) or report the sweeps separately"
        )
    return frame.pivot(index=[*CELL, "pair"], columns="method_label", values="value")


def _wilcoxon(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """scipy's two-sided Wilcoxon signed-rank test (statistic min(R+, R-), p-value), with the same
    answer faster for n <= 13 (:func:`_signed_rank_exact`); an all-zero difference is no evidence
    either way (p = 1) where scipy would refuse."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.size == 0:
        return np.nan, np.nan
    if np.all(d == 0):  # no evidence either way: scipy would refuse
        return 0.0, 1.0
    if d.size <= _EXACT_MAX_N:
        return _signed_rank_exact(d)
    from scipy.stats import wilcoxon

    res = wilcoxon(a, b)
    return float(res.statistic), float(res.pvalue)


_EXACT_MAX_N = 13  # scipy's own bound for its deterministic permutation route (2**13 sign patterns)


@functools.lru_cache(maxsize=None)
def _sign_patterns(n: int) -> np.ndarray:
    """All 2**n rows of n zeros and ones (1 = the value keeps a positive sign)."""
    return ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(float)


def _signed_rank_exact(d: np.ndarray) -> tuple[float, float]:
    """Two-sided signed-rank test by enumerating every sign pattern of the differences ``d``.

    What :func:`scipy.stats.wilcoxon` computes for n <= 13 (``zero_method="wilcox"``: zeros are
    dropped before ranking; average ranks for ties; with ties or zeros scipy runs
    ``permutation_test`` over the same 2**n patterns, without them its exact distribution, which is
    the same enumeration): p = min(1, 2 min(P(R+ <= r), P(R+ >= r))) with scipy's relative tolerance
    for equal values. scipy 1.17 takes about 0.2 s per call on the permutation route (a Python
    call per pattern); this takes tens of microseconds, which the leaderboard's ~10^5 pair tests need.
    """
    from scipy.stats import rankdata

    nonzero = d[d != 0]
    ranks = rankdata(np.abs(nonzero))
    r_plus = float(ranks[nonzero > 0].sum())
    r_minus = float(ranks.sum()) - r_plus
    null = _sign_patterns(nonzero.size) @ ranks
    gamma = abs(1e-14 * r_plus)  # scipy's tolerance: sums of average ranks are not exact in floating point
    p_less, p_greater = np.mean(null <= r_plus + gamma), np.mean(null >= r_plus - gamma)
    return min(r_plus, r_minus), float(min(1.0, 2.0 * min(p_less, p_greater)))


def _wtl(diff: np.ndarray, margin: float) -> tuple[int, int, int]:
    """Wins, ties, losses of A over B from A-minus-B differences already oriented "higher is better"."""
    return int((diff >= margin).sum()), int((np.abs(diff) < margin).sum()), int((diff <= -margin).sum())


def decide(diff: float, p: float, floor: float, margin: float, alpha: float) -> str:
    """The one verdict rule of every report (leaderboard win/tie/loss, per-cell tests, ``--compare``,
    across data sets): ``"A"`` / ``"B"`` (better, or higher for a metric that is not ranked: pass
    ``margin=0``) only when the paired test's p-value -- Holm-adjusted over the family the caller
    states -- is at most ``alpha`` AND the mean difference ``diff`` (A minus B, oriented so that
    positive is better) is at least ``margin``; ``"tie"`` otherwise; ``"too few"`` when no sample of
    this size could reach ``alpha`` (``floor``, the smallest p it can give, is above it). A verdict is
    never given at a p-value above ``alpha``."""
    if not floor <= alpha:
        return "too few"
    if p <= alpha and np.isfinite(diff) and abs(diff) >= margin and diff != 0:
        return "A" if diff > 0 else "B"
    return "tie"


def _holm_floor(n_pairs) -> np.ndarray:
    """Smallest Holm-adjusted p each test of a family can reach, from each test's number of pairs.

    Holm's adjusted value of any test is at least m * (smallest raw p of the family)
    and at least its own raw p; at best every raw p is its :func:`wilcoxon_min_p`.
    """
    floors = np.array([wilcoxon_min_p(int(n)) for n in n_pairs], dtype=float)
    if floors.size == 0:
        return floors
    return np.minimum(np.maximum(floors.size * floors.min(), floors), 1.0)


def _too_few(n: int, floor: float) -> str:
    return f"too few trials (n = {n}: p >= {floor:.3g})"


def paired_tests(data: pd.DataFrame, metric: str, x: str | None = None, pool=(), margin: float = 0.03,
                 alpha: float = 0.05) -> pd.DataFrame:
    """Wilcoxon signed-rank test for every two methods in every cell, Holm-corrected per cell.

    One row per (dataset, setting, x, A, B) with the trials both completed:
    ``n_pairs``, ``mean_diff`` (A - B, in the metric's units), ``wins``, ``ties``,
    ``losses`` (per trial, "better" in the metric's direction, a difference under
    ``margin`` being a tie; empty for a metric that is not ranked), ``statistic``,
    ``p``, ``p_holm`` (the family is all pairs of the cell), ``p_min`` (the
    smallest ``p_holm`` these numbers of trials can reach) and ``verdict``:
    ``A better`` / ``B better`` (``A higher`` / ``B higher`` for a metric that is
    not ranked) by :func:`decide` (p_holm <= ``alpha`` and a mean difference of at least
    ``margin``; any difference for a metric that is not ranked), ``no difference`` otherwise,
    and ``too few trials`` when ``p_min > alpha`` (no sample of that size could show a difference).
    """
    wide = paired_frame(data, metric, x, pool)
    ranked = is_ranked(metric)
    sign = _sign(metric) if ranked else 1.0
    word = "better" if ranked else "higher"
    out = []
    for cell, rows in wide.groupby(level=CELL, sort=True):
        recs = []
        present = rows.notna().any().to_numpy()
        methods = sorted(rows.columns[present])
        # one array per cell, numpy per pair: a pandas selection per pair cost more than the test itself
        values = rows[methods].to_numpy(float)
        seen = ~np.isnan(values)
        for (i, a), (j, b) in itertools.combinations(enumerate(methods), 2):
            both = seen[:, i] & seen[:, j]
            va, vb = values[both, i], values[both, j]
            stat, p = _wilcoxon(va, vb)
            w, t, lo = _wtl(sign * (va - vb), margin) if ranked else (None, None, None)
            recs.append(dict(zip(CELL, cell), A=a, B=b, n_pairs=int(both.sum()),
                             mean_diff=float(np.mean(va - vb)) if both.any() else np.nan,
                             wins=w, ties=t, losses=lo, statistic=stat, p=p))
        if not recs:
            continue
        adjusted = holm([r["p"] for r in recs])
        floors = _holm_floor([r["n_pairs"] for r in recs])
        for r, ph, floor in zip(recs, adjusted, floors):
            r["p_holm"], r["p_min"] = ph, floor
            said = decide(sign * r["mean_diff"], ph, floor, margin if ranked else 0.0, alpha)
            r["verdict"] = (_too_few(r["n_pairs"], floor) if said == "too few" else "no difference" if said == "tie"
                            else f"{r[said]} {word}")
        out.extend(recs)
    cols = [*CELL, "A", "B", "n_pairs", "mean_diff", "wins", "ties", "losses", "statistic", "p", "p_holm",
            "p_min", "verdict"]
    return pd.DataFrame(out, columns=cols)


def x_values(data: pd.DataFrame, metric: str, x: str | None = None, pool=()) -> list:
    """The x values with ok trials, in order (numbers numerically)."""
    return _ordered(_prepare(data, metric, x, pool)["x"].unique().tolist())


def _ordered(values: list) -> list:
    try:
        return sorted(values, key=float)
    except (TypeError, ValueError):
        return sorted(values, key=str)


def resolve_at(data: pd.DataFrame, metric: str, x: str | None = None, pool=(), at=None):
    """The x value at which blocks are compared across data sets.

    ``at`` if given (checked against the x values). Otherwise the largest x (the
    largest supervision budget) of each block: the value itself when every block
    has the same largest x, ``None`` when they differ (a protocol with a budget per
    data set, e.g. NNC's 5 labeled points per class, 2 on ecoli), which
    :func:`block_means` reads as "each block at its own largest x". Several
    non-numeric x values in a block (scheme names) have no natural order: ``at``
    is required then.
    """
    return _resolve_at(_prepare(data, metric, x, pool), at)


def _resolve_at(frame: pd.DataFrame, at):
    values = _ordered(frame["x"].unique().tolist())
    if at is not None:
        match = [v for v in values if _same(at)(v)]
        if not match:
            raise ValueError(f"no ok trial at x = {at!r}; x values: {[str(v) for v in values]}")
        return match[0]
    tops = []
    for _, rows in frame.groupby(BLOCK, sort=False):
        block = rows["x"].unique().tolist()
        numeric = [v for v in block if _is_number(v)]
        if len(block) > 1 and not numeric:
            raise ValueError(f"x takes {len(values)} non-numeric values {[str(v) for v in values]}: ranks across "
                             f"data sets are per x value; choose one with --at")
        tops.append(max(numeric, key=float) if numeric else block[0])
    distinct = {str(v) for v in tops}
    return tops[0] if len(distinct) == 1 else None


def _largest_x_of_each_block(frame: pd.DataFrame) -> pd.DataFrame:
    xnum = pd.to_numeric(frame["x"], errors="coerce")
    top = xnum.groupby([frame[c] for c in BLOCK]).transform("max")
    return frame[(xnum == top).to_numpy()]


def _is_number(v) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def block_means(data: pd.DataFrame, metric: str, x: str | None = None, pool=(), at=None,
                complete: bool = True) -> pd.DataFrame:
    """Mean ``metric`` per block (data set, setting) and method at one x value: index blocks,
    columns method labels.

    ``at`` picks the x value (matched as a number when it is one, so ``--at 40``
    matches 40 and 40.0); the default is :func:`resolve_at`'s, the largest x (of
    each block, when the blocks' largest x differ: ``attrs["at"]`` is then None).
    Blocks never pool several x values: x = 0 (no supervision) averaged with
    supervised points would measure neither. ``complete`` drops blocks where
    some method has no ok trial (the rank tests need every method on every block),
    after leaving out the methods with no ok trial at this x at all.
    """
    frame = _prepare(data, metric, x, pool)
    at = _resolve_at(frame, at)
    frame = _largest_x_of_each_block(frame) if at is None else frame[frame["x"].map(_same(at))]
    means = frame.groupby([*BLOCK, "method_label"])["value"].mean().unstack("method_label")
    means.attrs["at"] = at
    # a method with no ok trial at this x is left out, rather than every block with it
    return means.dropna(axis=1, how="all").dropna() if complete else means


def _same(at):
    def match(v):
        try:
            return float(v) == float(at)
        except (TypeError, ValueError):
            return str(v) == str(at)
    return match


def win_tie_loss(means: pd.DataFrame, metric: str, margin: float = 0.03) -> pd.DataFrame:
    """``wins/ties/losses`` of the row method against the column method over blocks.

    A block is a win when the row's mean is better by at least ``margin`` (the NNC
    paper's 0.03 on the Rand index), a loss when worse by at least ``margin``.
    """
    sign = _sign(metric)
    methods = list(means.columns)
    table = pd.DataFrame("", index=methods, columns=methods)
    for a, b in itertools.permutations(methods, 2):
        both = means[[a, b]].dropna()
        w, t, lo = _wtl(sign * (both[a] - both[b]).to_numpy(float), margin)
        table.loc[a, b] = f"{w}/{t}/{lo}"
    return table


def _ranks(means: pd.DataFrame, metric: str) -> pd.DataFrame:
    return means.rank(axis=1, ascending=_sign(metric) < 0, method="average")


def average_ranks(means: pd.DataFrame, metric: str) -> pd.Series:
    """Mean rank per method over blocks (1 = best; ties share the average rank), best first."""
    return _ranks(means, metric).mean().sort_values()


def friedman(means: pd.DataFrame) -> dict:
    """Friedman's chi-square over complete blocks (:func:`scipy.stats.friedmanchisquare`)
    and the Iman-Davenport F statistic Demšar recommends beside it."""
    from scipy.stats import f as f_dist
    from scipy.stats import friedmanchisquare

    n, k = means.shape
    if k < 3 or n < 2:
        raise ValueError(f"the Friedman test needs at least 3 methods and 2 data sets, got {k} and {n}")
    chi2, p = friedmanchisquare(*(means[c].to_numpy(float) for c in means.columns))
    denom = n * (k - 1) - chi2
    ff = (n - 1) * chi2 / denom if denom > 0 else np.inf
    p_ff = float(f_dist.sf(ff, k - 1, (k - 1) * (n - 1))) if np.isfinite(ff) else 0.0
    return {"statistic": float(chi2), "pvalue": float(p), "iman_davenport": float(ff),
            "pvalue_iman_davenport": p_ff, "n_blocks": n, "n_methods": k}


def nemenyi(means: pd.DataFrame) -> pd.DataFrame:
    """Nemenyi post-hoc p-values between methods (scikit-posthocs), blocks as Friedman blocks."""
    import scikit_posthocs as sp

    return sp.posthoc_nemenyi_friedman(means.to_numpy(float)).set_axis(means.columns, axis=0).set_axis(
        means.columns, axis=1)


def critical_difference(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of average ranks: q_alpha * sqrt(k (k+1) / (6 n)) (Demšar eq. 5)."""
    from scipy.stats import studentized_range

    q = studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2)
    return float(q * np.sqrt(k * (k + 1) / (6.0 * n)))


def cd_diagram(means: pd.DataFrame, metric: str, alpha: float = 0.05, title: str | None = None,
               colors: dict | None = None):
    """Critical-difference diagram (scikit-posthocs): average ranks, bars join methods that the
    Nemenyi test does not tell apart at ``alpha``. ``colors`` ({method label: colour}, e.g.
    :func:`ccbench.method_colors` of the whole page) gives each method the colour it has
    in the page's line plots. Returns a matplotlib Figure (no pyplot state)."""
    import scikit_posthocs as sp
    from matplotlib.figure import Figure

    ranks = average_ranks(means, metric)
    n, k = means.shape
    colors = colors or method_colors(means.columns)
    fig = Figure(figsize=(10.0, 1.8 + 0.3 * k))
    ax = fig.subplots()
    # the method names sit outside the axes, left and right: leave them room (no layout engine sees them)
    side = min(0.42, 0.06 + 0.0085 * max(len(str(m)) + 6 for m in ranks.index))
    fig.subplots_adjust(left=side, right=1 - side, top=1 - 0.75 / fig.get_figheight(), bottom=0.02)
    drawn = sp.critical_difference_diagram(ranks, nemenyi(means), ax=ax, alpha=alpha,
                                           color_palette={m: colors[m] for m in ranks.index})
    # scikit-posthocs joins a crossbar's points in the order of a set (Python's hash seed): the same
    # numbers gave other PNG bytes from run to run; left to right, one picture
    for line in (x for bar in drawn.get("crossbars", []) for x in bar):
        line.set_xdata(np.sort(np.asarray(line.get_xdata(), dtype=float)))
    cd = critical_difference(k, n, alpha)
    at = means.attrs.get("at")
    where = "" if "at" not in means.attrs else " at each data set's largest x" if at is None else \
        f" at x = {fmt(at)}"
    limit = "" if _nemenyi_can_separate(k, n, alpha) else f"; CD > {k - 1}: too few data sets to separate any two"
    fig.suptitle(title or f"{metric}: average ranks over {n} data sets{where} (1 = best)\na bar joins methods "
                 f"the Nemenyi test does not separate (CD = {cd:.2f}, alpha = {alpha}{limit})", fontsize="medium")
    return fig


def bayesian_signed_rank(a, b, rope: float = 0.01, *, greater: bool = True, nsamples: int = 20000,
                         random_state: int = 0) -> dict:
    """Posterior probabilities that A is better, practically equivalent (|diff| < ``rope``), B better.

    baycomp's Bayesian signed-rank test (Benavoli et al. 2014, 2017) over paired
    values ``a``, ``b`` (per-data-set means, or per-trial values of one cell).
    The verdict names the outcome with probability ≥ 0.95, else ``inconclusive``;
    with fewer than :func:`min_pairs` (6) paired values it is ``too few trials``
    whatever the posterior says (baycomp gives P = 0.97 from 2 values).
    """
    from baycomp import SignedRankTest

    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.size < 2:
        raise ValueError(f"the Bayesian signed-rank test needs at least 2 paired values, got {a.size}")
    # baycomp's "left" is P(x - y > rope): x better when higher is better, so swap for lower
    x, y = (a, b) if greater else (b, a)
    p_a, p_rope, p_b = SignedRankTest.probs(x, y, rope=rope, nsamples=nsamples, random_state=random_state)
    probs = {"A better": float(p_a), "equivalent": float(p_rope), "B better": float(p_b)}
    best = max(probs, key=probs.get)
    return {"p_a_better": probs["A better"], "p_rope": probs["equivalent"], "p_b_better": probs["B better"],
            "verdict": ("too few trials" if a.size < _bayes_min_n() else
                        best if probs[best] >= DECISION else "inconclusive"), "n": int(a.size)}
