"""``cop_kmeans_xing`` / ``pck_means_xing``: the NNC paper's baselines "CopK Xing" and
"PCK Xing" (Yang et al. 2015, section 5.1): constrained k-means in Xing et al.'s learned
diagonal metric.

The metric is learned here (:mod:`.metric_learning`); the clustering is delegated through
the registry to the k-means family's ``cop_kmeans`` / ``pck_means`` (no import of that
family), run on X rescaled by sqrt(a) so that its Euclidean distance is the learned one.
These two names extend DESIGN.md's registry list: they are method + metric pairs that the
paper reports as baselines, not variants of ``nnc``.
"""

from __future__ import annotations

import numbers

from ccbench.base import ConstrainedClusterer, Interval, Options, check_random_state
from ccbench.registry import make_method

from .core import fit_metric
from .metric_learning import METRICS


class _MetricKMeans(ConstrainedClusterer):
    _delegate = ""

    def _delegate_params(self) -> dict:
        return dict(init=self.init, n_init=self.n_init, max_iter=self.max_iter)

    def fit(self, X, y=None, *, constraints=None):
        X, cons = self._validate_fit(X, constraints)
        Xt = fit_metric(self, X, cons)
        seed = int(check_random_state(self.random_state).integers(2**31 - 1))
        inner = make_method(self._delegate, n_clusters=self.n_clusters, random_state=seed, **self._delegate_params())
        inner.fit(Xt, constraints=cons)
        self.labels_ = inner.labels_
        self.n_iter_ = inner.n_iter_
        # both steps must have converged: the metric (fit_metric set converged_) and the delegate
        self.converged_ = bool(self.converged_ and inner.converged_)
        self.estimator_ = inner
        return self


_COMMON = {
    "n_clusters": [Interval(numbers.Integral, 1, None)],
    "metric": [Options(*METRICS)],
    "init": [Options("supervision", "k-means++", "random")],
    "n_init": [Interval(numbers.Integral, 1, None)],
    "max_iter": [Interval(numbers.Integral, 1, None)],
    "random_state": ["random_state"],
}

_SHARED_DOC = """
    Parameters
    ----------
    n_clusters : int, default=2
    metric : {"xing_diag", "lp_diag", "sdp_full", "euclidean"}, default="xing_diag"
        Metric learned from the must-link / cannot-link pairs (labeled subsets give all
        their pairs, as section 5.2: ML within S_i, CL across).
    init : {"supervision", "k-means++", "random"}, default="supervision"
        ``"supervision"``: the centroid c_i of each labeled subset S_i seeds cluster i
        (section 5.2); see the delegate's documentation.
    n_init : int, default=1
        Restarts of the delegate (one: the supervised seeding is deterministic).
    max_iter : int, default=100
        The paper stops after 100 repetitions (section 5.2).
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_iter_ : int
    converged_ : bool
        The metric program solved to its tolerance and the delegate converged.
    estimator_ : the fitted delegate (``cluster_centers_`` live there, in the rescaled space)
    metric_, metric_weights_, metric_status_, metric_time_
        As in ``fpc``.
"""


class COPKMeansXing(_MetricKMeans):
    __doc__ = (
        """COP-k-means in Xing et al.'s diagonal metric ("CopK Xing", Yang et al. 2015).

    Must-link chunklets (here the labeled subsets) move as one unit through their
    centroid, so every must-link holds; cannot-links are hard.
"""
        + _SHARED_DOC
        + """
    References
    ----------
    K. Wagstaff et al., ICML 2001; E. P. Xing et al., NIPS 2002; J. Yang et al.,
    Comput. Intell. Neurosci. 2015, section 5.1-5.2.

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import Constraints
    >>> X = np.array([[0.0, 5.0], [0.1, 1.0], [0.2, 3.0], [3.0, 2.0], [3.1, 4.0], [3.2, 0.0]])
    >>> cons = Constraints.from_labels([0, 0, -1, 1, 1, -1])
    >>> COPKMeansXing(n_clusters=2, random_state=0).fit(X, constraints=cons).labels_
    array([0, 0, 0, 1, 1, 1])
    """
    )

    _delegate = "cop_kmeans"
    _parameter_constraints = _COMMON

    def __init__(self, n_clusters=2, *, metric="xing_diag", init="supervision", n_init=1, max_iter=100,
                 random_state=None):
        self.n_clusters = n_clusters
        self.metric = metric
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state


class PCKMeansXing(_MetricKMeans):
    __doc__ = (
        """PCK-means in Xing et al.'s diagonal metric ("PCK Xing", Yang et al. 2015).
"""
        + _SHARED_DOC.replace(
            "    random_state :",
            "    penalty : float, default=1.0\n"
            "        Cost of one violated constraint (Basu et al.'s w), passed to ``pck_means``.\n"
            "    random_state :",
        )
        + """
    References
    ----------
    S. Basu, A. Banerjee and R. J. Mooney, SDM 2004; E. P. Xing et al., NIPS 2002;
    J. Yang et al., Comput. Intell. Neurosci. 2015, section 5.1-5.2.

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import Constraints
    >>> X = np.array([[0.0, 5.0], [0.1, 1.0], [0.2, 3.0], [3.0, 2.0], [3.1, 4.0], [3.2, 0.0]])
    >>> cons = Constraints.from_labels([0, 0, -1, 1, 1, -1])
    >>> PCKMeansXing(n_clusters=2, random_state=0).fit(X, constraints=cons).labels_
    array([0, 0, 0, 1, 1, 1])
    """
    )

    _delegate = "pck_means"
    _parameter_constraints = {**_COMMON, "penalty": [Interval(numbers.Real, 0, None, allow_inf=True)]}

    def __init__(self, n_clusters=2, *, metric="xing_diag", penalty=1.0, init="supervision", n_init=1,
                 max_iter=100, random_state=None):
        self.n_clusters = n_clusters
        self.metric = metric
        self.penalty = penalty
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def _delegate_params(self) -> dict:
        return {**super()._delegate_params(), "penalty": self.penalty}
