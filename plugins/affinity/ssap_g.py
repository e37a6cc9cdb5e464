r"""``ssap_g``: Givoni & Frey's semi-supervised affinity propagation with meta-points.

As described in Arzeno & Vikalo (2015), Section 2.1 (eq. 1), after Givoni &
Frey (AISTATS 2009).

Model (our reading, choices marked *)
-------------------------------------
- One meta-point (MTP) per must-link group P_m (a chunklet: the transitive
  closure of the must-links) and one per cannot-link endpoint that is in no
  group (P_m = {i}). The augmented problem has N + M nodes, MTPs last.
- s(i, MTP_m) = 0 if i in P_m, else max_{j in P_m} s(i, j) (eq. 1). The MTP's
  own choices use the same values by symmetry: s(MTP_m, j) = s(j, MTP_m).
- Meta-points are *relays*: a point may choose MTP_m as its exemplar, and
  MTP_m in turn chooses a data point as its exemplar; the point's cluster is
  that of MTP_m's exemplar. MTPs cannot choose MTPs (themselves included):
  s(MTP, MTP) = -inf. MTP columns carry no self-selection factor E (eq. 3), so
  their availabilities are 0; point columns keep E over all choosers, MTPs
  included.
- (*) A member of P_m may choose only MTP_m or itself (s = -inf elsewhere):
  the paper notes members "necessarily choose the meta-point", and choosing
  itself keeps a member eligible to be the group's exemplar (s(MTP_m, i) = 0).
- Cannot-link factors join two MTPs a, b (those of the two endpoints) for every
  exemplar j: CL_ab^j(c_aj, c_bj) = -inf if c_aj = c_bj = 1, else 0.

Cannot-link messages (max-sum, as eqs. 15-17 with q -> inf)
-----------------------------------------------------------
Let lam_ba^j(c) be the message from variable c_bj to the factor, lam = lam(1) - lam(0)
= alpha_bj + rho_bj - gamma_ba^j (the analogue of eq. 23: everything c_bj
hears except this factor). Then

    gamma_ab^j(1) = max_c [CL(1, c) + lam_ba^j(c)] = lam_ba^j(0)            (c = 1 forbidden)
    gamma_ab^j(0) = max_c [CL(0, c) + lam_ba^j(c)] = max(lam_ba^j(0), lam_ba^j(1))
    gamma_ab^j    = gamma(1) - gamma(0) = -max(0, lam_ba^j)                  (<= 0)

which is eq. 17 at q_c = inf. The factor enters the responsibility of MTP a
through s_hat(a, j) = s(a, j) + sum_b gamma_ab^j (eq. 24), and the availability
and responsibility updates are those of AP on the augmented matrix (eqs. 14,
25), so the shared core (:mod:`ccbench_plugins.affinity.core`) runs it with hard
cannot-link factors between MTP rows and ``n_exemplar_columns = N``.

Decoding
--------
Psi = {k <= N : alpha_kk + rho_kk > 0}. Each MTP takes the exemplar in Psi with the
largest alpha + rho that no cannot-linked MTP has already taken (MTPs in
decreasing order of that belief) (*); if every exemplar in Psi is taken, the
best untaken point becomes a new exemplar. Points that are in no group take
argmax over Psi and the MTPs of alpha + rho, following an MTP to its exemplar;
members of P_m take MTP_m's exemplar. Hence with consistent constraints every
must-link group shares one label and no cannot-link pair shares one.

Cannot-links inside one must-link group (inconsistent constraints) cannot be
expressed (a factor cannot join an MTP to itself) and are ignored, as the
paper notes (Section 4.2); their count is ``n_ignored_cannot_links_``.
"""

from __future__ import annotations

import numpy as np

from ccbench.base import ConstrainedClusterer, check_random_state

from .core import AP_PARAMETER_CONSTRAINTS, affinity_propagation, ap_similarity, pair_factors


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


def augmented_similarity(S, groups, meta_of):
    """The (N + M) x (N + M) similarity of the meta-point model (eq. 1 and the module notes)."""
    n, n_meta = S.shape[0], len(groups)
    aug = np.full((n + n_meta, n + n_meta), -np.inf)
    aug[:n, :n] = S
    for m, g in enumerate(groups):
        col = S[:, g].max(axis=1) if g.size > 1 else S[:, g[0]].copy()
        col[g] = 0.0
        aug[:n, n + m] = col
        aug[n + m, :n] = col
    members = np.flatnonzero(meta_of >= 0)
    aug[members, :] = -np.inf
    aug[members, members] = S[members, members]
    aug[members, n + meta_of[members]] = 0.0
    return aug


def _decode(A, R, n, groups, meta_of, mtp_pairs):
    """Labels from the augmented messages (module notes, Decoding); all -1 if Psi is empty."""
    n_meta = len(groups)
    psi = np.flatnonzero((np.diagonal(A)[:n] + np.diagonal(R)[:n]) > 0)
    if psi.size == 0:
        return np.full(n, -1, dtype=np.intp), psi
    neighbours = [[] for _ in range(n_meta)]
    for a, b in mtp_pairs:
        neighbours[a].append(b)
        neighbours[b].append(a)
    mtp_exemplar = np.full(n_meta, -1, dtype=np.intp)
    rows = A[n:, :n] + R[n:, :n]
    order = np.argsort(-rows[:, psi].max(axis=1), kind="stable")
    for a in order:
        taken = {mtp_exemplar[b] for b in neighbours[a]} - {-1}
        for pool in (psi, np.arange(n)):
            free = pool[~np.isin(pool, list(taken))]
            if free.size:
                mtp_exemplar[a] = free[np.argmax(rows[a, free])]
                break
    # Free points: argmax over Psi and MTP columns; an MTP leads to its exemplar.
    cand = np.concatenate([psi, n + np.arange(n_meta)])
    pick = cand[np.argmax(A[:n, cand] + R[:n, cand], axis=1)]
    exemplar_of = pick.copy()
    via_meta = pick >= n
    exemplar_of[via_meta] = mtp_exemplar[pick[via_meta] - n]
    exemplar_of[psi] = psi
    members = meta_of >= 0
    exemplar_of[members] = mtp_exemplar[meta_of[members]]
    centers, labels = np.unique(exemplar_of, return_inverse=True)
    return labels.astype(np.intp), centers


class SSAPG(ConstrainedClusterer):
    """Semi-supervised affinity propagation with meta-points (Givoni & Frey 2009).

    Must-links are enforced through meta-points (shared exemplar), cannot-links
    through hard factors between meta-points (see the module docstring for the
    model, the derivation of the messages and the decoding).

    Parameters
    ----------
    preference : float or None, default=None
        s(k, k) for data points; ``None`` is the median off-diagonal similarity.
    damping : float in [0.5, 1), default=0.75
    max_iter : int, default=1000
    convergence_iter : int or None, default=100
    backend : {"auto", "numba", "numpy"}, default="auto"
    random_state : int, Generator or None, default=None
        Seeds the tie-breaking noise on the data-point similarities.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster index 0..K-1; all -1 if no exemplar emerged.
    cluster_centers_indices_ : ndarray of shape (K,)
        The data point each cluster's members lead to.
    n_meta_points_ : int
    n_ignored_cannot_links_ : int
        Cannot-links inside a must-link group (inconsistent constraints).
    preference_ : float
    n_iter_ : int
    converged_ : bool

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

    _parameter_constraints = dict(AP_PARAMETER_CONSTRAINTS)

    def __init__(
        self,
        *,
        preference=None,
        damping=0.75,
        max_iter=1000,
        convergence_iter=100,
        backend="auto",
        random_state=None,
    ):
        self.preference = preference
        self.damping = damping
        self.max_iter = max_iter
        self.convergence_iter = convergence_iter
        self.backend = backend
        self.random_state = random_state

    def fit(self, X, y=None, *, constraints=None):
        X, cons = self._validate_fit(X, constraints)
        rng = check_random_state(self.random_state)
        n = X.shape[0]
        S, self.preference_ = ap_similarity(X, self.preference, rng)
        groups, meta_of = meta_points(cons)
        cl = cons.cannot_link
        a, b = meta_of[cl[:, 0]], meta_of[cl[:, 1]]
        keep = a != b
        self.n_ignored_cannot_links_ = int(np.count_nonzero(~keep))
        mtp_pairs = np.unique(np.sort(np.c_[a[keep], b[keep]], axis=1), axis=0).reshape(-1, 2)
        aug = augmented_similarity(S, groups, meta_of)
        del S
        factors = pair_factors(
            np.empty((0, 2), dtype=np.intp), n + mtp_pairs, penalty_must=0.0, penalty_cannot=np.inf
        )
        result = affinity_propagation(
            aug,
            damping=float(self.damping),
            max_iter=int(self.max_iter),
            convergence_iter=self.convergence_iter,
            backend=self.backend,
            factors=factors,
            n_exemplar_columns=n,
        )
        self.labels_, self.cluster_centers_indices_ = _decode(
            result.availability, result.responsibility, n, groups, meta_of, mtp_pairs
        )
        self.n_meta_points_ = len(groups)
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        return self
