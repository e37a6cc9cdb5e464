"""Pieces shared by the constrained k-means family (``cop_kmeans``, ``pck_means``,
``mpck_means``, ``constrained_em``).

- :class:`Units` -- must-link chunklets as the units that move together (every point
  not in a must-link is a unit of its own) and the cannot-link graph between units.
- :func:`neighbours` -- a CSR adjacency (index pointer, neighbour, weight) of pairs.
- :func:`initial_centres` -- ``"k-means++"``, ``"random"`` or ``"supervision"``
  (seeds from the labeled subsets or the must-link neighbourhoods: Basu et al. 2004's
  when there are at most k neighbourhoods, MPCK-means' weighted farthest-first when more).
- :func:`sq_dists`, :func:`group_sums` -- vectorised distances and per-cluster sums.

Everything takes a :class:`numpy.random.Generator` and trusts its inputs: the
estimators validate in ``fit``.

References
----------
S. Basu, A. Banerjee and R. J. Mooney, "Active semi-supervision for pairwise
constrained clustering", SDM 2004 (section 3.2, initialisation from the
neighbourhoods of the transitive closure of the must-links).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ccbench.base import InfeasibleConstraintsError
from ccbench.constraints import Constraints

INIT_OPTIONS = ("k-means++", "random", "supervision")


def sq_dists(A: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances (len(A), len(C)), clipped at 0 against rounding."""
    d = (A * A).sum(1)[:, None] - 2.0 * A @ C.T + (C * C).sum(1)[None, :]
    return np.maximum(d, 0.0, out=d)


def group_sums(labels: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Row sums of ``values`` per label: (n_groups, n_columns) (one sparse product)."""
    ind = sparse.csr_matrix(
        (np.ones(len(labels)), (labels, np.arange(len(labels)))), shape=(n_groups, len(labels))
    )
    return np.asarray(ind @ values)


def neighbours(pairs: np.ndarray, n: int, weights: np.ndarray | None = None):
    """Symmetric CSR adjacency of ``pairs`` over ``n`` nodes: ``(indptr, indices, weights)``."""
    if weights is None:
        weights = np.ones(len(pairs))
    a = np.concatenate([pairs[:, 0], pairs[:, 1]])
    b = np.concatenate([pairs[:, 1], pairs[:, 0]])
    w = np.concatenate([weights, weights])
    order = np.argsort(a, kind="stable")
    indptr = np.zeros(n + 1, dtype=np.intp)
    np.cumsum(np.bincount(a, minlength=n), out=indptr[1:])
    return indptr, b[order].astype(np.intp), w[order].astype(float)

def greedy_assign(cost, order, indptr, nbr):
    """COP-k-means's assignment step (Wagstaff et al. 2001, Table 1): the units in ``order`` (those
    with cannot-links) each take, in turn, the cheapest cluster that no already placed
    cannot-link neighbour holds; every other unit takes its cheapest cluster. ``cost`` is
    (n_units, k); ``indptr``/``nbr`` the cannot-link CSR adjacency (:func:`neighbours`).
    Returns the labels, or None when a unit has no feasible cluster (the greedy pass stranded it)."""
    lab = np.argmin(cost, axis=1)
    lab[order] = -1
    for u in order:
        taken = lab[nbr[indptr[u] : indptr[u + 1]]]
        row = cost[u].copy()
        row[taken[taken >= 0]] = np.inf
        c = int(np.argmin(row))
        if row[c] == np.inf:
            return None
        lab[u] = c
    return lab


@dataclass(frozen=True)
class Units:
    """Must-link chunklets as units; cannot-links as edges between units.

    Attributes
    ----------
    unit_of : ndarray (n_samples,)
        Unit index of every point.
    size : ndarray (n_units,)
        Points per unit.
    mean : ndarray (n_units, n_features)
        Unit means.
    cannot : ndarray (m, 2)
        Distinct cannot-link edges between units (u < v).
    """

    unit_of: np.ndarray
    size: np.ndarray
    mean: np.ndarray
    cannot: np.ndarray

    @property
    def n_units(self) -> int:
        return len(self.size)

    @classmethod
    def build(cls, X: np.ndarray, constraints: Constraints, *, drop_inconsistent: bool = False) -> "Units":
        """Raise :class:`InfeasibleConstraintsError` when a cannot-link joins a chunklet,
        or drop such cannot-links when ``drop_inconsistent``."""
        _, unit_of = np.unique(constraints.chunklet_labels(), return_inverse=True)
        n_units = int(unit_of.max()) + 1
        size = np.bincount(unit_of, minlength=n_units).astype(float)
        mean = group_sums(unit_of, X, n_units) / size[:, None]
        cl = unit_of[constraints.cannot_link]
        if drop_inconsistent:
            cl = cl[cl[:, 0] != cl[:, 1]]
        if len(cl) and np.any(cl[:, 0] == cl[:, 1]):
            i, j = constraints.cannot_link[np.flatnonzero(cl[:, 0] == cl[:, 1])[0]]
            raise InfeasibleConstraintsError(
                f"cannot-link ({i}, {j}) joins two points of one must-link chunklet: no "
                f"clustering meets these hard constraints (use a soft method such as pck_means)"
            )
        cl = np.unique(np.sort(cl, axis=1), axis=0) if len(cl) else np.empty((0, 2), np.intp)
        return cls(unit_of, size, mean, cl)


def _kmeanspp(X, k, rng, centres=None, weights=None):
    """k-means++ (Arthur & Vassilvitskii 2007) continuing from ``centres`` if given."""
    n = len(X)
    chosen = [] if centres is None else list(centres)
    if not chosen:
        p = None if weights is None else weights / weights.sum()
        chosen.append(X[rng.choice(n, p=p)])
    d2 = sq_dists(X, np.asarray(chosen)).min(1)
    while len(chosen) < k:
        w = d2 if weights is None else d2 * weights
        total = w.sum()
        i = rng.choice(n, p=w / total) if total > 0 else rng.integers(n)
        chosen.append(X[i])
        d2 = np.minimum(d2, sq_dists(X, X[i : i + 1])[:, 0])
    return np.asarray(chosen, dtype=float)


def chunklet_kmeanspp(units: Units, k: int, rng) -> np.ndarray:
    """k-means++ over the must-link chunklets: each unit one point at its mean, weighted by
    its size (the first centre drawn with probability w_u / sum w, each next one with
    probability proportional to w_u times the squared distance to the nearest chosen
    centre), so a chunklet counts as the points it holds and no start splits one."""
    return _kmeanspp(units.mean, k, rng, weights=units.size)


def _supervision_seeds(X, constraints: Constraints, k: int, rng=None) -> np.ndarray:
    """Seeds from the supervision: class means of the labeled points (the ``k`` most
    populous classes), else must-link neighbourhood centroids. With more than ``k``
    neighbourhoods (or classes, for restarts ``r >= 1`` only):

    - ``rng`` None (the first restart): for neighbourhoods, the largest, then a weighted farthest-first
      traversal (size times squared distance to the chosen ones), as MPCK-means does
      (Bilenko et al. 2004) -- not PCKMeans' rule, which takes the ``k`` largest
      (Basu et al. 2004, section 3.2; the peer package does that, deterministically);
    - ``rng`` given (restarts ``r >= 1``): the traversal randomised and opened to the
      points outside the supervision: k-means++ D^2 sampling (:func:`_kmeanspp` with
      weights) over the units, i.e. each neighbourhood (class) as one point at its
      centroid weighted by its size and every other point weighted 1 -- the first seed
      drawn with probability proportional to weight, each next one proportional to weight
      times squared distance to the chosen ones. Unlike choosing ``k`` of the
      neighbourhoods, this can seed a cluster no neighbourhood covers (soybean_small,
      PCCC's 20 % set: 5 neighbourhoods in 3 of the 4 classes; MPCK-means with 10
      restarts went from ARI 0.741 to 1.0).

    With at most ``k`` neighbourhoods all of them are used (Basu et al.) whatever
    ``rng``. At most ``k`` rows; may be fewer (the caller fills the rest)."""
    lab = constraints.labels
    if lab is not None and np.any(lab >= 0):
        known = lab >= 0
        classes, codes, counts = np.unique(lab[known], return_inverse=True, return_counts=True)
        cents = group_sums(codes, X[known], len(classes)) / counts[:, None]
        sizes = counts.astype(float)
        if rng is None or len(sizes) <= k:
            return cents[np.argsort(-sizes, kind="stable")[:k]]
    else:
        groups = constraints.chunklets()
        if not groups:
            return np.empty((0, X.shape[1]))
        sizes = np.array([len(g) for g in groups], dtype=float)
        cents = np.array([X[g].mean(0) for g in groups])
    if len(sizes) <= k:
        return cents[np.argsort(-sizes, kind="stable")]
    if rng is not None:
        # k-means++ over the units: each neighbourhood (class) at its centroid with weight its
        # size, every other point with weight 1
        free = np.ones(len(X), dtype=bool)
        if lab is not None and np.any(lab >= 0):
            free[lab >= 0] = False
        else:
            for g in groups:
                free[g] = False
        pts = np.vstack([cents, X[free]])
        return _kmeanspp(pts, k, rng, weights=np.concatenate([sizes, np.ones(int(free.sum()))]))
    # weighted farthest-first traversal from the largest neighbourhood
    pick = [int(np.argmax(sizes))]
    d2 = sq_dists(cents, cents[pick]).min(1)
    while len(pick) < k:
        nxt = int(np.argmax(sizes * d2))
        pick.append(nxt)
        d2 = np.minimum(d2, sq_dists(cents, cents[nxt : nxt + 1])[:, 0])
    return cents[pick]


def initial_centres(X, constraints: Constraints, init: str, k: int, rng, *, restart: int = 0) -> np.ndarray:
    """``k`` starting centres for restart number ``restart`` (0-based).

    ``"supervision"`` seeds from the labeled subsets or the must-link chunklets
    (:func:`_supervision_seeds`); when they give fewer than ``k`` centres, a point
    cannot-linked to every seeding neighbourhood comes next (Basu et al.) and
    k-means++ fills the rest (Basu et al. draw the rest at random). With more than
    ``k`` neighbourhoods, restart 0 takes the deterministic weighted farthest-first
    traversal (classes: the ``k`` most populous) and every later restart a weighted
    k-means++ draw over the units (neighbourhood centroids weighted by size, other
    points by 1), so ``n_init`` restarts explore (issue 38).
    """
    if init == "random":
        return X[rng.choice(len(X), size=k, replace=False)].astype(float)
    if init == "k-means++":
        return _kmeanspp(X, k, rng)
    seeds = _supervision_seeds(X, constraints, k, rng if restart > 0 else None)
    if len(seeds) < k and len(seeds) and constraints.labels is None and constraints.n_cannot_link:
        groups = constraints.chunklets()
        member = np.full(len(X), -1)
        for g_id, g in enumerate(groups):
            member[g] = g_id
        cl = constraints.cannot_link
        reach = np.zeros((len(X), len(groups)), dtype=bool)
        for a, b in ((0, 1), (1, 0)):
            hit = member[cl[:, b]] >= 0
            reach[cl[hit, a], member[cl[hit, b]]] = True
        cand = np.flatnonzero(reach.all(1) & (member < 0))
        if len(cand):
            seeds = np.vstack([seeds, X[cand[:1]]])
    if len(seeds) < k:
        seeds = _kmeanspp(X, k, rng, centres=seeds if len(seeds) else None)
    return np.asarray(seeds, dtype=float)


def icm_sweep(cost, lab, order, ml, cl, *, backend="numba"):
    """One sequential pass of iterated conditional modes over the points in ``order``.

    Each point takes the cluster minimising ``cost[i] + pair penalties`` given the
    current labels of its neighbours (-1 = not assigned yet: no penalty). ``ml`` and
    ``cl`` are ``(indptr, neighbour, P, Q)`` CSR adjacencies over directed edges with
    per-edge penalty rows: a must-link edge i -> j costs ``P[e, c] + Q[e, l_j]`` when
    ``c != l_j``; a cannot-link edge costs ``P[e, c]`` when ``c == l_j`` (``Q`` unused).
    Infinite penalties are counted apart and compared first (the w -> inf limit:
    fewest hard violations, then least finite cost), so they never meet a zero.

    ``backend="numba"`` runs the pass as one compiled loop
    (:func:`ccbench_plugins.kmeans._kernels.icm_sweep`, the same sums in the same order:
    the same labels, tested); ``"numpy"`` is the per-point loop below, kept as its reference.
    The pass is sequential by nature (each point sees the labels just given), so in Python
    it cost a call per constrained point per iteration: 67 % of an MPCK-means curve on ecoli (cProfile).
    """
    if backend == "numba":
        from ._kernels import icm_sweep as compiled

        (mp, mn, mP, mQ), (cp, cn, cP, _) = ml, cl
        cost = np.ascontiguousarray(cost, dtype=np.float64)
        k = cost.shape[1]
        mP, mQ, cP = (np.zeros((0, k)) if a is None else np.ascontiguousarray(a, dtype=np.float64)
                      for a in (mP, mQ, cP))
        lab[:] = compiled(cost, np.ascontiguousarray(lab, dtype=np.intp), np.asarray(order, dtype=np.intp),
                          np.asarray(mp, dtype=np.intp), np.asarray(mn, dtype=np.intp), mP, mQ,
                          np.asarray(cp, dtype=np.intp), np.asarray(cn, dtype=np.intp), cP)
        return lab
    if backend != "numpy":
        raise ValueError(f"backend must be 'numba' or 'numpy', got {backend!r}")
    for i in order:
        row, hard = icm_row(i, cost, lab, ml, cl)
        row[hard > hard.min()] = np.inf
        lab[i] = int(np.argmin(row))
    return lab


def icm_row(i, cost, lab, ml, cl):
    """Point ``i``'s finite cost of each cluster given its neighbours' labels, and its count
    of infinite-penalty violations per cluster (see :func:`icm_sweep`)."""
    k = cost.shape[1]
    ar = np.arange(k)
    (mp, mn, mP, mQ), (cp, cn, cP, _) = ml, cl
    row = cost[i].copy()
    hard = np.zeros(k)
    for (ip, nb, P, Q), same in (((mp, mn, mP, mQ), False), ((cp, cn, cP, None), True)):
        s, e = ip[i], ip[i + 1]
        if e == s:
            continue
        lj = lab[nb[s:e]]
        ok = lj >= 0
        if not ok.any():
            continue
        lj = lj[ok]
        pen = P[s:e][ok] if Q is None else P[s:e][ok] + Q[s:e][ok, lj][:, None]
        hit = (lj[:, None] == ar) if same else (lj[:, None] != ar)
        inf = np.isinf(pen)
        row += np.where(hit & ~inf, pen, 0.0).sum(0)
        hard += (hit & inf).sum(0)
    return row, hard


def update_centres(X, lab, centres, weights=None):
    """(Weighted) cluster means; an emptied cluster keeps its previous centre."""
    k = len(centres)
    counts = np.bincount(lab, weights=weights, minlength=k).astype(float)
    sums = group_sums(lab, X if weights is None else X * weights[:, None], k)
    return np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], centres)


def transitive_closure(constraints: Constraints) -> Constraints:
    """Every must-link inside each chunklet and every cannot-link entailed between two
    chunklets joined by a cannot-link (Basu et al. 2004, PCKMeans step 1).

    Constraints with non-unit pair weights, or inconsistent ones (a cannot-link inside
    a chunklet), are returned unchanged: the closure of those is not defined.
    """
    if not (constraints.n_must_link or constraints.n_cannot_link) or not constraints.is_consistent():
        return constraints
    if np.any(constraints.must_link_weight != 1) or np.any(constraints.cannot_link_weight != 1):
        return constraints
    comp = constraints.chunklet_labels()
    order = np.argsort(comp, kind="stable")
    bounds = np.flatnonzero(np.diff(comp[order])) + 1
    members = np.split(order, bounds)
    ml = [np.column_stack([g[i], g[j]]) for g in members if len(g) > 1 for i, j in [np.triu_indices(len(g), 1)]]
    uc = np.unique(np.sort(comp[constraints.cannot_link], axis=1), axis=0) if constraints.n_cannot_link else []
    comp_members = {int(comp[g[0]]): g for g in members}
    cl = [
        np.column_stack([np.repeat(comp_members[a], len(comp_members[b])), np.tile(comp_members[b], len(comp_members[a]))])
        for a, b in uc
    ]
    return constraints.with_pairs(np.concatenate(ml) if ml else None, np.concatenate(cl) if cl else None)


# --------------------------------------------------------------------------- colouring search

COLOUR_BUDGET = 20_000  # colour assignments one search may try before it gives up


def colour_units(cost, cannot, *, budget=COLOUR_BUDGET, priority=None):
    """Labels meeting every cannot-link, guided by ``cost``: a complete backtracking search.

    Finding labels for units joined by cannot-links with ``k = cost.shape[1]``
    clusters is colouring their graph with ``k`` colours (NP-complete, so a
    greedy pass may miss a colouring that exists). Each connected component is
    searched apart by DSATUR backtracking (Brelaz 1979): the next unit is the
    one with the fewest labels its coloured neighbours leave free (then the most
    neighbours), its free labels are tried cheapest first, and a dead end undoes
    the latest choice. Labels not yet used in the component are interchangeable,
    so only the cheapest of them is tried: the search stays complete while it
    skips the ``k!`` relabellings of one partition.

    Parameters
    ----------
    cost : ndarray (n_units, k)
        Cost of each label for each unit (units without a cannot-link take their
        cheapest label).
    cannot : ndarray (m, 2)
        Cannot-link edges between units.
    budget : int
        Assignments tried over all components before giving up.
    priority : ndarray (n_units,) or None
        None: the first unit of a component is the one with the most
        neighbours, ties by index. Given (e.g. a random permutation drawn once
        per COP-k-means restart): each component starts from its unit of
        highest priority, and later ties of saturation and degree go to the
        higher priority, so restarts reach different colourings while the
        search stays a function of ``cost`` within one run (Lloyd iterations
        can reach a fixed point). With ``k = 2`` a connected component has only
        two colourings, and the one returned is fixed by the cheapest label of
        its first unit: without a priority every restart returned the same one
        (issue 38). The search stays complete either way.

    Returns
    -------
    labels : ndarray (n_units,) or None
    status : {"found", "infeasible", "budget"}
        ``"infeasible"`` only when a component's search was exhausted: a proof
        that no labelling meets the cannot-links; ``"budget"`` proves nothing.
    """
    n, k = cost.shape
    labels = np.argmin(cost, axis=1)
    if not len(cannot):
        return labels, "found"
    g = sparse.coo_matrix((np.ones(len(cannot)), (cannot[:, 0], cannot[:, 1])), shape=(n, n))
    _, comp = sparse.csgraph.connected_components(g, directed=False)
    involved = np.unique(cannot)
    indptr, nbr, _ = neighbours(cannot, n)
    spent = 0
    for c in np.unique(comp[involved]):
        nodes = involved[comp[involved] == c]
        lab, status, steps = _dsatur(cost, nodes, indptr, nbr, k, budget - spent, priority)
        spent += steps
        if status != "found":
            return None, status
        labels[nodes] = lab
    return labels, "found"


def _dsatur(cost, nodes, indptr, nbr, k, budget, priority=None):
    """Backtracking colouring of one connected component (see :func:`colour_units`)."""
    m = len(nodes)
    local = np.full(len(cost), -1)
    local[nodes] = np.arange(m)
    adj = [local[nbr[indptr[u] : indptr[u + 1]]] for u in nodes]
    deg = np.array([len(a) for a in adj])
    lab = np.full(m, -1)
    used = np.zeros((m, k), dtype=np.intp)  # coloured neighbours holding each label
    in_comp = np.zeros(k, dtype=np.intp)  # units of the component holding each label
    c_loc = cost[nodes]
    prio = None if priority is None else priority[nodes]
    stack, steps = [], 0
    while True:
        free = lab < 0
        if not free.any():
            return lab, "found", steps
        cand = np.flatnonzero(free)
        n_free = (used[cand] == 0).sum(1)
        if priority is None:
            u = cand[np.lexsort((-deg[cand], n_free))[0]]
        elif len(cand) == m:  # the component's first unit: its highest priority
            u = cand[np.argmax(prio[cand])]
        else:
            u = cand[np.lexsort((-prio[cand], -deg[cand], n_free))[0]]
        cols = np.flatnonzero(used[u] == 0)
        fresh = cols[in_comp[cols] == 0]
        cols = cols[in_comp[cols] > 0]
        if len(fresh):
            cols = np.append(cols, fresh[np.argmin(c_loc[u, fresh])])
        stack.append((u, list(cols[np.argsort(c_loc[u, cols], kind="stable")])))
        while stack:  # take the next untried label of the deepest choice, undoing as needed
            u, todo = stack[-1]
            if lab[u] >= 0:
                used[adj[u], lab[u]] -= 1
                in_comp[lab[u]] -= 1
                lab[u] = -1
            if not todo:
                stack.pop()
                continue
            if steps >= budget:
                return None, "budget", steps
            c = todo.pop(0)
            lab[u] = c
            used[adj[u], c] += 1
            in_comp[c] += 1
            steps += 1
            break
        else:
            return None, "infeasible", steps
