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
"""

from __future__ import annotations

import numpy as np

__all__ = ["grow_and_assign", "labeled_groups"]


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
    """Labels 0..n_clusters-1 and the indices of the farthest-point centres added.

    Groups ``members[starts[i]:starts[i+1]]`` are the labeled subsets S_i (cluster i,
    labeled points keep it); ``n_clusters - len(starts)`` more centres are added by
    Gonzalez's rule (the next centre maximises dMin(q, R)); with no groups the first
    centre is drawn from ``rng`` (Algorithm 1).
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
        centres.append(nxt)
        nearer_centre(X, X[nxt].copy(), j, mind, labels)
        mind[nxt] = -np.inf
        nxt = int(np.argmax(mind))
    return labels, np.asarray(centres, dtype=np.intp)


# -- estimator plumbing shared by fpc, nnc and the *_xing baselines --------------------


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
    Xt = learned.transform(X)
    estimator.metric_time_ = time.perf_counter() - t0
    return Xt
