"""Solvers for the reduced RN-SDP ``min <C, K> + ridge / 2 ||K||_F^2 s.t. K PSD, lo <= K <= up``
(core.RNProblem; ``ridge`` is the tie-break of :data:`DEFAULT_RIDGE`).

``admm``: the dedicated first-order method. Splitting ``K = X`` (box) ``= Z`` (PSD cone),
scaled-form ADMM (Boyd et al. 2011, section 3.1.1 and 3.4.3):

    X <- clip((rho (Z - U) - C) / (rho + ridge), lo, up)   elementwise prox on the box
    Z <- Pi_PSD(alpha X + (1 - alpha) Z + U)                partial eigendecomposition, negative part cut
    U <- U + alpha X + (1 - alpha) Z_old - Z

with over-relaxation ``alpha`` and residual balancing of ``rho``. It stops when, in the
units of K's entries, ``max |X - Z| <= tol``, the returned matrix (Z with its diagonal
rescaled to 1, so PSD exactly) is inside the box to ``tol`` elementwise, and the duality
gap (:func:`duality_gap`, a certified bound on the objective error) is ``<= gap_tol``
relative to the objective.

``sdpa``: the exact interior-point solve of the linear problem (``ridge`` 0) with SDPA
(``sdpa-python``, the solver the paper used), written so that SDPA's Schur complement is
indexed by the bounds: see :func:`solve_sdpa`. ``auto`` (the estimator's default) takes it
while the Schur complement is affordable (:func:`auto_solver`), else the ADMM.

``cvxpy``: the reference, any installed conic solver (the independent check).

Why a tie-break. With the paper's sigma most of ``C``'s coefficients are below 1e-8
(71 % on iris), so the optimal face of the linear SDP is wide: two solvers' K agree in
objective to 1e-8 yet differ by up to 0.98 elementwise, and the clustering moves with
them. ``ridge > 0`` makes the problem strongly convex, so its optimum is unique (the
Tikhonov choice: as ``ridge -> 0`` it tends to the optimal K of least Frobenius norm,
i.e. the least similarity on pairs the data leave undecided); it costs at most
``ridge / 2 ||K*||_F^2`` in ``<C, K>`` (0.33 % on iris with 30 random pairs).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import warnings

import numpy as np
from scipy.linalg import eigh, eigvalsh
from threadpoolctl import threadpool_limits

from ccbench.base import ConvergenceWarning, InfeasibleConstraintsError


def project_psd(W: np.ndarray) -> np.ndarray:
    """Nearest PSD matrix in Frobenius norm (the positive part of symmetric ``W``), by a
    full eigendecomposition (the reference of :func:`project_psd_partial`)."""
    return _project_full(W)[0]


def _project_full(W):
    try:
        w, V = eigh(W, driver="evd", check_finite=False)
    except np.linalg.LinAlgError:
        # divide-and-conquer (syevd) fails to converge on rare inputs (seen on glass);
        # the relatively robust representation driver (syevr) does not
        w, V = eigh(W, driver="evr", check_finite=False)
    pos = w > 0
    Vp = V[:, pos] * np.sqrt(w[pos])
    return Vp @ Vp.T, int(pos.sum())


def project_psd_partial(W: np.ndarray, negative_side: bool = False) -> tuple[np.ndarray, int]:
    """:func:`project_psd` from the eigenpairs of one sign only; returns ``(P, n_pos)``.

    ``W = W+ + W-`` (positive and negative parts), so ``Pi_PSD(W) = W+ = W - W-``: with
    ``negative_side`` False, ``W+ = V+ diag(w+) V+^T`` from the positive eigenpairs; with
    True, ``W - V- diag(w-) V-^T`` from the negative ones. LAPACK's syevr
    (``subset_by_value``) computes only the requested eigenpairs after the common
    tridiagonal reduction, so the cost above that reduction scales with their number
    (the ADMM's iterates on iris have 7 positive eigenvalues of 135: 4.2 ms against
    6.4 ms for the full divide-and-conquer). ``n_pos`` (the number of positive
    eigenvalues) tells the caller which side to ask for next time.
    """
    m = W.shape[0]
    bounds = (-np.inf, 0.0) if negative_side else (0.0, np.inf)
    try:
        w, V = eigh(W, driver="evr", subset_by_value=bounds, check_finite=False)
    except np.linalg.LinAlgError:  # never seen; the full decomposition is the safe route
        return _project_full(W)
    if negative_side:
        Vn = V * np.sqrt(-w)
        P = W + Vn @ Vn.T
        # W's rounding asymmetry (from Anderson's combinations) would survive in P
        return (P + P.T) / 2, m - w.size
    Vp = V * np.sqrt(w)
    return Vp @ Vp.T, w.size


class _PSDProjector:
    """The ADMM's projection: asks :func:`project_psd_partial` for the side that had fewer
    eigenvalues at the previous call (the count changes slowly between iterations)."""

    def __init__(self, m: int):
        self.m, self.n_pos = m, m

    def __call__(self, W):
        P, self.n_pos = project_psd_partial(W, negative_side=2 * self.n_pos > self.m)
        return P


def unit_diagonal(Z: np.ndarray) -> np.ndarray:
    """``D^-1/2 Z D^-1/2`` with ``D = diag(Z)``: PSD-preserving, exact unit diagonal."""
    d = np.sqrt(np.clip(np.diag(Z), 1e-300, None))
    K = Z / d[:, None] / d[None, :]
    np.fill_diagonal(K, 1.0)
    return (K + K.T) / 2


def box_violation(K, lo, up) -> float:
    return float(max(np.max(lo - K, initial=0.0), np.max(K - up, initial=0.0)))


class _Anderson:
    """Type-II Anderson acceleration of a fixed-point map ``w -> T(w)`` (Walker & Ni 2011;
    the safeguarded form of Zhang, O'Donoghue & Boyd 2020 used by SCS 3).

    Differences are kept in preallocated ring buffers (no per-step copies of history).
    """

    def __init__(self, memory: int, size: int, reg: float = 1e-10):
        self.memory, self.reg = memory, reg
        self.dW = np.empty((memory, size))
        self.dG = np.empty((memory, size))
        self.w_prev = np.empty(size)
        self.g_prev = np.empty(size)
        self.reset()

    def reset(self):
        self.count = 0
        self.started = False

    def step(self, w, tw):
        wv, twv = w.ravel(), tw.ravel()
        g = twv - wv
        if self.started:
            slot = self.count % self.memory
            np.subtract(wv, self.w_prev, out=self.dW[slot])
            np.subtract(g, self.g_prev, out=self.dG[slot])
            self.count += 1
        self.started = True
        self.w_prev[:] = wv
        self.g_prev[:] = g
        k = min(self.count, self.memory)
        if k == 0:
            return tw
        G = self.dG[:k]
        A = G @ G.T
        A[np.diag_indices_from(A)] += self.reg * max(np.trace(A), 1e-300)
        try:
            gamma = np.linalg.solve(A, G @ g)
        except np.linalg.LinAlgError:
            self.reset()
            return tw
        acc = twv - gamma @ self.dW[:k] - gamma @ G
        if not np.all(np.isfinite(acc)):
            self.reset()
            return tw
        return acc.reshape(w.shape)


#: ``ridge`` of the tie-break ``ridge / 2 ||K||_F^2`` used by the estimator (see the module
#: docstring): large enough that the ADMM resolves the optimal face (iris, 30 random pairs:
#: 2,165 iterations; with ridge 0 it stalls at a bound violation of 3.7e-5), small enough to
#: leave <C, K> within 0.4 % of the linear optimum there.
DEFAULT_RIDGE = 1e-4

#: below this size one BLAS thread runs ``eigh`` faster than several (measured on a busy
#: 2-core machine: 4 ms against 40 ms at m = 140)
SINGLE_THREAD_BELOW = 600


def solve_admm(problem, **options):
    """Returns ``(K', info)``; ``K'`` is the reduced (m, m) PSD solution. See :func:`_admm`."""
    threads = 1 if problem.C.shape[0] < SINGLE_THREAD_BELOW else None
    with threadpool_limits(limits=threads, user_api="blas"):
        return _admm(problem, **options)


def _admm(problem, *, tol=1e-5, gap_tol=None, max_iter=5000, ridge=0.0, rho=None, alpha=1.0,
          anderson=10, mu=10.0, tau=2.0, gap_every=5, unit_box=False, partial=True, callback=None):
    """ADMM with Anderson acceleration on the reduced problem.

    The iteration is written on the single Douglas-Rachford state ``w = X + U``:
    ``Z = Pi_PSD(w)``, ``X = clip((rho (2 Z - w) - C) / (rho + ridge))``,
    ``T(w) = w + alpha (X - Z)``, which is the ADMM above (``ridge`` adds the tie-break
    ``ridge / 2 ||K||_F^2`` to the objective, see :func:`tie_break_weight`); ``X - Z`` is
    the primal residual. ``partial`` projects by the eigenpairs of one sign
    (:func:`project_psd_partial`; False: the full eigendecomposition). ``anderson`` > 0
    accelerates ``T`` (memory ``anderson``), with a
    safeguard: an accelerated step whose fixed-point residual exceeds the last plain one
    is replaced by the plain step.

    Stopping rule, every quantity in the units of K's entries (|k_ij| <= 1) or of the
    objective: ``max |X - Z| <= tol`` (primal), ``max |Z - Z_old| <= tol`` (dual), the
    returned ``K`` (``Z`` with its diagonal rescaled to 1) inside the box to ``tol``, and
    the duality gap of :func:`duality_gap` ``<= gap_tol * max(1, |objective|)`` (default
    ``gap_tol = tol``), so that the objective is certified to ``gap_tol`` too.
    """
    C, lo, up = problem.C, problem.lo, problem.up
    m = C.shape[0]
    start = time.perf_counter()
    if gap_tol is None:
        gap_tol = tol
    if rho is None:
        rho = max(np.linalg.norm(C) / m, 1e-4)
    # |k_ij| <= 1 holds for every PSD K with a unit diagonal: adding it to the box changes
    # no feasible point, keeps X bounded and makes the dual bound of duality_gap finite
    lo_x, up_x = (np.clip(lo, -1.0, 1.0), np.clip(up, -1.0, 1.0)) if unit_box else (lo, up)
    w = np.clip(np.eye(m), lo_x, up_x)
    project = _PSDProjector(m) if partial else project_psd
    Z = project(w)
    aa = _Anderson(anderson, m * m) if anderson else None
    r_abs = s_abs = viol = gap = np.inf
    converged = False
    n_updates = n_rejected = 0
    last_plain = np.inf
    it = 0
    for it in range(1, max_iter + 1):
        Z_old = Z
        w_z, rho_z = w, rho  # Z projects w_z: rho_z (Z - w_z) is the PSD dual of the split
        Z = project(w)
        X = np.clip((rho * (2 * Z - w) - C) / (rho + ridge), lo_x, up_x)
        res = X - Z
        res_norm = np.linalg.norm(res)
        tw = w + alpha * res
        r_abs = float(np.abs(res).max())
        s_abs = float(np.abs(Z - Z_old).max())
        # relative residuals (Boyd et al. 2011, 3.3.1) only steer rho, never the stop
        r_rel = res_norm / max(np.linalg.norm(X), np.linalg.norm(Z), 1e-300)
        s_rel = np.linalg.norm(Z - Z_old) / max(np.linalg.norm(w - Z), 1e-300)
        if callback is not None or it % gap_every == 0:
            K = unit_diagonal(Z)
            viol = box_violation(K, lo, up)
            if viol <= tol or callback is not None:
                # U = w_z - Z is the negative part of w_z: S = -rho U is PSD exactly
                gap = duality_gap(problem, K, rho_z * (Z - w_z), ridge=ridge)
                if callback is not None:
                    callback(it, r_abs, s_abs, viol, gap, rho)
                if r_abs <= tol and viol <= tol and gap <= gap_tol * max(1.0, abs(problem.objective(K))):
                    converged = True
                    break
        if aa is not None and res_norm > last_plain and it > 1:
            # the accelerated point made things worse: fall back to a plain step from it
            n_rejected += 1
            aa.reset()
        last_plain = res_norm
        if it % 50 == 0 and (r_rel > mu * s_rel or s_rel > mu * r_rel):
            # residual balancing: raise rho when primal lags, lower it when dual lags
            new_rho = rho * tau if r_rel > mu * s_rel else rho / tau
            w = Z + (w - Z) * (rho / new_rho)
            rho = new_rho
            n_updates += 1
            if aa is not None:
                aa.reset()
            continue
        w = aa.step(w, tw) if aa is not None else tw
    K = unit_diagonal(Z)
    viol = box_violation(K, lo, up)
    if not converged:
        gap = duality_gap(problem, K, rho_z * (Z - w_z), ridge=ridge)
    obj = problem.objective(K)
    info = {
        "solver": "admm",
        "status": "optimal" if converged else "max_iter",
        "n_iter": it,
        "primal_residual": r_abs,
        "dual_residual": s_abs,
        "max_violation": viol,
        "duality_gap": float(gap),
        "ridge": float(ridge),
        "rho": float(rho),
        "rho_updates": n_updates,
        "anderson_rejected": n_rejected,
        "objective": obj,
        "seconds": time.perf_counter() - start,
    }
    if not converged:
        warnings.warn(
            f"RN-SDP ADMM stopped after {it} iterations with max|X - Z| {r_abs:.2e}, max|Z - Z_old| "
            f"{s_abs:.2e}, bound violation {viol:.2e} and duality gap {gap:.2e} (tol {tol:g}, gap_tol "
            f"{gap_tol:g}); raise max_iter, loosen tol, or check feasibility with solver='cvxpy'",
            ConvergenceWarning,
            stacklevel=4,
        )
    return K, info


def duality_gap(problem, K, S, *, ridge=0.0) -> float:
    """``f(K) - g``, for ``f(K) = <C, K> + ridge / 2 ||K||_F^2`` and a dual bound ``g`` built
    from the PSD matrix ``S``: an upper bound on ``f(K) - min f`` (exact for a feasible
    ``K``; a ``K`` outside the box by ``v`` can be up to ``v`` times the dual's size off).

    Weak duality. For any PSD ``S``, ``<S, K> >= 0`` on the PSD cone, so
    ``min f >= g(S) = sum_ij min_{x in [lo'_ij, up'_ij]} ((C - S)_ij x + ridge / 2 x^2)``,
    where ``[lo', up']`` is the box intersected with ``[-1, 1]`` (valid for every PSD
    ``K`` with a unit diagonal, and what keeps ``g`` finite on free entries). The
    minimum over an interval is elementwise: ``x = clip(-(C - S)_ij / ridge)``, or the
    interval's end that the sign of ``(C - S)_ij`` picks when ``ridge = 0``.

    An ADMM ``S`` leaves ``(C - S)_ij`` of the order of the residual on the free entries,
    and each adds its size to the gap (m^2 of them). The repaired dual
    ``S' = S + F - min(0, lambda_min(S + F)) I``, with ``F`` cancelling ``C - S`` on the
    free entries, pays instead ``m |lambda_min|`` on the fixed unit diagonal; the larger
    of the two bounds is used.
    """
    lo, up = np.clip(problem.lo, -1.0, 1.0), np.clip(problem.up, -1.0, 1.0)
    free = np.isinf(problem.lo) & np.isinf(problem.up)

    def bound(S):
        R = problem.C - S
        if ridge > 0:
            x = np.clip(-R / ridge, lo, up)
            return float(np.sum(R * x + 0.5 * ridge * x * x))
        return float(np.sum(np.minimum(R * lo, R * up)))

    S2 = np.where(free, problem.C, S)
    lam = float(eigvalsh(S2, check_finite=False)[0]) if free.any() else 0.0
    if lam < 0:
        S2[np.diag_indices_from(S2)] -= lam
    g = max(bound(S), bound(S2))
    f = problem.objective(K) + 0.5 * ridge * float(np.vdot(K, K))
    return max(f - g, 0.0)


def solve_cvxpy(problem, *, solver=None, ridge=0.0, verbose=False, **solver_options):
    """Reference solution with cvxpy; ``solver`` ``None`` picks CLARABEL, then SCS.

    ``ridge`` adds the same tie-break as the ADMM's, ``ridge / 2 ||K||_F^2``."""
    import cvxpy as cp

    C, lo, up = problem.C, problem.lo, problem.up
    m = C.shape[0]
    if solver is None:
        installed = cp.installed_solvers()
        solver = next((s for s in ("CLARABEL", "SDPA", "SCS", "MOSEK") if s in installed), None)
    start = time.perf_counter()
    K = cp.Variable((m, m), PSD=True)
    iu = np.triu_indices(m)
    cons = []
    fixed = (lo == up)[iu]
    rows, cols = iu[0][fixed], iu[1][fixed]
    if rows.size:
        cons.append(K[rows, cols] == lo[rows, cols])
    has_lo = np.isfinite(lo)[iu] & ~fixed
    if has_lo.any():
        cons.append(K[iu[0][has_lo], iu[1][has_lo]] >= lo[iu][has_lo])
    has_up = np.isfinite(up)[iu] & ~fixed
    if has_up.any():
        cons.append(K[iu[0][has_up], iu[1][has_up]] <= up[iu][has_up])
    obj = cp.trace(C @ K)
    if ridge > 0:
        obj = obj + 0.5 * ridge * cp.sum_squares(K)
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=solver, verbose=verbose, **solver_options)
    if prob.status in ("infeasible", "infeasible_inaccurate"):
        raise InfeasibleConstraintsError(
            f"cvxpy/{solver} reports the RN-SDP {prob.status}: the kept relational-neighbour "
            f"bounds and the constraints admit no PSD K with unit diagonal"
        )
    if K.value is None:
        raise RuntimeError(f"cvxpy/{solver} returned no solution (status {prob.status})")
    Kv = (K.value + K.value.T) / 2
    info = {
        "solver": f"cvxpy/{solver}",
        "status": prob.status,
        "n_iter": int(prob.solver_stats.num_iters or 0),
        "objective": problem.objective(Kv),
        "solver_objective": float(prob.value),
        "ridge": float(ridge),
        "max_violation": box_violation(Kv, lo, up),
        "seconds": time.perf_counter() - start,
    }
    return Kv, info


#: SDPA's phases that mean "our problem has no feasible point": it is bounded (|k_ij| <= 1
#: on every feasible K), so an unbounded side can only be the dual of an infeasible one
#: (an infeasible hand-made problem comes back "pUNBD" after the flip below)
_SDPA_INFEASIBLE = ("pINF_dFEAS", "pdINF", "pUNBD", "dUNBD")
#: SDPA's phase (of the dual of the SeDuMi form) -> the phase of our problem (as sdpap.solve)
_SDPA_PHASE_OF_OURS = {"pFEAS": "dFEAS", "dFEAS": "pFEAS", "pFEAS_dINF": "pINF_dFEAS",
                       "pINF_dFEAS": "pFEAS_dINF", "pUNBD": "dUNBD", "dUNBD": "pUNBD"}


@contextlib.contextmanager
def _quiet_stdout(quiet: bool):
    if not quiet:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def sdpa_rows(problem) -> int:
    """Rows of :func:`solve_sdpa`'s SeDuMi form: one per fixed entry of K's upper triangle
    (the unit diagonal, cannot-link zeros) and one per finite bound. SDPA's Schur complement
    is dense ``sdpa_rows x sdpa_rows``."""
    iu = np.triu_indices(problem.C.shape[0])
    lo, up = problem.lo[iu], problem.up[iu]
    fixed = lo == up
    return int(fixed.sum() + (np.isfinite(lo) & ~fixed).sum() + (np.isfinite(up) & ~fixed).sum())


#: ``solver="auto"`` takes SDPA while ``sdpa_rows <= min(SDPA_ROWS_PER_CHUNKLET * m, SDPA_MAX_ROWS)``.
#: Why. Per iteration SDPA pays about ``m^3`` for its dense m x m matrices and ``rows^3 / 3`` for
#: the Cholesky factor of the Schur complement (``8 rows^2`` bytes), in ~25-35 iterations; the
#: ADMM pays one m x m (partial) eigendecomposition in hundreds to thousands of iterations,
#: whatever the number of bounds. So the crossover is proportional to m. Measured on iris
#: (j = 5, t = 3, m = 135, inactive bounds added so that the ADMM's work stays the same: 640
#: iterations, 1.0-1.2 s CPU), SDPA's CPU time: 0.15 s at 316 rows, 0.62 s at 816, 1.86 s at
#: 1,316, 7.4 s at 2,316 -- the crossover is ~1,050 rows, 7.8 m, for an ADMM that needs only
#: 640 iterations; it needs 1,000-5,000 elsewhere, which moves the crossover up as their cube
#: root: glass (j = 10, t = 5, m = 158, 1,429 rows = 9.0 m): SDPA 2.3 s CPU, ADMM 3.2 s (1,065
#: iterations); glass j = 5, t = 3: SDPA 0.61 s, ADMM 8.4 s (2,115). Hence 10 m. At m = 498 (the
#: scale table's n = 500) SDPA took 1.5 s at 1,030 rows against 177 s for the ADMM.
#: ``SDPA_MAX_ROWS`` caps the Schur complement at 1.8 GB (the method's MemoryModel counts only
#: the n x n arrays).
SDPA_ROWS_PER_CHUNKLET = 10.0
SDPA_MAX_ROWS = 15_000


def auto_solver(problem, ridge: float) -> str:
    """``"sdpa"`` or ``"admm"`` for ``solver="auto"`` (see :data:`SDPA_ROWS_PER_CHUNKLET`).

    The ADMM is taken also when ``sdpa-python`` is not installed, and when a ``ridge`` other
    than 0 or :data:`DEFAULT_RIDGE` is asked for (only the ADMM and cvxpy apply it)."""
    if ridge not in (0, DEFAULT_RIDGE):
        return "admm"
    try:
        import sdpap  # noqa: F401
    except ImportError:
        return "admm"
    limit = min(SDPA_ROWS_PER_CHUNKLET * problem.C.shape[0], SDPA_MAX_ROWS)
    return "sdpa" if sdpa_rows(problem) <= limit else "admm"


def solve_sdpa(problem, *, eps=1e-7, max_iter=100, threads=1, verbose=False):
    """Exact solution of the linear problem (no ridge) by SDPA through ``sdpap``.

    Form. Our problem ``min <C, K> s.t. K PSD, <E_k, K> = b_k (unit diagonal, cannot-link
    zeros), <E_k, K> >= lo_k, -<E_k, K> >= -up_k`` goes to SDPA as the SeDuMi-form
    primal over ``x = (s, vec K)``, ``s >= 0`` the bounds' slacks, one equality row per
    fixed entry and per bound. SDPA solves it together with its dual, the LMI
    ``C - sum_k y_k E_k >= 0`` with one ``y_k`` per row (``y_k >= 0`` on bounds), so its
    Schur complement is (#fixed entries + #bounds)^2, not (m^2)^2 as for a solver that
    keeps K's entries as the variables -- what makes it fast here (issue 29).

    Ties (the tie-break under SDPA). ``ridge`` cannot be applied (SDPA takes linear
    objectives only). SDPA returns where its infeasible-start primal-dual path meets the
    tolerance ``eps``: approximately a maximally complementary optimum (Halicka, de Klerk &
    Roos 2002: the central path's limit lies in the relative interior of the optimal face,
    i.e. K of the largest rank, with every bound the objective leaves undecided slack).
    Which interior point depends on SDPA's start (``lambdaStar``), not only on the problem:
    it is not the analytic centre (``C = 0``, ``k_01 >= 0.5`` on 3 points: SDPA gives
    ``k_01 = 0.955``, the analytic centre is 0.768, the ridge's least-norm optimum 0.5).
    It is deterministic for one problem and SDPA build. So ``<C, K>`` agrees with the ADMM
    and cvxpy to the solvers' tolerances, while K can differ elementwise from the ridge's
    (least-norm) choice on pairs the data leave undecided; the tests pin both facts.
    """
    from scipy import sparse
    from sdpap.param import param
    from sdpap.sdpacall import sdpacall
    from sdpap.symcone import SymCone

    C, lo, up = problem.C, problem.lo, problem.up
    m = C.shape[0]
    start = time.perf_counter()
    iu = np.triu_indices(m)
    fixed = (lo == up)[iu]
    has_lo = np.isfinite(lo)[iu] & ~fixed
    has_up = np.isfinite(up)[iu] & ~fixed
    parts = []  # (rows i, cols j, sign, right-hand side) per kind of row
    for mask, sign, bound in ((fixed, 1.0, lo), (has_lo, 1.0, lo), (has_up, -1.0, up)):
        i, j = iu[0][mask], iu[1][mask]
        parts.append((i, j, np.full(i.size, sign), sign * bound[i, j]))
    n_eq = parts[0][0].size
    I, J, sg, rhs = (np.concatenate([p[k] for p in parts]) for k in range(4))
    n_rows = I.size
    n_slack = n_rows - n_eq
    r = np.arange(n_rows)
    off = I != J
    # <E, K> = k_ij for a symmetric K: 1/2 on (i, j) and (j, i), 1 on the diagonal;
    # K's entries follow the n_slack slack variables, which enter the bound rows with -1
    rows = np.concatenate([r[~off], r[off], r[off], np.arange(n_eq, n_rows)])
    cols = np.concatenate([I[~off] * m + I[~off], I[off] * m + J[off], J[off] * m + I[off]]) + n_slack
    cols = np.concatenate([cols, np.arange(n_slack)])
    vals = np.concatenate([sg[~off], 0.5 * sg[off], 0.5 * sg[off], -np.ones(n_slack)])
    A = sparse.csc_matrix((vals, (rows, cols)), shape=(n_rows, n_slack + m * m))
    b = sparse.csc_matrix(rhs.reshape(-1, 1))
    c = sparse.csc_matrix(np.r_[np.zeros(n_slack), C.ravel()].reshape(-1, 1))
    option = {"print": "display" if verbose else "no", "epsilonStar": eps, "epsilonDash": eps,
              "maxIteration": max_iter, "numThreads": threads}
    # SDPA itself, without sdpap.solve's wrapper: our form needs none of its conversions,
    # and its re-check of the feasibility errors (ARPACK on the slack matrix) costs a
    # third of the time and fails on this degenerate problem; we check K ourselves
    # (numThreads bounds SDPA's own threads; a threadpool_limits context costs 57 ms here)
    with _quiet_stdout(not verbose):  # SDPA's C++ prints diagnostics on fd 1 itself
        x, _, _, sinfo = sdpacall.solve_sdpa(
            A, b, c, SymCone(l=n_slack, s=(m,)), param(option, sdpacall.get_backend_info()["gmp"]))
    # SDPA reports the phase of its own primal, which is the dual of this SeDuMi form
    phase = _SDPA_PHASE_OF_OURS.get(sinfo["phasevalue"], sinfo["phasevalue"])
    if phase in _SDPA_INFEASIBLE:
        raise InfeasibleConstraintsError(
            f"SDPA reports the RN-SDP {phase}: the kept relational-neighbour bounds and the "
            f"constraints admit no PSD K with unit diagonal"
        )
    Kv = np.asarray(x.todense()).ravel()[n_slack:].reshape(m, m)
    Kv = (Kv + Kv.T) / 2
    viol = box_violation(Kv, lo, up)
    rel_gap = abs(sinfo["primalObj"] - sinfo["dualObj"]) / max(1.0, abs(sinfo["primalObj"]))
    # pdOPT: both tolerances met; pdFEAS: feasible, gap above epsilonStar (usual here: the
    # problem is degenerate) -- accepted when the relative gap is <= 1e-5 and the bounds hold
    if phase == "pdOPT" or (phase == "pdFEAS" and rel_gap <= 1e2 * eps and viol <= 1e2 * eps):
        status = "optimal"
    else:
        status = f"sdpa_{phase}"
        warnings.warn(
            f"SDPA stopped with phase {phase} (relative gap {rel_gap:.1e}, bound violation {viol:.1e}) "
            f"after {sinfo['iteration']} iterations; raise max_iter or use solver='admm'",
            ConvergenceWarning,
            stacklevel=3,
        )
    info = {
        "solver": "sdpa",
        "status": status,
        "schur_rows": int(n_rows),
        "sdpa_phase": phase,
        "n_iter": int(sinfo["iteration"]),
        "objective": problem.objective(Kv),
        "duality_gap": float(abs(sinfo["primalObj"] - sinfo["dualObj"])),
        "max_violation": viol,
        "ridge": 0.0,
        "seconds": time.perf_counter() - start,
    }
    return Kv, info
