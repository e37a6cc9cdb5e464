"""Spectral family: properties that the mutation run of issue 41 (seed 20261126) found unguarded.

Each test names the line it guards; see ``tests/mutation/issue41/README.md``.
"""

from __future__ import annotations

import numpy as np
import pytest
from ccbench_plugins.spectral import lowrank as lr

from ccbench import make_method


def test_lobpcg_finds_five_leading_eigenvectors_with_its_guard_columns():
    # lowrank.py leading_eigenvectors: the block has k + 5 columns (k wanted, 5 guards that
    # speed convergence and catch a repeated eigenvalue). k = 5 is an ordinary request (five
    # clusters); the five leading eigenvectors of a symmetric matrix with a clear gap after
    # the fifth must span the dense route's subspace (a block of k % 5 = 0 columns would not)
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(60, 60)))
    lam = np.r_[[1.0, 0.95, 0.9, 0.85, 0.8], np.linspace(0.4, -0.5, 55)]
    M = (Q * lam) @ Q.T
    M = (M + M.T) / 2
    V = lr.leading_eigenvectors(M, 5, tol=1e-8, max_iter=500)
    assert V.shape == (60, 5)
    U = Q[:, :5]
    np.testing.assert_allclose(V @ V.T, U @ U.T, atol=1e-6)


@pytest.mark.parametrize("method", ["ncuts", "spectral_learning", "e2cp", "srcp"])
def test_zero_clusters_are_refused(method):
    # core.py _parameter_constraints of the spectral estimators: n_clusters = 0 asks for an
    # embedding of no eigenvector and k-means with no centre; it must be refused up front
    X = np.random.default_rng(0).normal(size=(12, 2))
    with pytest.raises(ValueError, match="parameter 'n_clusters' must be int in \\[1, inf"):
        make_method(method, n_clusters=0).fit(X)


@pytest.mark.parametrize("route", ["srcp", "e2cp"])
def test_no_constraints_give_factors_of_a_zero_F(route):
    # lowrank.py propagate_srcp_lowrank / propagate_e2cp_lowrank: F = Z C Z^T, so C is square with Z's column count;
    # without constraints both are empty and F is the n x n zero matrix (nothing propagated)
    from scipy import sparse

    W = sparse.csr_matrix(np.exp(-np.random.default_rng(0).uniform(size=(30, 30))))
    W = (W + W.T) / 2
    S, Y = lr.normalized_adjacency(W), sparse.csr_matrix((30, 30))
    Z, C = lr.propagate_srcp_lowrank(S, Y, mu=0.2) if route == "srcp" else lr.propagate_e2cp_lowrank(S, Y, alpha=0.8)
    assert Z.shape == (30, 0) and C.shape == (0, 0)
    np.testing.assert_array_equal(Z @ C @ Z.T, np.zeros((30, 30)))
