"""Spectral family: survivors of the mutation sample of seed 20261130 (issue 54, item 20, second round).

Each test asserts the property the mutated line is responsible for (a known answer on a hand-sized
case, two routes that must agree, or an invariant); ``tests/mutation/issue54/seed20261130/README.md``
lists the draw each test kills.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from ccbench_plugins.spectral import core
from ccbench_plugins.spectral import lowrank as lr
from scipy import sparse


def test_zolotarev_shifts_known_answers():
    # Draws 8, 16, 21, 31: the elliptic arguments (2j - 1) K / (2J) changed, one shift too many,
    # and the stopping rule on rho^2 read as rho.
    # One shift: dn(K/2, m) = (1 - m)^(1/4) = sqrt(a / b), so q = sqrt(a b), the geometric mean.
    # On [1, 4]: q = 2 and rho = max(|1 - 2| / 3, |4 - 2| / 6) = 1/3, rho^2 = 1/9.
    np.testing.assert_allclose(lr.zolotarev_shifts(1.0, 4.0, 0.2), [2.0], rtol=1e-12)  # 1/9 <= 0.2 < 1/3
    assert len(lr.zolotarev_shifts(1.0, 4.0, 0.1)) == 2  # 1/9 > 0.1: the smallest J is 2
    # Zolotarev's set is symmetric about the geometric mean: q_j q_{J+1-j} = a b (dn(u) dn(K - u) = sqrt(1 - m))
    for a, b, tol in ((1.0, 4.0, 0.1), (0.2, 2.2, 1e-9), (0.05, 2.05, 1e-12)):
        q = np.sort(lr.zolotarev_shifts(a, b, tol))
        np.testing.assert_allclose(q * q[::-1], a * b, rtol=1e-10)


@pytest.mark.parametrize("mu", [0.0, -0.5])
def test_srcp_refuses_a_mu_that_is_not_positive(mu):
    # Draw 33: the bound on mu lowered to -1. Eq. (5) needs mu > 0: the eigenbasis route divides
    # by a_i + a_j >= 2 mu (Proposition 1), and mu = 0 propagates nothing (F = 0).
    from ccbench_plugins.spectral.srcp import SRCP

    X = np.random.default_rng(0).normal(size=(12, 2))
    with pytest.raises(ValueError, match="mu"):
        SRCP(n_clusters=2, mu=mu, n_neighbors=3).fit(X)


def test_lowrank_W_star_is_eq9_also_on_self_loops():
    # Draw 26: F's lower clip on a self-loop's entry -1 -> +1. gaussian_knn_graph has no
    # self-loops, but adjust_similarity_lowrank takes any symmetric graph: on the diagonal
    # entries too it must be the dense eq. (9) of adjust_similarity with F = Z C Z^T.
    rng = np.random.default_rng(4)
    n = 12
    A = rng.uniform(0.1, 0.9, size=(n, n)) * (rng.random((n, n)) < 0.4)
    A = np.triu(A, 1)
    A = A + A.T
    A[np.diag_indices(n)] = rng.uniform(0.2, 0.8, size=n)  # self-loops
    W = sparse.csr_matrix(A)
    Z = rng.normal(size=(n, 4))
    C = np.diag([1.5, -2.0, 0.7, -0.4])  # F = Z C Z^T with entries of both signs, some beyond [-1, 1]
    F = Z @ C @ Z.T
    assert (np.diag(F) < -1).any() and (np.diag(F) > 0).any()
    np.testing.assert_allclose(lr.adjust_similarity_lowrank(W, Z, C), core.adjust_similarity(A, F), atol=1e-12)


def test_warm_start_block_starts_from_the_leading_eigenvector_d_half_one():
    # Draw 22: the start's first column sqrt(max(deg, 0)) -> sqrt(max(deg, 1)). D^{1/2} 1 is the
    # leading eigenvector of S = D^{-1/2} W D^{-1/2} (S D^{1/2} 1 = D^{-1/2} W 1 = D^{1/2} 1),
    # eigenvalue 1: the start carries it exactly, whatever the degrees (here some below 1).
    import scipy.sparse.linalg as sla

    X = np.random.default_rng(1).normal(size=(40, 2))
    W = core.gaussian_knn_graph(X, 3, sigma=0.3)
    assert np.asarray(W.sum(axis=1)).min() < 1
    seen = []
    real = sla.lobpcg

    def spy(A, X0, *args, **kwargs):
        seen.append(np.array(X0[:, 0]))
        return real(A, X0, *args, **kwargs)

    sla.lobpcg, saved = spy, sla.lobpcg
    try:
        lr.warm_start_block(W, 2)
    finally:
        sla.lobpcg = saved
    x0 = seen[0]
    S = lr.normalized_adjacency(W)
    np.testing.assert_allclose(S @ x0, x0, rtol=1e-12)


def test_lobpcg_route_handles_an_isolated_point_like_the_dense_route():
    # Draw 7: the LOBPCG route's zero-degree guard deg == 0 -> 1 set to 0 instead: 1 / sqrt(0)
    # is inf, and the dense W's scaled operator multiplies the isolated column's zeros by it
    # (NaN). Both routes read an isolated point as degree 1 (normalized_laplacian's rule) and
    # must give the same embedding up to a rotation.
    rng = np.random.default_rng(2)
    X = np.r_[rng.normal(0, 0.3, (30, 2)), rng.normal(4, 0.3, (30, 2))]  # n >= 5 x LOBPCG's block: iterative
    W = core.gaussian_knn_graph(X, 12, sigma=1.0).toarray()
    W[0, :] = W[:, 0] = 0.0  # point 0 is isolated (eigenvalue 0 of D^-1/2 W D^-1/2; the blobs give 1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no 0 * inf
        lab_l, V_l = core.spectral_clustering(W, 2, n_init=5, rng=np.random.default_rng(0), eigen_solver="lobpcg")
    lab_d, V_d = core.spectral_clustering(W, 2, n_init=5, rng=np.random.default_rng(0), eigen_solver="dense")
    assert np.all(np.isfinite(V_l))
    # the same subspace: rows scaled to unit length, V = V' Q with Q orthogonal, so V V^T agree
    # (the isolated point's row is 0 in exact arithmetic: LOBPCG's rounding there is scaled to
    # unit length, so it is left out)
    np.testing.assert_allclose(V_l[1:] @ V_l[1:].T, V_d[1:] @ V_d[1:].T, atol=1e-4)
    assert len(set(zip(lab_l[1:], lab_d[1:]))) == 2  # the same partition of the blobs (labels up to renaming)


def test_lobpcg_warns_when_its_iterations_end_above_tol():
    # Draw 9: the final residuals read only when LOBPCG returned none. One iteration on a
    # 200-point graph cannot reach 1e-12: the caller is told, naming the fix.
    from ccbench.base import ConvergenceWarning

    X = np.random.default_rng(3).normal(size=(200, 3))
    S = lr.normalized_adjacency(core.gaussian_knn_graph(X, 8, sigma=1.0))
    with pytest.warns(ConvergenceWarning, match="eigen_solver='dense'"):
        lr.leading_eigenvectors(S, 3, tol=1e-12, max_iter=1)


def test_lobpcg_route_on_a_graph_smaller_than_five_blocks_is_the_dense_one():
    # A bug the test above met (fixed in lowrank.leading_eigenvectors): below n = 5 x the block
    # (k + 5 columns) scipy's lobpcg solves densely and returns no residual history, and the
    # unpacking of three values raised "not enough values to unpack". eigen_solver="auto" meets
    # it above DENSE_MAX_N points with n_clusters >= n / 5 - 5.
    rng = np.random.default_rng(5)
    X = np.r_[rng.normal(0, 0.3, (12, 2)), rng.normal(4, 0.3, (12, 2))]
    W = core.gaussian_knn_graph(X, 4, sigma=1.0)
    k = 2  # block 7, 24 < 35
    _, V_l = core.spectral_clustering(W, k, n_init=2, rng=np.random.default_rng(0), eigen_solver="lobpcg")
    _, V_d = core.spectral_clustering(W, k, n_init=2, rng=np.random.default_rng(0), eigen_solver="dense")
    np.testing.assert_allclose(V_l @ V_l.T, V_d @ V_d.T, atol=1e-8)


def test_normalized_laplacians_diagonal_gives_an_isolated_point_degree_one():
    # Draw 2: the isolated-node guard deg == 0 -> 2 instead of 1. L itself does not show it
    # (an isolated row of W is zero whatever its scale); the returned d = D^{-1/2} does.
    W = np.zeros((4, 4))
    W[0, 1] = W[1, 0] = 0.5
    W[1, 2] = W[2, 1] = 0.25  # point 3 is isolated
    L, d = core.normalized_laplacian(W, return_diag=True)
    np.testing.assert_allclose(d, 1.0 / np.sqrt([0.5, 0.75, 0.25, 1.0]), rtol=1e-15)
    np.testing.assert_allclose(L, np.eye(4) - d[:, None] * W * d[None, :], atol=1e-15)


def test_leading_eigenvectors_of_a_matrix_barely_larger_than_k():
    # Draw 17: the block width min(n - 1, k + 5) -> min(n / 1, k + 5), a float width when n <= k + 5.
    # The k leading eigenvectors of a small symmetric matrix are LAPACK's, up to sign.
    rng = np.random.default_rng(6)
    A = rng.normal(size=(6, 6))
    M = A + A.T
    for k in (1, 3):
        V = lr.leading_eigenvectors(M, k)
        _, U = np.linalg.eigh(M)
        np.testing.assert_allclose(np.abs(V.T @ U[:, ::-1][:, :k]), np.eye(k), atol=1e-8)


def test_spreading_on_an_empty_graph_is_converged_at_once():
    # Draw 18: the change of an empty F read as 1 instead of 0. Nothing to propagate: F is empty
    # after one step, which already meets any tol.
    F, n_iter, converged = core.propagate_spreading(sparse.csr_matrix((0, 0)), sparse.csr_matrix((0, 0)),
                                                    mu=0.2, tol=1e-10, max_iter=50)
    assert F.shape == (0, 0) and (n_iter, converged) == (1, True)
