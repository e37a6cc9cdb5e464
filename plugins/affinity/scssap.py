"""``scssap`` and ``scssap_ml``: soft-constraint semi-supervised affinity propagation (Arzeno & Vikalo 2015).

``scssap`` is Algorithm 1 (eqs. 9-25) on the shared message core
(:mod:`ccbench_plugins.affinity.core`); ``scssap_ml`` is Algorithm 2, alternating
SCSSAP with closed-form diagonal metric updates (eqs. 28-33).
"""

from __future__ import annotations

import numbers

import numpy as np

from ccbench.base import ConstrainedClusterer, Interval, Options, check_random_state
from ccbench.similarity import preference_bracket

from .core import (
    AP_PARAMETER_CONSTRAINTS,
    N_CLUSTERS_CONSTRAINTS,
    PreferenceSearchMixin,
    affinity_propagation,
    ap_similarity,
    equivalent_hard_penalty,
    pair_factors,
    set_preference,
)

_PENALTY = [None, Interval(numbers.Real, 0, None, allow_inf=True)]

SCSSAP_PARAMETER_CONSTRAINTS = {
    **AP_PARAMETER_CONSTRAINTS,
    "penalty": _PENALTY,
    "penalty_must": _PENALTY,
    "penalty_cannot": _PENALTY,
    "confidence": [None, Interval(numbers.Real, 0, 1)],
}


def resolve_penalties(penalty=None, penalty_must=None, penalty_cannot=None, confidence=None):
    """(q_m, q_c) from the estimator's penalty settings.

    Precedence: ``penalty_must`` / ``penalty_cannot`` override the shared value
    for their kind; the shared value is ``penalty``, else ``-log(confidence)``
    (``confidence = exp(-q)``, so 0 -> inf and 1 -> 0), else ``inf``.
    Giving both ``penalty`` and ``confidence`` is rejected: they set the same thing.
    """
    if penalty is not None and confidence is not None:
        raise ValueError(
            f"give either penalty (q) or confidence (exp(-q)), not both: got penalty={penalty!r} "
            f"and confidence={confidence!r}; use penalty_must / penalty_cannot to set the kinds apart"
        )
    if penalty is not None:
        shared = float(penalty)
    elif confidence is not None:
        shared = np.inf if confidence == 0 else float(-np.log(confidence))
    else:
        shared = np.inf
    q_m = shared if penalty_must is None else float(penalty_must)
    q_c = shared if penalty_cannot is None else float(penalty_cannot)
    return q_m, q_c


def _scssap(S, constraints, *, penalty_must, penalty_cannot, damping, max_iter, convergence_iter, backend, warn=True,
            dtype="float64"):
    """Algorithm 1 on a prepared similarity matrix; returns ``(APResult, PairFactors)``.

    The result's ``pair_messages`` rows follow the factors' layout: rows with
    ``factors.is_cannot`` are gamma (eq. 17), the others omega (eq. 20).
    Infinite penalties run as the finite :func:`equivalent_hard_penalty` of S
    (see :class:`SCSSAP`, Notes).
    """
    factors = pair_factors(
        constraints.must_link,
        constraints.cannot_link,
        penalty_must=penalty_must,
        penalty_cannot=penalty_cannot,
        must_link_weight=constraints.must_link_weight,
        cannot_link_weight=constraints.cannot_link_weight,
        hard_penalty=equivalent_hard_penalty(S),
    )
    result = affinity_propagation(
        S,
        damping=damping,
        max_iter=max_iter,
        convergence_iter=convergence_iter,
        backend=backend,
        factors=factors,
        warn=warn,
        dtype=dtype,
    )
    return result, factors


class SCSSAP(PreferenceSearchMixin, ConstrainedClusterer):
    """Soft-constraint semi-supervised affinity propagation (Algorithm 1).

    Must-link and cannot-link factors (eqs. 4, 5) add a penalty q_m / q_c to the
    AP objective for every violated constraint; their messages omega (eq. 20)
    and gamma (eq. 17) modify the similarities of constrained points at every
    iteration (s_hat, eq. 24).

    Parameters
    ----------
    penalty : float >= 0 or None, default=None
        Shared penalty q = q_m = q_c; ``np.inf`` enforces constraints (as far
        as message passing can; run as an equivalent finite penalty, see
        Notes). Not together with ``confidence``.
    penalty_must, penalty_cannot : float >= 0 or None, default=None
        q_m, q_c; override the shared value for their kind.
    confidence : float in [0, 1] or None, default=None
        The paper's parameterisation exp(-q) (Section 4.1): 0 is an infinite
        penalty, 1 is plain AP. Note the direction: it is the probability
        factor a violation keeps, so *smaller* means *stricter*.
        When none of the four is given, q_m = q_c = inf (exp(-q) = 0, the
        paper's best setting for noiseless constraints).
    preference : float or None, default=None
        s(k, k); ``None`` is the median off-diagonal similarity (Section 4.1).
    n_clusters : int or None, default=None
        ``None``: one fit at ``preference`` (unchanged behaviour). An int: the
        preference is searched by bisection (R apcluster's ``apclusterK``;
        :func:`ccbench.similarity.bisect_preference`) on
        :func:`ccbench.similarity.preference_bracket` (``[low, s_max]``: at or below
        ``low`` one exemplar is optimal, apcluster's ``preferenceRange`` bound), each
        step a whole fit at the midpoint (at most ``n_clusters`` clusters: the
        midpoint becomes the lower end, else the upper). It goes on past the first
        preference that gives ``n_clusters`` to the upper end of that plateau
        (within 5 %: where the data, not the constraints, decide the partition) and
        stops there or after ``core.PREFERENCE_SEARCH_FITS`` = 20 fits (a second pass
        where unconverged fits misled the first; where every fit gave more than
        ``n_clusters``, probes below the bracket, :func:`ccbench.similarity.fit_for_n_clusters`:
        hard constraints can keep k + 1 exemplars down to its low end). If the count is
        never hit, the closest fit is kept, ``n_clusters_exact_`` and
        ``n_clusters_reached_`` are False and a ``ConvergenceWarning`` says so.
        Give ``preference`` or ``n_clusters``, not both.
    damping : float in [0.5, 1), default=0.75
        mu of Algorithm 1 (Section 4.1).
    max_iter : int, default=1000
    convergence_iter : int or None, default=100
        Stop when the exemplar set is unchanged (and non-empty) for this many
        iterations; ``None`` runs exactly ``max_iter`` iterations. Defaults as
        Frey & Dueck's apcluster.m: with hard constraints the exemplar set can
        sit still for 15-20 iterations before the constraint messages move it
        (scikit-learn's 15 then stops too early).
    backend : {"auto", "numba", "numpy"}, default="auto"
    dtype : {"float64", "float32"}, default="float64"
        Precision of the messages (S, alpha, rho, gamma, omega) on both back-ends; see
        ``ap``. ``"float32"`` halves their memory and an iteration's memory traffic.
    random_state : int, Generator or None, default=None
        Seeds scikit-learn's tie-breaking noise on S (see ``ap``).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster index 0..K-1 by exemplar order; all -1 if no exemplar emerged.
    cluster_centers_indices_ : ndarray of shape (K,)
    penalty_must_, penalty_cannot_ : float
        The resolved q_m, q_c.
    preference_ : float
    n_preference_fits_ : int
        Fits run (1 without ``n_clusters``; the search's bisection steps with it).
    n_clusters_exact_ : bool
        Whether the kept fit has ``n_clusters`` clusters (True without a search).
    n_iter_ : int
    converged_ : bool

    Notes
    -----
    Per iteration, in Algorithm 1's order: gamma^(t), omega^(t) from alpha,
    rho, gamma, omega at t-1; s_hat^(t) (eq. 24); alpha^(t) from rho^(t-1)
    (damped, eq. 14); rho^(t) from s_hat^(t) and alpha^(t) (damped, eq. 25).
    gamma and omega are not damped (Algorithm 1). They are stored only for
    constrained pairs, in both directions (2m rows of N). The closed forms
    gamma = -clip(lam, 0, q_c), omega = clip(tau, -q_m, q_m) equal eqs. 17, 20
    and avoid inf - inf for infinite penalties.

    Per-constraint confidences from :class:`ccbench.Constraints` multiply q
    (note after eq. 20); a pair with confidence 0 has no penalty even when q is inf.
    With no constraints, or q = 0, the result equals ``ap`` bit for bit.
    Hard constraints (q = inf) run as the finite q* = 2 N (max s - min s)
    (:func:`~ccbench_plugins.affinity.core.equivalent_hard_penalty`). Taken
    literally, Algorithm 1 with q_m = inf has omega = tau (eq. 20 unclipped),
    and the two directions of a must-link feed each other through eqs. 22, 24,
    25 and 14: the messages grow *exponentially* in t (measured on iris with 30
    constraints: max |rho| about 1e3, 1e5, 2e9, 5e17 after 50, 100, 200, 400
    iterations; on 90 blob points 1e51 after 1000, NaN after 8000), so a run
    that reaches the iteration cap ends with similarities below float
    resolution. With q* no message exceeds q* in magnitude (eqs. 17, 20 clip
    to [-q*, q*]), hence |s_hat| and |rho| stay below max |s| plus the
    constrained-pair degree times q*, and alpha below N times that: every value
    stays finite at any iteration count. q* is equivalent to infinity for the
    objective (eq. 6): the similarity terms of two valid configurations differ
    by at most N (max s - min s) < q*, so no configuration violating a
    constraint can be the maximiser while one meeting every constraint exists.
    The messages are identical to the q = inf ones while |tau|, |lam| < q*
    (the first 50-100 iterations on iris); on 6 iris and 6 blob constraint
    sets both gave the same iteration counts, exemplar counts and violations.
    Exemplars: Psi = {k : a_kk + r_kk > 0}, c_i = argmax_{k in Psi} a_ik + r_ik;
    if Psi is empty, labels are -1 with a ``ConvergenceWarning``.

    References
    ----------
    N. M. Arzeno and H. Vikalo, "Semi-supervised affinity propagation with soft
    instance-level constraints", IEEE TPAMI 37(5):1041-1052, 2015.

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import Constraints
    >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2]])
    >>> cons = Constraints(must_link=[[0, 1]], cannot_link=[[2, 3]], n_samples=6)
    >>> SCSSAP(penalty=np.inf, random_state=0).fit(X, constraints=cons).labels_
    array([0, 0, 0, 1, 1, 1])
    """

    _parameter_constraints = {**SCSSAP_PARAMETER_CONSTRAINTS, **N_CLUSTERS_CONSTRAINTS}

    def __init__(
        self,
        *,
        penalty=None,
        penalty_must=None,
        penalty_cannot=None,
        confidence=None,
        preference=None,
        n_clusters=None,
        damping=0.75,
        max_iter=1000,
        convergence_iter=100,
        backend="auto",
        dtype="float64",
        random_state=None,
    ):
        self.penalty = penalty
        self.penalty_must = penalty_must
        self.penalty_cannot = penalty_cannot
        self.confidence = confidence
        self.preference = preference
        self.n_clusters = n_clusters
        self.damping = damping
        self.max_iter = max_iter
        self.convergence_iter = convergence_iter
        self.backend = backend
        self.dtype = dtype
        self.random_state = random_state

    def _validate_penalties(self):
        q_m, q_c = resolve_penalties(self.penalty, self.penalty_must, self.penalty_cannot, self.confidence)
        self.penalty_must_, self.penalty_cannot_ = q_m, q_c
        return q_m, q_c

    def _run(self, S, cons, warn=True):
        return _scssap(
            S,
            cons,
            penalty_must=self.penalty_must_,
            penalty_cannot=self.penalty_cannot_,
            damping=float(self.damping),
            max_iter=int(self.max_iter),
            convergence_iter=self.convergence_iter,
            backend=self.backend,
            warn=warn,
            dtype=self.dtype,
        )[0]

    def _fit(self, X, constraints, preference):
        X, cons = self._validate_fit(X, constraints)
        self._validate_penalties()
        rng = check_random_state(self.random_state)
        S, self.preference_ = ap_similarity(X, preference, rng, self.dtype)
        result = self._run(S, cons)
        self.labels_ = result.labels
        self.cluster_centers_indices_ = result.exemplars
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        return self


# -- SCSSAP with metric learning (Algorithm 2) ----------------------------------------------


def metric_similarity(X, point_metrics):
    """s'(i, j) = -0.5 ||x_i - x_j||^2_{A_i} - 0.5 ||x_i - x_j||^2_{A_j} (Algorithm 2), diagonal A.

    ``point_metrics`` has shape (n, d): row i is diag(A_i). Clipped at 0 and
    with a zero diagonal, like :func:`ccbench.similarity.negative_sq_euclidean`.
    Expanding (w_i + w_j) . (x_i - x_j)^2 gives one product L @ M.T of
    (n, 4d + 2) factors, so the only n x n array allocated is the result.
    X is centred first: the expansion cancels terms of size ||x||^2.
    """
    W = point_metrics
    X = X - X.mean(axis=0)  # translation-invariant to rounding (as ccbench.similarity)
    X2 = X * X
    WX = W * X
    u = np.einsum("ij,ij->i", W, X2)[:, None]  # ||x_i||^2_{A_i}
    one = np.ones_like(u)
    # sum_d (w_id + w_jd)(x_id - x_jd)^2 = u_i + u_j + X2_i.W_j + W_i.X2_j - 2 WX_i.X_j - 2 X_i.WX_j
    L = np.hstack([X2, W, -2.0 * WX, -2.0 * X, u, one])
    M = np.hstack([W, X2, X, WX, one, u])
    T = L @ M.T
    T *= -0.5
    np.minimum(T, 0.0, out=T)
    np.fill_diagonal(T, 0.0)
    return T


def metric_update(X, labels, exemplars, *, regularizer="logdet", h=0.1, metric="cluster"):
    """Closed-form diagonal metrics (eq. 32 trace-normalised, or eq. 33) from a clustering.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    labels : ndarray of shape (n,)
        Cluster index 0..K-1; ``exemplars[u]`` is cluster u's exemplar c_u.
    exemplars : ndarray of shape (K,)
    regularizer : {"logdet", "entropy"}
        ``logdet`` (g-bar, eq. 29): a_d = |X_u| / sum_{i in u} (x_id - c_id)^2
        (eq. 32), then a <- a / sum(a) as in the paper's results.
        ``entropy`` (g-hat, eq. 30): a_d = softmax_d(-sum_{i in u} (x_id - c_id)^2 / (h |X_u|)) (eq. 33).
    h : float
        Entropy temperature (eq. 30).
    metric : {"cluster", "single"}
        One metric per cluster (eq. 31), or one for all points (the sums run
        over every point and |X_u| becomes n).

    Returns
    -------
    ndarray of shape (K, d) for ``"cluster"``, (1, d) for ``"single"``.

    Notes
    -----
    Zero within-cluster spread in feature d makes eq. 32 infinite. We take the
    limit of the trace normalisation: the metric is uniform over the
    zero-spread features and 0 on the others (the behaviour the paper
    describes in Section 5.3); a singleton cluster therefore keeps the uniform
    metric I / d.
    """
    diff2 = (X - X[exemplars[labels]]) ** 2  # (x_id - c_id)^2 per point
    if metric == "single":
        groups = np.zeros(X.shape[0], dtype=np.intp)
        n_groups = 1
    else:
        groups = labels
        n_groups = exemplars.size
    spread = np.zeros((n_groups, X.shape[1]))
    np.add.at(spread, groups, diff2)
    sizes = np.bincount(groups, minlength=n_groups).astype(np.float64)[:, None]
    if regularizer == "entropy":
        z = -spread / (h * sizes)
        z -= z.max(axis=1, keepdims=True)
        out = np.exp(z)
    else:
        zero = spread == 0.0
        with np.errstate(divide="ignore"):
            out = np.where(zero.any(axis=1, keepdims=True), zero.astype(np.float64), sizes / spread)
    out /= out.sum(axis=1, keepdims=True)
    return out


class SCSSAPMetricLearning(SCSSAP):
    """SCSSAP with diagonal metric learning (Algorithm 2).

    Alternates (i) SCSSAP on s'(i, j) = -0.5||x_i - x_j||^2_{A_i} - 0.5||x_i - x_j||^2_{A_j}
    and (ii) the closed-form metric update (eq. 32 or 33) from the clusters and
    exemplars just found, starting from A = I / D. Stops when the clustering is
    unchanged between two outer iterations, or after ``max_outer_iter``.

    Parameters
    ----------
    regularizer : {"logdet", "entropy"}, default="logdet"
        g-bar = -log det A (eq. 29 -> eq. 32, trace-normalised as in the
        paper's results) or g-hat = h sum a log a (eq. 30 -> eq. 33).
    h : float > 0, default=0.1
        Entropy weight (paper: 0.1).
    metric : {"cluster", "single"}, default="cluster"
        Cluster-specific A_u or one A for every point.
    max_outer_iter : int, default=10
    penalty, penalty_must, penalty_cannot, confidence, preference, n_clusters, damping, max_iter, convergence_iter, backend, dtype, random_state
        As for :class:`SCSSAP`, used by every inner SCSSAP run. ``preference=None``
        is the median of the current s' (recomputed every outer iteration).

    Attributes
    ----------
    labels_, cluster_centers_indices_, penalty_must_, penalty_cannot_, preference_, n_preference_fits_, n_clusters_exact_ : as SCSSAP
    metrics_ : ndarray of shape (K, n_features) or (1, n_features)
        Learned diagonals (trace 1): row u is A_u of cluster u (``"cluster"``),
        or the single metric.
    n_outer_iter_ : int
    n_iter_ : int
        Inner SCSSAP iterations of the last outer iteration.
    converged_ : bool
        The clustering stopped changing before ``max_outer_iter``.

    Notes
    -----
    Point i's metric A_i is that of its cluster in the previous outer
    iteration. If an inner SCSSAP run finds no exemplar, the loop stops with
    labels -1 and the last metrics. The metric update is :func:`metric_update`
    (see its Notes for the zero-spread guard).

    References
    ----------
    Arzeno & Vikalo (2015), Section 5.2, eqs. 28-33, Algorithm 2.
    """

    _parameter_constraints = {
        **SCSSAP_PARAMETER_CONSTRAINTS,
        **N_CLUSTERS_CONSTRAINTS,
        "regularizer": [Options("logdet", "entropy")],
        "h": [Interval(numbers.Real, 0, None, closed="neither")],
        "metric": [Options("cluster", "single")],
        "max_outer_iter": [Interval(numbers.Integral, 1, None)],
    }

    def __init__(
        self,
        *,
        regularizer="logdet",
        h=0.1,
        metric="cluster",
        max_outer_iter=10,
        penalty=None,
        penalty_must=None,
        penalty_cannot=None,
        confidence=None,
        preference=None,
        n_clusters=None,
        damping=0.75,
        max_iter=1000,
        convergence_iter=100,
        backend="auto",
        dtype="float64",
        random_state=None,
    ):
        super().__init__(
            penalty=penalty,
            penalty_must=penalty_must,
            penalty_cannot=penalty_cannot,
            confidence=confidence,
            preference=preference,
            n_clusters=n_clusters,
            damping=damping,
            max_iter=max_iter,
            convergence_iter=convergence_iter,
            backend=backend,
            dtype=dtype,
            random_state=random_state,
        )
        self.regularizer = regularizer
        self.h = h
        self.metric = metric
        self.max_outer_iter = max_outer_iter

    def _preference_bracket(self, X):
        # the first outer iteration's similarities: the metric 1/d on every feature (s / d)
        low, high = preference_bracket(X)
        return low / X.shape[1], high / X.shape[1]

    def _fit(self, X, constraints, preference):
        X, cons = self._validate_fit(X, constraints)
        self._validate_penalties()
        rng = check_random_state(self.random_state)
        n, d = X.shape
        point_metrics = np.full((n, d), 1.0 / d)
        metrics = np.full((1, d), 1.0 / d)
        labels = None
        converged = False
        outer = 0
        for outer in range(1, int(self.max_outer_iter) + 1):
            S = metric_similarity(X, point_metrics)
            self.preference_ = set_preference(S, preference, rng, precision=self.dtype)
            result = self._run(S.astype(self.dtype, copy=False), cons, warn=True)
            # Keep only the clustering: the messages are N x N each.
            new_labels, exemplars, n_iter = result.labels, result.exemplars, result.n_iter
            del S, result
            if exemplars.size == 0:
                labels = new_labels
                break
            if labels is not None and np.array_equal(new_labels, labels):
                converged = True
                break
            labels = new_labels
            metrics = metric_update(
                X, labels, exemplars, regularizer=self.regularizer, h=float(self.h), metric=self.metric
            )
            point_metrics = metrics[labels] if self.metric == "cluster" else np.repeat(metrics, n, axis=0)
        self.labels_ = new_labels
        self.cluster_centers_indices_ = exemplars
        self.metrics_ = metrics
        self.n_outer_iter_ = outer
        self.n_iter_ = n_iter
        self.converged_ = converged
        return self
