"""Similarity graphs shared by the algorithm plugins.

These are data preparation, not algorithms: every plugin that needs a
similarity matrix takes it from here so that there is one definition of
each. (The k-NN graph and normalised Laplacian live in the spectral family's
core, their only user.)
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

import numpy as np

__all__ = [
    "negative_sq_euclidean",
    "median_preference",
    "similarity_range",
    "preference_bracket",
    "PreferenceSearch",
    "bisect_preference",
    "fit_for_n_clusters",
    "SharedPreferenceFits",
]


def negative_sq_euclidean(X, Y=None, *, metric_diag=None) -> np.ndarray:
    """s(i, j) = -||x_i - y_j||^2, optionally in a diagonal metric ``A``.

    With ``metric_diag = a`` (shape (d,)), s(i, j) = -(x_i - y_j)^T diag(a) (x_i - y_j).
    Computed through the Gram identity on data centred at the mean of ``Y``
    (of ``X`` when ``Y`` is None) and clipped at 0 so rounding never yields a
    positive similarity. Centring makes the result translation-invariant: the
    identity ||x||^2 + ||y||^2 - 2 x.y loses about eps * ||x||^2 of absolute
    precision, which on data far from the origin (iris + 1e6) exceeds the
    distances themselves.
    """
    symmetric = Y is None
    X = np.asarray(X, dtype=np.float64)
    Y = X if symmetric else np.asarray(Y, dtype=np.float64)
    centre = Y.mean(axis=0) if Y.shape[0] else 0.0
    X = X - centre
    Y = X if symmetric else Y - centre
    if metric_diag is not None:
        w = np.sqrt(np.asarray(metric_diag, dtype=np.float64))
        X = X * w
        Y = X if symmetric else Y * w
    xx = np.einsum("ij,ij->i", X, X)
    yy = xx if symmetric else np.einsum("ij,ij->i", Y, Y)
    S = X @ Y.T
    S *= 2.0
    S -= xx[:, None]
    S -= yy[None, :]
    np.minimum(S, 0.0, out=S)
    if symmetric:
        np.fill_diagonal(S, 0.0)
    return S


def median_preference(S) -> float:
    """Median of the off-diagonal similarities (Frey & Dueck's default; SCSSAP 4.1)."""
    S = np.asarray(S)
    n = S.shape[0]
    if n < 2:
        raise ValueError("the median preference needs at least 2 points")
    off = S[~np.eye(n, dtype=bool)]
    return float(np.median(off))


def similarity_range(X, *, kind="sqeuclidean", block_rows=1024) -> tuple[float, float]:
    """Least and greatest off-diagonal similarity ``(s_min, s_max)`` of the rows of ``X``.

    ``kind``: ``"sqeuclidean"`` (s = -||x_i - x_j||^2, :func:`negative_sq_euclidean`),
    ``"euclidean"`` (s = -||x_i - x_j||) or ``"precomputed"`` (``X`` is S). Computed in
    blocks of ``block_rows`` rows: O(block_rows x N) memory, never the whole matrix.
    """
    lo, hi = np.inf, -np.inf
    for _, S in _similarity_blocks(X, kind, block_rows, "a similarity range"):
        lo, hi = min(lo, float(np.nanmin(S))), max(hi, float(np.nanmax(S)))
    return lo, hi


def _similarity_blocks(X, kind: str, block_rows: int, what: str):
    """``(rows, S[rows])`` in blocks of ``block_rows`` rows, the diagonal NaN (``kind`` as
    :func:`similarity_range`): O(block_rows x N) memory, never the whole matrix."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"{what} needs at least 2 points")
    for start in range(0, n, block_rows):
        rows = np.arange(start, min(start + block_rows, n))
        if kind == "precomputed":
            S = np.array(X[rows], dtype=np.float64)
        else:
            S = negative_sq_euclidean(X[rows], X)
            if kind == "euclidean":
                S = -np.sqrt(-S)
        S[np.arange(len(rows)), rows] = np.nan
        yield rows, S


def preference_bracket(X, *, kind="sqeuclidean", block_rows=1024) -> tuple[float, float]:
    """``(low, high)``: the preference interval the AP family's search for k bisects.

    ``high = s_max``, the greatest off-diagonal similarity. ``low`` is a preference at or below
    which one exemplar is optimal, from the net similarity (Frey & Dueck 2007: the points'
    similarities to their exemplars plus the preference once per exemplar), as R apcluster's
    ``preferenceRange(method="bound")``::

        low = dpsim1 - B,   dpsim1 = max_j sum_{i != j} s_ij    (the best single exemplar)
                            B = sum_i m_i - m_(1) - m_(2),  m_i = max_{j != i} s_ij

    ``B`` bounds the best data similarity of two exemplars from above (an exemplar's own term is
    0, any other point's at most ``m_i``; ``m_(1) <= m_(2)`` the two least ``m_i``), and of any
    ``k > 2`` too, so ``k`` exemplars beat one only when ``(k - 1) p > dpsim1 - B``. The older
    bracket end ``N s_min`` is valid but far lower (ecoli: -132,600), and affinity propagation
    does not converge in 1,000 iterations that far below the similarities: at -66,000 it
    returned every point as its own exemplar, so the bisection moved away from k (issue 38's
    regenerated leaderboard: AP given k found 1 cluster on ecoli and voting). ``kind`` as
    :func:`similarity_range`; computed in blocks of ``block_rows`` rows, never the whole matrix.
    """
    n = np.shape(X)[0]
    column_sums = np.zeros(n)
    row_max = np.empty(n)
    for rows, S in _similarity_blocks(X, kind, block_rows, "a preference bracket"):
        S[~np.isfinite(S)] = np.nan  # a precomputed -inf (a pair never joined) bounds nothing
        column_sums += np.nansum(S, axis=0)
        row_max[rows] = np.nanmax(np.where(np.isnan(S), -np.inf, S), axis=1)
    row_max[~np.isfinite(row_max)] = np.nan
    high = float(np.nanmax(row_max)) if np.isfinite(row_max).any() else 0.0
    finite = row_max[np.isfinite(row_max)]
    least_two = np.partition(finite, 1)[:2] if len(finite) > 2 else finite
    low = float(column_sums.max() - (finite.sum() - least_two.sum()))
    if not low < high:  # two points: one exemplar is optimal up to s_12 itself
        low = high - max(abs(high), 1.0)
    return low, high


#: Where a search looks below its bracket when every fit in it gave too many clusters: preferences
#: 10 and 100 x as far below ``high`` (s_max) as the bracket's low end (:func:`_search_below`).
BELOW_BRACKET = (10.0, 100.0)


def _search_below(fit, n_clusters, low, high, n_fits, best, max_iter) -> PreferenceSearch:
    """The search below the bracket, for a search whose every fit gave more than ``n_clusters``.

    ``preference_bracket``'s low end is where one exemplar is optimal for the *similarities*; a
    constrained method changes the objective (SCSSAP's hard constraints add penalties up to
    2 N (s_max - s_min), eqs. 4-5; SSAP-L's macro-nodes need no exemplar), and its fits can keep more
    than ``n_clusters`` exemplars down to that end (SCSSAP on balance, k = 3, pairs_mid trial 0: 4 or 5
    clusters across the bracket, 3 at 10 x its low end). Probes at ``high - f (high - low)`` for ``f``
    in :data:`BELOW_BRACKET`; at the first that gives at most ``n_clusters``, a bisection between it
    and the previous probe (or ``low``) finds the plateau's upper end as :func:`bisect_preference`
    does. Where no probe reaches ``n_clusters``, the bracket's closest fit stands (``exact=False``; 2 fits
    more): a count below the bracket that is closer but not ``n_clusters`` is another regime, not the
    answer (SCSSAP on wdbc, k = 2: 3 clusters there with ARI 0.05, 4 in the bracket with 0.63).
    ``fit`` keeps the best fit in ``best`` (:func:`fit_for_n_clusters`); ``n_fits`` counts every fit.
    """
    kept = dict(best)
    upper = low
    for factor in BELOW_BRACKET:
        probe = high - factor * (high - low)
        found = int(fit(probe))
        n_fits += 1
        if found <= n_clusters:
            deeper = bisect_preference(fit, n_clusters, probe, upper, max_iter=max_iter)
            n_fits += deeper.n_fits
            if deeper.exact:
                return PreferenceSearch(deeper.preference, int(n_clusters), n_fits, True)
            break
        upper = probe
    if best["found"] != n_clusters:
        best.clear()
        best.update(kept)
    return PreferenceSearch(best["preference"], best["found"], n_fits, best["found"] == n_clusters)


def _counted(fit_at, counts: list):
    """``fit_at`` that also appends each count it returns to ``counts``."""
    def fit(preference):
        found = int(fit_at(preference))
        counts.append(found)
        return found
    return fit


@dataclass(frozen=True)
class PreferenceSearch:
    """Outcome of :func:`bisect_preference`."""

    preference: float
    n_clusters: int
    n_fits: int
    exact: bool


def bisect_preference(fit, n_clusters, low, high, *, max_iter=20, rtol=0.05, seen=None) -> PreferenceSearch:
    """The highest preference at which an exemplar method finds ``n_clusters`` clusters.

    Bisection on the preference, as R's ``apcluster::apclusterK`` (Bodenhofer et al.
    2011): the bracket starts at ``[low, high]`` (:func:`preference_bracket`: a higher
    preference gives more exemplars); each step fits at the midpoint ``p``, and when it
    finds at most ``n_clusters`` clusters the bracket becomes ``[p, high]``, else
    ``[low, p]``. apclusterK stops at the first ``p`` that gives ``n_clusters``; this
    search goes on to the **upper end of that plateau**: it stops once a preference gave
    ``n_clusters`` and the bracket above it is narrower than ``rtol`` of it, or after
    ``max_iter`` fits, and returns the highest preference that gave ``n_clusters``. The
    choice matters for the constrained variants: labels or cannot-links already force
    ``n_clusters`` clusters at a low preference, where every unlabeled point joins one of
    them (SSAP-L on iris with 5 labels per class: 3 clusters of 140, 5 and 5 points, ARI
    0.005, at the bracket's midpoint); at the plateau's upper end the data, not the
    constraints, decide the partition (ARI 0.80 there). Without an exact count it returns
    the preference whose count was closest (ties: the first found), with ``exact=False``.

    **Earlier fits of the same problem** (``seen``, preference -> count; :class:`SharedPreferenceFits`)
    start the search where they leave it: the bracket becomes ``[a, b]``, ``a`` the highest seen
    preference that gave at most ``n_clusters``, ``b`` the lowest that gave more (each only if it lies
    inside ``[low, high]``); the highest seen preference that gave ``n_clusters`` is already the exact
    one, and the search stops before fitting when the bracket above it is narrower than ``rtol`` of
    it. Counts that are not monotone in the preference across ``seen`` (``a >= b``) leave the
    bracket as given. The stopping rule is unchanged, so the answer meets the same contract (within
    ``rtol`` of the plateau's upper end); its exact value may differ from the unseeded search's,
    whose midpoints are those of ``[low, high]``.

    Parameters
    ----------
    fit : callable ``fit(preference) -> int``
        Fits the method at that preference and returns the number of clusters found.
    n_clusters : int
    low, high : float
        Initial bracket, ``low < high``.
    max_iter : int, default=20
        Most fits (bisection steps). After ``m`` steps the bracket is
        ``(high - low) / 2^m`` wide.
    rtol : float, default=0.05
        How close to the plateau's upper end the returned preference must be: the bracket
        above it at most ``rtol * |preference|`` wide.
    seen : dict of float to int, optional
        Counts found at these preferences by earlier fits of the same problem (not refitted).

    Returns
    -------
    PreferenceSearch
        ``preference``, the ``n_clusters`` it gave, ``n_fits`` (calls of ``fit``, 0 when ``seen``
        already answers) and ``exact`` (whether that is the count asked for).
    """
    closest, exact = None, None
    if seen:
        low, high, exact, closest = _seeded_bracket(seen, n_clusters, low, high)
        if exact is not None and (high - low) <= rtol * abs(exact):  # the seen fits already answer
            return PreferenceSearch(exact, int(n_clusters), 0, True)
    for step in range(1, int(max_iter) + 1):
        p = 0.5 * (low + high)
        found = int(fit(p))
        if found == n_clusters:
            exact = p if exact is None else max(exact, p)  # unseeded, the bracket only rises past an exact count
        elif closest is None or abs(found - n_clusters) < abs(closest[1] - n_clusters):
            closest = (p, found)
        if found <= n_clusters:
            low = p
        else:
            high = p
        if exact is not None and high - low <= rtol * abs(exact):
            return PreferenceSearch(exact, int(n_clusters), step, True)
    if exact is not None:
        return PreferenceSearch(exact, int(n_clusters), int(max_iter), True)
    return PreferenceSearch(closest[0], closest[1], int(max_iter), False)


def _seeded_bracket(seen: dict, n_clusters: int, low: float, high: float):
    """``(low, high, exact, closest)`` where earlier fits ``seen`` leave a search (:func:`bisect_preference`)."""
    inside = sorted((p, c) for p, c in seen.items() if low <= p <= high)
    at_most = [p for p, c in inside if c <= n_clusters]
    above = [p for p, c in inside if c > n_clusters]
    a, b = max(at_most, default=low), min(above, default=high)
    if a < b:  # counts monotone across the seen fits: they bound the search
        low, high = a, b
    exact = max((p for p, c in inside if c == n_clusters), default=None)
    closest = None  # the first found among equals: the lowest preference (seen has no order)
    for p, c in inside:
        if c != n_clusters and (closest is None or abs(c - n_clusters) < abs(closest[1] - n_clusters)):
            closest = (p, c)
    return low, high, exact, closest


def fit_for_n_clusters(estimator, fit_at, n_clusters: int, low: float, high: float, *,
                       max_iter: int = 20) -> PreferenceSearch:
    """Fit ``estimator`` at the preference that gives ``n_clusters`` (:func:`bisect_preference`) and
    leave it in the state of the kept fit: the exact one at the highest preference, else the closest
    (ties: the first found).

    ``fit_at(preference) -> int`` fits the estimator at that preference (setting its fitted,
    ``_``-suffixed attributes) and returns the clusters found. The search's own fits do not warn (a
    step that does not converge is a step, not the answer); the caller says whether the count was
    hit (``exact``). One place for the AP family's and SCAP's ``n_clusters`` (issue 38).

    **Below the bracket.** When every fit of the search gave more than ``n_clusters``, it probes
    below the bracket (:func:`_search_below`: 10 and 100 x as far below ``high``; where a probe gives
    at most ``n_clusters``, a bisection up from it): a constrained method's fits can keep too many
    exemplars down to the bracket's low end (issue 50). 2 fits more where no probe helps.

    **A second pass where a fit that did not converge misled the first.** A message-passing fit that
    stops unconverged returns a count that says nothing about the preference (AP on voting, k = 2:
    232 clusters, one per point, at the bracket's midpoint; the bisection then went down, where AP
    never converged, and kept 1 cluster in 7 of 10 trials). When the first pass ends without
    ``n_clusters`` and one of its fits did not converge (the estimator's ``converged_`` is False), a
    second bisection over the same bracket reads such a fit's count, unless it is ``n_clusters``, as
    too few clusters: it moves up, towards the preferences where the fits converge (on voting: 2
    clusters, converged, in the second pass's second fit). The first pass is apclusterK's
    unchanged, so a search that found ``n_clusters`` is the same fit as before; the kept fit is the
    exact one if either pass found it, else the closest over both passes; ``n_fits`` counts both.

    **Inside** :class:`SharedPreferenceFits` (a tuner's fold: one data set, one constraint set), the
    counts of the fold's earlier searches with the same estimator settings but ``n_clusters`` seed
    this one (``seen`` of :func:`bisect_preference`): CVCP's grid over ``k-1, k, k+1`` runs one search
    per fold and k, and the second and third start where the first left the bracket. A kept
    preference that an earlier search fitted is fitted once more here, to leave its state.
    """
    import warnings

    from .base import ConvergenceWarning, InconsistentConstraintsWarning

    counts = []  # every fit's count: the search below the bracket runs only if all exceed n_clusters
    fit_at = _counted(fit_at, counts)
    record = SharedPreferenceFits.for_search(estimator, low, high, max_iter)
    best, unconverged, fitted = {}, [], set()

    def fit_and_keep(preference, second_pass=False):  # the fit bisect returns: the last exact, else the first closest
        found = int(fit_at(preference))
        converged = bool(getattr(estimator, "converged_", True))
        unconverged.append(not converged)
        fitted.add(preference)
        record[preference] = (found, converged)
        if found == n_clusters or ("found" not in best or
                                   (best["found"] != n_clusters and abs(found - n_clusters) < abs(best["found"] - n_clusters))):
            best.update(found=found, preference=preference,
                        state={k: v for k, v in vars(estimator).items() if k.endswith("_")})
        if second_pass and not converged and found != n_clusters:
            return -1  # read as too few: the bracket rises
        return found

    def seen(second_pass=False):  # the shared record as the pass reads it (never this search's own fits)
        return {p: (-1 if second_pass and not ok and c != n_clusters else c)
                for p, (c, ok) in record.items() if p not in fitted}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", InconsistentConstraintsWarning)  # said once, before the search
        earlier = seen()
        unconverged.extend(not record[p][1] for p in earlier)  # fits this search would otherwise have run
        search = bisect_preference(fit_and_keep, int(n_clusters), low, high, max_iter=max_iter, seen=earlier)
        if not search.exact and any(unconverged):
            again = bisect_preference(lambda p: fit_and_keep(p, second_pass=True), int(n_clusters), low, high,
                                      max_iter=max_iter, seen=seen(second_pass=True))
            n_fits = search.n_fits + again.n_fits
            search = (PreferenceSearch(again.preference, int(n_clusters), n_fits, True) if again.exact else
                      PreferenceSearch(best.get("preference", search.preference), best.get("found", search.n_clusters),
                                       n_fits, False))
        if best.get("preference") != search.preference:  # the kept fit is an earlier search's: fit it here
            found = int(fit_at(search.preference))
            record[search.preference] = (found, bool(getattr(estimator, "converged_", True)))
            best.update(found=found, preference=search.preference,
                        state={k: v for k, v in vars(estimator).items() if k.endswith("_")})
            search = PreferenceSearch(search.preference, found, search.n_fits + 1, found == n_clusters)
    if not search.exact and counts and min(counts) > n_clusters:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", InconsistentConstraintsWarning)
            search = _search_below(fit_and_keep, int(n_clusters), low, high, search.n_fits, best, max_iter)
    vars(estimator).update(best["state"])
    return search


class SharedPreferenceFits:
    """The preference fits of one problem (one data set, one constraint set), shared by the searches for
    ``n_clusters`` (:func:`fit_for_n_clusters`) run while it is active (``with record: ...``).

    A tuner's fold fits the same method at ``k-1``, ``k`` and ``k+1`` (CVCP's grid, issue 38) on the
    same data and constraints; each fit searches its preference by bisection over the same bracket,
    so without sharing a tuned trial runs folds x grid full searches (issue 55: 9 searches of 11-14
    fits for SCAP on iris). With it, every search reads the counts the fold's earlier searches found
    (keyed by the estimator's class and parameters but ``n_clusters``, and the bracket), and starts
    from the bracket they leave (:func:`bisect_preference`, ``seen``).

    The caller promises what the key cannot see: every fit in the block is on the same ``X`` and
    constraints. Shared only for an estimator whose ``random_state`` is an int (or that has none): a
    count found under another random draw is not the same fit.

    ``covers_nested=True``: blocks opened inside this one share its record instead of their own. The
    caller promises that what differs between them does not change a fit: the folds of a method
    that uses no supervision (``MethodSpec.supervision`` empty; SCAP, AP) differ only in
    constraints the method ignores, so its grid over k costs one search per k, not one per fold and k.
    """

    _active: contextvars.ContextVar = contextvars.ContextVar("ccbench_shared_preference_fits", default=None)

    def __init__(self, covers_nested: bool = False):
        self.covers_nested = bool(covers_nested)
        self._fits: dict = {}
        self._tokens: list = []

    def __enter__(self):
        outer = self._active.get()
        self._tokens.append(None if outer is not None and outer.covers_nested else self._active.set(self))
        return self

    def __exit__(self, *exc):
        token = self._tokens.pop()
        if token is not None:
            self._active.reset(token)
        return False

    @classmethod
    def for_search(cls, estimator, low: float, high: float, max_iter: int) -> dict:
        """The record (preference -> ``(count, converged)``) of ``estimator``'s problem in the active block;
        a fresh dict, shared with nothing, outside one or for an estimator with a random seed."""
        active = cls._active.get()
        params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else None
        seed = (params or {}).get("random_state")
        if active is None or params is None or not (seed is None and "random_state" not in params or
                                                    isinstance(seed, (int, np.integer))):
            return {}
        settings = repr(sorted((k, v) for k, v in params.items() if k != "n_clusters"))
        return active._fits.setdefault((type(estimator).__qualname__, settings, float(low), float(high), int(max_iter)), {})

    @property
    def n_problems(self) -> int:
        """Distinct (estimator settings, bracket) whose fits are recorded."""
        return len(self._fits)
