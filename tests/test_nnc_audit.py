"""NNC family, issue 28: units, solver flags, cannot-links, fewer clusters, ties, and the
mutations the audit found unguarded. Each test failed on the code before its fix."""

from __future__ import annotations

import itertools
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from ccbench_plugins.nnc import metric_learning as ml
from ccbench_plugins.nnc.core import FewerClustersWarning
from ccbench_plugins.nnc.metric_learning import (
    MetricFallbackWarning,
    learn_metric,
    pair_sq_diffs,
)

import ccbench
from ccbench import Constraints
from ccbench.base import ConvergenceWarning

DATA_DIR = os.environ.get("CCBENCH_DATA_DIR")
needs_data = pytest.mark.skipif(not DATA_DIR, reason="CCBENCH_DATA_DIR is not set (the UCI voting file)")


def _iris(per_class=5, seed=0):
    ds = ccbench.load_dataset("iris", preprocess="minmax_1_2")
    return ds.X, ds.y, ccbench.constraints.labeled_subsets(ds.y, per_class, rng=np.random.default_rng(seed))


def _all_pairs(labels):
    """ML / CL pairs implied by partial labels, built here without the Constraints class."""
    lab = [i for i in range(len(labels)) if labels[i] >= 0]
    ml_, cl_ = [], []
    for i, j in itertools.combinations(lab, 2):
        (ml_ if labels[i] == labels[j] else cl_).append((i, j))
    return np.array(ml_), np.array(cl_)


def _lp_split_cvxpy(dml, dcl):
    """max s s.t. dcl z >= s, dml z <= 1, z >= 0 (eqs. 21-25, squared), independent of HiGHS."""
    import cvxpy as cp

    z, s = cp.Variable(dcl.shape[1], nonneg=True), cp.Variable(nonneg=True)
    scale = max(dcl.max(), dml.max())
    prob = cp.Problem(cp.Maximize(s), [dcl / scale @ z >= s, dml / scale @ z <= 1])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.value


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


# -- 1. the LP metric does not depend on the data's units ------------------------------


def test_lp_metric_and_partition_are_invariant_to_a_global_rescaling():
    X, y, cons = _iris()
    ref = ccbench.make_method("nnc", n_clusters=3, metric="lp_diag").fit(X, constraints=cons)
    assert ref.metric_status_ == "optimal" and ref.metric_.split > 0.5
    for c in 10.0 ** np.arange(-8, 9, 2):
        est = ccbench.make_method("nnc", n_clusters=3, metric="lp_diag").fit(X * c, constraints=cons)
        assert est.metric_status_ == "optimal"
        assert est.metric_.split == pytest.approx(ref.metric_.split, rel=1e-7)  # s is unit-free
        np.testing.assert_allclose(est.metric_weights_ * c**2, ref.metric_weights_, rtol=1e-6, atol=1e-9)
        assert np.array_equal(est.labels_, ref.labels_)


def test_lp_partition_is_invariant_to_rescaling_each_feature():
    X, y, cons = _iris()
    ref = ccbench.make_method("nnc", n_clusters=3, metric="lp_diag").fit(X, constraints=cons)
    c = 10.0 ** np.array([-6.0, 5.0, -3.0, 7.0])
    est = ccbench.make_method("nnc", n_clusters=3, metric="lp_diag").fit(X * c, constraints=cons)
    assert est.metric_.split == pytest.approx(ref.metric_.split, rel=1e-7)
    np.testing.assert_allclose(est.metric_weights_ * c**2, ref.metric_weights_, rtol=1e-6, atol=1e-7)
    assert np.array_equal(est.labels_, ref.labels_)


def test_lp_ray_is_invariant_to_a_global_rescaling():
    X, lab = _nominal_unbounded()
    cons = Constraints.from_labels(lab)
    ref = _quiet(learn_metric, X, cons.must_link, cons.cannot_link, "lp_diag")
    for c in (1e-8, 1e-4, 1e4, 1e8):
        m = _quiet(learn_metric, X * c, cons.must_link, cons.cannot_link, "lp_diag")
        assert m.status == "unbounded_ray"
        np.testing.assert_allclose(m.weights, ref.weights, atol=1e-7)  # sum z = 1: no unit


# -- 2. Xing's solver: converged, recorded, and at the optimum ----------------------------


def _xing_cvxpy(dml, dcl):
    """Eq. 12 with diagonal M in b = m * a (each feature's own scale), by Clarabel."""
    import cvxpy as cp

    m = dml.sum(axis=0)
    D = dcl / m
    D = D / D.max()
    b = cp.Variable(len(m), nonneg=True)
    prob = cp.Problem(cp.Minimize(cp.sum(b)), [cp.sum(cp.sqrt(D @ b)) >= 1])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    bv = np.clip(b.value, 0, None)
    a = bv / m
    a = a / np.sqrt(dcl @ a).sum() ** 2  # eq. 13 with equality
    return float(m @ a)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize("seed", [7, 8, 12, 26])  # the old solver was 100 %, 52 %, 1200 %, 320 % above
def test_xing_bounded_program_reaches_the_optimum_on_badly_scaled_features(seed):
    rng = np.random.default_rng(seed)
    d, n = int(rng.integers(3, 9)), 40
    y = np.repeat(np.arange(3), n // 3 + 1)[:n]
    X = rng.normal(size=(n, d)) * 10.0 ** rng.uniform(-3, 3, d)
    X[:, 0] += y * X[:, 0].std() * 2
    cons = ccbench.constraints.labeled_subsets(y, 4, rng=rng)
    dml, dcl = pair_sq_diffs(X, cons.must_link), pair_sq_diffs(X, cons.cannot_link)
    a, obj, status, converged = ml.learn_xing_diag(dml, dcl)
    assert status == "optimal" and converged
    assert np.sqrt(dcl @ a).sum() == pytest.approx(1, rel=1e-9)
    assert obj == pytest.approx(_xing_cvxpy(dml, dcl), rel=1e-5)


def test_xing_gap_certifies_and_a_short_solve_says_so(monkeypatch):
    X, y, cons = _iris()
    est = ccbench.make_method("nnc", n_clusters=3, metric="xing_diag").fit(X, constraints=cons)
    assert est.converged_ is True and est.metric_status_ == "optimal"
    monkeypatch.setattr(ml, "XING_GAP_TOL", -1.0)  # nothing meets it: must be reported
    with pytest.warns(ConvergenceWarning, match="duality gap"):
        est = ccbench.make_method("nnc", n_clusters=3, metric="xing_diag").fit(X, constraints=cons)
    assert est.converged_ is False and est.metric_status_ == "not_converged"
    with pytest.warns(ConvergenceWarning):
        base = ccbench.make_method("cop_kmeans_xing", n_clusters=3, random_state=0).fit(X, constraints=cons)
    assert base.converged_ is False


def test_harness_row_records_the_metric_solvers_convergence():
    from ccbench.running.harness import fit_and_score

    X, y, cons = _iris()
    for method in ("nnc", "fpc"):
        out = fit_and_score([], method, {"metric": "xing_diag"}, 0, 3, X, y, cons, ["rand"], "warn")
        assert out["converged"] is True


# -- 3. NNC enforces the cannot-links it is registered with --------------------------------


def test_nnc_meets_cannot_links_given_alone():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 0.3, (10, 2)), rng.normal(8, 0.3, (10, 2))]
    # two cannot-links inside one blob: FPC-style assignment puts both pairs together
    cons = Constraints([], [[0, 1], [12, 13]], n_samples=20)
    est = ccbench.make_method("nnc", n_clusters=2, random_state=0).fit(X, constraints=cons)
    assert cons.violations(est.labels_) == (0, 0)
    from ccbench.running.harness import fit_and_score

    out = fit_and_score([], "nnc", {}, 0, 2, X, np.repeat([0, 1], 10), cons, ["rand"], "warn")
    assert out["n_violated"] == 0


@pytest.mark.parametrize("seed", range(10))
def test_nnc_cannot_links_on_free_points_hold_and_nothing_else_moves(seed):
    rng = np.random.default_rng(seed)
    n, k = 40, 3
    X = rng.normal(size=(n, 2))
    part = np.full(n, -1)
    part[:6] = np.repeat(np.arange(k), 2)
    free = np.arange(6, n)
    # a matching on free points plus one link to a labeled point each: degree <= 2 < k
    pts = rng.permutation(free)[:12]
    cl = np.r_[pts.reshape(-1, 2), np.c_[pts[:3], [0, 2, 4]]]
    lab_cons = Constraints.from_labels(part)
    cons = Constraints(lab_cons.must_link, np.r_[lab_cons.cannot_link, cl], n_samples=n, labels=part)
    plain = ccbench.make_method("nnc", n_clusters=k).fit(X, constraints=lab_cons).labels_
    labels = ccbench.make_method("nnc", n_clusters=k).fit(X, constraints=cons).labels_
    assert cons.violations(labels) == (0, 0)
    untouched = np.setdiff1d(np.arange(n), cl.ravel())
    assert np.array_equal(labels[untouched], plain[untouched])
    # a moved point goes to the nearest (dMax) subset its partners leave free
    dmax = np.column_stack([((X[:, None] - X[part == g][None]) ** 2).sum(-1).max(1) for g in range(k)])
    for p in np.flatnonzero(labels != plain):
        assert dmax[p, labels[p]] >= dmax[p, plain[p]]


# -- 4. fewer clusters than asked: warned and recorded ----------------------------------


def test_duplicated_points_give_fewer_clusters_with_a_warning():
    X = np.repeat(np.random.default_rng(0).normal(size=(5, 2)), 4, axis=0)
    with pytest.warns(FewerClustersWarning, match="found 5"):
        est = ccbench.make_method("fpc", n_clusters=8, random_state=0).fit(X)
    assert est.n_clusters_found_ == 5 == len(np.unique(est.labels_))
    assert len(est.cluster_centers_indices_) == 5


def test_every_point_labeled_and_k_above_the_classes_warns():
    X = np.random.default_rng(0).normal(size=(10, 2))
    cons = Constraints.from_labels(np.repeat([0, 1], 5))
    with pytest.warns(FewerClustersWarning, match="found 2"):
        est = ccbench.make_method("nnc", n_clusters=3).fit(X, constraints=cons)
    assert est.n_clusters_found_ == 2
    assert np.array_equal(est.labels_, np.repeat([0, 1], 5))


# -- 5. the LP's optimum is not unique: least-norm tie-break ---------------------------


def test_lp_tie_break_splits_interchangeable_features_evenly():
    # feature 0 duplicates iris's petal length (feature 2 of X, the heaviest): a vertex
    # puts all of that weight on one copy, the least-norm optimum halves it
    X, y, cons = _iris()
    X2 = np.c_[X[:, 2:3], X]
    m = learn_metric(X2, cons.must_link, cons.cannot_link, "lp_diag")
    ref = learn_metric(X, cons.must_link, cons.cannot_link, "lp_diag")
    assert ref.weights[2] > 1
    assert m.split == pytest.approx(ref.split, rel=1e-7)
    assert m.weights[0] == pytest.approx(m.weights[3], rel=1e-6)
    np.testing.assert_allclose(m.weights[[1, 2, 4]], ref.weights[[0, 1, 3]], rtol=1e-6, atol=1e-7)
    assert m.weights[0] == pytest.approx(ref.weights[2] / 2, rel=1e-6)


@needs_data
@pytest.mark.parametrize("seed", range(3))
def test_lp_metric_and_partition_do_not_depend_on_pair_or_feature_order(seed):
    ds = ccbench.load_dataset("voting", preprocess="minmax_1_2", missing="impute")
    rng = np.random.default_rng(seed)
    cons = ccbench.constraints.labeled_subsets(ds.y, 5, rng=rng)
    est = _quiet(ccbench.make_method("nnc", n_clusters=2, metric="lp_diag").fit, ds.X, constraints=cons)
    perm_f = rng.permutation(ds.X.shape[1])
    mlp = cons.must_link[rng.permutation(len(cons.must_link))][:, ::-1]
    clp = cons.cannot_link[rng.permutation(len(cons.cannot_link))]
    m = _quiet(learn_metric, ds.X[:, perm_f], mlp, clp, "lp_diag")
    np.testing.assert_allclose(m.weights, est.metric_weights_[perm_f], atol=1e-6)  # QP accuracy
    cons_p = Constraints(mlp, clp, n_samples=len(ds.y), labels=cons.labels)
    est_p = _quiet(ccbench.make_method("nnc", n_clusters=2, metric="lp_diag").fit, ds.X[:, perm_f],
                   constraints=cons_p)
    assert np.array_equal(est_p.labels_, est.labels_)


# -- 7. mutations the audit found unguarded ---------------------------------------------


def _nominal_unbounded():
    """Two free features (constant inside each labeled set) that separate every pair of sets,
    feature 0 twice as well as 1 on the worst pair; feature 2 is noise. The ray is z = (1, 0, 0):
    min over pairs of (z0 d0 + z1 d1) with d = (1, 0), (4, 4), (1, 4) is max at z0 = 1."""
    rng = np.random.default_rng(1)
    lab = np.repeat([0, 1, 2, -1], [4, 4, 4, 18])
    f0 = np.r_[np.repeat([1.0, 2.0, 3.0], 4), rng.integers(1, 4, 18)]
    f1 = np.r_[np.repeat([1.0, 1.0, 3.0], 4), rng.integers(1, 4, 18)]
    return np.c_[f0, f1, rng.uniform(1, 3, 30)], lab


def test_lp_ray_is_the_best_split_direction_not_uniform():
    X, lab = _nominal_unbounded()
    cons = Constraints.from_labels(lab)
    with pytest.warns(MetricFallbackWarning, match="unbounded"):
        m = learn_metric(X, cons.must_link, cons.cannot_link, "lp_diag")
    assert m.status == "unbounded_ray"
    np.testing.assert_allclose(m.weights, [1.0, 0.0, 0.0], atol=1e-7)
    assert m.split == pytest.approx(1.0, rel=1e-7)


@pytest.mark.parametrize("case", ["bounded", "unbounded"])
def test_nnc_clusters_in_the_learned_metric(case):
    if case == "bounded":
        X, y, cons = _iris(per_class=2, seed=3)
        k = 3
    else:
        X, lab = _nominal_unbounded()
        cons, k = Constraints.from_labels(lab), 3
    est = _quiet(ccbench.make_method("nnc", n_clusters=k, metric="lp_diag").fit, X, constraints=cons)
    assert est.metric_status_ == ("optimal" if case == "bounded" else "unbounded_ray")
    inside = ccbench.make_method("nnc", n_clusters=k).fit(est.metric_.transform(X), constraints=cons).labels_
    plain = ccbench.make_method("nnc", n_clusters=k).fit(X, constraints=cons).labels_
    assert np.array_equal(est.labels_, inside)
    assert not np.array_equal(est.labels_, plain)  # the metric matters here: the test has teeth


def test_lp_bounded_when_a_constant_feature_does_not_separate_every_pair():
    # feature 0 is constant inside every labeled set but equal for sets 0 and 1: bounded
    rng = np.random.default_rng(2)
    lab = np.repeat([0, 1, 2, -1], [3, 3, 3, 11])
    X = np.c_[np.r_[np.repeat([1.0, 1.0, 2.0], 3), rng.uniform(1, 2, 11)], rng.uniform(1, 2, (20, 2))]
    cons = Constraints.from_labels(lab)
    m = learn_metric(X, cons.must_link, cons.cannot_link, "lp_diag")
    assert m.status == "optimal"
    dml, dcl = pair_sq_diffs(X, cons.must_link), pair_sq_diffs(X, cons.cannot_link)
    assert m.split == pytest.approx(_lp_split_cvxpy(dml, dcl), rel=1e-6)


def test_estimator_learns_the_lp_metric_from_every_pair_the_labels_imply():
    X, y, cons = _iris(per_class=4, seed=5)
    est = ccbench.make_method("nnc", n_clusters=3, metric="lp_diag").fit(X, constraints=cons)
    mlp, clp = _all_pairs(cons.labels)
    assert len(mlp) == 3 * 6 and len(clp) == 3 * 16
    expected = _lp_split_cvxpy(pair_sq_diffs(X, mlp), pair_sq_diffs(X, clp))
    assert est.metric_.split == pytest.approx(expected, rel=1e-6)
    assert np.all(pair_sq_diffs(X, mlp) @ est.metric_weights_ <= 1 + 1e-9)


def test_xing_newton_steps_stay_in_the_nonnegative_orthant():
    # unbounded (feature 0 constant in each set) and two noisy features whose ML spread
    # pushes the unprojected Newton step below zero
    rng = np.random.default_rng(0)
    lab = np.repeat([0, 1, -1], [6, 6, 8])
    X = np.c_[np.r_[np.repeat([1.0, 2.0], 6), rng.uniform(1, 2, 8)], rng.normal(0, 5, (20, 2))]
    cons = Constraints.from_labels(lab)
    dml, dcl = pair_sq_diffs(X, cons.must_link), pair_sq_diffs(X, cons.cannot_link)
    a, stopped = ml._xing_newton(dml.sum(axis=0), dcl)
    assert np.all(a >= 0) and np.all(np.isfinite(a))
    with pytest.warns(MetricFallbackWarning, match="Newton"):
        m = learn_metric(X, cons.must_link, cons.cannot_link, "xing_diag")
    assert m.status == "xing_newton" and np.all(m.weights >= 0)
    assert np.all(np.isfinite(m.transform(X)))


@pytest.mark.parametrize("name", ["cop_kmeans_xing", "pck_means_xing"])
def test_xing_baselines_run_the_delegate_to_convergence_from_the_subset_centroids(name):
    X, y, cons = _iris(per_class=2, seed=2)
    est = ccbench.make_method(name, n_clusters=3, random_state=0).fit(X, constraints=cons)
    Xa = X * np.sqrt(est.metric_weights_)
    delegate = name.replace("_xing", "")
    # the reference is written out here (not copied from est.estimator_): the paper's protocol
    ref = ccbench.make_method(delegate, n_clusters=3, init="supervision", n_init=1, max_iter=100,
                              random_state=0).fit(Xa, constraints=cons)
    assert np.array_equal(est.labels_, ref.labels_)
    assert est.n_iter_ == ref.n_iter_ > 1 and est.converged_
    # and the test has teeth: one iteration, or k-means++ seeds, give other partitions
    # (COP-k-means's local search after Lloyd's iterations reaches the same partition from one iteration:
    # the iteration count is told apart with the search off, the plain Wagstaff algorithm)
    plain = {"local_search": False} if delegate == "cop_kmeans" else {}
    with pytest.warns(ConvergenceWarning):
        one = ccbench.make_method(delegate, n_clusters=3, init="supervision", n_init=1, max_iter=1,
                                  random_state=0, **plain).fit(Xa, constraints=cons)
    pp = ccbench.make_method(delegate, n_clusters=3, init="k-means++", n_init=1, max_iter=100,
                             random_state=0).fit(Xa, constraints=cons)
    assert not np.array_equal(one.labels_, ref.labels_)
    assert not np.array_equal(pp.labels_, ref.labels_)


# -- 6. Table 2's voting: '?' as a third nominal value ----------------------------------


@needs_data
def test_voting_missing_category_codes_not_voted_as_a_third_value():
    raw = np.array([line.split(",") for line in Path(DATA_DIR, "voting", "house-votes-84.data").read_text().split()])
    votes = raw[:, 1:]
    # the paper's coding (nnc_table2 sets nominal: codes); the default one-hot is tests/test_nominal_onehot.py's
    ds = ccbench.load_dataset("voting", missing="category", nominal="codes")
    imputed = ccbench.load_dataset("voting", missing="impute", nominal="codes")
    assert ds.X.shape == (435, 16) and np.array_equal(ds.y, imputed.y)
    # sorted text values, '?' among them: ? = 0, n = 1, y = 2 in every column
    expected = np.select([votes == "?", votes == "n"], [0.0, 1.0], 2.0)
    assert np.array_equal(ds.X, expected)
    assert ds.meta["category_cells"] == int((votes == "?").sum()) == 392
    assert all(codes == ["?", "n", "y"] for codes in ds.meta["nominal_codes"].values())
    # Table 2's experiment uses it for voting only
    from hydra import compose, initialize_config_module

    with initialize_config_module("ccbench_conf", version_base="1.3"):
        cfg = compose("config", overrides=["experiment=nnc_table2", "dataset=voting"])
        other = compose("config", overrides=["experiment=nnc_table2", "dataset=iris_uci"])
    assert cfg.dataset.missing == "category" and other.dataset.missing == "impute"
    assert cfg.dataset.nominal == "codes"


# -- survivors of the BEFORE mutation sample (tests/mutation/baseline/nnc.md) ----------


def test_sdp_full_through_the_front_door_gives_the_learned_distance():
    pytest.importorskip("cvxpy")
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    cons = ccbench.constraints.labeled_subsets(y, 6, rng=rng)
    m = learn_metric(X, cons.must_link, cons.cannot_link, "sdp_full")
    assert m.status == "optimal"
    # differences written out here, not by the module
    mld = np.array([X[i] - X[j] for i, j in cons.must_link])
    cld = np.array([X[i] - X[j] for i, j in cons.cannot_link])
    assert np.einsum("ij,jk,ik->i", mld, m.weights, mld).max() <= 1 + 1e-6
    assert np.einsum("ij,jk,ik->i", cld, m.weights, cld).min() == pytest.approx(m.split, rel=1e-4)
    Xt = m.transform(X)
    diff = X[:, None, :] - X[None, :5, :]
    d = np.sqrt(np.maximum(np.einsum("abi,ij,abj->ab", diff, m.weights, diff), 0))
    np.testing.assert_allclose(np.linalg.norm(Xt[:, None] - Xt[None, :5], axis=-1), d, atol=1e-6)


def test_sdp_full_unbounded_when_a_direction_keeps_must_links_at_zero():
    pytest.importorskip("cvxpy")
    X, lab = _nominal_unbounded()
    cons = Constraints.from_labels(lab)
    with pytest.warns(MetricFallbackWarning, match="unbounded"):
        m = learn_metric(X, cons.must_link, cons.cannot_link, "sdp_full")
    assert m.status == "unbounded_ray" and np.trace(m.weights) == pytest.approx(1, abs=1e-6)
    mld = X[cons.must_link[:, 0]] - X[cons.must_link[:, 1]]
    assert np.abs(np.einsum("ij,jk,ik->i", mld, m.weights, mld)).max() < 1e-6


def test_lp_program_without_must_links_has_one_column_per_feature():
    dcl = np.array([[1.0, 0.0, 4.0], [0.0, 2.0, 1.0]])
    c, A_ub, b_ub, bounds = ml.lp_diag_program(np.empty((0, 3)), dcl)
    assert A_ub.shape == (2, 4) and len(bounds) == 4 and c.tolist() == [0, 0, 0, -1]
    np.testing.assert_array_equal(A_ub[:, :3], -dcl)


def test_the_papers_baseline_protocol_is_the_default():
    # section 5.2: seeded by the S_i centroids, one run, at most 100 repetitions, penalty 1
    for name, extra in (("cop_kmeans_xing", {}), ("pck_means_xing", {"penalty": 1.0})):
        params = ccbench.make_method(name).get_params()
        assert params == {"n_clusters": 2, "metric": "xing_diag", "init": "supervision", "n_init": 1,
                          "max_iter": 100, "random_state": None, **extra}
    X, y, cons = _iris(per_class=2, seed=2)
    est = ccbench.make_method("pck_means_xing", n_clusters=3, random_state=0).fit(X, constraints=cons)
    assert est.estimator_.get_params()["penalty"] == 1.0 and est.estimator_.max_iter == 100


def test_n_clusters_bounds():
    X = np.random.default_rng(0).normal(size=(10, 2))
    assert np.all(ccbench.make_method("nnc", n_clusters=1).fit(X).labels_ == 0)
    assert np.all(ccbench.make_method("fpc", n_clusters=1, random_state=0).fit(X).labels_ == 0)
    for name in ("nnc", "fpc", "cop_kmeans_xing", "pck_means_xing"):
        with pytest.raises(ValueError, match="n_clusters"):
            ccbench.make_method(name, n_clusters=0).fit(X)
    for name in ("cop_kmeans_xing", "pck_means_xing"):
        for key in ("n_init", "max_iter"):
            with pytest.raises(ValueError, match=key):
                ccbench.make_method(name, **{key: 0}).fit(X)


@needs_data
def test_xing_leaves_no_cannot_link_pair_at_distance_zero():
    # Table 2, iris_uci trial 15: L-BFGS-B stopped with the features of one cannot-link
    # pair at weight 0 (slope -inf there), so the duality gap was infinite
    from ccbench.running import protocol

    ds = ccbench.load_dataset("iris_uci", preprocess="minmax_1_2")
    rng, _ = protocol.trial_streams(7685838869667224706)
    cons, _ = protocol.draw_supervision(ds.y, {"name": "labeled_subsets", "per_class": 5}, {"name": "none"}, rng)
    m = learn_metric(ds.X, cons.must_link, cons.cannot_link, "xing_diag")
    assert m.status == "optimal" and m.converged
    assert (pair_sq_diffs(ds.X, cons.cannot_link) @ m.weights).min() > 0


# -- survivors of the AFTER mutation sample (tests/mutation/results/nnc.md) ---------------


def test_nnc_meets_a_single_cannot_link():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 0.3, (10, 2)), rng.normal(8, 0.3, (10, 2))]
    cons = Constraints([], [[0, 1]], n_samples=20)
    labels = ccbench.make_method("nnc", n_clusters=2, random_state=0).fit(X, constraints=cons).labels_
    assert labels[0] != labels[1]


def test_xing_newton_stops_where_its_own_rule_says():
    from ccbench_plugins.nnc.metric_learning import _xing_g

    X, lab = _nominal_unbounded()
    cons = Constraints.from_labels(lab)
    dml, dcl = pair_sq_diffs(X, cons.must_link), pair_sq_diffs(X, cons.cannot_link)
    m = dml.sum(axis=0)
    a, stopped = ml._xing_newton(m, dcl)
    assert stopped
    # one more step of the same iteration lowers g by less than tol (1e-3) relative
    g0, grad, hess = _xing_g(a, m, dcl)
    step = np.linalg.solve(hess + 1e-6 * np.eye(len(a)), grad)
    best = min(_xing_g(np.maximum(a - lam * step, 0.0), m, dcl)[0] for lam in 0.5 ** np.arange(40))
    assert best >= g0 - 1e-3 * abs(best)
    # and it is not the start: a = 1 is not where the rule stops
    g1 = _xing_g(np.ones(len(a)), m, dcl)[0]
    assert g0 < g1


def _least_norm_cvxpy(dml, dcl, s_opt):
    import cvxpy as cp

    scale = np.maximum(dcl.max(axis=0), dml.max(axis=0))
    w = cp.Variable(dcl.shape[1], nonneg=True)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(w)),
                      [dcl / scale @ w >= s_opt * (1 - 1e-9), dml / scale @ w <= 1])
    prob.solve(solver="CLARABEL")
    return w.value / scale


def test_lp_tie_break_is_the_least_norm_optimum_of_an_independent_qp():
    # iris with petal length twice: a face of optima; the QP written here, in one piece
    X, y, cons = _iris()
    X2 = np.c_[X[:, 2:3], X]
    dml, dcl = pair_sq_diffs(X2, cons.must_link), pair_sq_diffs(X2, cons.cannot_link)
    m = learn_metric(X2, cons.must_link, cons.cannot_link, "lp_diag")
    np.testing.assert_allclose(m.weights, _least_norm_cvxpy(dml, dcl, m.split), rtol=1e-4, atol=1e-6)


def test_dropped_cannot_links_are_counted():
    X = np.array([[1.0, 1.0], [1.0, 1.0], [2.0, 1.5], [1.2, 1.9]])
    with pytest.warns(MetricFallbackWarning, match="1 cannot-link"):
        m = learn_metric(X, np.array([[0, 3]]), np.array([[0, 1], [0, 2], [1, 2]]), "lp_diag")
    assert m.n_dropped_pairs == 1


def test_sdp_full_bounded_when_a_cannot_link_stays_in_the_must_link_span():
    pytest.importorskip("cvxpy")
    rng = np.random.default_rng(2)
    lab = np.repeat([0, 1, 2, -1], [3, 3, 3, 11])
    X = np.c_[np.r_[np.repeat([1.0, 1.0, 2.0], 3), rng.uniform(1, 2, 11)], rng.uniform(1, 2, (20, 2))]
    cons = Constraints.from_labels(lab)
    m = learn_metric(X, cons.must_link, cons.cannot_link, "sdp_full")
    assert m.status == "optimal"


@needs_data
def test_xing_newton_takes_the_least_squares_step_where_the_hessian_is_singular_in_floating_point():
    # the leaderboard's ecoli cell with 5 % dense pairs, trial 5: after one projected step a
    # cannot-link pair sits at distance 0 (Hessian entries ~1e16) and feature 3 varies in no
    # pair, so solve() raised LinAlgError and both Xing baselines recorded an error row
    from ccbench.running import protocol

    cell = {"seed": 0, "dataset": {"name": "ecoli", "preprocess": "standardize"},
            "constraints": {"fraction": 0.05, "name": "fraction_pairs"}, "noise": {"name": "none", "rate": 0.0}}
    ds = ccbench.load_dataset("ecoli", preprocess="standardize")
    rng, _ = protocol.trial_streams(protocol.trial_seed(cell, 5))
    cons, _ = protocol.draw_supervision(ds.y, cell["constraints"], cell["noise"], rng)
    dml, dcl = pair_sq_diffs(ds.X, cons.must_link), pair_sq_diffs(ds.X, cons.cannot_link)
    m = dml.sum(axis=0)
    with pytest.raises(np.linalg.LinAlgError):  # the premise: the plain Newton solve fails on this draw
        a = np.ones(len(m))
        for _ in range(5):
            g0, grad, hess = ml._xing_g(a, m, dcl)
            step = np.linalg.solve(hess + 1e-6 * np.eye(len(a)), grad)
            lams = 0.5 ** np.arange(40)
            a = min((np.maximum(a - lam * step, 0.0) for lam in lams), key=lambda c: ml._xing_g(c, m, dcl)[0])
    a, stopped = ml._xing_newton(m, dcl)
    assert stopped and np.all(a >= 0) and np.all(np.isfinite(a))
    assert ml._xing_g(a, m, dcl)[0] < ml._xing_g(np.ones(len(m)), m, dcl)[0]
    with pytest.warns(MetricFallbackWarning, match="Newton"):
        est = ccbench.make_method("cop_kmeans_xing", n_clusters=8, random_state=0).fit(ds.X, constraints=cons)
    assert est.labels_.shape == (len(ds.X),)
