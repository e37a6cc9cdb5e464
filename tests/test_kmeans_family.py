"""Constrained k-means family: cop_kmeans, pck_means, mpck_means, constrained_em."""

import numpy as np
import pytest

import ccbench
from ccbench import Constraints, make_method
from ccbench import constraints as cgen
from ccbench.base import InfeasibleConstraintsError


def _blobs(n_per=30, k=3, d=2, sep=4.0, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=sep, size=(k, d))
    X = np.concatenate([c + rng.normal(size=(n_per, d)) for c in centres])
    y = np.repeat(np.arange(k), n_per)
    return X, y


# -- seeding ------------------------------------------------------------------


def test_supervision_init_uses_labeled_means_then_chunklets():
    from ccbench_plugins.kmeans.core import initial_centres

    X = np.array([[0.0, 0], [2, 0], [10, 0], [12, 0], [50, 50]])
    cons = Constraints.from_labels(np.array([0, 0, 1, 1, -1]))
    got = initial_centres(X, cons, "supervision", 2, np.random.default_rng(0))
    np.testing.assert_allclose(got, [[1, 0], [11, 0]])
    # pairs only: the must-link chunklets' centroids (largest first)
    cons = Constraints(must_link=[[2, 3], [0, 1], [1, 4]], n_samples=5)
    got = initial_centres(X, cons, "supervision", 2, np.random.default_rng(0))
    np.testing.assert_allclose(got, [[52 / 3, 50 / 3], [11, 0]])


def test_supervision_init_fills_with_point_cannot_linked_to_all_chunklets():
    from ccbench_plugins.kmeans.core import initial_centres

    X = np.array([[0.0], [1], [9], [30], [31]])
    cons = Constraints(must_link=[[0, 1]], cannot_link=[[1, 2]], n_samples=5)
    got = initial_centres(X, cons, "supervision", 2, np.random.default_rng(0))
    np.testing.assert_allclose(got, [[0.5], [9]])


# -- COP-k-means ----------------------------------------------------------------


def test_cop_kmeans_hand_sized_known_answer():
    # the must-link drags point 2 into the left cluster, the cannot-link keeps 0 and 1 apart
    X = np.array([[0.0], [1.0], [10.0], [11.0], [12.0]])
    cons = Constraints(must_link=[[0, 2]], cannot_link=[[2, 3]], n_samples=5)
    est = make_method("cop_kmeans", n_clusters=2, random_state=0).fit(X, constraints=cons)
    lab = est.labels_
    assert lab[0] == lab[1] == lab[2] != lab[3] == lab[4]
    np.testing.assert_allclose(np.sort(est.cluster_centers_[:, 0]), [11 / 3, 11.5])


@pytest.mark.parametrize("seed", range(5))
def test_cop_kmeans_meets_every_constraint(seed):
    X, y = _blobs(seed=seed)
    cons = cgen.random_pairs(y, 60, rng=np.random.default_rng(seed))
    lab = make_method("cop_kmeans", n_clusters=3, random_state=seed).fit_predict(X, constraints=cons)
    assert cons.violations(lab) == (0, 0)


@pytest.mark.parametrize("seed", range(5))
def test_cop_kmeans_dense_constraints_met_or_raise(seed):
    X, y = _blobs(seed=seed)
    cons = cgen.random_pairs(y, 150, rng=np.random.default_rng(seed))
    est = make_method("cop_kmeans", n_clusters=3, n_init=2, random_state=seed)
    try:
        lab = est.fit_predict(X, constraints=cons)
    except InfeasibleConstraintsError:
        return
    assert cons.violations(lab) == (0, 0)


def test_cop_kmeans_raises_when_infeasible():
    X = np.arange(6.0)[:, None]
    # three mutually cannot-linked points and k=2: no colouring exists
    cons = Constraints(cannot_link=[[0, 1], [1, 2], [0, 2]], n_samples=6)
    with pytest.raises(InfeasibleConstraintsError, match="no assignment"):
        make_method("cop_kmeans", n_clusters=2, n_init=3, random_state=0).fit(X, constraints=cons)
    inconsistent = Constraints(must_link=[[0, 1], [1, 2]], cannot_link=[[0, 2]], n_samples=6)
    with pytest.raises(InfeasibleConstraintsError, match="chunklet"):
        make_method("cop_kmeans", n_clusters=3, random_state=0).fit(X, constraints=inconsistent)


def test_cop_kmeans_keeps_best_restart():
    X, y = _blobs(seed=3)
    cons = cgen.random_pairs(y, 30, rng=np.random.default_rng(1))
    one = [make_method("cop_kmeans", n_clusters=3, n_init=1, random_state=s).fit(X, constraints=cons).inertia_ for s in range(8)]
    many = make_method("cop_kmeans", n_clusters=3, n_init=8, random_state=0).fit(X, constraints=cons)
    assert many.inertia_ <= np.median(one) + 1e-9
    np.testing.assert_allclose(many.inertia_, ((X - many.cluster_centers_[many.labels_]) ** 2).sum())


def test_cop_kmeans_without_constraints_is_lloyd():
    from sklearn.cluster import KMeans

    X, _ = _blobs(seed=4)
    init = X[[0, 30, 60]]
    ours = make_method("cop_kmeans", n_clusters=3, n_init=1, random_state=0)
    ref = KMeans(3, init=init, n_init=1, tol=0).fit(X)
    ours.set_params(init="random")
    # same start: feed the centres through the seeding hook
    from ccbench_plugins.kmeans import cop_kmeans as mod
    from ccbench_plugins.kmeans.core import Units

    units = Units.build(X, Constraints.empty(len(X)))
    lab, centres, _, converged = mod.cop_kmeans_single(units, init.copy(), np.array([], dtype=int), max_iter=300)
    assert converged
    np.testing.assert_allclose(centres, ref.cluster_centers_, atol=1e-10)
    np.testing.assert_array_equal(lab, ref.labels_)


# -- PCK-means -------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_pck_means_infinite_penalty_meets_consistent_constraints(seed):
    X, y = _blobs(seed=seed, sep=1.5)
    cons = cgen.random_pairs(y, 40, rng=np.random.default_rng(seed))
    assert cons.is_consistent()
    est = make_method("pck_means", n_clusters=3, penalty=np.inf, random_state=seed)
    lab = est.fit_predict(X, constraints=cons)
    assert cons.violations(lab) == (0, 0)
    assert np.isfinite(est.objective_)


def test_pck_means_penalty_trades_distance_against_violations():
    # 0 and 3 must-linked across two tight pairs: a small w leaves them apart,
    # a w above the cost of moving point 3 (1/2 * ~(10 - 0.5)^2 ~ 45) joins them
    X = np.array([[0.0], [1.0], [10.0], [11.0]])
    cons = Constraints(must_link=[[1, 2]], n_samples=4)
    init = dict(n_clusters=2, init="k-means++", n_init=5, random_state=0)
    small = make_method("pck_means", penalty=1.0, **init).fit(X, constraints=cons)
    assert small.labels_[1] != small.labels_[2]
    np.testing.assert_allclose(small.objective_, 0.5 * 4 * 0.25 + 1.0)
    big = make_method("pck_means", penalty=100.0, **init).fit(X, constraints=cons)
    assert big.labels_[1] == big.labels_[2]
    assert big.objective_ < 100


def test_pck_means_confidence_scales_the_penalty():
    from ccbench_plugins.kmeans.pck_means import violation_cost

    cons = Constraints(must_link=[[0, 1]], cannot_link=[[2, 3]], n_samples=4, must_link_confidence=[0.5])
    assert violation_cost(cons, np.array([0, 1, 1, 1]), 4.0) == pytest.approx(0.5 * 4 + 4)
    assert violation_cost(cons, np.array([0, 0, 0, 1]), np.inf) == 0.0
