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
        ``"euclidean"``, ``"optimal"``, ``"unbounded_ray"``, ``"xing_newton"`` or
        ``"no_supervision"``.
    split : float
        For ``lp_diag`` / ``sdp_full``: the optimal squared split s (eq. 21) with
        every ML squared distance <= 1; for the ray, the split with sum(z) = 1.
        For ``xing_diag`` the eq. 12 objective at the solution scaled to meet
        eq. 13 with equality. NaN for Euclidean.
    n_dropped_pairs : int
        CL pairs of identical points that were dropped.
    """

    kind: str
    weights: np.ndarray | None
    status: str
    split: float = float("nan")
    n_dropped_pairs: int = 0

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
        raise ValueError(
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


def learn_lp_diag(dml: np.ndarray, dcl: np.ndarray) -> tuple[np.ndarray, float, str]:
    """z, the optimal squared split s, and the status (``optimal`` | ``unbounded_ray``)."""
    d = dcl.shape[1]
    free = _null_features(dml, d)
    # Unbounded iff some z >= 0 on the ML-constant features gives every CL pair a
    # positive distance; with nonnegative dcl, z = indicator(free) is such a z if any is.
    if np.all(dcl[:, free].sum(axis=1) > 0):
        f = np.flatnonzero(free)
        c = np.zeros(len(f) + 1)
        c[-1] = -1.0
        A_ub = np.hstack([-dcl[:, f], np.ones((len(dcl), 1))])
        A_eq = np.r_[np.ones(len(f)), 0.0][None, :]
        res = _linprog(c, A_ub, np.zeros(len(dcl)), [(0, None)] * (len(f) + 1), A_eq, [1.0])
        z = np.zeros(d)
        z[f] = res.x[:-1]
        warnings.warn(
            f"the lp_diag program is unbounded: {len(f)} feature(s) are constant inside every "
            f"must-link pair and separate every cannot-link pair; using the direction of "
            f"divergence (sum z = 1 on those features, best split)",
            MetricFallbackWarning,
            stacklevel=3,
        )
        return z, float(res.x[-1]), "unbounded_ray"
    res = _linprog(*lp_diag_program(dml, dcl))
    return res.x[:-1], float(res.x[-1]), "optimal"


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


def _xing_objective(a, m, dcl):
    q = np.maximum(dcl @ a, 1e-300)
    r = np.sqrt(q)
    h = r.sum()
    grad = m - (dcl.T @ (0.5 / r)) / h
    return float(m @ a - np.log(h)), grad


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
    finite weights, which is what an implementation of the paper's baseline returns."""
    a = np.ones(dcl.shape[1])
    for _ in range(max_iter):
        g0, grad, hess = _xing_g(a, m, dcl)
        step = np.linalg.solve(hess + 1e-6 * np.eye(len(a)), grad)
        if not np.all(np.isfinite(step)):
            break
        best_g, best_a, lam = np.inf, a, 1.0
        while lam > 1e-12:
            cand = np.maximum(a - lam * step, 0.0)
            gc = _xing_g(cand, m, dcl)[0]
            if gc >= best_g:
                break
            best_g, best_a, lam = gc, cand, lam / 2
        a = best_a
        if best_g == np.inf or abs((best_g - g0) / best_g) < tol:
            break
    return a


def learn_xing_diag(dml: np.ndarray, dcl: np.ndarray, *, max_iter: int = 1000) -> tuple[np.ndarray, float, str]:
    """Diagonal a of Xing et al. (eq. 12 with diagonal M), scaled so sum_CL ||x-y||_a = 1.

    Bounded case: the exact minimiser of g (L-BFGS-B, tight tolerances; eq. 12's optimum
    up to scale). Unbounded case (a feature constant inside every ML pair varies across
    some CL pair: eq. 12's optimum 0 is reached only by ignoring every other feature):
    Xing's own early-stopped Newton iteration (:func:`_xing_newton`), with a warning and
    ``status="xing_newton"``.
    """
    d = dcl.shape[1]
    m = dml.sum(axis=0)
    free = (m == 0) & (dcl.sum(axis=0) > 0)
    if np.any(free):
        a = _xing_newton(m, dcl)
        status = "xing_newton"
        warnings.warn(
            f"Xing's diagonal objective is unbounded: {int(free.sum())} feature(s) are constant "
            f"inside every must-link pair; using Xing et al.'s Newton iteration from a = 1 "
            f"(stops at finite weights)",
            MetricFallbackWarning,
            stacklevel=3,
        )
    else:
        a0 = np.full(d, 1.0 / max(m.sum(), 1e-300))
        res = minimize(_xing_objective, a0, args=(m, dcl), jac=True, method="L-BFGS-B",
                       bounds=[(0, None)] * d, options={"maxiter": max_iter, "ftol": 1e-15, "gtol": 1e-10})
        a = np.clip(res.x, 0, None)
        status = "optimal"
    h = np.sqrt(dcl @ a).sum()
    if not (np.isfinite(h) and h > 0):
        raise RuntimeError(f"Xing's diagonal metric failed ({status}): no cannot-link pair is separated")
    a = a / h**2  # eq. 13 with equality (||.||_a is 1/2-homogeneous in a)
    return a, float(m @ a), status


# -- front door ---------------------------------------------------------------------


def learn_metric(X: np.ndarray, must_link: np.ndarray, cannot_link: np.ndarray, kind: str) -> LearnedMetric:
    """Learn the metric ``kind`` from ML / CL index pairs over the rows of X."""
    if kind == "euclidean":
        return LearnedMetric("euclidean", None, "euclidean")
    if kind not in METRICS:
        raise ValueError(f"unknown metric {kind!r}; use one of {METRICS}")
    dml, dcl, dropped = _split_pairs(X, must_link, cannot_link)
    if kind == "lp_diag":
        w, split, status = learn_lp_diag(dml, dcl)
    elif kind == "xing_diag":
        w, split, status = learn_xing_diag(dml, dcl)
    else:
        keep = (X[cannot_link[:, 0]] != X[cannot_link[:, 1]]).any(axis=1)
        cl = cannot_link[keep]
        w, split, status = learn_sdp_full(X[must_link[:, 0]] - X[must_link[:, 1]], X[cl[:, 0]] - X[cl[:, 1]])
    return LearnedMetric(kind, w, status, split, dropped)
