"""Metric learners of the NNC family, shared by ``fpc``, ``nnc`` and the ``*_xing`` baselines.

Every learner reads must-link (ML) and cannot-link (CL) pairs and returns a
:class:`LearnedMetric` whose :meth:`~LearnedMetric.transform` maps X to a space where
the plain Euclidean distance is the learned one, so the clustering kernels never
see the metric.

- ``lp_diag``: Yang et al. 2015, eqs. 21-26 (labeled sets) and 22'/23' (pairs): a
  linear program in the diagonal z >= 0 and the split s, solved by HiGHS.
- ``sdp_full``: the full-matrix model, eqs. 16-20 (17'/18'), in cvxpy.
- ``xing_diag``: Xing et al. 2003, eq. 12 of Yang et al. with a diagonal M, solved in
  Xing's own unconstrained form  g(a) = sum_ML ||x-y||_a^2 - log(sum_CL ||x-y||_a)
  (Xing et al., section 2.2), which has the same minimisers as eq. 12 up to scale.

Distances inside the programs are *squared* (``(x-y)^T M (x-y)``): that is what
makes eqs. 22-23 linear in z, as the paper states, and squaring both sides changes
neither the feasible M nor the maximiser (s is then the squared split).

Degenerate supervision (documented fallbacks, each with a ``MetricFallbackWarning``
and recorded in ``LearnedMetric.status``; never a silent identity metric):

- a CL pair of identical points can be separated by no metric: it is dropped;
- no CL pair left (e.g. one labeled class): ``ValueError``;
- no supervision at all (an unsupervised cell, scikit-learn's checks): the estimators
  cluster in the Euclidean metric with a warning (``status="no_supervision"``);
- unbounded program (some direction keeps every ML distance at zero while every CL
  distance grows; common on nominal data where a feature is constant inside every
  labeled set): ``lp_diag`` / ``sdp_full`` return that direction, the ray along which
  the objective diverges, normalised to sum (trace) 1 and chosen to maximise the split
  (``status="unbounded_ray"``); ``xing_diag`` runs Xing et al.'s own Newton iteration,
  which stops at finite weights (``status="xing_newton"``), as the paper's baseline did.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog, minimize

from ccbench.base import InsufficientSupervisionError

__all__ = [
    "METRICS",
    "LearnedMetric",
    "MetricFallbackWarning",
    "learn_metric",
    "pair_sq_diffs",
    "lp_diag_program",
]

METRICS = ("euclidean", "lp_diag", "sdp_full", "xing_diag")


class MetricFallbackWarning(UserWarning):
    """The metric program was degenerate and a documented fallback was used."""


@dataclass
class LearnedMetric:
    """A learned (squared) Mahalanobis metric.

    Attributes
    ----------
    kind : str
        One of :data:`METRICS`.
    weights : ndarray of shape (d,) or (d, d), or None
        z of eq. 26 (diagonal kinds), M of eq. 16 (``sdp_full``), None for Euclidean.
    status : str
        ``"euclidean"``, ``"optimal"``, ``"unbounded_ray"``, ``"xing_newton"``,
        ``"not_converged"`` (Xing's bounded program, with a warning) or ``"no_supervision"``.
    split : float
        For ``lp_diag`` / ``sdp_full``: the optimal squared split s (eq. 21) with
        every ML squared distance <= 1; for the ray, the split with sum(z) = 1.
        For ``xing_diag`` the eq. 12 objective at the solution scaled to meet
        eq. 13 with equality. NaN for Euclidean.
    n_dropped_pairs : int
        CL pairs of identical points that were dropped.
    converged : bool
        Whether the program was solved to its tolerance (Xing's: duality gap <=
        :data:`XING_GAP_TOL`, or its Newton iteration's own stopping rule).
    """

    kind: str
    weights: np.ndarray | None
    status: str
    split: float = float("nan")
    n_dropped_pairs: int = 0
    converged: bool = True

    def transform(self, X: np.ndarray) -> np.ndarray:
        """X mapped so that Euclidean distances there are the learned ones."""
        if self.weights is None:
            return X
        if self.weights.ndim == 1:
            return X * np.sqrt(self.weights)
        w, V = np.linalg.eigh(self.weights)
        return X @ (V * np.sqrt(np.clip(w, 0.0, None)))


def pair_sq_diffs(X: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """(m, d) array of (x_i - x_j)^2 per pair, feature by feature."""
    diff = X[pairs[:, 0]] - X[pairs[:, 1]]
    return diff * diff


def _split_pairs(X, must_link, cannot_link):
    """Squared differences of ML and CL pairs, CL pairs of identical points dropped."""
    dml = pair_sq_diffs(X, must_link)
    dcl = pair_sq_diffs(X, cannot_link)
    keep = dcl.sum(axis=1) > 0
    dropped = int(np.sum(~keep))
    if dropped:
        warnings.warn(
            f"{dropped} cannot-link pair(s) join identical points; no metric separates "
            f"them, so they were dropped from metric learning",
            MetricFallbackWarning,
            stacklevel=3,
        )
    dcl = dcl[keep]
    if len(dcl) == 0:
        raise InsufficientSupervisionError(
            "metric learning needs at least one cannot-link pair of distinct points "
            "(labeled points from two or more classes); got none. Use metric='euclidean' "
            "or supply cannot-link pairs / labels of several classes"
        )
    return dml, dcl, dropped


# -- lp_diag ------------------------------------------------------------------------


def lp_diag_program(dml: np.ndarray, dcl: np.ndarray):
    """The LP of eqs. 21-25 (22'/23') as ``(c, A_ub, b_ub, bounds)`` over v = (z, s).

    maximise s  s.t.  dcl @ z >= s,  dml @ z <= 1,  z >= 0,  s >= 0.
    """
    d = dml.shape[1] if dml.size else dcl.shape[1]
    c = np.zeros(d + 1)
    c[-1] = -1.0
    A_cl = np.hstack([-dcl, np.ones((len(dcl), 1))])
    A_ml = np.hstack([dml, np.zeros((len(dml), 1))])
    A_ub = np.vstack([A_cl, A_ml])
    b_ub = np.r_[np.zeros(len(dcl)), np.ones(len(dml))]
    return c, A_ub, b_ub, [(0, None)] * (d + 1)


def _null_features(dml: np.ndarray, d: int) -> np.ndarray:
    """Features on which every ML pair agrees exactly (all features without ML pairs)."""
    if len(dml) == 0:
        return np.ones(d, dtype=bool)
    return dml.sum(axis=0) == 0


def _linprog(c, A_ub, b_ub, bounds, A_eq=None, b_eq=None):
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS could not solve the metric LP (status {res.status}): {res.message}")
    return res


#: Relative slack on the optimal split allowed to the tie-break QP (solver accuracy).
_TIE_SLACK = 1e-9


def _least_norm_qp(Ac, bc, Ae, *, eq):
    """min ||w||^2, w >= 0, Ac w >= bc and (Ae w = 1 if eq else Ae w <= 1), by Clarabel;
    None when it fails at tight and at default tolerances."""
    import cvxpy as cp

    w = cp.Variable(Ac.shape[1], nonneg=True)
    cons = [Ac @ w >= bc, (Ae @ w == 1) if eq else (Ae @ w <= 1)]
    prob = cp.Problem(cp.Minimize(cp.sum_squares(w)), cons)
    for tol in ({"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12}, {}):
        try:
            with warnings.catch_warnings():
                # "optimal_inaccurate" at 1e-12 is accepted: the point is checked against
                # every constraint by the caller, and only the choice among optima is at stake
                warnings.filterwarnings("ignore", "Solution may be inaccurate")
                prob.solve(solver="CLARABEL", **tol)
        except cp.error.SolverError:
            continue
        if prob.status in ("optimal", "optimal_inaccurate") and w.value is not None:
            return np.clip(w.value, 0.0, None)
    return None


def _min_norm_on_face(dcl, s_opt, vertex, *, dml=None, eq=None, max_rounds=20):
    """The least-norm w >= 0 with ``dcl @ w >= s_opt (1 - slack)`` and either
    ``dml @ w <= 1`` or ``eq @ w = 1``: the unique point of the optimal face nearest 0.

    The LP's optimum is often not unique (nominal data: many features separate the
    same pairs equally), and which vertex a simplex solver returns depends on the row
    and feature order. The least-norm optimum is unique, spreads weight evenly over
    interchangeable features, and does not depend on either order.

    Solved by constraint generation (mfeat's 1,225 dense rows cost 11 s in one QP):
    the QP over the rows active at the LP ``vertex``, then again with every row the
    answer violates, until it violates none. The least-norm point of a relaxation that
    is feasible for every row is the least-norm point of the face, so the answer is
    exact and does not depend on which vertex started it. If the QP fails (or the
    rounds run out), the LP's ``vertex`` is kept with a warning.
    """
    bound = s_opt * (1 - _TIE_SLACK)
    A = dcl if eq is not None else np.vstack([dcl, -dml])  # rows read  A w >= b
    b = np.full(len(dcl), bound) if eq is not None else np.r_[np.full(len(dcl), bound), -np.ones(len(dml))]
    slack_tol = 1e-9 * max(1.0, bound)
    rows = np.flatnonzero(A @ vertex - b <= slack_tol)  # active at the vertex
    for _ in range(max_rounds):
        n_cl = int(np.sum(rows < len(dcl)))
        Ac, bc = A[rows[:n_cl]], b[rows[:n_cl]]
        Ae = eq[None, :] if eq is not None else dml[rows[n_cl:] - len(dcl)]
        if eq is None and len(Ae) == 0:
            Ae = np.zeros((1, dcl.shape[1]))  # no must-link row yet: a vacuous one
        wv = _least_norm_qp(Ac, bc, Ae, eq=eq is not None)
        if wv is None:
            break
        wv = wv / (eq @ wv) if eq is not None else wv / max(1.0, float((dml @ wv).max(initial=0.0)))
        violated = np.setdiff1d(np.flatnonzero(A @ wv - b < -slack_tol), rows)
        if len(violated) == 0:
            return wv
        rows = np.union1d(rows, violated)
    warnings.warn(
        "the lp_diag tie-break QP (least-norm optimum) failed; using the LP vertex HiGHS "
        "returned, which may depend on the order of the pairs and features",
        MetricFallbackWarning,
        stacklevel=4,
    )
    return vertex


def learn_lp_diag(dml: np.ndarray, dcl: np.ndarray) -> tuple[np.ndarray, float, str]:
    """z, the optimal squared split s, and the status (``optimal`` | ``unbounded_ray``).

    Units: each feature's squared differences are divided by their largest entry over
    the pairs, c_j, and the program is solved in w_j = c_j z_j (z is scaled back). The
    LP is invariant to rescaling a feature (z_j absorbs it), and now so is its solve:
    X -> cX gives z / c^2 with the same split and partition for any c (HiGHS's absolute
    tolerances are not: iris x 1e-5 returned z = 0 and x 1e8 a "model error" before,
    and segmentation's 7e-5-wide feature broke the QP below). Features that never differ
    across a pair get z_j = 0.

    Tie-break: among the optimal w, the one of least Euclidean norm
    (:func:`_min_norm_on_face`), unique, so the metric does not depend on the order of
    the pairs or of the features (nor on a feature's units). The returned split is the
    one z achieves (the LP optimum to a relative 1e-9). Unbounded case: the ray keeps
    sum z = 1 on the free features, as before.
    """
    d = dcl.shape[1]
    scale = np.maximum(dcl.max(axis=0, initial=0.0), dml.max(axis=0, initial=0.0))
    used = np.flatnonzero(scale > 0)
    Dm, Dc = dml[:, used] / scale[used], dcl[:, used] / scale[used]
    z = np.zeros(d)
    free = _null_features(Dm, len(used))
    # Unbounded iff some z >= 0 on the ML-constant features gives every CL pair a
    # positive distance; with nonnegative dcl, z = indicator(free) is such a z if any is.
    if np.all(Dc[:, free].sum(axis=1) > 0):
        f = np.flatnonzero(free)
        inv = 1.0 / scale[used[f]]  # sum z = inv @ w
        inv = inv / inv.max()  # a ray: its length is arbitrary, fixed to sum z = 1 below
        c = np.zeros(len(f) + 1)
        c[-1] = -1.0
        A_ub = np.hstack([-Dc[:, f], np.ones((len(Dc), 1))])
        A_eq = np.r_[inv, 0.0][None, :]
        res = _linprog(c, A_ub, np.zeros(len(Dc)), [(0, None)] * (len(f) + 1), A_eq, [1.0])
        w = _min_norm_on_face(Dc[:, f], float(res.x[-1]), res.x[:-1], eq=inv)
        z[used[f]] = w * inv
        z /= z.sum()
        warnings.warn(
            f"the lp_diag program is unbounded: {len(f)} feature(s) are constant inside every "
            f"must-link pair and separate every cannot-link pair; using the direction of "
            f"divergence (sum z = 1 on those features, best split)",
            MetricFallbackWarning,
            stacklevel=3,
        )
        return z, float((dcl @ z).min()), "unbounded_ray"
    res = _linprog(*lp_diag_program(Dm, Dc))
    w = _min_norm_on_face(Dc, float(res.x[-1]), res.x[:-1], dml=Dm)
    z[used] = w / scale[used]
    return z, float((Dc @ w).min()), "optimal"


# -- sdp_full -----------------------------------------------------------------------


def learn_sdp_full(ml_diff: np.ndarray, cl_diff: np.ndarray) -> tuple[np.ndarray, float, str]:
    """M of eqs. 16-20 (17'/18') from the pair differences (not squared), via cvxpy."""
    import cvxpy as cp

    d = cl_diff.shape[1]
    # The program is unbounded iff every CL difference has a component outside the
    # span of the ML differences (M supported on that complement sends s to infinity).
    if len(ml_diff):
        _, sv, Vt = np.linalg.svd(ml_diff, full_matrices=True)
        rank = int(np.sum(sv > sv.max() * max(ml_diff.shape) * np.finfo(float).eps)) if sv.size else 0
        comp = Vt[rank:]
    else:
        comp = np.eye(d)
    unbounded = len(comp) > 0 and np.all(np.linalg.norm(cl_diff @ comp.T, axis=1) > 1e-12)
    M = cp.Variable((d, d), PSD=True)
    s = cp.Variable(nonneg=True)
    cl_q = cp.sum(cp.multiply(cl_diff @ M, cl_diff), axis=1)
    cons = [cl_q >= s]
    if unbounded:
        # the ray: M = P M P on the complement, trace 1, best split
        cons += [cp.trace(M) == 1]
        if len(ml_diff):
            cons += [M @ ml_diff.T == 0]
    else:
        cons += [cp.sum(cp.multiply(ml_diff @ M, ml_diff), axis=1) <= 1]
    prob = cp.Problem(cp.Maximize(s), cons)
    prob.solve(solver="CLARABEL")
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"cvxpy could not solve the sdp_full program: status {prob.status}")
    Mv = (M.value + M.value.T) / 2
    if unbounded:
        warnings.warn(
            "the sdp_full program is unbounded (cannot-link differences leave the span of the "
            "must-link differences); using the direction of divergence (trace M = 1, best split)",
            MetricFallbackWarning,
            stacklevel=3,
        )
        return Mv, float(s.value), "unbounded_ray"
    return Mv, float(s.value), "optimal"


# -- xing_diag ----------------------------------------------------------------------


#: Relative duality gap below which Xing's bounded program counts as solved.
XING_GAP_TOL = 1e-6


def _xing_b_objective(b, D):
    """g(b) = sum(b) - log sum_i sqrt(D_i b) and its gradient (Xing's g in b = m * a)."""
    r = np.sqrt(np.maximum(D @ b, 0.0))
    h = r.sum()
    if not h > 0:
        return np.inf, np.zeros_like(b)
    # a pair at distance 0 has an unbounded derivative; floor it relative to the others
    rs = np.maximum(r, 1e-12 * r.max())
    return float(b.sum() - np.log(h)), 1.0 - (D.T @ (0.5 / rs)) / h


def xing_gap(b, D) -> float:
    """Certificate of optimality of Xing's bounded program at b >= 0 (in b = m * a).

    Maximising h(b) = sum_i sqrt(D_i b) over the simplex is the same problem (g is
    least at the maximiser scaled by 1/2). h is concave and 1/2-homogeneous, so its
    Frank-Wolfe gap  max_j dh/db_j - b.grad h = max_j dh/db_j - h/2  (for sum b = 1)
    bounds h* - h(b). Returned relative to h, scale-free: (h* - h)/h <= gap, hence the
    eq. 12 objective is within a factor (1 + gap)^2 of its optimum. Infinite when some
    cannot-link pair is at distance 0 (moving weight there gains without bound).
    """
    b = b / b.sum()
    r = np.sqrt(np.maximum(D @ b, 0.0))
    if np.any(r <= 0):
        return float("inf")
    grad = D.T @ (0.5 / r)
    return float(grad.max() / r.sum() * 2.0 - 1.0)


def _xing_bounded(m, dcl, *, max_iter=15000, restarts=3):
    """Xing's bounded diagonal program, solved in b = m * a (every ML sum becomes sum(b):
    one scale per feature, the problem's own), with D = dcl / m normalised to max 1
    (g's minimiser does not depend on that factor). L-BFGS-B from the uniform b, restarted
    from its last point while the duality gap (:func:`xing_gap`) exceeds
    :data:`XING_GAP_TOL`. Returns (a, gap)."""
    J = m > 0
    D = dcl[:, J] / m[J]
    D = D / D.max()
    b = np.full(D.shape[1], 0.5 / D.shape[1])
    gap = np.inf
    for _ in range(restarts):
        res = minimize(_xing_b_objective, b, args=(D,), jac=True, method="L-BFGS-B",
                       bounds=[(0, None)] * len(b),
                       options={"maxiter": max_iter, "maxfun": 2 * max_iter, "ftol": 1e-15, "gtol": 1e-12,
                                "maxcor": 30})
        if np.all(np.isfinite(res.x)) and res.x.sum() > 0:
            b = np.clip(res.x, 0.0, None)
        gap = xing_gap(b, D)
        if gap <= XING_GAP_TOL:
            break
        # A cannot-link pair left at distance 0 (its features all at b = 0): g's slope
        # there is -infinity, which the floored gradient hides, so L-BFGS-B can stop on
        # that face (iris_uci, mfeat-pix: 4 of 3,200 Table 2 fits). Restart from a point
        # that gives those features a little weight.
        zero = (D @ b) <= 0
        if zero.any():
            support = (D[zero] > 0).any(axis=0)
            b = b.copy()
            b[support] = np.maximum(b[support], 1e-6 * b.max())
    a = np.zeros(len(m))
    a[J] = b / m[J]
    return a, gap


def _xing_g(a, m, dcl):
    """Xing's objective g(a) = m.a - log(sum_CL ||x-y||_a), its gradient and Hessian."""
    r = np.sqrt(np.maximum(dcl @ a, 0.0))
    h = max(r.sum(), 1e-300)
    # pairs at distance 0 have unbounded derivatives: floor them (1e-6, as Xing's code)
    rs = np.maximum(r, 1e-6)
    dh = dcl.T @ (0.5 / rs) / h  # grad of log h
    hess = (dcl.T * (0.25 / rs**3)) @ dcl / h + np.outer(dh, dh)  # Hessian of -log h
    return float(m @ a - np.log(h)), m - dh, hess


def _xing_newton(m, dcl, *, tol=1e-3, max_iter=100):
    """Xing et al.'s own procedure for the diagonal case (section 2.2: Newton-Raphson on g):
    start at a = 1, projected Newton steps (a >= 0) with the step halved while that lowers g,
    stop when g's relative decrease falls below ``tol``. On an unbounded g it stops at
    finite weights, which is what an implementation of the paper's baseline returns.
    Where the ridged Hessian is singular in floating point the step is its least-squares
    (pseudo-inverse) solution: after a projection puts a cannot-link pair at distance 0,
    the Hessian's entries reach 1e16 (the 1e-6 floor cubed), the 1e-6 ridge is lost in
    rounding, and a feature that no pair varies leaves a zero row (ecoli, 5 % dense pairs:
    ``solve`` raised ``LinAlgError`` and the trial was an error).
    Returns (a, whether the ``tol`` rule stopped it)."""
    a = np.ones(dcl.shape[1])
    for _ in range(max_iter):
        g0, grad, hess = _xing_g(a, m, dcl)
        ridged = hess + 1e-6 * np.eye(len(a))
        try:
            step = np.linalg.solve(ridged, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(ridged, grad, rcond=None)[0]
        if not np.all(np.isfinite(step)):
            return a, False
        best_g, best_a, lam = np.inf, a, 1.0
        while lam > 1e-12:
            cand = np.maximum(a - lam * step, 0.0)
            gc = _xing_g(cand, m, dcl)[0]
            if gc >= best_g:
                break
            best_g, best_a, lam = gc, cand, lam / 2
        a = best_a
        if best_g == np.inf or abs((best_g - g0) / best_g) < tol:
            return a, best_g != np.inf
    return a, False


def learn_xing_diag(dml: np.ndarray, dcl: np.ndarray) -> tuple[np.ndarray, float, str, bool]:
    """Diagonal a of Xing et al. (eq. 12 with diagonal M), scaled so sum_CL ||x-y||_a = 1.

    Returns ``(a, objective, status, converged)``.

    Bounded case: the minimiser of g (:func:`_xing_bounded`: L-BFGS-B on a per-feature
    scaled problem), ``converged`` when its duality gap certifies the eq. 12 objective
    within a relative 2e-6 of the optimum (else a ``ConvergenceWarning``). The former
    unscaled L-BFGS-B often stopped ABNORMAL with a cannot-link pair at distance 0, up to
    8 % above the optimum on mfeat-pix, reported as optimal.
    Unbounded case (a feature constant inside every ML pair varies across some CL pair:
    eq. 12's optimum 0 is reached only by ignoring every other feature): Xing's own
    early-stopped Newton iteration (:func:`_xing_newton`), with a warning and
    ``status="xing_newton"``; ``converged`` says whether its own stopping rule was met.
    """
    from ccbench.base import ConvergenceWarning

    m = dml.sum(axis=0)
    free = (m == 0) & (dcl.sum(axis=0) > 0)
    if np.any(free):
        a, converged = _xing_newton(m, dcl)
        status = "xing_newton"
        warnings.warn(
            f"Xing's diagonal objective is unbounded: {int(free.sum())} feature(s) are constant "
            f"inside every must-link pair; using Xing et al.'s Newton iteration from a = 1 "
            f"(stops at finite weights)",
            MetricFallbackWarning,
            stacklevel=3,
        )
    else:
        a, gap = _xing_bounded(m, dcl)
        converged = bool(gap <= XING_GAP_TOL)
        status = "optimal" if converged else "not_converged"
        if not converged:
            warnings.warn(
                f"Xing's diagonal program was not solved to its tolerance: duality gap {gap:.2e} > "
                f"{XING_GAP_TOL:g} (the eq. 12 objective may be up to a factor {(1 + gap) ** 2:.4g} above "
                f"its optimum); metric_status_='not_converged', converged_=False",
                ConvergenceWarning,
                stacklevel=3,
            )
    h = np.sqrt(dcl @ a).sum()
    if not (np.isfinite(h) and h > 0):
        raise RuntimeError(f"Xing's diagonal metric failed ({status}): no cannot-link pair is separated")
    a = a / h**2  # eq. 13 with equality (||.||_a is 1/2-homogeneous in a)
    return a, float(m @ a), status, converged


# -- front door ---------------------------------------------------------------------


def learn_metric(X: np.ndarray, must_link: np.ndarray, cannot_link: np.ndarray, kind: str) -> LearnedMetric:
    """Learn the metric ``kind`` from ML / CL index pairs over the rows of X."""
    if kind == "euclidean":
        return LearnedMetric("euclidean", None, "euclidean")
    if kind not in METRICS:
        raise ValueError(f"unknown metric {kind!r}; use one of {METRICS}")
    dml, dcl, dropped = _split_pairs(X, must_link, cannot_link)
    converged = True  # HiGHS and Clarabel raise when they fail
    if kind == "lp_diag":
        w, split, status = learn_lp_diag(dml, dcl)
    elif kind == "xing_diag":
        w, split, status, converged = learn_xing_diag(dml, dcl)
    else:
        keep = (X[cannot_link[:, 0]] != X[cannot_link[:, 1]]).any(axis=1)
        cl = cannot_link[keep]
        w, split, status = learn_sdp_full(X[must_link[:, 0]] - X[must_link[:, 1]], X[cl[:, 0]] - X[cl[:, 1]])
    return LearnedMetric(kind, w, status, split, dropped, converged)
