"""Similarity graphs shared by the algorithm plugins.

These are data preparation, not algorithms: every plugin that needs a
similarity matrix takes it from here so that there is one definition of
each. (The k-NN graph and normalised Laplacian live in the spectral family's
core, their only user.)
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "negative_sq_euclidean",
    "median_preference",
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
