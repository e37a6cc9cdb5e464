"""Constrained k-means family: cop_kmeans, pck_means, mpck_means, constrained_em."""

import numpy as np
import pytest

from ccbench import Constraints, make_method
from ccbench import constraints as cgen
from ccbench.base import InfeasibleConstraintsError, SolutionNotFoundError


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

    # chunklets {0, 1} and {2, 3}; point 5 is cannot-linked to both, point 4 to one only
    X = np.array([[0.0], [1], [20], [21], [40], [9]])
    cons = Constraints(must_link=[[0, 1], [2, 3]], cannot_link=[[1, 5], [2, 5], [3, 4]], n_samples=6)
    got = initial_centres(X, cons, "supervision", 3, np.random.default_rng(0))
    np.testing.assert_allclose(got, [[0.5], [20.5], [9]])


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
    lab = est.fit_predict(X, constraints=cons)  # consistent pairs from true labels: always feasible
    assert cons.violations(lab) == (0, 0)


def test_cop_kmeans_raises_when_infeasible():
    X = np.arange(6.0)[:, None]
    # three mutually cannot-linked points and k=2: no colouring exists
    cons = Constraints(cannot_link=[[0, 1], [1, 2], [0, 2]], n_samples=6)
    with pytest.raises(InfeasibleConstraintsError, match="exhaustive search"):
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
    from ccbench_plugins.kmeans.cop_kmeans import cop_kmeans_single
    from ccbench_plugins.kmeans.core import Units
    from sklearn.cluster import KMeans

    X, _ = _blobs(seed=4)
    init = X[[0, 30, 60]]
    ref = KMeans(3, init=init, n_init=1, tol=0).fit(X)
    units = Units.build(X, Constraints.empty(len(X)))
    lab, centres, _, converged = cop_kmeans_single(units, init.copy(), np.array([], dtype=int), max_iter=300)
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


def test_pck_means_pair_weight_scales_the_penalty():
    from ccbench_plugins.kmeans.pck_means import violation_cost

    cons = Constraints(must_link=[[0, 1]], cannot_link=[[2, 3]], n_samples=4, must_link_weight=[0.5])
    assert violation_cost(cons, np.array([0, 1, 1, 1]), 4.0) == pytest.approx(0.5 * 4 + 4)
    assert violation_cost(cons, np.array([0, 0, 0, 1]), np.inf) == 0.0


# -- constrained EM ----------------------------------------------------------------


def _em_setup(X, cons, k, max_configurations=4096):
    from ccbench_plugins.kmeans.constrained_em import CannotLinkNetwork
    from ccbench_plugins.kmeans.core import Units

    units = Units.build(X, cons)
    return units, CannotLinkNetwork(units.cannot, units.n_units, k, max_configurations)


@pytest.mark.parametrize("cov_type", ["full", "diag", "spherical"])
def test_constrained_em_without_constraints_is_sklearn_gmm(cov_type):
    import warnings

    from ccbench_plugins.kmeans.constrained_em import constrained_em_single
    from sklearn.mixture import GaussianMixture

    X, _ = _blobs(n_per=40, d=3, sep=3.0, seed=1)
    w0, m0 = np.array([0.3, 0.3, 0.4]), X[[0, 50, 100]] + 0.1
    c0 = {"full": np.array([np.eye(3)] * 3), "diag": np.ones((3, 3)), "spherical": np.ones(3)}[cov_type]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = GaussianMixture(
            3, covariance_type=cov_type, weights_init=w0, means_init=m0, precisions_init=c0, max_iter=7, tol=0
        ).fit(X)
    units, net = _em_setup(X, Constraints.empty(len(X)), 3)
    ours = constrained_em_single(X, units, net, w0, m0, c0, cov_type=cov_type, reg_covar=1e-6, max_iter=7, tol=0)
    np.testing.assert_allclose(ours["means"], ref.means_, atol=1e-6)
    np.testing.assert_allclose(ours["covs"], ref.covariances_, atol=1e-6)
    np.testing.assert_allclose(ours["weights"], ref.weights_, atol=1e-6)
    assert ours["history"][-1] / len(X) == pytest.approx(ref.lower_bound_, abs=1e-6)


def test_chunklet_posterior_is_the_product_of_its_members_likelihoods():
    from scipy.stats import norm

    X = np.array([[0.0], [1.0], [3.0], [10.0]])
    cons = Constraints(must_link=[[0, 1], [1, 2]], n_samples=4)
    from ccbench_plugins.kmeans.constrained_em import log_gauss
    from ccbench_plugins.kmeans.core import group_sums

    units, net = _em_setup(X, cons, 2)
    means, var, w = np.array([[0.0], [5.0]]), np.array([1.0, 4.0]), np.array([0.7, 0.3])
    phi = group_sums(units.unit_of, log_gauss(X, means, var, "spherical"), units.n_units) + np.log(w)
    resp, _, _ = net.infer(phi)
    lik = [w[h] * np.prod(norm.pdf(X[:3, 0], means[h, 0], np.sqrt(var[h]))) for h in range(2)]
    np.testing.assert_allclose(resp[units.unit_of[0]], np.array(lik) / sum(lik), rtol=1e-10)


def _random_phi(n_units, k, seed):
    return np.random.default_rng(seed).normal(scale=2.0, size=(n_units, k))


def test_cannot_link_exact_marginals_known_answer():
    # two units, one cannot-link, k = 2: only (0,1) and (1,0) remain
    from ccbench_plugins.kmeans.constrained_em import CannotLinkNetwork

    phi = np.log(np.array([[0.6, 0.4], [0.7, 0.3]]))
    net = CannotLinkNetwork(np.array([[0, 1]]), 2, 2, 4096)
    resp, labels, ll = net.infer(phi)
    p01, p10 = 0.6 * 0.3, 0.4 * 0.7
    np.testing.assert_allclose(resp[0], [p01, p10] / np.float64(p01 + p10))
    assert labels.tolist() == [1, 0]
    assert ll == pytest.approx(np.log(p01 + p10))


@pytest.mark.parametrize("seed", range(4))
def test_bp_equals_enumeration_on_trees(seed):
    from ccbench_plugins.kmeans.constrained_em import CannotLinkNetwork

    # a random tree over 7 units plus 2 free ones
    rng = np.random.default_rng(seed)
    edges = np.array([[rng.integers(i), i] for i in range(1, 7)])
    phi = _random_phi(9, 3, seed)
    exact = CannotLinkNetwork(edges, 9, 3, 10**6).infer(phi)[0]
    bp_net = CannotLinkNetwork(edges, 9, 3, 1)
    assert not bp_net.is_exact
    np.testing.assert_allclose(bp_net.infer(phi, bp_tol=1e-12)[0], exact, atol=1e-8)


@pytest.mark.parametrize("seed", range(4))
def test_bp_close_to_enumeration_on_loopy_graphs(seed):
    from ccbench_plugins.kmeans.constrained_em import CannotLinkNetwork

    # a 6-cycle with one chord, k = 3
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 0], [0, 3]])
    phi = _random_phi(6, 3, seed)
    exact = CannotLinkNetwork(edges, 6, 3, 10**6).infer(phi)[0]
    approx = CannotLinkNetwork(edges, 6, 3, 1).infer(phi)[0]
    assert np.abs(approx - exact).max() < 0.1
    assert np.array_equal(approx.argmax(1), exact.argmax(1))


@pytest.mark.parametrize("seed", range(3))
def test_constrained_em_log_likelihood_never_decreases(seed):
    from ccbench_plugins.kmeans.constrained_em import (
        ConstrainedEM,
        constrained_em_single,
    )

    X, y = _blobs(n_per=30, sep=2.0, seed=seed)
    cons = cgen.random_pairs(y, 25, rng=np.random.default_rng(seed))
    units, net = _em_setup(X, cons, 3, max_configurations=10**5)
    assert net.is_exact and net.exact
    est = ConstrainedEM(3, covariance_type="full", init="random")
    w, m, c = est._start(X, cons, units, np.random.default_rng(seed))
    run = constrained_em_single(X, units, net, w, m, c, cov_type="full", reg_covar=1e-6, max_iter=40, tol=0)
    assert np.all(np.diff(run["history"]) >= -1e-8 * abs(run["history"][-1]))
    assert cons.violations(run["labels"]) == (0, 0)


def test_constrained_em_fit_meets_constraints_and_raises_when_infeasible():
    X, y = _blobs(seed=2)
    cons = cgen.random_pairs(y, 40, rng=np.random.default_rng(0))
    est = make_method("constrained_em", n_clusters=3, random_state=0).fit(X, constraints=cons)
    assert est.labels_.shape == (len(X),)
    assert cons.violations(est.labels_)[0] == 0  # chunklets are single points
    triangle = Constraints(cannot_link=[[0, 1], [1, 2], [0, 2]], n_samples=len(X))
    with pytest.raises(InfeasibleConstraintsError):
        make_method("constrained_em", n_clusters=2, random_state=0).fit(X, constraints=triangle)


def test_constrained_em_inconsistent_pairs_raise_or_drop():
    X, _ = _blobs(seed=0)
    cons = Constraints(must_link=[[0, 1], [1, 2]], cannot_link=[[0, 2], [0, 40]], n_samples=len(X))
    with pytest.raises(InfeasibleConstraintsError, match="chunklet"):
        make_method("constrained_em", n_clusters=3, random_state=0).fit(X, constraints=cons)
    est = make_method("constrained_em", n_clusters=3, inconsistent="drop", random_state=0).fit(X, constraints=cons)
    assert est.labels_[0] == est.labels_[1] == est.labels_[2] != est.labels_[40]


# -- MPCK-means ---------------------------------------------------------------------


def test_mpck_metric_update_is_inverse_within_cluster_variance():
    from ccbench_plugins.kmeans.mpck_means import MPCKMeans

    X, _ = _blobs(n_per=50, k=2, d=3, seed=5)
    lab = (X[:, 0] > np.median(X[:, 0])).astype(int)
    centres = np.array([X[lab == h].mean(0) for h in range(2)])
    est = MPCKMeans(2)
    empty = np.zeros(len(X) + 1, dtype=np.intp), np.empty(0, np.intp), np.empty(0)
    A = est._metric_update(X, lab, centres, np.ones((2, 3)), empty, np.empty((0, 3)), empty, np.empty((0, 3)), None, 1e-12)
    np.testing.assert_allclose(A, 1.0 / np.array([X[lab == h].var(0) for h in range(2)]))
    est.set_params(metric="single")
    A = est._metric_update(X, lab, centres, np.ones((2, 3)), empty, np.empty((0, 3)), empty, np.empty((0, 3)), None, 1e-12)
    pooled = sum(((X[lab == h] - centres[h]) ** 2).sum(0) for h in range(2)) / len(X)
    np.testing.assert_allclose(A, np.tile(1.0 / pooled, (2, 1)))


def test_mpck_metric_update_counts_violated_pairs():
    from ccbench_plugins.kmeans.core import neighbours
    from ccbench_plugins.kmeans.mpck_means import MPCKMeans

    X = np.array([[0.0], [1.0], [4.0], [6.0]])
    lab = np.array([0, 0, 1, 1])
    centres = np.array([[0.5], [5.0]])
    ml = neighbours(np.array([[1, 2]]), 4, np.array([2.0]))  # split: adds w/2 * 3^2 to both clusters
    cl = neighbours(np.array([[2, 3]]), 4, np.array([1.0]))  # joined in 1: adds w * (far2 - 2^2)
    ml_d2, cl_d2 = np.array([[9.0], [9.0]]), np.array([[4.0], [4.0]])
    far2 = np.array([[36.0], [36.0]])
    A = MPCKMeans(2)._metric_update(X, lab, centres, np.ones((2, 1)), ml, ml_d2, cl, cl_d2, far2, 1e-12)
    np.testing.assert_allclose(A[:, 0], [2 / (0.5 + 9.0), 2 / (2.0 + 9.0 + 32.0)])


def test_farthest_pairs_finds_the_diameter():
    from ccbench_plugins.kmeans.mpck_means import farthest_pairs

    X, _ = _blobs(n_per=40, d=2, seed=6)
    A = np.array([[1.0, 1.0], [1.0, 0.01]])
    got = farthest_pairs(X, A, start=0)
    for h, a in enumerate(A):
        from scipy.spatial.distance import pdist

        assert (got[h] * a).sum() == pytest.approx(pdist(X * np.sqrt(a), "sqeuclidean").max())


def test_mpck_means_learns_to_ignore_a_noisy_feature():
    # two clusters apart along feature 0; feature 1 is wide noise that misleads k-means
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 60)
    X = np.column_stack([y * 3.0 + rng.normal(scale=0.4, size=120), rng.normal(scale=6.0, size=120)])
    cons = cgen.random_pairs(y, 40, rng=rng)
    from ccbench.metrics import adjusted_rand

    km = make_method("kmeans", n_clusters=2, random_state=0).fit_predict(X)
    mp = make_method("mpck_means", n_clusters=2, random_state=0).fit(X, constraints=cons)
    assert adjusted_rand(y, km) < 0.3
    assert adjusted_rand(y, mp.labels_) > 0.9
    assert np.all(mp.metrics_[:, 0] > 10 * mp.metrics_[:, 1])


# -- peers (optional extra) -----------------------------------------------------------

import importlib.util  # noqa: E402

_NO_PEER = importlib.util.find_spec("active_semi_clustering") is None
needs_peer = pytest.mark.skipif(_NO_PEER, reason="optional extra 'peers' not installed (pip install -e '.[peers]')")


def test_peer_exceptions_map_to_row_statuses(monkeypatch):
    # no worker needed: the mapping is tested on the worker's reply
    from ccbench_plugins.kmeans import peers

    replies = {
        "ClusteringNotFoundException": SolutionNotFoundError,
        "InconsistentConstraintsException": InfeasibleConstraintsError,
        "EmptyClustersException": peers.PeerFailure,
        "FloatingPointError": peers.PeerFailure,
    }
    cons = Constraints.empty(4)
    for name, exc in replies.items():
        runner = type("R", (), {"call": lambda self, func, *args, timeout, name=name: (name, "", 0.0)})()
        monkeypatch.setattr(peers, "_runner", lambda runner=runner: runner)
        with pytest.raises(exc, match=name):
            peers.run_peer("COPKMeans", {}, np.zeros((4, 1)), cons, 0)


@needs_peer
@pytest.mark.slow
def test_peer_failures_become_rows_not_crashes(tmp_path, request):
    from hydra import compose, initialize_config_module

    from ccbench import registry
    from ccbench.running.harness import run_job

    rows = []
    for method, overrides in (
        # k = 2 on three classes with many cannot-links: the peer's COP-k-means gives up
        ("peer_cop_kmeans", ["method.n_clusters=2", "constraints.n_constraints=120"]),
        ("peer_pck_means", ["constraints.n_constraints=40"]),
    ):
        request.addfinalizer(lambda: registry.unregister_plugin("ccbench_plugins.kmeans.peers"))
        with initialize_config_module("ccbench_conf", version_base="1.3"):
            cfg = compose(
                "config",
                overrides=[
                    "hydra.searchpath=[pkg://ccbench_plugins.kmeans.peers_conf]",
                    "plugins=[ccbench_plugins.kmeans.peers]",
                    f"method={method}",
                    "n_trials=2",
                    *overrides,
                ],
            )
        rows.append(run_job(cfg, out_dir=tmp_path / method))
    cop, pck = rows
    assert set(cop["status"]) == {"not_found"}
    assert cop["error"].str.contains("ClusteringNotFoundException").all()
    assert set(pck["status"]) == {"ok"}
    assert np.geterr()["divide"] == "warn"  # the peer's np.seterr('raise') stayed in its worker


def test_bp_decoding_meets_cannot_links():
    from ccbench_plugins.kmeans.constrained_em import CannotLinkNetwork

    # a 5-cycle (loopy, 3-colourable) whose unary terms all prefer label 0
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 0]])
    phi = np.log(np.tile([0.6, 0.25, 0.15], (5, 1)))
    _, labels, _ = CannotLinkNetwork(edges, 5, 3, 1).infer(phi)
    assert np.all(labels[edges[:, 0]] != labels[edges[:, 1]])


@needs_peer
@pytest.mark.slow
def test_dead_peer_worker_is_an_error_then_replaced(monkeypatch):
    import os

    from ccbench_plugins.kmeans import peers

    from ccbench.isolation import WorkerDied

    X, y = _blobs(n_per=10, seed=0)
    cons = cgen.random_pairs(y, 10, rng=np.random.default_rng(0))
    runner = peers._runner()
    with pytest.raises(WorkerDied, match="exit code 3"):
        runner.call(os._exit, 3, timeout=None)  # the worker dies in the middle of a call
    dying = type("R", (), {"call": lambda self, func, *args, timeout: (_ for _ in ()).throw(WorkerDied("gone"))})()
    with monkeypatch.context() as m:
        m.setattr(peers, "_runner", lambda: dying)
        with pytest.raises(peers.PeerFailure, match="died"):
            peers.run_peer("PCKMeans", {"n_clusters": 3}, X, cons, 0)
    labels, seconds = peers.run_peer("PCKMeans", {"n_clusters": 3}, X, cons, 0)  # a fresh worker
    assert labels.shape == (len(X),) and seconds > 0


def test_supervision_init_edge_cases():
    from ccbench_plugins.kmeans.core import Units, initial_centres

    X = np.array([[0.0], [1], [20], [21], [1000], [9]])
    # a single labeled point, of class 0: still the labeled branch (no pairs to fall back on)
    one = Constraints.from_labels(np.array([-1, -1, -1, 0, -1, -1]))
    assert one.n_must_link == 0
    np.testing.assert_allclose(initial_centres(X, one, "supervision", 1, np.random.default_rng(0)), [[21.0]])
    # the point cannot-linked to both chunklets is Basu's next seed whichever end of the pairs
    # (stored smaller index first) it is; the far point (1000) would be k-means++'s choice
    cons = Constraints(must_link=[[0, 1], [2, 3]], cannot_link=[[1, 5], [2, 5], [3, 4]], n_samples=6)
    got = initial_centres(X, cons, "supervision", 3, np.random.default_rng(0))
    np.testing.assert_allclose(got, [[0.5], [20.5], [9]])
    Xr = np.array([[9.0], [0], [1], [20], [21], [1000]])
    cons = Constraints(must_link=[[1, 2], [3, 4]], cannot_link=[[0, 2], [0, 3], [4, 5]], n_samples=6)
    got = initial_centres(Xr, cons, "supervision", 3, np.random.default_rng(0))
    np.testing.assert_allclose(got, [[0.5], [20.5], [9]])
    # the error names the cannot-link inside the chunklet (the second after sorting)
    bad = Constraints(must_link=[[0, 1], [1, 3]], cannot_link=[[0, 2], [0, 3]], n_samples=6)
    with pytest.raises(InfeasibleConstraintsError, match=r"\(0, 3\)"):
        Units.build(X, bad)


def test_constrained_em_kmeans_start_is_sklearn_kmeans():
    from ccbench_plugins.kmeans.constrained_em import ConstrainedEM
    from ccbench_plugins.kmeans.core import Units
    from sklearn.cluster import KMeans

    X, _ = _blobs(seed=3)
    cons = Constraints.empty(len(X))
    units = Units.build(X, cons)
    _, means, _ = ConstrainedEM(3, init="kmeans")._start(X, cons, units, np.random.default_rng(5))
    seed = int(np.random.default_rng(5).integers(2**31 - 1))
    ref = KMeans(3, n_init=1, random_state=seed).fit(X).cluster_centers_
    np.testing.assert_allclose(np.sort(means, 0), np.sort(ref, 0), atol=1e-8)


def test_mpck_restarts_keep_the_lowest_objective(monkeypatch):
    from ccbench_plugins.kmeans.mpck_means import MPCKMeans

    objectives = iter([3.0, 1.0, 2.0])
    X = np.zeros((4, 1))

    def fake(self, X, cons, centres, rng):
        obj = next(objectives)
        return obj, np.full(len(X), int(obj)), centres, np.ones((2, 1)), 1, True

    monkeypatch.setattr(MPCKMeans, "_single", fake)
    est = MPCKMeans(2, n_init=3, init="random", random_state=0).fit(X)
    assert est.objective_ == 1.0 and est.labels_.tolist() == [1, 1, 1, 1]


def test_supervision_init_keeps_the_largest_labeled_classes():
    from ccbench_plugins.kmeans.core import initial_centres

    X = np.array([[0.0], [1], [2], [10], [11], [50]])
    cons = Constraints.from_labels(np.array([0, 0, 0, 1, 1, 2]))
    got = initial_centres(X, cons, "supervision", 2, np.random.default_rng(0))
    np.testing.assert_allclose(got, [[1.0], [10.5]])  # classes of 3 and 2 points, not the singleton


def test_constrained_em_stops_by_tolerance_on_easy_data():
    X, y = _blobs(n_per=40, sep=8.0, seed=1)
    cons = cgen.random_pairs(y, 20, rng=np.random.default_rng(1))
    est = make_method("constrained_em", n_clusters=3, random_state=0).fit(X, constraints=cons)
    assert est.converged_ and est.n_iter_ < 20


def test_kmeans_plus_plus_never_repeats_a_point_at_any_scale():
    # D^2 sampling gives a chosen point probability 0, however small the distances (here they sum to
    # far less than 1): k distinct points are k distinct centres
    from ccbench_plugins.kmeans.core import _kmeanspp

    X = 1e-3 * np.arange(4.0)[:, None]
    for seed in range(20):
        centres = _kmeanspp(X, 4, np.random.default_rng(seed))
        assert sorted(centres[:, 0]) == pytest.approx(sorted(X[:, 0]))


def test_constrained_em_network_too_large_to_count_is_approximate_not_an_overflow():
    # the board's PCCC-scheme cells (k from 3 to 50) built cannot-link components whose float k ** size
    # overflowed a float: an OverflowError row instead of the loopy-BP path such components take
    from ccbench_plugins.kmeans.constrained_em import CannotLinkNetwork

    chain = np.column_stack([np.arange(199), np.arange(1, 200)])  # one component of 200 units
    net = CannotLinkNetwork(chain, 200, 50, 4096)
    assert not net.is_exact and not net.exact and not net.free.any()
    small = CannotLinkNetwork(chain[:2], 200, 50, 10**6)  # 3 units, 50 ** 3 labelings: counted exactly
    assert small.is_exact and len(small.exact) == 1
