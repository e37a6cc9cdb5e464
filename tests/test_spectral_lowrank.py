"""Spectral family without the dense eigendecomposition (issue 29): the low-rank routes
of :mod:`ccbench_plugins.spectral.lowrank` against the dense eigenbasis routes."""

import numpy as np
import pytest
from ccbench_plugins.spectral import core
from ccbench_plugins.spectral import lowrank as lr
from scipy import sparse

from ccbench import constraints as cgen
from ccbench import make_method


def _problem(n=300, n_pairs=20, seed=0, k=10):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(0, 1, (n // 2, 3)), rng.normal(2.5, 1, (n - n // 2, 3))]
    y = np.r_[np.zeros(n // 2, int), np.ones(n - n // 2, int)]
    cons = cgen.random_pairs(y, n_pairs, rng=rng)
    W = core.gaussian_knn_graph(X, k, sigma=1.0, symmetrize="mean")
    return X, y, cons, W, core.constraint_matrix(cons, n)


def _rel(A, B):
    return np.abs(A - B).max() / np.abs(B).max()


def test_solve_shifted_solves_c_minus_S():
    _, _, _, W, _ = _problem(120)
    S = lr.normalized_adjacency(W)
    R = np.random.default_rng(1).normal(size=(120, 7))
    for c in (1.05, 1.4, 3.0):
        X = lr.solve_shifted(S, R, c)
        np.testing.assert_allclose(X, np.linalg.solve(c * np.eye(120) - S.toarray(), R), atol=1e-10)


@pytest.mark.parametrize("route", ["single", "multishift"])
def test_cg_solves_a_column_that_converges_exactly(route):
    """A constrained point with no edges (S has a zero row) is solved in one step, r = 0 exactly:
    the next step's 0 / 0 must not turn its column into NaN (E2CP failed on 6 sick trials so)."""
    _, _, _, W, _ = _problem(60)
    W = sparse.lil_matrix(W)
    W[0, :] = 0
    W[:, 0] = 0
    S = lr.normalized_adjacency(W.tocsr())
    R = np.zeros((60, 3))
    R[0, 0], R[5, 1], R[7, 2] = 1.0, 1.0, -1.0
    for c in (1.25, 2.0):
        want = np.linalg.solve(c * np.eye(60) - S.toarray(), R)
        got = lr.solve_shifted(S, R, c) if route == "single" else lr.solve_multishift(S, R, [c, c + 1.0])[0]
        np.testing.assert_allclose(got, want, atol=1e-10)
        assert got[0, 0] == pytest.approx(1.0 / c)


def test_zolotarev_shifts_meet_the_requested_contraction():
    x = np.linspace(0.2, 2.2, 5001)
    for tol in (1e-6, 1e-9, 1e-12):
        q = lr.zolotarev_shifts(0.2, 2.2, tol)
        rho = np.max(np.abs(np.prod((x[:, None] - q) / (x[:, None] + q), axis=1)))
        assert rho**2 <= tol * 1.01 and np.all((q >= 0.2) & (q <= 2.2))
    assert 8 <= len(lr.zolotarev_shifts(0.2, 2.2, 1e-9)) <= 11  # kappa = 11: about ten shifts


@pytest.mark.parametrize("mu", [0.05, 0.2, 1.0])
def test_srcp_lowrank_F_agrees_with_the_dense_eig_route(mu):
    """Issue 29's acceptance: F of the low-rank ADI route within 1e-8 of the eig route."""
    _, _, _, W, Y = _problem()
    lam, U = core.laplacian_eigh(core.normalized_laplacian(W))
    F = core.propagate_eig(lam, U, Y, mu=mu)
    Z, C = lr.propagate_srcp_lowrank(lr.normalized_adjacency(W), Y, mu=mu)
    assert _rel(lr.lowrank_dense(Z, C), F) <= 1e-8
    # and it solves eq. (5) itself
    A = core.normalized_laplacian(W).toarray() + mu * np.eye(W.shape[0])
    Fl = lr.lowrank_dense(Z, C)
    assert np.linalg.norm(A @ Fl + Fl @ A - 2 * mu * Y.toarray()) / np.linalg.norm(2 * mu * Y.toarray()) <= 1e-8


def test_e2cp_lowrank_F_agrees_with_the_dense_eig_route():
    _, _, _, W, Y = _problem(seed=1)
    lam, U = core.laplacian_eigh(core.normalized_laplacian(W))
    for alpha in (0.5, 0.8, 0.95):
        F = core.propagate_e2cp(lam, U, Y, alpha=alpha)
        Z, C = lr.propagate_e2cp_lowrank(lr.normalized_adjacency(W), Y, alpha=alpha)
        assert _rel(lr.lowrank_dense(Z, C), F) <= 1e-10


def test_lowrank_adjusted_similarity_is_eq9():
    _, _, _, W, Y = _problem(seed=2)
    Z, C = lr.propagate_srcp_lowrank(lr.normalized_adjacency(W), Y, mu=0.2)
    # scale F up so both branches of eq. (9) and the clipping at +-1 are exercised
    C = C * 50
    F = lr.lowrank_dense(Z, C)
    assert (F > 1).any() and (F < -1).any()
    np.testing.assert_allclose(lr.adjust_similarity_lowrank(W, Z, C), core.adjust_similarity(W, F), atol=1e-12)


def test_no_constraints_give_empty_factors():
    _, _, _, W, _ = _problem(60, 0)
    Y = sparse.csr_matrix((60, 60))
    Z, C = lr.propagate_srcp_lowrank(lr.normalized_adjacency(W), Y, mu=0.2)
    assert Z.shape == (60, 0)
    np.testing.assert_array_equal(lr.adjust_similarity_lowrank(W, Z, C), W.toarray())


@pytest.mark.parametrize("method", ["srcp", "e2cp"])
def test_lowrank_solver_gives_the_eig_solvers_clustering(method):
    X, _, cons, _, _ = _problem(200, 30, seed=3)
    a = make_method(method, n_clusters=2, n_neighbors=10, solver="eig", random_state=0).fit(X, constraints=cons)
    b = make_method(method, n_clusters=2, n_neighbors=10, solver="lowrank", random_state=0).fit(X, constraints=cons)
    assert b.solver_ == "lowrank" and b.propagated_constraints_ is None
    assert _rel(lr.lowrank_dense(*b.propagated_factors_), a.propagated_constraints_) <= 1e-8
    np.testing.assert_allclose(b.affinity_matrix_, a.affinity_matrix_, atol=1e-9)
    np.testing.assert_array_equal(b.labels_, a.labels_)


def test_auto_solver_switches_above_dense_max_n(monkeypatch):
    X, _, cons, _, _ = _problem(200, 5, seed=4)
    assert make_method("srcp", n_clusters=2, n_neighbors=10).fit(X, constraints=cons).solver_ == "eig"
    monkeypatch.setattr(core, "DENSE_MAX_N", 100)
    for method in ("srcp", "e2cp"):
        auto = make_method(method, n_clusters=2, n_neighbors=10, random_state=0).fit(X, constraints=cons)
        eig = make_method(method, n_clusters=2, n_neighbors=10, solver="eig", random_state=0).fit(X, constraints=cons)
        assert auto.solver_ == "lowrank"
        np.testing.assert_array_equal(auto.labels_, eig.labels_)
    # too many constrained points for the low-rank factor: stays dense
    many = cgen.random_pairs(np.r_[np.zeros(100, int), np.ones(100, int)], 150, rng=np.random.default_rng(0))
    assert make_method("srcp", n_clusters=2, n_neighbors=10).fit(X, constraints=many).solver_ == "eig"


def _components_graph(sizes, seed=0):
    """Dense blocks with random weights, one per component, plus uneven degrees."""
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    W = np.zeros((n, n))
    start = 0
    for s in sizes:
        B = rng.uniform(0.1, 1.0, (s, s))
        W[start:start + s, start:start + s] = (B + B.T) / 2
        start += s
    np.fill_diagonal(W, 0)
    return W


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_lobpcg_embedding_equals_the_dense_one_even_with_repeated_eigenvalue_1(kind):
    """k components give eigenvalue 1 k times, where a single-vector Krylov method can miss
    one (ARPACK did on the n = 5,000 benchmark blobs; LOBPCG is a block method). Mutations: no D^-1/2 or no row normalisation on this route."""
    W = _components_graph([40, 60, 50, 70])
    W[:5, 40:45] = W[40:45, :5] = 1e-3  # two components weakly joined: three eigenvalues 1, one near it
    W *= np.outer(np.linspace(0.3, 1, 220), np.linspace(0.3, 1, 220))
    A = {"dense": W.copy(), "sparse": sparse.csr_matrix(W)}[kind]
    before = A.copy()
    lab_d, V_d = core.spectral_clustering(W.copy(), 4, n_init=3, rng=np.random.default_rng(0), eigen_solver="dense")
    lab_l, V_l = core.spectral_clustering(A, 4, n_init=3, rng=np.random.default_rng(0), eigen_solver="lobpcg")
    # the affinity (an estimator's affinity_matrix_) is left as it was
    assert (abs(A - before) if kind == "sparse" else np.abs(A - before)).max() == 0
    np.testing.assert_allclose(np.linalg.norm(V_l, axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(V_l @ V_l.T, V_d @ V_d.T, atol=1e-4)
    np.testing.assert_array_equal(lab_l, lab_d)
    if kind == "dense":  # warm-started from a sparse graph it was adjusted from: same answer
        G = sparse.csr_matrix(np.where(W > 0.5, W, 0))
        _, V_w = core.spectral_clustering(A, 4, n_init=3, rng=np.random.default_rng(0), eigen_solver="lobpcg", graph=G)
        np.testing.assert_allclose(V_w @ V_w.T, V_d @ V_d.T, atol=1e-4)


def test_sparse_methods_use_lobpcg_above_dense_max_n(monkeypatch):
    X, _, cons, _, _ = _problem(200, 10, seed=5)
    dense = make_method("spectral_learning", n_clusters=2, n_neighbors=10, random_state=0).fit(X, constraints=cons)
    monkeypatch.setattr(core, "DENSE_MAX_N", 100)
    calls = []
    real = lr.leading_eigenvectors
    monkeypatch.setattr(lr, "leading_eigenvectors", lambda *a, **k: calls.append(1) or real(*a, **k))
    fast = make_method("spectral_learning", n_clusters=2, n_neighbors=10, random_state=0).fit(X, constraints=cons)
    assert calls and sparse.issparse(fast.affinity_matrix_)
    np.testing.assert_array_equal(fast.labels_, dense.labels_)


class _CountingS:
    """S with a count of its sparse products (the propagation's dominant cost)."""

    def __init__(self, S):
        self.S, self.shape, self.products = S, S.shape, 0

    def __matmul__(self, X):
        self.products += 1
        return self.S @ X


def test_multishift_cg_solves_every_shift():
    _, _, _, W, _ = _problem(150)
    S = lr.normalized_adjacency(W)
    R = np.random.default_rng(2).normal(size=(150, 6))
    cs = [1.25, 1.4, 2.0, 3.3]
    Xs = lr.solve_multishift(S, R, cs)
    for c, X in zip(cs, Xs):
        np.testing.assert_allclose(X, np.linalg.solve(c * np.eye(150) - S.toarray(), R), rtol=0, atol=1e-12)


def test_adi_partial_fractions_reproduce_the_adi_recurrence():
    """V_j = sum_i R[j, i] (A + q_i)^{-1} B equals the ADI recurrence (checked on scalars a)."""
    q = lr.zolotarev_shifts(0.2, 2.2, 1e-9)
    R = lr.adi_partial_fractions(q)
    for a in (0.2, 0.7, 2.2):
        v = 1.0 / (a + q[0])
        for j in range(len(q)):
            if j:
                v = v - (q[j] + q[j - 1]) * v / (a + q[j])
            # terms up to 1e4 cancel to sums down to 1e-5: the error is judged against V_1's size
            assert abs(np.sum(R[j, : j + 1] / (a + q[: j + 1])) - v) <= 1e-10 / (a + q[0])


def test_srcp_lowrank_takes_one_krylov_sequence_for_all_shifts():
    """The ADI shifts share one multi-shift CG run: about as many sparse products as the
    worst-conditioned shift alone needs (a CG run per shift took ~9x as many)."""
    _, _, _, W, Y = _problem(400, 30)
    S = lr.normalized_adjacency(W)
    counting = _CountingS(S)
    Z, C = lr.propagate_srcp_lowrank(counting, Y, mu=0.2)
    hardest = _CountingS(S)
    idx = np.unique(Y.nonzero()[0])
    B = np.zeros((400, idx.size))
    B[idx, np.arange(idx.size)] = 1.0
    lr.solve_shifted(hardest, B, 1.2 + lr.zolotarev_shifts(0.2, 2.2, 1e-9).min())
    assert counting.products <= 1.5 * hardest.products + 5
    lam, U = core.laplacian_eigh(core.normalized_laplacian(W))
    assert _rel(lr.lowrank_dense(Z, C), core.propagate_eig(lam, U, Y, mu=0.2)) <= 1e-8


@pytest.mark.parametrize("blocks", ["one", "many"])
def test_lowrank_W_star_is_eq9_exactly_symmetric_and_one_n_by_n_array(monkeypatch, blocks):
    """W* from the factors: eq. (9) entrywise (both branches, the clip at +-1), exactly
    symmetric, and no n x n temporary besides W* itself (tracemalloc peak)."""
    import tracemalloc

    _, _, _, W, Y = _problem(600, 10, seed=6)
    Z, C = lr.propagate_srcp_lowrank(lr.normalized_adjacency(W), Y, mu=0.2)
    C = C * 50
    monkeypatch.setattr(lr, "GATHER_ENTRIES", 50 * Z.shape[1])  # 50 graph entries per gather chunk
    if blocks == "many":  # 7 rows per GEMM block
        monkeypatch.setattr(lr, "BLOCK_ENTRIES", 600 * 7)
    tracemalloc.start()
    A = lr.adjust_similarity_lowrank(W, Z, C)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    np.testing.assert_allclose(A, core.adjust_similarity(W, lr.lowrank_dense(Z, C)), rtol=0, atol=1e-12)
    assert (A == A.T).all()
    assert (np.abs(lr.lowrank_dense(Z, C)) > 1).any()
    # W* plus Z C (a copy of the factor's size) plus small change; eq. (9) entrywise on dense
    # blocks held 4-5 arrays of W*'s size at once
    assert peak <= A.nbytes * 1.2 + 2 * Z.nbytes + C.nbytes + 2**19, peak / A.nbytes


def test_lowrank_W_star_refuses_an_asymmetric_graph():
    _, _, _, W, Y = _problem(100, 5)
    Z, C = lr.propagate_srcp_lowrank(lr.normalized_adjacency(W), Y, mu=0.2)
    W = W.tolil()
    W[0, 1] += 0.5
    with pytest.raises(ValueError, match="symmetric"):
        lr.adjust_similarity_lowrank(W.tocsr(), Z, C)


@pytest.mark.parametrize("method", ["srcp", "e2cp"])
def test_large_n_route_embeds_in_the_dense_routes_subspace(monkeypatch, method):
    """Above DENSE_MAX_N (lowered here): low-rank propagation, W* from the factors and LOBPCG
    span the same k leading eigenvectors as eig + dense W* + LAPACK (subspace angle), and give
    the same labels."""
    import scipy.linalg

    X, _, cons, _, _ = _problem(300, 8, seed=7)
    dense = make_method(method, n_clusters=2, n_neighbors=10, solver="eig", random_state=0).fit(X, constraints=cons)
    monkeypatch.setattr(core, "DENSE_MAX_N", 100)
    fast = make_method(method, n_clusters=2, n_neighbors=10, random_state=0).fit(X, constraints=cons)
    assert fast.solver_ == "lowrank"
    np.testing.assert_allclose(fast.affinity_matrix_, dense.affinity_matrix_, rtol=0, atol=1e-9)
    # the row-normalised embeddings: compare the unnormalised leading subspaces via their Gram
    assert np.abs(fast.embedding_ @ fast.embedding_.T - dense.embedding_ @ dense.embedding_.T).max() <= 1e-4
    assert np.max(scipy.linalg.subspace_angles(fast.embedding_, dense.embedding_)) <= 1e-4
    np.testing.assert_array_equal(fast.labels_, dense.labels_)


def test_auto_propagates_low_rank_from_lowrank_min_n_but_embeds_densely_up_to_dense_max_n():
    """Between LOWRANK_MIN_N and DENSE_MAX_N (n = 1,500): the low-rank propagation (the full
    eigendecomposition was a fit's slowest step at n = 2,000), LAPACK's embedding."""
    n = 1500
    Y = core.constraint_matrix(cgen.random_pairs(np.arange(n) % 3, 15, rng=np.random.default_rng(0)), n)
    assert core.LOWRANK_MIN_N < n <= core.DENSE_MAX_N
    assert core.propagation_route("auto", Y, n, 1 / 16) == "lowrank"
    assert core.propagation_route("auto", Y, core.LOWRANK_MIN_N, 1 / 16) == "eig"
    assert core.propagation_route("eig", Y, n, 1 / 16) == "eig"


def test_spectral_learning_declares_its_sparse_memory_above_dense_max_n():
    """Above DENSE_MAX_N spectral_learning keeps the k-NN graph sparse and embeds by LOBPCG:
    its declared O(n d) model covers the traced peak at n = 3,000 and admits 60,000 points."""
    import tracemalloc

    from ccbench import registry
    from ccbench.running import protocol

    spec = registry.get_method_spec("spectral_learning")
    rng = np.random.default_rng(0)
    n = 3000
    X, y = rng.normal(size=(n, 10)), rng.integers(0, 3, n)
    cons = cgen.random_pairs(y, n_constraints=30, rng=rng)
    est = make_method("spectral_learning", n_clusters=3, random_state=0)
    tracemalloc.start()
    try:
        est.fit(X, constraints=cons)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= spec.memory.bytes(n, 10)
    assert protocol.memory_refusal(spec, {}, 60_000, 10, available=24 * 2**30) is None
    # srcp and e2cp hold W* (n x n) and still declare it
    for name in ("srcp", "e2cp"):
        assert registry.get_method_spec(name).memory.bytes(n, 10) >= 8 * n * n
