"""``rn_sdp``: similarity learning by SDP with relational-neighbour constraints, then
k-medoids on the learned kernel (Okabe & Yamada 2010)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ccbench.base import ConstrainedClusterer, Interval, Options, check_random_state

from ._solvers import DEFAULT_RIDGE, auto_solver, sdpa_rows, solve_admm, solve_cvxpy, solve_sdpa
from .core import READINGS, build_problem, run_kmedoids


#: off-diagonal similarities all below this: the Gaussian similarity is the identity for
#: the solver (the objective's coefficients are then below its tolerances by 1e10)
_UNDERFLOW = 1e-15
#: every k_ij within this of 1 (the solvers' tolerance): K makes the points indistinguishable
_INDISTINGUISHABLE = 1e-5


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
    solver : {"auto", "admm", "sdpa", "cvxpy"}, default="auto"
        ``"auto"``: ``"sdpa"`` while its Schur complement is affordable -- at most
        ``min(10 m, 15000)`` rows (fixed entries + bounds of the chunklet-reduced problem,
        m chunklets; :data:`ccbench_plugins.sdp._solvers.SDPA_ROWS_PER_CHUNKLET` says
        why) -- else ``"admm"``; also ``"admm"`` when ``sdpa-python`` is missing or a
        ``ridge`` other than 0 and the default is asked for. ``solver_info_["solver"]``
        names the route taken. ``"sdpa"``: the exact interior-point solve of (6) by SDPA
        (the paper's solver; ``sdpa-python``) in the form whose Schur complement is
        indexed by the bounds (0.13 s on iris with 5 pairs per class, t = 3; the ADMM
        2.6 s with the ridge, 12 s without), of the linear problem only: ``ridge`` is
        not applied, and ties go to SDPA's interior-point limit, see Notes. ``"admm"``: the dedicated first-order method (PSD
        projection by a partial eigendecomposition alternating with the elementwise box
        projection, Anderson acceleration, residual balancing), with the ``ridge``
        tie-break. ``"cvxpy"``: the conic reference, with the ``ridge``.
    tol : float, default=1e-5
        ADMM's stopping tolerance, in the units of K's entries (|k_ij| <= 1): the primal
        residual ``max |X - Z|`` and the returned K's bound violation must be below it,
        and the certified duality gap below ``tol`` times ``max(1, |objective|)``.
    ridge : float, default=1e-4
        Tie-break of ``"admm"`` and ``"cvxpy"``: ``ridge / 2 ||K||_F^2`` is added to
        ``<L_bar, K>`` (not applied by ``"sdpa"``, hence by ``"auto"`` on its SDPA route). The
        linear problem's optimal K is not unique (most of ``L_bar``'s coefficients are
        below 1e-8 with the paper's sigma), and which optimum a solver returns moves the
        clustering; the ridge makes the optimum unique: the least-Frobenius-norm one as
        ``ridge -> 0``. 0 solves (6) as printed. See Notes.
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
    inertia_ : float
        Algorithm 1's ``D`` of the medoids on the squared kernel distance
        ``k_ii + k_jj - 2 k_ij = 2 - 2 k_ij``.
    solver_info_ : dict
        Solver, status, iterations, relative residuals, objective ``<L_bar, K>``,
        seconds, and the bound counts ``bounds`` / ``redundant`` / ``conflicting`` /
        ``kept`` (see :class:`ccbench_plugins.sdp.core.RNProblem`).
    n_iter_ : int
        Solver iterations.
    converged_ : bool
    n_violated_ : int
        Constraints the labels break (k-medoids on K may split a must-link chunklet or
        join a cannot-link; always when more points are mutually cannot-linked than there
        are clusters). A warning says so when it is not 0.

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

    **Tie-break.** With Table 1's sigma most coefficients of ``L_bar`` are below 1e-8
    (71 % on iris): two solvers' K then agree in objective to 1e-8 but differ by up to
    0.98 elementwise, and NMI moves by 0.003 (iris) to 0.065 (glass) with the solver.
    The default ``ridge = 1e-4`` adds ``ridge / 2 ||K||_F^2``: the optimum is unique
    (the ADMM and CLARABEL agree to 1e-5 elementwise where, without it, they differ by
    0.75), undecided pairs get the least similarity the constraints allow, and
    ``<L_bar, K>`` rises by at most ``ridge / 2 ||K*||_F^2`` (0.33 % on iris with 30
    random pairs). **Under SDPA** (``solver="sdpa"``, and ``"auto"`` where it takes
    SDPA) the tie-break is SDPA's interior-point limit instead: approximately a maximally
    complementary optimum, in the relative interior of the optimal face (undecided pairs
    get an intermediate similarity, K the largest rank), chosen by SDPA's path, not the
    least-norm one. ``<L_bar, K>`` is the linear optimum (to ~1e-6, vs cvxpy), and on
    well-separated data the labels agree with the ADMM's; where the data leave pairs
    undecided the clustering may differ from the ridge's. Pass ``solver="admm"`` for the
    unique least-norm optimum.

    **Degenerate inputs** are warned about: a sigma so small that every off-diagonal
    similarity underflows (``S = I``: the objective is constant and K comes from the
    constraints and the tie-break alone), ``n_neighbors > n - 1`` (clipped), and labels
    that break constraints (``n_violated_``).

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
        "solver": [Options("auto", "admm", "sdpa", "cvxpy")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None)],
        "ridge": [Interval(numbers.Real, 0, None, closed="left")],
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
        solver="auto",
        tol=1e-5,
        max_iter=5000,
        ridge=DEFAULT_RIDGE,
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
        self.ridge = ridge
        self.cvxpy_solver = cvxpy_solver
        self.kmedoids = kmedoids
        self.n_init = n_init
        self.random_state = random_state

    def fit(self, X, y=None, *, constraints=None):
        X, cons = self._validate_fit(X, constraints)
        rng = check_random_state(self.random_state)
        n = X.shape[0]
        if self.n_neighbors > n - 1:
            warnings.warn(
                f"RNSDP: n_neighbors={self.n_neighbors} exceeds n - 1 = {n - 1}; only {n - 1} relational "
                f"neighbours exist, so the bounds for t > {n - 1} are not generated (lower n_neighbors)",
                UserWarning, stacklevel=2,
            )
        problem = build_problem(
            X, cons, sigma=self.sigma, n_neighbors=self.n_neighbors,
            reading=self.reading, on_conflict=self.on_conflict,
        )
        self._warn_if_similarity_underflows(problem)
        solver = auto_solver(problem, self.ridge) if self.solver == "auto" else self.solver
        if solver == "admm":
            Kc, info = solve_admm(problem, tol=self.tol, max_iter=self.max_iter, ridge=self.ridge)
        elif solver == "sdpa":
            if self.ridge not in (0, DEFAULT_RIDGE):
                # the default ridge goes without a word (solver_info_["ridge"] = 0 records it);
                # a ridge asked for explicitly must not vanish silently
                warnings.warn(
                    f"RNSDP: solver='sdpa' solves the linear problem; ridge={self.ridge:g} is not applied "
                    f"(use solver='admm' or 'cvxpy' for the ridge tie-break)", UserWarning, stacklevel=2)
            Kc, info = solve_sdpa(problem)
        else:
            Kc, info = solve_cvxpy(problem, solver=self.cvxpy_solver, ridge=self.ridge)
        converged = info["status"] == "optimal"
        K = problem.expand(Kc)
        dist = np.clip(2.0 - 2.0 * K, 0.0, None)
        medoids, labels, cost, _, km_converged = run_kmedoids(
            dist, self.n_clusters, rng, method=self.kmedoids, n_init=self.n_init, max_iter=300
        )
        self.similarity_ = K
        self.medoid_indices_ = np.asarray(medoids)
        self.inertia_ = float(cost)
        self.labels_ = np.asarray(labels, dtype=int)
        self.solver_info_ = {**info, **problem.counts, "n_chunklets": problem.m,
                             "requested_solver": self.solver, "sdpa_rows": sdpa_rows(problem)}
        self.n_iter_ = int(info["n_iter"])
        self.converged_ = bool(converged and km_converged)
        split, joined = cons.violations(self.labels_)
        self.n_violated_ = int(split + joined)
        if self.n_violated_:
            # K meets every constraint, but k-medoids on it need not: e.g. more mutually
            # cannot-linked chunklets than clusters cannot all be kept apart
            warnings.warn(
                f"RNSDP labels break {split} must-link(s) and {joined} cannot-link(s) (n_violated_="
                f"{self.n_violated_}); the learned K meets them, the k-medoids step on it did not"
                + (" (more mutually cannot-linked points than n_clusters?)" if joined else ""),
                UserWarning, stacklevel=2,
            )
        found = len(np.unique(self.labels_))
        if found < self.n_clusters or K.min() > 1.0 - _INDISTINGUISHABLE:
            # e.g. no constraints and a wide sigma: the optimum K is (nearly) all ones, every
            # point alike, so k-medoids has nothing to separate -- say so, do not hide it (an
            # interior-point K is all ones only to its tolerance, and k-medoids then splits
            # the noise into n_clusters clusters: hence the second test)
            warnings.warn(
                f"RNSDP found {found} cluster(s) for n_clusters={self.n_clusters} and the learned K makes "
                f"points indistinguishable (min k_ij = {K.min():.7f}); add constraints or lower sigma",
                UserWarning, stacklevel=2,
            )
        return self

    def _warn_if_similarity_underflows(self, problem):
        # S = I (every off-diagonal exp(-d^2 / sigma^2) below the smallest double) makes
        # L_bar = 0 off the diagonal: <L_bar, K> is constant over the feasible set
        off = problem.max_off_similarity
        if off < _UNDERFLOW:
            warnings.warn(
                f"RNSDP: sigma={self.sigma:g} is so small that every off-diagonal similarity "
                f"exp(-d_ij^2 / sigma^2) is below {_UNDERFLOW:g} (largest {off:.3g}): the objective <L_bar, K> "
                f"is constant and K is decided by the constraints and the tie-break alone; standardise "
                f"the features or raise sigma (e.g. to the median nearest-neighbour distance, "
                f"{problem.median_nn_distance:.3g})",
                UserWarning, stacklevel=3,
            )
