"""A certified lower bound on the constrained k-means (minimum sum-of-squares) objective.

The objective of a partition ``{C_1, ..., C_k}`` of the rows of ``X`` (n, d) into ``k`` non-empty
clusters is ``SSE = sum_j sum_{i in C_j} ||x_i - mean(C_j)||^2`` (ccbench's ``inertia``). This
module computes, for data ``X``, must-links / cannot-links and ``k``, a number that no partition
meeting every constraint can go below, and whose validity does not depend on how accurately an
SDP solver converged.

Relaxation (Peng & Wei, "Approximating K-means-type clustering via semidefinite programming",
SIAM J. Optim. 18(1), 2007: ``min tr(W_X (I - Z))`` over PSD, nonnegative Z with ``Z e = e``,
``tr Z = k``; with must-links merged into weighted points and cannot-links as zero entries as in
Piccialli, Russo Russo & Sudoso, "An exact algorithm for semi-supervised minimum sum-of-squares
clustering", Computers & OR 2022, sections 2-3). Derived here in the weighted form:

*Must-links.* Every partition meeting the must-links keeps each must-link component ("chunklet")
``c = 1..m`` whole. With ``s_c`` its size, ``mu_c`` its mean and the within-chunklet scatter
``K_ml = sum_c sum_{i in c} ||x_i - mu_c||^2``, the SSE splits (Huygens) as

    SSE = K_ml + sum_j sum_{c in C_j} s_c ||mu_c - m_j||^2,    m_j = sum_{c in C_j} s_c mu_c / S_j,
    S_j = sum_{c in C_j} s_c,

a weighted MSSC on the m points ``mu_c`` with weights ``w = s``, plus the constant ``K_ml``.

*Weighted Peng-Wei matrix.* With ``W = diag(w)``, ``M`` the (m, d) matrix of the ``mu_c``
(centred at the weighted mean: the objective below does not change, see the last paragraph) and
the indicator ``1_j`` of the chunklets in cluster j, let ``u_j = W^{1/2} 1_j / sqrt(S_j)`` (a unit
vector) and ``Z = sum_j u_j u_j^T``, i.e. ``Z_cd = sqrt(w_c w_d) / S_j`` when c and d share cluster
j, else 0. Expanding ``sum_c s_c ||mu_c - m_j||^2`` gives ``sum_c w_c ||mu_c||^2 - ||sum_{c in C_j}
w_c mu_c||^2 / S_j`` and ``||sum_{c in C_j} w_c mu_c||^2 / S_j = u_j^T G u_j`` with the weighted
Gram matrix ``G = W^{1/2} M M^T W^{1/2}``, so

    SSE = K_ml + tr(G (I - Z)) = K_ml + tr(G) + <C, Z>,    C = -G.                     (1)

Such a Z is PSD (a sum of u_j u_j^T), elementwise >= 0, has ``tr(Z) = sum_j ||u_j||^2 = k`` and
``Z w^{1/2} = sum_j u_j (u_j^T w^{1/2}) = sum_j u_j sqrt(S_j) = sum_j W^{1/2} 1_j = w^{1/2}``; a
cannot-link between chunklets c and d puts them in different clusters, so ``Z_cd = 0``. Dropping
"Z is such a matrix" for these properties gives the relaxation

    (SDP)  min K_ml + tr(G) + <C, Z>  s.t.  Z PSD,  Z >= 0,  tr(Z) = k,  Z v = v  (v = w^{1/2}),
                                            Z_cd = 0 for every cannot-linked chunklet pair,

whose optimum is <= the constrained optimum. For w = 1 and no constraints it is Peng & Wei's
``min tr(W_X (I - Z))``. Translation: replacing ``M`` by ``M + 1 a^T`` adds to ``G`` terms of the
form ``v (.)^T`` and ``(.) v^T`` and ``v v^T``, which vanish against ``I - Z`` since
``(I - Z) v = 0``; centring only improves the conditioning.

Safe dual bound (what makes the bound valid whatever the solver's accuracy). For any
multipliers ``y0`` (of the trace), ``y`` (of ``Z v = v``) and any symmetric ``N`` that is >= 0
off the cannot-link entries (free on them), let ``S = C - y0 I - (y v^T + v y^T) / 2 - N``.
Every feasible Z has ``<N, Z> >= 0`` and ``<C, Z> = k y0 + v^T y + <N, Z> + <S, Z>``, and,
Z being PSD with trace exactly k, ``<S, Z> >= lambda_min(S) tr(Z) = k lambda_min(S)``. Hence

    min (SDP) >= K_ml + tr(G) + k y0 + v^T y + k lambda_min(S) - rounding,                (2)

for any such ``(y0, y, N)``: the post-processing of Jansson, Chaykin & Keil, "Rigorous error
bounds for the optimal value in semidefinite programming", SIAM J. Numer. Anal. 46(1), 2007
(their bound ``b'y + sum_j xbar min(0, lambda_j(S))`` needs an upper bound ``xbar`` on Z's
eigenvalues; here ``tr(Z) = k`` is known exactly, so ``<S, Z> >= k lambda_min(S)`` holds with
either sign of ``lambda_min``, and a shift of ``y0`` changes nothing: what ``k y0`` gains,
``k lambda_min(S)`` gives back). Piccialli et al. post-process their SDPNAL+ duals with Jansson's
form (``safe_bound.m`` of their code, ``xbar = 1.1 lambda_max(Z)``). ``rounding`` covers floating point in forming
``S`` and in ``eigvalsh`` (backward stable: the computed eigenvalues are those of ``S + E`` with
``||E||_2 <= p(m) eps ||S||_2``): we subtract ``k * 8 m eps (||C||_F + ||S||_F)``, orders of
magnitude above that error and below any tolerance used here (interval arithmetic, as Jansson et
al. use, would make it rigorous; this is not). The bound (2) is the reported ``value``; it is not
floored at anything else.

Two routes produce ``(y0, y, N)``:

- ``cvxpy`` (small m, :data:`CVXPY_MAX_M`): an interior-point solver (Clarabel; SDPA or SCS if
  asked) on (SDP), the multipliers read from its dual variables (:func:`solve_cvxpy`).
- ``admm`` (any m): a first-order method written here (:func:`solve_admm`), splitting Z into the
  set ``A = {Z PSD, tr Z = k, Z v = v}`` (exact projection: an eigendecomposition on the
  complement of v and a projection of the eigenvalues onto a simplex) and
  ``B = {Z >= 0, Z_CL = 0}`` (clipping). Its multiplier of ``Z = X`` is ``-N``; ``(y0, y)`` are
  then the best ones for that N in closed form (:func:`dual_for_nonneg`).

``kmeans_lower_bound`` is the public entry, with a per-process cache keyed by the data's bytes,
the constraint pairs and k (:func:`cache_key`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.linalg import eigh, eigvalsh

from threadpoolctl import threadpool_limits

from ccbench.base import ConvergenceWarning, InfeasibleConstraintsError

from ._solvers import SINGLE_THREAD_BELOW

__all__ = ["BoundResult", "KMeansSDP", "build_kmeans_sdp", "safe_bound", "dual_for_nonneg", "project_onto_A",
           "solve_admm", "solve_cvxpy", "kmeans_lower_bound", "cache_key", "lower_bound_metric", "bound_gap_metric",
           "CVXPY_MAX_M"]

#: ``method="auto"`` takes cvxpy (Clarabel's interior point, to ~1e-8 in ~10 iterations) while the
#: contracted problem has at most this many points, else the ADMM (to ``tol``). Measured on this
#: 2-core machine under load ~10 (blobs d = 8, k = 5, no constraints; one BLAS thread): Clarabel
#: 1.1 / 9.9 / 49 s at m = 20 / 40 / 60 (its KKT system carries the m^2 / 2 nonnegativity rows),
#: the ADMM 0.6 / 0.7 / 0.8 s (70-80 iterations); SDPA through cvxpy (``solve_cvxpy(problem,
#: solver="SDPA")``) 7.3 / 15.5 / 96 s, so it is never the default: the issue's "SDPA where it fits"
#: fits nowhere here, the Schur complement being indexed by those m^2 / 2 rows.
CVXPY_MAX_M = 20


@dataclass(frozen=True)
class KMeansSDP:
    """The contracted relaxation (SDP) of the module docstring.

    Attributes
    ----------
    C : ndarray (m, m)
        ``-G``, minus the weighted Gram matrix of the centred chunklet means.
    v : ndarray (m,)
        ``w^{1/2}``, square roots of the chunklet sizes.
    cl : ndarray (m, m) of bool
        True on the cannot-linked chunklet pairs (both orders), where ``Z = 0``.
    k : int
    constant : float
        ``K_ml + tr(G)``: the objective is ``constant + <C, Z>``.
    must_link_scatter : float
        ``K_ml``, the SSE inside the chunklets (part of ``constant``).
    chunklet : ndarray (n,)
        Chunklet index of every point.
    """

    C: np.ndarray
    v: np.ndarray
    cl: np.ndarray
    k: int
    constant: float
    must_link_scatter: float
    chunklet: np.ndarray

    @property
    def m(self) -> int:
        return self.C.shape[0]

    def objective(self, Z) -> float:
        return self.constant + float(np.vdot(self.C, Z))


@dataclass
class BoundResult:
    """``value``: the certified lower bound (2) on the constrained SSE. ``primal_value``: the SSE
    relaxation's value at the solver's Z (not certified: Z may be slightly infeasible; a solver
    that converged has ``primal_value - value`` small). ``converged``: the solver met its
    tolerance (the bound is valid either way, only weaker)."""

    value: float
    primal_value: float
    solver: str
    iterations: int
    seconds: float
    converged: bool
    info: dict = field(default_factory=dict)

    @property
    def relative_gap(self) -> float:
        return (self.primal_value - self.value) / max(abs(self.primal_value), 1e-300)


# --------------------------------------------------------------------------- the problem


def _constraint_pairs(constraints):
    """Must-link and cannot-link pairs, the revealed labels' implied pairs included (a labelled
    subset is the complete graph of its ML / CL pairs)."""
    if getattr(constraints, "labels", None) is not None:
        from ccbench.constraints import pairs_with_labels

        constraints = pairs_with_labels(constraints)
    return constraints


def build_kmeans_sdp(X, constraints, n_clusters: int) -> KMeansSDP:
    """The contracted (SDP) for data ``X`` (n, d), ``constraints`` and ``n_clusters``."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be (n, d), got shape {X.shape}")
    constraints = _constraint_pairs(constraints)
    n, k = X.shape[0], int(n_clusters)
    if constraints.n_samples != n:
        raise ValueError(f"constraints are over {constraints.n_samples} points but X has {n} rows")
    if not constraints.is_consistent():
        raise InfeasibleConstraintsError(
            "a cannot-link joins two points of one must-link component: no partition meets the "
            "constraints, so there is no objective to bound; drop the conflicting pairs first")
    comp = constraints.chunklet_labels()
    m = int(comp.max()) + 1
    if not 1 <= k <= m:
        raise InfeasibleConstraintsError(
            f"n_clusters={k} but the must-links leave {m} component(s): no partition into {k} non-empty "
            f"clusters keeps them whole; ask for 1 <= n_clusters <= {m}")
    if k == 1 and constraints.n_cannot_link:
        raise InfeasibleConstraintsError(
            f"n_clusters=1 but {constraints.n_cannot_link} cannot-link(s) are given: one cluster breaks them; "
            f"ask for 2 or more clusters")
    w = np.bincount(comp, minlength=m).astype(float)
    mu = np.zeros((m, X.shape[1]))
    np.add.at(mu, comp, X)
    mu /= w[:, None]
    ml_scatter = float(((X - mu[comp]) ** 2).sum())
    mu -= (w @ mu) / w.sum()
    v = np.sqrt(w)
    B = v[:, None] * mu
    G = B @ B.T
    cl = np.zeros((m, m), dtype=bool)
    if constraints.n_cannot_link:
        a, b = comp[constraints.cannot_link[:, 0]], comp[constraints.cannot_link[:, 1]]
        cl[a, b] = cl[b, a] = True
    return KMeansSDP(C=-G, v=v, cl=cl, k=k, constant=ml_scatter + float(np.trace(G)),
                     must_link_scatter=ml_scatter, chunklet=comp)


# --------------------------------------------------------------------------- the safe bound


def rounding_margin(problem: KMeansSDP, S) -> float:
    """The floating-point allowance subtracted in (2): ``k * 8 m eps (||C||_F + ||S||_F)``."""
    return problem.k * 8 * problem.m * np.finfo(float).eps * (np.linalg.norm(problem.C) + np.linalg.norm(S))


def safe_bound(problem: KMeansSDP, y0: float, y, N) -> tuple[float, float]:
    """``(bound, lambda_min(S))``: eq. (2) of the module docstring for multipliers ``y0``, ``y``
    and ``N`` (symmetrised; its entries off the cannot-links clipped at 0, since only N >= 0 there
    makes ``<N, Z> >= 0``). Valid for any input; tight when they are an optimal dual."""
    N = np.asarray(N, dtype=float)
    N = (N + N.T) / 2
    N = np.where(problem.cl, N, np.maximum(N, 0.0))
    y = np.asarray(y, dtype=float)
    S = problem.C - N - np.outer(y, problem.v) / 2 - np.outer(problem.v, y) / 2
    S[np.diag_indices_from(S)] -= y0
    lam = float(eigvalsh(S, subset_by_index=[0, 0], check_finite=False)[0])
    value = problem.constant + problem.k * y0 + float(problem.v @ y) + problem.k * lam
    return value - rounding_margin(problem, S), lam


class _Complement:
    """An orthonormal basis of the complement of ``q = v / ||v||`` by one Householder reflection
    ``H = I - beta h h^T`` with ``H q = -e_0``: ``V = H[:, 1:]``. ``H A H`` costs O(m^2) (a rank-2
    update), so the projection never forms V."""

    def __init__(self, v):
        self.q = v / np.linalg.norm(v)
        h = self.q.copy()
        h[0] += 1.0  # q_0 > 0 (weights are positive): no cancellation
        self.h, self.beta = h, 2.0 / float(h @ h)

    def similar(self, A):
        """``H A H`` for symmetric A."""
        p = self.beta * (A @ self.h)
        w = p - (0.5 * self.beta * float(self.h @ p)) * self.h
        return A - np.outer(self.h, w) - np.outer(w, self.h)


def _project_simplex(x, total):
    """Euclidean projection of ``x`` onto ``{z >= 0, sum z = total}`` (Held, Wolfe & Crowder
    1974; Duchi et al. 2008, Fig. 1)."""
    u = np.sort(x)[::-1]
    css = np.cumsum(u) - total
    idx = np.arange(1, x.size + 1)
    r = np.nonzero(u - css / idx > 0)[0][-1]
    return np.maximum(x - css[r] / (r + 1), 0.0)


def _top_eigh(B, r):
    """The ``r`` largest eigenpairs of symmetric B (LAPACK syevr after the tridiagonal reduction: the
    cost of the vectors scales with r), ascending; all of them when r >= the size."""
    n = B.shape[0]
    if r >= n:
        return eigh(B, check_finite=False)
    return eigh(B, driver="evr", subset_by_index=[n - r, n - 1], check_finite=False)


def project_onto_A(W, basis: _Complement, k: int, rank_hint: list | None = None):
    """Projection of symmetric ``W`` onto ``A = {Z PSD, tr Z = k, Z q = q}``.

    Every Z in A is ``q q^T + V Y V^T`` with Y PSD and ``tr Y = k - 1`` (``Z q = q`` kills the
    cross terms), and ``||W - Z||^2`` splits over the blocks of the basis ``[q, V]``; so Y is the
    projection of ``V^T W V`` onto ``{Y PSD, tr Y = k - 1}``: its eigenvectors, with the
    eigenvalues projected onto the simplex of sum ``k - 1``.

    Only the eigenvalues above the simplex threshold survive, so only the top ``r`` eigenpairs are
    computed (``rank_hint[0]``, updated in place: twice the last number kept, plus 2): the
    threshold from the top r is the full one as soon as the r-th largest eigenvalue falls below it
    (every eigenvalue left out is then cut too); otherwise r doubles."""
    HWH = basis.similar(W)
    B = HWH[1:, 1:]
    r = max(rank_hint[0], 2) if rank_hint else B.shape[0]
    while True:
        lam, Q = _top_eigh(B, r)
        proj = _project_simplex(lam, k - 1.0)
        if r >= B.shape[0] or proj[0] <= 0.0:  # lam ascending: lam[0] is the r-th largest
            break
        r *= 2
    lam = proj
    if rank_hint:
        rank_hint[0] = 2 * int((lam > 0).sum()) + 2
    keep = lam > 0
    Qp = Q[:, keep] * np.sqrt(lam[keep])
    ZH = np.zeros_like(W)
    ZH[0, 0] = 1.0
    ZH[1:, 1:] = Qp @ Qp.T
    return basis.similar(ZH)


def dual_for_nonneg(problem: KMeansSDP, N, basis: _Complement | None = None):
    """The best ``(y0, y)`` for a given ``N`` (clipped as in :func:`safe_bound`).

    In the basis ``[q, V]`` of ``R^m`` (q = v / ||v||), with ``M = C - N``:
    ``y = a q + V b`` with ``b = 2 V^T M q / ||v||`` cancels the cross block of ``S``,
    ``y0 = mu = lambda_min(V^T M V)`` and ``a = (q^T M q - mu) / ||v||`` leave
    ``S = V (V^T M V - mu I) V^T`` (PSD), and ``k y0 + v^T y = q^T M q + (k - 1) mu``, which is
    ``min_{Z in A} <M, Z>`` itself (A as in :func:`project_onto_A`)."""
    basis = basis or _Complement(problem.v)
    N = (N + N.T) / 2
    N = np.where(problem.cl, N, np.maximum(N, 0.0))
    HMH = basis.similar(problem.C - N)
    mu = float(eigvalsh(HMH[1:, 1:], subset_by_index=[0, 0], check_finite=False)[0])
    nv = float(np.linalg.norm(problem.v))
    # H q = -e_0, so q^T M q = (HMH)_00 and V^T M q = -(HMH)_{1:, 0}
    a = (HMH[0, 0] - mu) / nv
    b = -2.0 * HMH[1:, 0] / nv
    e = np.r_[0.0, b]
    Vb = e - basis.beta * float(basis.h @ e) * basis.h  # H [0; b] = V b
    return mu, a * basis.q + Vb, N


# --------------------------------------------------------------------------- solvers


def solve_admm(problem: KMeansSDP, *, tol=1e-4, max_iter=20000, rho=1.0, check_every=10, alpha=1.6):
    """ADMM on ``min <C, Z> + 1_A(Z) + 1_B(X) s.t. Z = X`` (Boyd et al. 2011, 3.1.1 and 3.4.3,
    over-relaxation ``alpha``; A and B as in the module docstring), on ``C / ||C||_F``:

        Z <- Pi_A(X - U - C / rho)
        X <- Pi_B(alpha Z + (1 - alpha) X + U)
        U <- U + alpha Z + (1 - alpha) X_old - X

    The multiplier of ``Z = X`` is ``rho U``; the dual function at it is finite only for
    ``N = -rho U`` >= 0 off the cannot-links, so ``N`` (clipped) with :func:`dual_for_nonneg`'s
    ``(y0, y)`` feeds :func:`safe_bound` (valid at any iterate). ``rho`` is rebalanced every 50
    iterations (primal against dual residual). Stops when the best certified bound so far is within
    ``tol`` (relative) of the relaxation's value at Z and ``max|Z - X| <= tol * k / m``.
    (Anderson acceleration of the state ``(X, U)``, as the RN-SDP's ADMM has, was tried: on glass,
    ml_50_cl_50_0, it saved a fifth of the iterations and cost more than that per iteration.)

    Returns ``(Z, (y0, y, N), info)``; y and N in the units of ``C``.
    """
    start = time.perf_counter()
    m, k = problem.m, problem.k
    scale = max(float(np.linalg.norm(problem.C)), 1e-300)
    Cs = problem.C / scale
    basis = _Complement(problem.v)
    free = ~problem.cl
    X = np.where(free, np.outer(problem.v, problem.v) * (k / float(problem.v @ problem.v)), 0.0)
    U = np.zeros((m, m))
    best = (-np.inf, 0.0, np.zeros(m), np.zeros((m, m)))
    converged, it, gap = False, 0, np.inf
    rank_hint = [2 * k + 2]
    for it in range(1, max_iter + 1):
        Z = project_onto_A(X - U - Cs / rho, basis, k, rank_hint)
        X_old = X
        Zr = alpha * Z + (1 - alpha) * X
        X = np.where(free, np.maximum(Zr + U, 0.0), 0.0)
        U = U + Zr - X
        if it % check_every == 0 or it == max_iter:
            y0, y, N = dual_for_nonneg(problem, -rho * U * scale, basis)
            value, _ = safe_bound(problem, y0, y, N)
            if value > best[0]:
                best = (value, y0, y, N)
            primal = problem.objective(Z)
            gap = (primal - best[0]) / max(abs(primal), 1e-300)
            if gap <= tol and float(np.abs(Z - X).max()) <= tol * k / m:
                converged = True
                break
        if it % 50 == 0:
            r = float(np.linalg.norm(Z - X))
            s = rho * float(np.linalg.norm(X - X_old))
            if r > 10 * s or s > 10 * r:
                factor = 2.0 if r > s else 0.5
                rho *= factor
                U /= factor
    info = {"iterations": it, "seconds": time.perf_counter() - start, "converged": converged,
            "relative_gap": gap, "rho": rho, "max_violation": float(np.abs(Z - X).max())}
    return Z, best[1:], info


def solve_cvxpy(problem: KMeansSDP, *, solver=None, verbose=False, **options):
    """(SDP) with cvxpy; ``solver`` None picks CLARABEL, else SCS. Returns ``(Z, (y0, y, N), info)``.

    Dual signs: cvxpy's Lagrangian adds ``nu^T (lhs - rhs)`` for ``lhs == rhs`` and
    ``-lambda^T expr`` (``lambda >= 0``) for ``expr >= 0``, so stationarity reads
    ``C + nu_0 I + (nu v^T + v nu^T) / 2 - N_ge - N_cl = S`` PSD: ``y0 = -nu_0``, ``y = -nu``,
    ``N = N_ge`` plus the cannot-link equalities' multipliers (free). A wrong sign costs
    tightness only, never validity (:func:`safe_bound` takes any input); the tests pin it.
    """
    import cvxpy as cp

    m, k = problem.m, problem.k
    if solver is None:
        installed = cp.installed_solvers()
        solver = next((s for s in ("CLARABEL", "SCS") if s in installed), None)
    start = time.perf_counter()
    Z = cp.Variable((m, m), symmetric=True)
    ge = cp.multiply((~problem.cl).astype(float), Z) >= 0
    cons = [Z >> 0, ge, cp.trace(Z) == k, Z @ problem.v == problem.v]
    if problem.cl.any():
        cons.append(cp.multiply(problem.cl.astype(float), Z) == 0)
    prob = cp.Problem(cp.Minimize(cp.trace(problem.C @ Z)), cons)
    prob.solve(solver=solver, verbose=verbose, **options)
    if Z.value is None:
        raise RuntimeError(f"cvxpy/{solver} returned no solution for the k-means SDP (status {prob.status})")
    N = np.asarray(ge.dual_value, dtype=float)
    if problem.cl.any():
        N = np.where(problem.cl, -np.asarray(cons[4].dual_value, dtype=float), N)
    y0 = -float(cons[2].dual_value)
    y = -np.asarray(cons[3].dual_value, dtype=float).ravel()
    Zv = (Z.value + Z.value.T) / 2
    info = {"iterations": int(prob.solver_stats.num_iters or 0), "seconds": time.perf_counter() - start,
            "converged": prob.status == "optimal", "status": prob.status, "solver": f"cvxpy/{solver}"}
    return Zv, (y0, y, N), info


# --------------------------------------------------------------------------- public entry

_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 64

#: directory of the on-disk cache (one ``<key>.json`` per instance), shared by processes: the harness
#: scores each trial in a worker of its own job (``trial_timeout``), where the in-memory cache starts
#: empty. Unset: memory only.
CACHE_DIR_ENV = "CCBENCH_BOUND_CACHE_DIR"


def _disk_path(key):
    folder = os.environ.get(CACHE_DIR_ENV)
    return Path(folder) / f"{key}.json" if folder else None


def _disk_load(key):
    path = _disk_path(key)
    if path is None or not path.is_file():
        return None
    try:
        fields = json.loads(path.read_text())
        return BoundResult(**fields)
    except (OSError, ValueError, TypeError) as exc:  # a torn or foreign file: recompute, say so
        warnings.warn(f"k-means bound cache entry {path} unreadable ({exc}); recomputing", RuntimeWarning,
                      stacklevel=3)
        return None


def _disk_store(key, result):
    path = _disk_path(key)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fields = {**dataclasses.asdict(result), "info": {k: float(v) for k, v in result.info.items()}}
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(fields))
    os.replace(tmp, path)  # atomic: a reader sees the old file or the whole new one


def cache_key(X, constraints, n_clusters, method="auto", tol=None) -> str:
    """sha256 of X's dtype, shape and bytes, the sorted ML / CL pairs (and revealed labels), k, and
    the solve options."""
    X = np.ascontiguousarray(X, dtype=float)
    h = hashlib.sha256(f"{X.shape}|{int(n_clusters)}|{method}|{tol}".encode())
    h.update(X.tobytes())
    h.update(np.ascontiguousarray(constraints.must_link, dtype=np.int64).tobytes())
    h.update(b"|CL|")
    h.update(np.ascontiguousarray(constraints.cannot_link, dtype=np.int64).tobytes())
    if getattr(constraints, "labels", None) is not None:
        h.update(b"|Y|")
        h.update(np.ascontiguousarray(constraints.labels, dtype=np.int64).tobytes())
    return h.hexdigest()


def kmeans_lower_bound(X, constraints, n_clusters: int, *, method: str = "auto", tol: float = 1e-4,
                       max_iter: int = 20000, cache: bool = True) -> BoundResult:
    """Certified lower bound on ``min SSE`` over partitions of X into ``n_clusters`` non-empty
    clusters that meet ``constraints`` (eq. 2 of the module docstring).

    ``method``: ``"cvxpy"`` (interior point), ``"admm"`` (first order), or ``"auto"`` (cvxpy while
    the contracted problem has at most :data:`CVXPY_MAX_M` points). ``tol``: the ADMM's relative
    gap between its bound and the relaxation's value (the bound is valid at any tol). Results are
    cached per process by :func:`cache_key`, and on disk in ``$CCBENCH_BOUND_CACHE_DIR`` when it is
    set (:data:`CACHE_DIR_ENV`).
    """
    if method not in ("auto", "cvxpy", "admm"):
        raise ValueError(f"method must be 'auto', 'cvxpy' or 'admm', got {method!r}")
    key = cache_key(X, constraints, n_clusters, method, (tol, max_iter)) if cache else None
    if key is not None and key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    stored = _disk_load(key) if key is not None else None
    if stored is not None:
        _CACHE[key] = stored
        return stored
    problem = build_kmeans_sdp(X, constraints, n_clusters)
    route = method if method != "auto" else ("cvxpy" if problem.m <= CVXPY_MAX_M else "admm")
    if problem.k in (1, problem.m):  # one partition only: all together (Z = q q^T) or every chunklet alone (I)
        q = problem.v / np.linalg.norm(problem.v)
        value = problem.objective(np.outer(q, q) if problem.k == 1 else np.eye(problem.m))
        result = BoundResult(value, value, "exact", 0, 0.0, True, {"m": problem.m})
    else:
        # below SINGLE_THREAD_BELOW one BLAS thread runs eigh faster than several (_solvers)
        with threadpool_limits(limits=1 if problem.m < SINGLE_THREAD_BELOW else None, user_api="blas"):
            if route == "cvxpy":
                Z, (y0, y, N), info = solve_cvxpy(problem)
            else:
                Z, (y0, y, N), info = solve_admm(problem, tol=tol, max_iter=max_iter)
            value, lam = safe_bound(problem, y0, y, N)
        result = BoundResult(value=value, primal_value=problem.objective(Z),
                             solver=info.get("solver", route), iterations=int(info["iterations"]),
                             seconds=float(info["seconds"]), converged=bool(info["converged"]),
                             info={"m": problem.m, "lambda_min_S": lam,
                                   "dual_value": value - problem.k * lam,
                                   "must_link_scatter": problem.must_link_scatter})
        if not result.converged:
            warnings.warn(
                f"k-means SDP bound ({result.solver}) stopped after {result.iterations} iterations with a "
                f"relative gap {result.relative_gap:.1e} between its certified bound and the relaxation's value "
                f"(the bound is valid, only weaker); raise max_iter or loosen tol", ConvergenceWarning,
                stacklevel=2)
    if key is not None:
        _disk_store(key, result)
        _CACHE[key] = result
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return result


def lower_bound_metric(labels_true, labels_pred, *, X=None, constraints=None) -> float:
    """The row metric ``lower_bound``: :func:`kmeans_lower_bound` for the row's features, its
    constraints and ``k`` = the number of clusters the row found (the bound that the row's
    ``inertia`` is measured against: a partition meeting the constraints into that many clusters
    cannot go below it). NaN without ``X``, or when no such partition exists (k above the number of
    must-link components, or contradictory constraints)."""
    if X is None or constraints is None:
        return float("nan")
    k = len(np.unique(np.asarray(labels_pred)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return kmeans_lower_bound(X, constraints, k).value
    except InfeasibleConstraintsError:
        return float("nan")


def bound_gap_metric(labels_true, labels_pred, *, X=None, constraints=None) -> float:
    """The row metric ``bound_gap``: ``(inertia - lower_bound) / lower_bound`` (the ``lower_bound``
    of :func:`lower_bound_metric`, from the cache). An upper bound on the row's relative distance from
    the constrained optimum; negative only for a labelling that breaks a constraint."""
    from ccbench.metrics import inertia

    bound = lower_bound_metric(labels_true, labels_pred, X=X, constraints=constraints)
    if not np.isfinite(bound) or bound <= 0:
        return float("nan")
    return (inertia(labels_true, labels_pred, X=X) - bound) / bound
