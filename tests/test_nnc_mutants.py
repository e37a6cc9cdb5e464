"""NNC family: survivors of the mutation sample of seed 20261130 (issue 54, item 20, second round).

Each test asserts the property the mutated line is responsible for: a known answer on a hand-sized
case, or the documented rule of a solver step observed through the calls it makes.
``tests/mutation/issue54/seed20261130/README.md`` lists the draw each test kills.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from ccbench_plugins.nnc import metric_learning as ml


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def test_xing_newton_gives_a_feature_varied_only_inside_must_links_zero_weight():
    # Draw 8: the Newton step's ridge (hess + 1e-6 I) with its sign flipped. Feature 1 differs
    # inside both must-link pairs and across no cannot-link pair: it raises the must-link term
    # m.a and separates nothing, so g decreases as its weight goes to 0. Its Hessian row is
    # zero, so the ridge alone decides the step there: + 1e-6 drives it to 0 (the projection
    # a >= 0 keeps it there); - 1e-6 turns the step around and the weight stays near its start.
    # Feature 0 is constant inside every must-link pair (the unbounded case: Newton's route).
    X = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.1], [1.0, 0.0, 1.0], [1.0, 1.0, 1.2], [3.0, 1.0, 2.0]])
    must = np.array([[0, 1], [2, 3]])
    cannot = np.array([[0, 2], [1, 3], [1, 4]])
    lm = _quiet(ml.learn_metric, X, must, cannot, "xing_diag")
    assert lm.status == "xing_newton"
    assert lm.weights[1] == 0.0
    # eq. 13 with equality: the cannot-link distances in the learned metric sum to 1
    dcl = ml.pair_sq_diffs(X, cannot)
    assert np.sqrt(dcl @ lm.weights).sum() == pytest.approx(1.0, rel=1e-12)


def test_a_metric_that_drops_no_pair_reports_zero_dropped_pairs():
    # Draw 22: LearnedMetric's n_dropped_pairs default 0 -> 1. The Euclidean metric reads no
    # pair, and a learned metric from cannot-links of distinct points drops none.
    X = np.array([[0.0, 0.0], [0.0, 1.0], [2.0, 0.0], [2.0, 1.0]])
    must, cannot = np.array([[0, 1]]), np.array([[0, 2], [1, 3]])
    assert ml.learn_metric(X, must, cannot, "euclidean").n_dropped_pairs == 0
    for kind in ("lp_diag", "xing_diag"):
        assert _quiet(ml.learn_metric, X, must, cannot, kind).n_dropped_pairs == 0


def test_xing_objective_is_infinite_where_no_cannot_link_pair_is_separated():
    # Draw 37: the guard ``not h > 0`` -> ``not h >= 0``. At a b that gives every cannot-link
    # pair distance 0, g = sum(b) - log(0) = +inf: returned as such, without dividing by the
    # zero distances (numpy would warn; errstate makes that an error here).
    D = np.array([[1.0, 0.0], [2.0, 0.0]])  # feature 1 separates no pair
    with np.errstate(all="raise"):
        for b in (np.zeros(2), np.array([0.0, 3.0])):
            g, grad = ml._xing_b_objective(b, D)
            assert g == np.inf
            assert np.all(np.isfinite(grad))
        for b0 in (0.25, 4.0):  # g = sum(b) - log h by hand, h = sqrt(b0) + sqrt(2 b0)
            g, _ = ml._xing_b_objective(np.array([b0, 0.0]), D)
            assert g == pytest.approx(b0 - np.log(np.sqrt(b0) + np.sqrt(2 * b0)), rel=1e-12)


def _spy_minimize(monkeypatch, replies=()):
    """Record the start of every L-BFGS-B call; the k-th call returns replies[k] if given."""
    from scipy.optimize import minimize as real

    starts = []

    def spy(fun, x0, *args, **kwargs):
        starts.append(np.array(x0, dtype=float))
        if len(starts) <= len(replies):
            class R:
                x = np.asarray(replies[len(starts) - 1], dtype=float)
            return R()
        return real(fun, x0, *args, **kwargs)

    monkeypatch.setattr(ml, "minimize", spy)
    return starts


def test_xing_bounded_starts_from_the_uniform_point_on_gs_optimal_scale(monkeypatch):
    # Draw 29: the start 0.5 / d -> 1.5 / d. Along a ray t b, g(t b) = t sum(b) - log sqrt(t) - log h(b)
    # is least at t sum(b) = 1/2, so the minimiser has sum(b) = 1/2 and the documented start is
    # the uniform point already on that scale.
    starts = _spy_minimize(monkeypatch)
    rng = np.random.default_rng(3)
    m, dcl = rng.uniform(0.5, 2.0, size=4), rng.uniform(0.1, 3.0, size=(6, 4))
    a, gap = ml._xing_bounded(m, dcl)
    assert gap <= ml.XING_GAP_TOL
    np.testing.assert_allclose(starts[0], np.full(4, 0.125))
    # the optimum found is on the same scale: sum(b) = 1/2 in b = m * a (g's minimiser does
    # not depend on the factor that scales D to max 1)
    assert (m * a).sum() == pytest.approx(0.5, rel=1e-6)


def test_xing_bounded_restarts_by_giving_a_zero_distance_pairs_features_weight(monkeypatch):
    # Draw 16: the restart's support ``D[zero] > 0`` -> ``== 0``. A first solve that stops with
    # cannot-link pair 0 at distance 0 (its features 0 and 1 at weight 0): the next start gives
    # exactly those features a little weight (1e-6 of the largest) and keeps the others.
    m = np.ones(3)
    dcl = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
    stuck = np.array([0.0, 0.0, 0.4])
    starts = _spy_minimize(monkeypatch, replies=[stuck])
    a, gap = ml._xing_bounded(m, dcl)
    assert len(starts) >= 2
    np.testing.assert_allclose(starts[1], [0.4e-6, 0.4e-6, 0.4])
    assert gap <= ml.XING_GAP_TOL and np.all(dcl @ a > 0)


def test_xing_not_converged_warning_states_the_objectives_factor_from_the_gap(monkeypatch):
    # Draw 33: the factor (1 + gap)^2 printed as (1 + gap)^1. xing_gap bounds (h* - h)/h, and
    # the eq. 12 objective scales as 1/h^2, so it is within (1 + gap)^2 of its optimum: the
    # warning's factor must be that of the gap it prints.
    from ccbench.base import ConvergenceWarning

    real = ml._xing_bounded
    monkeypatch.setattr(ml, "_xing_bounded", lambda m, dcl: (real(m, dcl)[0], 0.1))
    X = np.array([[0.0, 0.0], [0.1, 1.0], [2.0, 0.2], [2.1, 1.1]])
    with pytest.warns(ConvergenceWarning) as rec:
        lm = ml.learn_metric(X, np.array([[0, 1], [2, 3]]), np.array([[0, 2], [1, 3]]), "xing_diag")
    assert not lm.converged and lm.status == "not_converged"
    msg = str(rec[0].message)
    gap = float(re.search(r"duality gap ([0-9.e+-]+) >", msg).group(1))
    factor = float(re.search(r"up to a factor ([0-9.e+-]+) above", msg).group(1))
    assert factor == pytest.approx((1 + gap) ** 2, rel=1e-3)


def test_nnc_with_n_clusters_none_and_no_labeled_subset_is_refused():
    # Draw 5: the guard ``k == 0`` -> ``k == -1``. n_clusters=None takes k from the labeled
    # subsets; with none (no labels, no must-link) k = 0 and the fit must refuse, naming the
    # fix, instead of returning one cluster silently.
    from ccbench import Constraints
    from ccbench_plugins.nnc.nnc import NearestNeighbourClustering

    X = np.random.default_rng(0).normal(size=(8, 2))
    for given in (None, Constraints(cannot_link=[(0, 1)], n_samples=8)):
        with pytest.raises(ValueError, match="n_clusters=None needs labeled subsets"):
            NearestNeighbourClustering(n_clusters=None).fit(X, constraints=given)


def test_the_repair_never_moves_a_farthest_point_centre_out_of_its_cluster():
    # Draw 23: centres no longer counted as fixed in enforce_cannot_links. Centres are
    # representatives (placed from the start): a free point may not take a centre's cluster when
    # it is cannot-linked to the centre. Here q (index 1) duplicates the labeled s and is
    # cannot-linked to both s and the centre at x = 1: with the centre fixed, q has only the far
    # cluster left; unfixed, q takes the centre's cluster first and the centre is pushed into S0.
    from ccbench import Constraints
    from ccbench_plugins.nnc.nnc import NearestNeighbourClustering

    X = np.array([[0.0], [0.0], [1.0], [10.0]])
    cons = Constraints(cannot_link=[(0, 1), (1, 2)], labels=[0, -1, -1, -1], n_samples=4)
    est = NearestNeighbourClustering(n_clusters=3).fit(X, constraints=cons)
    np.testing.assert_array_equal(est.cluster_centers_indices_, [3, 2])
    # each centre labels its own cluster (clusters 1, 2 after the one labeled subset)
    np.testing.assert_array_equal(est.labels_[est.cluster_centers_indices_], [1, 2])
    np.testing.assert_array_equal(est.labels_, [0, 1, 2, 1])
