"""Compiled (numba) loops of :mod:`ccbench_plugins.nnc.core`: one pass over the points per call,
exact squared distances, O(1) memory per point. Serial on purpose: a thread pool per call
cost 20-150 ms per fit on small sets on the shared 2-core machine, more than the work."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def dmax_assign(X, L, starts, ends, best, arg):
    """best[i] = min_g max_{j in group g} ||X[i] - L[j]||^2 and arg[i] its group (first on ties).

    A group's running max only grows, so its scan stops once it reaches the best so far
    (it can no longer win): with well-separated classes most groups cost one distance.
    """
    n, d = X.shape
    for i in range(n):
        bi = np.inf
        ai = 0
        for g in range(len(starts)):
            m = -1.0
            for j in range(starts[g], ends[g]):
                s = 0.0
                for t in range(d):
                    diff = X[i, t] - L[j, t]
                    s += diff * diff
                if s > m:
                    m = s
                    if m >= bi:
                        break
            if m < bi:
                bi = m
                ai = g
        best[i] = bi
        arg[i] = ai


@njit(cache=True)
def nearer_centre(X, c, j, mind, labels):
    """Give point i to centre j (at ``c``) when it is strictly nearer than its current one."""
    n, d = X.shape
    for i in range(n):
        s = 0.0
        for t in range(d):
            diff = X[i, t] - c[t]
            s += diff * diff
        if s < mind[i]:
            mind[i] = s
            labels[i] = j
