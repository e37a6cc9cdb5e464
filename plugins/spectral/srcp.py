"""``srcp``: symmetric graph-regularised constraint propagation (Fu et al. 2011, Algorithm 1)."""

from __future__ import annotations

import numbers


from ccbench.base import Interval, Options

from . import core, lowrank
from .core import (
    SpectralBase,
    adjust_similarity,
    constraint_matrix,
    laplacian_eigh,
    normalized_laplacian,
    propagate_eig,
    propagate_lyapunov,
    propagate_spreading,
    warn_not_converged,
)


class SRCP(SpectralBase):
    """Propagate must-/cannot-links over a k-NN graph (a Lyapunov equation), adjust
    the similarities with the result, then normalised spectral clustering.

    Parameters
    ----------
    n_clusters : int, default=2
        k, the number of clusters of the final spectral clustering.
    mu : float > 0, default=0.2
        Regularisation weight of eq. (3) (the paper's value).
    n_neighbors : int, default=20
        k of the k-NN graph (the paper's value); capped at n - 1.
    sigma : float > 0 or None, default=1.0
        Gaussian width, w_ij = exp(-||x_i - x_j||^2 / (2 sigma^2)) (the paper's
        value for UCI data, so the data's scale matters); ``None`` uses the mean
        distance to the k-th neighbour.
    symmetrize : {"mean", "max"}, default="mean"
        W = (W + W^T) / 2 (the paper) or the elementwise maximum.
    solver : {"auto", "eig", "lowrank", "spreading", "lyapunov"}, default="auto"
        How eq. (5) is solved: ``"eig"`` diagonalises mu I + L once (closed form
        elementwise in its eigenbasis, O(n^3)); ``"lowrank"`` runs low-rank ADI on the
        constrained columns of Y, all its shifted solves from one sparse multi-shift
        conjugate-gradient run
        (:mod:`.lowrank`; F agrees with ``"eig"`` to about 1e-10 relative, and W* is formed
        from F's factors, so F is never an n x n array); ``"spreading"`` iterates eq. (7)
        with alpha = 1 / (1 + mu) until ``tol``; ``"lyapunov"`` calls
        ``scipy.linalg.solve_continuous_lyapunov`` (the reference, about 8x slower than
        ``"eig"``). ``"auto"`` is ``"eig"`` up to 1,000 points, and ``"lowrank"`` above
        when at most n / 16 points are constrained (the ADI factor has J columns per
        constrained point, J = 9 for mu = 0.2).
    tol : float, default=1e-10
        ``"spreading"`` only: stop when max |F(t+1) - F(t)| <= tol.
    max_iter : int, default=1000
        ``"spreading"`` only.
    n_init : int, default=10
        k-means starts on the spectral embedding.
    random_state : int, Generator or None, default=None
        Seeds k-means.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    propagated_constraints_ : ndarray of shape (n_samples, n_samples) or None
        F, the solution of eq. (5) (symmetric; 0 without constraints); None for
        ``solver="lowrank"``, which keeps F as ``propagated_factors_``.
    propagated_factors_ : tuple (Z, C) or None
        ``solver="lowrank"`` only: F = Z C Z^T (Z: n x J p for p constrained points).
    solver_ : str
        The solver used (``"auto"`` resolved).
    affinity_matrix_ : ndarray of shape (n_samples, n_samples)
        W*, the similarities adjusted by eq. (9), in [0, 1].
    embedding_ : ndarray of shape (n_samples, n_clusters)
        Row-normalised spectral embedding clustered by k-means.
    n_iter_ : int
        Iterations of eq. (7) for ``solver="spreading"``; 1 for the direct solvers.
    converged_ : bool
        Whether the spreading reached ``tol`` (always True for the direct solvers).

    Notes
    -----
    Eq. (5), (mu I + L) F + F (mu I + L) = 2 mu Y with Y of eq. (2), is the
    stationarity condition (4) of objective (3). With L = U diag(lambda) U^T it
    becomes (a_i + a_j) G_ij = 2 mu (U^T Y U)_ij, a = mu + lambda, F = U G U^T:
    one symmetric eigendecomposition and three matrix products, O(n^3) but far
    cheaper than the n^2 x n^2 Kronecker system of eq. (6) or a general
    Lyapunov solver. Eq. (8) shows the spreading iteration (7) has the same
    fixed point. A constraint's confidence (``Constraints.*_weight``) scales
    its entry of Y. F is clipped to [-1, 1] before eq. (9).

    References
    ----------
    Z. Fu, Z. Lu, H. H. S. Ip, Y. Peng and H. Lu, "Symmetric graph regularized
    constraint propagation", AAAI 2011, eqs. (2)-(9), Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import Constraints
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 0.3, (20, 2)), rng.normal(3, 0.3, (20, 2))]
    >>> cons = Constraints([[0, 1]], [[0, 25]], n_samples=40)
    >>> labels = SRCP(n_clusters=2, n_neighbors=5, random_state=0).fit_predict(X, constraints=cons)
    >>> bool((labels[:20] == labels[0]).all() and (labels[20:] != labels[0]).all())
    True
    """

    _parameter_constraints = {
        **SpectralBase._parameter_constraints,
        "mu": [Interval(numbers.Real, 0, None, closed="neither")],
        "solver": [Options("auto", "eig", "lowrank", "spreading", "lyapunov")],
        "tol": [Interval(numbers.Real, 0, None)],
        "max_iter": [Interval(numbers.Integral, 1, None)],
    }

    def __init__(
        self,
        n_clusters=2,
        *,
        mu=0.2,
        n_neighbors=20,
        sigma=1.0,
        symmetrize="mean",
        solver="auto",
        tol=1e-10,
        max_iter=1000,
        n_init=10,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.mu = mu
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.symmetrize = symmetrize
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.n_init = n_init
        self.random_state = random_state

    def _affinity(self, W, constraints):
        Y = constraint_matrix(constraints, W.shape[0])
        mu = float(self.mu)
        self.n_iter_, self.converged_ = 1, True
        self.propagated_factors_ = None
        solver = core.propagation_route(self.solver, Y, W.shape[0], max_share=1 / 16)
        self.solver_ = solver
        if solver == "lowrank":
            S = lowrank.normalized_adjacency(W)
            Z, C = lowrank.propagate_srcp_lowrank(S, Y, mu=mu)
            self.propagated_factors_ = (Z, C)
            self.propagated_constraints_ = None
            return lowrank.adjust_similarity_lowrank(W, Z, C)
        if solver == "eig":
            lam, U = laplacian_eigh(normalized_laplacian(W))
            F = propagate_eig(lam, U, Y, mu=mu)
        elif solver == "lyapunov":
            F = propagate_lyapunov(normalized_laplacian(W), Y, mu=mu)
        else:
            F, self.n_iter_, self.converged_ = propagate_spreading(
                W, Y, mu=mu, tol=float(self.tol), max_iter=int(self.max_iter)
            )
            if not self.converged_:
                warn_not_converged(self.n_iter_, self.tol)
        self.propagated_constraints_ = F
        return adjust_similarity(W, F)
