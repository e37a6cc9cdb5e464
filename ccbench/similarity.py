"""Similarity graphs shared by the algorithm plugins.

These are data preparation, not algorithms: every plugin that needs a
similarity matrix or a graph Laplacian takes it from here so that there is
one definition of each.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from sklearn.neighbors import NearestNeighbors

__all__ = [
    "negative_sq_euclidean",
    "median_preference",
    "gaussian_knn_graph",
    "normalized_laplacian",
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


def gaussian_knn_graph(X, n_neighbors: int = 10, *, sigma=None, symmetrize: str = "max") -> sparse.csr_matrix:
    """Symmetric k-NN graph with Gaussian weights exp(-||x_i - x_j||^2 / (2 sigma^2)).

    ``sigma=None`` uses the mean distance to the k-th neighbour. ``symmetrize``
    is ``"max"`` (edge if either is a neighbour of the other) or ``"mean"``.
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if not 1 <= n_neighbors < n:
        raise ValueError(f"n_neighbors must be in [1, {n - 1}] for {n} points, got {n_neighbors}")
    nn = NearestNeighbors(n_neighbors=n_neighbors + 1).fit(X)
    dist, idx = nn.kneighbors(X)
    dist, idx = dist[:, 1:], idx[:, 1:]
    if sigma is None:
        sigma = float(np.mean(dist[:, -1])) or 1.0
    weights = np.exp(-(dist**2) / (2.0 * sigma**2))
    rows = np.repeat(np.arange(n), n_neighbors)
    W = sparse.csr_matrix((weights.ravel(), (rows, idx.ravel())), shape=(n, n))
    if symmetrize == "max":
        W = W.maximum(W.T)
    elif symmetrize == "mean":
        W = (W + W.T) * 0.5
    else:
        raise ValueError(f"symmetrize must be 'max' or 'mean', got {symmetrize!r}")
    return W.tocsr()


def normalized_laplacian(W, *, return_diag: bool = False):
    """L = I - D^{-1/2} W D^{-1/2} (isolated nodes get degree 1)."""
    dense = not sparse.issparse(W)
    W = sparse.csr_matrix(W, dtype=np.float64)
    deg = np.asarray(W.sum(axis=1)).ravel()
    deg[deg == 0] = 1.0
    d = 1.0 / np.sqrt(deg)
    D = sparse.diags(d)
    L = sparse.identity(W.shape[0], format="csr") - D @ W @ D
    L = L.toarray() if dense else L.tocsr()
    return (L, d) if return_diag else L
