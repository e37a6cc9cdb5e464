"""``pck_means``: k-means with a penalty per violated constraint (Basu et al. 2004)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ccbench.base import ConstrainedClusterer, ConvergenceWarning, Interval, Options, check_random_state

from ccbench.constraints import Constraints

from .core import (
    COLOUR_BUDGET,
    INIT_OPTIONS,
    Units,
    colour_units,
    icm_sweep,
    initial_centres,
    neighbours,
    sq_dists,
    transitive_closure,
    update_centres,
)


def pair_penalties(cons, n, k, penalty):
    """ICM adjacencies (see :func:`core.icm_sweep`) with weight ``penalty * pair weight``."""
    out = []
    for pairs, conf in ((cons.must_link, cons.must_link_weight), (cons.cannot_link, cons.cannot_link_weight)):
        w = np.where(conf > 0, penalty * np.where(conf > 0, conf, 1.0), 0.0)
        indptr, nbr, we = neighbours(pairs, n, w)
        P = np.repeat(we[:, None], k, axis=1)
        out.append((indptr, nbr, P, np.zeros_like(P)))
    return out


def violation_cost(cons, lab, penalty):
    """Sum of ``penalty * pair weight`` over violated constraints (0 when none)."""
    total = 0.0
    for pairs, conf, same in (
        (cons.must_link, cons.must_link_weight, False),
        (cons.cannot_link, cons.cannot_link_weight, True),
    ):
        viol = (lab[pairs[:, 0]] == lab[pairs[:, 1]]) == same
        viol &= conf > 0
        if viol.any():
            total += penalty * conf[viol].sum()
    return total


class PCKMeans(ConstrainedClusterer):
    """Pairwise-constrained k-means: minimises eq. (2) of Basu et al. (2004),

    ``1/2 sum_i ||x_i - mu_{l_i}||^2 + sum_ML w [l_i != l_j] + sum_CL w [l_i == l_j]``

    with ``w = penalty * pair weight`` per constraint. The assignment step is
    iterated conditional modes: points with constraints are visited in a random
    order and each takes the cluster of least distance-plus-penalty given its
    neighbours' current labels; the others take their nearest centre.

    Parameters
    ----------
    n_clusters : int, default=2
    penalty : float, default=1.0
        Cost ``w`` of one violated constraint. ``inf``: hard; when the ICM pass
        leaves a cannot-link broken, the colouring search
        (:func:`core.colour_units`) looks for labels meeting them all, and what
        it cannot meet is counted (``n_violated_``) and warned about.
    init : {"supervision", "k-means++", "random"}, default="supervision"
        ``"supervision"`` seeds the centres from the labeled subsets or the
        must-link neighbourhoods: all of them when there are at most
        ``n_clusters`` (then a point cannot-linked to every one, then
        k-means++; Basu et al., section 3.2, draw the rest at random); with
        more, the largest and then a weighted farthest-first traversal, which
        is MPCK-means' rule (Bilenko et al. 2004), not Basu et al.'s (their
        PCKMeans takes the ``n_clusters`` largest). That rule is the first
        restart's; with more neighbourhoods than ``n_clusters``, every later
        restart draws its seeds by k-means++ D^2 sampling over the units
        (each neighbourhood at its centroid weighted by its size, every other
        point weighted 1: the randomised form of the traversal, which can also
        seed a cluster no neighbourhood covers), so restarts explore (issue 38: before, ``n_init`` restarts started from
        the same centres). With at most ``n_clusters`` neighbourhoods all are
        used in every restart (Basu et al., section 3.2), and restarts differ
        in the k-means++ fill and in ICM's visiting order only.
    n_init : int, default=1
        Restarts; the lowest objective (eq. 2, over the closed constraint set)
        wins.
    max_iter : int, default=300
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    objective_ : float
        Eq. (2) at the kept solution.
    n_iter_ : int
    converged_ : bool
    n_violated_ : int
        Given constraints the labels break (with ``penalty=inf`` a warning
        says so when it is not 0).

    Notes
    -----
    As in Basu et al.'s algorithm, the constraints are first closed: every pair
    inside a must-link chunklet becomes a must-link and every pair between two
    cannot-linked chunklets a cannot-link (:func:`core.transitive_closure`; the
    objective counts the closed set). With ``penalty=inf`` the must-link chunklets cannot split, so they are
    contracted to weighted points first (the w -> inf limit); infinite penalties
    are compared before finite costs in the assignment (fewest hard violations
    first), so the greedy pass escapes states that violate a hard pair.
    The penalty is on the data's squared-distance scale: standardise the data or
    scale ``penalty`` with it.

    References
    ----------
    S. Basu, A. Banerjee and R. J. Mooney, "Active semi-supervision for pairwise
    constrained clustering", SDM 2004 (eq. 2, Algorithm PCKMeans).

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import Constraints, make_method
    >>> X = np.array([[0.0], [0.2], [4.0], [4.2]])
    >>> cons = Constraints(must_link=[[1, 2]], n_samples=4)
    >>> est = make_method("pck_means", n_clusters=2, penalty=np.inf, random_state=0)
    >>> labels = est.fit_predict(X, constraints=cons)
    >>> bool(labels[1] == labels[2])
    True
    """

    _parameter_constraints = {
        "n_clusters": [Interval(numbers.Integral, 1, None)],
        "penalty": [Interval(numbers.Real, 0, None, allow_inf=True)],
        "init": [Options(*INIT_OPTIONS)],
        "n_init": [Interval(numbers.Integral, 1, None)],
        "max_iter": [Interval(numbers.Integral, 1, None)],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=2, *, penalty=1.0, init="supervision", n_init=1, max_iter=300, random_state=None):
        self.n_clusters = n_clusters
        self.penalty = penalty
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y=None, *, constraints=None):
        X, cons = self._validate_fit(X, constraints)
        constraints_given = cons
        rng = check_random_state(self.random_state)
        k, penalty = self.n_clusters, float(self.penalty)
        cons = transitive_closure(cons)
        if np.isinf(penalty) and cons.n_must_link:
            # w = inf on must-links: a chunklet never splits, so it moves as one weighted point
            units = Units.build(X, cons)
            pts, size, unit_of = units.mean, units.size, units.unit_of
            pairs = Constraints(cannot_link=units.cannot, n_samples=units.n_units)
        else:
            pts, size, unit_of, pairs = X, np.ones(len(X)), np.arange(len(X)), cons
        ml, cl = pair_penalties(pairs, len(pts), k, penalty)
        constrained = np.unique(np.concatenate([pairs.must_link.ravel(), pairs.cannot_link.ravel()]))
        # w = inf: the cannot-links left between units are hard; ICM can strand a unit among them
        hard = pairs.cannot_link[pairs.cannot_link_weight > 0] if np.isinf(penalty) else None
        best = None
        for r in range(self.n_init):
            centres = initial_centres(X, cons, self.init, k, rng, restart=r)
            lab, centres, n_iter, converged = _pck_single(
                pts, size, centres, ml, cl, constrained, rng, max_iter=self.max_iter, hard=hard
            )
            lab = lab[unit_of]
            obj = 0.5 * float(((X - centres[lab]) ** 2).sum()) + violation_cost(cons, lab, penalty)
            if best is None or obj < best[0]:
                best = (obj, lab, centres, n_iter, converged)
        self.objective_, self.labels_, self.cluster_centers_, self.n_iter_, self.converged_ = best
        self.n_violated_ = int(sum(constraints_given.violations(self.labels_)))
        if np.isinf(penalty) and self.n_violated_:
            warnings.warn(
                f"PCK-means with penalty=inf leaves {self.n_violated_} of "
                f"{constraints_given.n_must_link + constraints_given.n_cannot_link} constraints unmet "
                f"(no labelling found that meets them all: contradictory pairs, too few clusters, or "
                f"the colouring search's budget); use a hard method (cop_kmeans) to be told why",
                UserWarning,
                stacklevel=2,
            )
        if not self.converged_:
            warnings.warn(
                f"PCK-means did not converge in max_iter={self.max_iter} iterations",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self


def _pck_single(pts, size, centres, ml, cl, constrained, rng, *, max_iter, hard=None):
    """ICM assignment / weighted mean update until the labels repeat.

    ``hard``: cannot-links of infinite penalty (``penalty=inf``). When ICM leaves
    one broken, :func:`core.colour_units` searches for labels meeting them all
    (cheapest first); ICM from such labels keeps them (it compares hard
    violations first), so the search runs at most once per run in practice.
    """
    lab = np.full(len(pts), -1, dtype=np.intp)
    for it in range(1, max_iter + 1):
        cost = 0.5 * size[:, None] * sq_dists(pts, centres)
        new = np.argmin(cost, axis=1)
        new[constrained] = lab[constrained]  # ICM from the previous labels (-1 on the first pass)
        new = icm_sweep(cost, new, rng.permutation(constrained), ml, cl)
        if hard is not None and len(hard) and np.any(new[hard[:, 0]] == new[hard[:, 1]]):
            found, _ = colour_units(cost, hard, budget=COLOUR_BUDGET)
            if found is not None:
                new = found
        if np.array_equal(new, lab):
            return lab, centres, it, True
        lab = new
        centres = update_centres(pts, lab, centres, size)
    return lab, centres, max_iter, False
