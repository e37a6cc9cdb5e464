"""Clustering metrics.

All pair-counting metrics work on the contingency table, never on the
O(n^2) list of pairs. The table is built here with numpy (``np.unique`` +
``bincount``), not with scikit-learn's ``contingency_matrix``, whose input
checks and sparse round trip cost ~1 ms per call: with five metrics per trial
that was a fifth of the harness's per-trial time on iris. The numbers are the
same (``tests/test_metrics.py`` checks them against scikit-learn's).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "modified_rand",
    "rand",
    "adjusted_rand",
    "nmi",
    "n_clusters",
    "n_clusters_error",
    "majority_errors",
    "constraint_violations",
    "violated_constraints",
    "violated_cannot_links",
    "inertia",
    "pair_counts",
]


def _check_labelings(labels_true, labels_pred):
    a, b = np.asarray(labels_true), np.asarray(labels_pred)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ValueError(
            f"labelings must be 1-D and of equal length, got {a.shape} and {b.shape}"
        )
    if len(a) < 2:
        raise ValueError("pair-counting metrics need at least 2 samples")
    return a, b


def contingency(labels_true, labels_pred) -> np.ndarray:
    """Dense contingency table: rows the sorted true classes, columns the sorted clusters."""
    true_codes = np.unique(labels_true, return_inverse=True)[1].ravel()
    pred_codes = np.unique(labels_pred, return_inverse=True)[1].ravel()
    shape = (int(true_codes.max()) + 1, int(pred_codes.max()) + 1)
    return np.bincount(true_codes * shape[1] + pred_codes, minlength=shape[0] * shape[1]).reshape(shape)


def _comb2(x):
    x = np.asarray(x, dtype=np.float64)
    return x * (x - 1) / 2


def pair_counts(labels_true, labels_pred) -> dict[str, float]:
    """Counts of unordered pairs by (same true class?, same predicted cluster?)."""
    a, b = _check_labelings(labels_true, labels_pred)
    table = contingency(a, b)
    both = _comb2(table).sum()
    same_true = _comb2(table.sum(axis=1)).sum()
    same_pred = _comb2(table.sum(axis=0)).sum()
    total = _comb2(len(a))
    return {
        "same_same": both,
        "same_diff": same_true - both,
        "diff_same": same_pred - both,
        "diff_diff": total - same_true - same_pred + both,
        "total": total,
    }


def rand(labels_true, labels_pred) -> float:
    """Rand index, SCSSAP eq. (26): fraction of pairs classified alike."""
    c = pair_counts(labels_true, labels_pred)
    return float((c["same_same"] + c["diff_diff"]) / c["total"])


def modified_rand(labels_true, labels_pred) -> float:
    """Modified Rand index, SCSSAP eq. (27) (Givoni & Frey 2009).

    .. math::
        \\frac{\\sum_{i>j} 1(c_i=c_j) 1(\\hat c_i=\\hat c_j)}{2\\sum_{i>j} 1(\\hat c_i=\\hat c_j)}
        + \\frac{\\sum_{i>j} 1(c_i\\neq c_j) 1(\\hat c_i\\neq \\hat c_j)}{2\\sum_{i>j} 1(\\hat c_i\\neq \\hat c_j)}

    Precision of "same cluster" and of "different cluster" predictions,
    averaged. Eq. (27) is undefined when a denominator is zero (one cluster, or
    all singletons); we take that half as 0, so a trivial clustering scores at
    most 0.5.
    """
    c = pair_counts(labels_true, labels_pred)
    pred_same = c["same_same"] + c["diff_same"]
    pred_diff = c["same_diff"] + c["diff_diff"]
    first = c["same_same"] / (2 * pred_same) if pred_same > 0 else 0.0
    second = c["diff_diff"] / (2 * pred_diff) if pred_diff > 0 else 0.0
    return float(first + second)


def adjusted_rand(labels_true, labels_pred) -> float:
    """Hubert & Arabie's adjusted Rand index, as scikit-learn computes it.

    From the pair counts, in Python integers (exact):
    ARI = 2 (tp tn - fn fp) / ((tp + fn)(fn + tn) + (tp + fp)(fp + tn)), and 1.0 when
    the two labelings never disagree on a pair (fn = fp = 0), e.g. both one cluster.
    """
    a, b = _check_labelings(labels_true, labels_pred)
    table = contingency(a, b).astype(np.int64)
    comb = lambda x: int((x * (x - 1) // 2).sum())  # noqa: E731
    tp = comb(table)
    same_true, same_pred = comb(table.sum(axis=1)), comb(table.sum(axis=0))
    fn, fp = same_true - tp, same_pred - tp
    tn = len(a) * (len(a) - 1) // 2 - tp - fn - fp
    if fn == 0 and fp == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


def nmi(labels_true, labels_pred) -> float:
    """NMI with geometric normalisation, RN-SDP eq. (7): I(C,T) / sqrt(H(C) H(T)).

    When either labeling has zero entropy (a single cluster) the ratio is 0/0;
    we return 1.0 if both are single clusters and 0.0 otherwise, as
    scikit-learn does.
    """
    a, b = _check_labelings(labels_true, labels_pred)
    table = contingency(a, b).astype(np.float64)
    n = table.sum()
    p = table / n
    pa, pb = p.sum(axis=1), p.sum(axis=0)
    h_a = -np.sum(pa * np.log(pa))
    h_b = -np.sum(pb * np.log(pb))
    if h_a == 0 or h_b == 0:
        return 1.0 if h_a == h_b else 0.0
    nz = p > 0
    mi = np.sum(p[nz] * np.log(p[nz] / np.outer(pa, pb)[nz]))
    return float(max(mi, 0.0) / np.sqrt(h_a * h_b))


def n_clusters(labels_true, labels_pred) -> float:
    """Number of distinct clusters found (``labels_true`` ignored)."""
    return float(len(np.unique(labels_pred)))


def n_clusters_error(labels_true, labels_pred) -> float:
    """|clusters found - true classes|: how far the number of clusters is from the truth.

    ``n_clusters`` itself has no "better" direction (one cluster is not the best
    answer); this distance to the number of classes in ``labels_true`` is the
    rankable version (lower is better, 0 = the right number).
    """
    a, b = _check_labelings(labels_true, labels_pred)
    return float(abs(len(np.unique(b)) - len(np.unique(a))))


def majority_errors(labels_true, labels_pred) -> float:
    """Points outside their cluster's majority class (the SCAP paper's error count).

    Leone et al. (2008) count errors as points whose exemplar lies in another
    true cluster (section 3.1) or mislabeled iris flowers (Table 1); from labels
    alone the closest count is n minus the sum over clusters of the largest
    class in each.
    """
    a, b = _check_labelings(labels_true, labels_pred)
    return float(len(a) - contingency(a, b).max(axis=0).sum())


def violated_constraints(labels_true, labels_pred, *, constraints=None) -> float:
    """Number of given constraints the clustering violates (every kind, whatever the method uses;
    PCCC's "violations")."""
    if constraints is None or len(constraints) == 0:
        return 0.0
    split, joined = constraints.violations(labels_pred)
    return float(split + joined)


def violated_cannot_links(labels_true, labels_pred, *, constraints=None) -> float:
    """Number of given cannot-links the clustering violates (both ends in one cluster)."""
    if constraints is None or len(constraints) == 0:
        return 0.0
    return float(constraints.violations(labels_pred)[1])


def inertia(labels_true, labels_pred, *, X=None) -> float:
    """Within-cluster sum of squared Euclidean distances to the cluster means, on the features the
    method was given (after ``preprocess``); k-means' objective, PCCC's "inertia". NaN without ``X``."""
    if X is None:
        return float("nan")
    X = np.asarray(X, dtype=float)
    labels = np.asarray(labels_pred)
    if X.ndim != 2 or len(X) != len(labels):
        raise ValueError(f"inertia needs X of shape (n, d) with n = {len(labels)}, got {X.shape}")
    total = 0.0
    for c in np.unique(labels):
        part = X[labels == c]
        total += float(((part - part.mean(axis=0)) ** 2).sum())
    return total


def constraint_violations(labels_true, labels_pred, *, constraints=None) -> float:
    """Fraction of the given constraints the clustering violates (0 when none given)."""
    if constraints is None or len(constraints) == 0:
        return 0.0
    split, joined = constraints.violations(labels_pred)
    return (split + joined) / len(constraints)
