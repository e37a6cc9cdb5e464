"""``ncuts``: unconstrained normalised spectral clustering on the family's k-NN graph."""

from __future__ import annotations

from .core import SpectralBase


class NCuts(SpectralBase):
    """Normalised cuts / normalised spectral clustering of the k-NN Gaussian graph;
    constraints are ignored (the SRCP paper's unconstrained baseline).

    Parameters
    ----------
    n_clusters : int, default=2
    n_neighbors : int, default=20
        k of the k-NN graph, shared with ``srcp`` (the SRCP paper's fair-comparison rule).
    sigma : float > 0 or None, default=1.0
    symmetrize : {"mean", "max"}, default="mean"
    n_init : int, default=10
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    affinity_matrix_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        The k-NN graph W.
    embedding_ : ndarray of shape (n_samples, n_clusters)

    Notes
    -----
    The relaxation of the normalised cut (Shi & Malik) solved as in Ng, Jordan
    & Weiss: the k leading eigenvectors of D^{-1/2} W D^{-1/2}, rows
    normalised, k-means. ``srcp`` with no constraints gives the same labels.

    References
    ----------
    J. Shi and J. Malik, IEEE TPAMI 22(8) (2000); U. von Luxburg, Statistics and
    Computing 17(4) (2007); as the baseline of Fu et al., AAAI 2011.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 0.3, (20, 2)), rng.normal(3, 0.3, (20, 2))]
    >>> labels = NCuts(n_clusters=2, n_neighbors=5, random_state=0).fit_predict(X)
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
        return W
