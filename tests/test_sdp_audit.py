"""RN-SDP: the audit's findings (issue 28) -- the ADMM's stop, the tie-break, silent
degenerate inputs, and formulas that no test guarded before."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from ccbench_plugins.sdp._solvers import (
    box_violation,
    duality_gap,
    project_psd,
    project_psd_partial,
    solve_admm,
    solve_cvxpy,
)
from ccbench_plugins.sdp.core import (
    RNProblem,
    build_problem,
    kmedoids_swap,
    medoid_cost,
)
from scipy.linalg import sqrtm

from ccbench import Constraints, load_dataset, make_method
from ccbench.constraints import per_class_pairs, random_pairs

#: CLARABEL optimum of test_sdp's iris subset n = 60 (tolerances 1e-10)
IRIS60_REF = 0.39580618134004775
#: the linear optimum (ridge 0) on all of iris with random_pairs(y, 30, default_rng(0)), t = 3,
#: sigma 0.271: SDPA (dual LMI form), bound violation 2e-11, SDPA's duality gap 1e-6
IRIS30_LINEAR_OPT = 3.2660347808700214


def _iris_subset(n, j=3):
    ds = load_dataset("iris")
    idx = np.linspace(0, 149, n).round().astype(int)
    cons = per_class_pairs(ds.y[idx], j, rng=np.random.default_rng(0))
    return cons, build_problem(ds.X[idx], cons, sigma=0.271, n_neighbors=3)


def _hand_problem(C, lo_pairs=(), up_pairs=()):
    """A 3 x 3 reduced problem written by hand: unit diagonal, given bounds."""
    m = C.shape[0]
    lo, up = np.full((m, m), -np.inf), np.full((m, m), np.inf)
    for (i, j), v in lo_pairs:
        lo[i, j] = lo[j, i] = v
    for (i, j), v in up_pairs:
        up[i, j] = up[j, i] = v
    np.fill_diagonal(lo, 1.0)
    np.fill_diagonal(up, 1.0)
    return RNProblem(C=np.asarray(C, float), lo=lo, up=up, chunklet=np.arange(m))


# --------------------------------------------------------------------------- the ADMM's stop


def test_admm_stop_certifies_the_objective():
    # stopping on relative residuals, the n = 60 subset stopped 1.2e-5 above the optimum
    # at tol 1e-5; the duality gap now bounds the error, in the objective's own units
    _, p = _iris_subset(60)
    _, info = solve_admm(p, tol=1e-5, ridge=0.0)
    assert info["status"] == "optimal"
    err = info["objective"] - IRIS60_REF
    assert -1e-6 <= err <= info["duality_gap"] + 1e-9
    assert info["duality_gap"] <= 1e-5 * max(1.0, abs(info["objective"]))
    assert info["max_violation"] <= 1e-5 and info["primal_residual"] <= 1e-5


def test_duality_gap_is_a_valid_bound_and_tight_at_the_optimum():
    # known answer: minimise 2 k01 with k01 >= 0.3 -> k01 = 0.3, objective 0.6
    p = _hand_problem(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0.0]]), lo_pairs=[((0, 1), 0.3)])
    K_opt = np.array([[1, 0.3, 0], [0.3, 1, 0], [0, 0, 1.0]])
    S = np.zeros((3, 3))
    assert duality_gap(p, K_opt, S) == pytest.approx(0.0, abs=1e-12)  # S = 0 is dual optimal here
    K_worse = np.array([[1, 0.5, 0], [0.5, 1, 0], [0, 0, 1.0]])
    assert duality_gap(p, K_worse, S) == pytest.approx(0.4)  # f(K) - f* exactly


def test_duality_gap_repairs_the_dual_on_free_entries():
    # S = delta on (0, 2) and on the diagonal entries 0 and 2 (PSD, rank 1): k02 is free,
    # so the raw bound pays delta on each of (0, 2), (2, 0) and the two diagonal entries
    # (4 delta); the repaired dual zeroes C - S on (0, 2) and pays only the diagonal: 2 delta
    C = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0.0]])
    p = _hand_problem(C, lo_pairs=[((0, 1), 0.3)])
    K_opt = np.array([[1, 0.3, 0], [0.3, 1, 0], [0, 0, 1.0]])
    d = 1e-3
    S = np.array([[d, 0, d], [0, 0, 0], [d, 0, d]])
    assert duality_gap(p, K_opt, S) == pytest.approx(2 * d, rel=1e-9)
    # a K below a lower bound can score under the dual bound: the gap is 0, not negative
    K_low = np.array([[1, 0.2, 0], [0.2, 1, 0], [0, 0, 1.0]])
    assert duality_gap(p, K_low, np.zeros((3, 3))) == 0.0


def test_duality_gap_never_undercuts_the_true_error():
    # minimise 2 k01 + k02 with k01 >= 0.3, k02 and k12 free: f* = 0.6 - 1 = -0.4
    # (k02 = -1, k12 = -0.3). From S = 0 the repaired dual puts C's 0.5 into S on the free
    # (0, 2), which leaves S indefinite (eigenvalues +-0.5): it must be shifted by 0.5 I
    # before it bounds anything; unshifted it would claim g = 0.6 > f*
    C = np.array([[0, 1, 0.5], [1, 0, 0], [0.5, 0, 0.0]])
    p = _hand_problem(C, lo_pairs=[((0, 1), 0.3)])
    K = np.array([[1, 0.3, 0], [0.3, 1, 0], [0, 0, 1.0]])  # f = 0.6, f - f* = 1
    assert duality_gap(p, K, np.zeros((3, 3))) == pytest.approx(1.0)


def test_duality_gap_with_the_ridge_matches_a_brute_force_dual():
    # S = 0: g = sum_ij min over [lo', up'] of C_ij x + ridge / 2 x^2, by a fine grid
    C = np.array([[0, 1, 0.004], [1, 0, -0.002], [0.004, -0.002, 0.0]])
    p = _hand_problem(C, lo_pairs=[((0, 1), 0.3)])
    ridge = 0.01
    grid = np.linspace(-1, 1, 200001)
    lo, up = np.clip(p.lo, -1, 1), np.clip(p.up, -1, 1)
    g = sum(min(C[i, j] * x + ridge / 2 * x * x for x in (grid[(grid >= lo[i, j]) & (grid <= up[i, j])]
                                                          if lo[i, j] < up[i, j] else [lo[i, j]]))
            for i in range(3) for j in range(3))
    K = np.array([[1, 0.3, 0], [0.3, 1, 0], [0, 0, 1.0]])  # feasible, not the ridge optimum
    f = float(np.vdot(C, K)) + ridge / 2 * float(np.vdot(K, K))
    assert f - g > 1e-3
    assert duality_gap(p, K, np.zeros((3, 3)), ridge=ridge) == pytest.approx(f - g, abs=1e-9)


@pytest.mark.slow
def test_iris_30_random_pairs_stops_optimal():
    # the audit's case: before the fix it ran to max_iter = 5,000 and warned
    ds = load_dataset("iris")
    cons = random_pairs(ds.y, 30, rng=np.random.default_rng(0))
    p = build_problem(ds.X, cons, sigma=0.271, n_neighbors=3)
    K, info = solve_admm(p, ridge=1e-4)
    assert info["status"] == "optimal" and info["n_iter"] < 5000
    # the ridge costs at most ridge / 2 ||K||_F^2 in <C, K> over the linear optimum
    assert IRIS30_LINEAR_OPT - 1e-5 <= info["objective"] <= IRIS30_LINEAR_OPT + 0.5e-4 * np.vdot(K, K)


# --------------------------------------------------------------------------- tie-break


def test_tie_break_makes_two_solvers_agree_elementwise():
    # 69 % of the coefficients are below 1e-8: without the ridge, ADMM and CLARABEL agree
    # in objective to 1e-9 but their K differ by 0.75; with it, K is unique
    ds = load_dataset("iris")
    idx = np.linspace(0, 149, 30).round().astype(int)
    cons = per_class_pairs(ds.y[idx], 2, rng=np.random.default_rng(0))
    p = build_problem(ds.X[idx], cons, sigma=0.271, n_neighbors=3)
    tight = dict(tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, tol_ktratio=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        K0, i0 = solve_admm(p, ridge=0.0, tol=1e-9, gap_tol=1e-11, max_iter=50000)
        R0, r0 = solve_cvxpy(p, solver="CLARABEL", ridge=0.0, **tight)
        K1, i1 = solve_admm(p, ridge=1e-4, tol=1e-9, gap_tol=1e-11, max_iter=50000)
        R1, r1 = solve_cvxpy(p, solver="CLARABEL", ridge=1e-4, **tight)
    assert i0["objective"] == pytest.approx(r0["objective"], abs=1e-8)
    assert np.abs(K0 - R0).max() > 0.1  # the linear optimum is not unique
    assert i1["status"] == "optimal"
    np.testing.assert_allclose(K1, R1, atol=1e-4)


def test_admm_uses_the_tie_break_by_default():
    ds = load_dataset("iris")
    idx = np.linspace(0, 149, 30).round().astype(int)
    cons = per_class_pairs(ds.y[idx], 2, rng=np.random.default_rng(0))
    est = make_method("rn_sdp", n_clusters=3, sigma=0.271, solver="admm", random_state=0).fit(
        ds.X[idx], constraints=cons)
    assert est.solver_info_["ridge"] == pytest.approx(1e-4)


# --------------------------------------------------------------------------- silent cases


def test_similarity_underflow_warns():
    X, _ = np.random.default_rng(0).normal(size=(20, 2)) * 10, None
    cons = Constraints([[0, 1]], [[0, 2]], n_samples=20)
    with pytest.warns(UserWarning, match="objective <L_bar, K> is constant"):
        make_method("rn_sdp", n_clusters=2, n_neighbors=1, sigma=1e-3, random_state=0).fit(X, constraints=cons)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        make_method("rn_sdp", n_clusters=2, n_neighbors=1, sigma=10.0, random_state=0).fit(X, constraints=cons)


def test_too_many_neighbours_warns():
    X = np.random.default_rng(0).normal(size=(6, 2))
    cons = Constraints([[0, 1]], [[0, 2]], n_samples=6)
    with pytest.warns(UserWarning, match=r"n_neighbors=8 exceeds n - 1 = 5; only 5 relational"):
        make_method("rn_sdp", n_clusters=2, n_neighbors=8, sigma=1.0, random_state=0).fit(X, constraints=cons)


def test_more_mutually_cannot_linked_points_than_clusters_is_reported():
    X = np.random.default_rng(0).normal(size=(12, 2))
    cons = Constraints(None, [[0, 1], [0, 2], [1, 2]], n_samples=12)  # 3 points, 2 clusters
    with pytest.warns(UserWarning, match="cannot-link"):
        est = make_method("rn_sdp", n_clusters=2, n_neighbors=1, sigma=1.0, random_state=0).fit(X, constraints=cons)
    assert est.n_violated_ >= 1
    assert est.n_violated_ == sum(cons.violations(est.labels_))


# --------------------------------------------------------------------------- named mutations


def test_psd_projection_keeps_small_positive_eigenvalues():
    # independent route: the positive part (W + |W|) / 2 with |W| = sqrtm(W^2)
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    W = (Q * np.array([3.0, 1e-4, 1e-6, 0.0, -1e-5, -2.0])) @ Q.T
    ref = (W + np.real(sqrtm(W @ W))) / 2
    np.testing.assert_allclose(project_psd(W), ref, atol=1e-9)
    assert np.linalg.eigvalsh(project_psd(W))[-2] == pytest.approx(1e-4, rel=1e-6)


@pytest.mark.parametrize("n_pos", [0, 1, 7, 20, 39, 40])
@pytest.mark.parametrize("negative_side", [False, True])
def test_partial_psd_projection_equals_the_full_one(n_pos, negative_side):
    # random symmetric matrices of every signature (0 .. all eigenvalues positive), either
    # side asked for: the positive part to 1e-10, and the count of positive eigenvalues
    rng = np.random.default_rng(n_pos)
    Q, _ = np.linalg.qr(rng.normal(size=(40, 40)))
    lam = np.r_[rng.uniform(0.01, 3, n_pos), -rng.uniform(0.01, 3, 40 - n_pos)]
    W = (Q * lam) @ Q.T
    W = (W + W.T) / 2
    P, count = project_psd_partial(W, negative_side=negative_side)
    np.testing.assert_allclose(P, project_psd(W), atol=1e-10, rtol=0)
    np.testing.assert_array_equal(P, P.T)
    assert count == n_pos
    W2 = rng.normal(size=(40, 40))
    W2 = W2 + W2.T  # a plain random symmetric matrix too
    np.testing.assert_allclose(project_psd_partial(W2, negative_side)[0], project_psd(W2), atol=1e-10, rtol=0)


def test_admm_with_the_partial_projection_matches_the_full_one():
    ds = load_dataset("iris")
    idx = np.linspace(0, 149, 30).round().astype(int)
    p = build_problem(ds.X[idx], per_class_pairs(ds.y[idx], 2, rng=np.random.default_rng(0)),
                      sigma=0.271, n_neighbors=3)
    K1, i1 = solve_admm(p, ridge=1e-4, partial=True)
    K0, i0 = solve_admm(p, ridge=1e-4, partial=False)
    assert i1["status"] == i0["status"] == "optimal"
    np.testing.assert_allclose(K1, K0, atol=1e-4)  # one unique optimum, both to tol 1e-5


def test_crossing_bounds_on_a_chunklet_pair_are_dropped():
    # 0 and 1 are must-linked (one chunklet A); c = 2 is 1's nearest neighbour and q = 3's.
    # ML (0, 1) gives k[0, r(1) = c] >= W[0, c]; CL (1, q) gives k[1, r(q) = c] <= W[1, c].
    # Rows 0 and 1 of K are equal, so both bounds sit on K'[A, c]; they cross (W[0, c] > W[1, c])
    X = np.array([[0.0], [1.2], [0.5], [0.3], [4.0]])
    cons = Constraints([[0, 1]], [[1, 3]], n_samples=5)
    p = build_problem(X, cons, sigma=1.0, n_neighbors=1)
    a, c = p.chunklet[0], p.chunklet[2]
    assert any("from different bounds" in m for m in p.conflicts)
    assert np.isinf(p.lo[a, c]) and np.isinf(p.up[a, c])
    assert np.all(p.lo <= p.up)
    K, info = solve_admm(p)
    assert info["status"] == "optimal"


def test_deduplication_keeps_both_directions_of_a_pair():
    # r(2) = r(3) = 1: ML (0, 2) gives k[0, 1] >= W01 and CL (0, 3) gives k[0, 1] <= W01
    X = np.array([[0.0], [5.0], [5.5], [4.6], [0.1]])
    cons = Constraints([[0, 2]], [[0, 3]], n_samples=5)
    p = build_problem(X, cons, sigma=1.0, n_neighbors=1)
    from ccbench_plugins.sdp.core import gaussian_similarity, neg_normalized_laplacian

    W = neg_normalized_laplacian(gaussian_similarity(X, 1.0)[0])
    a, b = p.chunklet[0], p.chunklet[1]
    assert p.lo[a, b] == pytest.approx(W[0, 1]) and p.up[a, b] == pytest.approx(W[0, 1])
    assert p.counts["bounds"] == 4


@pytest.mark.parametrize("solve", [solve_admm, solve_cvxpy], ids=["admm", "cvxpy"])
def test_solvers_honour_lower_and_upper_bounds(solve):
    # known answers: minimise 2 k01 with k01 >= 0.3 -> 0.6; minimise -2 k02 with k02 <= 0.4 -> -0.8
    lo_case = _hand_problem(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0.0]]), lo_pairs=[((0, 1), 0.3)])
    up_case = _hand_problem(np.array([[0, 0, -1], [0, 0, 0], [-1, 0, 0.0]]), up_pairs=[((0, 2), 0.4)])
    for prob, k_ref, f_ref in ((lo_case, ((0, 1), 0.3), 0.6), (up_case, ((0, 2), 0.4), -0.8)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            K, info = solve(prob, ridge=0.0) if solve is solve_admm else solve(prob, solver="CLARABEL")
        assert K[k_ref[0]] == pytest.approx(k_ref[1], abs=1e-4)
        assert info["objective"] == pytest.approx(f_ref, abs=1e-4)
        assert box_violation(K, prob.lo, prob.up) <= 1e-5


def test_fasterpam_reports_convergence():
    from ccbench_plugins.sdp.core import kmedoids_fasterpam

    X = np.r_[np.zeros((10, 2)), np.ones((10, 2)) * 5] + np.random.default_rng(0).normal(size=(20, 2)) * 0.1
    dist = ((X[:, None] - X[None]) ** 2).sum(-1)
    medoids, labels, cost, n_iter, converged, _ = kmedoids_fasterpam(dist, 2, np.random.default_rng(0))
    assert converged and n_iter < 300
    assert len(set(labels[:10])) == 1 and labels[0] != labels[-1]


def test_swap_makes_the_best_single_swap():
    # one iteration from the same random medoids: the accepted swap is the best of all
    # k (n - k) swaps (brute force), not the first improving one
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    dist = ((X[:, None] - X[None]) ** 2).sum(-1)
    for seed in range(5):
        init = np.sort(np.random.default_rng(seed).choice(40, 4, replace=False))
        best = min(
            medoid_cost(dist, np.where(np.arange(4) == s, q, init))
            for s in range(4) for q in np.setdiff1d(np.arange(40), init)
        )
        _, _, cost, _, _, costs = kmedoids_swap(dist, 4, np.random.default_rng(seed), max_iter=1)
        assert costs[0] == pytest.approx(medoid_cost(dist, init))
        assert cost == pytest.approx(min(best, costs[0]))


def test_rn_sdp_clusters_on_the_squared_kernel_distance():
    # Algorithm 1's D on the kernel: k_ii + k_jj - 2 k_ij (squared), not its square root
    ds = load_dataset("iris")
    idx = np.linspace(0, 149, 45).round().astype(int)
    cons = per_class_pairs(ds.y[idx], 2, rng=np.random.default_rng(0))
    est = make_method("rn_sdp", n_clusters=3, sigma=0.271, n_init=1, random_state=0).fit(ds.X[idx], constraints=cons)
    K = est.similarity_
    d2 = np.diag(K)[:, None] + np.diag(K)[None, :] - 2 * K
    assert est.inertia_ == pytest.approx(medoid_cost(d2, est.medoid_indices_), rel=1e-9, abs=1e-9)
    # and the medoids are a swap local optimum of that D
    n = len(idx)
    for s in range(3):
        for q in np.setdiff1d(np.arange(n), est.medoid_indices_):
            trial = est.medoid_indices_.copy()
            trial[s] = q
            assert medoid_cost(d2, trial) >= est.inertia_ - 1e-9


def test_run_kmedoids_dispatches_to_the_named_method():
    from ccbench_plugins.sdp.core import kmedoids_fasterpam, run_kmedoids

    X = np.random.default_rng(1).normal(size=(50, 3))
    dist = ((X[:, None] - X[None]) ** 2).sum(-1)
    for method, direct in (("swap", kmedoids_swap), ("fasterpam", kmedoids_fasterpam)):
        got = run_kmedoids(dist, 4, np.random.default_rng(5), method=method, n_init=1, max_iter=300)
        ref = direct(dist, 4, np.random.default_rng(5), max_iter=300)
        np.testing.assert_array_equal(got[0], ref[0])
        assert got[3] == ref[3]  # iterations: the swap counts passes, FasterPAM its own
