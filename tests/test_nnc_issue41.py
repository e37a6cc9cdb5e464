"""NNC family: properties that the mutation run of issue 41 (seed 20261126) found unguarded.

Each test names the line it guards; see ``tests/mutation/issue41/README.md``.
"""

from __future__ import annotations

import numpy as np
import pytest
from ccbench_plugins.nnc import metric_learning as ml


def test_least_norm_qp_retries_at_default_tolerances_after_a_solver_error(monkeypatch):
    # metric_learning.py _least_norm_qp: Clarabel at 1e-12 tolerances can fail with a
    # SolverError; the second pass at its default tolerances must then run, not the error
    # escape. Known answer: min ||w||^2, w >= 0, w1 + 2 w2 >= 1, w1 + w2 <= 1 -> w = (1, 2) / 5.
    cp = pytest.importorskip("cvxpy")
    real = cp.Problem.solve
    calls = []

    def tight_fails(self, *args, **kwargs):
        calls.append(kwargs)
        if "tol_gap_abs" in kwargs:
            raise cp.error.SolverError("simulated failure at tight tolerances")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", tight_fails)
    w = ml._least_norm_qp(np.array([[1.0, 2.0]]), np.array([1.0]), np.array([[1.0, 1.0]]), eq=False)
    assert len(calls) == 2
    np.testing.assert_allclose(w, [0.2, 0.4], atol=1e-6)


@pytest.mark.parametrize("program, status", [
    (([1.0], [[1.0]], [-1.0], [(0, None)]), 2),   # x >= 0 and x <= -1: infeasible
    (([-1.0], [[-1.0]], [0.0], [(0, None)]), 3),  # maximise x >= 0: unbounded
])
def test_a_metric_lp_that_highs_cannot_solve_raises(program, status):
    # metric_learning.py _linprog: any HiGHS status other than 0 (optimal) means res.x is
    # no optimum; it must raise with the status, not hand a non-solution to the metric
    with pytest.raises(RuntimeError, match=f"HiGHS could not solve the metric LP \\(status {status}\\)"):
        ml._linprog(*program)


def test_sdp_full_ray_keeps_must_link_pairs_at_distance_zero():
    # metric_learning.py learn_sdp_full, unbounded case: the direction of divergence lives on
    # the complement of the must-link differences (M d_ml = 0: must-linked points coincide).
    # Known answer: ML along e1; CL differences (5, 1, 0) and (5, 0, 1) leave that span, so
    # the ray is M = diag(0, 1/2, 1/2) with split 1/2 -- not M = e1 e1^T (split 25), which
    # the cannot-link pairs would prefer if e1 were allowed
    pytest.importorskip("cvxpy")
    with pytest.warns(ml.MetricFallbackWarning, match="unbounded"):
        M, split, status = ml.learn_sdp_full(np.array([[1.0, 0.0, 0.0]]),
                                             np.array([[5.0, 1.0, 0.0], [5.0, 0.0, 1.0]]))
    assert status == "unbounded_ray"
    np.testing.assert_allclose(M @ [1.0, 0.0, 0.0], 0.0, atol=1e-6)
    np.testing.assert_allclose(M, np.diag([0.0, 0.5, 0.5]), atol=1e-5)
    assert split == pytest.approx(0.5, abs=1e-5)


def test_xing_objective_gradient_and_hessian_match_finite_differences():
    # metric_learning.py _xing_g: Xing's Newton steps use the gradient m - d(log h) and the
    # Hessian of -log h; both must be the derivatives of the value it returns (two routes)
    rng = np.random.default_rng(0)
    dcl = rng.uniform(0.1, 2.0, size=(7, 4))
    m = rng.uniform(0.5, 1.5, size=4)
    a = rng.uniform(0.5, 1.5, size=4)
    g, grad, hess = ml._xing_g(a, m, dcl)
    eps = 1e-6
    eye = np.eye(4)
    num_grad = np.array([(ml._xing_g(a + eps * e, m, dcl)[0] - ml._xing_g(a - eps * e, m, dcl)[0]) / (2 * eps)
                         for e in eye])
    np.testing.assert_allclose(grad, num_grad, rtol=1e-6, atol=1e-8)
    num_hess = np.array([(ml._xing_g(a + eps * e, m, dcl)[1] - ml._xing_g(a - eps * e, m, dcl)[1]) / (2 * eps)
                         for e in eye])
    np.testing.assert_allclose(hess, num_hess, rtol=1e-5, atol=1e-7)


def test_growth_opens_no_cluster_on_points_that_coincide_with_a_centre():
    # core.py grow_and_assign: after the first centre, a point at distance 0 from the
    # representatives would open an empty cluster; with every point identical only one
    # centre exists, whatever n_clusters asks for
    from ccbench_plugins.nnc.core import grow_and_assign

    empty = np.empty(0, dtype=np.intp)
    labels, centres = grow_and_assign(np.ones((6, 2)), 3, members=empty, starts=empty,
                                      rng=np.random.default_rng(0))
    assert len(centres) == 1
    np.testing.assert_array_equal(labels, 0)


def test_xing_b_objective_is_finite_below_unit_spread():
    # metric_learning.py _xing_b_objective: g(b) = sum b - log h is finite for any h > 0,
    # also h < 1 (small weights, as at L-BFGS-B's start 0.5 / d); only h = 0 is +inf
    D = np.array([[0.04, 0.0], [0.0, 0.09]])
    b = np.array([1.0, 1.0])  # r = (0.2, 0.3), h = 0.5
    g, grad = ml._xing_b_objective(b, D)
    assert g == pytest.approx(2.0 - np.log(0.5))
    np.testing.assert_allclose(grad, 1.0 - D.T @ (0.5 / np.array([0.2, 0.3])) / 0.5)
    assert ml._xing_b_objective(np.zeros(2), D)[0] == np.inf
