"""Compiled (numba) sweep for :mod:`ccbench_plugins.scap`, the same arithmetic as its numpy path.

One sweep of random sequential updates (Leone et al. 2008, section 2.4) in one
compiled loop: similarity row (from ``X`` in linear mode, from the stored
matrix in dense mode), availabilities (eq. 19), the two best fields (eq. 16),
requests (eq. 17) and the running sums u (eq. 18). Memory per update is O(N).
"""

from __future__ import annotations

import numpy as np
from numba import njit


#: Lanes of :func:`_best_two` (a compile-time constant, so its lane loops unroll into vector code).
SCAN_LANES = 16


@njit(cache=True, inline="always")
def _best_two(v, lane_best, lane_second, lane_arg):  # pragma: no cover - numba
    """``(best, arg, second)``: the largest entry of ``v``, its FIRST index, the largest at any other.

    The same scan as ``ccbench_plugins.affinity._kernels.best_two`` (tested against one reference:
    ``tests/test_search_speedups.py``), copied, not imported: a family imports only its own folder,
    and numba's cache does not see a change to a function compiled into another module's cache
    (an edit there would leave this kernel running the old code). One running maximum is a chain of
    dependent compares; :data:`SCAN_LANES` chains run side by side, lane l holding the entries
    j = l mod lanes, then the lanes' maxima are compared, ties to the smaller index. Exact.
    """
    m = v.shape[0]
    lanes = SCAN_LANES
    neg_inf = -np.inf
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
    if arg == m:
        arg = 0
    second = neg_inf
    for lane in range(lanes):
        if lane_arg[lane] == arg:
            second = max(second, lane_second[lane])
        else:
            second = max(second, lane_best[lane])
    return best, arg, second


@njit(cache=True)
def _point_row(X, XT, sq_norms, point, euclidean, out):
    """out[j] = -||x_point - x_j||^2 (Gram identity on the X the caller centred, clipped at 0), or -||.|| if euclidean.

    ``XT`` is ``X.T`` made contiguous so the inner loop runs along j (vectorised).
    """
    n, d = X.shape
    out[:] = 0.0
    for f in range(d):
        xf = X[point, f]
        for j in range(n):
            out[j] += xf * XT[f, j]
    for j in range(n):
        v = 2.0 * out[j] - sq_norms[point] - sq_norms[j]
        v = min(v, 0.0)
        out[j] = -np.sqrt(-v) if euclidean else v


@njit(cache=True)
def sweep(
    order, p, X, XT, sq_norms, euclidean, variables, macro_members, macro_starts, plain,
    S, R, best, exemplar, second, u, started,
):
    """Update every variable once in ``order``; the state arrays are updated in place.

    Dense mode passes ``S`` (n_var, n_cand) and ``R`` (n_var, n_cand); linear
    mode passes 0 x 0 arrays and the rows come from ``X``.
    """
    n_var = best.shape[0]
    n_cand = u.shape[0]
    n_macro = macro_starts.shape[0]
    dense = S.shape[0] > 0
    s = np.empty(n_cand)
    full = np.empty(X.shape[0])
    pos_old = np.empty(n_cand)
    field = np.empty(n_cand)
    lane_best = np.empty(SCAN_LANES)
    lane_second = np.empty(SCAN_LANES)
    lane_arg = np.empty(SCAN_LANES, np.intp)
    for i in order:
        if dense:
            s[:] = S[i]
        elif plain:
            _point_row(X, XT, sq_norms, variables[i], euclidean, s)
        else:
            _point_row(X, XT, sq_norms, variables[i], euclidean, full)
            for k in range(n_var):
                s[k] = full[variables[k]]
            for g in range(n_macro):
                end = macro_members.shape[0] if g == n_macro - 1 else macro_starts[g + 1]
                m = -np.inf
                for t in range(macro_starts[g], end):
                    if full[macro_members[t]] > m:
                        m = full[macro_members[t]]
                s[n_var + g] = m
        # Requests before the update (stored, or eq. 17 from the site fields).
        if dense:
            for k in range(n_cand):
                pos_old[k] = max(R[i, k], 0.0)
        elif started[i]:
            b = best[i]
            for k in range(n_cand):
                pos_old[k] = max(s[k] - b, 0.0)
            c_old = exemplar[i]
            pos_old[c_old] = max(s[c_old] - second[i], 0.0)
        else:
            pos_old[:] = 0.0
        pos_old[i] = 0.0
        # Availabilities (eq. 19) and the two best fields (eq. 16) over k != i: one vectorised
        # pass, then the scan in lanes (i's own field set to -inf takes no part).
        for k in range(n_cand):
            field[k] = s[k] + min(u[k] - pos_old[k] - p, 0.0)
        field[i] = -np.inf
        h1, c, h2 = _best_two(field, lane_best, lane_second, lane_arg)
        if h1 == -np.inf:  # no field above -inf: no exemplar chosen
            c = -1
        # New requests (eq. 17) and running sums u (eq. 18): r = s - h1 everywhere, then the
        # exemplar's (s - h2) and i's own (0) put right from the sums saved first.
        u_c = u[c] if c >= 0 else 0.0
        u_i = u[i]
        for k in range(n_cand):
            r_new = s[k] - h1
            u[k] = (u[k] + max(r_new, 0.0)) - pos_old[k]
            if dense:
                R[i, k] = r_new
        if c >= 0:
            r_new = s[c] - h2
            u[c] = (u_c + max(r_new, 0.0)) - pos_old[c]
            if dense:
                R[i, c] = r_new
        u[i] = (u_i + max(0.0, 0.0)) - pos_old[i]
        if dense:
            R[i, i] = 0.0
        best[i], exemplar[i], second[i] = h1, c, h2
        started[i] = True


@njit(cache=True)
def _log1pexp(x):
    """log(1 + e^x) without overflow (the numpy path's :func:`~ccbench_plugins.scap.scap._log1pexp`)."""
    return max(x, 0.0) + np.log1p(np.exp(-abs(x)))


@njit(cache=True)
def sweep_beta(order, p, beta, log_q, S, R, best, exemplar, second, u):
    """One finite-temperature sweep (eqs. 12-13 in log form), dense mode only; in place.

    Same arithmetic as :func:`ccbench_plugins.scap.scap._update_point_beta`: ``u`` holds
    u_k = sum_l sp(r_{l->k}) with sp(r) = log(1 + e^{beta r}) / beta; the availability is
    a_{k->i} = -log(1 + e^{beta (p - u_k + sp(r_{i->k})) + log_q}) / beta with
    log_q = log(1 - e^{-beta p}); the requests are r_{i->k} = S(i, k) minus the
    log-sum-exp (at temperature 1/beta) of the fields S(i, l) + a_{l->i} over l != i, k.
    """
    n_cand = u.shape[0]
    field = np.empty(n_cand)
    pos_old = np.empty(n_cand)
    for i in order:
        for k in range(n_cand):
            pos_old[k] = _log1pexp(beta * R[i, k]) / beta
        pos_old[i] = 0.0
        c, m1 = -1, -np.inf
        for k in range(n_cand):
            field[k] = S[i, k] - _log1pexp(beta * (p - (u[k] - pos_old[k])) + log_q) / beta
            if k != i and field[k] > m1:
                m1, c = field[k], k
        m2 = -np.inf
        for k in range(n_cand):
            if k != i and k != c and field[k] > m2:
                m2 = field[k]
        total, rest = 0.0, 0.0
        for k in range(n_cand):
            if k != i:
                total += np.exp(beta * (field[k] - m1))
                if k != c:
                    rest += np.exp(beta * (field[k] - m2))
        h1 = m1 + np.log(total) / beta
        h2 = m2 + np.log(rest) / beta
        for k in range(n_cand):
            if k == i:
                r_new = 0.0
            elif k == c:
                r_new = S[i, k] - h2
            else:
                r_new = S[i, k] - (h1 + np.log1p(-np.exp(beta * (field[k] - m1)) / total) / beta)
            pos_new = 0.0 if k == i else _log1pexp(beta * r_new) / beta
            u[k] = (u[k] + pos_new) - pos_old[k]
            R[i, k] = r_new
        best[i], exemplar[i], second[i] = h1, c, h2
