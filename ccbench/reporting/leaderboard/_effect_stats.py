"""The paired statistics of the headline (:mod:`.effects`), over data sets as the independent units.

- :func:`signed_rank`: the two-sided Wilcoxon signed-rank p-value exactly as
  :func:`scipy.stats.wilcoxon` computes it with its defaults (``zero_method="wilcox"``, no continuity
  correction, ``method="auto"``), without scipy's per-call overhead (about 4 ms; the leave-one-out
  check below needs ~10^4 tests per page). A test checks it against scipy on samples with ties and zeros.
- :func:`bayes_signed_rank`: baycomp's Bayesian signed-rank posterior
  (:class:`baycomp.SignedRankTest`: Benavoli et al., ICML 2014, JMLR 2017), the same Dirichlet draws
  with the same seed, vectorised (baycomp loops over its samples in Python: about 1 s per call).
- :func:`family_verdicts`: Holm over a family of methods compared with one reference, and
  :func:`leave_one_out`: the verdicts recomputed with each data set dropped.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from scipy.stats import norm

from ..stats import _signed_rank_exact, holm

__all__ = ["signed_rank", "bayes_signed_rank", "family_verdicts", "leave_one_out", "VERDICTS"]

VERDICTS = ("ahead", "behind", "tied", "undetermined")

# scipy's bounds: up to 13 values its p is a deterministic permutation over 2**n sign patterns (with ties
# or zeros; without them the same exact distribution); up to 50 values without ties or zeros, the exact
# null distribution; else the normal approximation with the tie correction.
_PERMUTATION_MAX_N, _EXACT_MAX_N = 13, 50


@functools.lru_cache(maxsize=None)
def _exact_pmf(n: int) -> np.ndarray:
    """P(R+ = r), r = 0 .. n(n+1)/2, under H0 for n distinct non-zero differences (ranks 1..n, each
    sign equally likely): the convolution of the n two-point distributions {0, k}."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for k in range(1, n + 1):
        shifted = np.zeros_like(counts)
        shifted[k:] = counts[:-k]
        counts = counts + shifted
    return counts / counts.sum()


def _average_ranks(a: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``a``, equal values sharing their average rank (:func:`scipy.stats.rankdata`'s
    ``"average"``, without its per-call overhead)."""
    order = np.argsort(a, kind="stable")
    ordered = a[order]
    group = np.cumsum(np.r_[True, ordered[1:] != ordered[:-1]]) - 1
    ends = np.cumsum(np.bincount(group))
    ranks = np.empty(a.size)
    ranks[order] = ((2 * ends - np.bincount(group) + 1) / 2.0)[group]
    return ranks


def signed_rank(d) -> tuple[float, float]:
    """``(direction, p)``: the two-sided Wilcoxon signed-rank test of the differences ``d`` (NaN dropped),
    p as :func:`scipy.stats.wilcoxon` gives it with its defaults; ``direction`` = sign(R+ - R-) (+1: the
    differences lean positive). ``(0, 1)`` when every difference is 0 (no evidence either way, where
    scipy would refuse), ``(0, NaN)`` with no value."""
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    nonzero = d[d != 0]
    if d.size == 0:
        return 0.0, np.nan
    if nonzero.size == 0:
        return 0.0, 1.0
    ranks = _average_ranks(np.abs(nonzero))
    r_plus = float(ranks[nonzero > 0].sum())
    direction = float(np.sign(r_plus - (ranks.sum() - r_plus)))
    if d.size <= _PERMUTATION_MAX_N:
        return direction, _signed_rank_exact(d)[1]
    _, ties = np.unique(np.abs(nonzero), return_counts=True)
    n = nonzero.size
    if d.size <= _EXACT_MAX_N and n == d.size and (ties == 1).all():
        pmf = _exact_pmf(n)
        r = int(round(r_plus))
        return direction, float(min(1.0, 2.0 * min(pmf[r:].sum(), pmf[: r + 1].sum())))
    se = np.sqrt((n * (n + 1) * (2 * n + 1) - (ties ** 3 - ties).sum() / 2.0) / 24.0)
    z = (r_plus - n * (n + 1) / 4.0) / se
    return direction, float(2.0 * norm.sf(abs(z)))


@functools.lru_cache(maxsize=64)
def _dirichlet(size: int, nsamples: int, seed: int, prior: float) -> np.ndarray:
    """baycomp's draws: ``RandomState(seed).dirichlet([prior, 1, ..., 1], nsamples)`` (the same for every
    pair with as many data sets: drawn once)."""
    weights = np.ones(size)
    weights[0] = prior
    draws = np.random.RandomState(seed).dirichlet(weights, nsamples)
    draws.setflags(write=False)
    return draws


def bayes_signed_rank(d, rope: float, nsamples: int = 20000, seed: int = 0, prior: float = 0.5) -> tuple:
    """``(P(ahead), P(rope), P(behind))`` of the differences ``d`` (method minus reference, per data set):
    baycomp's ``SignedRankTest.probs(x, y, rope)`` with ``x - y = d``: a Dirichlet process posterior
    (prior strength ``prior`` on a pseudo-observation at 0) over the distribution of differences; each
    draw's probabilities that the mean of two differences is above ``rope``, within it, below ``-rope``;
    the shares of draws in which each is the largest. Same ``numpy.random.RandomState(seed)`` draws as
    baycomp, so the same answer. With ``rope = 0``: (P(ahead), 0, P(behind)). NaN with fewer than 2 values."""
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    if d.size < 2:
        return np.nan, np.nan, np.nan
    return _bayes(d.tobytes(), float(rope), nsamples, seed, prior)


@functools.lru_cache(maxsize=4096)
def _bayes(key: bytes, rope: float, nsamples: int, seed: int, prior: float) -> tuple:
    """:func:`bayes_signed_rank` of the differences in ``key`` (one pair's values recur across the
    failure conventions and subsets: computed once)."""
    diff = np.concatenate(([0.0], -np.frombuffer(key)))  # baycomp's y - x
    sums = diff[:, None] + diff[None, :]
    draws = _dirichlet(diff.size, nsamples, seed, prior)

    def heaviside(a, at):
        return (a > at).astype(float) + 0.5 * (a == at).astype(float)

    # each draw's sum_ij w_i w_j region_ij, for both regions in one product
    regions = np.hstack([heaviside(-sums, 2 * rope), heaviside(sums, 2 * rope)])
    weighted = draws @ regions
    left = (weighted[:, :diff.size] * draws).sum(axis=1)
    right = (weighted[:, diff.size:] * draws).sum(axis=1)
    if rope > 0:
        samples = np.column_stack([left, 1.0 - left - right, right])
        p = np.bincount(samples.argmax(axis=1), minlength=3) / nsamples
        return float(p[0]), float(p[1]), float(p[2])
    p_left = float(np.mean(np.argmax(np.column_stack([1.0 - right, right]), axis=1) == 0))
    return p_left, 0.0, 1.0 - p_left


def _verdict(direction: float, p_holm: float, mean_diff: float, alpha: float) -> str:
    """ahead / behind where Holm's p <= alpha (the side of the signed-rank statistic); tied otherwise;
    undetermined with no value, or where the test's side and the mean difference's sign disagree."""
    if not np.isfinite(p_holm):
        return "undetermined"
    if p_holm > alpha:
        return "tied"
    if np.sign(mean_diff) != direction:
        return "undetermined"
    return "ahead" if direction > 0 else "behind"


def _family(values: np.ndarray, alpha: float, cache: dict) -> tuple[np.ndarray, ...]:
    """:func:`family_verdicts` on an array (data sets x methods): n, p, direction, mean, p_holm, verdicts."""
    n = np.isfinite(values).sum(axis=0)
    p, direction, mean = np.full(n.size, np.nan), np.zeros(n.size), np.full(n.size, np.nan)
    for j in range(values.shape[1]):
        d = values[np.isfinite(values[:, j]), j]
        key = d.tobytes()
        if key not in cache:
            cache[key] = signed_rank(d)
        direction[j], p[j] = cache[key]
        mean[j] = d.mean() if d.size else np.nan
    p_holm = holm(p)
    verdicts = np.array([_verdict(*args, alpha) for args in zip(direction, p_holm, mean)], dtype=object)
    return n, p, direction, mean, p_holm, verdicts


def family_verdicts(diffs: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """``diffs``: data sets x methods, each method's per-data-set difference from one reference (NaN
    where the pair has no value). Per method: ``n_sets``, ``p_wilcoxon`` (:func:`signed_rank`),
    ``p_holm`` (Holm over the methods of ``diffs``: the family is every method compared with that
    reference), ``direction``, ``mean_diff`` and ``verdict`` (:func:`_verdict`)."""
    n, p, direction, mean, p_holm, verdicts = _family(diffs.to_numpy(float), alpha, {})
    return pd.DataFrame({"n_sets": n, "p_wilcoxon": p, "direction": direction, "mean_diff": mean,
                         "p_holm": p_holm, "verdict": verdicts}, index=diffs.columns)


def leave_one_out(diffs: pd.DataFrame, verdicts: pd.Series, alpha: float) -> tuple[pd.Series, int]:
    """Leave-one-data-set-out stability: the family's verdicts (Holm included) recomputed with each
    data set of ``diffs`` dropped in turn; per method the number of drops that change its verdict
    (``verdicts``), and the number of drops (the family's data sets)."""
    values = diffs.to_numpy(float)
    full = verdicts.reindex(diffs.columns).to_numpy(object)
    flips = np.zeros(values.shape[1], dtype=int)
    cache: dict = {}
    for i in range(values.shape[0]):
        again = _family(np.delete(values, i, axis=0), alpha, cache)[-1]
        flips += again != full
    return pd.Series(flips, index=diffs.columns), values.shape[0]
