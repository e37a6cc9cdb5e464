"""``scap`` and ``ssap_l``: soft-constraint affinity propagation (Leone, Sumedha & Weigt 2008).

Every point picks another point as its exemplar (no self-exemplars, eq. 2);
each point chosen by somebody pays a penalty ``p`` (eq. 3); clusters are the
connected components of the exemplar graph. The zero-temperature messages
(eq. 14) are iterated by random sequential updates, one point at a time
(section 2.4). ``ssap_l`` adds labeled macro-nodes (eqs. 21-23). A finite
inverse temperature ``beta`` (eq. 6) runs the finite-temperature equations
(eqs. 12-13) on the same schedule instead, dense mode only.

Two storage modes run the same schedule on the same random order:

- ``memory="dense"`` precomputes the similarity matrix and stores the requests
  ``r`` as an N x N array;
- ``memory="linear"`` stores only site quantities ``h1, c1, h2`` (eq. 16) and
  ``u`` (eq. 18), computing each similarity row from ``X`` when needed and
  every request and availability from them (eqs. 17, 19). No N x N array.

``backend="numba"`` runs each sweep through :mod:`ccbench_plugins.scap._kernels`
(same arithmetic and random order as the numpy path used by default).
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ccbench.base import (
    ConstrainedClusterer,
    ConvergenceWarning,
    Interval,
    Options,
    check_memory,
    check_random_state,
)
from ccbench.similarity import fit_for_n_clusters, negative_sq_euclidean, preference_bracket

__all__ = ["SCAP", "SSAPL", "NClustersUnreachableWarning"]

# Pairs used to estimate the default penalty (median pairwise distance) when
# there are more pairs than this; chunked so memory stays O(chunk * d).
_MEDIAN_SAMPLE_PAIRS = 100_000
_PAIR_CHUNK = 10_000


# -- similarities -------------------------------------------------------------


class _CandidateSimilarity:
    """Similarity rows from variables (nodes that choose an exemplar) to candidates.

    Candidates are the point variables (in ``variables`` order) followed by one
    macro-node per group in ``macro_nodes``; the similarity of a point to a
    macro-node is the maximum over the node's members (section 4). The first
    ``n_free`` macro-nodes are variables too ("free" macro-nodes: unlabeled
    chunklets that choose an exemplar, see :class:`SSAPL`); a free macro-node's
    row is the maximum of its members' rows, so its similarity to another
    macro-node is the maximum over both member sets. Variables are the point
    variables then the free macro-nodes: variable ``i`` is candidate ``i``.
    Without macro-nodes, variables are all points and rows are plain similarity rows.
    """

    def __init__(self, X, kind, variables, macro_nodes, n_free=0):
        if kind != "precomputed":
            # Centred once, so the Gram identity in every row (numpy or compiled)
            # is translation-invariant to rounding (see ccbench.similarity).
            X = X - X.mean(axis=0)
        self.X = X
        self.kind = kind
        self.variables = variables
        self.macro_nodes = macro_nodes
        self.n_free = int(n_free)
        self.n_variables = len(variables) + self.n_free
        self.n_points = X.shape[0]
        self.plain = len(macro_nodes) == 0 and len(variables) == self.n_points
        if kind != "precomputed":
            self.sq_norms = np.einsum("ij,ij->i", X, X)
            self.X_T = np.ascontiguousarray(X.T)  # for the compiled kernel's row loop
        else:
            self.sq_norms = np.zeros(0)
            self.X_T = np.zeros((0, 0))
        # members of every macro-node, concatenated, and where each one starts (empty: none)
        sizes = [len(g) for g in macro_nodes]
        self.macro_members = np.concatenate(macro_nodes).astype(np.intp) if sizes else np.zeros(0, np.intp)
        self.macro_starts = np.cumsum([0, *sizes])[:-1].astype(np.intp)
        self.n_candidates = len(variables) + len(macro_nodes)

    def point_rows(self, points):
        """s(i, j) for i in ``points`` and every data point j: (len(points), n_points)."""
        if self.kind == "precomputed":
            return self.X[points]
        S = negative_sq_euclidean(self.X[points], self.X)
        if self.kind == "euclidean":
            np.negative(S, out=S)
            np.sqrt(S, out=S)
            np.negative(S, out=S)
        return S

    def rows(self, positions):
        """Candidate-similarity rows of the variables at ``positions``."""
        positions = np.asarray(positions)
        n_points = len(self.variables)
        if self.n_free == 0 or np.all(positions < n_points):
            full = self.point_rows(self.variables[positions])
        else:
            full = np.empty((len(positions), self.n_points))
            is_point = positions < n_points
            if is_point.any():
                full[is_point] = self.point_rows(self.variables[positions[is_point]])
            for r in np.flatnonzero(~is_point):  # a free macro-node: the max over its members (section 4)
                full[r] = self.point_rows(self.macro_nodes[positions[r] - n_points]).max(axis=0)
        if self.plain:
            return full
        parts = [full[:, self.variables]]
        if self.macro_members.size:
            parts.append(np.maximum.reduceat(full[:, self.macro_members], self.macro_starts, axis=1))
        return np.concatenate(parts, axis=1)

    def row(self, position):
        return self.rows([position])[0]

    def median_distance(self, rng):
        """Median of -s(i, j) over pairs i != j of data points (sampled when many)."""
        n = self.n_points
        if self.kind == "precomputed":
            return float(-np.median(self.X[~np.eye(n, dtype=bool)]))
        n_pairs = n * (n - 1) // 2
        if n_pairs <= _MEDIAN_SAMPLE_PAIRS:
            i, j = np.triu_indices(n, k=1)
        else:
            i = rng.integers(0, n, size=_MEDIAN_SAMPLE_PAIRS)
            j = (i + rng.integers(1, n, size=_MEDIAN_SAMPLE_PAIRS)) % n  # j != i
        dist = np.empty(len(i))
        for start in range(0, len(i), _PAIR_CHUNK):
            sl = slice(start, start + _PAIR_CHUNK)
            diff = self.X[i[sl]] - self.X[j[sl]]
            dist[sl] = np.einsum("ij,ij->i", diff, diff)
        if self.kind == "euclidean":
            np.sqrt(dist, out=dist)
        return float(np.median(dist))


# -- message passing core -----------------------------------------------------


@dataclass
class _SiteState:
    """Site quantities of eqs. 16 and 18 (the whole state in linear mode).

    ``best``/``exemplar``/``second`` are h1, c1, h2 of eq. 16 for each variable;
    ``positive_requests`` is u of eq. 18 for each candidate; ``started`` marks
    variables whose requests have been computed once (before that r = 0).
    ``requests`` is the stored N x N request matrix in dense mode, else None.
    """

    best: np.ndarray
    exemplar: np.ndarray
    second: np.ndarray
    positive_requests: np.ndarray
    started: np.ndarray
    requests: np.ndarray | None


def _new_state(n_variables, n_candidates, dense):
    return _SiteState(
        best=np.zeros(n_variables),
        exemplar=np.full(n_variables, -1, dtype=np.intp),
        second=np.zeros(n_variables),
        positive_requests=np.zeros(n_candidates),
        started=np.zeros(n_variables, dtype=bool),
        requests=np.zeros((n_variables, n_candidates)) if dense else None,
    )


def _old_requests(state, i, s):
    """r_{i -> k} for every candidate k, before i's update (eq. 17 in linear mode)."""
    if state.requests is not None:
        return state.requests[i]
    if not state.started[i]:
        return np.zeros_like(s)
    r = s - state.best[i]
    c = state.exemplar[i]
    r[c] = s[c] - state.second[i]
    return r


def _update_point(state, i, s, p):
    """Sequential update of variable ``i`` given its candidate-similarity row ``s``.

    Availabilities to ``i`` follow from the current requests (eqs. 14, 19):
    a_{k -> i} = min(0, -p + u_k - max(0, r_{i -> k})). Then the requests of
    ``i`` (eqs. 14, 16, 17), and u is updated so that eq. 18 holds exactly
    for the new requests, which refreshes every availability that depends on them.
    """
    pos_old = np.maximum(_old_requests(state, i, s), 0.0)
    pos_old[i] = 0.0  # i is not its own candidate (eq. 2)
    field = s + np.minimum(0.0, state.positive_requests - pos_old - p)
    field[i] = -np.inf
    c = int(np.argmax(field))
    best = field[c]
    field[c] = -np.inf
    second = field.max()
    r_new = s - best
    r_new[c] = s[c] - second
    r_new[i] = 0.0
    pos_new = np.maximum(r_new, 0.0)
    state.positive_requests += pos_new
    state.positive_requests -= pos_old
    state.best[i], state.exemplar[i], state.second[i] = best, c, second
    state.started[i] = True
    if state.requests is not None:
        state.requests[i] = r_new


def _log1pexp(x):
    """log(1 + e^x) without overflow (the compiled kernel's ``_log1pexp``)."""
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def _start_beta(state, n_var, beta):
    """u_k (eq. 18 with the softplus of eq. 13) for the initial requests r = 0 (section 2.4, step 1).

    At finite ``beta`` a zero request is B = 1/2 and weighs sp(0) = ln 2 / beta: u_k sums it
    over every variable l != k (n_var - 1 for a variable, n_var for a macro-node).
    """
    state.positive_requests[:] = n_var * np.log(2.0) / beta
    state.positive_requests[:n_var] -= np.log(2.0) / beta


def _update_point_beta(state, i, s, p, beta, log_q):
    """Finite-temperature update of variable ``i`` (eqs. 12-13), dense mode.

    With a = ln(A)/beta and r = ln(B / (1 - B))/beta (eq. 13), eq. 12 reads::

        a_{k->i} = -(1/beta) ln[1 + (e^{beta p} - 1) exp(-beta sum_{l != k, i} sp(r_{l->k}))]
        r_{i->k} = S(i, k) - (1/beta) ln sum_{l != i, k} exp(beta [S(i, l) + a_{l->i}])

    with sp(r) = ln(1 + e^{beta r})/beta; as beta -> infinity, sp -> max(0, .), the
    log-sum-exp -> max and a -> min(0, -p + sum ...), i.e. eq. 14. Computed as
    a = -ln(1 + e^{beta (p - U) + log_q})/beta, log_q = ln(1 - e^{-beta p}); ``u``
    holds the sums of sp (eq. 18's analogue), ``best``/``second`` the log-sum-exps over
    l != i and over l != i, c (eq. 16's analogues), ``exemplar`` the argmax of the
    marginal P_i (eq. 12, third line), which is the argmax of S(i, .) + a_{.->i}.
    """
    pos_old = _log1pexp(beta * state.requests[i]) / beta
    pos_old[i] = 0.0
    field = s - _log1pexp(beta * (p - (state.positive_requests - pos_old)) + log_q) / beta
    field[i] = -np.inf
    c = int(np.argmax(field))
    m1 = field[c]
    w = np.exp(beta * (field - m1))  # 0 at i, 1 at c
    total = w.sum()
    others = np.delete(field, [i, c])  # c != i: field[i] is -inf
    m2 = others.max()
    best = m1 + np.log(total) / beta
    second = m2 + np.log(np.exp(beta * (others - m2)).sum()) / beta
    share = w / total  # e^{beta (field_k - best)}: <= 1/2 for k != c
    share[c] = 0.0
    r_new = s - (best + np.log1p(-share) / beta)
    r_new[c] = s[c] - second
    r_new[i] = 0.0
    pos_new = _log1pexp(beta * r_new) / beta
    pos_new[i] = 0.0
    state.positive_requests += pos_new
    state.positive_requests -= pos_old
    state.best[i], state.exemplar[i], state.second[i] = best, c, second
    state.started[i] = True
    state.requests[i] = r_new


def _numba_sweep_beta(S, state, order, p, beta, log_q):
    """One finite-temperature sweep through the compiled kernel (same arithmetic as :func:`_update_point_beta`)."""
    from ._kernels import sweep_beta

    sweep_beta(order, float(p), float(beta), float(log_q), S, state.requests,
               state.best, state.exemplar, state.second, state.positive_requests)
    state.started[:] = True


def _numba_sweep(similarity, S, state, order, p):
    """One sweep through the compiled kernel (same arithmetic as :func:`_update_point`)."""
    from ._kernels import sweep

    empty = np.zeros((0, 0))
    sweep(
        order,
        float(p),
        similarity.X,
        similarity.X_T,
        similarity.sq_norms,
        similarity.kind == "euclidean",
        similarity.variables,
        similarity.macro_members,
        similarity.macro_starts,
        similarity.plain,
        empty if S is None else S,
        empty if state.requests is None else state.requests,
        state.best,
        state.exemplar,
        state.second,
        state.positive_requests,
        state.started,
    )


def _run_scap(similarity, *, p, max_iter, convergence_iter, rng, dense, engine="numpy", stop_on="exemplars",
              beta=np.inf, dense_rows=None):
    """Random sequential sweeps until the exemplars (or clusters) are stable (section 2.4).

    Returns ``(state, n_iter, converged)``. Converged means the exemplar of
    every variable (``stop_on="exemplars"``), or the partition into connected
    components (``"clusters"``), stayed the same for ``convergence_iter``
    consecutive sweeps.

    ``dense_rows``, a dict, keeps the dense similarity matrix between calls on the same
    ``similarity`` (the fits of one search for ``n_clusters`` differ only in ``p``): built on the
    first call, read by the later ones, the same matrix bit for bit.
    """
    n_var, n_cand = similarity.n_variables, similarity.n_candidates
    state = _new_state(n_var, n_cand, dense)
    if engine == "numba" and not dense and similarity.n_free:
        engine = "numpy"  # the compiled linear sweep builds point rows only; free macro-nodes need their max
    if not dense:
        S = None
    elif similarity.plain and similarity.kind == "precomputed":
        S = similarity.X  # read only in the sweeps: no second N x N copy
    else:
        # Row by row, exactly as linear mode computes them: a single (n, d) x (d, n)
        # product may round differently from n (1, d) x (d, n) ones, and one ulp
        # decides exact distance ties (iris: d(47, 38) = d(47, 30)).
        S = None if dense_rows is None else dense_rows.get("S")
        if S is None:
            S = np.empty((n_var, n_cand))
            for i in range(n_var):
                S[i] = similarity.row(i)
            if dense_rows is not None:
                dense_rows["S"] = S
    finite = not np.isinf(beta)  # finite temperature (eq. 12): dense mode only
    if finite:
        _start_beta(state, n_var, beta)
        with np.errstate(divide="ignore"):
            log_q = float(np.log(-np.expm1(-beta * p)))  # -inf at p = 0: every availability 0
    stable, previous = 0, None
    for sweep in range(1, max_iter + 1):
        order = rng.permutation(n_var)
        if finite and engine == "numba":
            _numba_sweep_beta(S, state, order, p, beta, log_q)
        elif finite:
            for i in order:
                _update_point_beta(state, i, S[i], p, beta, log_q)
        elif engine == "numba":
            _numba_sweep(similarity, S, state, order, p)
        else:
            for i in order:
                _update_point(state, i, S[i] if dense else similarity.row(i), p)
        # Component ids from connected_components are canonical (numbered by first node).
        current = state.exemplar.copy() if stop_on == "exemplars" else _components(state.exemplar, n_cand)
        if previous is not None and np.array_equal(previous, current):
            stable += 1
            if stable >= convergence_iter:
                return state, sweep, True
        else:
            stable = 0
        previous = current
    return state, max_iter, False


def _components(exemplar, n_candidates):
    """Connected components of the undirected exemplar graph i -- c_i."""
    n_var = len(exemplar)
    graph = coo_matrix((np.ones(n_var), (np.arange(n_var), exemplar)), shape=(n_candidates, n_candidates))
    _, comp = connected_components(graph, directed=False)
    return comp


# -- estimators ---------------------------------------------------------------


#: Most fits one ``n_clusters`` search may run (bisection steps).
SEARCH_FITS = 20


class NClustersUnreachableWarning(UserWarning):
    """The ``n_clusters`` asked for is below the fewest clusters the model can return.

    Raised by a search for ``n_clusters`` when the method's structure forbids that count (SSAP-L:
    more labeled macro-nodes than ``n_clusters``, each a cluster of its own); the estimator's
    ``n_clusters_reached_`` is False and ``n_clusters_unreachable_`` says why.
    """


def _auto_backend(backend: str, memory: str) -> str:
    """``backend="auto"``: the compiled sweep where it gives the numpy path's exemplars bit for bit (dense
    memory), the numpy path in linear mode (its compiled rows sum in another order: a tie can break
    differently, so linear mode stays identical to dense)."""
    if backend != "auto":
        return backend
    return "numba" if memory == "dense" else "numpy"


class SCAP(ConstrainedClusterer):
    """Soft-constraint affinity propagation (unsupervised).

    Each point ``i`` chooses an exemplar ``c_i != i`` (eq. 2) to minimise
    H(c) = -sum_i S(i, c_i) + p * (number of distinct exemplars) (eq. 3). The
    zero-temperature max-sum messages (eq. 14)::

        r_{i->k} = S(i, k) - max_{l != i, k} [S(i, l) + a_{l->i}]
        a_{k->i} = min[0, -p + sum_{l != k, i} max(0, r_{l->k})]

    are iterated by random sequential updates and the exemplar of ``i`` is
    ``argmax_{k != i} [S(i, k) + a_{k->i}]`` (eqs. 15, 20). Clusters are the
    connected components of the undirected exemplar graph.

    Parameters
    ----------
    p : float or None, default=None
        Exemplar penalty ``p >= 0`` (eq. 3): larger ``p``, fewer clusters. ``p = 0``
        makes every availability 0, so each point picks its nearest neighbour.
        ``None`` uses the median pairwise distance, ``median_{i != j} -S(i, j)``
        (the magnitude of Frey and Dueck's median preference), computed
        exactly up to 100 000 pairs and from 100 000 random pairs beyond.
    similarity : {"sqeuclidean", "euclidean", "precomputed"}, default="sqeuclidean"
        ``S(i, j) = -||x_i - x_j||^2`` (as ``ccbench.similarity``), ``-||x_i - x_j||``
        (the paper's section 4.1), or ``X`` is an (N, N) similarity matrix
        (e.g. the random Gaussian similarities of section 3.1; need not be
        symmetric, diagonal ignored; dense memory only).
    memory : {"dense", "linear"}, default="dense"
        ``"dense"`` stores the similarities and requests (N x N); ``"linear"``
        stores only site quantities (eqs. 16-20) and recomputes similarity rows
        from ``X``, O(N d) memory (X, a transposed copy for the compiled kernel,
        and a few length-N vectors). With ``backend="numpy"`` both give the
        same result for the same seed, bit for bit: dense mode builds its
        matrix from the same per-row computation linear mode repeats, and the
        requests are the same expressions of the same numbers. With
        ``backend="numba"`` linear mode computes rows in compiled code (same
        centred Gram identity, different summation order), so an exact
        distance tie can break differently and a run that never settles can
        end elsewhere.
    max_iter : int, default=200
        Maximum number of sweeps (T_max, section 2.4: typically 100-1000).
    convergence_iter : int, default=10
        Stop when no exemplar changed for this many consecutive sweeps
        (section 2.4, step 4: "we used 10-100").
    stop_on : {"exemplars", "clusters"}, default="exemplars"
        What must stay unchanged for ``convergence_iter`` sweeps: every exemplar
        (the paper's criterion) or only the clusters (connected components). When
        ``p`` is large compared with within-cluster distances, the shared
        exemplar of a cluster can keep wandering among equally good members
        while the clusters no longer change; ``"clusters"`` stops there.
    beta : float, default=np.inf
        Formal inverse temperature of the Gibbs weight exp(-beta H) (eq. 6).
        ``np.inf`` runs the zero-temperature messages (eq. 14), exactly as
        without this option. A finite ``beta > 0`` runs the finite-temperature
        equations (eq. 12) in the log variables of eq. 13 (see Notes); the
        exemplar of ``i`` is the argmax of its marginal P_i (eq. 12, third
        line), i.e. of ``S(i, k) + a_{k->i}``. Finite ``beta`` needs
        ``memory="dense"`` (the O(N) form of section 2.5 exists only at zero
        temperature). The paper's Fig. 5 uses T = 1/beta.
    backend : {"auto", "numpy", "numba"}, default="auto"
        ``"numpy"`` loops over points in Python with each update vectorised
        over the row; ``"numba"`` runs each sweep as one compiled loop (same
        arithmetic, same random order; compiled once and cached on disk).
        ``"auto"`` (issue 55) is ``"numba"`` with dense memory, where both give
        the same exemplars (tested) and the compiled sweep is 5-10x faster on 150
        points (a search for ``n_clusters`` runs 10-20 fits, a tuned trial folds x
        grid of them), and ``"numpy"`` with linear memory, where the compiled rows
        sum in another order (see ``memory``). (The AP family's switch has the
        same name.)
    engine : {"numpy", "numba"} or None, default=None
        Deprecated alias of ``backend`` (FutureWarning); removed in 0.3.
    random_state : int, Generator or None, default=None
        Draws the random update order of each sweep (and the pair sample of
        the default ``p`` on large data).
    n_clusters : int or None, default=None
        ``None``: one fit at ``p`` (unchanged behaviour). An int: ``p`` is
        searched by bisection on the preference ``-p`` (R apcluster's
        ``apclusterK``; :func:`ccbench.similarity.bisect_preference`, shared
        with the AP family) on :func:`ccbench.similarity.preference_bracket` of
        ``similarity`` (at or below its lower end one exemplar is optimal; computed in
        row blocks, never stored), each step a whole fit at the midpoint (at most
        ``n_clusters`` clusters: ``p`` falls, else it rises), on past the first ``p``
        that gives ``n_clusters`` to the plateau's end (within 5 %: labels force k
        clusters at a high ``p``, where every unlabeled point joins one of them). It
        stops there or after ``SEARCH_FITS`` = 20 fits (then a second pass or a look
        below the bracket, :func:`ccbench.similarity.fit_for_n_clusters`). If the count is
        never hit the closest fit is kept, ``n_clusters_exact_`` and ``n_clusters_reached_``
        are False and a ``ConvergenceWarning`` says so (SSAP-L: an
        ``NClustersUnreachableWarning`` where its labeled macro-nodes outnumber k; see
        :class:`SSAPL`). Give ``p`` or ``n_clusters``, not both.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Connected component of each point in the exemplar graph, 0..K-1.
    exemplars_ : ndarray of shape (n_samples,)
        ``c_i``, the exemplar chosen by each point (eq. 20).
    p_ : float
        The penalty used.
    preference_ : float
        ``-p_`` (the AP family's preference on the same scale).
    n_preference_fits_ : int
        Fits run (1 without ``n_clusters``; the search's bisection steps with it).
    n_clusters_exact_ : bool
        Whether the kept fit has ``n_clusters`` clusters (True without a search).
    n_clusters_reached_ : bool
        The same (True without a search): the name the harness and reports read.
    n_clusters_unreachable_ : str or None
        Why the search did not return ``n_clusters`` (None when it did): the count is below the
        model's floor (:class:`SSAPL`: more labeled macro-nodes than ``n_clusters``; with a
        ``NClustersUnreachableWarning``), or no ``p`` in the bracket gave it (a ``ConvergenceWarning``).
    n_iter_ : int
        Number of sweeps run.
    converged_ : bool
        Whether the exemplars were stable for ``convergence_iter`` sweeps
        (a ``ConvergenceWarning`` is issued otherwise; the last exemplars are kept).

    Notes
    -----
    Schedule. The paper (section 2.4, step 2) updates, point by point in a
    random order drawn per sweep, first the requests ``r_{i->.}`` and then the
    availabilities. The O(N) memory form (eqs. 16-20) cannot store
    availabilities, so they are always evaluated from the current requests:
    u_k (eq. 18) is updated after each point's requests change, so eq. 18
    holds exactly at all times and every availability (eq. 19) is the value
    of eq. 14 for the current requests. Dense mode runs this same schedule
    with stored requests. Requests start at 0 (step 1), so first-sweep
    availabilities are ``min(0, -p)``. There is no damping (the paper uses
    undamped sequential updates).

    Convergence is exemplar stationarity (section 2.4, third note), checked
    after each sweep on ``c_i = c^(1)_i`` (eq. 20), the exemplar argmax at
    the moment point ``i`` was updated (or, with ``stop_on="clusters"``,
    stationarity of the connected components of that exemplar graph).

    Ties in the argmax go to the lowest index.

    Finite temperature (``beta < inf``). Eq. 12 in the fields of eq. 13,
    a = ln(A)/beta and r = ln(B / (1 - B))/beta, is::

        r_{i->k} = S(i, k) - (1/beta) ln sum_{l != i, k} exp(beta [S(i, l) + a_{l->i}])
        a_{k->i} = -(1/beta) ln[1 + (e^{beta p} - 1) exp(-beta sum_{l != k, i} sp(r_{l->k}))]

    with sp(r) = ln(1 + e^{beta r})/beta. As beta -> infinity the log-sum-exp
    becomes the max, sp(r) becomes max(0, r) and a becomes
    min(0, -p + sum max(0, r)): eq. 14. The same schedule runs with u_k
    (eq. 18) summing sp instead of max(0, .); the initial r = 0 (B = 1/2)
    weighs ln 2 / beta in it.

    References
    ----------
    M. Leone, Sumedha, M. Weigt, "Unsupervised and semi-supervised clustering
    by message passing: soft-constraint affinity propagation", Eur. Phys. J. B
    65, 2008 (eqs. 2-3, 6, 12-20, section 2.4).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(0, 0.1, (20, 2)), rng.normal(5, 0.1, (20, 2))])
    >>> est = SCAP(p=1.0, stop_on="clusters", random_state=0).fit(X)
    >>> int(est.labels_.max()) + 1, est.converged_
    (2, True)
    """

    _parameter_constraints = {
        "p": [None, Interval(numbers.Real, 0, None)],
        "similarity": [Options("sqeuclidean", "euclidean", "precomputed")],
        "memory": [Options("dense", "linear")],
        "max_iter": [Interval(numbers.Integral, 1, None)],
        "convergence_iter": [Interval(numbers.Integral, 1, None)],
        "stop_on": [Options("exemplars", "clusters")],
        "beta": [Interval(numbers.Real, 0, None, closed="neither", allow_inf=True)],
        "backend": [Options("auto", "numpy", "numba")],
        "engine": [None, Options("numpy", "numba")],
        "random_state": ["random_state"],
        "n_clusters": [None, Interval(numbers.Integral, 1, None)],
    }

    def __init__(
        self,
        p=None,
        *,
        similarity="sqeuclidean",
        memory="dense",
        max_iter=200,
        convergence_iter=10,
        stop_on="exemplars",
        beta=np.inf,
        backend="auto",
        engine=None,
        random_state=None,
        n_clusters=None,
    ):
        self.p = p
        self.n_clusters = n_clusters
        self.similarity = similarity
        self.memory = memory
        self.max_iter = max_iter
        self.convergence_iter = convergence_iter
        self.stop_on = stop_on
        self.beta = beta
        self.backend = backend
        self.engine = engine
        self.random_state = random_state

    def _check_similarity_input(self, X):
        if self.similarity != "precomputed":
            return
        if X.shape[0] != X.shape[1]:
            raise ValueError(
                f"similarity='precomputed' needs a square (N, N) similarity matrix, got shape {X.shape}"
            )
        if self.memory == "linear":
            raise ValueError(
                "memory='linear' computes similarities row by row from the data; a precomputed "
                "matrix is already N x N: use memory='dense' or pass the data with "
                "similarity='sqeuclidean' or 'euclidean'"
            )

    def _backend(self) -> str:
        if self.engine is None:
            return _auto_backend(self.backend, self.memory)
        warnings.warn(
            f"{type(self).__name__}(engine=...) is deprecated and will be removed in 0.3; "
            f"use backend={self.engine!r}", FutureWarning, stacklevel=3,
        )
        return self.engine

    def _macro_nodes(self, constraints, n_samples):
        """Groups of points merged into macro-nodes (none for unsupervised SCAP)."""
        return []

    def _split_macro_nodes(self, constraints, n_samples, free):
        """``(free, held)`` macro-nodes: none for unsupervised SCAP."""
        return [], []

    def _macro_node_plan(self, constraints, n_samples, n_clusters):
        """``(free, unreachable)`` for a search for ``n_clusters``: no macro-node, nothing to free or forbid."""
        return False, None

    def fit(self, X, y=None, *, constraints=None):
        if self.n_clusters is None:
            self._fit(X, constraints, self.p)
            self.n_preference_fits_, self.n_clusters_exact_ = 1, True
            self.n_clusters_reached_, self.n_clusters_unreachable_ = True, None
            return self
        if self.p is not None:
            raise ValueError(
                f"{type(self).__name__}: give p or n_clusters, not both (n_clusters={self.n_clusters!r} "
                f"searches p; p={self.p!r} fixes it)"
            )
        X_checked, cons = self._validate_fit(X, constraints)
        self._check_similarity_input(X_checked)
        k = int(self.n_clusters)
        free, unreachable = self._macro_node_plan(cons, X_checked.shape[0], k)
        low, high = preference_bracket(X_checked, kind=self.similarity)  # at or below low one exemplar is optimal
        # the search's fits share the candidate set (``free`` is fixed above), so the dense similarity
        # matrix is built once for all of them instead of once per fit (a third of SSAP-L's search on credit)
        dense_rows = {}

        def fit_at(preference):  # preference = -p
            self._fit(X, constraints, max(-preference, 0.0), free=free, dense_rows=dense_rows)
            return int(self.labels_.max()) + 1

        search = fit_for_n_clusters(self, fit_at, k, low, high, max_iter=SEARCH_FITS)
        self.n_preference_fits_, self.n_clusters_exact_ = search.n_fits, search.exact
        self.n_clusters_reached_ = search.exact
        self.n_clusters_unreachable_ = None if search.exact else unreachable
        if unreachable is not None and not search.exact:
            warnings.warn(
                f"{type(self).__name__}: n_clusters={k} cannot be reached: {unreachable}; kept "
                f"{search.n_clusters} clusters at p={self.p_:.6g} (n_clusters_reached_=False)",
                NClustersUnreachableWarning,
                stacklevel=2,
            )
        elif not search.exact:
            self.n_clusters_unreachable_ = (f"no p in [{-high:.4g}, {-low:.4g}] gave {k} clusters in "
                                            f"{search.n_fits} bisection steps")
            warnings.warn(
                f"{type(self).__name__}: no p in [{-high:.4g}, {-low:.4g}] gave n_clusters={self.n_clusters} "
                f"in {search.n_fits} bisection steps; kept the closest, {search.n_clusters} clusters at "
                f"p={self.p_:.6g} (n_clusters_exact_=False)",
                ConvergenceWarning,
                stacklevel=2,
            )
        elif not self.converged_:
            warnings.warn(f"{type(self).__name__} did not converge at the p found", ConvergenceWarning, stacklevel=2)
        return self

    def _fit(self, X, constraints, p, free=False, dense_rows=None):
        X, cons = self._validate_fit(X, constraints)
        self._check_similarity_input(X)
        if self.memory == "linear" and not np.isinf(self.beta):
            raise ValueError(
                f"beta={self.beta} (finite temperature, eq. 12) needs the stored requests: use "
                f"memory='dense'; memory='linear' (eqs. 16-20) exists only at zero temperature (beta=inf)"
            )
        rng = check_random_state(self.random_state)
        n = X.shape[0]
        free_nodes, held_nodes = self._split_macro_nodes(cons, n, free)
        macro_nodes = free_nodes + held_nodes  # free ones first: they are variables too
        in_macro = np.zeros(n, dtype=bool)
        for group in macro_nodes:
            in_macro[group] = True
        variables = np.flatnonzero(~in_macro)
        n_var, n_cand = len(variables) + len(free_nodes), len(variables) + len(macro_nodes)
        if self.memory == "dense":  # the similarity matrix and two message arrays, float64
            check_memory(3 * 8 * n_var * n_cand,
                         what=f"{type(self).__name__} on {n} points with memory='dense'",
                         fix="use memory='linear' (O(N) memory, eqs. 16-20)")
        similarity = _CandidateSimilarity(X, self.similarity, variables, macro_nodes, n_free=len(free_nodes))
        self.p_ = similarity.median_distance(rng) if p is None else float(p)
        self.preference_ = -self.p_

        if n_cand - 1 >= 2 and n_var > 0:
            state, self.n_iter_, self.converged_ = _run_scap(
                similarity,
                p=self.p_,
                max_iter=self.max_iter,
                convergence_iter=self.convergence_iter,
                rng=rng,
                dense=self.memory == "dense",
                engine=self._backend(),
                stop_on=self.stop_on,
                beta=float(self.beta),
                dense_rows=dense_rows,
            )
            exemplar = state.exemplar
        else:  # no variable, or one possible exemplar each: candidates (0, 1) pick each other
            exemplar = (1 - np.arange(n_var)).astype(np.intp)
            self.n_iter_, self.converged_ = 0, True
        if not self.converged_:
            warnings.warn(
                f"{type(self).__name__} did not converge: {self.stop_on} still changed within the last "
                f"{self.convergence_iter} of {self.max_iter} sweeps; increase max_iter, change p "
                f"or use stop_on='clusters'",
                ConvergenceWarning,
                stacklevel=3,
            )

        comp = _components(exemplar, n_cand)
        point_comp = np.empty(n, dtype=np.intp)
        point_comp[variables] = comp[:len(variables)]
        for g, group in enumerate(macro_nodes):
            point_comp[group] = comp[len(variables) + g]
        _, self.labels_ = np.unique(point_comp, return_inverse=True)
        self.labels_ = self.labels_.astype(np.intp)
        # Exemplar as a data-point index; n + g for macro-node g; -1 inside a macro-node.
        candidate_index = np.concatenate([variables, n + np.arange(len(macro_nodes))])
        self.exemplars_ = np.full(n, -1, dtype=np.intp)
        self.exemplars_[variables] = candidate_index[exemplar[:len(variables)]]
        self.macro_nodes_ = macro_nodes  # empty for unsupervised SCAP
        self.n_free_macro_nodes_ = len(free_nodes)
        return self


class SSAPL(SCAP):
    """Semi-supervised SCAP with labeled macro-nodes (Leone et al. 2008, section 4).

    Labeled points of one class are merged into a macro-node that needs no
    exemplar but may serve as one; the remaining (unlabeled) points choose
    exemplars among the other unlabeled points and the macro-nodes. The
    similarity of a point to a macro-node is the maximum similarity to its
    members. The Hamiltonian (eq. 21) penalises each chosen exemplar by
    ``p1`` (a point) or ``p2`` (a macro-node); the paper found ``p1 = p2 = p``
    best and so does this implementation. Messages follow eq. 22, exemplars
    eq. 23, with the same schedule and storage modes as :class:`SCAP`.

    Every macro-node ends in its own cluster (a component of the exemplar
    graph contains at most one macro-node, since macro-nodes point nowhere),
    so must-links are always satisfied (hard constraints).

    Parameters
    ----------
    p, similarity, memory, max_iter, convergence_iter, stop_on, beta, backend, engine, random_state
        As in :class:`SCAP`. A finite ``beta`` runs eq. 12 over the candidates of
        eq. 22 (points and macro-nodes): section 4 follows "exactly the same route
        from the Hamiltonian", and macro-nodes, which choose no exemplar, only
        receive requests.

    Attributes
    ----------
    labels_, p_, n_iter_, converged_
        As in :class:`SCAP`.
    exemplars_ : ndarray of shape (n_samples,)
        Exemplar of each unlabeled point: a data-point index, or ``n + g`` for
        macro-node ``g``; ``-1`` for points inside a macro-node.
    macro_nodes_ : list of ndarray
        Members of each macro-node.

    Notes
    -----
    Macro-nodes are the chunklets (transitive closure) of the must-link pairs,
    plus, when ``constraints.labels`` is given, a single-point macro-node for
    each labeled point in no must-link pair. For supervision drawn as labeled
    points (``labeled_subsets``) this is exactly one macro-node per label; for
    supervision given as pairs it is one macro-node per chunklet; when the
    pairs were altered after the labels were drawn (constraint noise) the pairs
    decide. Cannot-link constraints are ignored: SSAP-L only uses must-links
    (Arzeno & Vikalo 2015, section 4.1), so a cannot-link inside one chunklet
    is violated and one between clusters is never enforced. Every macro-node
    is a cluster of its own (it chooses no exemplar, so it heads its component).

    ``n_clusters`` below the number of macro-nodes (the search for k). Held
    apart, the macro-nodes are a floor on the count at every ``p``: sparse
    random pairs give one chunklet per must-link (wdbc, 57 pairs: 18-28
    chunklets for k = 2), and the shipped leaderboard's SSAP-L returned k in
    19.9 % of its 760 sparse-pair trials. Section 4 holds a macro-node apart
    because it is *labeled* ("since macro-nodes are labeled, they do not need
    an exemplar"); a chunklet of must-link pairs carries no label, and more
    of them than ``n_clusters`` cannot all be classes. So when the macro-nodes
    outnumber ``n_clusters``, the search frees every chunklet holding no
    labeled point: it becomes a variable of eq. 21's first sum, choosing an
    exemplar among the points and the other macro-nodes like an unlabeled
    point (eqs. 22-23 with the variable set {unlabeled points} + {free
    chunklets}), its similarity to any candidate the maximum over its members
    (section 4's macro-node similarity; to another macro-node, the maximum
    over both member sets). Its members still share one cluster (the
    must-links hold); two chunklets may now share one. Labeled macro-nodes
    stay held. The k-free fit (``n_clusters=None``) and a search whose
    macro-nodes do not outnumber ``n_clusters`` are unchanged. More labeled
    macro-nodes than ``n_clusters`` is a count the model cannot return: the
    search keeps the closest fit, ``n_clusters_reached_`` is False,
    ``n_clusters_unreachable_`` says why and a ``NClustersUnreachableWarning``
    is issued. Attributes: ``n_free_macro_nodes_`` (how many of
    ``macro_nodes_``, the first ones, were freed).

    References
    ----------
    M. Leone, Sumedha, M. Weigt, Eur. Phys. J. B 65, 2008 (eqs. 21-23).
    N. M. Arzeno, H. Vikalo, "Semi-supervised affinity propagation with soft
    instance-level constraints", IEEE TPAMI 37(5), 2015 (SSAP-L in its comparisons).
    """

    def _backend(self) -> str:
        if self.engine is None:
            return _auto_backend(self.backend, self.memory)
        warnings.warn(
            f"{type(self).__name__}(engine=...) is deprecated and will be removed in 0.3; "
            f"use backend={self.engine!r}", FutureWarning, stacklevel=3,
        )
        return self.engine

    def _split_macro_nodes(self, constraints, n_samples, free):
        """``(free, held)``: with ``free``, the macro-nodes holding no labeled point choose exemplars."""
        groups = self._macro_nodes(constraints, n_samples)
        if not free:
            return [], groups
        labeled = self._holds_label(groups, constraints)
        return [g for g, lab in zip(groups, labeled) if not lab], [g for g, lab in zip(groups, labeled) if lab]

    @staticmethod
    def _holds_label(groups, constraints):
        if constraints.labels is None:
            return np.zeros(len(groups), dtype=bool)
        return np.array([bool((constraints.labels[g] >= 0).any()) for g in groups], dtype=bool)

    def _macro_node_plan(self, constraints, n_samples, n_clusters):
        """``(free, unreachable)``: whether the search frees the unlabeled chunklets, and why
        ``n_clusters`` is below the fewest clusters the model can then return (None if it is not).

        Held apart, every macro-node is a cluster (it chooses no exemplar, eq. 21), so more macro-nodes
        than ``n_clusters`` forbid that count. The unlabeled ones are freed then (class Notes); the
        labeled ones stay held: more of them than ``n_clusters`` is a count the model cannot return.
        """
        groups = self._macro_nodes(constraints, n_samples)
        if len(groups) <= n_clusters:
            return False, None
        n_held = int(self._holds_label(groups, constraints).sum())
        if n_held <= n_clusters:  # fewer held macro-nodes than groups: some chunklet is unlabeled, freed
            return True, None
        return n_held < len(groups), (
            f"the supervision gives {n_held} labeled macro-nodes (Leone et al. 2008, section 4: one per label), "
            f"each a cluster of its own, more than n_clusters={n_clusters}")

    def _macro_nodes(self, constraints, n_samples):
        groups = [np.asarray(g, dtype=np.intp) for g in constraints.chunklets()]
        if constraints.labels is not None:
            in_chunklet = np.zeros(n_samples, dtype=bool)
            for g in groups:
                in_chunklet[g] = True
            singles = np.flatnonzero((constraints.labels >= 0) & ~in_chunklet)
            groups += [np.array([i], dtype=np.intp) for i in singles]
        return sorted(groups, key=lambda g: int(g[0]))
