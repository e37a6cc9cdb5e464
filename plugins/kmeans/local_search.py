"""Local search over must-link chunklets that keeps every constraint (COP-k-means, issue 52).

A clustering of the units (:class:`core.Units`: chunklet ``u`` with mean ``m_u`` and
weight ``w_u``, its number of points) has the k-means objective

    J = sum_u sum_{i in u} ||x_i - m_u||^2  +  sum_c sum_{u in c} w_u ||m_u - c_c||^2,

with ``c_c`` the weighted mean of cluster ``c`` (weight ``W_c = sum_{u in c} w_u``); the
first term does not depend on the labels. Moving unit ``u`` from cluster ``a`` to ``b``
changes ``J`` exactly by (Hartigan & Wong 1979, with unit weights generalised to ``w_u``;
Spaeth 1980)

    delta(u, a -> b) = w_u W_b / (W_b + w_u) ||m_u - c_b||^2
                     - w_u W_a / (W_a - w_u) ||m_u - c_a||^2,

the first term 0 when ``b`` is empty and the second 0 when ``u`` is alone in ``a`` (then
``c_a = m_u``). A swap of ``u`` (in ``a``) and ``v`` (in ``b``) is the move of ``u`` to
``b`` followed by the move of ``v`` to ``a`` with the centres and weights updated in
between; its delta is the sum of the two (exact, not the first-order sum of independent
moves). Swaps are tried only between two units joined by a cannot-link, each the other's
only cannot-link neighbour in the other's cluster: exactly the exchanges a cannot-link
blocks as two moves (each move alone is infeasible). Swaps between unconstrained units
(both moves feasible, each not improving) are left out: they cost O(n_units^2 d) per pass
(tens of seconds per fit at 2,000 units) and rarely improve a move-optimal clustering;
the kicks of :func:`explore` reach further instead. A pass of swaps costs O(m d) for ``m``
cannot-links.

The search alternates: a pass of moves (each unit in index order takes its best improving
move, if any), repeated while some move was made; when no move improves, one pass of swaps
(each unit ``u`` in index order takes its best improving swap with a later unit ``v``
cannot-linked to it);
then moves again; it stops when neither improves. A move or swap is only considered when it
keeps every cannot-link: ``u`` may go to ``b`` only when no cannot-link neighbour of ``u``
is in ``b`` (for a swap, the partner ``v`` itself excepted, since it leaves ``b``).
Must-links hold by construction (chunklets move whole). "Improves" means ``delta < -tol``
with ``tol = 1e-12 * sum_u w_u ||m_u - mean||^2`` (rounding must not make the search
cycle), so ``J`` strictly decreases and the search ends.

When neither moves nor swaps improve, a pass of **Kempe-chain interchanges** (the classic
neighbourhood of graph-colouring local search; Kempe 1879, used for timetabling by Thompson &
Dowsland 1998): for a unit ``u`` in cluster ``a`` and another cluster ``b``, the chain
``K(u, a, b)`` is the connected component of ``u`` in the cannot-link graph restricted to the
units of ``a`` and ``b``; exchanging ``a`` and ``b`` on every unit of ``K`` keeps every
cannot-link (an edge inside ``K`` joins an ``a`` to a ``b`` and still does; a neighbour
outside ``K`` of a unit of ``K`` is in neither cluster, or it would be in ``K``). A swap is the
chain of two units; a chain of three or more is an exchange no sequence of feasible moves and
swaps makes without first raising the objective. With ``S_c = sum_{u in c} w_u m_u`` the
objective is ``const - sum_c ||S_c||^2 / W_c``, so the exchange (``dS``, ``dW``: the chain's
``a`` part less its ``b`` part) changes it by

    delta(K) = ||S_a||^2 / W_a + ||S_b||^2 / W_b
             - ||S_a - dS||^2 / (W_a - dW) - ||S_b + dS||^2 / (W_b + dW),

taken when ``delta < -tol`` (never when it empties a cluster). Units with a cannot-link, in
index order, each take the first improving chain over ``b`` in order; then moves and swaps
again, until a pass of chains makes none. Measured on PCCC's spectf 5 % set (k = 2): the
local optima one restart of moves, swaps and 20 J-means jumps ends in differ from the optimum
by chains of cannot-linked units; with the chains 20 of 20 default fits reach the optimum
10467.36 (57 % of 40 without), and PC-SOS-SDP's wine files (1, 0/3/4) are solved to the best
objective any method found from every seed (issue 52, reports/README.md).

The default path is the compiled loop :func:`ccbench_plugins.kmeans._kernels.local_search`
(and :func:`~ccbench_plugins.kmeans._kernels.kempe_pass`);
:func:`search_numpy` and :func:`kempe_numpy` are the same search in numpy (vectorised over
clusters for moves, over partners for swaps, over the graph for chains), kept as the second
route the tests compare against.

References
----------
J. A. Hartigan and M. A. Wong, "Algorithm AS 136: a k-means clustering algorithm",
Applied Statistics 28(1), 1979 (the transfer criterion).
J. M. Thompson and K. A. Dowsland, "A robust simulated annealing based examination
timetabling system", Computers & Operations Research 25(7-8), 1998 (Kempe-chain neighbourhoods).
"""

from __future__ import annotations

import numpy as np

from .core import Units, greedy_assign, neighbours, sq_dists

MAX_ROUNDS = 10_000  # passes; each strictly lowers the objective, so this only guards bugs


def _tolerance(units: Units) -> float:
    centred = units.mean - np.average(units.mean, axis=0, weights=units.size)
    return 1e-12 * float((units.size * (centred**2).sum(1)).sum()) + 1e-300


def _prepare(units: Units):
    """Centred unit means (the objective is translation invariant; distances lose less to
    rounding), weights, the cannot-link CSR adjacency and the tolerance."""
    mean = np.ascontiguousarray(units.mean - np.average(units.mean, axis=0, weights=units.size))
    indptr, nbr, _ = neighbours(units.cannot, units.n_units)
    return mean, units.size.astype(float), indptr.astype(np.int64), nbr.astype(np.int64), _tolerance(units)


def _search(prep, lab, k, backend):
    mean, size, indptr, nbr, tol = prep
    if backend == "numba":
        from ._kernels import kempe_pass, local_search

        def moves_and_swaps():
            return local_search(mean, size, lab, k, indptr, nbr, tol, MAX_ROUNDS)[:2]

        def chains():
            return kempe_pass(mean, size, lab, k, indptr, nbr, tol)
    elif backend == "numpy":
        def moves_and_swaps():
            return search_numpy(mean, size, lab, k, indptr, nbr, tol)

        def chains():
            return kempe_numpy(mean, size, lab, k, indptr, nbr, tol)
    else:
        raise ValueError(f"backend must be 'numba' or 'numpy', got {backend!r}")
    n_moves = n_swaps = n_chains = 0
    for _ in range(MAX_ROUNDS):
        moves, swaps = moves_and_swaps()
        made = chains()
        n_moves, n_swaps, n_chains = n_moves + int(moves), n_swaps + int(swaps), n_chains + int(made)
        if made == 0:
            break
    return n_moves, n_swaps, n_chains


def chunklet_local_search(units: Units, lab: np.ndarray, k: int, *, backend: str = "numba"):
    """Improve unit labels ``lab`` by constraint-keeping moves, swaps and Kempe-chain
    interchanges (module docstring).

    Returns ``(labels, n_moves, n_swaps, n_chains)``; ``labels`` is a new array.
    """
    lab = np.array(lab, dtype=np.int64)
    n_moves, n_swaps, n_chains = _search(_prepare(units), lab, k, backend)
    return lab, n_moves, n_swaps, n_chains


def unit_objective(mean, size, lab, k):
    """sum_u w_u ||m_u - c_{l(u)}||^2: the k-means objective less its label-free part."""
    C, _ = _centres(mean, size, lab, k)
    return float((size * ((mean - C[lab]) ** 2).sum(1)).sum())


def explore(units: Units, lab: np.ndarray, k: int, rng, n_kicks: int, *, backend: str = "numba"):
    """Iterated local search: :func:`chunklet_local_search`, then ``n_kicks`` times a feasible
    J-means jump, each followed by the local search and kept only when it lowers the
    objective by more than the tolerance. Returns ``(labels, n_kept)``.

    The jump is Hansen & Mladenovic's (2001, "J-Means", section 3): centroid ``j``, drawn
    uniformly, is relocated to a unit drawn with probability proportional to
    ``w_u ||m_u - c_{l(u)}||^2`` (the worst-served mass, as in k-means++; units of ``j``
    excluded), and every unit is reassigned to its nearest centroid, here feasibly: COP-k-means's
    greedy step (:func:`core.greedy_assign`, the cannot-linked units in a random order). A jump
    that strands a unit is dropped. Choice measured on PCCC's spectf 5 % set (k = 2), before the
    Kempe chains were added to the search: the previous kick, which emptied cluster ``j`` into
    the others before reseeding it, reached the optimum 10467.36 in 32 % of 40 default fits
    (mean 10472.62), the jump in 57 % (mean 10468.43); it also lowers the mean on PC-SOS-SDP's
    hardest wine and connectionist files (reports/README.md, issue 52)."""
    prep = _prepare(units)
    mean, size, indptr, nbr, tol = prep
    constrained = np.unique(units.cannot)
    lab = np.array(lab, dtype=np.int64)
    _search(prep, lab, k, backend)
    best = unit_objective(mean, size, lab, k)
    kept = 0
    for _ in range(n_kicks):
        C, _ = _centres(mean, size, lab, k)
        j = int(rng.integers(k))
        d2 = size * ((mean - C[lab]) ** 2).sum(1)
        d2[lab == j] = 0.0
        total = d2.sum()
        seed = int(rng.choice(len(lab), p=d2 / total)) if total > 0 else int(rng.integers(len(lab)))
        C[j] = mean[seed]
        trial = greedy_assign(size[:, None] * sq_dists(mean, C), rng.permutation(constrained), indptr, nbr)
        if trial is None:
            continue
        trial = trial.astype(np.int64)
        _search(prep, trial, k, backend)
        obj = unit_objective(mean, size, trial, k)
        if obj < best - tol:
            lab, best, kept = trial, obj, kept + 1
    return lab, kept


def move_deltas(m, w, C, W, a):
    """delta(u, a -> b) for every cluster ``b`` (module docstring); ``inf`` at ``b == a``."""
    d2 = ((m - C) ** 2).sum(1)
    add = np.where(W > 0, w * W / np.maximum(W + w, 1e-300) * d2, 0.0)
    rem = w * W[a] / (W[a] - w) * d2[a] if W[a] > w else 0.0
    out = add - rem
    out[a] = np.inf
    return out


def _centres(mean, size, lab, k):
    W = np.bincount(lab, weights=size, minlength=k)
    S = np.eye(k)[:, lab] @ (size[:, None] * mean)
    return np.where(W[:, None] > 0, S / np.where(W > 0, W, 1.0)[:, None], 0.0), W


def search_numpy(mean, size, lab, k, indptr, nbr, tol):
    """The numpy route of the search (changes ``lab`` in place); ``(n_moves, n_swaps)``."""
    n = len(lab)
    blocked = np.zeros((n, k), dtype=np.int64)
    src = np.repeat(np.arange(n), np.diff(indptr))
    np.add.at(blocked, (src, lab[nbr]), 1)
    n_moves = n_swaps = 0

    def relabel(u, a, b):
        blocked[nbr[indptr[u] : indptr[u + 1]], a] -= 1
        blocked[nbr[indptr[u] : indptr[u + 1]], b] += 1
        lab[u] = b

    for _ in range(MAX_ROUNDS):
        C, W = _centres(mean, size, lab, k)
        improved = False
        for u in range(n):
            a = lab[u]
            delta = move_deltas(mean[u], size[u], C, W, a)
            delta[blocked[u] > 0] = np.inf
            b = int(np.argmin(delta))
            if delta[b] < -tol:
                C, W = _shifted(C, W, mean[u], size[u], a, b)
                relabel(u, a, b)
                n_moves += 1
                improved = True
        if improved:
            continue
        for u in range(n - 1):
            a, wu = lab[u], size[u]
            v = nbr[indptr[u] : indptr[u + 1]]
            b = lab[v]
            ok = (v > u) & (blocked[u, b] == 1) & (blocked[v, a] == 1)
            if not ok.any():
                continue
            v, b = v[ok], b[ok]
            d1 = move_deltas(mean[u], wu, C, W, a)[b]
            C1, W1 = _shifted(C, W, mean[u], wu, a, None)  # u added to every other cluster
            d2v = ((mean[v] - C1[b]) ** 2).sum(1)
            d2a = ((mean[v] - C1[a]) ** 2).sum(1)
            add = size[v] * W1[a] / (W1[a] + size[v]) * d2a if W1[a] > 0 else 0.0
            rem = size[v] * W1[b] / (W1[b] - size[v]) * d2v
            delta = d1 + add - rem
            j = int(np.argmin(delta))
            if delta[j] < -tol:
                bv, bb = int(v[j]), int(b[j])
                C, W = _shifted(C, W, mean[u], wu, a, bb)
                C, W = _shifted(C, W, mean[bv], size[bv], bb, a)
                relabel(u, a, bb)
                relabel(bv, bb, a)
                n_swaps += 1
                improved = True
        if not improved:
            break
    return n_moves, n_swaps


def kempe_numpy(mean, size, lab, k, indptr, nbr, tol):
    """The numpy route of one pass of Kempe-chain interchanges (module docstring; changes
    ``lab`` in place); returns the number made. A chain is a connected component of the
    cannot-link graph restricted to two clusters (scipy's ``connected_components``)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(lab)
    src = np.repeat(np.arange(n), np.diff(indptr))
    weighted = size[:, None] * mean
    S = np.eye(k)[:, lab] @ weighted
    W = np.bincount(lab, weights=size, minlength=k)
    made = 0
    for u in np.flatnonzero(np.diff(indptr)):
        a = lab[u]
        for b in range(k):
            if b == a:
                continue
            inside = (lab == a) | (lab == b)
            keep = inside[src] & inside[nbr]
            graph = csr_matrix((np.ones(int(keep.sum())), (src[keep], nbr[keep])), shape=(n, n))
            _, component = connected_components(graph, directed=False)
            chain = np.flatnonzero(component == component[u])
            sign = np.where(lab[chain] == a, 1.0, -1.0)
            dW = float(sign @ size[chain])
            dS = (sign[:, None] * weighted[chain]).sum(0)
            wa, wb = W[a] - dW, W[b] + dW
            if wa <= 0 or wb <= 0:
                continue
            gain = ((S[a] - dS) ** 2).sum() / wa + ((S[b] + dS) ** 2).sum() / wb
            if gain - _cluster_term(S[a], W[a]) - _cluster_term(S[b], W[b]) > tol:
                lab[chain] = np.where(lab[chain] == a, b, a)
                S[a], S[b], W[a], W[b] = S[a] - dS, S[b] + dS, wa, wb
                made += 1
                break
    return made


def _cluster_term(s, w):
    """``|s|^2 / w``, a cluster's share of the objective from its weighted sum; 0 for an empty cluster
    (which a J-means jump can leave), where the quotient is 0 / 0."""
    return float((s ** 2).sum() / w) if w > 0 else 0.0


def _shifted(C, W, m, w, a, b):
    """Centres and weights after a unit leaves ``a`` for ``b`` (``b`` None: for every
    cluster other than ``a``, the centre it would have with the unit added)."""
    C, W = C.copy(), W.copy()
    wa = W[a] - w
    ca = (W[a] * C[a] - w * m) / wa if wa > 0 else np.zeros_like(m)
    if b is None:
        C = (W[:, None] * C + w * m) / (W + w)[:, None]
        W = W + w
    else:
        C[b] = (W[b] * C[b] + w * m) / (W[b] + w)
        W[b] = W[b] + w
    C[a], W[a] = ca, wa
    return C, W
