"""Compiled (numba) local search of :mod:`ccbench_plugins.kmeans.local_search`: the same
arithmetic, order and tie rules as its numpy path (:func:`local_search.search_numpy`), one
compiled loop over the units instead of a Python loop. Serial on purpose (small sets, shared
machine)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _move_delta(m, w, ca, wa, cb, wb):
    """Exact change of the k-means objective when a unit (mean ``m``, weight ``w``) leaves a
    cluster (centre ``ca``, weight ``wa``, holding it) for another (``cb``, ``wb``)."""
    d_a = 0.0
    d_b = 0.0
    for t in range(len(m)):
        x = m[t] - ca[t]
        d_a += x * x
        y = m[t] - cb[t]
        d_b += y * y
    add = w * wb / (wb + w) * d_b if wb > 0 else 0.0
    rem = w * wa / (wa - w) * d_a if wa > w else 0.0
    return add - rem


@njit(cache=True)
def _shift(C, W, m, w, a, b):
    """Update centres and weights of clusters ``a`` and ``b`` for a unit moving from a to b."""
    wa = W[a] - w
    wb = W[b] + w
    for t in range(C.shape[1]):
        C[a, t] = (W[a] * C[a, t] - w * m[t]) / wa if wa > 0 else 0.0
        C[b, t] = (W[b] * C[b, t] + w * m[t]) / wb
    W[a] = wa
    W[b] = wb


@njit(cache=True)
def _recompute(mean, size, lab, C, W):
    C[:] = 0.0
    W[:] = 0.0
    for u in range(len(lab)):
        W[lab[u]] += size[u]
        for t in range(mean.shape[1]):
            C[lab[u], t] += size[u] * mean[u, t]
    for c in range(len(W)):
        if W[c] > 0:
            for t in range(mean.shape[1]):
                C[c, t] /= W[c]


@njit(cache=True)
def _relabel(indptr, nbr, blocked, u, a, b):
    for e in range(indptr[u], indptr[u + 1]):
        blocked[nbr[e], a] -= 1
        blocked[nbr[e], b] += 1


@njit(cache=True)
def local_search(mean, size, lab, k, indptr, nbr, tol, max_rounds):
    """Moves, then swaps, until none lowers the objective by more than ``tol`` (see
    :func:`ccbench_plugins.kmeans.local_search.chunklet_local_search`). ``lab`` is changed
    in place; returns ``(n_moves, n_swaps, n_rounds)``."""
    n, d = mean.shape
    C = np.zeros((k, d))
    W = np.zeros(k)
    blocked = np.zeros((n, k), dtype=np.int64)
    for u in range(n):
        for e in range(indptr[u], indptr[u + 1]):
            blocked[u, lab[nbr[e]]] += 1
    n_moves = 0
    n_swaps = 0
    rounds = 0
    while rounds < max_rounds:
        rounds += 1
        _recompute(mean, size, lab, C, W)
        improved = False
        for u in range(n):
            a = lab[u]
            best = -tol
            bb = -1
            for b in range(k):
                if b == a or blocked[u, b] > 0:
                    continue
                delta = _move_delta(mean[u], size[u], C[a], W[a], C[b], W[b])
                if delta < best:
                    best = delta
                    bb = b
            if bb >= 0:
                _shift(C, W, mean[u], size[u], a, bb)
                _relabel(indptr, nbr, blocked, u, a, bb)
                lab[u] = bb
                n_moves += 1
                improved = True
        if improved:
            continue
        ca1 = np.empty(d)  # centre of u's cluster without u
        cb1 = np.empty(d)  # centre of v's cluster with u added
        for u in range(n):
            best = -tol
            bv = -1
            a = lab[u]
            wu = size[u]
            wa1 = W[a] - wu
            for t in range(d):
                ca1[t] = (W[a] * C[a, t] - wu * mean[u, t]) / wa1 if wa1 > 0 else 0.0
            for e in range(indptr[u], indptr[u + 1]):
                v = nbr[e]
                b = lab[v]
                # each the other's only cannot-link neighbour in the other's cluster
                if v <= u or blocked[u, b] != 1 or blocked[v, a] != 1:
                    continue
                # u: a -> b, then v: b (holding u) -> a (without u)
                for t in range(d):
                    cb1[t] = (W[b] * C[b, t] + wu * mean[u, t]) / (W[b] + wu)
                delta = _move_delta(mean[u], wu, C[a], W[a], C[b], W[b]) + _move_delta(
                    mean[v], size[v], cb1, W[b] + wu, ca1, wa1
                )
                if delta < best:
                    best = delta
                    bv = v
            if bv >= 0:
                b = lab[bv]
                _shift(C, W, mean[u], wu, a, b)
                _shift(C, W, mean[bv], size[bv], b, a)
                _relabel(indptr, nbr, blocked, u, a, b)
                _relabel(indptr, nbr, blocked, bv, b, a)
                lab[u] = b
                lab[bv] = a
                n_swaps += 1
                improved = True
        if not improved:
            break
    return n_moves, n_swaps, rounds


@njit(cache=True)
def kempe_pass(mean, size, lab, k, indptr, nbr, tol):
    """One pass of Kempe-chain interchanges (see
    :func:`ccbench_plugins.kmeans.local_search.kempe_numpy`, the same rules): each unit with a
    cannot-link, in index order, takes the first improving interchange over clusters ``b`` in
    order. ``lab`` is changed in place; returns the number of interchanges made."""
    n, d = mean.shape
    S = np.zeros((k, d))
    W = np.zeros(k)
    for u in range(n):
        W[lab[u]] += size[u]
        for t in range(d):
            S[lab[u], t] += size[u] * mean[u, t]
    stamp = np.zeros(n, dtype=np.int64)
    chain = np.empty(n, dtype=np.int64)
    dS = np.empty(d)
    mark = 0
    made = 0
    for u in range(n):
        if indptr[u] == indptr[u + 1]:
            continue
        a = lab[u]
        for b in range(k):
            if b == a:
                continue
            mark += 1
            stamp[u] = mark
            chain[0] = u
            length = 1
            i = 0
            while i < length:  # breadth-first over cannot-links inside clusters a and b
                x = chain[i]
                i += 1
                for e in range(indptr[x], indptr[x + 1]):
                    y = nbr[e]
                    if stamp[y] != mark and (lab[y] == a or lab[y] == b):
                        stamp[y] = mark
                        chain[length] = y
                        length += 1
            dS[:] = 0.0
            dW = 0.0
            for i in range(length):
                x = chain[i]
                sign = 1.0 if lab[x] == a else -1.0
                dW += sign * size[x]
                for t in range(d):
                    dS[t] += sign * size[x] * mean[x, t]
            wa = W[a] - dW
            wb = W[b] + dW
            if wa <= 0 or wb <= 0:
                continue
            new_a = 0.0
            new_b = 0.0
            old_a = 0.0
            old_b = 0.0
            for t in range(d):
                new_a += (S[a, t] - dS[t]) ** 2
                new_b += (S[b, t] + dS[t]) ** 2
                old_a += S[a, t] ** 2
                old_b += S[b, t] ** 2
            # an empty cluster (a J-means jump can leave one) holds no objective: 0, not 0 / 0
            if W[a] > 0:
                old_a /= W[a]
            if W[b] > 0:
                old_b /= W[b]
            if new_a / wa + new_b / wb - old_a - old_b > tol:
                for i in range(length):
                    x = chain[i]
                    lab[x] = b if lab[x] == a else a
                for t in range(d):
                    S[a, t] -= dS[t]
                    S[b, t] += dS[t]
                W[a] = wa
                W[b] = wb
                made += 1
                break
    return made


@njit(cache=True)
def _add_edges(i, k, lab, indptr, nbr, P, Q, same, row, hard, acc):  # pragma: no cover - numba
    """One constraint type's penalties for point ``i`` (see :func:`icm_sweep`): the finite ones summed
    edge by edge into ``acc`` then added to ``row`` once, the infinite ones counted in ``hard``."""
    s, e = indptr[i], indptr[i + 1]
    for c in range(k):
        acc[c] = 0.0
    placed = False
    for t in range(s, e):
        lj = lab[nbr[t]]
        if lj < 0:
            continue
        placed = True
        q = 0.0 if same else Q[t, lj]
        for c in range(k):
            if (c == lj) == same:
                pen = P[t, c] + q if not same else P[t, c]
                if np.isinf(pen):
                    hard[c] += 1.0
                else:
                    acc[c] += pen
    if placed:
        for c in range(k):
            row[c] += acc[c]


@njit(cache=True)
def icm_sweep(cost, lab, order, mp, mn, mP, mQ, cp, cn, cP):  # pragma: no cover - numba
    """:func:`ccbench_plugins.kmeans.core.icm_sweep` compiled: the same sums in the same order
    (per point: its unary cost, plus the must-link penalties summed edge by edge, plus the
    cannot-link ones), the same hard-violation rule and the same first-index argmin; ``lab``
    is updated in place and returned."""
    k = cost.shape[1]
    row = np.empty(k)
    hard = np.empty(k)
    acc = np.empty(k)
    for i in order:
        for c in range(k):
            row[c] = cost[i, c]
            hard[c] = 0.0
        _add_edges(i, k, lab, mp, mn, mP, mQ, False, row, hard, acc)
        _add_edges(i, k, lab, cp, cn, cP, cP, True, row, hard, acc)
        fewest = hard[0]
        for c in range(1, k):
            fewest = min(fewest, hard[c])
        best = 0
        for c in range(k):
            if hard[c] > fewest:
                row[c] = np.inf
        for c in range(1, k):
            if row[c] < row[best]:
                best = c
        lab[i] = best
    return lab


@njit(cache=True)
def _block_sum(a, lo, n):  # pragma: no cover - numba
    """numpy's pairwise summation at a leaf (n <= 128): under 8 terms a plain loop, else eight
    accumulators over the multiples of 8, combined as a tree, then the rest one by one."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - (n % 8):
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True)
def _pairwise_sum_any(a, lo, n):  # pragma: no cover - numba
    """numpy's float64 sum of ``a[lo:lo + n]``, bit for bit: its pairwise summation (leaves of at
    most 128 terms, :func:`_block_sum`; above that the halves split at a multiple of 8 and added
    left + right). The recursion runs on an explicit stack: numba's cache does not load a
    self-recursive function safely (a cached recursive version crashed the process on its second
    run). A split at most halves a segment, so 128 frames hold any length."""
    if n <= 128:
        return _block_sum(a, lo, n)
    frame_lo = np.empty(128, np.int64)
    frame_n = np.empty(128, np.int64)
    frame_stage = np.empty(128, np.int64)
    values = np.empty(128)
    nv = 0
    frame_lo[0], frame_n[0], frame_stage[0] = lo, n, 0
    top = 1
    while top > 0:
        top -= 1
        start, m, stage = frame_lo[top], frame_n[top], frame_stage[top]
        if m <= 128:
            values[nv] = _block_sum(a, start, m)
            nv += 1
            continue
        if stage == 1:  # both halves done: left + right, numpy's order
            values[nv - 2] = values[nv - 2] + values[nv - 1]
            nv -= 1
            continue
        half = m // 2
        half -= half % 8
        frame_lo[top], frame_n[top], frame_stage[top] = start, m, 1
        frame_lo[top + 1], frame_n[top + 1], frame_stage[top + 1] = start + half, m - half, 0
        frame_lo[top + 2], frame_n[top + 2], frame_stage[top + 2] = start, half, 0  # popped first: left
        top += 3
    return values[0]


@njit(cache=True)
def _pairwise_sum_1(a, lo, n):  # pragma: no cover - numba
    if n <= 128:
        return _block_sum(a, lo, n)
    half = (n // 2) - (n // 2) % 8
    return _pairwise_sum_any(a, lo, half) + _pairwise_sum_any(a, lo + half, n - half)


@njit(cache=True)
def _pairwise_sum_2(a, lo, n):  # pragma: no cover - numba
    if n <= 128:
        return _block_sum(a, lo, n)
    half = (n // 2) - (n // 2) % 8
    return _pairwise_sum_1(a, lo, half) + _pairwise_sum_1(a, lo + half, n - half)


@njit(cache=True)
def pairwise_sum(a, n):  # pragma: no cover - numba
    """numpy's sum of ``a[:n]`` (:func:`_pairwise_sum_any`) with its first three levels of splits
    as plain calls, so rows up to about 1,000 terms never build the stack (which made a sweep on
    d = 216 2.4x slower)."""
    if n <= 128:
        return _block_sum(a, 0, n)
    half = (n // 2) - (n // 2) % 8
    return _pairwise_sum_2(a, 0, half) + _pairwise_sum_2(a, half, n - half)


@njit(cache=True)
def farthest_index(X, scale, p):  # pragma: no cover - numba
    """``argmax_i ((X * scale - (X * scale)[p]) ** 2).sum(1)`` without the (n, d) temporaries: the
    same products, differences, squares and pairwise row sums as numpy, so the same distances bit
    for bit and the same first index of the largest."""
    n, d = X.shape
    zp = np.empty(d)
    for t in range(d):
        zp[t] = X[p, t] * scale[t]
    buf = np.empty(d)
    best, best_i = -np.inf, 0
    for i in range(n):
        for t in range(d):
            diff = X[i, t] * scale[t] - zp[t]
            buf[t] = diff * diff
        s = 0.0 + pairwise_sum(buf, d)
        if s > best:  # strictly: the first index of the largest, as np.argmax
            best, best_i = s, i
    return best_i
