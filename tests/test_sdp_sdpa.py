"""RN-SDP through SDPA (issue 29): the bound-indexed form agrees with the cvxpy reference."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from ccbench_plugins.sdp import _solvers
from ccbench_plugins.sdp._solvers import (
    DEFAULT_RIDGE,
    auto_solver,
    box_violation,
    sdpa_rows,
    solve_admm,
    solve_cvxpy,
    solve_sdpa,
)
from ccbench_plugins.sdp.core import RNProblem, build_problem
from sklearn.metrics import adjusted_rand_score

from ccbench import load_dataset, make_method
from ccbench.base import InfeasibleConstraintsError
from ccbench.constraints import per_class_pairs

pytest.importorskip("sdpap")

#: CLARABEL optima of test_sdp's iris subsets (tolerances 1e-10)
IRIS_REF_OBJECTIVE = {60: 0.39580618134004775, 90: 0.9870096280208794}


def _iris_subset(n, j=3, t=3):
    ds = load_dataset("iris")
    idx = np.linspace(0, 149, n).round().astype(int)
    cons = per_class_pairs(ds.y[idx], j, rng=np.random.default_rng(0))
    return build_problem(ds.X[idx], cons, sigma=0.271, n_neighbors=t)


def _blobs_problem(t, reading="prose"):
    rng = np.random.default_rng(0)
    X = np.concatenate([c + rng.normal(scale=0.6, size=(12, 2)) for c in ([0, 0], [3, 0], [0, 3])])
    y = np.repeat(np.arange(3), 12)
    cons = per_class_pairs(y, 2, rng=np.random.default_rng(0))
    return build_problem(X, cons, sigma=1.0, n_neighbors=t, reading=reading)


@pytest.mark.parametrize("case", ["blobs t=0", "blobs t=2", "blobs literal t=2", "iris n=30 t=3"])
def test_sdpa_matches_cvxpy(case):
    if case.startswith("iris"):
        p = _iris_subset(30, j=2)
    else:
        p = _blobs_problem(int(case[-1]), reading="literal" if "literal" in case else "prose")
    K, info = solve_sdpa(p)
    assert info["status"] == "optimal"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        R, ref = solve_cvxpy(p, solver="CLARABEL", ridge=0.0)
    # SDPA's default accuracy (epsilon 1e-7) gives 4e-7 absolute on these degenerate problems
    assert info["objective"] == pytest.approx(ref["objective"], rel=1e-5, abs=1e-6)
    assert box_violation(K, p.lo, p.up) <= 1e-8
    assert np.linalg.eigvalsh(K)[0] >= -1e-8
    np.testing.assert_allclose(np.diag(K), 1.0, atol=1e-8)
    if case == "blobs t=2":
        # where the optimum is unique (sigma = 1 leaves no tiny coefficients) so is K
        np.testing.assert_allclose(K, R, atol=1e-4)


@pytest.mark.parametrize("n", [60, 90])
def test_sdpa_reaches_the_stored_clarabel_optimum(n):
    _, info = solve_sdpa(_iris_subset(n))
    assert info["status"] == "optimal"
    assert info["objective"] == pytest.approx(IRIS_REF_OBJECTIVE[n], rel=2e-6)


def test_sdpa_is_quiet(capfd):
    # SDPA's C++ writes to fd 1 itself; a sweep's log must not fill with it
    solve_sdpa(_blobs_problem(2))
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_sdpa_reports_an_infeasible_problem():
    # k01 >= 0.9 and k12 >= 0.9 force k02 >= 0.62 on a PSD unit-diagonal K; k02 <= -0.9
    lo, up = np.full((3, 3), -np.inf), np.full((3, 3), np.inf)
    lo[0, 1] = lo[1, 0] = lo[1, 2] = lo[2, 1] = 0.9
    up[0, 2] = up[2, 0] = -0.9
    np.fill_diagonal(lo, 1.0)
    np.fill_diagonal(up, 1.0)
    p = RNProblem(C=np.zeros((3, 3)), lo=lo, up=up, chunklet=np.arange(3))
    with pytest.raises(InfeasibleConstraintsError, match="SDPA"):
        solve_sdpa(p)


def test_estimator_with_sdpa():
    ds = load_dataset("iris")
    idx = np.linspace(0, 149, 45).round().astype(int)
    cons = per_class_pairs(ds.y[idx], 2, rng=np.random.default_rng(0))
    kw = dict(n_clusters=3, sigma=0.271, random_state=0)
    a = make_method("rn_sdp", solver="sdpa", **kw).fit(ds.X[idx], constraints=cons)
    assert a.solver_info_["solver"] == "sdpa" and a.converged_
    b = make_method("rn_sdp", solver="admm", ridge=0.0, tol=1e-7, max_iter=20000, **kw).fit(
        ds.X[idx], constraints=cons)
    assert a.solver_info_["objective"] == pytest.approx(b.solver_info_["objective"], rel=1e-5)


def test_sdpa_says_that_it_ignores_an_explicit_ridge():
    ds = load_dataset("iris")
    idx = np.linspace(0, 149, 30).round().astype(int)
    cons = per_class_pairs(ds.y[idx], 2, rng=np.random.default_rng(0))
    with pytest.warns(UserWarning, match="ridge=0.01 is not applied"):
        est = make_method("rn_sdp", n_clusters=3, sigma=0.271, solver="sdpa", ridge=1e-2,
                          random_state=0).fit(ds.X[idx], constraints=cons)
    assert est.solver_info_["ridge"] == 0.0


# --------------------------------------------------------------------------- solver="auto"


def test_sdpa_rows_counts_the_rows_sdpa_is_given():
    p = _iris_subset(30, j=2)
    _, info = solve_sdpa(p)
    assert sdpa_rows(p) == info["schur_rows"]
    iu = np.triu_indices(p.m)
    # independent count: every entry with a finite bound gives a row per finite side,
    # a fixed entry one row in all
    lo, up = p.lo[iu], p.up[iu]
    assert sdpa_rows(p) == int(np.sum(np.isfinite(lo)) + np.sum(np.isfinite(up)) - np.sum(lo == up))


def test_auto_route_follows_the_schur_threshold(monkeypatch):
    p = _iris_subset(30, j=2)
    rows = sdpa_rows(p)
    assert rows <= _solvers.SDPA_ROWS_PER_CHUNKLET * p.m and auto_solver(p, DEFAULT_RIDGE) == "sdpa"
    assert auto_solver(p, 0.0) == "sdpa"
    assert auto_solver(p, 1e-2) == "admm"  # only the ADMM applies an explicit ridge
    monkeypatch.setattr(_solvers, "SDPA_ROWS_PER_CHUNKLET", (rows - 1) / p.m)
    assert auto_solver(p, DEFAULT_RIDGE) == "admm"
    monkeypatch.setattr(_solvers, "SDPA_ROWS_PER_CHUNKLET", rows / p.m)
    assert auto_solver(p, DEFAULT_RIDGE) == "sdpa"
    monkeypatch.setattr(_solvers, "SDPA_MAX_ROWS", rows - 1)  # the memory cap
    assert auto_solver(p, DEFAULT_RIDGE) == "admm"


def test_auto_is_the_default_and_its_K_is_optimal_for_the_linear_objective():
    # the tie-break under SDPA is its interior-point limit, not the ridge: what is pinned is
    # that K solves (6) as printed (objective vs cvxpy/CLARABEL at ridge 0) and is feasible
    ds = load_dataset("iris")
    idx = np.linspace(0, 149, 45).round().astype(int)
    cons = per_class_pairs(ds.y[idx], 2, rng=np.random.default_rng(0))
    est = make_method("rn_sdp", n_clusters=3, sigma=0.271, random_state=0).fit(ds.X[idx], constraints=cons)
    info = est.solver_info_
    assert info["requested_solver"] == "auto" and info["solver"] == "sdpa" and est.converged_
    p = build_problem(ds.X[idx], cons, sigma=0.271, n_neighbors=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, ref = solve_cvxpy(p, solver="CLARABEL", ridge=0.0)
    assert info["objective"] == pytest.approx(ref["objective"], rel=1e-5, abs=1e-6)
    assert info["max_violation"] <= 1e-8 and info["ridge"] == 0.0
    assert np.linalg.eigvalsh(est.similarity_)[0] >= -1e-8


def test_auto_and_admm_labels_agree_on_well_separated_blobs():
    rng = np.random.default_rng(1)
    X = np.concatenate([c + rng.normal(scale=0.3, size=(15, 2)) for c in ([0, 0], [4, 0], [0, 4])])
    y = np.repeat(np.arange(3), 15)
    cons = per_class_pairs(y, 2, rng=np.random.default_rng(0))
    kw = dict(n_clusters=3, n_neighbors=2, sigma=1.0, random_state=0)
    a = make_method("rn_sdp", **kw).fit(X, constraints=cons)
    b = make_method("rn_sdp", solver="admm", **kw).fit(X, constraints=cons)
    assert a.solver_info_["solver"] == "sdpa" and b.solver_info_["solver"] == "admm"
    assert adjusted_rand_score(a.labels_, b.labels_) == 1.0
    assert adjusted_rand_score(y, a.labels_) == 1.0


def test_sdpa_tie_break_is_an_interior_optimum_not_the_least_norm_one():
    # C = 0: every feasible K is optimal. With k01 >= 0.5 on 3 points the ridge's optimum is
    # the least-norm k01 = 0.5; SDPA's interior-point limit leaves the bound slack (documented
    # in solve_sdpa: 0.955 with SDPA's default start; the analytic centre would be 0.768)
    lo, up = np.full((3, 3), -np.inf), np.full((3, 3), np.inf)
    lo[0, 1] = lo[1, 0] = 0.5
    np.fill_diagonal(lo, 1.0)
    np.fill_diagonal(up, 1.0)
    p = RNProblem(C=np.zeros((3, 3)), lo=lo, up=up, chunklet=np.arange(3))
    K, info = solve_sdpa(p)
    K2, _ = solve_sdpa(p)
    assert info["status"] == "optimal"
    np.testing.assert_array_equal(K, K2)  # deterministic
    assert 0.6 < K[0, 1] < 1.0 - 1e-3  # strictly inside (0.5, 1): relative interior of the face
    assert np.linalg.matrix_rank(K, tol=1e-6) == 3  # the largest rank on the face
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        R, _ = solve_admm(p, ridge=DEFAULT_RIDGE, tol=1e-7)
    assert R[0, 1] == pytest.approx(0.5, abs=1e-5)
