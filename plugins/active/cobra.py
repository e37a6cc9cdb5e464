"""``cobra``: the query side of COBRA (Van Craenendonck, Dumancic & Blockeel, "COBRA: a fast and simple
method for active clustering with pairwise constraints", IJCAI 2017), as a query strategy.

COBRA over-clusters the data with k-means and merges the small clusters by asking about them. As a
strategy (its pairs feed another method, e.g. PCK-means; COBRAS, the method that clusters by asking,
is ``ccbench_plugins.cobras``):

1. **Super-instances.** k-means with K = ``n_super_instances`` (fewer when ``X`` has fewer distinct
   points) splits the points into S_1..S_K (empty parts dropped), with centroids

       mu_s = (1 / |S_s|) sum_{x in S_s} x,

   and represents each by its member closest to the centroid, r_s = argmin_{x in S_s} ||x - mu_s||
   (ties: the lowest index). The k-means seed is drawn from ``rng`` when a run starts (an empty
   ``asked``) and kept for the run.
2. **Order.** The pairs of super-instances are visited in increasing centroid distance
   ||mu_s - mu_t|| (ties in index order); a visit asks (r_s, r_t).
3. **Implied answers are not asked.** With the must-link answers so far as the edges of a graph
   over the points, C(x) the connected component of x (must-link transitivity), the answer for
   (r_s, r_t) is implied, and the pair skipped, when

       C(r_s) = C(r_t)                                     (implied must-link), or
       some cannot-link answer (a, b) has {C(a), C(b)} = {C(r_s), C(r_t)}   (entailed cannot-link).

   Every asked pair is implied by its own answer, so no pair is asked twice. All answers count,
   whoever proposed them. ``next_pair`` returns the first pair of the order not implied.

Walking a fixed order and skipping the implied pairs is COBRA's merging loop (ask the closest pair of
clusters not known to be cannot-linked, merge on a must-link, start again): after a merge every pair
earlier in the order is still implied (a component only grows, and a cannot-link between two
components holds for the components that absorb them), so the first pair not implied is the closest
pair of clusters, the distance of two clusters being that of their closest super-instance centroids.

When every pair of representatives is implied (COBRA's clustering is complete; at most K (K - 1) / 2
questions, fewer with transitivity), the pairs are drawn uniformly among those not asked (our choice,
as the Explore-Consolidate family does when it runs out of candidates).

Choices we could not check against the paper (not at hand here): K = 25 by default (the paper studies
several numbers of super-instances; 25 is the one we use, ``n_super_instances=`` changes it); the
representative is the member closest to the centroid (COBRAS's ``cobras_ts`` takes it so, as we recall;
the paper may say medoid); k-means with ``n_init = 10`` restarts (scikit-learn's classic default, as
``ccbench_plugins.cobras`` uses).
"""

from __future__ import annotations

import hashlib
import numbers
import warnings

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from .core import check_history, pair_codes, random_unasked_pair

__all__ = ["COBRA", "super_instances", "representative_pairs", "implied"]

#: k-means restarts of the over-clustering (scikit-learn's classic default).
KMEANS_N_INIT = 10


def _centroids(X: np.ndarray, assign: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sizes and the member means of the super-instances ``assign`` labels (0..K'-1, none empty)."""
    sizes = np.bincount(assign)
    sums = np.zeros((len(sizes), X.shape[1]))
    np.add.at(sums, assign, X)
    return sizes, sums / sizes[:, None]


def super_instances(X: np.ndarray, n_super_instances: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(assign, representatives)``: each point's super-instance (0..K'-1, empty k-means parts dropped)
    and each super-instance's member closest to its centroid (module docstring, step 1)."""
    from sklearn.cluster import KMeans

    n = len(X)
    k = min(int(n_super_instances), len(np.unique(X, axis=0)))
    with warnings.catch_warnings():  # duplicates leave k-means centres empty: dropped below
        warnings.simplefilter("ignore")
        raw = KMeans(k, n_init=KMEANS_N_INIT, random_state=seed).fit(X).labels_
    _, assign = np.unique(raw, return_inverse=True)
    sizes, centroids = _centroids(X, assign)
    offsets = ((X - centroids[assign]) ** 2).sum(1)
    order = np.lexsort((np.arange(n), offsets, assign))  # by super-instance, then offset, then index
    first = np.r_[0, np.cumsum(sizes)[:-1]]
    return assign, order[first]


def representative_pairs(X: np.ndarray, assign: np.ndarray, reps: np.ndarray) -> np.ndarray:
    """The (m, 2) pairs of representatives, in increasing distance of their super-instances' centroids
    (module docstring, step 2; ties in ``np.triu_indices`` order)."""
    _, centroids = _centroids(X, assign)
    a, b = np.triu_indices(len(reps), k=1)
    dist = ((centroids[a] - centroids[b]) ** 2).sum(1)
    order = np.argsort(dist, kind="stable")
    return np.c_[reps[a[order]], reps[b[order]]]


def implied(pairs: np.ndarray, n: int, asked: np.ndarray, answers: np.ndarray) -> np.ndarray:
    """Whether the answers so far imply each pair's answer (module docstring, step 3): both points in
    one must-link component, or a cannot-link answer between their two components."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    ml = asked[answers]
    graph = coo_matrix((np.ones(len(ml)), (ml[:, 0], ml[:, 1])), shape=(n, n))
    _, component = connected_components(graph, directed=False)
    ca, cb = component[pairs[:, 0]], component[pairs[:, 1]]
    cannot = np.unique(pair_codes(component[asked[~answers]], n))
    return (ca == cb) | np.isin(pair_codes(np.c_[ca, cb], n), cannot)


def _fingerprint(X: np.ndarray):
    return X.shape, hashlib.sha1(np.ascontiguousarray(X).tobytes()).hexdigest()


class COBRA:
    """COBRA's query selection (the module docstring has the rules).

    Parameters
    ----------
    n_super_instances : int >= 2, default=25
        K, the k-means clusters the data are over-clustered into.

    The super-instances are kept between calls while ``X`` is the same, and rebuilt, with a k-means
    seed drawn from ``rng``, when a run starts (an empty ``asked``), so a run's pairs depend on its own
    seed only. A history begun elsewhere (a non-empty ``asked`` on a new instance) gets the
    super-instances of a seed drawn at that first call.
    """

    def __init__(self, n_super_instances: int = 25):
        k = n_super_instances
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 2:
            raise ValueError(f"COBRA: n_super_instances must be an int >= 2 (the k-means clusters the data are "
                             f"over-clustered into), got {n_super_instances!r}")
        self.n_super_instances = int(k)
        self._key = self._pairs = None

    def _order(self, X, rng) -> np.ndarray:
        seed = int(rng.integers(2**31 - 1))
        assign, reps = super_instances(X, self.n_super_instances, seed)
        self._pairs, self._key = representative_pairs(X, assign, reps), _fingerprint(X)
        return self._pairs

    def next_pair(self, X, asked, answers, labels=None, rng=None) -> tuple[int, int]:
        X, asked, answers = check_history(X, asked, answers)
        rng = np.random.default_rng(rng)
        if not len(asked) or self._key != _fingerprint(X):
            pairs = self._order(X, rng)
        else:
            pairs = self._pairs
        open_ = np.flatnonzero(~implied(pairs, len(X), asked, answers))
        if not len(open_):
            return random_unasked_pair(len(X), asked, rng)
        i, j = pairs[open_[0]]
        return int(i), int(j)

    def __repr__(self):
        return f"COBRA(n_super_instances={self.n_super_instances})"
