"""Spectral family: srcp (Fu et al. 2011), e2cp, ncuts, spectral_learning."""

import warnings

import numpy as np
import pytest
from ccbench_plugins.spectral import core
from scipy import sparse
from scipy.spatial.distance import cdist

from ccbench import Constraints, load_dataset, make_method, metrics
from ccbench import constraints as cgen
from ccbench.base import ConvergenceWarning

MU = 0.2


def _problem(n, n_constraints, seed=0, n_neighbors=8):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(0, 1, (n // 2, 3)), rng.normal(2.5, 1, (n - n // 2, 3))]
    y = np.r_[np.zeros(n // 2, int), np.ones(n - n // 2, int)]
    cons = cgen.random_pairs(y, n_constraints, rng=rng)
    W = core.gaussian_knn_graph(X, n_neighbors, sigma=1.0, symmetrize="mean")
    return X, y, cons, W, core.constraint_matrix(cons, n)


def _eig_F(W, Y, mu=MU):
    lam, U = core.laplacian_eigh(core.normalized_laplacian(W))
    return core.propagate_eig(lam, U, Y, mu=mu)


# --------------------------------------------------------------------------- graph


def test_knn_graph_matches_dense_definition():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    k, sigma = 5, 0.7
    D2 = cdist(X, X, "sqeuclidean")
    np.fill_diagonal(D2, np.inf)
    nn = np.argsort(D2, axis=1)[:, :k]
    A = np.zeros((40, 40))
    rows = np.repeat(np.arange(40), k)
    A[rows, nn.ravel()] = np.exp(-D2[rows, nn.ravel()] / (2 * sigma**2))
    W = core.gaussian_knn_graph(X, k, sigma=sigma, symmetrize="mean")
    np.testing.assert_allclose(W.toarray(), (A + A.T) / 2, atol=1e-14)
    Wmax = core.gaussian_knn_graph(X, k, sigma=sigma, symmetrize="max")
    np.testing.assert_allclose(Wmax.toarray(), np.maximum(A, A.T), atol=1e-14)
    assert sparse.issparse(W) and np.all(W.diagonal() == 0)


def test_knn_graph_with_duplicate_points_excludes_self():
    X = np.r_[np.zeros((3, 2)), np.ones((3, 2))]
    W = core.gaussian_knn_graph(X, 2, sigma=1.0, symmetrize="mean").toarray()
    assert np.all(np.diag(W) == 0)
    np.testing.assert_allclose(W[:3, :3], 1 - np.eye(3))


def test_normalized_laplacian_is_psd_with_spectrum_in_0_2():
    W = _problem(60, 0)[3]
    L = core.normalized_laplacian(W.toarray())
    eig = np.linalg.eigvalsh(L)
    assert eig.min() > -1e-10 and eig.max() < 2 + 1e-10
    d = 1 / np.sqrt(W.toarray().sum(1))
    np.testing.assert_allclose(L, np.eye(60) - d[:, None] * W.toarray() * d[None, :], atol=1e-14)
    assert sparse.issparse(core.normalized_laplacian(W))


def test_constraint_matrix_is_eq_2():
    cons = Constraints([[0, 1]], [[2, 3], [1, 4]], n_samples=5)
    Y = core.constraint_matrix(cons, 5).toarray()
    expected = np.zeros((5, 5))
    expected[0, 1] = expected[1, 0] = 1
    expected[2, 3] = expected[3, 2] = expected[1, 4] = expected[4, 1] = -1
    np.testing.assert_array_equal(Y, expected)


# --------------------------------------------------------------------------- propagation


def test_eig_solution_satisfies_lyapunov_eq5():
    _, _, _, W, Y = _problem(200, 80)
    F = _eig_F(W, Y)
    A = core.normalized_laplacian(W).toarray() + MU * np.eye(200)
    rhs = 2 * MU * Y.toarray()
    assert np.linalg.norm(A @ F + F @ A - rhs) / np.linalg.norm(rhs) <= 1e-10
    np.testing.assert_array_equal(F, F.T)


def test_eig_solution_equals_kronecker_closed_form_eq6():
    n = 30
    _, _, _, W, Y = _problem(n, 25, seed=3, n_neighbors=5)
    A = core.normalized_laplacian(W).toarray() + MU * np.eye(n)
    I = np.eye(n)
    K = np.kron(I, A) + np.kron(A, I)
    vecY = Y.toarray().ravel(order="F")
    F6 = (2 * MU * np.linalg.solve(K, vecY)).reshape((n, n), order="F")
    np.testing.assert_allclose(_eig_F(W, Y), F6, atol=1e-12)


def test_eig_equals_spreading_and_scipy_lyapunov():
    _, _, _, W, Y = _problem(80, 40, seed=5)
    F = _eig_F(W, Y)
    F_spread, n_iter, converged = core.propagate_spreading(W, Y, mu=MU, tol=1e-14, max_iter=5000)
    assert converged and n_iter > 10
    np.testing.assert_allclose(F_spread, F, atol=1e-12)
    F_lyap = core.propagate_lyapunov(core.normalized_laplacian(W), Y, mu=MU)
    np.testing.assert_allclose(F_lyap, F, atol=1e-12)


def test_no_constraints_give_zero_F_and_unchanged_W():
    _, _, cons, W, Y = _problem(50, 0)
    F = _eig_F(W, Y)
    assert not F.any()
    np.testing.assert_array_equal(core.adjust_similarity(W, F), W.toarray())


def test_adjust_similarity_eq9_by_hand_and_in_unit_interval():
    W = np.array([[0.0, 0.2], [0.2, 0.0]])
    F = np.array([[0.5, 0.5], [-0.5, 0.0]])
    np.testing.assert_allclose(core.adjust_similarity(W, F), [[0.5, 1 - 0.5 * 0.8], [0.5 * 0.2, 0.0]])
    _, _, _, W, Y = _problem(120, 400, seed=2)
    Ws = core.adjust_similarity(W, _eig_F(W, Y))
    assert Ws.min() >= 0 and Ws.max() <= 1
    # |F| > 1 is clipped, so W* never leaves [0, 1]
    assert core.adjust_similarity(W, 3 * np.sign(Y.toarray())).max() <= 1


def test_propagation_pushes_must_links_up_and_cannot_links_down():
    _, _, cons, W, Y = _problem(100, 60, seed=4)
    F = _eig_F(W, Y)
    ml, cl = cons.must_link, cons.cannot_link
    assert np.all(F[ml[:, 0], ml[:, 1]] > 0) and np.all(F[cl[:, 0], cl[:, 1]] < 0)


def test_e2cp_equals_dense_inverse_form():
    n, alpha = 60, 0.8
    _, _, _, W, Y = _problem(n, 30, seed=6)
    S = np.eye(n) - core.normalized_laplacian(W).toarray()
    Pinv = np.linalg.inv(np.eye(n) - alpha * S)
    expected = (1 - alpha) ** 2 * Pinv @ Y.toarray() @ Pinv
    lam, U = core.laplacian_eigh(core.normalized_laplacian(W))
    np.testing.assert_allclose(core.propagate_e2cp(lam, U, Y, alpha=alpha), expected, atol=1e-12)


def test_spreading_non_convergence_warns():
    X, _, cons, _, _ = _problem(60, 20)
    est = make_method("srcp", n_clusters=2, solver="spreading", max_iter=3, n_neighbors=8, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        est.fit(X, constraints=cons)
    assert est.n_iter_ == 3 and not est.converged_


# --------------------------------------------------------------------------- estimators


def test_solvers_give_the_same_clustering():
    X, _, cons, _, _ = _problem(90, 60, seed=7)
    fits = {
        s: make_method("srcp", n_clusters=2, solver=s, n_neighbors=8, random_state=0).fit(X, constraints=cons)
        for s in ("eig", "spreading", "lyapunov")
    }
    for s in ("spreading", "lyapunov"):
        np.testing.assert_allclose(fits[s].propagated_constraints_, fits["eig"].propagated_constraints_, atol=1e-9)
        np.testing.assert_array_equal(fits[s].labels_, fits["eig"].labels_)


def test_srcp_without_constraints_is_ncuts():
    X, _, _, _, _ = _problem(80, 0, seed=8)
    a = make_method("srcp", n_clusters=2, n_neighbors=8, random_state=3).fit(X)
    b = make_method("ncuts", n_clusters=2, n_neighbors=8, random_state=3).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.affinity_matrix_, b.affinity_matrix_.toarray())


def test_spectral_learning_sets_constrained_entries():
    X, _, cons, W, _ = _problem(50, 30, seed=9)
    est = make_method("spectral_learning", n_clusters=2, n_neighbors=8, random_state=0).fit(X, constraints=cons)
    A = est.affinity_matrix_.toarray()
    ml, cl = cons.must_link, cons.cannot_link
    assert np.all(A[ml[:, 0], ml[:, 1]] == 1) and np.all(A[ml[:, 1], ml[:, 0]] == 1)
    assert np.all(A[cl[:, 0], cl[:, 1]] == 0) and np.all(A[cl[:, 1], cl[:, 0]] == 0)
    touched = np.zeros((50, 50), bool)
    for p in (ml, cl):
        touched[p[:, 0], p[:, 1]] = touched[p[:, 1], p[:, 0]] = True
    np.testing.assert_array_equal(A[~touched], W.toarray()[~touched])


def test_srcp_uses_constraints_on_wine():
    """On scikit-learn's wine (standardised), 300 random pairs lift SRCP clearly above NCuts."""
    ds = load_dataset("wine", preprocess="standardize")
    gains = []
    for t in range(2):
        cons = cgen.random_pairs(ds.y, 300, rng=np.random.default_rng(t))
        ari = {
            m: metrics.adjusted_rand(ds.y, make_method(m, n_clusters=3, random_state=t).fit_predict(ds.X, constraints=cons))
            for m in ("srcp", "ncuts")
        }
        gains.append(ari["srcp"] - ari["ncuts"])
    assert np.mean(gains) > 0.05


def test_fit_is_deterministic_given_random_state():
    X, _, cons, _, _ = _problem(70, 30, seed=10)
    a = make_method("e2cp", n_clusters=3, n_neighbors=8, random_state=5).fit_predict(X, constraints=cons)
    b = make_method("e2cp", n_clusters=3, n_neighbors=8, random_state=5).fit_predict(X, constraints=cons)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "name, params, match",
    [("srcp", {"mu": 0.0}, "mu"), ("srcp", {"solver": "lyap"}, "solver"), ("e2cp", {"alpha": 1.0}, "alpha"),
     ("ncuts", {"sigma": -1.0}, "sigma")],
)
def test_bad_parameters_are_named(name, params, match):
    with pytest.raises(ValueError, match=match):
        make_method(name, **params).fit(np.random.default_rng(0).normal(size=(10, 2)))


def test_tiny_inputs_cap_the_neighbourhood():
    X = np.random.default_rng(0).normal(size=(6, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        labels = make_method("srcp", n_clusters=2, random_state=0).fit_predict(X)
    assert labels.shape == (6,) and set(labels) <= {0, 1}
