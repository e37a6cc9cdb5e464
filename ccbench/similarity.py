"""Similarity graphs shared by the algorithm plugins.

These are data preparation, not algorithms: every plugin that needs a
similarity matrix takes it from here so that there is one definition of
each. (The k-NN graph and normalised Laplacian live in the spectral family's
core, their only user.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "negative_sq_euclidean",
    "median_preference",
    "similarity_range",
    "PreferenceSearch",
    "bisect_preference",
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
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n < 2:
        raise ValueError("a similarity range needs at least 2 points")
    lo, hi = np.inf, -np.inf
    for start in range(0, n, block_rows):
        rows = np.arange(start, min(start + block_rows, n))
        if kind == "precomputed":
            S = np.array(X[rows], dtype=np.float64)
        else:
            S = negative_sq_euclidean(X[rows], X)
            if kind == "euclidean":
                S = -np.sqrt(-S)
        S[np.arange(len(rows)), rows] = np.nan
        lo, hi = min(lo, float(np.nanmin(S))), max(hi, float(np.nanmax(S)))
    return lo, hi


@dataclass(frozen=True)
class PreferenceSearch:
    """Outcome of :func:`bisect_preference`."""

    preference: float
    n_clusters: int
    n_fits: int
    exact: bool


def bisect_preference(fit, n_clusters, low, high, *, max_iter=20) -> PreferenceSearch:
    """The preference at which an exemplar method finds ``n_clusters`` clusters.

    Bisection on the preference, as R's ``apcluster::apclusterK`` (Bodenhofer et al.
    2011) does: the bracket starts at ``[low, high]`` (the least and greatest
    similarity: a higher preference gives more exemplars); each step fits at the
    midpoint ``p``, and when it finds fewer clusters than ``n_clusters`` the bracket
    becomes ``[p, high]``, else ``[low, p]``. It stops as soon as ``n_clusters`` is
    found, or after ``max_iter`` fits; then it returns the preference whose count was
    closest (ties: the first found), with ``exact=False``.

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

    Returns
    -------
    PreferenceSearch
        ``preference``, the ``n_clusters`` it gave, ``n_fits`` (calls of ``fit``) and
        ``exact`` (whether that is the count asked for).
    """
    best = None
    for step in range(1, int(max_iter) + 1):
        p = 0.5 * (low + high)
        found = int(fit(p))
        if best is None or abs(found - n_clusters) < abs(best[1] - n_clusters):
            best = (p, found)
        if found == n_clusters:
            return PreferenceSearch(p, found, step, True)
        if found < n_clusters:
            low = p
        else:
            high = p
    return PreferenceSearch(best[0], best[1], int(max_iter), False)


def fit_for_n_clusters(estimator, fit_at, n_clusters: int, low: float, high: float, *,
                       max_iter: int = 20) -> PreferenceSearch:
    """Fit ``estimator`` at the preference that gives ``n_clusters`` (:func:`bisect_preference`) and
    leave it in the state of the kept fit: the exact one, else the closest (ties: the first found).

    ``fit_at(preference) -> int`` fits the estimator at that preference (setting its fitted,
    ``_``-suffixed attributes) and returns the clusters found. The search's own fits do not warn (a
    step that does not converge is a step, not the answer); the caller says whether the count was
    hit (``exact``). One place for the AP family's and SCAP's ``n_clusters`` (issue 38).
    """
    import warnings

    from .base import ConvergenceWarning, InconsistentConstraintsWarning

    best = {}

    def fit_and_keep(preference):
        found = int(fit_at(preference))
        if "found" not in best or abs(found - n_clusters) < abs(best["found"] - n_clusters):
            best.update(found=found, state={k: v for k, v in vars(estimator).items() if k.endswith("_")})
        return found

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", InconsistentConstraintsWarning)  # said once, before the search
        search = bisect_preference(fit_and_keep, int(n_clusters), low, high, max_iter=max_iter)
    vars(estimator).update(best["state"])
    return search
