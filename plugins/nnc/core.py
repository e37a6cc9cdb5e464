"""Clustering kernels of the NNC family: farthest-point (Gonzalez) and nearest-neighbour
clustering from labeled subsets (Yang et al. 2015, Algorithms 1 and 2), in one routine.

Both are "grow a set R of representatives, then give every point to its nearest
representative": FPC starts R with one random point, NNC with the k super-instances
alpha_i = S_i whose distance to p is dMax(p, S_i) (proof of Theorem 9). When fewer labeled
subsets than clusters are given, NNC continues with farthest points, i.e. FPC seeded by
the super-instances, so no supervision at all is exactly FPC.

Work is O(n * (sum |S_i| + k) * d) time and O(n) extra memory: one compiled pass over
the points per labeled set and per new centre (:mod:`._kernels`), never an n x n array.
Only the ordering of distances matters, so squared distances are used throughout.

Two cases the paper does not treat, each decided here and reported, never silent:

- *Fewer clusters than asked*: when every point left coincides with a representative
  (duplicated points, or every point labeled), a new farthest-point centre would be an
  empty cluster. The growth stops there; the estimators warn (:class:`FewerClustersWarning`)
  and record ``n_clusters_found_`` (the harness records ``n_clusters_found`` in every row).
- *Cannot-links beyond the labeled subsets*: Algorithm 2 reads labeled subsets, whose
  cannot-links (across subsets) always hold. A cannot-link touching a point outside every
  subset is enforced by :func:`enforce_cannot_links`: the points it touches are assigned
  greedily (the most confident first: smallest dMax), each to its nearest representative
  that none of its cannot-linked, already placed partners holds. Greedy can miss a
  feasible assignment; such a point keeps its nearest representative and the estimator
  warns (the row's ``n_violated`` counts it).
"""

from __future__ import annotations

import numpy as np

__all__ = ["grow_and_assign", "labeled_groups", "enforce_cannot_links", "FewerClustersWarning"]


class FewerClustersWarning(UserWarning):
    """The clustering has fewer non-empty clusters than ``n_clusters`` (see the module notes)."""


def labeled_groups(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(classes, members, starts)``: the distinct labels >= 0, the labeled indices sorted
    by label, and where each label's block starts in ``members``."""
    idx = np.flatnonzero(labels >= 0)
    order = np.argsort(labels[idx], kind="stable")
    members = idx[order]
    classes, starts = np.unique(labels[members], return_index=True)
    return classes, members, starts


def grow_and_assign(
    X: np.ndarray,
    n_clusters: int,
    *,
    members: np.ndarray,
    starts: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Labels 0..n_found-1 and the indices of the farthest-point centres added.

    Groups ``members[starts[i]:starts[i+1]]`` are the labeled subsets S_i (cluster i,
    labeled points keep it); up to ``n_clusters - len(starts)`` more centres are added by
    Gonzalez's rule (the next centre maximises dMin(q, R)); with no groups the first
    centre is drawn from ``rng`` (Algorithm 1). The growth stops early when no point is
    left at a positive distance from the representatives (it would open an empty
    cluster), so ``len(starts) + len(centres)`` may be below ``n_clusters``.
    """
    from ._kernels import dmax_assign, nearer_centre

    n = len(X)
    n_groups = len(starts)
    mind = np.full(n, np.inf)
    labels = np.zeros(n, dtype=np.intp)
    if n_groups:
        ends = np.r_[starts[1:], len(members)]
        dmax_assign(X, np.ascontiguousarray(X[members]), starts, ends, mind, labels)
        mind[members] = -np.inf  # labeled points keep their subset and are never new centres
        labels[members] = np.repeat(np.arange(n_groups), ends - starts)
        nxt = int(np.argmax(mind))
    else:
        nxt = int(rng.integers(n))
    centres = []
    for j in range(n_groups, n_clusters):
        if n_groups + len(centres) > 0 and not mind[nxt] > 0:
            break  # every point left coincides with a representative: no new cluster
        centres.append(nxt)
        nearer_centre(X, X[nxt].copy(), j, mind, labels)
        mind[nxt] = -np.inf
        nxt = int(np.argmax(mind))
    return labels, np.asarray(centres, dtype=np.intp)


def enforce_cannot_links(
    X: np.ndarray,
    labels: np.ndarray,
    cannot_link: np.ndarray,
    *,
    members: np.ndarray,
    starts: np.ndarray,
    centres: np.ndarray,
) -> tuple[np.ndarray, int]:
    """Reassign the free points that cannot-links touch so that the cannot-links hold.

    ``labels`` come from :func:`grow_and_assign` (cluster g < len(starts) is S_g, the
    others the farthest-point ``centres``). A point is *fixed* when it is labeled or a
    centre; the free points of cannot-link pairs are placed one at a time in order of
    their distance to their nearest representative (dMax to S_g, distance to a centre;
    ties: point index), each to the nearest cluster not held by a cannot-linked partner
    already placed (fixed points count as placed). Returns the new labels and the number
    of points for which no allowed cluster was left (they keep their nearest one).
    Work: O(|T| * (sum |S_g| + k) * d) for the |T| touched points, no n x n array.
    """
    from scipy.spatial.distance import cdist

    cl = np.asarray(cannot_link, dtype=np.intp).reshape(-1, 2)
    fixed = np.zeros(len(X), dtype=bool)
    fixed[members] = True
    fixed[centres] = True
    cl = cl[~(fixed[cl[:, 0]] & fixed[cl[:, 1]])]  # fixed-fixed pairs are the subsets' own
    if len(cl) == 0:
        return labels, 0
    touched = np.unique(cl[~fixed[cl]])
    # distance (squared) of each touched point to every cluster's representative(s)
    ends = np.r_[starts[1:], len(members)]
    cols = [cdist(X[touched], X[members[a:b]], "sqeuclidean").max(axis=1) for a, b in zip(starts, ends)]
    if len(centres):
        cols.append(cdist(X[touched], X[centres], "sqeuclidean"))
    dist = np.column_stack(cols) if cols else np.zeros((len(touched), 0))
    order = np.lexsort((touched, dist.min(axis=1)))
    # partners of each touched point, through a CSR of the symmetric pair list
    both = np.r_[cl, cl[:, ::-1]]
    both = both[np.argsort(both[:, 0], kind="stable")]
    first = np.searchsorted(both[:, 0], touched)
    last = np.searchsorted(both[:, 0], touched, side="right")
    placed = fixed.copy()
    labels = labels.copy()
    n_stuck = 0
    for t in order:  # one step per touched point (not per pair of points)
        p = touched[t]
        partners = both[first[t]:last[t], 1]
        taken = labels[partners[placed[partners]]]
        allowed = np.ones(dist.shape[1], dtype=bool)
        allowed[taken] = False
        if allowed.any():
            labels[p] = int(np.argmin(np.where(allowed, dist[t], np.inf)))
        else:
            labels[p] = int(np.argmin(dist[t]))
            n_stuck += 1
        placed[p] = True
    return labels, n_stuck


# -- estimator plumbing shared by fpc, nnc and the *_xing baselines --------------------


def warn_fewer_clusters(estimator, n_asked: int) -> None:
    """Set ``n_clusters_found_`` and warn when it is below ``n_asked``."""
    import warnings

    found = int(len(np.unique(estimator.labels_)))
    estimator.n_clusters_found_ = found
    if found < n_asked:
        warnings.warn(
            f"found {found} non-empty clusters of the n_clusters={n_asked} asked: every remaining "
            f"point coincides with a cluster's representative (duplicated points, or every point "
            f"labeled); n_clusters_found_={found}",
            FewerClustersWarning,
            stacklevel=3,
        )


def supervision_sets(cons) -> np.ndarray:
    """Partial labels (-1 = none) naming the labeled subsets S_i of a ``Constraints``.

    Partial labels when the scheme revealed labels; otherwise the must-link chunklets
    (every group of two or more must-linked points is one S_i). Raises
    ``InfeasibleConstraintsError`` when a cannot-link joins two points of one S_i.
    """
    from ccbench.base import InfeasibleConstraintsError

    if cons.labels is not None:
        part = np.asarray(cons.labels, dtype=np.intp)
    else:
        part = np.full(cons.n_samples, -1, dtype=np.intp)
        for i, group in enumerate(cons.chunklets()):
            part[group] = i
    cl = cons.cannot_link
    same = (part[cl[:, 0]] >= 0) & (part[cl[:, 0]] == part[cl[:, 1]])
    if np.any(same):
        a, b = cl[np.argmax(same)]
        raise InfeasibleConstraintsError(
            f"cannot-link ({a}, {b}) joins two points of one labeled subset / must-link "
            f"chunklet; no partition respects the supervision"
        )
    return part


def fit_metric(estimator, X, cons):
    """Learn ``estimator.metric`` from the pairs of ``cons``; set the metric attributes and
    return X in the learned space."""
    import time
    import warnings

    from .metric_learning import LearnedMetric, MetricFallbackWarning, learn_metric

    t0 = time.perf_counter()
    if estimator.metric != "euclidean" and len(cons) == 0:
        # nothing to learn from (the unsupervised cell of a sweep, scikit-learn's checks)
        warnings.warn(
            f"metric={estimator.metric!r} is learned from must-link / cannot-link pairs or "
            f"labels, but no supervision was given: clustering in the Euclidean metric "
            f"(metric_status_='no_supervision')",
            MetricFallbackWarning,
            stacklevel=3,
        )
        learned = LearnedMetric(estimator.metric, None, "no_supervision")
    else:
        learned = learn_metric(X, cons.must_link, cons.cannot_link, estimator.metric)
    estimator.metric_ = learned
    estimator.metric_weights_ = learned.weights
    estimator.metric_status_ = learned.status
    estimator.converged_ = bool(learned.converged)
    Xt = learned.transform(X)
    estimator.metric_time_ = time.perf_counter() - t0
    return Xt
