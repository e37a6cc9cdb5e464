"""Constraint propagation without the dense eigendecomposition (issue 29).

The dense routes of :mod:`.core` diagonalise the n x n Laplacian (O(n^3) time,
several n x n matrices). But Y of eq. (2) is non-zero only on the rows and
columns of the p constrained points: Y = B Yp B^T with B = I[:, P] (n x p). Both
propagations then have a low-rank solution built from sparse solves with the
k-NN graph's S = D^{-1/2} W D^{-1/2}:

* E2CP (Lu & Ip 2010): F = (1 - a)^2 (I - aS)^{-1} Y (I - aS)^{-1} = X ((1 - a)^2 Yp) X^T
  with X = (I - aS)^{-1} B: p solves, exact.
* SRCP eq. (5), A F + F A = 2 mu Y with A = mu I + L = (1 + mu) I - S, by low-rank ADI
  (the LDL^T form of Li & White / Penzl): with shifts q_1..q_J in the spectrum of A,
  V_1 = (A + q_1 I)^{-1} B, V_j = V_{j-1} - (q_j + q_{j-1}) (A + q_j I)^{-1} V_{j-1} and
  F = sum_j V_j (2 q_j 2 mu Yp) V_j^T. The error contracts by the rational function
  prod_j (x - q_j) / (x + q_j) on [mu, mu + 2] (it holds the spectrum of A, since that of
  L lies in [0, 2]); the shifts are Zolotarev's (Wachspress's elliptic-function formula)
  and J is the smallest count whose contraction, squared, is below ``tol``. A is
  well conditioned (kappa <= (mu + 2) / mu = 11 for mu = 0.2), so J is about 10.

Each solve with c I - S (c > 1, spectrum of S in [-1, 1]) is conjugate gradients on
all right-hand sides at once. The ADI iterates are V_j = prod_{i<j} (A - q_i) /
prod_{i<=j} (A + q_i) B, i.e. by partial fractions combinations of X_i = (A + q_i)^{-1} B,
and all J of those come from one multi-shift CG run (:func:`solve_multishift`: the shifted
systems share the seed system's Krylov space), so SRCP's propagation costs about one CG
run's sparse products instead of J.

W* of eq. (9) is the only n x n array: off the graph it is max(F, 0) (F clipped to [-1, 1]),
so it is filled by one GEMM per row block of the lower triangle straight from the factors
F = Z C Z^T, mirrored, and the graph's entries are then set by the full formula
(:func:`adjust_similarity_lowrank`). The spectral embedding then takes the k leading
eigenvectors by LOBPCG (:func:`scipy.sparse.linalg.lobpcg`) instead of LAPACK.

Cost at 1 % of pairs constrained (p ~ 0.02 n, J = 9 for mu = 0.2): propagation O(nnz(S) p)
per CG iteration (about 40 iterations), W* O(n^2 J p / 2) flops (the n^3 term that bounds
the largest n), memory 8 n^2 bytes for W* plus 2 n J p for the factors.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy import sparse
from scipy.special import ellipj, ellipk

__all__ = [
    "constrained_block",
    "solve_shifted",
    "solve_multishift",
    "adi_partial_fractions",
    "zolotarev_shifts",
    "propagate_srcp_lowrank",
    "propagate_e2cp_lowrank",
    "adjust_similarity_lowrank",
    "leading_eigenvectors",
    "warm_start_block",
]

#: Entries of W* per row block when it is formed from the factors (the block's GEMM writes
#: into W* itself, so this sets the GEMM's shape, not a temporary's size).
BLOCK_ENTRIES = 1 << 24

#: Entries of the gathered factor rows per chunk when W*'s graph entries are evaluated (8 MB).
GATHER_ENTRIES = 1 << 20


def normalized_adjacency(W) -> sparse.csr_matrix:
    """S = D^{-1/2} W D^{-1/2} (isolated nodes get degree 1), sparse."""
    W = sparse.csr_matrix(W, dtype=np.float64)
    deg = np.asarray(W.sum(axis=1)).ravel()
    deg[deg == 0] = 1.0
    d = sparse.diags(1.0 / np.sqrt(deg))
    return (d @ W @ d).tocsr()


def constrained_block(Y) -> tuple[np.ndarray, np.ndarray]:
    """(P, Yp): the constrained points and the dense p x p block, Y = B Yp B^T with B = I[:, P]."""
    Y = sparse.csr_matrix(Y)
    idx = np.unique(Y.nonzero()[0])
    return idx, Y[idx][:, idx].toarray()


def solve_shifted(S, R, c: float, *, tol: float = 1e-12, max_iter: int = 1000) -> np.ndarray:
    """X with (c I - S) X = R by conjugate gradients, all columns at once (vectorised).

    c I - S is symmetric positive definite for c > 1 (the spectrum of S is in [-1, 1]),
    with condition number at most (c + 1) / (c - 1). Stops when every column's residual
    is below ``tol`` times its right-hand side; raises if ``max_iter`` is not enough
    (it cannot happen for c > 1 short of a bad S).
    """
    X = np.zeros_like(R)
    Rk = R.copy()
    P = Rk.copy()
    rs = np.einsum("ij,ij->j", Rk, Rk)
    stop = (tol**2) * np.maximum(rs, np.finfo(float).tiny)
    # preallocated n x p work arrays: a fresh temporary per update costs page faults at this size
    AP, buf = np.empty_like(R), np.empty_like(R)
    for _ in range(max_iter):
        if np.all(rs <= stop):
            return X
        np.multiply(P, c, out=AP)
        AP -= S @ P
        pAp = np.einsum("ij,ij->j", P, AP)
        # a column converged exactly (r = 0: a constrained point isolated in the graph, or a
        # Krylov space of dimension one) has pAp = 0; 0 / 0 would make it NaN and stall the rest
        alpha = np.divide(rs, pAp, out=np.zeros_like(rs), where=pAp != 0)
        X += np.multiply(P, alpha, out=buf)
        Rk -= np.multiply(AP, alpha, out=buf)
        rs_new = np.einsum("ij,ij->j", Rk, Rk)
        P *= np.divide(rs_new, rs, out=np.zeros_like(rs), where=rs != 0)
        P += Rk
        rs = rs_new
    raise RuntimeError(f"conjugate gradients on (c I - S), c = {c:g}, did not converge in {max_iter} iterations")


def solve_multishift(S, R, cs, *, tol: float = 1e-14, max_iter: int = 1000) -> list[np.ndarray]:
    """X_j with (c_j I - S) X_j = R for every c_j in ``cs`` (all > 1) from ONE Krylov sequence:
    multi-shift conjugate gradients (Jegerlehner 1996; Frommer 2003), all columns at once.

    The shifted systems (c_j I - S) = (c_0 I - S) + (c_j - c_0) I with c_0 = min(cs) share the
    Krylov space of the seed system, whose residuals are collinear with theirs (r_j = zeta_j r),
    so one sparse product per iteration serves every shift (the sequential route needs one
    CG run per shift: about 9x the sparse products for SRCP's shifts). A shift stops being
    updated once its residual |zeta_j| ||r|| is below ``tol`` times ||R|| in every column; the
    seed, the worst conditioned, converges last. ``tol`` is tighter than :func:`solve_shifted`'s
    because :func:`propagate_srcp_lowrank` combines the X_j with partial-fraction weights of
    up to about 1e4. Raises if ``max_iter`` is not enough.
    """
    cs = np.asarray(cs, dtype=np.float64)
    c0 = float(cs.min())
    sigma = cs - c0
    J, p = cs.size, R.shape[1]
    X = [np.zeros_like(R) for _ in range(J)]
    Pj = [R.copy() for _ in range(J)]
    r = R.copy()
    P = R.copy()
    rs = np.einsum("ij,ij->j", r, r)
    stop = (tol**2) * np.maximum(rs, np.finfo(float).tiny)
    zeta_prev, zeta = np.ones((J, p)), np.ones((J, p))
    alpha_prev, beta_prev = np.ones(p), np.zeros(p)
    active = np.ones(J, dtype=bool)
    AP, buf = np.empty_like(R), np.empty_like(R)  # work arrays, reused (see solve_shifted)
    for _ in range(max_iter):
        np.multiply(P, c0, out=AP)
        AP -= S @ P
        pAp = np.einsum("ij,ij->j", P, AP)
        # a column converged exactly (r = 0) has pAp = 0: it takes no further step
        alpha = np.divide(rs, pAp, out=np.zeros(p), where=pAp != 0)
        zeta_next = np.ones((J, p))
        for j in np.flatnonzero(active):
            denom = alpha * beta_prev * (zeta_prev[j] - zeta[j]) + zeta_prev[j] * alpha_prev * (1.0 + sigma[j] * alpha)
            # a column that took no step (alpha = 0 now or before) keeps its zeta: no 0 / 0
            zeta_next[j] = np.divide(zeta[j] * zeta_prev[j] * alpha_prev, denom, out=zeta[j].copy(),
                                     where=denom != 0)
            X[j] += np.multiply(Pj[j], alpha * zeta_next[j] / zeta[j], out=buf)
        r -= np.multiply(AP, alpha, out=buf)
        rs_new = np.einsum("ij,ij->j", r, r)
        beta = np.divide(rs_new, rs, out=np.zeros(p), where=rs != 0)
        for j in np.flatnonzero(active):
            Pj[j] *= beta * (zeta_next[j] / zeta[j]) ** 2
            Pj[j] += np.multiply(r, zeta_next[j], out=buf)
            zeta_prev[j], zeta[j] = zeta[j], zeta_next[j]
            if np.all(zeta[j] ** 2 * rs_new <= stop):
                active[j] = False
                Pj[j] = None  # its search directions are no longer needed
        P *= beta
        P += r
        alpha_prev, beta_prev, rs = alpha, beta, rs_new
        if not active.any():
            return X
    raise RuntimeError(f"multi-shift conjugate gradients on (c I - S), c in [{c0:g}, {cs.max():g}], did not converge "
                       f"in {max_iter} iterations")


def adi_partial_fractions(q) -> np.ndarray:
    """R with V_j = sum_i R[j, i] (A + q_i I)^{-1} B for the low-rank ADI iterates
    V_j = prod_{i<j} (A - q_i) / prod_{i<=j} (A + q_i) B (distinct shifts q): the partial
    fractions r_ji = prod_{k<j} (-q_i - q_k) / prod_{k<=j, k!=i} (q_k - q_i)."""
    q = np.asarray(q, dtype=np.float64)
    J = q.size
    R = np.zeros((J, J))
    for j in range(J):
        for i in range(j + 1):
            others = np.delete(q[: j + 1], i)
            R[j, i] = np.prod(-q[i] - q[:j]) / np.prod(others - q[i])
    return R


def zolotarev_shifts(a: float, b: float, tol: float) -> np.ndarray:
    """ADI shifts for a spectrum in [a, b] (0 < a < b): Zolotarev's optimal set of J shifts
    (Wachspress: q_j = b dn((2j - 1) K / (2J), 1 - (a / b)^2)), J the smallest with
    max over [a, b] of prod_j |(x - q_j) / (x + q_j)| squared below ``tol``."""
    m = 1.0 - (a / b) ** 2
    K = ellipk(m)
    x = np.geomspace(a, b, 2001)
    for J in range(1, 64):
        _, _, dn, _ = ellipj((2 * np.arange(1, J + 1) - 1) * K / (2 * J), m)
        q = b * dn
        rho = np.max(np.abs(np.prod((x[:, None] - q) / (x[:, None] + q), axis=1)))
        if rho**2 <= tol:
            return q
    return q


def propagate_srcp_lowrank(S, Y, *, mu: float, tol: float = 1e-9):
    """Eq. (5), (mu I + L) F + F (mu I + L) = 2 mu Y, by low-rank ADI (module docstring).

    Returns ``(Z, C)`` with F = Z C Z^T (Z: n x Jp, C: block diagonal Jp x Jp).
    """
    idx, Yp = constrained_block(Y)
    n = S.shape[0]
    if idx.size == 0:
        return np.zeros((n, 0)), np.zeros((0, 0))
    B = np.zeros((n, idx.size))
    B[idx, np.arange(idx.size)] = 1.0
    q = zolotarev_shifts(mu, mu + 2.0, tol)
    T = 2.0 * mu * Yp
    # (A + q_j I) = (1 + mu + q_j) I - S, every shift from one multi-shift CG run, and the ADI
    # iterates V_j (V_1 = (A + q_1)^{-1} B, V_j = V_{j-1} - (q_j + q_{j-1}) (A + q_j)^{-1} V_{j-1})
    # as their partial fractions in the X_i = (A + q_i)^{-1} B
    X = solve_multishift(S, B, 1.0 + mu + q)
    R = adi_partial_fractions(q)
    p, J = idx.size, q.size
    Z = np.zeros((n, J * p))
    for j in range(J):
        V = Z[:, j * p:(j + 1) * p]
        for i in range(j + 1):
            V += R[j, i] * X[i]
    return Z, scipy.linalg.block_diag(*[2.0 * qj * T for qj in q])


def propagate_e2cp_lowrank(S, Y, *, alpha: float):
    """Lu & Ip's F = (1 - a)^2 (I - aS)^{-1} Y (I - aS)^{-1} as ``(Z, C)``, F = Z C Z^T exactly
    (Z = (I - aS)^{-1} B, one solve per constrained point)."""
    idx, Yp = constrained_block(Y)
    n = S.shape[0]
    if idx.size == 0:
        return np.zeros((n, 0)), np.zeros((0, 0))
    B = np.zeros((n, idx.size))
    B[idx, np.arange(idx.size)] = 1.0
    # (I - aS) = a ((1 / a) I - S)
    Z = solve_shifted(S, B, 1.0 / alpha) / alpha
    return Z, (1.0 - alpha) ** 2 * Yp


def lowrank_dense(Z, C) -> np.ndarray:
    """Z C Z^T as a dense array (tests and small n only)."""
    return (Z @ C) @ Z.T


def adjust_similarity_lowrank(W, Z, C) -> np.ndarray:
    """W* of eq. (9) from F = Z C Z^T, with one n x n array in memory (W* itself).

    Off the graph (w_ij = 0) eq. (9) reduces to w*_ij = max(F_ij, 0) after clipping F to
    [-1, 1]: 1 - (1 - F)(1 - 0) = F where F >= 0, (1 + F) 0 = 0 where F < 0. So W* is
    filled in row blocks straight from the factors (one GEMM per block, then an in-place
    clip to [0, 1]), only the lower triangle (F and W* are symmetric) with the upper one
    mirrored, which halves the O(n^2 r) products; then the nnz(W) graph entries are
    overwritten by the full formula with F read from the factors at those entries
    (O(nnz r)). Neither F nor a temporary of W*'s size is ever formed.

    (Single precision would halve W*'s memory, but LOBPCG then stalled at residuals of
    about 3e-4 on the n = 3,000 benchmark blobs, so W* stays float64.)
    """
    W = sparse.csr_matrix(W, dtype=np.float64)
    n = W.shape[0]
    if abs(W - W.T).max() if W.nnz else 0.0:
        raise ValueError("adjust_similarity_lowrank needs a symmetric graph W (gaussian_knn_graph's are); "
                         "symmetrise it first, e.g. (W + W.T) / 2")
    out = np.empty((n, n))
    # C is block diagonal with sparse blocks (multiples of Yp): a sparse product, not a dense n r^2 GEMM
    # (built from np.nonzero: scipy's dense-to-sparse conversion allocates several r x r temporaries)
    rows, cols = np.nonzero(C)
    ZC = np.asarray(Z @ sparse.csr_matrix((C[rows, cols], (rows, cols)), shape=C.shape))
    step = max(1, BLOCK_ENTRIES // max(n, 1))
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        block = out[i0:i1, :i1]
        # F[i0:i1, :i1]: the lower triangle's row block (and the diagonal block whole), written
        # by the GEMM straight into W* (numpy passes the strided view to BLAS: no temporary)
        np.matmul(ZC[i0:i1], Z[:i1].T, out=block)
        np.clip(block, 0.0, 1.0, out=block)
        # mirror into the upper triangle (F symmetric, so W* is exactly symmetric too)
        out[:i0, i0:i1] = block[:, :i0].T
        _mirror_lower(out[i0:i1, i0:i1])
    # the graph's entries: W + F (1 - W) where F >= 0, W + F W where F < 0 (core.adjust_similarity),
    # upper triangle computed once and written to both (i, j) and (j, i)
    upper = sparse.triu(W, k=1).tocoo()
    rows, cols, w = upper.row, upper.col, upper.data
    chunk = max(1, GATHER_ENTRIES // max(Z.shape[1], 1))
    for s0 in range(0, rows.size, chunk):
        r, c, wb = rows[s0:s0 + chunk], cols[s0:s0 + chunk], w[s0:s0 + chunk]
        f = np.clip(np.einsum("ij,ij->i", ZC[r], Z[c]), -1.0, 1.0)
        value = wb + f * np.where(f >= 0, 1.0 - wb, wb)
        out[r, c] = value
        out[c, r] = value
    # the diagonal of a graph with self-loops (gaussian_knn_graph has none)
    diag = W.diagonal()
    idx = np.flatnonzero(diag)
    if idx.size:
        f = np.clip(np.einsum("ij,ij->i", ZC[idx], Z[idx]), -1.0, 1.0)
        out[idx, idx] = diag[idx] + f * np.where(f >= 0, 1.0 - diag[idx], diag[idx])
    return out


def _mirror_lower(D, tile: int = 256) -> None:
    """Copy the lower triangle of the square view D onto its upper one, in tiles (no
    temporary of D's size)."""
    m = D.shape[0]
    for s0 in range(0, m, tile):
        s1 = min(m, s0 + tile)
        D[s0:s1, s1:] = D[s1:, s0:s1].T
        iu = np.triu_indices(s1 - s0, 1)
        T = D[s0:s1, s0:s1]
        T[iu] = T.T[iu]


def leading_eigenvectors(M, k: int, *, v0=None, X0=None, tol: float = 1e-5, max_iter: int = 200) -> np.ndarray:
    """The k algebraically largest eigenvectors of a symmetric M (array, sparse matrix or
    LinearOperator), by LOBPCG.

    A block method, because ARPACK's single-vector Krylov space misses repeated
    eigenvalues: a graph with c <= k components has eigenvalue 1 c times, and on the
    benchmark's blobs ARPACK returned only 4 of 5 (the subspace was wrong). The block
    has k + 5 columns: ``v0`` (e.g. D^{1/2} 1) and fixed-seed Gaussian vectors, so a fit
    is deterministic; or ``X0``, a warm start (n x (k + 5)). Warns (``ConvergenceWarning``) when ``max_iter`` ends it above ``tol``.
    """
    import warnings

    from scipy.sparse.linalg import lobpcg

    from ccbench.base import ConvergenceWarning

    n = M.shape[0]
    m = min(n - 1, k + 5)
    if X0 is None:
        X0 = np.random.default_rng(0).standard_normal((n, m))
        if v0 is not None:
            X0[:, 0] = v0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = lobpcg(M, X0, largest=True, tol=tol, maxiter=max_iter, retResidualNormsHistory=True)
    # below n = 5 x the block, scipy solves densely and returns no residual history: exact, no check
    lam, V, res = out if len(out) == 3 else (*out, [])
    order = np.argsort(lam)[::-1][:k]
    final = np.asarray(res[-1])[order] if len(res) else np.zeros(k)
    if np.max(final) > tol:
        warnings.warn(
            f"the {k} leading eigenvectors (LOBPCG, {max_iter} iterations) reached residual "
            f"{np.max(final):.1e} (tol {tol:g}); pass eigen_solver='dense' to spectral_clustering "
            f"for LAPACK's exact route",
            ConvergenceWarning,
            stacklevel=3,
        )
    return V[:, order]


def warm_start_block(W, k: int) -> np.ndarray:
    """A start for the k leading eigenvectors of an adjusted W*: those of the sparse graph W
    (cheap products; with few constraints W* differs little, and on the n = 5,000 benchmark
    blobs LOBPCG then needs 29 iterations on W* instead of 87). n x (k + 5), loosely converged."""
    import warnings

    from scipy.sparse.linalg import lobpcg

    S = normalized_adjacency(W)
    n = S.shape[0]
    deg = np.asarray(sparse.csr_matrix(W).sum(axis=1)).ravel()
    X0 = np.random.default_rng(0).standard_normal((n, min(n - 1, k + 5)))
    X0[:, 0] = np.sqrt(np.maximum(deg, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # only a start: its accuracy does not matter
        _, V = lobpcg(S, X0, largest=True, tol=1e-4, maxiter=100)
    return V
