"""Fused numba kernels for the affinity-propagation message core.

Each kernel makes one pass over an N x N array, row-parallel (``prange``),
with no N x N temporaries. They compute exactly what the numpy path in
:mod:`ccbench_plugins.ap_core` computes (up to the order of floating-point
summation in the column sums), so the two backends can be checked against
each other.

Compiled with ``cache=True``: the first call in a fresh environment compiles
(a few seconds) and writes the machine code next to this module
(``__pycache__``); later processes load it from there.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

# Columns per parallel task in the column-sum kernel: each task streams the
# rows of R but only touches a contiguous 512-byte slice of each row.
_COLUMN_BLOCK = 64


@njit(cache=True, parallel=True)
def responsibilities(S, A, R, delta, delta_row, damping):  # pragma: no cover - numba
    """rho <- mu rho + (1 - mu) (s_hat - max_{k != j} (s_hat + alpha)) in place (eq. 25).

    ``s_hat[i] = S[i] + delta[delta_row[i]]`` when ``delta_row[i] >= 0``
    (eq. 24: only rows of constrained points differ from ``S``), else ``S[i]``.
    One pass per row finds the largest and second-largest of s_hat + alpha,
    a second pass writes the damped responsibilities.
    """
    n, m = S.shape
    keep = 1.0 - damping
    for i in prange(n):
        d = delta_row[i]
        best = -np.inf
        second = -np.inf
        arg = 0
        for j in range(m):
            s = S[i, j]
            if d >= 0:
                s = s + delta[d, j]
            v = s + A[i, j]
            if v > best:
                second = best
                best = v
                arg = j
            elif v > second:
                second = v
        for j in range(m):
            s = S[i, j]
            if d >= 0:
                s = s + delta[d, j]
            sub = second if j == arg else best
            R[i, j] = damping * R[i, j] + keep * (s - sub)


@njit(cache=True, parallel=True)
def positive_column_sums(R, out):  # pragma: no cover - numba
    """out[j] = sum_{k != j} max(R[k, j], 0) (the sum in eq. 14)."""
    n, m = R.shape
    n_blocks = (m + _COLUMN_BLOCK - 1) // _COLUMN_BLOCK
    for b in prange(n_blocks):
        j0 = b * _COLUMN_BLOCK
        j1 = min(m, j0 + _COLUMN_BLOCK)
        acc = np.zeros(j1 - j0)
        for k in range(n):
            for j in range(j0, j1):
                v = R[k, j]
                if v > 0.0 and k != j:
                    acc[j - j0] += v
        for j in range(j0, j1):
            out[j] = acc[j - j0]


@njit(cache=True, parallel=True)
def availabilities(R, A, pos_colsum, n_exemplar_columns, damping):  # pragma: no cover - numba
    """alpha <- mu alpha + (1 - mu) alpha_new in place (eq. 14 / Algorithm 1).

    alpha_new[i, j] = min(0, rho_jj + sum_{k not in {i, j}} max(rho_kj, 0)) for
    i != j and sum_{k != j} max(rho_kj, 0) for i == j. Columns
    ``j >= n_exemplar_columns`` have no self-selection factor (SSAP-G
    meta-points): their availability is held at 0.
    """
    n, m = R.shape
    keep = 1.0 - damping
    diag = np.empty(min(n, m))
    for j in range(diag.shape[0]):
        diag[j] = R[j, j]
    for i in prange(n):
        for j in range(m):
            if j >= n_exemplar_columns:
                A[i, j] = 0.0
                continue
            if i == j:
                a = pos_colsum[j]
            else:
                rp = R[i, j]
                if rp < 0.0:
                    rp = 0.0
                a = diag[j] + (pos_colsum[j] - rp)
                if a > 0.0:
                    a = 0.0
            A[i, j] = damping * A[i, j] + keep * a
