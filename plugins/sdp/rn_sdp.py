"""``rn_sdp``: similarity learning by SDP with relational-neighbour constraints, then
k-medoids on the learned kernel (Okabe & Yamada 2010)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ccbench.base import ConstrainedClusterer, Interval, Options, check_random_state

from ._solvers import solve_admm, solve_cvxpy
from .core import READINGS, build_problem, run_kmedoids


class RNSDP(ConstrainedClusterer):
    """Relational-neighbour SDP similarity learning + k-medoids (NKK-MEANS; t = 0 is KK-MEANS).

    Learns ``K`` from eq. (6): minimise ``<L_bar, K>`` subject to ``k_ii = 1``,
    ``k_ij = 1`` on must-links, ``k_ij = 0`` on cannot-links, the relational-neighbour
    bounds (5) for the 1st..t-th nearest neighbours, and ``K`` PSD; then clusters with
    Algorithm 1's k-medoids on the kernel distance ``k_ii + k_jj - 2 k_ij``.

    Parameters
    ----------
    n_clusters : int, default=2
    n_neighbors : int, default=3
        ``t``: relational neighbours per constrained point. 0 drops eq. (6)'s fourth
        and fifth lines (the paper's KK-MEANS base method, eq. 3).
    sigma : float, default=1.0
        Width of ``s_ij = exp(-d_ij^2 / sigma^2)``; the paper's Table 1: iris 0.271,
        soybean 0.5, wine 0.055 (standardised), glass 0.473.
    reading : {"prose", "literal"}, default="prose"
        Direction of the relational-neighbour inequalities, see Notes.
    on_conflict : {"drop", "raise"}, default="drop"
        A bound the must-link closure contradicts (the closure forces ``k = 1`` or
        ``k = 0`` outside it) is dropped and counted in ``solver_info_``, or raises
        :class:`ccbench.base.InfeasibleConstraintsError` (the literal problem is then
        infeasible).
    solver : {"admm", "cvxpy"}, default="admm"
        ``"admm"``: the dedicated first-order method (PSD projection by
        eigendecomposition alternating with the elementwise box projection, Anderson
        acceleration, residual balancing). ``"cvxpy"``: the conic reference.
    tol : float, default=1e-5
        ADMM's relative primal and dual residual tolerance.
    max_iter : int, default=5000
        ADMM iterations.
    cvxpy_solver : str or None, default=None
        Conic solver for ``solver="cvxpy"``; ``None`` picks CLARABEL, SDPA or SCS.
    kmedoids : {"swap", "fasterpam"}, default="swap"
        Algorithm 1's greedy best-improvement swap, or the ``kmedoids`` package's FasterPAM.
    n_init : int, default=10
        k-medoids random initialisations (the lowest cost ``D`` wins).
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    similarity_ : ndarray of shape (n_samples, n_samples)
        The learned ``K`` (PSD, unit diagonal).
    medoid_indices_ : ndarray of shape (n_clusters,)
    solver_info_ : dict
        Solver, status, iterations, relative residuals, objective ``<L_bar, K>``,
        seconds, and the bound counts ``bounds`` / ``redundant`` / ``conflicting`` /
        ``kept`` (see :class:`ccbench_plugins.sdp.core.RNProblem`).
    n_iter_ : int
        Solver iterations.
    converged_ : bool

    Notes
    -----
    The direction of (5)/(6) contradicts the text. Section 3 says that for a must-link
    ``(i, j)`` the relational neighbours "move closer" (``p_i`` and ``r_t^j``, ``p_j``
    and ``r_t^i``) and for a cannot-link they "move farther", yet (6) prints
    must-link bounds as ``k <= -l_bar`` (an upper bound on the similarity) and
    cannot-link bounds as ``k >= -l_bar`` on the points' own neighbours; (5) prints a
    third index pattern. ``reading="prose"`` (default) follows the text and Fig. 2:
    ``k_{i r_t^j} >= -l_bar_{i r_t^j}`` and ``k_{j r_t^i} >= -l_bar_{j r_t^i}`` for
    must-links, ``<=`` on the same pairs for cannot-links. ``reading="literal"`` is (6)
    as printed. Either way a PSD ``K`` with unit diagonal and ``k_ij = 1`` has equal
    rows ``i`` and ``j``, so must-link chains force ``k = 1`` on every pair of a
    chunklet and ``k = 0`` between cannot-linked chunklets; a literal upper bound
    ``k <= 0.05`` on such a pair makes (6) infeasible. The problem is solved over
    chunklets (``K = P K' P^T``), which meets the must-link equalities exactly.

    References
    ----------
    M. Okabe and S. Yamada, "Learning similarity matrix from constraints of relational
    neighbors", JACIII 14(4), 2010, eqs. (2)-(6), Algorithm 1.
    S. Boyd et al., "Distributed optimization and statistical learning via ADMM", 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import Constraints, make_method
    >>> X = np.r_[np.zeros((6, 2)), np.ones((6, 2))] + np.arange(12)[:, None] * 0.02
    >>> cons = Constraints([[0, 1]], [[0, 6]], n_samples=12)
    >>> est = make_method("rn_sdp", n_clusters=2, n_neighbors=1, sigma=0.5, random_state=0)
    >>> labels = est.fit_predict(X, constraints=cons)
    >>> bool(labels[0] == labels[1] and labels[0] != labels[6])
    True
    """

    _parameter_constraints = {
        "n_clusters": [Interval(numbers.Integral, 1, None)],
        "n_neighbors": [Interval(numbers.Integral, 0, None)],
        "sigma": [Interval(numbers.Real, 0, None, closed="neither")],
        "reading": [Options(*READINGS)],
        "on_conflict": [Options("drop", "raise")],
        "solver": [Options("admm", "cvxpy")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None)],
        "cvxpy_solver": [str, None],
        "kmedoids": [Options("swap", "fasterpam")],
        "n_init": [Interval(numbers.Integral, 1, None)],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters=2,
        *,
        n_neighbors=3,
        sigma=1.0,
        reading="prose",
        on_conflict="drop",
        solver="admm",
        tol=1e-5,
        max_iter=5000,
        cvxpy_solver=None,
        kmedoids="swap",
        n_init=10,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.reading = reading
        self.on_conflict = on_conflict
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.cvxpy_solver = cvxpy_solver
        self.kmedoids = kmedoids
        self.n_init = n_init
        self.random_state = random_state

    def fit(self, X, y=None, *, constraints=None):
        X, cons = self._validate_fit(X, constraints)
        rng = check_random_state(self.random_state)
        problem = build_problem(
            X, cons, sigma=self.sigma, n_neighbors=self.n_neighbors,
            reading=self.reading, on_conflict=self.on_conflict,
        )
        if self.solver == "admm":
            Kc, info = solve_admm(problem, tol=self.tol, max_iter=self.max_iter)
            converged = info["status"] == "optimal"
        else:
            Kc, info = solve_cvxpy(problem, solver=self.cvxpy_solver)
            converged = info["status"] == "optimal"
        K = problem.expand(Kc)
        dist = np.clip(2.0 - 2.0 * K, 0.0, None)
        medoids, labels, _, _, km_converged = run_kmedoids(
            dist, self.n_clusters, rng, method=self.kmedoids, n_init=self.n_init, max_iter=300
        )
        self.similarity_ = K
        self.medoid_indices_ = np.asarray(medoids)
        self.labels_ = np.asarray(labels, dtype=int)
        self.solver_info_ = {**info, **problem.counts, "n_chunklets": problem.m}
        self.n_iter_ = int(info["n_iter"])
        self.converged_ = bool(converged and km_converged)
        found = len(np.unique(self.labels_))
        if found < self.n_clusters:
            # e.g. no constraints and a wide sigma: the optimum K is (nearly) all ones, every
            # point alike, so k-medoids has nothing to separate -- say so, do not hide it
            warnings.warn(
                f"RNSDP found {found} cluster(s) for n_clusters={self.n_clusters}: the learned K makes "
                f"points indistinguishable (min k_ij = {K.min():.3f}); add constraints or lower sigma",
                UserWarning, stacklevel=2,
            )
        return self
