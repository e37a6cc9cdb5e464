"""Shared pieces of the spectral family: graph, Laplacian, constraint propagation,
similarity adjustment and normalised spectral clustering.

``srcp``, ``e2cp``, ``ncuts`` and ``spectral_learning`` all build the same
symmetric k-NN Gaussian graph (Fu et al. 2011, section "Graph Regularized
Semi-supervised Learning": w_ii = 0, W = (W + W^T) / 2) and end in the same
normalised spectral clustering (von Luxburg 2007, Ng-Jordan-Weiss); they differ
only in how the supervision changes W. Only the propagated constraint matrix F
and the adjusted W* are dense N x N; the graph stays sparse.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.linalg
from scipy import sparse
from scipy.sparse.csgraph import connected_components
from sklearn.cluster import KMeans
from sklearn.neighbors import NearestNeighbors

from ccbench.base import ConstrainedClusterer, ConvergenceWarning, Interval, Options, check_random_state
from ccbench.constraints import pairs_with_labels  # noqa: F401 (moved to ccbench.constraints; used here and by srcp, e2cp)

__all__ = [
    "DegenerateGraphWarning",
    "gaussian_knn_graph",
    "graph_diagnostics",
    "check_graph",
    "pairs_with_labels",
    "normalized_laplacian",
    "constraint_matrix",
    "laplacian_eigh",
    "propagate_eig",
    "propagate_spreading",
    "propagate_lyapunov",
    "adjust_similarity",
    "spectral_clustering",
    "SpectralBase",
]


# --------------------------------------------------------------------------- graph

#: A Gaussian weight below this counts as underflowed: next to weights of order 1 it is
#: numerically no edge (eigensolvers resolve about 1e-15 relative to the largest entry).
TINY_WEIGHT = 1e-12

#: Warn when more than this share of the k-NN weights underflow.
MAX_TINY_FRACTION = 0.5


class DegenerateGraphWarning(UserWarning):
    """The k-NN graph is numerically degenerate, so its spectral clustering means nothing."""


def gaussian_knn_graph(X, n_neighbors: int = 10, *, sigma=None, symmetrize: str = "max") -> sparse.csr_matrix:
    """Symmetric k-NN graph with Gaussian weights exp(-||x_i - x_j||^2 / (2 sigma^2)).

    ``sigma=None`` uses the mean distance to the k-th neighbour. ``symmetrize``
    is ``"max"`` (edge if either is a neighbour of the other) or ``"mean"``
    (W = (W + W^T) / 2, the SRCP paper's rule). The diagonal is zero.
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if not 1 <= n_neighbors < n:
        raise ValueError(f"n_neighbors must be in [1, {n - 1}] for {n} points, got {n_neighbors}")
    nn = NearestNeighbors(n_neighbors=n_neighbors + 1).fit(X)
    dist, idx = nn.kneighbors(X)
    # Drop each point itself (not simply column 0: with duplicate points another
    # index can come first), keeping exactly n_neighbors others per row.
    keep = idx != np.arange(n)[:, None]
    keep[keep.sum(axis=1) > n_neighbors, -1] = False
    dist = dist[keep].reshape(n, n_neighbors)
    idx = idx[keep].reshape(n, n_neighbors)
    if sigma is None:
        sigma = float(np.mean(dist[:, -1])) or 1.0
    weights = np.exp(-(dist**2) / (2.0 * sigma**2))
    rows = np.repeat(np.arange(n), n_neighbors)
    W = sparse.csr_matrix((weights.ravel(), (rows, idx.ravel())), shape=(n, n))
    if symmetrize == "max":
        W = W.maximum(W.T)
    elif symmetrize == "mean":
        W = (W + W.T) * 0.5
    else:
        raise ValueError(f"symmetrize must be 'max' or 'mean', got {symmetrize!r}")
    return W.tocsr()


def graph_diagnostics(W) -> dict:
    """How much of the graph survives: the share of k-NN weights below :data:`TINY_WEIGHT`
    and the number of connected components once those are dropped."""
    W = sparse.csr_matrix(W)
    w = W.data
    strong = W.copy()
    strong.data = (w >= TINY_WEIGHT).astype(np.float64)
    strong.eliminate_zeros()
    n_components = int(connected_components(strong, directed=False)[0])
    tiny = float(np.mean(w < TINY_WEIGHT)) if w.size else 1.0
    return {"tiny_weight_fraction": tiny, "n_components": n_components}


def check_graph(W, n_clusters: int, *, sigma, method: str) -> dict:
    """Warn (:class:`DegenerateGraphWarning`) when the graph cannot carry a clustering.

    Two symptoms, both of a Gaussian width too small for the data's scale (the
    paper's sigma = 1 on raw features: raw wine's median weight is 1e-121):
    most k-NN weights underflow (below 1e-12, more than half of them), or the
    graph without those weights falls into more connected components than
    ``n_clusters`` (the k leading eigenvectors then pick an arbitrary
    combination of component indicators). Returns :func:`graph_diagnostics`.
    """
    info = graph_diagnostics(W)
    problems = []
    if info["tiny_weight_fraction"] > MAX_TINY_FRACTION:
        problems.append(f"{info['tiny_weight_fraction']:.0%} of its k-NN weights are below {TINY_WEIGHT:g}")
    if info["n_components"] > n_clusters:
        problems.append(
            f"without those it falls into {info['n_components']} connected components for n_clusters={n_clusters}"
        )
    if problems:
        warnings.warn(
            f"{method}: the k-NN Gaussian graph (sigma={sigma}) is degenerate: {'; '.join(problems)}, so the "
            f"spectral clustering is meaningless. The width is too small for the features' scale: standardise "
            f"them (dataset.preprocess=standardize, or load_dataset(..., preprocess='standardize')) or set "
            f"sigma=None (the mean distance to the k-th neighbour).",
            DegenerateGraphWarning,
            stacklevel=3,
        )
    return info


def normalized_laplacian(W, *, return_diag: bool = False):
    """L = I - D^{-1/2} W D^{-1/2} (isolated nodes get degree 1).

    Dense in, dense out; sparse in, sparse (CSR) out. ``return_diag=True`` also
    returns d = D^{-1/2} as a vector.
    """
    dense = not sparse.issparse(W)
    W = sparse.csr_matrix(W, dtype=np.float64)
    deg = np.asarray(W.sum(axis=1)).ravel()
    deg[deg == 0] = 1.0
    d = 1.0 / np.sqrt(deg)
    D = sparse.diags(d)
    L = sparse.identity(W.shape[0], format="csr") - D @ W @ D
    L = L.toarray() if dense else L.tocsr()
    return (L, d) if return_diag else L


def constraint_matrix(constraints, n_samples: int) -> sparse.csr_matrix:
    """Y of eq. (2): +c for must-link, -c for cannot-link (symmetric, c = confidence, 1 by default)."""
    ml, cl = constraints.must_link, constraints.cannot_link
    i = np.concatenate([ml[:, 0], ml[:, 1], cl[:, 0], cl[:, 1]])
    j = np.concatenate([ml[:, 1], ml[:, 0], cl[:, 1], cl[:, 0]])
    ml_c, cl_c = constraints.must_link_weight, constraints.cannot_link_weight
    v = np.concatenate([ml_c, ml_c, -cl_c, -cl_c]).astype(np.float64)
    return sparse.csr_matrix((v, (i, j)), shape=(n_samples, n_samples))


# --------------------------------------------------------------------------- propagation


#: LAPACK driver of :func:`laplacian_eigh`: divide and conquer (``syevd``). SciPy's default
#: (``syevr``, MRRR) gives the same eigenvalues to rounding but took 4.1x the CPU on sick's
#: 1,947-point Laplacian and 1.2-1.4x on segmentation's 2,310 (one thread, 2026-11-30 AMD EPYC;
#: 2.3-4.5x on the Intel Xeon of the shipped rows), the slowest step of SRCP and E2CP there.
#: The propagated constraints do not depend on the basis chosen inside a repeated eigenvalue
#: (F = U g(Lambda) U^T Y U g(Lambda) U^T), so the two drivers give the same F to rounding.
EIGH_DRIVER = "evd"


def laplacian_eigh(L) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (clipped to [0, 2]) and orthonormal eigenvectors of the normalised Laplacian."""
    L = L.toarray() if sparse.issparse(L) else np.array(L, dtype=np.float64)
    lam, U = scipy.linalg.eigh(L, overwrite_a=True, check_finite=False, driver=EIGH_DRIVER)
    return np.clip(lam, 0.0, 2.0), U


def _rotate(U, Y) -> np.ndarray:
    """U^T Y U for sparse Y, touching only the rows of the p constrained points
    (O(p n^2) instead of a dense n^3 product)."""
    Y = Y.tocsr()
    idx = np.unique(Y.nonzero()[0])
    if idx.size == 0:
        return np.zeros((U.shape[1], U.shape[1]))
    Up = U[idx]
    Yp = Y[idx][:, idx].toarray()
    return Up.T @ (Yp @ Up)


def propagate_eig(lam, U, Y, *, mu: float) -> np.ndarray:
    """F solving (mu I + L) F + F (mu I + L) = 2 mu Y (eq. 5) from L = U diag(lam) U^T.

    In the eigenbasis the equation is diagonal: (a_i + a_j) G_ij = 2 mu (U^T Y U)_ij
    with a = mu + lam, so F = U G U^T; every a_i + a_j >= 2 mu > 0 (Proposition 1).
    """
    a = mu + lam
    G = _rotate(U, Y)
    G *= 2.0 * mu
    G /= a[:, None] + a[None, :]
    F = U @ G
    del G
    F = F @ U.T
    return _symmetrize(F)


def propagate_e2cp(lam, U, Y, *, alpha: float) -> np.ndarray:
    """Lu & Ip's exhaustive propagation F = (1 - alpha)^2 (I - alpha S)^{-1} Y (I - alpha S)^{-1}
    (vertical then horizontal label propagation), in the eigenbasis of L = I - S."""
    g = (1.0 - alpha) / (1.0 - alpha * (1.0 - lam))
    G = _rotate(U, Y)
    G *= g[:, None] * g[None, :]
    F = U @ G
    del G
    F = F @ U.T
    return _symmetrize(F)


def propagate_spreading(W, Y, *, mu: float, tol: float, max_iter: int):
    """Iterate eq. (7), F <- alpha/2 (S F + F S) + (1 - alpha) Y with alpha = 1/(1 + mu).

    F stays symmetric, so F S = (S F)^T and one sparse-dense product per step
    suffices. The map contracts with factor alpha; stop when max |F_t+1 - F_t| <= tol.
    Returns ``(F, n_iter, converged)``.
    """
    alpha = 1.0 / (1.0 + mu)
    L = normalized_laplacian(sparse.csr_matrix(W))
    S = (sparse.identity(L.shape[0], format="csr") - L).tocsr()
    Y0 = (1.0 - alpha) * Y.toarray()
    F = Y0.copy()
    for it in range(1, max_iter + 1):
        T = S @ F
        F_new = T + T.T
        F_new *= 0.5 * alpha
        F_new += Y0
        delta = np.max(np.abs(F_new - F)) if F.size else 0.0
        F = F_new
        if delta <= tol:
            return F, it, True
    return F, max_iter, False


def propagate_lyapunov(L, Y, *, mu: float) -> np.ndarray:
    """Reference route: ``scipy.linalg.solve_continuous_lyapunov`` (Bartels-Stewart) on eq. (5)."""
    L = L.toarray() if sparse.issparse(L) else np.asarray(L, dtype=np.float64)
    A = L + mu * np.eye(L.shape[0])
    return _symmetrize(scipy.linalg.solve_continuous_lyapunov(A, 2.0 * mu * Y.toarray()))


def _symmetrize(F):
    F += F.T
    F *= 0.5
    return F


def adjust_similarity(W, F) -> np.ndarray:
    """W* of eq. (9): 1 - (1 - F)(1 - W) where F >= 0, (1 + F) W where F < 0.

    Written as W + F * (1 - W) or W + F * W, so each branch costs one pass.
    F is clipped to [-1, 1] first: the paper treats F_ij as a confidence and the
    formula leaves [0, 1] beyond that range.
    """
    Wd = W.toarray() if sparse.issparse(W) else np.array(W, dtype=np.float64)
    Fc = np.clip(F, -1.0, 1.0)
    factor = np.where(Fc >= 0, 1.0 - Wd, Wd)
    factor *= Fc
    del Fc
    factor += Wd
    return factor


# --------------------------------------------------------------------------- clustering


#: Above this many points the family leaves the dense O(n^3) LAPACK routes: the k leading
#: eigenvectors come from LOBPCG and ``solver="auto"`` propagates by the low-rank routes of
#: :mod:`.lowrank`. Below it the embedding is LAPACK's.
DENSE_MAX_N = 2000

#: ``solver="auto"`` propagates by the low-rank routes above this many points already (or
#: above :data:`DENSE_MAX_N`, whichever is smaller): F agrees with the eigenbasis route to
#: about 1e-10 relative, and the full eigendecomposition it saves is the slowest step of a
#: fit at n = 2,000 (srcp 9.5 s CPU against 0.3 s for the low-rank route's propagation and W*).
#: Below it ``propagated_constraints_`` is the dense F, bit-for-bit the eigenbasis route's.
LOWRANK_MIN_N = 1000


def propagation_route(solver: str, Y, n_samples: int, max_share: float) -> str:
    """The propagation route ``solver="auto"`` takes: ``"lowrank"`` above
    min(:data:`LOWRANK_MIN_N`, :data:`DENSE_MAX_N`) points when at most ``max_share`` of them
    are constrained (the low-rank factors grow with the constrained points), else ``"eig"``;
    an explicit choice is kept."""
    if solver != "auto":
        return solver
    n_constrained = np.unique(Y.nonzero()[0]).size
    large = n_samples > min(LOWRANK_MIN_N, DENSE_MAX_N)
    return "lowrank" if large and n_constrained <= max_share * n_samples else "eig"


def _scaled_operator(W, d):
    """D^{-1/2} W D^{-1/2} as a LinearOperator on a dense W."""
    from scipy.sparse.linalg import LinearOperator

    dc = d[:, None]

    def matmat(X):
        X = np.asarray(X, dtype=np.float64).reshape(W.shape[0], -1)
        return (W @ (dc * X)) * dc

    return LinearOperator(W.shape, matvec=lambda x: matmat(x).ravel(), matmat=matmat, dtype=np.float64)


def spectral_clustering(
    W, n_clusters: int, *, n_init: int, rng: np.random.Generator, eigen_solver: str = "auto", graph=None
):
    """Normalised spectral clustering (Ng, Jordan & Weiss; von Luxburg 2007, section 5).

    The k leading eigenvectors of D^{-1/2} W D^{-1/2} (the k smallest of the
    normalised Laplacian), rows scaled to unit length, then k-means with
    ``n_init`` starts seeded from ``rng``. ``eigen_solver``: ``"dense"`` (LAPACK's
    subset driver on a dense copy), ``"lobpcg"`` (:func:`.lowrank.leading_eigenvectors`,
    a block method; a sparse W stays sparse, a dense W is neither copied nor changed) or ``"auto"``
    (LOBPCG above :data:`DENSE_MAX_N` points). ``graph``: the sparse k-NN graph a dense
    W was adjusted from; LOBPCG then starts from its leading eigenvectors
    (:func:`.lowrank.warm_start_block`). Returns ``(labels, embedding)``.
    """
    n = W.shape[0]
    if eigen_solver == "auto":
        eigen_solver = "lobpcg" if n > DENSE_MAX_N and n_clusters + 5 < n else "dense"
    if eigen_solver == "lobpcg":
        from .lowrank import leading_eigenvectors, warm_start_block

        if sparse.issparse(W):
            M = sparse.csr_matrix(W, dtype=np.float64)
        else:
            M = np.asarray(W, dtype=np.float64)
        deg = np.asarray(M.sum(axis=1, dtype=np.float64)).ravel()
        deg[deg == 0] = 1.0
        d = 1.0 / np.sqrt(deg)
        if sparse.issparse(M):
            M = (sparse.diags(d) @ M @ sparse.diags(d)).tocsr()
        else:
            # D^{-1/2} W D^{-1/2} X = d * (W (d * X)): neither a copy of W nor a change to it
            # (W is the estimator's affinity_matrix_)
            M = _scaled_operator(M, d)
        # D^{1/2} 1 is the leading eigenvector of a connected graph: a deterministic warm start
        X0 = None if graph is None or sparse.issparse(W) else warm_start_block(graph, n_clusters)
        V = leading_eigenvectors(M, n_clusters, v0=np.sqrt(deg), X0=X0)
    else:
        M = W.toarray() if sparse.issparse(W) else np.array(W, dtype=np.float64)
        deg = M.sum(axis=1)
        deg[deg == 0] = 1.0
        d = 1.0 / np.sqrt(deg)
        M *= d[:, None]
        M *= d[None, :]
        # The k leading eigenpairs only (LAPACK's subset driver), not all n.
        _, V = scipy.linalg.eigh(M, subset_by_index=[n - n_clusters, n - 1], overwrite_a=True, check_finite=False)
    norms = np.linalg.norm(V, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    V = V / norms
    seed = int(rng.integers(2**31 - 1))
    km = KMeans(n_clusters, n_init=n_init, random_state=seed).fit(V)
    return km.labels_.astype(np.intp), V


# --------------------------------------------------------------------------- estimator base


class SpectralBase(ConstrainedClusterer):
    """Parameters and steps shared by the family's estimators (not registered itself).

    Subclasses add their own parameters and implement :meth:`_affinity`, which
    turns the sparse graph and the constraints into the matrix to cluster.

    Every fit checks the graph first (:func:`check_graph`: a
    :class:`DegenerateGraphWarning` when most weights underflow or the graph
    splits into more components than ``n_clusters``; the numbers are kept in
    ``graph_diagnostics_``) and turns supervision given as labels into the pairs
    they imply (:func:`pairs_with_labels`).
    """

    _parameter_constraints = {
        "n_clusters": [Interval(numbers.Integral, 1, None)],
        "n_neighbors": [Interval(numbers.Integral, 1, None)],
        "sigma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "symmetrize": [Options("mean", "max")],
        "n_init": [Interval(numbers.Integral, 1, None)],
        "random_state": ["random_state"],
    }

    def _graph(self, X):
        # Tiny inputs (fewer than n_neighbors + 1 points) use every other point.
        k = min(self.n_neighbors, X.shape[0] - 1)
        return gaussian_knn_graph(X, k, sigma=self.sigma, symmetrize=self.symmetrize)

    def _affinity(self, W, constraints):
        raise NotImplementedError

    def fit(self, X, y=None, *, constraints=None):
        X, cons = self._validate_fit(X, constraints)
        cons = pairs_with_labels(cons)
        rng = check_random_state(self.random_state)
        W = self._graph(X)
        self.graph_diagnostics_ = check_graph(W, self.n_clusters, sigma=self.sigma, method=type(self).__name__)
        A = self._affinity(W, cons)
        self.labels_, self.embedding_ = spectral_clustering(A, self.n_clusters, n_init=self.n_init, rng=rng, graph=W)
        self.affinity_matrix_ = A
        return self


def warn_not_converged(n_iter: int, tol: float) -> None:
    warnings.warn(
        f"constraint spreading (eq. 7) did not reach tol={tol:g} in {n_iter} iterations; "
        f"raise max_iter or use solver='eig'",
        ConvergenceWarning,
        stacklevel=3,
    )
