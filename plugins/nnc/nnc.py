"""``nnc``: nearest-neighbour clustering from labeled subsets (Yang et al. 2015, Algorithm 2)."""

from __future__ import annotations

import numbers
import warnings

from ccbench.base import ConstrainedClusterer, InfeasibleConstraintsError, Interval, Options, check_random_state, warn_if_distances_overflow

from .core import enforce_cannot_links, fit_metric, grow_and_assign, labeled_groups, supervision_sets, warn_fewer_clusters
from .metric_learning import METRICS


class NearestNeighbourClustering(ConstrainedClusterer):
    """NNC: every unlabeled point joins the labeled subset S_i minimising dMax(p, S_i).

    Parameters
    ----------
    n_clusters : int or None, default=2
        k. ``None``: the number of labeled subsets. With fewer subsets than k the
        missing clusters get farthest-point centres (FPC seeded by the subsets; with no
        supervision this is exactly ``fpc``); more subsets than k is infeasible.
    metric : {"euclidean", "lp_diag", "sdp_full", "xing_diag"}, default="euclidean"
        As in :class:`~ccbench_plugins.nnc.fpc.FarthestPointClustering`; ``lp_diag`` is
        the paper's "NNC Diag".
    random_state : int, Generator or None, default=None
        First centre when no supervision is given (otherwise unused).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster i holds S_i (subsets ordered by label value; labeled points always
        keep theirs), then farthest-point clusters.
    classes_ : ndarray
        The label of each labeled subset (cluster i <-> ``classes_[i]``); with must-link
        supervision, chunklet numbers.
    cluster_centers_indices_ : ndarray
        Farthest-point centres added beyond the labeled subsets (usually empty).
    metric_, metric_weights_, metric_status_, metric_time_, converged_
        As in ``fpc``.
    n_clusters_found_ : int
        Non-empty clusters; below ``n_clusters`` (with a ``FewerClustersWarning``) when
        every point left coincides with a representative.
    n_cannot_link_stuck_ : int
        Points whose cannot-links the greedy placement could not meet (with a warning).

    Notes
    -----
    The subsets S_i are the partial labels of the constraints (scheme
    ``labeled_subsets``); with bare pairs, the must-link chunklets. Cannot-links across
    subsets hold by construction; a cannot-link touching a point outside every subset
    (which Algorithm 2 does not read) is enforced by a greedy placement of the points it
    touches (:func:`~ccbench_plugins.nnc.core.enforce_cannot_links`), so every given
    must-link and cannot-link is hard, as the registry declares. Time
    O(n sum_i |S_i| d) + O(nk) (eq. 11), memory O(n) beyond X: distances to the labeled
    points are formed block by block. If RSD_opt > 1 the result is optimal for the
    semi-supervised max-RSD, max-min split and min-max diameter problems (Theorem 9);
    in general it is a 2-approximation of the semi-supervised min-max diameter
    (Theorem 10).

    References
    ----------
    J. Yang, Y. Xiao, J. Wang, Q. Ma and Y. Shen, "A fast clustering algorithm for data
    with a few labeled instances", Comput. Intell. Neurosci. 2015, 196098,
    Algorithm 2, eqs. 11 and 21-26, Theorems 9-10.

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import Constraints
    >>> X = np.array([[0.0], [0.2], [0.4], [5.0], [5.2], [5.4]])
    >>> cons = Constraints.from_labels([0, -1, -1, 1, -1, -1])
    >>> NearestNeighbourClustering(n_clusters=2).fit(X, constraints=cons).labels_
    array([0, 0, 0, 1, 1, 1])
    """

    _parameter_constraints = {
        "n_clusters": [Interval(numbers.Integral, 1, None), None],
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
        classes, members, starts = labeled_groups(supervision_sets(cons))
        k = len(classes) if self.n_clusters is None else self.n_clusters
        if k == 0:
            raise ValueError("n_clusters=None needs labeled subsets; pass labels / must-links or set n_clusters")
        if len(classes) > k:
            raise InfeasibleConstraintsError(
                f"{len(classes)} labeled subsets must lie in different clusters but "
                f"n_clusters={k}; raise n_clusters or merge subsets"
            )
        Xt = fit_metric(self, X, cons)
        labels, centres = grow_and_assign(
            Xt, k, members=members, starts=starts, rng=check_random_state(self.random_state)
        )
        labels, n_stuck = enforce_cannot_links(
            Xt, labels, cons.cannot_link, members=members, starts=starts, centres=centres
        )
        if n_stuck:
            warnings.warn(
                f"{n_stuck} point(s) could not be placed away from every cannot-linked partner by "
                f"the greedy assignment; they joined their nearest cluster and their cannot-links "
                f"are violated (counted in n_violated). Raise n_clusters or check the cannot-links",
                UserWarning,
                stacklevel=2,
            )
        self.labels_ = labels
        self.classes_ = classes
        self.cluster_centers_indices_ = centres
        self.n_cannot_link_stuck_ = n_stuck
        warn_fewer_clusters(self, k)
        return self
