"""``spectral_learning``: Kamvar, Klein & Manning's spectral learning (2003)."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .core import SpectralBase


class SpectralLearning(SpectralBase):
    """Set w_ij = 1 for must-links and w_ij = 0 for cannot-links in the k-NN graph,
    then normalised spectral clustering (the constraints are not propagated).

    Parameters
    ----------
    n_clusters : int, default=2
    n_neighbors : int, default=20
    sigma : float > 0 or None, default=1.0
    symmetrize : {"mean", "max"}, default="mean"
    n_init : int, default=10
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    affinity_matrix_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        The graph with the constrained entries overwritten.
    embedding_ : ndarray of shape (n_samples, n_clusters)

    Notes
    -----
    Kamvar et al. normalise the affinity additively, (W + d_max I - D) / d_max;
    here the family's normalised spectral clustering is used for every method,
    as the SRCP paper uses one graph and one clustering step for all (section
    "Experimental Setup"). Constraint confidences are ignored (the entries are 1 / 0).

    References
    ----------
    S. Kamvar, D. Klein and C. Manning, "Spectral learning", IJCAI 2003;
    as a baseline in Fu et al., AAAI 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import Constraints
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 0.3, (20, 2)), rng.normal(3, 0.3, (20, 2))]
    >>> labels = SpectralLearning(n_clusters=2, n_neighbors=5, random_state=0).fit_predict(
    ...     X, constraints=Constraints([[0, 1]], [[0, 25]], n_samples=40))
    >>> bool((labels[:20] == labels[0]).all() and (labels[20:] != labels[0]).all())
    True
    """

    def __init__(self, n_clusters=2, *, n_neighbors=20, sigma=1.0, symmetrize="mean", n_init=10, random_state=None):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.symmetrize = symmetrize
        self.n_init = n_init
        self.random_state = random_state

    def _affinity(self, W, constraints):
        n = W.shape[0]
        pairs = np.concatenate([constraints.must_link, constraints.cannot_link])
        if len(pairs) == 0:
            return W
        i = np.concatenate([pairs[:, 0], pairs[:, 1]])
        j = np.concatenate([pairs[:, 1], pairs[:, 0]])
        ones = np.ones(len(i))
        # Zero every constrained entry, then add 1 back on the must-links.
        mask = sparse.csr_matrix((ones, (i, j)), shape=(n, n))
        ml = constraints.must_link
        M = sparse.csr_matrix(
            (np.ones(2 * len(ml)), (np.r_[ml[:, 0], ml[:, 1]], np.r_[ml[:, 1], ml[:, 0]])), shape=(n, n)
        )
        return (W - W.multiply(mask) + M).tocsr()
