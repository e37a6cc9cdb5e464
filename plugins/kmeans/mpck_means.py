"""``mpck_means``: PCK-means with per-cluster diagonal metric learning (Bilenko et al. 2004)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ccbench.base import ConstrainedClusterer, ConvergenceWarning, Interval, Options, check_random_state

from .core import INIT_OPTIONS, group_sums, icm_sweep, initial_centres, neighbours, transitive_closure, update_centres


def farthest_pairs(X, A, start, *, backend="numba"):
    """Per-feature squared differences (k, d) of a far-apart pair under each metric row
    of ``A``: the farthest-from-the-farthest heuristic from ``start`` (three sweeps,
    O(n d) each; it finds the diameter's end points on most data, and at least half
    the diameter always).

    ``backend="numba"`` runs each sweep as one compiled loop
    (:func:`ccbench_plugins.kmeans._kernels.farthest_index`: the same distances bit for bit, so
    the same pairs, tested); ``"numpy"`` builds the (n, d) scaled data and its differences per
    sweep, kept as its reference. The sweeps were 65 % of an MPCK-means fit on mfeat_fac
    (n = 2,000, d = 216, k = 10; cProfile)."""
    if backend not in ("numba", "numpy"):
        raise ValueError(f"backend must be 'numba' or 'numpy', got {backend!r}")
    if backend == "numba":
        from ._kernels import farthest_index

        X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty_like(A)
    for h, a in enumerate(A):  # k metrics, each three O(n d) sweeps
        scale = np.sqrt(a)
        if backend == "numba":
            p = start
            for _ in range(3):
                p, q = farthest_index(X, scale, p), p
        else:
            Z = X * scale
            p = start
            for _ in range(3):
                q = int(np.argmax(((Z - Z[p]) ** 2).sum(1)))
                p, q = q, p
        out[h] = (X[p] - X[q]) ** 2
    return out


def assignment_terms(X, centres, A, far2, ml, ml_d2, cl, cl_d2):
    """Eq. 5's terms as the assignment step prices them: the unary cost
    ``||x_i - mu_h||^2_{A_h} - log det A_h`` (n, k) and the ICM adjacencies
    (:func:`core.icm_sweep`) of the directed must-link edges (``P = Q``: half of
    ``w ||x_i - x_j||^2_A`` under each end's metric, so a split pair costs ``w f_M``)
    and cannot-link edges (``w f_C`` under the joint cluster's metric, clipped at 0)."""
    cost = (X * X) @ A.T - 2 * X @ (centres * A).T + (centres * centres * A).sum(1) - np.log(A).sum(1)
    P_ml = 0.5 * ml[2][:, None] * (ml_d2 @ A.T)  # ||x_i - x_j||^2 under each cluster's metric, per edge
    P_cl = cl[2][:, None] * np.maximum((A * far2).sum(1) - cl_d2 @ A.T, 0.0)
    return cost, (*ml[:2], P_ml, P_ml), (*cl[:2], P_cl, None)


class MPCKMeans(ConstrainedClusterer):
    """Metric pairwise-constrained k-means with a diagonal metric per cluster.

    Minimises Bilenko et al.'s objective (eq. 5),

    ``sum_i (||x_i - mu_li||^2_{A_li} - log det A_li)
    + sum_ML w f_M(x_i, x_j) [l_i != l_j] + sum_CL w f_C(x_i, x_j) [l_i == l_j]``

    with ``f_M = 1/2 ||x_i - x_j||^2_{A_li} + 1/2 ||x_i - x_j||^2_{A_lj}`` (a split
    pair costs more the farther apart its points are) and
    ``f_C = ||x'_li - x''_li||^2_{A_li} - ||x_i - x_j||^2_{A_li}`` (a joined
    cannot-link costs more the closer its points are; ``x', x''`` is the
    farthest pair of the data under ``A_li``). Assignment: a fresh greedy pass
    over the constrained points in a new random order each iteration, each
    point penalised only by neighbours already placed in this pass (Bilenko et
    al.; iterated conditional modes from the previous labels stalls: wine, 80
    pairs, ARI 0.62 against 0.91); update:
    cluster means and the closed-form diagonal metric (eq. 8 restricted to
    diagonals)

    ``a_hd = |X_h| / (sum_{i in h} (x_id - mu_hd)^2 + sum_ML-viol 1/2 w (x_id - x_jd)^2
    + sum_CL-viol w max((x'_d - x''_d)^2 - (x_id - x_jd)^2, 0))``

    (the clip at 0 keeps the denominator positive, as the reference package does).

    Parameters
    ----------
    n_clusters : int, default=2
    penalty : float, default=1.0
        ``w`` of every constraint (times the pair's weight).
    metric : {"cluster", "single"}, default="cluster"
        One diagonal metric per cluster (MPCK-means), or one shared by all
        clusters (Bilenko et al.'s "single metric" variant; the
        ``active-semi-supervised-clustering`` package's ``MPCKMeans`` is this one).
    init : {"supervision", "k-means++", "random"}, default="supervision"
        As PCK-means: the must-link neighbourhoods, with a weighted
        farthest-first traversal when there are more than ``n_clusters``
        (Bilenko et al.'s rule) in the first restart and its randomised form
        (k-means++ D^2 sampling over the neighbourhood centroids weighted by
        size and the other points weighted 1) in every
        later one, so ``n_init`` restarts explore (issue 38).
    n_init : int, default=1
    max_iter : int, default=100
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    metrics_ : ndarray of shape (n_clusters, n_features)
        Diagonal of each cluster's ``A_h``.
    objective_ : float
    n_iter_ : int
    converged_ : bool

    Notes
    -----
    The constraints are closed first, as PCK-means does (Basu et al.). The farthest pair under each metric comes from the farthest-from-the-farthest
    heuristic (:func:`farthest_pairs`, O(n d) instead of O(n^2 d)). The metric
    denominator is floored at ``1e-9`` times the feature's variance (plus a tiny
    absolute value for constant features).

    References
    ----------
    M. Bilenko, S. Basu and R. J. Mooney, "Integrating constraints and metric
    learning in semi-supervised clustering", ICML 2004 (eqs. 5-8).

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import Constraints, make_method
    >>> X = np.array([[0.0, 0.0], [0.1, 5.0], [3.0, 0.2], [3.1, 5.1]])
    >>> cons = Constraints(must_link=[[0, 1], [2, 3]], cannot_link=[[0, 2]], n_samples=4)
    >>> est = make_method("mpck_means", n_clusters=2, random_state=0).fit(X, constraints=cons)
    >>> est.labels_.tolist() in ([0, 0, 1, 1], [1, 1, 0, 0])
    True
    """

    _parameter_constraints = {
        "n_clusters": [Interval(numbers.Integral, 1, None)],
        "penalty": [Interval(numbers.Real, 0, None)],
        "metric": [Options("cluster", "single")],
        "init": [Options(*INIT_OPTIONS)],
        "n_init": [Interval(numbers.Integral, 1, None)],
        "max_iter": [Interval(numbers.Integral, 1, None)],
        "random_state": ["random_state"],
    }

    def __init__(
        self, n_clusters=2, *, penalty=1.0, metric="cluster", init="supervision", n_init=1, max_iter=100,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.penalty = penalty
        self.metric = metric
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y=None, *, constraints=None):
        X, cons = self._validate_fit(X, constraints)
        rng = check_random_state(self.random_state)
        cons = transitive_closure(cons)
        best = None
        for r in range(self.n_init):
            run = self._single(X, cons, initial_centres(X, cons, self.init, self.n_clusters, rng, restart=r), rng)
            if best is None or run[0] < best[0]:
                best = run
        self.objective_, self.labels_, self.cluster_centers_, self.metrics_, self.n_iter_, self.converged_ = best
        if not self.converged_:
            warnings.warn(
                f"MPCK-means did not converge in max_iter={self.max_iter} iterations",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def _single(self, X, cons, centres, rng):
        n, d = X.shape
        k, w = self.n_clusters, float(self.penalty)
        start = int(np.argmax(((X - X.mean(0)) ** 2).sum(1)))
        floor = 1e-9 * X.var(0) + 1e-12
        ml = neighbours(cons.must_link, n, w * cons.must_link_weight)
        cl = neighbours(cons.cannot_link, n, w * cons.cannot_link_weight)
        # squared per-feature differences of each directed edge's end points
        ml_d2 = (X[np.repeat(np.arange(n), np.diff(ml[0]))] - X[ml[1]]) ** 2
        cl_d2 = (X[np.repeat(np.arange(n), np.diff(cl[0]))] - X[cl[1]]) ** 2
        constrained = np.unique(np.concatenate([cons.must_link.ravel(), cons.cannot_link.ravel()]))
        A = np.ones((k, d))
        lab = np.full(n, -1, dtype=np.intp)
        converged = False
        for it in range(1, self.max_iter + 1):
            far2 = self._far2(X, A, start)
            cost, ml_adj, cl_adj = assignment_terms(X, centres, A, far2, ml, ml_d2, cl, cl_d2)
            new = np.argmin(cost, axis=1)
            new[constrained] = -1  # a fresh greedy pass (Basu et al.; ICM from the old labels stalls)
            new = icm_sweep(cost, new, rng.permutation(constrained), ml_adj, cl_adj)
            if np.array_equal(new, lab):
                converged = True
                break
            lab = new
            centres = update_centres(X, lab, centres)
            A = self._metric_update(X, lab, centres, A, ml, ml_d2, cl, cl_d2, far2, floor)
        # the objective of the state returned: after a max_iter stop the loop's last update
        # moved A, so the farthest pair found at the top of that iteration is stale
        far2 = self._far2(X, A, start)
        obj = self._objective(X, lab, centres, A, ml, ml_d2, cl, cl_d2, far2)
        return obj, lab, centres, A, it, converged

    def _far2(self, X, A, start):
        """Per-feature squared differences (k, d) of the farthest pair under each cluster's
        metric (one pair under the shared metric when ``metric="single"``)."""
        return np.broadcast_to(farthest_pairs(X, A if self.metric == "cluster" else A[:1], start), A.shape)

    def _metric_update(self, X, lab, centres, A, ml, ml_d2, cl, cl_d2, far2, floor):
        k = len(centres)
        n = len(X)
        src_ml = np.repeat(np.arange(n), np.diff(ml[0]))
        src_cl = np.repeat(np.arange(n), np.diff(cl[0]))
        den = group_sums(lab, (X - centres[lab]) ** 2, k)
        # each directed must-link edge i -> j adds half its weight to l_i (the j -> i twin adds to l_j)
        viol = lab[src_ml] != lab[ml[1]]
        if viol.any():
            den += group_sums(lab[src_ml[viol]], 0.5 * ml[2][viol, None] * ml_d2[viol], k)
        viol = lab[src_cl] == lab[cl[1]]
        if viol.any():
            # both directions of a joined pair are listed: half each
            h = lab[src_cl[viol]]
            den += group_sums(h, 0.5 * cl[2][viol, None] * np.maximum(far2[h] - cl_d2[viol], 0.0), k)
        counts = np.bincount(lab, minlength=k)[:, None]
        if self.metric == "single":
            return np.broadcast_to(n / np.maximum(den.sum(0), n * floor), A.shape).copy()
        # an empty cluster keeps its metric (dividing 0 by 0 there would only be masked afterwards)
        full = np.broadcast_to(counts, den.shape).astype(float)
        return np.divide(full, np.maximum(den, full * floor), out=A.copy(), where=full > 0)

    def _objective(self, X, lab, centres, A, ml, ml_d2, cl, cl_d2, far2):
        n = len(X)
        obj = float((((X - centres[lab]) ** 2) * A[lab]).sum() - np.log(A[lab]).sum())
        src_ml = np.repeat(np.arange(n), np.diff(ml[0]))
        src_cl = np.repeat(np.arange(n), np.diff(cl[0]))
        viol = lab[src_ml] != lab[ml[1]]
        # directed edges count each pair twice: 1/2 ||.||_{A_li} from one side, 1/2 ||.||_{A_lj} from the other
        obj += float((ml[2][viol] * 0.5 * (ml_d2[viol] * A[lab[src_ml[viol]]]).sum(1)).sum())
        viol = lab[src_cl] == lab[cl[1]]
        h = lab[src_cl[viol]]
        # f_C of eq. 5 is a difference of two A-norms; clipped at 0 as a whole, as the assignment
        # step prices it (the farthest pair is a heuristic's), never feature by feature
        obj += 0.5 * float((cl[2][viol] * np.maximum(((far2[h] - cl_d2[viol]) * A[h]).sum(1), 0.0)).sum())
        return obj
