"""MPCK-means: the reported objective is eq. 5 at the returned state; the penalties
are measured in the learned metric (issue 28)."""

import warnings

import numpy as np
import pytest

from ccbench import constraints as cgen
from ccbench import make_method
from ccbench.datasets import load_dataset


def _eq5(X, cons, labels, centres, A, w=1.0):
    """Bilenko et al.'s eq. 5 (penalty ``w``) written from the pairs (not the directed edges the
    estimator uses): distortion - log det, split must-links 1/2 (||.||_A_li + ||.||_A_lj),
    joined cannot-links ||x' - x''||_A_h - ||x_i - x_j||_A_h with (x', x'') the
    farthest pair under A_h (the estimator's documented heuristic, tested on its own)."""
    from ccbench_plugins.kmeans.core import transitive_closure
    from ccbench_plugins.kmeans.mpck_means import farthest_pairs

    cons = transitive_closure(cons)
    obj = (((X - centres[labels]) ** 2) * A[labels]).sum() - np.log(A[labels]).sum()
    i, j = cons.must_link.T
    split = labels[i] != labels[j]
    d2 = (X[i] - X[j]) ** 2
    obj += (w * cons.must_link_weight * split * 0.5 * ((d2 * A[labels[i]]).sum(1) + (d2 * A[labels[j]]).sum(1))).sum()
    i, j = cons.cannot_link.T
    joined = labels[i] == labels[j]
    start = int(np.argmax(((X - X.mean(0)) ** 2).sum(1)))
    far = (farthest_pairs(X, A, start) * A).sum(1)
    h = labels[i]
    f_c = np.maximum(far[h] - (((X[i] - X[j]) ** 2) * A[h]).sum(1), 0.0)
    return obj + (w * cons.cannot_link_weight * joined * f_c).sum()


@pytest.mark.parametrize("max_iter", [1, 2, 3, 5, 100])
@pytest.mark.parametrize("name", ["iris", "wine"])
def test_reported_objective_is_recomputed_eq5(name, max_iter):
    # stopping at max_iter used to report the farthest pair of the previous metric
    # (iris, 100 pairs, seed 0, max_iter=2: -81.46 reported, -67.32 recomputed)
    ds = load_dataset(name)
    X = (ds.X - ds.X.mean(0)) / ds.X.std(0)
    cons = cgen.random_pairs(ds.y, 100, rng=np.random.default_rng(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_method("mpck_means", n_clusters=len(np.unique(ds.y)), max_iter=max_iter, random_state=0)
        est.fit(X, constraints=cons)
    want = _eq5(X, cons, est.labels_, est.cluster_centers_, est.metrics_)
    assert est.objective_ == pytest.approx(want, rel=1e-10, abs=1e-8)


def test_reported_objective_iris_raw_known_case():
    ds = load_dataset("iris")
    cons = cgen.random_pairs(ds.y, 100, rng=np.random.default_rng(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_method("mpck_means", n_clusters=3, max_iter=2, random_state=0).fit(ds.X, constraints=cons)
    assert not est.converged_
    assert est.objective_ == pytest.approx(_eq5(ds.X, cons, est.labels_, est.cluster_centers_, est.metrics_), rel=1e-10)


@pytest.mark.parametrize("penalty", [1.0, 3.0])
def test_assignment_prices_equal_objective_differences(penalty):
    # two routes: the ICM row of a constrained point (what the assignment minimises) and
    # eq. 5 recomputed from the pairs with that point moved; penalties are in the metric
    from ccbench_plugins.kmeans.core import icm_row, neighbours, transitive_closure
    from ccbench_plugins.kmeans.mpck_means import assignment_terms, farthest_pairs

    ds = load_dataset("wine")
    X = ds.X
    cons = cgen.random_pairs(ds.y, 60, rng=np.random.default_rng(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_method("mpck_means", n_clusters=3, penalty=penalty, max_iter=3, random_state=0).fit(X, constraints=cons)
    lab, C, A = est.labels_, est.cluster_centers_, est.metrics_
    assert np.ptp(np.log(A)) > 1  # the metric is far from Euclidean: unscaled penalties would differ
    closed = transitive_closure(cons)
    n = len(X)
    ml = neighbours(closed.must_link, n, penalty * closed.must_link_weight)
    cl = neighbours(closed.cannot_link, n, penalty * closed.cannot_link_weight)
    ml_d2 = (X[np.repeat(np.arange(n), np.diff(ml[0]))] - X[ml[1]]) ** 2
    cl_d2 = (X[np.repeat(np.arange(n), np.diff(cl[0]))] - X[cl[1]]) ** 2
    far2 = farthest_pairs(X, A, int(np.argmax(((X - X.mean(0)) ** 2).sum(1))))
    cost, ml_adj, cl_adj = assignment_terms(X, C, A, far2, ml, ml_d2, cl, cl_d2)
    base = _eq5(X, cons, lab, C, A, penalty)
    for i in np.unique(np.concatenate([cons.must_link.ravel(), cons.cannot_link.ravel()]))[:25]:
        row, hard = icm_row(i, cost, lab, ml_adj, cl_adj)
        assert not hard.any()
        for c in range(3):
            moved = lab.copy()
            moved[i] = c
            want = _eq5(X, cons, moved, C, A, penalty) - base
            assert row[c] - row[lab[i]] == pytest.approx(want, rel=1e-9, abs=1e-7)



def test_far2_is_per_cluster_unless_the_metric_is_shared():
    from ccbench_plugins.kmeans.mpck_means import MPCKMeans, farthest_pairs

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2)) * [1.0, 3.0]
    A = np.array([[1.0, 1.0], [1.0, 1e-3]])
    per = MPCKMeans(2, metric="cluster")._far2(X, A, 0)
    np.testing.assert_allclose(per, farthest_pairs(X, A, 0))
    assert not np.allclose(per[0], per[1])
    shared = MPCKMeans(2, metric="single")._far2(X, A[[0, 0]], 0)
    np.testing.assert_allclose(shared, np.tile(farthest_pairs(X, A[:1], 0), (2, 1)))


def test_cannot_link_price_is_clipped_at_zero():
    # a joined pair farther apart than the heuristic's "farthest" pair costs 0, never less
    from ccbench_plugins.kmeans.core import neighbours
    from ccbench_plugins.kmeans.mpck_means import assignment_terms

    X = np.array([[0.0], [3.0], [1.0]])
    cl = neighbours(np.array([[0, 1]]), 3, np.array([2.0]))
    ml = neighbours(np.empty((0, 2), np.intp), 3)
    cl_d2 = np.array([[9.0], [9.0]])
    A = np.ones((2, 1))
    far2 = np.array([[4.0], [16.0]])  # cluster 0's pair is closer than (0, 1)
    _, _, (_, _, P_cl, _) = assignment_terms(X, np.zeros((2, 1)), A, far2, ml, np.empty((0, 1)), cl, cl_d2)
    np.testing.assert_allclose(P_cl, [[0.0, 2.0 * 7.0], [0.0, 2.0 * 7.0]])


def test_objective_of_any_labelling_is_eq5():
    # random labels join many cannot-links and split many must-links: every term counts
    from ccbench_plugins.kmeans.core import neighbours, transitive_closure
    from ccbench_plugins.kmeans.mpck_means import MPCKMeans, farthest_pairs

    ds = load_dataset("iris")
    X = ds.X
    rng = np.random.default_rng(4)
    cons = cgen.random_pairs(ds.y, 80, rng=rng)
    lab = rng.integers(0, 3, len(X))
    C = np.array([X[lab == h].mean(0) for h in range(3)])
    A = np.exp(rng.normal(size=(3, 4)))
    closed = transitive_closure(cons)
    n = len(X)
    ml = neighbours(closed.must_link, n, 2.0 * closed.must_link_weight)
    cl = neighbours(closed.cannot_link, n, 2.0 * closed.cannot_link_weight)
    ml_d2 = (X[np.repeat(np.arange(n), np.diff(ml[0]))] - X[ml[1]]) ** 2
    cl_d2 = (X[np.repeat(np.arange(n), np.diff(cl[0]))] - X[cl[1]]) ** 2
    far2 = farthest_pairs(X, A, int(np.argmax(((X - X.mean(0)) ** 2).sum(1))))
    got = MPCKMeans(3)._objective(X, lab, C, A, ml, ml_d2, cl, cl_d2, far2)
    assert got == pytest.approx(_eq5(X, cons, lab, C, A, 2.0), rel=1e-12)


def test_metric_update_clips_small_cannot_link_terms_at_zero():
    # a joined cannot-link nearly as far apart as the farthest pair adds (far2 - d2) = 0.5,
    # and one farther apart than the heuristic's pair adds 0, per feature
    from ccbench_plugins.kmeans.core import neighbours
    from ccbench_plugins.kmeans.mpck_means import MPCKMeans

    X = np.array([[0.0], [2.0], [10.0], [11.0]])
    lab = np.array([0, 0, 1, 1])
    centres = np.array([[1.0], [10.5]])
    ml = neighbours(np.empty((0, 2), np.intp), 4)
    cl = neighbours(np.array([[0, 1], [2, 3]]), 4, np.array([1.0, 1.0]))
    cl_d2 = np.array([[4.0], [4.0], [1.0], [1.0]])  # edges 0->1, 1->0, 2->3, 3->2
    far2 = np.array([[4.5], [0.5]])
    A = MPCKMeans(2)._metric_update(X, lab, centres, np.ones((2, 1)), ml, np.empty((0, 1)), cl, cl_d2, far2, 1e-12)
    np.testing.assert_allclose(A[:, 0], [2 / (2.0 + 0.5), 2 / (0.5 + 0.0)])
