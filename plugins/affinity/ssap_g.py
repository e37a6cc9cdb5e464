r"""``ssap_g``: Givoni & Frey's semi-supervised affinity propagation with meta-points.

As described in Arzeno & Vikalo (2015), Section 2.1 (eq. 1), after Givoni &
Frey (AISTATS 2009).

Model (our reading, choices marked *)
-------------------------------------
- One meta-point (MTP) per must-link group P_m (a chunklet: the transitive
  closure of the must-links) and one per cannot-link endpoint that is in no
  group (P_m = {i}).
- Each member of P_m "necessarily chooses the meta-point" at similarity 0
  (eq. 1), so members are not variables of their own: they always share the
  MTP's cluster. The variables are the *nodes*: the free points (in no P_m)
  and the MTPs, with N' = (#free + M) nodes in that order.
- Node similarities follow eq. 1: s(i, MTP_m) = max_{j in P_m} s(i, j) and,
  by symmetry, s(MTP_m, i) = max_{j in P_m} s(j, i); every node's preference
  (its self-similarity) is the data points' preference.
- (*) An MTP may choose another MTP: s(MTP_a, MTP_b) = max_{i in P_a, j in P_b} s(i, j).
  The paper says meta-points choose data points, not meta-points; with the
  members folded into their MTP, a data point of another group *is* that
  group's MTP, so this keeps the choices the paper allows.
- (*) Every node, MTPs included, has the self-selection factor E (eq. 3): a
  node can only be chosen if it chooses itself.
- Cannot-link factors join the two nodes a, b of a cannot-link for every
  candidate exemplar j (columns a and b included): CL_ab^j = -q if
  c_aj = c_bj = 1 (eq. 5). Columns a, b cover "a chooses b while b is an
  exemplar". The paper's -inf runs as the finite q* of
  :func:`~ccbench_plugins.affinity.core.equivalent_hard_penalty` (q* exceeds
  any trade of similarities, so the maximiser of the objective is the same;
  messages stay bounded).

This is AP (eqs. 14, 25) on the N' x N' node similarities with the
cannot-link messages of eq. 17 (gamma = -clip(lam, 0, q*), lam from eq. 23)
added to s_hat (eq. 24): the shared core
(:mod:`ccbench_plugins.affinity.core`) runs it as SCSSAP without must-links.

Why the previous model merged separated blobs
---------------------------------------------
Before, the augmented problem had N + M nodes: members stayed points, every
point could choose an MTP as a *relay* (the point joined the MTP's exemplar),
and MTP columns had no E factor. The objective then charged a relaying point
s(i, MTP) = max_{j in P} s(i, j), its similarity to the group, not to the
exemplar it ends up with. On two blobs 7 apart with one must-link inside
blob A, the other points of A relay through the MTP at cost ~0 while the MTP
chooses an exemplar in blob B (cost -49 once): one exemplar for everything
beats two preferences (-2 x 46). Max-sum found that configuration because it
*was* the maximiser of the model (not damping, schedule or tie noise: damping
0.5, 0.75, 0.9 all settle on it). Folding members into their MTP and giving
MTPs an E factor removes the free relay: a point that joins an MTP's cluster
pays its similarity to the cluster's exemplar node.

Decoding (always a valid clustering)
------------------------------------
Psi = {k : alpha_kk + rho_kk > 0} (Algorithm 1). Nodes are assigned in
decreasing order of max_{k in Psi} alpha_ik + rho_ik to the exemplar in Psi
of largest alpha_ik + rho_ik that no cannot-linked node already uses; a node
with no such exemplar becomes an exemplar itself (a new cluster, always
allowed). If Psi is empty, the node of largest alpha_kk + rho_kk seeds it.
``converged_`` is True only if message passing converged and this decoding
needed neither the seed nor a repair (plain argmax assignment feasible).
(*) When it is False, the decoded assignment is then improved by a local
search on the node objective (:func:`polish`: join the best allowed
exemplar or become one, re-centre a cluster, dissolve a cluster; each move
only if it raises sum_i s(i, c_i), and every move keeps the constraints). On
20 tiny instances (5-6 points, one must-link, one cannot-link) max-sum
settles on 7 (each at the model's brute-force maximum); with the local search
17 of 20 end at that maximum, 14 without it; the relay model reached 8.
Every cluster's centre is inside it: its exemplar node if that is a free
point, else the member of the exemplar MTP with the largest summed
similarity to the cluster.

What the model optimises, and measured behaviour
------------------------------------------------
Eq. 1 charges a group once, as its best member (s(MTP, j) is a max), and
its members nothing: the model's maximum is not the true constrained one
(every point paying its similarity to its centre), which the tiny instances
above reach 10 times in 20. With hard cannot-links, loopy max-sum can
oscillate between two exemplar sets that differ in one exemplar (seen on
wine at raw scale: 32 of 60 Fig. 3 runs unsettled; iris 3 of 60); those
runs end with the decoding and local search above. Fig. 3 protocol, mean
modified Rand at 50 / 100 / 200 pairs: iris 0.903 / 0.921 / 0.978 (relay
model 0.868 / 0.890 / 0.937), wine 0.654 / 0.664 / 0.759 (0.666 / 0.669 / 0.751).

Cannot-links inside one must-link group (inconsistent constraints) cannot be
expressed and are ignored, as the paper notes (Section 4.2); their count is
``n_ignored_cannot_links_``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ccbench.base import ConstrainedClusterer, ConvergenceWarning, check_random_state
from ccbench.similarity import median_preference, negative_sq_euclidean

from .core import (
    AP_PARAMETER_CONSTRAINTS,
    N_CLUSTERS_CONSTRAINTS,
    PreferenceSearchMixin,
    PairFactors,
    add_tie_noise,
    affinity_propagation,
    equivalent_hard_penalty,
    pair_factors,
)


def meta_points(constraints):
    """Meta-point membership: ``(groups, meta_of)``.

    ``groups`` is the list of P_m (chunklets first, then cannot-link endpoints
    in no chunklet); ``meta_of[i]`` is i's meta-point or -1.
    """
    n = constraints.n_samples
    groups = list(constraints.chunklets())
    meta_of = np.full(n, -1, dtype=np.intp)
    for m, g in enumerate(groups):
        meta_of[g] = m
    ends = np.unique(constraints.cannot_link.ravel())
    for i in ends[meta_of[ends] < 0]:
        meta_of[i] = len(groups)
        groups.append(np.array([i]))
    return groups, meta_of


def node_similarity(S, groups, meta_of, preference):
    """The N' x N' similarity of the nodes (free points, then MTPs; eq. 1 and the module notes).

    ``S`` is the point similarity (its diagonal is not read). Returns
    ``(T, free)`` with ``free`` the data-point index of each free node.
    """
    free = np.flatnonzero(meta_of < 0)
    n_free = free.size
    if not groups:
        T = S[np.ix_(free, free)]
        np.fill_diagonal(T, preference)
        return T, free
    members = np.concatenate(groups).astype(np.intp)
    starts = np.cumsum([0] + [len(g) for g in groups[:-1]]).astype(np.intp)
    T = np.empty((n_free + len(groups),) * 2)
    T[:n_free, :n_free] = S[np.ix_(free, free)]
    T[:n_free, n_free:] = np.maximum.reduceat(S[np.ix_(free, members)], starts, axis=1)
    rows = np.maximum.reduceat(S[members], starts, axis=0)  # max over each group's rows
    T[n_free:, :n_free] = rows[:, free]
    T[n_free:, n_free:] = np.maximum.reduceat(rows[:, members], starts, axis=1)
    np.fill_diagonal(T, preference)
    return T, free


@dataclass
class NodeProblem:
    """The node-level problem: similarities ``T``, cannot-link node ``pairs`` and their factors."""

    T: np.ndarray
    free: np.ndarray
    groups: list
    meta_of: np.ndarray
    pairs: np.ndarray
    factors: PairFactors
    n_ignored: int


def node_problem(S, constraints, preference, rng, precision="float64") -> NodeProblem:
    """Nodes, their similarities (with tie noise from ``rng`` at ``precision``'s eps) and the
    hard cannot-link factors."""
    groups, meta_of = meta_points(constraints)
    T, free = node_similarity(S, groups, meta_of, preference)
    add_tie_noise(T, rng, precision=precision)
    n_free = free.size
    cl = constraints.cannot_link
    a, b = n_free + meta_of[cl[:, 0]], n_free + meta_of[cl[:, 1]]
    keep = a != b
    pairs = np.unique(np.sort(np.c_[a[keep], b[keep]], axis=1), axis=0).reshape(-1, 2)
    factors = pair_factors(
        np.empty((0, 2), dtype=np.intp), pairs, penalty_must=0.0, penalty_cannot=np.inf,
        hard_penalty=equivalent_hard_penalty(T),
    )
    return NodeProblem(T, free, groups, meta_of, pairs, factors, int(np.count_nonzero(~keep)))


def decode(A, R, cl_pairs):
    """A valid assignment node -> exemplar node from the beliefs A + R (module notes, Decoding).

    Returns ``(exemplar_of, clean)``; ``clean`` is False when Psi was empty or
    the plain argmax over Psi had to be repaired to meet a cannot-link.
    """
    n = A.shape[0]
    belief = A + R
    psi = np.flatnonzero(np.diagonal(belief) > 0)
    clean = psi.size > 0
    if not clean:
        psi = np.array([int(np.argmax(np.diagonal(belief)))])
    neighbours = [[] for _ in range(n)]
    for a, b in cl_pairs:
        neighbours[a].append(b)
        neighbours[b].append(a)
    exemplar_of = np.full(n, -1, dtype=np.intp)
    exemplar_of[psi] = psi
    exemplars = list(psi)
    rest = np.setdiff1d(np.arange(n), psi)
    order = rest[np.argsort(-belief[np.ix_(rest, psi)].max(axis=1), kind="stable")]
    for i in order:
        taken = {int(exemplar_of[b]) for b in neighbours[i]}
        cand = np.array([k for k in exemplars if k not in taken and k not in neighbours[i]], dtype=np.intp)
        best = int(np.argmax(belief[i, exemplars]))
        if cand.size == 0:
            exemplar_of[i] = i
            exemplars.append(i)
            clean = False
            continue
        exemplar_of[i] = cand[np.argmax(belief[i, cand])]
        clean &= exemplar_of[i] == exemplars[best]
    return exemplar_of, bool(clean)


def _allowed(i, exemplars, exemplar_of, neighbours):
    """Exemplars node i may join: not a cannot-linked node, not used by one."""
    banned = set(neighbours[i]) | {int(exemplar_of[b]) for b in neighbours[i]}
    return np.array([e for e in exemplars if e not in banned], dtype=np.intp)


def polish(T, exemplar_of, cl_pairs, max_passes=100):
    """Local search on the node objective sum_i T[i, c_i] from a valid assignment, keeping it valid.

    Moves, each taken only if it strictly raises the objective (so it stops):
    a node joins its best allowed exemplar or becomes one; a cluster moves its
    exemplar to the member of largest summed similarity; a cluster dissolves
    into the other clusters. Used only when message passing did not settle.
    """
    n = T.shape[0]
    exemplar_of = exemplar_of.copy()
    neighbours = [[] for _ in range(n)]
    for a, b in cl_pairs:
        neighbours[a].append(b)
        neighbours[b].append(a)
    rows = np.arange(n)
    for _ in range(max_passes):
        before = T[rows, exemplar_of].sum()
        for i in range(n):
            if exemplar_of[i] == i and np.count_nonzero(exemplar_of == i) > 1:
                continue  # an exemplar with members moves only with its cluster
            exemplars = np.unique(exemplar_of[exemplar_of != i])
            cand = _allowed(i, exemplars[exemplar_of[exemplars] == exemplars], exemplar_of, neighbours)
            best = i if cand.size == 0 or T[i, i] >= T[i, cand].max() else int(cand[np.argmax(T[i, cand])])
            if T[i, best] > T[i, exemplar_of[i]]:
                exemplar_of[i] = best
        for e in np.unique(exemplar_of):
            members = np.flatnonzero(exemplar_of == e)
            centre = members[np.argmax(T[np.ix_(members, members)].sum(axis=0))]
            if T[members, centre].sum() > T[members, e].sum():
                exemplar_of[members] = centre
        for e in np.unique(exemplar_of):
            members = np.flatnonzero(exemplar_of == e)
            trial = exemplar_of.copy()
            trial[members] = -1
            others = np.unique(trial[trial >= 0])
            ok = others.size > 0
            for i in members:
                cand = _allowed(i, others, trial, neighbours) if ok else np.empty(0, np.intp)
                if cand.size == 0:
                    ok = False
                    break
                trial[i] = cand[np.argmax(T[i, cand])]
            if ok and T[members, trial[members]].sum() > T[members, e].sum():
                exemplar_of = trial
        if T[rows, exemplar_of].sum() <= before:
            break
    return exemplar_of


def _point_labels(exemplar_of, free, groups, meta_of, S):
    """Point labels 0..K-1 (by centre index) and the centres, each inside its cluster."""
    n = meta_of.size
    n_free = free.size
    node_of = np.empty(n, dtype=np.intp)
    node_of[free] = np.arange(n_free)
    members = meta_of >= 0
    node_of[members] = n_free + meta_of[members]
    cluster_node = exemplar_of[node_of]  # exemplar node of each point's cluster
    centre_of = {}
    for e in np.unique(cluster_node):
        if e < n_free:
            centre_of[e] = free[e]
        else:
            group = groups[e - n_free]
            inside = np.flatnonzero(cluster_node == e)
            centre_of[e] = group[np.argmax(S[np.ix_(inside, group)].sum(axis=0))]
    centre = np.array([centre_of[e] for e in cluster_node], dtype=np.intp)
    centers, labels = np.unique(centre, return_inverse=True)
    return labels.astype(np.intp), centers


class SSAPG(PreferenceSearchMixin, ConstrainedClusterer):
    """Semi-supervised affinity propagation with meta-points (Givoni & Frey 2009).

    Must-links are enforced through meta-points (a must-link group is one node
    with eq. 1 similarities), cannot-links through factors between nodes (see
    the module docstring for the model, why it differs from a relay model,
    and the decoding).

    Parameters
    ----------
    preference : float or None, default=None
        s(k, k) for every node; ``None`` is the median off-diagonal similarity
        of the data points.
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
        stops there or after ``core.PREFERENCE_SEARCH_FITS`` = 20 fits: a search
        costs at most 20 fits. If the count is never hit, the closest fit is kept,
        ``n_clusters_exact_`` is False and a ``ConvergenceWarning`` says so.
        Give ``preference`` or ``n_clusters``, not both.
    damping : float in [0.5, 1), default=0.75
    max_iter : int, default=1000
    convergence_iter : int or None, default=100
    backend : {"auto", "numba", "numpy"}, default="auto"
    dtype : {"float64", "float32"}, default="float64"
        Precision of the messages (S, alpha, rho, gamma on the nodes) on both back-ends; see
        ``ap``. ``"float32"`` halves their memory and an iteration's memory traffic.
    random_state : int, Generator or None, default=None
        Seeds the tie-breaking noise on the node similarities.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster index 0..K-1 by centre index; never -1. With consistent
        constraints every must-link group shares a label and no cannot-link
        pair does.
    cluster_centers_indices_ : ndarray of shape (K,)
        One data point per cluster, inside it (module notes).
    n_meta_points_ : int
    n_ignored_cannot_links_ : int
        Cannot-links inside a must-link group (inconsistent constraints).
    preference_ : float
    n_preference_fits_ : int
        Fits run (1 without ``n_clusters``; the search's bisection steps with it).
    n_clusters_exact_ : bool
        Whether the kept fit has ``n_clusters`` clusters (True without a search).
    n_iter_ : int
    converged_ : bool
        Message passing converged with a non-empty exemplar set whose plain
        argmax assignment met every cannot-link (else a ``ConvergenceWarning``
        and the repaired, still valid, decoding).

    Notes
    -----
    Objective (eq. 6 on the nodes): sum over nodes of s(node, exemplar) with
    the E (eq. 3) and I (eq. 2) factors and the cannot-link factors (eq. 5,
    q = q*); messages eqs. 14, 17, 23-25. Without constraints this is ``ap``
    on the same similarities (same noise draws): identical labels. With every
    similarity equal, as ``ap`` (scikit-learn's special case).

    References
    ----------
    I. E. Givoni and B. J. Frey, "Semi-supervised affinity propagation with
    instance-level constraints", AISTATS 2009. Arzeno & Vikalo (2015), Section 2.1, eq. 1.

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import Constraints
    >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2]])
    >>> cons = Constraints(must_link=[[0, 5]], n_samples=6)
    >>> labels = SSAPG(random_state=0).fit(X, constraints=cons).labels_
    >>> bool(labels[0] == labels[5])
    True
    """

    _parameter_constraints = {**AP_PARAMETER_CONSTRAINTS, **N_CLUSTERS_CONSTRAINTS}

    def __init__(
        self,
        *,
        preference=None,
        n_clusters=None,
        damping=0.75,
        max_iter=1000,
        convergence_iter=100,
        backend="auto",
        dtype="float64",
        random_state=None,
    ):
        self.preference = preference
        self.n_clusters = n_clusters
        self.damping = damping
        self.max_iter = max_iter
        self.convergence_iter = convergence_iter
        self.backend = backend
        self.dtype = dtype
        self.random_state = random_state

    def _fit(self, X, constraints, preference):
        X, cons = self._validate_fit(X, constraints)
        rng = check_random_state(self.random_state)
        S = negative_sq_euclidean(X)
        self.preference_ = median_preference(S) if preference is None else float(preference)
        problem = node_problem(S, cons, self.preference_, rng, precision=self.dtype)
        self.n_meta_points_ = len(problem.groups)
        self.n_ignored_cannot_links_ = problem.n_ignored
        if problem.T.shape[0] == 1:  # one node: everything is one must-link group
            exemplar_of, clean, n_iter, converged = np.zeros(1, np.intp), True, 0, True
        else:
            result = affinity_propagation(
                problem.T,
                damping=float(self.damping),
                max_iter=int(self.max_iter),
                convergence_iter=self.convergence_iter,
                backend=self.backend,
                factors=problem.factors,
                warn=False,
                dtype=self.dtype,
            )
            n_iter, converged = result.n_iter, result.converged
            if result.exemplars.size and not problem.pairs.size:  # plain AP (incl. its equal-similarity case)
                exemplar_of, clean = result.exemplars[result.labels], True
            else:
                exemplar_of, clean = decode(result.availability, result.responsibility, problem.pairs)
            if not (converged and clean):
                exemplar_of = polish(problem.T, exemplar_of, problem.pairs)
        self.labels_, self.cluster_centers_indices_ = _point_labels(
            exemplar_of, problem.free, problem.groups, problem.meta_of, S
        )
        self.n_iter_ = n_iter
        self.converged_ = bool(converged and clean)
        if not self.converged_:
            warnings.warn(
                f"SSAP-G message passing did not settle in {self.max_iter} iterations (or its exemplars "
                "violated a cannot-link); labels are a valid constrained clustering decoded from the "
                "current beliefs. Raise max_iter or damping.",
                ConvergenceWarning,
                stacklevel=3,
            )
        return self
