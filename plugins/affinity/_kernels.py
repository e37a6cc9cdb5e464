"""Fused numba kernels for the affinity-propagation message core.

:func:`fused_iteration` does steps 3-4 of an Algorithm 1 iteration (see
:mod:`ccbench_plugins.affinity.core`) in ONE sweep over the rows, row-parallel
(``prange`` over blocks of rows), with no N x N temporaries. For row i:

- pass 1 over j: alpha_ij^(t) from rho^(t-1) (eq. 14, damped), using the
  column sums and diagonal of rho^(t-1) carried over from the previous sweep,
  and v_j = s_hat_ij + alpha_ij^(t) into a row buffer; then the largest and
  second-largest v_j (:func:`best_two`, one pass in independent lanes);
- pass 2 over j: rho_ij^(t) (eq. 25, damped), and max(rho_ij^(t), 0) added to
  the block's column-sum accumulator for the next iteration.

The inner loops carry no data-dependent branch (the diagonal and the argmax
column are patched after the loop), so LLVM vectorises them: 2.3x faster than
a branchy loop at N = 150 (42 vs 98 us per iteration), bit-identical output.
A row of S, A and R (3 x 8N bytes) stays in cache between the passes, so
each N x N array is read once and A, R written once per iteration: the
iteration is memory-bound at about 5 N^2 doubles of traffic.

The small pairwise-message kernels (:func:`pair_messages`,
:func:`similarity_delta`) compute Algorithm 1's gamma / omega and the per-row
s_hat deltas (eq. 24). They touch O(m N) entries for m constraints and run
serially: a parallel region costs more (thread wake-up and barrier, worse on a
loaded machine) than the ~1 ms of work at N = 2000, m = 200.

Every kernel is dtype-generic: S, A, R, the pairwise messages and the row
buffers share one dtype, float64 or float32 (the ``dtype`` option of the
estimators); numba compiles one specialisation per dtype on first use and
caches each. Only the per-block column-sum accumulators stay float64 (each
sums up to N terms; they are O(64 N), not N x N).

Compiled with ``cache=True``: the first call in a fresh environment compiles
(a few seconds) and writes the machine code to ``__pycache__`` next to this
module; later processes load it from there.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


#: Independent lanes of :func:`best_two`'s scan. One running maximum is a chain of dependent
#: compares (each waits for the last), which made the scan half of an iteration; 16 chains run
#: side by side. 16 measured fastest of 4, 8, 16 and 32 (1.2-1.7x the one-chain kernel at
#: n = 100-1,000, one thread, 2026-11-30 AMD EPYC; identical output).
SCAN_LANES = 16


@njit(cache=True, inline="always")
def best_two(v, lane_best, lane_second, lane_arg):  # pragma: no cover - numba
    """``(best, arg, second)`` of ``v``: its largest entry, that entry's FIRST index, and the largest
    entry at any other index (equal to ``best`` when ``best`` occurs twice): eq. 25's
    max_{k' != k} (alpha_ik' + s_ik') for every k at once. All ``-inf``: ``(-inf, 0, -inf)``.

    Exactly the one-pass scan ``if v[j] > best: best, arg = v[j], j`` (then ``second``) in
    :data:`SCAN_LANES` lanes (the three buffers have that length), lane l holding the entries j = l mod lanes: each lane keeps its
    largest entry with its first index and the largest of its other entries; then the lanes'
    largest entries are compared, ties to the smaller index. Maxima are exact, so the result
    is bit-identical to the one-lane scan.
    """
    m = v.shape[0]
    lanes = SCAN_LANES  # a compile-time constant: the lane loops unroll into vector code
    neg_inf = -v.dtype.type(np.inf)
    for lane in range(lanes):
        lane_best[lane] = neg_inf
        lane_second[lane] = neg_inf
        lane_arg[lane] = m
    full = m - m % lanes
    for base in range(0, full, lanes):
        for lane in range(lanes):
            x = v[base + lane]
            above = x > lane_best[lane]
            lane_second[lane] = lane_best[lane] if above else max(lane_second[lane], x)
            lane_arg[lane] = base + lane if above else lane_arg[lane]
            lane_best[lane] = x if above else lane_best[lane]
    for j in range(full, m):
        lane = j - full
        x = v[j]
        above = x > lane_best[lane]
        lane_second[lane] = lane_best[lane] if above else max(lane_second[lane], x)
        lane_arg[lane] = j if above else lane_arg[lane]
        lane_best[lane] = x if above else lane_best[lane]
    best = neg_inf
    arg = m
    for lane in range(lanes):
        if lane_best[lane] > best or (lane_best[lane] == best and lane_arg[lane] < arg):
            best = lane_best[lane]
            arg = lane_arg[lane]
    if arg == m:  # no entry above -inf: the one-lane scan keeps index 0
        arg = 0
    second = neg_inf
    for lane in range(lanes):
        if lane_arg[lane] == arg:
            second = max(second, lane_second[lane])
        else:
            second = max(second, lane_best[lane])
    return best, arg, second


@njit(cache=True, parallel=True)
def fused_iteration(
    S, A, R, delta, delta_row, pos_colsum, diag_r, diag_r_next, acc, damping, is_exemplar
):  # pragma: no cover - numba
    """alpha^(t) from rho^(t-1), then rho^(t) from s_hat^(t), alpha^(t), in place.

    Parameters
    ----------
    S : (n, n) similarities; ``s_hat[i] = S[i] + delta[delta_row[i]]`` when
        ``delta_row[i] >= 0`` (eq. 24), else ``S[i]``.
    A, R : (n, n) alpha^(t-1), rho^(t-1) on entry; alpha^(t), rho^(t) on exit.
    pos_colsum : (m,) sum_{k != j} max(rho_kj^(t-1), 0) on entry; of rho^(t) on exit.
    diag_r : (n,) rho_jj^(t-1) (read only: other rows need it all sweep).
    diag_r_next : (n,) receives rho_jj^(t).
    acc : (n_blocks, m) float64 scratch; one column-sum accumulator per row block
        (float64 whatever the message dtype: a column sums up to n terms).
    damping : mu, a scalar of S's dtype.
    is_exemplar : (n,) bool; alpha_ii^(t-1) + rho_ii^(t-1) > 0 on entry, of (t) on exit.

    Returns
    -------
    n_changed, n_exemplars : ints
        How many entries of ``is_exemplar`` changed, and how many are set (the
        driver's convergence test, without a pass over the diagonals in Python).
    """
    n, m = S.shape
    # all message arithmetic in S's dtype (float32 or float64): damping comes typed
    # from the driver and the constants are cast (a float64 literal would promote a
    # float32 loop to float64, halving its SIMD width)
    keep = S.dtype.type(1) - damping
    zero = S.dtype.type(0)
    n_blocks = acc.shape[0]
    rows_per_block = (n + n_blocks - 1) // n_blocks
    for b in prange(n_blocks):
        col_acc = acc[b]
        col_acc[:] = 0.0
        r0 = b * rows_per_block
        r1 = min(n, r0 + rows_per_block)
        s_row = np.empty(m, S.dtype)
        v = np.empty(m, S.dtype)
        lane_best = np.empty(SCAN_LANES, S.dtype)
        lane_second = np.empty(SCAN_LANES, S.dtype)
        lane_arg = np.empty(SCAN_LANES, np.intp)
        for i in range(r0, r1):
            d = delta_row[i]
            if d >= 0:
                for j in range(m):
                    s_row[j] = S[i, j] + delta[d, j]
            else:
                for j in range(m):
                    s_row[j] = S[i, j]
            on_diag = i < m
            a_self = A[i, i] if on_diag else zero
            # pass 1: availabilities (eq. 14), off-diagonal form for every j,
            # branch-free so it vectorises; the diagonal is redone after
            for j in range(m):
                upd = min(diag_r[j] + (pos_colsum[j] - max(R[i, j], zero)), zero)
                a = damping * A[i, j] + keep * upd
                A[i, j] = a
                v[j] = s_row[j] + a
            if on_diag:
                a = damping * a_self + keep * pos_colsum[i]
                A[i, i] = a
                v[i] = s_row[i] + a
            best, arg, second = best_two(v, lane_best, lane_second, lane_arg)
            # pass 2: responsibilities (eq. 25) with `best` subtracted everywhere,
            # then the argmax column (which subtracts `second`) and the diagonal
            # (left out of the column sums) put right from values saved first
            r_arg = damping * R[i, arg] + keep * (s_row[arg] - second)
            c_arg = col_acc[arg]
            c_self = col_acc[i] if on_diag else 0.0
            for j in range(m):
                r = damping * R[i, j] + keep * (s_row[j] - best)
                R[i, j] = r
                col_acc[j] += max(r, zero)
            R[i, arg] = r_arg
            col_acc[arg] = c_arg + max(r_arg, zero)
            if on_diag:
                diag_r_next[i] = R[i, i]
                col_acc[i] = c_self
    for j in range(m):
        total = 0.0
        for b in range(n_blocks):
            total += acc[b, j]
        pos_colsum[j] = total  # rounded once to the message dtype
    # serial, after the parallel region: a reduction inside prange costs more than
    # this O(n) pass
    n_changed = 0
    n_exemplars = 0
    for i in range(min(n, m)):
        exemplar = A[i, i] + diag_r_next[i] > zero
        if exemplar != is_exemplar[i]:
            n_changed += 1
            is_exemplar[i] = exemplar
        if exemplar:
            n_exemplars += 1
    return n_changed, n_exemplars


@njit(cache=True)
def pair_messages(A, R, msg, out, partner, reverse, sign, low, high):  # pragma: no cover - numba
    """Algorithm 1 lines 1-2: out[r] = sign_r * clip(alpha_k + rho_k - msg[reverse_r], low_r, high_r).

    Row r is the directed pair (i -> k), k = partner[r]; gamma (eq. 17) for
    cannot-links (sign -1, [0, q_c]), omega (eq. 20) for must-links (sign +1, [-q_m, q_m]).
    """
    n_rows, m = out.shape
    for r in range(n_rows):
        k = partner[r]
        rv = reverse[r]
        lo = low[r]
        hi = high[r]
        sg = sign[r]
        for j in range(m):
            x = A[k, j] + R[k, j] - msg[rv, j]
            if x < lo:
                x = lo
            elif x > hi:
                x = hi
            out[r, j] = sg * x


@njit(cache=True)
def similarity_delta(msg, starts, out):  # pragma: no cover - numba
    """out[p] = sum of the message rows starts[p] .. starts[p+1]-1 (the sums of eq. 24)."""
    n_points, m = out.shape
    n_rows = msg.shape[0]
    for p in range(n_points):
        r0 = starts[p]
        r1 = starts[p + 1] if p + 1 < n_points else n_rows
        for j in range(m):
            out[p, j] = msg[r0, j]
        for r in range(r0 + 1, r1):
            for j in range(m):
                out[p, j] += msg[r, j]


@njit(cache=True)
def run_iterations(S, A, R, delta, delta_row, pos_colsum, diag_r, diag_r_next, acc, damping, is_exemplar,
                   msg, msg_next, partner, reverse, sign, low, high, starts, max_iter, convergence_iter):
    # pragma: no cover - numba
    """Algorithm 1's iterations until convergence, in one compiled loop (no Python call per iteration).

    Each iteration is exactly :class:`ccbench_plugins.affinity.core._NumbaSteps`'s: the pairwise
    messages (:func:`pair_messages`, lines 1-2) and their per-row sums (:func:`similarity_delta`,
    eq. 24) when there are factors (``partner`` not empty), then :func:`fused_iteration`; the stopping
    rule is :func:`~ccbench_plugins.affinity.core.affinity_propagation`'s (``convergence_iter < 0``:
    run ``max_iter`` iterations). Returns ``(n_iter, converged, msg)``, ``msg`` the buffer holding the
    last pairwise messages.
    """
    has_factors = partner.shape[0] > 0
    stable = 0
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        if has_factors:
            pair_messages(A, R, msg, msg_next, partner, reverse, sign, low, high)
            msg, msg_next = msg_next, msg
            similarity_delta(msg, starts, delta)
        n_changed, n_exemplars = fused_iteration(S, A, R, delta, delta_row, pos_colsum, diag_r, diag_r_next,
                                                 acc, damping, is_exemplar)
        diag_r, diag_r_next = diag_r_next, diag_r
        if convergence_iter < 0:
            continue
        stable = 1 if it == 1 or n_changed else stable + 1
        if stable >= convergence_iter and n_exemplars:
            converged = True
            break
    return it, converged, msg
