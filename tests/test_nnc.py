"""NNC family (Yang et al. 2015): fpc, nnc and the metric learners."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from ccbench_plugins.nnc.metric_learning import (
    MetricFallbackWarning,
    learn_lp_diag,
    learn_metric,
    learn_sdp_full,
    learn_xing_diag,
    lp_diag_program,
    pair_sq_diffs,
)
from scipy.spatial.distance import cdist

import ccbench
from ccbench import Constraints
from ccbench.base import InfeasibleConstraintsError


def _well_clusterable(rng, k=4, per=15, d=3):
    """Blobs of radius <= 0.5 whose centres are >= 10 apart: RSD_opt > 1."""
    centres = rng.uniform(0, 100, (k, d))
    while cdist(centres, centres)[np.triu_indices(k, 1)].min() < 10:
        centres = rng.uniform(0, 100, (k, d))
    dirs = rng.normal(size=(k * per, d))
    dirs *= (rng.uniform(0, 0.25, k * per) / np.linalg.norm(dirs, axis=1))[:, None]
    y = np.repeat(np.arange(k), per)
    return centres[y] + dirs, y


def _same_partition(a, b):
    return ccbench.metrics.adjusted_rand(a, b) == pytest.approx(1.0)


def _partial(y, per_class, rng):
    return ccbench.constraints.labeled_subsets(y, per_class, rng=rng)


def _max_diameter(D, labels):
    """Largest within-cluster entry of the distance matrix D."""
    return np.max(np.where(labels[:, None] == labels[None, :], D, 0.0))


# -- Theorems 7 and 9: optimal partition when RSD > 1 --------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_fpc_recovers_well_clusterable_partition(seed):
    X, y = _well_clusterable(np.random.default_rng(seed))
    labels = ccbench.make_method("fpc", n_clusters=4, random_state=seed).fit(X).labels_
    assert _same_partition(labels, y)


@pytest.mark.parametrize("seed", range(5))
def test_nnc_recovers_well_clusterable_partition(seed):
    rng = np.random.default_rng(seed)
    X, y = _well_clusterable(rng)
    cons = _partial(y, 3, rng)
    labels = ccbench.make_method("nnc", n_clusters=4).fit(X, constraints=cons).labels_
    assert _same_partition(labels, y)


# -- Theorems 8 and 10: 2-approximations of the min-max diameter (brute force) -------


def _all_partitions(n, k):
    for assign in itertools.product(range(k), repeat=n):
        if len(set(assign)) == k:
            yield np.array(assign)


@pytest.mark.parametrize("seed", range(25))
def test_nnc_is_within_twice_the_semisupervised_minmax_diameter(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(6, 10)), int(rng.integers(2, 4))
    X = rng.normal(size=(n, 2))
    part = np.full(n, -1)
    chosen = rng.choice(n, size=k + int(rng.integers(0, 2)), replace=False)
    part[chosen[:k]] = np.arange(k)
    part[chosen[k:]] = rng.integers(0, k, len(chosen) - k)
    labels = ccbench.make_method("nnc", n_clusters=k).fit(X, constraints=Constraints.from_labels(part)).labels_
    free = np.flatnonzero(part < 0)
    D = cdist(X, X)
    best = np.inf
    for assign in itertools.product(range(k), repeat=len(free)):
        full = part.copy()
        full[free] = assign
        best = min(best, _max_diameter(D, full))
    assert _max_diameter(D, labels) <= 2 * best + 1e-12
    # Definition 1: the partition respects the labeled subsets
    assert np.array_equal(labels[part >= 0], part[part >= 0])


@pytest.mark.parametrize("seed", range(10))
def test_fpc_is_within_twice_the_minmax_diameter(seed):
    rng = np.random.default_rng(100 + seed)
    n, k = 8, 3
    X = rng.normal(size=(n, 2))
    labels = ccbench.make_method("fpc", n_clusters=k, random_state=seed).fit(X).labels_
    D = cdist(X, X)
    best = min(_max_diameter(D, p) for p in _all_partitions(n, k))
    assert _max_diameter(D, labels) <= 2 * best + 1e-12


# -- kernels against direct computations ----------------------------------------------


def test_nnc_matches_direct_dmax_assignment():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 4))
    y = rng.integers(0, 3, 100)
    cons = _partial(y, 4, rng)
    labels = ccbench.make_method("nnc", n_clusters=3).fit(X, constraints=cons).labels_
    dmax = np.column_stack([cdist(X, X[cons.labels == c]).max(axis=1) for c in range(3)])
    expected = np.where(cons.labels >= 0, cons.labels, dmax.argmin(axis=1))
    assert np.array_equal(labels, expected)


def test_fpc_matches_direct_farthest_point_loop():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 5))
    est = ccbench.make_method("fpc", n_clusters=6, random_state=3).fit(X)
    first = int(np.random.default_rng(3).integers(200))
    centres = [first]
    for _ in range(5):
        centres.append(int(cdist(X, X[centres]).min(axis=1).argmax()))
    assert est.cluster_centers_indices_.tolist() == centres
    assert np.array_equal(est.labels_, cdist(X, X[centres]).argmin(axis=1))


def test_nnc_without_supervision_is_fpc():
    X = np.random.default_rng(2).normal(size=(80, 3))
    a = ccbench.make_method("nnc", n_clusters=4, random_state=5).fit(X).labels_
    b = ccbench.make_method("fpc", n_clusters=4, random_state=5).fit(X).labels_
    assert np.array_equal(a, b)


@pytest.mark.parametrize("metric", ["euclidean", "lp_diag", "xing_diag"])
def test_labeled_points_keep_their_labels(metric):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 4))
    y = rng.integers(0, 4, 150)  # no structure: labels cannot come from the geometry
    cons = _partial(y, 5, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MetricFallbackWarning)
        est = ccbench.make_method("nnc", n_clusters=5, metric=metric).fit(X, constraints=cons)
    lab = cons.labels >= 0
    assert np.array_equal(est.classes_[est.labels_[lab]], cons.labels[lab])
    assert len(np.unique(est.labels_)) == 5  # the fifth cluster by farthest point


def test_must_link_chunklets_are_the_subsets():
    X = np.array([[0.0], [0.1], [3.0], [3.1], [0.05], [3.05]])
    cons = Constraints([[0, 1], [2, 3]], [[0, 2]], n_samples=6)
    labels = ccbench.make_method("nnc", n_clusters=2).fit(X, constraints=cons).labels_
    assert labels.tolist() == [0, 0, 1, 1, 0, 1]


@pytest.mark.filterwarnings("ignore:.*must-links chain together")  # the base class says so too
def test_infeasible_supervision_is_refused():
    X = np.zeros((6, 1)) + np.arange(6)[:, None]
    with pytest.raises(InfeasibleConstraintsError, match="n_clusters=2"):
        ccbench.make_method("nnc", n_clusters=2).fit(X, constraints=Constraints.from_labels([0, 1, 2, -1, -1, -1]))
    bad = Constraints([[0, 1], [1, 2]], [[0, 2]], n_samples=6)
    with pytest.raises(InfeasibleConstraintsError, match="cannot-link"):
        ccbench.make_method("nnc", n_clusters=2).fit(X, constraints=bad)


# -- metric learning ------------------------------------------------------------------


def _iris_pairs(per_class=5, seed=0):
    ds = ccbench.load_dataset("iris", preprocess="minmax_1_2")
    cons = _partial(ds.y, per_class, np.random.default_rng(seed))
    return ds.X, cons


def test_lp_diag_satisfies_its_constraints_and_matches_cvxpy():
    cp = pytest.importorskip("cvxpy")
    X, cons = _iris_pairs()
    dml, dcl = pair_sq_diffs(X, cons.must_link), pair_sq_diffs(X, cons.cannot_link)
    z, s, status = learn_lp_diag(dml, dcl)
    assert status == "optimal" and s > 0
    assert np.all(z >= -1e-12)
    assert np.all(dml @ z <= 1 + 1e-9)
    assert np.all(dcl @ z >= s - 1e-9)
    # the same model written in cvxpy (eqs. 21-25, squared distances)
    zc, sc = cp.Variable(X.shape[1], nonneg=True), cp.Variable(nonneg=True)
    prob = cp.Problem(cp.Maximize(sc), [dcl @ zc >= sc, dml @ zc <= 1])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert s == pytest.approx(prob.value, abs=1e-6)
    # and the matrix form the estimator solves is the same program
    c, A_ub, b_ub, _ = lp_diag_program(dml, dcl)
    assert np.all(A_ub @ np.r_[z, s] <= b_ub + 1e-9) and -c @ np.r_[z, s] == s


def test_lp_diag_unbounded_program_falls_back_to_its_ray():
    # feature 0 is constant inside each labeled set and differs between sets: s -> inf
    rng = np.random.default_rng(0)
    X = np.column_stack([np.repeat([1.0, 2.0], 5), rng.uniform(1, 2, 10)])
    cons = Constraints.from_labels(np.repeat([0, 1], 5))
    with pytest.warns(MetricFallbackWarning, match="unbounded"):
        m = learn_metric(X, cons.must_link, cons.cannot_link, "lp_diag")
    assert m.status == "unbounded_ray"
    assert m.weights.tolist() == [1.0, 0.0]
    assert np.all(pair_sq_diffs(X, cons.must_link) @ m.weights == 0)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")  # cvxpy at 1e-10 tolerances
def test_xing_diag_matches_eq12_in_cvxpy():
    cp = pytest.importorskip("cvxpy")
    # two informative features: the optimum mixes them (an interior point, not a vertex)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    cons = _partial((X[:, 0] > 0).astype(int) + 2 * (X[:, 1] > 0), 4, rng)
    dml, dcl = pair_sq_diffs(X, cons.must_link), pair_sq_diffs(X, cons.cannot_link)
    a, obj, status, _ = learn_xing_diag(dml, dcl)
    assert status == "optimal" and np.sum(a > 1e-6 * a.max()) == 2
    assert np.sqrt(dcl @ a).sum() == pytest.approx(1, rel=1e-9)  # eq. 13 active
    av = cp.Variable(X.shape[1], nonneg=True)
    prob = cp.Problem(cp.Minimize(dml.sum(axis=0) @ av), [cp.sum(cp.sqrt(dcl @ av)) >= 1])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert obj == pytest.approx(prob.value, rel=1e-6)


def test_sdp_full_is_feasible_and_at_least_the_diagonal_split():
    pytest.importorskip("cvxpy")
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    cons = _partial(y, 6, rng)
    mld = X[cons.must_link[:, 0]] - X[cons.must_link[:, 1]]
    cld = X[cons.cannot_link[:, 0]] - X[cons.cannot_link[:, 1]]
    M, s_full, status = learn_sdp_full(mld, cld)
    assert status == "optimal"
    assert np.linalg.eigvalsh(M).min() >= -1e-7
    assert np.einsum("ij,jk,ik->i", mld, M, mld).max() <= 1 + 1e-6
    assert np.einsum("ij,jk,ik->i", cld, M, cld).min() >= s_full - 1e-6
    _, s_diag, _ = learn_lp_diag(mld**2, cld**2)
    assert s_full >= s_diag - 1e-6  # a diagonal z is a feasible M


def test_diag_transform_gives_the_learned_distance():
    X, cons = _iris_pairs()
    m = learn_metric(X, cons.must_link, cons.cannot_link, "lp_diag")
    Xt = m.transform(X)
    d = np.sqrt(((X[:, None, :] - X[None, :5, :]) ** 2 * m.weights).sum(-1))
    np.testing.assert_allclose(cdist(Xt, Xt[:5]), d, atol=1e-12)


def test_identical_cannot_link_points_are_dropped_and_no_pairs_is_an_error():
    X = np.array([[1.0, 1.0], [1.0, 1.0], [2.0, 1.5], [1.2, 1.9]])
    with pytest.warns(MetricFallbackWarning, match="identical"):
        m = learn_metric(X, np.array([[0, 3]]), np.array([[0, 1], [0, 2]]), "lp_diag")
    assert m.n_dropped_pairs == 1
    with pytest.raises(ValueError, match="cannot-link"):
        learn_metric(X, np.array([[0, 3]]), np.empty((0, 2), dtype=int), "xing_diag")
    with pytest.warns(MetricFallbackWarning, match="no supervision"):
        est = ccbench.make_method("fpc", metric="lp_diag").fit(X)
    assert est.metric_status_ == "no_supervision" and est.metric_weights_ is None


def test_learned_metric_helps_nnc_on_a_noisy_feature():
    # one informative feature, four wide noise features: the LP should down-weight the noise
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1, 2], 60)
    X = np.column_stack([y + rng.normal(0, 0.1, 180), rng.uniform(0, 20, (180, 4))])
    cons = _partial(y, 5, rng)
    rand = {}
    for metric in ("euclidean", "lp_diag"):
        est = ccbench.make_method("nnc", n_clusters=3, metric=metric).fit(X, constraints=cons)
        rand[metric] = ccbench.metrics.rand(y, est.labels_)
    assert rand["lp_diag"] > 0.95 > rand["euclidean"]
    assert np.argmax(est.metric_weights_) == 0


# -- the paper's baselines (delegating to the k-means family through the registry) ----


@pytest.mark.parametrize("name", ["cop_kmeans_xing", "pck_means_xing"])
def test_xing_baselines_cluster_in_the_learned_metric(name):
    X, cons = _iris_pairs()
    est = ccbench.make_method(name, n_clusters=3, random_state=0).fit(X, constraints=cons)
    a = learn_metric(X, cons.must_link, cons.cannot_link, "xing_diag").weights
    np.testing.assert_allclose(est.metric_weights_, a)
    delegate = name.replace("_xing", "")
    inner = ccbench.make_method(delegate, **{**est.estimator_.get_params(), "random_state": est.estimator_.random_state})
    assert np.array_equal(inner.fit(X * np.sqrt(a), constraints=cons).labels_, est.labels_)
    assert cons.violations(est.labels_) == (0, 0)  # seeded by S_i: supervision respected
    assert ccbench.metrics.rand(ccbench.load_dataset("iris").y, est.labels_) > 0.8


# -- the report of the Table 2 reproduction ---------------------------------------------


def test_report_puts_a_per_dataset_paper_table_beside_ours():
    import pandas as pd

    from ccbench.reporting.summary import paper_table

    summary = pd.DataFrame(
        [dict(dataset=d, method_label=m, setting="", x=5, mean=v, std=0.01, n_ok=2, n_trials=2)
         for d, m, v in [("iris", "nnc", 0.9), ("wine", "nnc", 0.8)]]
    )
    paper = {"source": "Table 2", "methods": {"NNC": "nnc"},
             "table": {"iris": {"NNC": [0.87, 0.02]}, "wine": {"NNC": [0.80, 0.05]}, "mean": {"NNC": [0.835, 0.0]}}}
    text = paper_table(summary, paper)
    assert "| iris | NNC (`nnc`) | 0.900 ± 0.010 | 0.870 ± 0.020 | +0.030 |" in text
    assert "| mean | NNC (`nnc`) | 0.850 (2 sets) | 0.835 ± 0.000 | +0.015 |" in text


def test_xing_newton_iteration_agrees_with_the_exact_solver_when_bounded():
    from ccbench_plugins.nnc.metric_learning import _xing_g, _xing_newton

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    cons = _partial((X[:, 0] > 0).astype(int) + 2 * (X[:, 1] > 0), 4, rng)
    dml, dcl = pair_sq_diffs(X, cons.must_link), pair_sq_diffs(X, cons.cannot_link)
    m = dml.sum(axis=0)
    exact, _, _, _ = learn_xing_diag(dml, dcl)
    newton, _ = _xing_newton(m, dcl)
    # g(c a) = c m.a - log(sqrt(c) h(a)) is least at c = 1 / (2 m.a): compare those minima
    def g_best(a):
        return _xing_g(a / (2 * m @ a), m, dcl)[0]

    # the exact solver is the minimum; Xing's projected Newton stalls near the a >= 0 face
    assert g_best(exact) <= g_best(newton) + 1e-9
    assert g_best(newton) - g_best(exact) < 1e-2


def test_xing_unbounded_objective_uses_the_newton_iteration():
    rng = np.random.default_rng(0)
    X = np.column_stack([np.repeat([1.0, 2.0], 5), rng.uniform(1, 2, 10)])
    cons = Constraints.from_labels(np.repeat([0, 1], 5))
    with pytest.warns(MetricFallbackWarning, match="Newton"):
        m = learn_metric(X, cons.must_link, cons.cannot_link, "xing_diag")
    assert m.status == "xing_newton"
    assert np.all(np.isfinite(m.weights)) and m.weights[0] > m.weights[1] >= 0
