"""Solvers for the reduced RN-SDP ``min <C, K> s.t. K PSD, lo <= K <= up`` (core.RNProblem).

``admm``: the dedicated first-order method. Splitting ``K = X`` (box) ``= Z`` (PSD cone),
scaled-form ADMM (Boyd et al. 2011, section 3.1.1 and 3.4.3):

    X <- clip(Z - U - C / rho, lo, up)             elementwise projection onto the box
    Z <- Pi_PSD(alpha X + (1 - alpha) Z + U)       eigendecomposition, negative part cut
    U <- U + alpha X + (1 - alpha) Z_old - Z

with over-relaxation ``alpha`` and residual balancing of ``rho``. It stops when the
relative primal residual ``||X - Z|| / max(||X||, ||Z||)`` and the relative dual residual
``rho ||Z - Z_old|| / ||rho U||`` are both below ``tol`` and the returned matrix (Z with its
diagonal rescaled to 1, so PSD exactly) is inside the box to ``feas_tol`` elementwise.

``cvxpy``: the reference, any installed conic solver.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from scipy.linalg import eigh
from threadpoolctl import threadpool_limits

from ccbench.base import ConvergenceWarning, InfeasibleConstraintsError


def project_psd(W: np.ndarray) -> np.ndarray:
    """Nearest PSD matrix in Frobenius norm (the positive part of symmetric ``W``)."""
    try:
        w, V = eigh(W, driver="evd", check_finite=False)
    except np.linalg.LinAlgError:
        # divide-and-conquer (syevd) fails to converge on rare inputs (seen on glass);
        # the relatively robust representation driver (syevr) does not
        w, V = eigh(W, driver="evr", check_finite=False)
    pos = w > 0
    Vp = V[:, pos] * np.sqrt(w[pos])
    return Vp @ Vp.T


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


#: below this size one BLAS thread runs ``eigh`` faster than several (measured on a busy
#: 2-core machine: 4 ms against 40 ms at m = 140)
SINGLE_THREAD_BELOW = 600


def solve_admm(problem, **options):
    """Returns ``(K', info)``; ``K'`` is the reduced (m, m) PSD solution. See :func:`_admm`."""
    threads = 1 if problem.C.shape[0] < SINGLE_THREAD_BELOW else None
    with threadpool_limits(limits=threads, user_api="blas"):
        return _admm(problem, **options)


def _admm(problem, *, tol=1e-5, feas_tol=None, max_iter=5000, rho=None, alpha=1.0,
               anderson=10, mu=10.0, tau=2.0, check_every=1):
    """ADMM with Anderson acceleration on the reduced problem.

    The iteration is written on the single Douglas-Rachford state ``w = X + U``:
    ``Z = Pi_PSD(w)``, ``X = clip(2 Z - w - C / rho)``, ``T(w) = w + alpha (X - Z)``,
    which is the ADMM above; ``X - Z`` is the primal residual. ``anderson`` > 0
    accelerates ``T`` (memory ``anderson``), with a safeguard: an accelerated step whose
    fixed-point residual exceeds the last plain one is replaced by the plain step.
    """
    C, lo, up = problem.C, problem.lo, problem.up
    m = C.shape[0]
    start = time.perf_counter()
    if feas_tol is None:
        feas_tol = tol / 10
    if rho is None:
        rho = max(np.linalg.norm(C) / m, 1e-4)
    w = np.clip(np.eye(m), lo, up)
    Z = project_psd(w)
    aa = _Anderson(anderson, m * m) if anderson else None
    r_rel = s_rel = viol = np.inf
    converged = False
    n_updates = n_rejected = 0
    last_plain = np.inf
    it = 0
    for it in range(1, max_iter + 1):
        Z_old = Z
        Z = project_psd(w)
        X = np.clip(2 * Z - w - C / rho, lo, up)
        res = X - Z
        res_norm = np.linalg.norm(res)
        tw = w + alpha * res
        U = w - Z
        r_rel = res_norm / max(np.linalg.norm(X), np.linalg.norm(Z), 1e-300)
        s_rel = np.linalg.norm(Z - Z_old) / max(np.linalg.norm(U), 1e-300)
        if r_rel <= tol and s_rel <= tol:
            viol = box_violation(unit_diagonal(Z), lo, up)
            if viol <= feas_tol:
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
    info = {
        "solver": "admm",
        "status": "optimal" if converged else "max_iter",
        "n_iter": it,
        "primal_residual": float(r_rel),
        "dual_residual": float(s_rel),
        "max_violation": viol,
        "rho": float(rho),
        "rho_updates": n_updates,
        "anderson_rejected": n_rejected,
        "objective": problem.objective(K),
        "seconds": time.perf_counter() - start,
    }
    if not converged:
        warnings.warn(
            f"RN-SDP ADMM stopped after {it} iterations with relative residuals primal "
            f"{r_rel:.2e}, dual {s_rel:.2e} and bound violation {viol:.2e} (tol {tol:g}); "
            f"raise max_iter, loosen tol, or check feasibility with solver='cvxpy'",
            ConvergenceWarning,
            stacklevel=4,
        )
    return K, info


def solve_cvxpy(problem, *, solver=None, verbose=False, **solver_options):
    """Reference solution with cvxpy; ``solver`` ``None`` picks CLARABEL, then SCS."""
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
    prob = cp.Problem(cp.Minimize(cp.trace(C @ K)), cons)
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
        "max_violation": box_violation(Kv, lo, up),
        "seconds": time.perf_counter() - start,
    }
    return Kv, info
