"""``pccc``: the pairwise-confidence-constraints-clustering algorithm (Baumann & Hochbaum 2024).

k-means-like alternation whose assignment step is a mixed-integer linear program (MILP),
solved here by HiGHS through :func:`scipy.optimize.milp` (the authors use Gurobi):

1. **Pre-processing** (reference code ``preprocessing``): every
   hard must-link chunklet is contracted to one representative at its mean, weighted by its
   size ``w_i``; hard cannot-links and soft pairs are mapped onto the representatives.
2. **Initial centres**: k-means++ over the representatives, unweighted (reference code
   ``choose_initial_cluster_centers``: scikit-learn's ``kmeans_plusplus`` on the contracted data).
3. **Assignment IP** for fixed centres ``mu_c`` (reference code ``assign_objects``), over the
   representatives ``i`` and the candidate centres ``c in N_q(i)``, the ``q`` nearest centres of
   ``i`` found with a KD-tree (the paper's "model-size reduction")::

       min  sum_i sum_{c in N_q(i)} w_i ||r_i - mu_c||^2 x_ic
            + P sum_{(i,j) in SCL} p_ij z_ij + P sum_{(i,j) in SML} p_ij y_ij
       s.t. sum_{c in N_q(i)} x_ic = 1                       for every i              (A)
            x_ic + x_jc <= 1                                 (i,j) in CL, c shared    (B)
            x_ic + x_jc <= 1 + z_ij                          (i,j) in SCL, c shared   (C)
            x_ic - x_jc <= y_ij,  x_jc - x_ic <= y_ij         (i,j) in SML, c shared   (D)
            x_ic <= y_ij  (c in N_q(i) only),  x_jc <= y_ij  (c in N_q(j) only)      (D')
            x binary, 0 <= z, y <= 1

   ``p_ij`` is the pair's confidence, ``P`` the penalty for violating a soft pair of confidence 1
   (reference default ``"avg_distance"``: the mean of the candidate squared distances, recomputed
   in every assignment). Hard must-links need no rows: they were contracted in step 1.
4. **Centre update**: weighted means; an empty cluster takes a random representative of the
   cluster ranked worst (most soft cannot-link confidence violated, then most inertia).
5. Steps 3-4 repeat while the objective (weighted inertia + penalty) strictly decreases.
6. **Cluster repositioning** (the paper's enhanced multi-start, ``"violations_inertia"``): the
   centre of the best-ranked cluster (fewest weighted soft cannot-link violations, then least
   inertia) is moved onto that of the worst-ranked, and steps 3-5 run again; this repeats while a
   descent improves on the best solution found, which is returned.

The candidate restriction never removes every feasible assignment: ``q`` is raised to
``min(k, 1 + the largest number of hard cannot-links at one representative)`` (reference code
``adjust_n_neighbors``). With ``q >= d_max + 1`` a greedy pass in any order finds each
representative a candidate none of its at most ``d_max`` cannot-linked neighbours occupies, so
the restricted IP is always feasible; with ``q = k`` nothing is restricted, and an infeasible IP
proves that no clustering meets the hard constraints (:class:`InfeasibleConstraintsError`).

Choices where paper and reference code leave room (each tested in ``tests/test_pccc_method.py``):

- hard versus soft: a pair whose ccbench weight is at least ``hard_weight`` (default 1, every
  unweighted pair) is hard; a lighter one is soft with confidence = its weight; weight 0 is
  ignored. ``hard_weight > 1`` makes every pair soft.
- the objective that stops a descent and picks among descents is the squared-distance k-means
  objective plus the penalty (the paper's objective); the reference code's ``get_total_distance``
  defaults to *Euclidean* (not squared) distances there, which we do not copy.
- the penalty of a solution is recomputed from its labels after the centre update (the
  reference keeps the IP's value even when an empty-cluster repair moved a representative).
- the reference runs one more descent from the best solution after the last repositioning,
  where its optional ``dynamic_n_neighbors`` heuristic (not implemented here: it only acts with
  soft cannot-links and trades exactness for speed) switches on; without it that descent repeats
  the best one, so we stop.

References
----------
P. Baumann and D. S. Hochbaum, "An algorithm for clustering with confidence-based must-link and
cannot-link constraints", INFORMS Journal on Computing 37(4):1044-1068 (2025, online 2024),
doi:10.1287/ijoc.2023.0419; preprint "PCCC: the pairwise-confidence-constraints-clustering
algorithm", arXiv:2212.14437. Reference code: github.com/phil85/PCCC (``pccc.py``) and the paper's
code snapshot, INFORMSJoC/2023.0419 ``src/pccc.py`` (the same algorithm; its ``run_instance.py`` is
how the experiments ran: ``cluster_repositioning='violations_inertia'``, one start).
The paper's text could not be read here, so its equation and section numbers are not cited: the
labels (A)-(D') and steps 1-6 are this module's own, transcribed from the reference code (the
functions named above) and checked against its behaviour on PCCC's collection 1
(``reports/pccc_col1``).
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.spatial import cKDTree
from sklearn.cluster import kmeans_plusplus

from ccbench.base import (
    ConstrainedClusterer,
    ConvergenceWarning,
    InfeasibleConstraintsError,
    Interval,
    Options,
    SolutionNotFoundError,
    check_random_state,
)
from ccbench.constraints import Constraints

from .core import Units, group_sums

REPOSITIONING = ("violations_inertia", "none")
PENALTY_RULES = ("avg_distance",)


@dataclass(frozen=True)
class _Problem:
    """The contracted instance: representatives (weighted chunklet means) and pairs between them."""

    reps: np.ndarray  # (n_reps, d)
    size: np.ndarray  # (n_reps,) points per representative, w_i
    unit_of: np.ndarray  # (n_samples,) representative of every point
    cl: np.ndarray  # (m, 2) hard cannot-links between representatives
    scl: np.ndarray  # (s, 2) soft cannot-links between distinct representatives
    scl_conf: np.ndarray
    sml: np.ndarray  # (t, 2) soft must-links between distinct representatives
    sml_conf: np.ndarray
    const_conf: float  # confidence of soft cannot-links inside one chunklet: always violated


def _split(cons: Constraints, hard_weight: float):
    """(hard ML, hard CL, soft ML, its confidences, soft CL, its confidences); weight 0 dropped."""
    out = []
    for pairs, wt in ((cons.must_link, cons.must_link_weight), (cons.cannot_link, cons.cannot_link_weight)):
        hard = wt >= hard_weight
        soft = ~hard & (wt > 0)
        out.append((pairs[hard], pairs[soft], wt[soft]))
    (hml, sml, sml_w), (hcl, scl, scl_w) = out
    return hml, hcl, sml, sml_w, scl, scl_w


def _contract(X, cons: Constraints, hard_weight: float) -> _Problem:
    """Step 1: hard must-link chunklets as weighted representatives (raises when a hard
    cannot-link joins one chunklet)."""
    hml, hcl, sml, sml_w, scl, scl_w = _split(cons, hard_weight)
    units = Units.build(X, Constraints(hml, hcl, n_samples=len(X)))
    u = units.unit_of
    sml_u, scl_u = u[sml], u[scl]
    keep_ml = sml_u[:, 0] != sml_u[:, 1]  # a soft must-link inside a chunklet is always met
    keep_cl = scl_u[:, 0] != scl_u[:, 1]  # ... a soft cannot-link inside one always violated
    return _Problem(
        reps=units.mean, size=units.size, unit_of=u, cl=units.cannot,
        scl=scl_u[keep_cl], scl_conf=scl_w[keep_cl], sml=sml_u[keep_ml], sml_conf=sml_w[keep_ml],
        const_conf=float(scl_w[~keep_cl].sum()),
    )


def effective_n_neighbors(cl: np.ndarray, n_reps: int, k: int, q: int | None) -> int:
    """``q`` raised to one more than the largest hard cannot-link degree, capped at ``k``
    (reference ``adjust_n_neighbors``): the restricted assignment IP then stays feasible."""
    q = k if q is None else min(q, k)
    if len(cl):
        q = max(q, int(np.bincount(cl.ravel(), minlength=n_reps).max()) + 1)
    return min(q, k)


def _shared(pos, pairs):
    """(pair index, cluster) for every cluster that is a candidate of both ends of a pair."""
    both = (pos[pairs[:, 0]] >= 0) & (pos[pairs[:, 1]] >= 0)
    return np.nonzero(both)


def assignment_milp(prob: _Problem, centres, q: int, penalty, *, time_limit=None):
    """Step 3: solve the assignment IP (A)-(D') for fixed ``centres`` with HiGHS.

    Returns ``(labels, P, status)``: representative labels, the penalty ``P`` used, and
    scipy's status (0 optimal, 1 time limit with a solution). Raises
    :class:`InfeasibleConstraintsError` when the IP has no solution (only possible with
    ``q = k``, see the module docstring) and :class:`SolutionNotFoundError` when the time
    limit passed before HiGHS found one."""
    n, k = len(prob.reps), len(centres)
    dist, cand = cKDTree(centres).query(prob.reps, k=q)
    dist, cand = np.asarray(dist, float).reshape(n, q) ** 2, np.asarray(cand).reshape(n, q)
    P = float(dist.mean()) if penalty == "avg_distance" else float(penalty)
    nx = n * q
    pos = np.full((n, k), -1, dtype=np.intp)
    pos[np.repeat(np.arange(n), q), cand.ravel()] = np.arange(nx)
    rows, cols, vals, lo, hi = [], [], [], [], []
    n_rows = 0

    def add(r, c, v):
        rows.append(r), cols.append(c), vals.append(np.broadcast_to(np.asarray(v, float), np.shape(r)))

    # (A) each representative in exactly one of its candidate clusters
    add(np.repeat(np.arange(n), q), np.arange(nx), 1.0)
    lo.append(np.ones(n)), hi.append(np.ones(n))
    n_rows = n
    # (B) hard cannot-links, one row per shared candidate cluster
    e, c = _shared(pos, prob.cl)
    r = n_rows + np.arange(len(e))
    add(r, pos[prob.cl[e, 0], c], 1.0), add(r, pos[prob.cl[e, 1], c], 1.0)
    lo.append(np.full(len(e), -np.inf)), hi.append(np.ones(len(e)))
    n_rows += len(e)
    # (C) soft cannot-links: a slack z per pair with a shared candidate (the others are met)
    e, c = _shared(pos, prob.scl)
    rel, z_of = np.unique(e, return_inverse=True)
    z_col = nx + z_of
    r = n_rows + np.arange(len(e))
    add(r, pos[prob.scl[e, 0], c], 1.0), add(r, pos[prob.scl[e, 1], c], 1.0), add(r, z_col, -1.0)
    lo.append(np.full(len(e), -np.inf)), hi.append(np.ones(len(e)))
    n_rows += len(e)
    nz = len(rel)
    # (D), (D') soft must-links: a slack y per pair; x_ac - x_bc <= y over a's candidates c
    # (the x_bc term only where c is b's candidate too), and the same with a, b swapped
    ny = len(prob.sml)
    for a_col, b_col in ((0, 1), (1, 0)):
        a, b = prob.sml[:, a_col], prob.sml[:, b_col]
        e, c = np.nonzero(pos[a] >= 0)
        r = n_rows + np.arange(len(e))
        add(r, pos[a[e], c], 1.0), add(r, np.full(len(e), nx + nz) + e, -1.0)
        other = pos[b[e], c]
        has = other >= 0
        add(r[has], other[has], -1.0)
        lo.append(np.full(len(e), -np.inf)), hi.append(np.zeros(len(e)))
        n_rows += len(e)
    n_var = nx + nz + ny
    A = sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n_rows, n_var)
    )
    cost = np.concatenate([(prob.size[:, None] * dist).ravel(), P * prob.scl_conf[rel], P * prob.sml_conf])
    integrality = np.concatenate([np.ones(nx), np.zeros(nz + ny)])
    options = {"disp": False}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    res = milp(cost, constraints=LinearConstraint(A, np.concatenate(lo), np.concatenate(hi)),
               integrality=integrality, bounds=Bounds(0.0, 1.0), options=options)
    if res.x is None:
        if res.status == 2:
            raise InfeasibleConstraintsError(
                f"no assignment meets all {len(prob.cl)} hard cannot-links with k={k} (HiGHS proved the "
                f"assignment IP infeasible with every centre a candidate): raise n_clusters, or make the "
                f"pairs soft (hard_weight above their weights)"
            )
        raise SolutionNotFoundError(
            f"HiGHS found no assignment within the time limit ({time_limit} s; status {res.status}: "
            f"{res.message}); raise milp_time_limit"
        )
    pick = np.argmax(res.x[:nx].reshape(n, q), axis=1)
    return cand[np.arange(n), pick], P, res.status


def _soft_violations(prob: _Problem, lab):
    """Confidence of the violated soft pairs: (per-pair SCL mask, total confidence)."""
    scl_hit = lab[prob.scl[:, 0]] == lab[prob.scl[:, 1]]
    sml_hit = lab[prob.sml[:, 0]] != lab[prob.sml[:, 1]]
    total = prob.scl_conf[scl_hit].sum() + prob.sml_conf[sml_hit].sum() + prob.const_conf
    return scl_hit, float(total)


def _cluster_ranks(prob: _Problem, lab, centres):
    """Clusters from best to worst: fewest weighted soft cannot-link violations, then least
    weighted inertia (reference ``np.lexsort((inertia, violations))``)."""
    k = len(centres)
    scl_hit, _ = _soft_violations(prob, lab)
    hit = prob.scl[scl_hit]
    viol = np.bincount(lab[hit].ravel(), weights=np.repeat(prob.scl_conf[scl_hit], 2), minlength=k)
    inert = np.bincount(lab, weights=prob.size * ((prob.reps - centres[lab]) ** 2).sum(1), minlength=k)
    return np.lexsort((inert, viol))


def _update_centres(prob: _Problem, lab, centres, rng):
    """Step 4: weighted means; each empty cluster first takes a random representative of the
    cluster ranked worst that has more than one (then the next worst, ...)."""
    k = len(centres)
    counts = np.bincount(lab, minlength=k)
    empty = np.flatnonzero(counts == 0)
    if len(empty):
        lab = lab.copy()
        donors = [c for c in _cluster_ranks(prob, lab, centres)[::-1] if counts[c] > 1]
        for c_empty, donor in zip(empty, donors):
            moved = rng.choice(np.flatnonzero(lab == donor))
            lab[moved] = c_empty
    w = np.bincount(lab, weights=prob.size, minlength=k)
    sums = group_sums(lab, prob.reps * prob.size[:, None], k)
    return lab, np.where(w[:, None] > 0, sums / np.maximum(w, 1e-300)[:, None], centres)


class PCCC(ConstrainedClusterer):
    """PCCC: k-means whose assignment step is an integer program with hard and soft pairs.

    See the module docstring for the algorithm (steps 1-6) and the assignment IP (A)-(D').

    Parameters
    ----------
    n_clusters : int, default=2
    hard_weight : float, default=1.0
        Pairs of weight at least this are hard (never violated); lighter ones are soft with
        confidence = weight (weight 0: ignored). Values above 1 make every pair soft.
    penalty : "avg_distance" or float, default="avg_distance"
        ``P``, the cost of violating a soft pair of confidence 1; ``"avg_distance"`` is the mean
        squared distance of the representatives to their candidate centres in each assignment
        (the reference default), a number is used as is (data scale).
    n_neighbors : int or None, default=None
        ``q``, the candidate centres per representative (KD-tree); None = ``n_clusters`` (the
        reference default). Raised to ``1 + max hard cannot-link degree`` (capped at
        ``n_clusters``) so the assignment stays feasible; the value used is ``n_neighbors_``.
    repositioning : {"violations_inertia", "none"}, default="violations_inertia"
        The multi-start by cluster repositioning (step 6), or a single descent.
    init : "k-means++" or ndarray (n_clusters, n_features), default="k-means++"
    n_init : int, default=1
        Independent starts (each with its repositioning); the lowest objective wins. The
        paper runs one.
    max_iter : int, default=300
        Assignment IPs per start, over all its descents.
    milp_time_limit : float or None, default=None
        Seconds HiGHS may spend on one assignment IP (the best solution found is used).
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    labels_ : ndarray (n_samples,)
    cluster_centers_ : ndarray (n_clusters, n_features)
    inertia_ : float
        Sum of squared distances of the points to their centres.
    objective_ : float
        ``inertia_ + penalty_ * confidence of the violated soft pairs``.
    penalty_ : float
        ``P`` of the last assignment of the kept solution.
    n_neighbors_ : int
    n_iter_ : int
        Assignment IPs solved in the kept start.
    n_repositionings_ : int
        Repositionings (step 6) tried in the kept start; the last one did not improve.
    converged_ : bool
        False when ``max_iter`` stopped the kept start.
    n_violated_ : int
        Given pairs of positive weight that the labels break (hard ones: always 0).

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import Constraints, make_method
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> cons = Constraints(cannot_link=[[0, 1]], n_samples=4)
    >>> labels = make_method("pccc", n_clusters=2, random_state=0).fit_predict(X, constraints=cons)
    >>> bool(labels[0] != labels[1])
    True
    """

    _parameter_constraints = {
        "n_clusters": [Interval(numbers.Integral, 1, None)],
        "hard_weight": [Interval(numbers.Real, 0, None, allow_inf=True)],
        "penalty": [Options(*PENALTY_RULES), Interval(numbers.Real, 0, None)],
        "n_neighbors": [None, Interval(numbers.Integral, 1, None)],
        "repositioning": [Options(*REPOSITIONING)],
        "init": [Options("k-means++"), "array-like"],
        "n_init": [Interval(numbers.Integral, 1, None)],
        "max_iter": [Interval(numbers.Integral, 1, None)],
        "milp_time_limit": [None, Interval(numbers.Real, 0, None)],
        "random_state": ["random_state"],
    }

    def __init__(
        self, n_clusters=2, *, hard_weight=1.0, penalty="avg_distance", n_neighbors=None,
        repositioning="violations_inertia", init="k-means++", n_init=1, max_iter=300,
        milp_time_limit=None, random_state=None,
    ):
        self.n_clusters = n_clusters
        self.hard_weight = hard_weight
        self.penalty = penalty
        self.n_neighbors = n_neighbors
        self.repositioning = repositioning
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.milp_time_limit = milp_time_limit
        self.random_state = random_state

    def fit(self, X, y=None, *, constraints=None):
        X, cons = self._validate_fit(X, constraints)
        rng = check_random_state(self.random_state)
        k = self.n_clusters
        prob = _contract(X, cons, float(self.hard_weight))
        n_reps = len(prob.reps)
        if n_reps < k:
            raise InfeasibleConstraintsError(
                f"the hard must-links leave {n_reps} chunklets for n_clusters={k}: no clustering into "
                f"{k} non-empty clusters meets them; lower n_clusters or make the pairs soft"
            )
        q = effective_n_neighbors(prob.cl, n_reps, k, self.n_neighbors)
        best = None
        for _ in range(self.n_init):
            run = self._single(prob, self._initial_centres(prob, X, rng), q, rng)
            if best is None or run["objective"] < best["objective"]:
                best = run
        lab = best["labels"][prob.unit_of].astype(np.intp)
        centres = best["centres"]
        self.labels_, self.cluster_centers_ = lab, centres
        self.inertia_ = float(((X - centres[lab]) ** 2).sum())
        _, conf = _soft_violations(prob, best["labels"])
        self.penalty_ = best["P"]
        self.objective_ = self.inertia_ + self.penalty_ * conf
        self.n_neighbors_, self.n_iter_ = q, best["n_iter"]
        self.n_repositionings_, self.converged_ = best["n_repositionings"], best["converged"]
        ml, cl = cons.must_link, cons.cannot_link
        self.n_violated_ = int(
            np.sum((lab[ml[:, 0]] != lab[ml[:, 1]]) & (cons.must_link_weight > 0))
            + np.sum((lab[cl[:, 0]] == lab[cl[:, 1]]) & (cons.cannot_link_weight > 0))
        )
        if not self.converged_:
            warnings.warn(f"PCCC stopped at max_iter={self.max_iter} assignment IPs", ConvergenceWarning,
                          stacklevel=2)
        return self

    def _initial_centres(self, prob, X, rng):
        if isinstance(self.init, str):
            if self.init != "k-means++":
                raise ValueError(f"init must be 'k-means++' or an array of centres, got {self.init!r}")
            seed = int(rng.integers(2**31 - 1))
            return kmeans_plusplus(prob.reps, self.n_clusters, random_state=seed)[0].astype(float)
        init = np.asarray(self.init, dtype=float)
        if init.shape != (self.n_clusters, X.shape[1]):
            raise ValueError(
                f"init must have shape (n_clusters, n_features) = ({self.n_clusters}, {X.shape[1]}), "
                f"got {init.shape}"
            )
        return init.copy()

    def _quality(self, prob, lab, centres, P):
        """Weighted inertia of the representatives plus ``P`` times the violated confidence."""
        _, conf = _soft_violations(prob, lab)
        return float((prob.size * ((prob.reps - centres[lab]) ** 2).sum(1)).sum()) + P * conf

    def _single(self, prob, centres, q, rng):
        """Steps 3-6 from ``centres``: descents, each followed by a repositioning while it improves."""
        glob, n_iter, n_repos = None, 0, 0
        while True:
            best, used = None, 0
            while n_iter < self.max_iter:  # one descent (steps 3-5)
                lab, P, _ = assignment_milp(prob, centres, q, self.penalty, time_limit=self.milp_time_limit)
                lab, centres = _update_centres(prob, lab, centres, rng)
                n_iter, used = n_iter + 1, used + 1
                qual = self._quality(prob, lab, centres, P)
                if best is not None and qual >= best["objective"]:
                    break
                best = {"objective": qual, "labels": lab, "centres": centres.copy(), "P": P}
            if best is not None and (glob is None or best["objective"] < glob["objective"]):
                glob = best
            else:
                break
            if self.repositioning == "none" or len(prob.reps) <= len(centres) or n_iter >= self.max_iter:
                break
            centres = glob["centres"].copy()
            rank = _cluster_ranks(prob, glob["labels"], centres)
            centres[rank[0]] = centres[rank[-1]]  # step 6: best-ranked centre onto the worst's
            n_repos += 1
        return {**glob, "n_iter": n_iter, "n_repositionings": n_repos, "converged": n_iter < self.max_iter}
