"""``fpc``: Gonzalez's farthest-point clustering (Yang et al. 2015, Algorithm 1)."""

from __future__ import annotations

import numbers

import numpy as np

from ccbench.base import ConstrainedClusterer, Interval, Options, check_random_state, warn_if_distances_overflow

from .core import fit_metric, grow_and_assign, warn_fewer_clusters
from .metric_learning import METRICS


class FarthestPointClustering(ConstrainedClusterer):
    """Farthest-point clustering, optionally in a metric learned from the supervision.

    Picks a random first centre, then repeatedly the point farthest from the centres
    chosen so far, until there are ``n_clusters``; every point joins its nearest centre.
    The supervision is used only to learn the metric.

    Parameters
    ----------
    n_clusters : int, default=2
        k.
    metric : {"euclidean", "lp_diag", "sdp_full", "xing_diag"}, default="euclidean"
        Distance: Euclidean, or a Mahalanobis metric learned from the must-link /
        cannot-link pairs (labeled subsets give all their pairs): ``lp_diag`` is the
        paper's diagonal LP (eqs. 21-26), ``sdp_full`` its full-matrix SDP (eqs. 16-20),
        ``xing_diag`` Xing et al.'s diagonal metric (eq. 12). See
        :mod:`ccbench_plugins.nnc.metric_learning` for the fallbacks on degenerate programs.
    random_state : int, Generator or None, default=None
        Draws the first centre.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    cluster_centers_indices_ : ndarray of shape (n_clusters,)
        The centres in the order chosen.
    metric_ : LearnedMetric
    metric_weights_ : ndarray of shape (d,) or (d, d), or None
        Learned z (eq. 26) or M (eq. 16); None for Euclidean.
    metric_status_ : str
        ``"euclidean"``, ``"optimal"``, or a fallback (with a warning): ``"unbounded_ray"``,
        ``"no_supervision"`` (Euclidean).
    metric_time_ : float
        Seconds spent learning the metric (the paper's Fig. 1 reports it apart).
    converged_ : bool
        Whether the metric program was solved to its tolerance (always True for
        ``euclidean`` and ``lp_diag``, whose LP is solved exactly or raises); False with a
        ``ConvergenceWarning`` when Xing's solver stopped short.
    n_clusters_found_ : int
        Non-empty clusters; fewer than ``n_clusters`` (with a ``FewerClustersWarning``)
        when every point left coincides with a centre (duplicated points).

    Notes
    -----
    O(n k d) time and O(n) memory beyond X (a nearest-centre table, section 3.1).
    If RSD_opt(X) > 1 the result is the optimal max-RSD, max-min-split and min-max-diameter
    partition (Theorem 7); in general it is a 2-approximation of the min-max diameter
    (Theorem 8, Gonzalez 1985).

    References
    ----------
    T. F. Gonzalez, Theor. Comput. Sci. 38 (1985). J. Yang, Y. Xiao, J. Wang, Q. Ma and
    Y. Shen, Comput. Intell. Neurosci. 2015, 196098, Algorithm 1, Theorem 7.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.r_[np.zeros((3, 2)), np.full((3, 2), 10.0)] + np.arange(6)[:, None] * 0.1
    >>> FarthestPointClustering(n_clusters=2, random_state=0).fit(X).labels_
    array([1, 1, 1, 0, 0, 0])
    """

    _parameter_constraints = {
        "n_clusters": [Interval(numbers.Integral, 1, None)],
        "metric": [Options(*METRICS)],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=2, *, metric="euclidean", random_state=None):
        self.n_clusters = n_clusters
        self.metric = metric
        self.random_state = random_state

    def fit(self, X, y=None, *, constraints=None):
        X, cons = self._validate_fit(X, constraints)
        warn_if_distances_overflow(X, self)
        Xt = fit_metric(self, X, cons)
        empty = np.empty(0, dtype=np.intp)
        labels, centres = grow_and_assign(
            Xt, self.n_clusters, members=empty, starts=empty, rng=check_random_state(self.random_state)
        )
        self.labels_ = labels
        self.cluster_centers_indices_ = centres
        warn_fewer_clusters(self, self.n_clusters)
        return self
