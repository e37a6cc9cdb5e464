"""PCCC's supervision as a constraint scheme and a noise model (entry point ``pccc_supervision``).

Baumann & Hochbaum, "An algorithm for clustering with confidence-based must-link and cannot-link
constraints" (PCCC, INFORMS J. Computing 2024), as its data repository draws the constraint sets:
PCCC-Data (github.com/phil85/PCCC-Data) @ 02ca7f22de6e, ``utilities.py``.

``pccc_random_pairs`` (scheme, parameter ``fraction`` = f): ``generate_hard_constraints``
    m = C(n_f, 2) = n_f (n_f - 1) / 2 pairs with n_f = ceil(f n), spread over **all** n points (not every
    pair among n_f points: that is ``fraction_pairs``). ``n_f`` is ``ceil`` of the float64 product ``n * f``,
    exactly PCCC-Data's ``np.ceil(n * param_nf)`` (iris: 150 x 0.05 = 7.5 -> 8 points, 28 pairs). Draw::

        P = {}
        repeat until |P| >= m:
            i_1..i_m, then j_1..j_m  ~ uniform on {0, ..., n - 1}      (two draws of m integers)
            P = P u {(min(i_t, j_t), max(i_t, j_t)) : i_t != j_t}     (self-pairs dropped, sorted, unique)
        keep the m smallest pairs of P in lexicographic order
        (a, b) is a must-link iff y_a = y_b, else a cannot-link

    Every round draws m new pairs, not the shortfall, and the m pairs kept are the *first* m in
    lexicographic order, not a random m: whenever a second round was needed (7 of the 8 iris/wine sets),
    pairs whose smaller index is small are favoured, so PCCC's sets depend on the file's row order. At
    f = 20 % on iris and wine (KEEL order, 200 seeds) every pair's smaller index lies in the first third
    of the rows (uniform pairs: 56 %) and 22 % of the pairs are must-links (uniform: 33 %; PCCC's iris
    set: 94 of 435). Kept as PCCC does it; ``random_pairs`` with ``n_constraints = m`` draws m uniform
    distinct pairs instead. ``legacy_seed`` (an int) draws with ``numpy.random.RandomState(legacy_seed)``
    (``randint``), the stream PCCC-Data's ``np.random.seed(random_state)`` starts: with 24 and the KEEL
    row order (``keel_iris``, ``keel_wine``) this gives PCCC's iris and wine sets pair for pair, and every
    trial of a cell the same set. Without it (the default) the same procedure draws from the trial's
    ``numpy.random.Generator`` (``rng.integers``), as every ccbench scheme does.

``pccc_confidence`` (noise, parameter ``low`` = l in [0.5, 1]): ``generate_noisy_constraints``
    in PCCC-Data's pair order (lexicographic), all m probabilities are drawn first, then m uniforms::

        p_t = l + (1 - l) U_t,   U_t ~ U[0, 1)     (p ~ U(l, 1): the probability the pair is right)
        V_t ~ U[0, 1)
        the pair keeps its type iff p_t >= V_t, else must-link <-> cannot-link   (P(flip | p) = 1 - p)
        its weight (PCCC's confidence) w_t = 2 (p_t - 1/2) in [0, 1], flipped or not

    so the flip rate is E[1 - p] = (1 - l) / 2 and a low weight marks a likely wrong pair. "Right" is
    the type the scheme drew (from the labels it saw). Differences from PCCC-Data: there the noisy sets
    draw their own pairs and do not drop i = j (a noisy set can hold a self-pair); here the noise acts
    on the scheme's pairs (with ``pccc_random_pairs``: the same procedure, self-pairs dropped) and
    continues the scheme's stream. The weights reach every method that reads
    ``Constraints.must_link_weight`` / ``cannot_link_weight`` (pccc, pck_means, mpck_means, scssap,
    srcp/e2cp via spectral's core, cobs; the cvcp tuner keeps them). PCCC-Data marks every noisy pair
    soft (``sml``/``scl``), even at weight 1; ccbench's ``pccc`` method treats weight >= ``hard_weight``
    (default 1) as hard, so at l = 1 run it with ``hard_weight`` above 1 to keep PCCC's soft reading.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np

from ccbench.hookspecs import hookimpl
from ccbench.registry import NoiseSpec, SchemeSpec

if TYPE_CHECKING:  # imported where used: listing the plugins loads no scipy (ccbench.constraints does)
    from ccbench.constraints import Constraints

#: PCCC-Data's commit the procedures are transcribed from
PCCC_DATA_COMMIT = "02ca7f22de6e"
#: the seed PCCC-Data's ``prepare_constraint_sets_for_collection_1`` passes
PCCC_SEED = 24


def n_pccc_pairs(n: int, fraction: float) -> int:
    """m = C(n_f, 2) with n_f = ceil(fraction * n), the float64 product as PCCC-Data computes it."""
    n_f = np.ceil(n * float(fraction))
    return int(n_f * (n_f - 1) / 2)


def _check_fraction(fraction) -> float:
    if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real) or not 0 <= fraction <= 1:
        raise ValueError(f"pccc_random_pairs: fraction must be a number in [0, 1] (a share of the points; "
                         f"PCCC used 0.05, 0.1, 0.15, 0.2), got {fraction!r}")
    return float(fraction)


def _integer_source(rng, legacy_seed):
    """``draw(size)``: uniform integers in [0, n) from the trial's Generator or PCCC's legacy stream."""
    if legacy_seed is None:
        return lambda n, size: rng.integers(0, n, size=size)
    if isinstance(legacy_seed, bool) or not isinstance(legacy_seed, numbers.Integral) \
            or not 0 <= legacy_seed < 2 ** 32:
        raise ValueError(f"pccc_random_pairs: legacy_seed must be null (draw from the trial's seed) or an int "
                         f"in [0, 2**32) for numpy's RandomState (PCCC used {PCCC_SEED}), got {legacy_seed!r}")
    legacy = np.random.RandomState(int(legacy_seed))
    return lambda n, size: legacy.randint(0, n, size=size)


def _draw_pairs(n: int, m: int, draw) -> np.ndarray:
    """The m lexicographically first of PCCC's unique off-diagonal pairs, shape (m, 2), i < j.

    A pair (a, b) with a < b is the key a n + b: key order is lexicographic order, and the union of
    keys is PCCC-Data's ``np.unique(..., axis=0)`` of the pair rows.
    """
    keys = np.empty(0, dtype=np.int64)
    while len(keys) < m:  # rounds, not points: two rounds on 7 of PCCC's 8 iris/wine sets
        i, j = draw(n, m), draw(n, m)
        lo, hi = np.minimum(i, j).astype(np.int64), np.maximum(i, j).astype(np.int64)
        off_diagonal = lo != hi
        keys = _sorted_unique(np.concatenate([keys, lo[off_diagonal] * n + hi[off_diagonal]]))
    return np.column_stack(np.divmod(keys[:m], n))


def _sorted_unique(keys: np.ndarray) -> np.ndarray:
    """``np.unique(keys)`` by a sort: numpy 2.4's ``unique`` took 26 s where this takes 0.3 s (8 M keys)."""
    keys = np.sort(keys)
    return keys[np.r_[True, keys[1:] != keys[:-1]]]


def pccc_random_pairs(y, fraction: float, *, legacy_seed: int | None = None,
                      rng: np.random.Generator) -> Constraints:
    """C(ceil(fraction n), 2) random pairs over all n points, must-link iff the labels agree (PCCC-Data
    ``generate_hard_constraints``; procedure and ``legacy_seed`` in the module docstring).

    Parameters
    ----------
    y : array-like of shape (n,)
        The labels the scheme may look at.
    fraction : float in [0, 1]
        f; n_f = ceil(f n) and m = n_f (n_f - 1) / 2 pairs (no pairs when n_f < 2, as PCCC-Data).
    legacy_seed : int or None, default=None
        Draw from ``numpy.random.RandomState(legacy_seed)`` (PCCC's own stream; PCCC used 24) instead of
        ``rng``: the same set in every trial.
    rng : numpy.random.Generator
        The trial's stream (used when ``legacy_seed`` is None).
    """
    from ccbench.constraints import Constraints

    y = np.asarray(y)
    if y.ndim != 1 or len(y) < 2:
        raise ValueError(f"pccc_random_pairs: y must be 1-D with at least 2 labels, got shape {y.shape}")
    n = len(y)
    m = n_pccc_pairs(n, _check_fraction(fraction))
    draw = _integer_source(rng, legacy_seed)
    if m == 0:
        return Constraints.empty(n)
    pairs = _draw_pairs(n, m, draw)
    same = y[pairs[:, 0]] == y[pairs[:, 1]]
    return Constraints(pairs[same], pairs[~same], n_samples=n)


def _check_low(low) -> float:
    if isinstance(low, bool) or not isinstance(low, numbers.Real) or not 0.5 <= low <= 1:
        raise ValueError(f"pccc_confidence: low must lie in [0.5, 1] (the lower bound l of p ~ U(l, 1), the "
                         f"probability a pair is right; PCCC used 0.5, 0.6, ..., 1), got {low!r}")
    return float(low)


def pccc_confidence(constraints: Constraints, *, low: float, rng: np.random.Generator) -> Constraints:
    """Each pair right with probability p ~ U(low, 1), flipped ML <-> CL otherwise, weight 2 (p - 1/2)
    (PCCC-Data ``generate_noisy_constraints``; draw order and equations in the module docstring).

    Refuses weighted pairs (the model sets the weight itself) and revealed labels (they would stay true
    beside flipped pairs, and label-reading methods would never see the noise).
    """
    low = _check_low(low)
    if constraints.labels is not None:
        raise ValueError("pccc_confidence: the supervision carries revealed labels, which would stay true beside "
                         "the flipped pairs; use a pair scheme (constraints=pccc_random_pairs or random_pairs)")
    weights = np.concatenate([constraints.must_link_weight, constraints.cannot_link_weight])
    if np.any(weights != 1):
        raise ValueError("pccc_confidence: the scheme gave pairs weights other than 1; this noise model sets each "
                         "pair's weight to 2 (p - 1/2) itself, so give it unweighted pairs")
    n = constraints.n_samples
    pairs = np.concatenate([constraints.must_link, constraints.cannot_link])
    is_ml = np.r_[np.ones(constraints.n_must_link, bool), np.zeros(constraints.n_cannot_link, bool)]
    order = np.argsort(pairs[:, 0].astype(np.int64) * n + pairs[:, 1], kind="stable")  # PCCC's pair order
    pairs, is_ml = pairs[order], is_ml[order]
    p = low + (1 - low) * rng.random(len(pairs))
    right = p >= rng.random(len(pairs))
    as_ml = is_ml == right
    weight = 2 * (p - 0.5)
    return constraints.with_pairs(pairs[as_ml], pairs[~as_ml], weight[as_ml], weight[~as_ml])


@hookimpl
def ccbench_constraint_schemes():
    return [SchemeSpec("pccc_random_pairs", pccc_random_pairs,
                       "PCCC's scheme: C(ceil(fraction n), 2) random pairs over all points, ML iff same label "
                       "(PCCC-Data generate_hard_constraints; legacy_seed=24 reproduces PCCC's sets)")]


@hookimpl
def ccbench_noise_injectors():
    return [NoiseSpec("pccc_confidence", pccc_confidence, "constraints",
                      "PCCC's confidence model: each pair right with p ~ U(low, 1), else flipped; weight 2(p - 0.5)")]
