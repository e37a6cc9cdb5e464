"""The certified k-means SDP lower bound (ccbench_plugins.sdp.kmeans_bound, issue 52 deliverable 2).

Known answers: every partition of n <= 9 points into k clusters is enumerated, so the constrained
optimum is exact; the bound must never exceed it, on both solver routes, and must reach it where the
relaxation is tight (well-separated blobs). The safe-dual correction is checked on duals perturbed
on purpose: without it the bound would pass the optimum.
"""

from __future__ import annotations

import numpy as np
import pytest

from ccbench.base import InfeasibleConstraintsError
from ccbench.constraints import Constraints

kb = pytest.importorskip("ccbench_plugins.sdp.kmeans_bound")
pytest.importorskip("cvxpy")


def _rgs(n, k):
    """Every partition of range(n) into exactly k non-empty blocks, as restricted growth strings."""
    out = []
    a = [0] * n

    def rec(i, top):
        if i == n:
            if top + 1 == k:
                out.append(list(a))
            return
        for c in range(min(top + 2, k)):
            a[i] = c
            rec(i + 1, max(top, c))

    rec(1, 0)
    return np.array(out)


def _sse(X, labels):
    return sum(float(((X[labels == c] - X[labels == c].mean(axis=0)) ** 2).sum()) for c in np.unique(labels))


def _brute_force(X, cons, k):
    """(optimum, a feasible partition): min SSE over all partitions meeting every constraint."""
    best, arg = np.inf, None
    for p in _rgs(len(X), k):
        if cons.violations(p) == (0, 0):
            value = _sse(X, p)
            if value < best:
                best, arg = value, p
    return best, arg


def _random_instance(seed, n=8):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 4))
    X = rng.normal(size=(n, 2)) * rng.uniform(0.5, 3.0)
    perm = rng.permutation(n)
    ml = [perm[:2]] if seed % 3 else [perm[:2], perm[1:3]]  # one chunklet of 2 or of 3
    cl = [perm[3:5], (perm[5], perm[0])]
    return X, Constraints(ml, cl, n_samples=n), k


def _blobs(seed, per=3, spread=0.5):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    X = np.repeat(centres, per, axis=0) + spread * rng.normal(size=(3 * per, 2))
    return X


@pytest.mark.parametrize("seed", range(6))
def test_bound_never_exceeds_the_brute_force_optimum_on_either_route(seed):
    X, cons, k = _random_instance(seed)
    opt, labels = _brute_force(X, cons, k)
    assert np.isfinite(opt)
    for method in ("cvxpy", "admm"):
        res = kb.kmeans_lower_bound(X, cons, k, method=method, cache=False)
        assert res.value <= opt * (1 + 1e-12), (method, res.value, opt)
        # any feasible partition's objective is >= the optimum, so above the bound too
        assert res.value <= _sse(X, labels)
        # and the bound is not vacuous: the relaxation's value is within reach of the optimum
        assert res.value >= 0.5 * opt


def test_objective_identity_of_the_contracted_relaxation():
    """Eq. (1): for Z of any constrained partition, K_ml + tr(G) + <C, Z> is its SSE (weights,
    centring and the must-link scatter all enter)."""
    X, cons, k = _random_instance(4, n=9)
    problem = kb.build_kmeans_sdp(X, cons, k)
    v = problem.v
    seen = 0
    for p in _rgs(9, k):
        if cons.violations(p) != (0, 0):
            continue
        cluster_of_chunklet = np.zeros(problem.m, dtype=int)
        cluster_of_chunklet[problem.chunklet] = p
        same = cluster_of_chunklet[:, None] == cluster_of_chunklet[None, :]
        S = np.bincount(cluster_of_chunklet, weights=v**2)
        Z = np.where(same, np.outer(v, v) / S[cluster_of_chunklet][:, None], 0.0)
        assert problem.objective(Z) == pytest.approx(_sse(X, p), rel=1e-10)
        assert np.trace(Z) == pytest.approx(k) and np.allclose(Z @ v, v)
        assert not np.any(Z[problem.cl])
        seen += 1
    assert seen > 10
    assert problem.must_link_scatter > 0


@pytest.mark.parametrize("seed", range(3))
def test_bound_equals_the_optimum_on_separated_blobs(seed):
    """Three tight blobs far apart: the SDP is tight (Awasthi et al. 2015 recovery regime), so the
    certified bound reaches the enumerated optimum."""
    X = _blobs(seed)
    cons = Constraints([(0, 1)], [(0, 4), (2, 8)], n_samples=9)
    opt, _ = _brute_force(X, cons, 3)
    for method in ("cvxpy", "admm"):
        res = kb.kmeans_lower_bound(X, cons, 3, method=method, tol=1e-7, cache=False)
        assert res.value <= opt * (1 + 1e-12)
        assert res.value == pytest.approx(opt, rel=1e-4), method


def test_cvxpy_and_admm_agree():
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal(c, 1.0, size=(10, 3)) for c in (0.0, 3.0, 6.0)])
    y = np.repeat([0, 1, 2], 10)
    cons = Constraints([(0, 1), (10, 12), (20, 25)], [(0, 10), (3, 22), (14, 28)], n_samples=30)
    assert cons.violations(y) == (0, 0)
    a = kb.kmeans_lower_bound(X, cons, 3, method="cvxpy", cache=False)
    b = kb.kmeans_lower_bound(X, cons, 3, method="admm", tol=1e-6, cache=False)
    assert a.value == pytest.approx(b.value, rel=1e-4)
    assert a.primal_value == pytest.approx(b.primal_value, rel=1e-4)
    assert max(a.value, b.value) <= _sse(X, y)


def test_a_perturbed_dual_still_gives_a_valid_bound_thanks_to_the_correction():
    """Eq. (2) for duals pushed off the optimum: y0 raised, y and N disturbed (N partly negative). The
    uncorrected dual value ``constant + k y0 + v'y`` then passes the optimum; the certified bound,
    with ``k lambda_min(S)`` and N clipped, stays below."""
    X = _blobs(0, spread=0.5)
    cons = Constraints([(0, 1)], [(0, 4)], n_samples=9)
    opt, _ = _brute_force(X, cons, 3)
    problem = kb.build_kmeans_sdp(X, cons, 3)
    _, (y0, y, N), _ = kb.solve_cvxpy(problem)
    tight, _ = kb.safe_bound(problem, y0, y, N)
    assert tight == pytest.approx(opt, rel=1e-4)
    rng = np.random.default_rng(0)
    scale = abs(opt)
    for _ in range(5):
        y0p = y0 + scale * rng.uniform(0.1, 1.0)
        yp = y + scale * rng.normal(size=y.shape) / problem.m
        Np = N + scale * rng.normal(size=N.shape) / problem.m
        value, lam = kb.safe_bound(problem, y0p, yp, Np)
        uncorrected = problem.constant + problem.k * y0p + float(problem.v @ yp)
        assert uncorrected > opt  # the perturbation alone would certify too much
        assert lam < 0
        assert value <= opt * (1 + 1e-12)


def test_negative_nonneg_multipliers_are_clipped():
    """Only N >= 0 off the cannot-links makes <N, Z> >= 0: a negative N (here -t on every free
    off-diagonal entry, which shifts S by a multiple of 1 1^T that lambda_min does not see along v)
    must not raise the bound."""
    X = _blobs(1, spread=0.5)
    cons = Constraints([(0, 1)], [(0, 4)], n_samples=9)
    opt, _ = _brute_force(X, cons, 3)
    problem = kb.build_kmeans_sdp(X, cons, 3)
    _, (y0, y, N), _ = kb.solve_cvxpy(problem)
    bad = N - np.where(problem.cl, 0.0, 10.0 * abs(opt))
    value, _ = kb.safe_bound(problem, y0, y, bad)
    assert value <= opt * (1 + 1e-12)
    y0b, yb, _ = kb.dual_for_nonneg(problem, bad)
    assert kb.safe_bound(problem, y0b, yb, bad)[0] <= opt * (1 + 1e-12)


def test_projection_onto_A_is_feasible_and_idempotent():
    rng = np.random.default_rng(3)
    X, cons, k = _random_instance(2, n=9)
    problem = kb.build_kmeans_sdp(X, cons, k)
    basis = kb._Complement(problem.v)
    W = rng.normal(size=(problem.m, problem.m))
    P = kb.project_onto_A((W + W.T) / 2, basis, k)
    assert np.allclose(P, P.T)
    assert np.linalg.eigvalsh(P).min() >= -1e-10
    assert np.trace(P) == pytest.approx(k) and np.allclose(P @ problem.v, problem.v)
    assert np.allclose(kb.project_onto_A(P, basis, k), P, atol=1e-10)
    # a projection: <W - P, Z - P> <= 0 for Z in A (here Z of a partition)
    Z = kb.project_onto_A(P + 0.3 * np.eye(problem.m), basis, k)
    assert np.vdot((W + W.T) / 2 - P, Z - P) <= 1e-9


def test_errors_name_the_problem():
    X = _blobs(0)
    with pytest.raises(InfeasibleConstraintsError, match="cannot-link joins"):
        kb.kmeans_lower_bound(X, Constraints([(0, 1), (1, 2)], [(0, 2)], n_samples=9), 3)
    with pytest.raises(InfeasibleConstraintsError, match="n_clusters=3 but the must-links leave 2"):
        kb.kmeans_lower_bound(X, Constraints([(i, i + 1) for i in range(8) if i != 4], n_samples=9), 3)
    with pytest.raises(InfeasibleConstraintsError, match="n_clusters=1 but 1 cannot-link"):
        kb.kmeans_lower_bound(X, Constraints(None, [(0, 1)], n_samples=9), 1)
    with pytest.raises(ValueError, match="method must be"):
        kb.kmeans_lower_bound(X, Constraints(n_samples=9), 3, method="sdpnal")


def test_cache_computes_once_per_instance():
    X = _blobs(2)
    cons = Constraints([(0, 1)], [(0, 4)], n_samples=9)
    first = kb.kmeans_lower_bound(X, cons, 3)
    assert kb.kmeans_lower_bound(X.copy(), Constraints([(0, 1)], [(0, 4)], n_samples=9), 3) is first
    assert kb.kmeans_lower_bound(X, cons, 2) is not first
    assert kb.kmeans_lower_bound(X, Constraints([(0, 1)], [(0, 5)], n_samples=9), 3) is not first


def test_rows_carry_lower_bound_and_gap_beside_inertia():
    """The harness passes both the features and the constraints to a metric that needs both, and the
    bound is for the number of clusters the row found."""
    from ccbench import registry
    from ccbench.running.harness import score_labels

    registry.load_plugins([])
    X = _blobs(0, spread=0.5)
    y = np.repeat([0, 1, 2], 3)
    cons = Constraints([(0, 1)], [(0, 4)], n_samples=9)
    opt, best = _brute_force(X, cons, 3)
    labels = np.array([0, 0, 1, 1, 1, 1, 2, 2, 2])  # feasible, not optimal
    out = score_labels(registry.get_method_spec("cop_kmeans"), labels, y, cons,
                       ["inertia", "lower_bound", "bound_gap"])
    assert np.isnan(out["lower_bound"])  # no features given: NaN, like inertia
    out = score_labels(registry.get_method_spec("cop_kmeans"), labels, y, cons,
                       ["inertia", "lower_bound", "bound_gap"], X=X)
    assert out["lower_bound"] <= opt * (1 + 1e-12) <= out["inertia"]
    assert out["lower_bound"] == pytest.approx(opt, rel=1e-4)
    assert out["bound_gap"] == pytest.approx((out["inertia"] - out["lower_bound"]) / out["lower_bound"])
    two = score_labels(registry.get_method_spec("cop_kmeans"), np.array([0, 0, 1, 1, 1, 1, 1, 1, 1]), y, cons,
                       ["lower_bound"], X=X)
    assert two["lower_bound"] <= _brute_force(X, cons, 2)[0] * (1 + 1e-12)
    assert two["lower_bound"] > out["lower_bound"]  # k = 2 found: the bound for 2 clusters


@pytest.mark.parametrize("k", [1, 8])
def test_a_single_partition_is_its_own_bound(k):
    """k = 1 (all points together) and k = number of chunklets (each alone) leave one partition: the
    bound is its SSE exactly."""
    X = _blobs(3)
    cons = Constraints([(0, 1)], [(2, 5)] if k > 1 else None, n_samples=9)
    opt, _ = _brute_force(X, cons, k)
    res = kb.kmeans_lower_bound(X, cons, k, cache=False)
    assert res.solver == "exact" and res.value == pytest.approx(opt, rel=1e-12)


def test_rows_go_stale_when_the_bound_code_changes():
    """Provenance hashes the module a metric's function names: for lower_bound that must be the file
    holding the bound's code, not the plugin's registration module."""
    import json
    from pathlib import Path

    from ccbench import registry
    from ccbench.running import provenance

    registry.load_plugins([])
    inputs = json.loads(provenance.cell_inputs("kmeans", metrics=["lower_bound", "bound_gap"])[provenance.INPUTS])
    assert inputs["metric:lower_bound"] == inputs["metric:bound_gap"] == provenance._file_hash(Path(kb.__file__))


def test_disk_cache_serves_another_process(tmp_path, monkeypatch):
    """With CCBENCH_BOUND_CACHE_DIR set, a bound computed once is read back by a process whose memory
    cache is empty (here: the memory cache cleared); a torn entry is recomputed with a warning."""
    monkeypatch.setenv(kb.CACHE_DIR_ENV, str(tmp_path))
    kb._CACHE.clear()
    X = _blobs(4)
    cons = Constraints([(0, 1)], [(0, 4)], n_samples=9)
    first = kb.kmeans_lower_bound(X, cons, 3)
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1
    kb._CACHE.clear()
    monkeypatch.setattr(kb, "solve_cvxpy", lambda *a, **k: pytest.fail("recomputed instead of read"))
    again = kb.kmeans_lower_bound(X, cons, 3)
    assert again.value == first.value and again.solver == first.solver
    kb._CACHE.clear()
    files[0].write_text("{not json")
    monkeypatch.undo()
    monkeypatch.setenv(kb.CACHE_DIR_ENV, str(tmp_path))
    with pytest.warns(RuntimeWarning, match="unreadable"):
        assert kb.kmeans_lower_bound(X, cons, 3).value == pytest.approx(first.value, rel=1e-9)
