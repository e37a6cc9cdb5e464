"""``e2cp``: exhaustive and efficient constraint propagation (Lu & Ip 2010)."""

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
    propagate_e2cp,
)


class E2CP(SpectralBase):
    """Propagate constraints vertically then horizontally by label propagation,
    adjust the similarities (SRCP's eq. 9), then normalised spectral clustering.

    Parameters
    ----------
    n_clusters : int, default=2
    alpha : float in (0, 1), default=0.8
        Propagation weight of Zhou et al.'s spreading, used in both directions.
        Lu & Ip's value is not in our papers; 0.8 is a common choice
        (the ``spectralcluster`` package defaults to 0.6).
    n_neighbors : int, default=20
    sigma : float > 0 or None, default=1.0
    symmetrize : {"mean", "max"}, default="mean"
    solver : {"auto", "eig", "lowrank"}, default="auto"
        ``"eig"``: the closed form in the eigenbasis of L (O(n^3)); ``"lowrank"``:
        F = X ((1 - alpha)^2 Yp) X^T with X = (I - alpha S)^{-1} B from sparse
        conjugate-gradient solves, one per constrained point (exact up to the solves'
        1e-12 tolerance; W* formed from the factors). ``"auto"``: ``"eig"`` up to 1,000
        points, ``"lowrank"`` above when at most n / 4 points are constrained.
    n_init : int, default=10
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    propagated_constraints_ : ndarray of shape (n_samples, n_samples) or None
        F* = (1 - alpha)^2 (I - alpha S)^{-1} Y (I - alpha S)^{-1}; None for
        ``solver="lowrank"`` (see ``propagated_factors_``).
    propagated_factors_ : tuple (Z, C) or None
        ``solver="lowrank"`` only: F* = Z C Z^T.
    solver_ : str
    affinity_matrix_ : ndarray of shape (n_samples, n_samples)
    embedding_ : ndarray of shape (n_samples, n_clusters)

    Notes
    -----
    Same graph, Y, similarity adjustment and spectral clustering as ``srcp``;
    only the propagation differs. The closed form is evaluated in the
    eigenbasis of L = I - S (one symmetric eigendecomposition) instead of the
    dense inverse of the reference implementations.

    References
    ----------
    Z. Lu and H. H. S. Ip, "Constrained spectral clustering via exhaustive and
    efficient constraint propagation", ECCV 2010.

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import Constraints
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 0.3, (20, 2)), rng.normal(3, 0.3, (20, 2))]
    >>> labels = E2CP(n_clusters=2, n_neighbors=5, random_state=0).fit_predict(
    ...     X, constraints=Constraints([[0, 1]], [[0, 25]], n_samples=40))
    >>> bool((labels[:20] == labels[0]).all() and (labels[20:] != labels[0]).all())
    True
    """

    _parameter_constraints = {
        **SpectralBase._parameter_constraints,
        "alpha": [Interval(numbers.Real, 0, 1, closed="neither")],
        "solver": [Options("auto", "eig", "lowrank")],
    }

    def __init__(
        self, n_clusters=2, *, alpha=0.8, n_neighbors=20, sigma=1.0, symmetrize="mean", solver="auto", n_init=10,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.alpha = alpha
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.symmetrize = symmetrize
        self.solver = solver
        self.n_init = n_init
        self.random_state = random_state

    def _affinity(self, W, constraints):
        Y = constraint_matrix(constraints, W.shape[0])
        self.propagated_factors_ = None
        solver = core.propagation_route(self.solver, Y, W.shape[0], max_share=1 / 4)
        self.solver_ = solver
        if solver == "lowrank":
            S = lowrank.normalized_adjacency(W)
            Z, C = lowrank.propagate_e2cp_lowrank(S, Y, alpha=float(self.alpha))
            self.propagated_factors_ = (Z, C)
            self.propagated_constraints_ = None
            return lowrank.adjust_similarity_lowrank(W, Z, C)
        lam, U = laplacian_eigh(normalized_laplacian(W))
        F = propagate_e2cp(lam, U, Y, alpha=float(self.alpha))
        self.propagated_constraints_ = F
        return adjust_similarity(W, F)
