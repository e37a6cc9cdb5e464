"""SDP family: properties that the mutation run of issue 41 (seed 20261126) found unguarded.

Each test names the line it guards; see ``tests/mutation/issue41/README.md``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ccbench import Constraints, make_method


def _two_blobs():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(scale=0.2, size=(8, 2)), rng.normal(scale=0.2, size=(8, 2)) + 3.0]
    cons = Constraints([[0, 1], [8, 9]], [[0, 8]], n_samples=16)
    return X, cons


@pytest.mark.parametrize("method", ["rn_sdp", "kmedoids"])
def test_n_init_zero_is_refused(method):
    # rn_sdp.py / kmedoids.py _parameter_constraints: n_init = 0 runs no k-medoids start,
    # so there is no best start to keep (run_kmedoids would return None)
    X, cons = _two_blobs()
    with pytest.raises(ValueError, match="parameter 'n_init' must be int in \\[1, inf"):
        make_method(method, n_clusters=2, n_init=0).fit(X, constraints=cons)


def test_sdpa_with_ridge_zero_is_silent():
    # rn_sdp.py fit: ridge = 0 asks for the linear problem, which is what SDPA solves, so
    # nothing is dropped and nothing is said; only a ridge SDPA cannot apply is warned about
    pytest.importorskip("sdpap")
    X, cons = _two_blobs()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = make_method("rn_sdp", n_clusters=2, sigma=1.0, n_neighbors=1, solver="sdpa", ridge=0.0,
                          random_state=0).fit(X, constraints=cons)
    assert est.solver_info_["solver"] == "sdpa" and est.solver_info_["ridge"] == 0.0


def test_kmedoids_with_one_cluster_is_the_one_medoid_of_least_cost():
    # kmedoids.py n_clusters >= 1 and core.kmedoids_swap's k = 1 branch (no second-nearest
    # medoid: a swap's cost is the column sum of the candidate): one cluster is a valid
    # request and its medoid is the point of least summed squared distance (known answer)
    X, _ = _two_blobs()
    est = make_method("kmedoids", n_clusters=1, n_init=2, random_state=0).fit(X)
    dist = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    assert est.medoid_indices_.tolist() == [int(np.argmin(dist.sum(axis=0)))]
    assert est.inertia_ == pytest.approx(dist.sum(axis=0).min())
    assert np.all(est.labels_ == 0) and est.converged_


def test_sdpa_reports_its_duality_gap_as_a_difference():
    # _solvers.py solve_sdpa: solver_info_["duality_gap"] is |primal - dual| of SDPA's
    # pair, in the objective's units; at an optimal solve it is within SDPA's tolerance of
    # 0 (relative to the objective), and the returned K's objective is the primal one
    pytest.importorskip("sdpap")
    from ccbench_plugins.sdp._solvers import solve_sdpa
    from ccbench_plugins.sdp.core import build_problem

    X, cons = _two_blobs()
    p = build_problem(X, cons, sigma=1.0, n_neighbors=2)
    K, info = solve_sdpa(p)
    assert info["status"] == "optimal"
    assert 0.0 <= info["duality_gap"] <= 1e-4 * max(1.0, abs(info["objective"]))
    assert info["objective"] == pytest.approx(p.objective(K))
