"""``kmedoids``: k-medoids with the greedy swap of Okabe & Yamada (2010), Algorithm 1."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.spatial.distance import cdist

from ccbench.base import ConstrainedClusterer, ConvergenceWarning, Interval, Options, check_random_state, warn_if_distances_overflow

from .core import run_kmedoids


class KMedoids(ConstrainedClusterer):
    """k-medoids on squared Euclidean distances (unsupervised).

    Parameters
    ----------
    n_clusters : int, default=2
    method : {"swap", "fasterpam"}, default="swap"
        ``"swap"`` is Algorithm 1's greedy swap: from random medoids, repeatedly make the
        (point, medoid) swap that lowers ``D`` most until none lowers it (PAM's SWAP
        with best improvement). ``"fasterpam"`` is the ``kmedoids`` package's FasterPAM
        (first-improvement swaps; same objective and local optima kind, much faster).
    n_init : int, default=10
        Random initialisations; the lowest ``D`` wins. (The paper does not say; one
        random start makes results depend on luck more than on the similarity.)
    max_iter : int, default=300
        Swaps per initialisation.
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    medoid_indices_ : ndarray of shape (n_clusters,)
    inertia_ : float
        ``D`` of the returned medoids.
    n_iter_ : int
    converged_ : bool

    Notes
    -----
    Algorithm 1 measures ``D = sum_t sum_{p_i in C_t} (p_i - c_t)^2``: squared
    Euclidean distances, here; on a learned kernel ``K`` (``rn_sdp``) the same
    distance in feature space is ``k_ii + k_jj - 2 k_ij``.

    References
    ----------
    M. Okabe and S. Yamada, "Learning similarity matrix from constraints of relational
    neighbors", JACIII 14(4), 2010, Algorithm 1.
    E. Schubert and P. J. Rousseeuw, "Fast and eager k-medoids clustering", Information
    Systems 101, 2021 (FasterPAM).

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import make_method
    >>> X = np.r_[np.zeros((5, 2)), np.ones((5, 2)) * 5] + np.arange(10)[:, None] * 0.01
    >>> make_method("kmedoids", n_clusters=2, random_state=0).fit_predict(X).tolist()
    [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    """

    _parameter_constraints = {
        "n_clusters": [Interval(numbers.Integral, 1, None)],
        "method": [Options("swap", "fasterpam")],
        "n_init": [Interval(numbers.Integral, 1, None)],
        "max_iter": [Interval(numbers.Integral, 1, None)],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=2, *, method="swap", n_init=10, max_iter=300, random_state=None):
        self.n_clusters = n_clusters
        self.method = method
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y=None, *, constraints=None):
        X, _ = self._validate_fit(X, constraints)
        warn_if_distances_overflow(X, self)
        rng = check_random_state(self.random_state)
        dist = cdist(X, X, "sqeuclidean")
        medoids, labels, cost, n_iter, converged = run_kmedoids(
            dist, self.n_clusters, rng, method=self.method, n_init=self.n_init, max_iter=self.max_iter
        )
        self.medoid_indices_ = np.asarray(medoids)
        self.labels_ = np.asarray(labels, dtype=int)
        self.inertia_ = cost
        self.n_iter_ = int(n_iter)
        self.converged_ = bool(converged)
        if not converged:
            warnings.warn(f"k-medoids stopped after max_iter={self.max_iter} swaps", ConvergenceWarning, stacklevel=2)
        return self
