"""COBS's pieces: the hyper-parameter grids of the pool, the constraint count, the selection rule.

Van Craenendonck & Blockeel (2017) select, from a pool of unsupervised clusterings, the one
that satisfies the most constraints. Everything algorithmic about the pool members lives in
their own families (reached through :func:`ccbench.registry.make_method`); this module only
builds their grids and scores and ranks their labels.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import silhouette_score
from sklearn.neighbors import NearestNeighbors

from ccbench.constraints import Constraints, pairs_with_labels  # noqa: F401 (cobs counts label-implied pairs)
from ccbench.similarity import negative_sq_euclidean

__all__ = ["pairs_with_labels", "k_grid", "preference_grid", "knn_scale", "satisfied", "select", "silhouette"]


def k_grid(k_max: int, n_samples: int, hint: int | None = None) -> list[int]:
    """The numbers of clusters the k-means and NCuts members try.

    ``2..k_max`` without a hint. With a hint ``h`` the same number of values (``k_max - 1``)
    centred on ``h`` and shifted up so that the smallest is at least 2:
    ``lo = max(2, h - (k_max - 2) // 2)``, ``lo..lo + k_max - 2``. Values above
    ``n_samples`` are dropped (k-means needs k <= n).
    """
    if hint is None:
        lo = 2
    else:
        lo = max(2, int(hint) - (k_max - 2) // 2)
    return [k for k in range(lo, lo + k_max - 1) if k <= n_samples]


def preference_grid(X: np.ndarray, quantiles) -> np.ndarray:
    """AP preferences: the ``quantiles`` of the off-diagonal similarities s(i, j) = -||x_i - x_j||^2.

    The similarity is AP's own (:func:`ccbench.similarity.negative_sq_euclidean`), and the
    quantile is taken over the same n (n - 1) off-diagonal entries as AP's default
    preference, so quantile 0.5 is exactly that default (the median; Frey & Dueck 2007).
    Quantile 0 is the smallest similarity, Frey & Dueck's choice for few clusters.
    """
    S = negative_sq_euclidean(X)
    n = S.shape[0]
    # the n x n array without its diagonal, as an (n - 1) x (n + 1) view minus its last
    # column (no boolean mask, no index arrays: one copy, made by np.quantile)
    off = S.reshape(-1)[1:].reshape(n - 1, n + 1)[:, :-1]
    return np.quantile(off, np.asarray(quantiles, dtype=np.float64))


def knn_scale(X: np.ndarray, n_neighbors: int) -> float:
    """The mean distance to the k-th nearest other point, k = min(n_neighbors, n - 1).

    The Gaussian width NCuts uses with ``sigma=None`` (``gaussian_knn_graph``, including its
    fall-back 1.0 when every such distance is 0); the sigma grid multiplies it, so the grid
    is scale-free.
    """
    n = X.shape[0]
    k = min(int(n_neighbors), n - 1)
    dist, _ = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    # distances come sorted with each point's own 0 among them; dropping one 0 from a sorted
    # row leaves its last entry, the k-th other neighbour, at column k
    return float(np.mean(dist[:, k])) or 1.0


def satisfied(labels: np.ndarray, constraints: Constraints) -> tuple[int, float]:
    """(number, weighted number) of constraints ``labels`` satisfy.

    A must-link is satisfied when its two points share a cluster, a cannot-link when they do
    not. The weighted number sums the pairs' weights (``Constraints.*_weight``: 0 = the pair
    does not count), so with the default weight 1 both are the plain count COBS maximises.
    """
    lab = np.asarray(labels)
    ml, cl = constraints.must_link, constraints.cannot_link
    ml_ok = lab[ml[:, 0]] == lab[ml[:, 1]]
    cl_ok = lab[cl[:, 0]] != lab[cl[:, 1]]
    count = int(ml_ok.sum() + cl_ok.sum())
    weighted = float(constraints.must_link_weight[ml_ok].sum() + constraints.cannot_link_weight[cl_ok].sum())
    return count, weighted


def select(scores, n_clusters, silhouettes=None) -> int:
    """Index of the winning pool member.

    The highest (weighted) number of satisfied constraints wins (COBS's criterion). Ties go,
    when ``silhouettes`` is given, to the higher silhouette (NaN: not computed or undefined,
    below every number), then to the member with fewer clusters, then to the earlier member
    in pool order (k-means, AP, NCuts; each in grid order). Members that produced no
    clustering carry ``-inf``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    n_clusters = np.asarray(n_clusters, dtype=np.float64)
    sil = np.zeros(len(scores)) if silhouettes is None else np.asarray(silhouettes, dtype=np.float64)
    sil = np.where(np.isnan(sil), -np.inf, sil)
    # np.lexsort sorts by the last key first; stable, so equal keys keep pool order
    order = np.lexsort((np.arange(len(scores)), n_clusters, -sil, -scores))
    return int(order[0])


def silhouette(X: np.ndarray, labels: np.ndarray, rows: np.ndarray | None = None) -> float:
    """Mean silhouette coefficient (Rousseeuw 1987) of ``labels`` on ``X`` (Euclidean), over
    ``rows`` only when given (a fixed subsample: the same for every member); NaN when it is
    undefined (fewer than 2 clusters, or every point its own cluster, among those rows)."""
    if rows is not None:
        X, labels = X[rows], labels[rows]
    k = len(np.unique(labels))
    if k < 2 or k >= len(labels):
        return float("nan")
    return float(silhouette_score(X, labels))
