"""Spectral family: guards the audit of issue 28 found missing.

Each test here failed on the code before its fix, or fails when the formula it
guards is broken on purpose (the mutation named in its docstring): a degenerate
graph is reported, label supervision is used, and every step of the pipeline
(graph, Y, propagation, eq. 9, the normalised embedding, the paper's defaults)
is checked against an independent dense re-implementation.
"""

import warnings

import numpy as np
import pytest
import scipy.linalg
from ccbench_plugins.spectral import core
from scipy.spatial.distance import cdist
from sklearn.datasets import make_blobs

from ccbench import Constraints, load_dataset, make_method
from ccbench import constraints as cgen

METHODS = ("srcp", "e2cp", "spectral_learning", "ncuts")


# --------------------------------------------------------------------------- independent references


def _dense_graph(X, k, sigma):
    """Fu et al.'s graph written from the paper: k-NN Gaussian weights, w_ii = 0, W = (W + W^T) / 2."""
    D2 = cdist(X, X, "sqeuclidean")
    np.fill_diagonal(D2, np.inf)
    nn = np.argsort(D2, axis=1, kind="stable")[:, :k]
    rows = np.repeat(np.arange(len(X)), k)
    A = np.zeros_like(D2)
    A[rows, nn.ravel()] = np.exp(-D2[rows, nn.ravel()] / (2 * sigma**2))
    return (A + A.T) / 2


def _dense_S(W):
    d = 1 / np.sqrt(W.sum(1))
    return d[:, None] * W * d[None, :]


def _dense_Y(cons, n):
    Y = np.zeros((n, n))
    for pairs, w, sign in ((cons.must_link, cons.must_link_weight, 1), (cons.cannot_link, cons.cannot_link_weight, -1)):
        for (i, j), c in zip(pairs, w):
            Y[i, j] = Y[j, i] = sign * c
    return Y


def _eq9(W, F):
    F = np.clip(F, -1, 1)
    return np.where(F >= 0, 1 - (1 - F) * (1 - W), (1 + F) * W)


def _three_blobs(n=60, seed=0):
    X, y = make_blobs(n, centers=[[0, 0], [3, 0], [0, 3]], cluster_std=0.8, random_state=seed)
    return X, y


# --------------------------------------------------------------------------- degenerate graph


def _raw_wine():
    return load_dataset("wine").X, 3


def _blobs_x1000():
    X, _ = make_blobs(60, centers=2, random_state=0)
    return X * 1000, 2


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("data", [_raw_wine, _blobs_x1000], ids=["raw_wine", "blobs_x1000"])
def test_degenerate_graph_on_raw_features_warns_with_the_fix(method, data):
    """sigma = 1 on unscaled features: the weights underflow (raw wine's median is 1e-121)."""
    X, k = data()
    with pytest.warns(core.DegenerateGraphWarning, match=r"(?s)below 1e-12.*preprocess=standardize.*sigma=None"):
        est = make_method(method, n_clusters=k, random_state=0).fit(X)
    assert est.graph_diagnostics_["tiny_weight_fraction"] > 0.9


@pytest.mark.parametrize("method", METHODS)
def test_standardised_or_unit_scale_features_do_not_warn(method):
    wine = load_dataset("wine", preprocess="standardize")
    X, _ = make_blobs(60, centers=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", core.DegenerateGraphWarning)
        est = make_method(method, n_clusters=3, random_state=0).fit(wine.X)
        make_method(method, n_clusters=2, random_state=0).fit(X)
    assert est.graph_diagnostics_ == {"tiny_weight_fraction": 0.0, "n_components": 1}


def test_graph_with_more_components_than_clusters_warns():
    """Four far-apart blobs and n_clusters=2: the leading eigenspace is 4-dimensional, any 2 of it is arbitrary."""
    X, _ = make_blobs(80, centers=[[0, 0], [50, 0], [0, 50], [50, 50]], cluster_std=0.5, random_state=0)
    with pytest.warns(core.DegenerateGraphWarning, match="4 connected components for n_clusters=2"):
        make_method("ncuts", n_clusters=2, n_neighbors=5, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", core.DegenerateGraphWarning)
        make_method("ncuts", n_clusters=4, n_neighbors=5, random_state=0).fit(X)


# --------------------------------------------------------------------------- supervision as labels


def _partial_labels(y, per_class=4, seed=0):
    rng = np.random.default_rng(seed)
    lab = np.full(len(y), -1)
    for c in np.unique(y):
        idx = rng.choice(np.flatnonzero(y == c), per_class, replace=False)
        lab[idx] = c
    return lab


@pytest.mark.parametrize("method", ["srcp", "e2cp", "spectral_learning"])
def test_labels_only_supervision_uses_the_implied_pairs(method):
    """Constraints(labels=...) with no pairs gave Y = 0 (F = 0): the supervision vanished."""
    X, y = _three_blobs()
    lab = _partial_labels(y)
    only_labels = Constraints(labels=lab, n_samples=len(y))
    as_pairs = Constraints.from_labels(lab)
    a = make_method(method, n_clusters=3, n_neighbors=8, random_state=0).fit(X, constraints=only_labels)
    b = make_method(method, n_clusters=3, n_neighbors=8, random_state=0).fit(X, constraints=as_pairs)
    A = a.affinity_matrix_
    A = A.toarray() if hasattr(A, "toarray") else A
    B = b.affinity_matrix_
    B = B.toarray() if hasattr(B, "toarray") else B
    np.testing.assert_array_equal(A, B)
    W = core.gaussian_knn_graph(X, 8, sigma=1.0, symmetrize="mean").toarray()
    assert np.abs(A - W).max() > 0.05  # the labels changed the affinity
    if method != "spectral_learning":
        assert np.abs(a.propagated_constraints_).max() > 0.05


def test_pairs_with_labels_keeps_given_weights_and_rejects_contradictions():
    lab = np.array([0, 0, 1, -1, 1])
    cons = Constraints([[0, 1]], [[3, 4]], n_samples=5, must_link_weight=[0.5], cannot_link_weight=[0.25], labels=lab)
    out = core.pairs_with_labels(cons)
    np.testing.assert_array_equal(out.must_link, [[0, 1], [2, 4]])
    np.testing.assert_array_equal(out.must_link_weight, [0.5, 1.0])
    np.testing.assert_array_equal(out.cannot_link, [[0, 2], [0, 4], [1, 2], [1, 4], [3, 4]])
    np.testing.assert_array_equal(out.cannot_link_weight, [1, 1, 1, 1, 0.25])
    with pytest.raises(ValueError, match="both must-link and cannot-link"):
        core.pairs_with_labels(Constraints([[0, 2]], n_samples=5, labels=lab))
    bare = Constraints([[0, 1]], n_samples=5)
    assert core.pairs_with_labels(bare) is bare


# --------------------------------------------------------------------------- pipeline against references


def test_constraint_weights_scale_Y():
    """Mutation: Y built with +-1 regardless of Constraints.*_weight."""
    cons = Constraints([[0, 1], [2, 3]], [[1, 4]], n_samples=5, must_link_weight=[0.5, 1.0], cannot_link_weight=[0.25])
    np.testing.assert_array_equal(core.constraint_matrix(cons, 5).toarray(), _dense_Y(cons, 5))
    assert core.constraint_matrix(cons, 5)[0, 1] == 0.5 and core.constraint_matrix(cons, 5)[4, 1] == -0.25


def _fit_vs_reference(method, **params):
    X, y = _three_blobs()
    k = 8
    cons = cgen.random_pairs(y, 40, rng=np.random.default_rng(1))
    cons = cons.with_pairs(
        cons.must_link, cons.cannot_link,
        must_link_weight=np.linspace(0.3, 1, cons.n_must_link), cannot_link_weight=np.linspace(1, 0.4, cons.n_cannot_link),
    )
    est = make_method(method, n_clusters=3, n_neighbors=k, random_state=0, **params).fit(X, constraints=cons)
    W = _dense_graph(X, k, 1.0)
    return est, W, _dense_Y(cons, len(y)), cons


def test_e2cp_affinity_is_eq9_of_lu_ip_propagation():
    """Mutation: E2CP returns W (its propagated matrix ignored, i.e. NCuts)."""
    alpha = 0.8
    est, W, Y, _ = _fit_vs_reference("e2cp", alpha=alpha)
    P = np.linalg.inv(np.eye(len(W)) - alpha * _dense_S(W))
    F = (1 - alpha) ** 2 * P @ Y @ P
    np.testing.assert_allclose(est.propagated_constraints_, F, atol=1e-12)
    np.testing.assert_allclose(est.affinity_matrix_, _eq9(W, F), atol=1e-12)
    assert np.abs(est.affinity_matrix_ - W).max() > 0.05


def test_srcp_affinity_is_eq9_of_the_lyapunov_solution():
    """Mutation: SRCP returns W, or builds Y without the constraint weights."""
    mu = 0.2
    est, W, Y, _ = _fit_vs_reference("srcp")
    A = np.eye(len(W)) * (1 + mu) - _dense_S(W)
    F = scipy.linalg.solve_continuous_lyapunov(A, 2 * mu * Y)
    np.testing.assert_allclose(est.propagated_constraints_, F, atol=1e-12)
    np.testing.assert_allclose(est.affinity_matrix_, _eq9(W, F), atol=1e-12)
    assert np.abs(est.affinity_matrix_ - W).max() > 0.05


def test_spectral_learning_zeroes_cannot_links_on_graph_edges():
    """Mutation: spectral learning ignores every cannot-link. The cannot-links are drawn
    from the graph's edges, so an ignored one leaves a non-zero weight."""
    X, y = _three_blobs()
    W = _dense_graph(X, 8, 1.0)
    i, j = np.nonzero(np.triu(W > 0.05, 1))
    pick = np.random.default_rng(0).choice(len(i), 12, replace=False)
    cl = np.c_[i[pick], j[pick]]
    ml = np.array([[0, 1], [2, 3]])
    cons = Constraints(ml, cl, n_samples=len(y))
    est = make_method("spectral_learning", n_clusters=3, n_neighbors=8, random_state=0).fit(X, constraints=cons)
    expected = W.copy()
    expected[cl[:, 0], cl[:, 1]] = expected[cl[:, 1], cl[:, 0]] = 0
    expected[ml[:, 0], ml[:, 1]] = expected[ml[:, 1], ml[:, 0]] = 1
    np.testing.assert_allclose(est.affinity_matrix_.toarray(), expected, atol=1e-14)
    assert W[cl[:, 0], cl[:, 1]].min() > 0.05


def test_embedding_is_row_normalised_leading_eigenvectors_of_D_half_W_D_half():
    """Mutations: the clustering step without D^-1/2 W D^-1/2, or without row normalisation."""
    X, _ = _three_blobs(90, seed=2)
    W = _dense_graph(X, 6, 1.0)
    # uneven degrees, so the normalisation matters
    W *= np.outer(np.linspace(0.2, 1.0, 90), np.linspace(0.2, 1.0, 90))
    labels, V = core.spectral_clustering(W, 3, n_init=2, rng=np.random.default_rng(0))
    _, U = np.linalg.eigh(_dense_S(W))
    U = U[:, -3:]
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    np.testing.assert_allclose(np.linalg.norm(V, axis=1), 1.0, atol=1e-12)
    # the embedding is defined up to a rotation of the eigenbasis: compare Gram matrices
    np.testing.assert_allclose(V @ V.T, U @ U.T, atol=1e-8)
    assert labels.shape == (90,) and len(set(labels)) == 3


# --------------------------------------------------------------------------- the papers' defaults


@pytest.mark.parametrize("method", METHODS)
def test_defaults_are_the_srcp_papers(method):
    """Fu et al. 2011, "Experimental Setup": "mu = 0.2 and k = 20", sigma = 1 for UCI data,
    W = (W + W^T) / 2, and "the same k-NN graph construction for all the algorithms"
    (so E2CP, NCuts and spectral learning share k, sigma and the symmetrisation).
    E2CP's alpha = 0.8 is our documented choice (Lu & Ip's value is not in our papers)."""
    p = make_method(method).get_params()
    assert (p["n_neighbors"], p["sigma"], p["symmetrize"]) == (20, 1.0, "mean")
    if method == "srcp":
        assert p["mu"] == 0.2
    if method == "e2cp":
        assert p["alpha"] == 0.8


@pytest.mark.parametrize("method", METHODS)
def test_default_fit_uses_the_papers_graph(method):
    """Mutation: the estimators build their graph with other k / sigma / symmetrisation
    than their parameters say (defaults: k = 20, sigma = 1, (W + W^T) / 2)."""
    X, _ = _three_blobs(70, seed=3)
    est = make_method(method, n_clusters=3, random_state=0).fit(X)
    A = est.affinity_matrix_
    A = A.toarray() if hasattr(A, "toarray") else A
    np.testing.assert_allclose(A, _dense_graph(X, 20, 1.0), atol=1e-14)


# --------------------------------------------------------------------------- mutation survivors (tests/mutation)


def test_isolated_points_get_degree_one_in_the_laplacian():
    """Mutation survivor: the isolated-node guard of normalized_laplacian (deg == 0 -> 1)."""
    W = np.zeros((4, 4))
    W[0, 1] = W[1, 0] = 0.5
    W[1, 2] = W[2, 1] = 0.25  # point 3 is isolated
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division by a zero degree
        L = core.normalized_laplacian(W)
    assert np.isfinite(L).all()
    np.testing.assert_array_equal(L[3], [0, 0, 0, 1])


def test_direct_solvers_report_one_iteration_and_convergence():
    """Mutation survivor: n_iter_ of the direct solvers (documented as 1)."""
    X, y = _three_blobs(40)
    cons = cgen.random_pairs(y, 10, rng=np.random.default_rng(0))
    for solver in ("eig", "lyapunov", "lowrank"):
        est = make_method("srcp", n_clusters=3, n_neighbors=8, solver=solver, random_state=0).fit(X, constraints=cons)
        assert (est.n_iter_, est.converged_) == (1, True)


@pytest.mark.parametrize("method", METHODS)
def test_a_single_kmeans_start_is_allowed(method):
    """Mutation survivor: the lower bound of n_init (1 is valid; 0 is not)."""
    X, _ = _three_blobs(40)
    assert make_method(method, n_clusters=3, n_neighbors=8, n_init=1, random_state=0).fit_predict(X).shape == (40,)
    with pytest.raises(ValueError, match="n_init"):
        make_method(method, n_clusters=3, n_init=0).fit(X)
