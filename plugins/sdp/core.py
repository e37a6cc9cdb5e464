"""Shared core of the SDP family: the RN-SDP problem (Okabe & Yamada 2010, eq. 6)
reduced over must-link chunklets, its feasibility analysis, and the k-medoids swap.

Why the reduction. With a unit diagonal and ``K`` PSD, ``k_ij = 1`` forces rows ``i``
and ``j`` of ``K`` to be equal (``||e_i - e_j||_K^2 = k_ii + k_jj - 2 k_ij = 0``). So
every pair inside a chunklet (the transitive closure of the must-links) has ``k = 1``,
every pair between two cannot-linked chunklets has ``k = 0``, and ``K = P K' P^T``
where ``P`` is the (n, m) chunklet indicator and ``K'`` is PSD with a unit diagonal.
``<L_bar, K> = <P^T L_bar P, K'>``. Solving for ``K'`` is the same problem without the
must-link equalities, which also removes the face of the PSD cone they pin ``K`` to
(Slater's condition fails for them), the main reason first-order methods crawl on (6).

Bounds (5)/(6) then live on chunklet pairs, and three things can happen to one:
*redundant* (the closure already fixes the value inside the bound), *conflicting* (the
closure fixes a value outside it, or two bounds mapped to one chunklet pair cross), or
*kept*. See :class:`RNProblem`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy.spatial.distance import cdist

from ccbench.base import InfeasibleConstraintsError

#: Readings of the relational-neighbour inequalities, see :func:`relational_bounds`.
READINGS = ("prose", "literal")


def gaussian_similarity(X: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """``(S, D2)``: ``s_ij = exp(-d_ij^2 / sigma^2)`` (section 4) and the squared distances."""
    d2 = cdist(X, X, "sqeuclidean")
    return np.exp(-d2 / sigma**2), d2


def neg_normalized_laplacian(S: np.ndarray) -> np.ndarray:
    """``-L_bar`` off the diagonal: ``s_ij / sqrt(d_ii d_jj)`` (the bound values of eq. 5);
    ``L_bar = I - D^-1/2 S D^-1/2`` is ``I`` minus this matrix."""
    inv = 1.0 / np.sqrt(S.sum(axis=1))
    return S * inv[:, None] * inv[None, :]


def nearest_neighbors(d2: np.ndarray, t: int) -> np.ndarray:
    """(n, t) indices of the 1st..t-th nearest neighbours of each point (itself excluded,
    ties broken by index)."""
    n = d2.shape[0]
    if t == 0:
        return np.empty((n, 0), dtype=np.intp)
    d = d2.copy()
    np.fill_diagonal(d, np.inf)
    order = np.argsort(d, axis=1, kind="stable")
    return order[:, : min(t, n - 1)]


def relational_bounds(constraints, nn: np.ndarray, reading: str):
    """Bounds of eq. (6) on original indices: ``(rows, cols, is_lower)``.

    Each bound is ``k[row, col] >= -l_bar[row, col]`` (``is_lower``) or ``<=``.

    ``reading="prose"`` follows section 3's text and Fig. 2: the relational neighbours
    of a pair ``(i, j)`` are ``r_t^j`` for ``i`` and ``r_t^i`` for ``j``; for a must-link
    they "move closer" (lower bounds ``k_{i r_t^j} >= -l_bar``, ``k_{j r_t^i} >= -l_bar``),
    for a cannot-link they "move farther" (upper bounds on the same pairs).

    ``reading="literal"`` is eq. (6) as printed: must-link ``k_{i r_t^j} <= -l_bar``,
    ``k_{j r_t^i} <= -l_bar``; cannot-link ``k_{i r_t^i} >= -l_bar``,
    ``k_{j r_t^j} >= -l_bar``. (Eq. (5) prints yet another index pattern with the same
    directions; the directions contradict the prose, and the must-link upper bounds are
    what makes the literal problem infeasible once must-links chain.)

    ``t`` runs over 1..n_neighbors (section 5: t = 2 appends four bounds per pair).
    """
    ml, cl = constraints.must_link, constraints.cannot_link
    rows, cols, lower = [], [], []

    def add(a, b, is_lower):
        rows.append(a.ravel())
        cols.append(b.ravel())
        lower.append(np.full(a.size, is_lower))

    for t in range(nn.shape[1]):
        r = nn[:, t]
        if reading == "prose":
            for pairs, is_lower in ((ml, True), (cl, False)):
                i, j = pairs[:, 0], pairs[:, 1]
                add(i, r[j], is_lower)
                add(j, r[i], is_lower)
        else:
            i, j = ml[:, 0], ml[:, 1]
            add(i, r[j], False)
            add(j, r[i], False)
            i, j = cl[:, 0], cl[:, 1]
            add(i, r[i], True)
            add(j, r[j], True)
    if not rows:
        empty = np.empty(0, dtype=np.intp)
        return empty, empty, np.empty(0, dtype=bool)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(lower)


@dataclass
class RNProblem:
    """RN-SDP (6) reduced to chunklets: minimise ``<C, K'>`` over PSD ``K'`` with
    ``lo <= K' <= up`` elementwise (``lo = up`` on fixed entries: the unit diagonal and
    the zeros between cannot-linked chunklets; +-inf where free).

    Attributes
    ----------
    C, lo, up : ndarray of shape (m, m)
    chunklet : ndarray of shape (n,)
        Chunklet index of every point; ``K = K'[chunklet][:, chunklet]``.
    counts : dict
        ``bounds`` generated (distinct (pair, direction)), ``redundant`` (implied by the
        must-link closure or the cannot-link zeros), ``conflicting`` (contradicted by
        them or crossing another bound on the same chunklet pair; dropped), ``kept``.
    """

    C: np.ndarray
    lo: np.ndarray
    up: np.ndarray
    chunklet: np.ndarray
    counts: dict = field(default_factory=dict)
    conflicts: list = field(default_factory=list)
    #: largest off-diagonal s_ij and the median nearest-neighbour distance (diagnostics)
    max_off_similarity: float = float("nan")
    median_nn_distance: float = float("nan")

    @property
    def m(self) -> int:
        return self.C.shape[0]

    def expand(self, Kc: np.ndarray) -> np.ndarray:
        return Kc[np.ix_(self.chunklet, self.chunklet)]

    def objective(self, Kc: np.ndarray) -> float:
        return float(np.vdot(self.C, Kc))


def build_problem(X, constraints, *, sigma, n_neighbors, reading="prose", on_conflict="drop") -> RNProblem:
    """The reduced problem for data ``X`` (n, d) and consistent ``constraints``.

    ``on_conflict="drop"`` drops bounds contradicted by the must-link closure (and
    crossing pairs of bounds); ``"raise"`` raises :class:`InfeasibleConstraintsError`
    naming the first one.
    """
    n = X.shape[0]
    if not constraints.is_consistent():
        raise InfeasibleConstraintsError(
            "a cannot-link joins two points of one must-link chunklet, so k_ij = 1 and "
            "k_ij = 0 at once: eq. (6) is infeasible under any reading of (5)"
        )
    S, d2 = gaussian_similarity(X, sigma)
    W = neg_normalized_laplacian(S)
    comp = constraints.chunklet_labels()
    m = int(comp.max()) + 1 if n else 0
    P = sparse.csr_matrix((np.ones(n), (np.arange(n), comp)), shape=(n, m))
    L = np.eye(n) - W
    C = np.asarray((P.T @ (P.T @ L).T).T)
    C = (C + C.T) / 2

    lo = np.full((m, m), -np.inf)
    up = np.full((m, m), np.inf)
    fixed = np.full((m, m), np.nan)
    np.fill_diagonal(fixed, 1.0)
    if constraints.n_cannot_link:
        a, b = comp[constraints.cannot_link[:, 0]], comp[constraints.cannot_link[:, 1]]
        fixed[a, b] = fixed[b, a] = 0.0

    rows, cols, is_lower = relational_bounds(constraints, nearest_neighbors(d2, n_neighbors), reading)
    counts = {"bounds": 0, "redundant": 0, "conflicting": 0, "kept": 0}
    conflicts = []
    if rows.size:
        # one bound per (pair, direction): duplicates from overlapping neighbourhoods merge
        key = np.unique(np.column_stack([np.minimum(rows, cols), np.maximum(rows, cols), is_lower]), axis=0)
        rows, cols, is_lower = key[:, 0], key[:, 1], key[:, 2].astype(bool)
        val = W[rows, cols]
        a, b = np.minimum(comp[rows], comp[cols]), np.maximum(comp[rows], comp[cols])
        fx = fixed[a, b]
        has_fixed = ~np.isnan(fx)
        # a fixed value inside the bound makes it redundant, outside it a conflict
        ok = np.where(is_lower, fx >= val, fx <= val)
        redundant = has_fixed & ok
        contra = has_fixed & ~ok
        free = ~has_fixed
        for r, c, lw, v, f in zip(rows[contra], cols[contra], is_lower[contra], val[contra], fx[contra]):
            why = "must-link closure" if f == 1.0 else "cannot-link closure"
            conflicts.append(
                f"k[{r},{c}] {'>=' if lw else '<='} {v:.4g} but the {why} forces k[{r},{c}] = {f:g}"
            )
        fa, fb, fv, fl = a[free], b[free], val[free], is_lower[free]
        np.maximum.at(lo, (fa[fl], fb[fl]), fv[fl])
        np.minimum.at(up, (fa[~fl], fb[~fl]), fv[~fl])
        crossed = lo > up
        crossing = crossed[fa, fb]
        for ca, cb in zip(*np.nonzero(np.triu(crossed))):
            conflicts.append(
                f"chunklets {ca} and {cb} (rows of K that the must-links make equal) get "
                f"k >= {lo[ca, cb]:.4g} and k <= {up[ca, cb]:.4g} from different bounds"
            )
        lo[crossed], up[crossed] = -np.inf, np.inf
        counts = {
            "bounds": int(rows.size),
            "redundant": int(redundant.sum()),
            "conflicting": int(contra.sum() + crossing.sum()),
            "kept": int(free.sum() - crossing.sum()),
        }
        if conflicts and on_conflict == "raise":
            raise InfeasibleConstraintsError(
                f"eq. (6) with reading={reading!r} is infeasible: {counts['conflicting']} "
                f"relational-neighbour bound(s) contradict the constraints, e.g. {conflicts[0]}; use "
                f"on_conflict='drop' to drop them (reported in solver_info_) or reading='prose'"
            )
        lo = np.maximum(lo, lo.T)
        up = np.minimum(up, up.T)
    has = ~np.isnan(fixed)
    lo[has] = up[has] = fixed[has]
    off = S - np.diag(np.diag(S))
    dnn = np.sqrt(d2 + np.diag(np.full(n, np.inf))).min(axis=1) if n > 1 else np.zeros(n)
    return RNProblem(C=C, lo=lo, up=up, chunklet=comp, counts=counts, conflicts=conflicts,
                     max_off_similarity=float(off.max(initial=0.0)),
                     median_nn_distance=float(np.median(dnn)) if n else float("nan"))


# --------------------------------------------------------------------------- k-medoids


def medoid_cost(dist: np.ndarray, medoids: np.ndarray) -> float:
    """Algorithm 1's ``D``: the sum over points of the distance to the nearest medoid."""
    return float(dist[:, medoids].min(axis=1).sum())


def kmedoids_swap(dist: np.ndarray, k: int, rng: np.random.Generator, *, max_iter: int = 300):
    """Algorithm 1: random initial medoids, then repeatedly make the (point, medoid)
    swap that lowers ``D`` most, until none lowers it (best-improvement PAM swap).

    Returns ``(medoids, labels, cost, n_iter, converged, costs)`` where ``costs`` is
    ``D`` after every accepted swap (never increasing).
    """
    n = dist.shape[0]
    medoids = np.sort(rng.choice(n, k, replace=False))
    cost = medoid_cost(dist, medoids)
    costs = [cost]
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        dm = dist[:, medoids]  # (n, k)
        best, best_pair = cost, None
        if k > 1:
            part = np.partition(dm, 1, axis=1)
            nearest = dm.argmin(axis=1)
        for slot in range(k):
            # distance to the nearest medoid other than this slot's
            if k > 1:
                others = np.where(nearest == slot, part[:, 1], part[:, 0])
            else:
                others = np.full(n, np.inf)
            new = np.minimum(others[:, None], dist).sum(axis=0)  # cost of swapping in each point
            new[medoids] = np.inf
            p = int(np.argmin(new))
            if new[p] < best - 1e-12 * max(1.0, abs(best)):
                best, best_pair = new[p], (slot, p)
        if best_pair is None:
            converged = True
            break
        medoids[best_pair[0]] = best_pair[1]
        cost = medoid_cost(dist, medoids)
        costs.append(cost)
    labels = dist[:, medoids].argmin(axis=1)
    return medoids, labels, cost, it, converged, np.asarray(costs)


def kmedoids_fasterpam(dist: np.ndarray, k: int, rng: np.random.Generator, *, max_iter: int = 300):
    """The ``kmedoids`` package's FasterPAM (Schubert & Rousseeuw 2021) on the same
    objective, same return tuple (``costs`` holds only the final cost)."""
    import kmedoids

    seed = int(rng.integers(2**31 - 1))
    res = kmedoids.fasterpam(dist, k, max_iter=max_iter, init="random", random_state=seed, n_cpu=1)
    medoids = np.asarray(res.medoids, dtype=np.intp)
    cost = medoid_cost(dist, medoids)
    return medoids, dist[:, medoids].argmin(axis=1), cost, int(res.n_iter), int(res.n_iter) < max_iter, np.asarray([cost])


def run_kmedoids(dist, k, rng, *, method, n_init, max_iter):
    """Best of ``n_init`` runs (lowest Algorithm 1 cost ``D``): (medoids, labels, cost, n_iter, converged)."""
    run = kmedoids_swap if method == "swap" else kmedoids_fasterpam
    best = None
    for _ in range(n_init):
        medoids, labels, cost, n_iter, converged, _ = run(dist, k, rng, max_iter=max_iter)
        if best is None or cost < best[2]:
            best = (medoids, labels, cost, n_iter, converged)
    return best
