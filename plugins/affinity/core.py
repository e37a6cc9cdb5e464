"""The one affinity-propagation message core shared by ``ap``, ``scssap``, ``scssap_ml`` and ``ssap_g``.

Everything here follows Algorithm 1 of Arzeno & Vikalo (2015). One iteration t:

1. pairwise-factor messages from the (t-1) messages (Algorithm 1, lines 1-2):
   cannot-link ``gamma`` (eq. 17) and must-link ``omega`` (eq. 20), kept only
   for constrained pairs, one row per *directed* pair (i -> k) and one column
   per candidate exemplar j;
2. the modified similarity ``s_hat = s + sum omega + sum gamma`` (eq. 24), which
   differs from ``s`` only on rows of constrained points: it is kept as a small
   per-row ``delta`` (one row per constrained point), never as a second N x N array;
3. damped availabilities ``alpha^(t)`` from ``rho^(t-1)`` (eq. 14);
4. damped responsibilities ``rho^(t)`` from ``s_hat^(t)`` and ``alpha^(t)`` (eq. 25).

Without pairwise factors this is exactly affinity propagation (Frey & Dueck
2007): step 3 then 4 produces the same sequence of responsibilities as
scikit-learn's responsibility-then-availability loop, because alpha^(1) = 0
from the zero initialisation.

Closed forms used for the pairwise messages (equivalent to eqs. 17 and 20,
derived in the Notes of :func:`pair_factors`; they never evaluate inf - inf):

- cannot-link: ``gamma = -clip(lam, 0, q_c)`` with ``lam = alpha_kj + rho_kj - gamma_ki^j`` (eq. 23);
- must-link:   ``omega =  clip(tau, -q_m, q_m)`` with ``tau = alpha_kj + rho_kj - omega_ki^j`` (eq. 22).

Both are ``sign * clip(x, lo, hi)`` with per-row (sign, lo, hi), so one array
holds all pairwise messages.

Two interchangeable back-ends: ``"numpy"`` (in place, one N x N work array,
several passes) and ``"numba"`` (:mod:`ccbench_plugins.affinity._kernels`: steps 3-4
in one fused row-parallel sweep, no N x N temporaries). They agree to rounding
(the numba column sums are summed in 64 row blocks). ``"auto"`` picks numba
when it imports.

Both run in float64 (default) or float32 (``dtype``): S, alpha, rho and the
pairwise messages are held in that precision; column sums over the N rows are
accumulated in float64 either way.

Public API (stable; the asv benchmarks call it)
-----------------------------------------------
- :func:`affinity_propagation` -- run the message passing on a similarity matrix.
- :func:`pair_factors` -- the must-link / cannot-link factor layout for SCSSAP / SSAP-G.
- :class:`PairFactors`, :class:`APResult` -- their return types.
- :func:`add_tie_noise` -- scikit-learn's degeneracy-breaking noise, in place.
- :func:`assign_exemplars` -- Algorithm 1's exemplar identification.
- :func:`similarity_assignment` -- Frey & Dueck's / scikit-learn's decoding of an exemplar set.

References
----------
N. M. Arzeno and H. Vikalo, "Semi-supervised affinity propagation with soft
instance-level constraints", IEEE TPAMI 37(5), 2015 (eqs. 14, 17, 20-25, Algorithm 1).
B. J. Frey and D. Dueck, "Clustering by passing messages between data points",
Science 315, 2007.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from ccbench.base import ConvergenceWarning, Interval, Options, check_memory
from ccbench.similarity import fit_for_n_clusters, median_preference, negative_sq_euclidean, preference_bracket

__all__ = [
    "AP_PARAMETER_CONSTRAINTS",
    "ap_similarity",
    "set_preference",
    "APResult",
    "PairFactors",
    "add_tie_noise",
    "affinity_propagation",
    "assign_exemplars",
    "similarity_assignment",
    "pair_factors",
    "equivalent_hard_penalty",
    "resolve_backend",
    "DTYPES",
]

BACKENDS = ("auto", "numba", "numpy")
#: Message dtypes: S, alpha, rho and the pairwise messages are held and updated in this
#: precision (float32 halves the memory traffic of the memory-bound iteration).
DTYPES = ("float64", "float32")

# Row blocks of the fused numba sweep (each has its own column-sum
# accumulator). Fixed, so results do not depend on the number of threads.
_ROW_BLOCKS = 64


# Below this many entries a fused sweep takes about a millisecond: waking the
# worker threads (and, on a busy machine, waiting for them at the barrier)
# costs more than it saves, so small problems run the kernel on one thread.
_PARALLEL_MIN_ENTRIES = 1_000_000


def _set_kernel_threads(n_entries: int) -> int:
    """Use one numba thread for small problems; return the count to restore."""
    import numba

    saved = numba.get_num_threads()
    if n_entries < _PARALLEL_MIN_ENTRIES:
        numba.set_num_threads(1)
    return saved


def resolve_backend(backend: str) -> str:
    """``"auto"`` -> ``"numba"`` when numba imports, else ``"numpy"``."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "numpy":
        return "numpy"
    try:
        from . import _kernels  # noqa: F401
    except ImportError:
        if backend == "numba":
            raise ImportError("backend='numba' needs numba; install it or use backend='numpy'") from None
        return "numpy"
    return "numba"


# -- pairwise factors ----------------------------------------------------------------


@dataclass(frozen=True)
class PairFactors:
    """Directed pairwise factor messages' layout (one row per directed pair).

    Rows are grouped by their source point so that the per-point sums of eq. 24
    are one ``np.add.reduceat``.

    Attributes
    ----------
    source : ndarray of shape (n_rows,)
        i of the directed pair (i -> k): the row of s_hat the message adds to.
    partner : ndarray of shape (n_rows,)
        k: the message reads alpha_kj + rho_kj.
    reverse : ndarray of shape (n_rows,)
        Row of the directed pair (k -> i).
    sign, low, high : ndarray of shape (n_rows,)
        message = sign * clip(x, low, high): (-1, 0, q_c) for cannot-link,
        (+1, -q_m, q_m) for must-link.
    is_cannot : ndarray of bool, shape (n_rows,)
    points : ndarray of shape (n_points,)
        Sorted distinct source points (rows of s_hat that differ from s).
    starts : ndarray of shape (n_points,)
        First row of each point's group (for ``np.add.reduceat``).
    """

    source: np.ndarray
    partner: np.ndarray
    reverse: np.ndarray
    sign: np.ndarray
    low: np.ndarray
    high: np.ndarray
    is_cannot: np.ndarray
    points: np.ndarray
    starts: np.ndarray

    @property
    def n_rows(self) -> int:
        return int(self.source.shape[0])


def _scaled_penalty(q: float, confidence) -> np.ndarray:
    """q * confidence per pair, with confidence 0 meaning "no penalty" even when q is inf."""
    conf = np.asarray(confidence, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        scaled = q * conf
    return np.where(conf == 0.0, 0.0, scaled)


def equivalent_hard_penalty(S) -> float:
    """A finite penalty q* that no configuration violating a constraint can outweigh.

    q* = 2 N (max s - min s) over the finite entries of S (1 if they are all equal).
    In the objective (eq. 6) the similarity terms of any two configurations that
    satisfy I and E (eqs. 2, 3) differ by at most N (max s - min s), since each
    point contributes one s(i, c_i). A configuration violating one must-link
    or cannot-link factor (eqs. 4, 5) pays at least q* more than that, so it
    can never be the maximiser while a configuration meeting every constraint
    exists: penalties q* and infinity give the same argmax of eq. 6.
    """
    S = np.asarray(S)
    n = S.shape[0]
    lo, hi = np.inf, -np.inf
    for r0 in range(0, n, 256):  # row blocks: no N x N boolean temporary
        block = S[r0 : r0 + 256]
        finite = block[np.isfinite(block)]
        if finite.size:
            lo, hi = min(lo, float(finite.min())), max(hi, float(finite.max()))
    span = hi - lo if hi >= lo else 0.0
    return 2.0 * n * span if span > 0 else 1.0


def pair_factors(
    must_link,
    cannot_link,
    *,
    penalty_must: float,
    penalty_cannot: float,
    must_link_weight=None,
    cannot_link_weight=None,
    hard_penalty: float | None = None,
) -> PairFactors:
    """Layout of the must-link (eq. 4) and cannot-link (eq. 5) factor messages.

    Parameters
    ----------
    must_link, cannot_link : array-like of shape (m, 2)
        Undirected pairs; each becomes two directed message rows (i -> k), (k -> i).
    penalty_must, penalty_cannot : float
        q_m, q_c >= 0, ``np.inf`` for hard constraints.
    must_link_weight, cannot_link_weight : array-like of shape (m,), default=None
        Per-pair multipliers in [0, 1] of q (the paper's note after eq. 20).
        A confidence of 0 removes the pair's penalty (0 * inf is taken as 0).
    hard_penalty : float or None, default=None
        When given, every infinite q (after the confidences) is replaced by this
        finite value, e.g. :func:`equivalent_hard_penalty` of the similarities,
        which keeps the messages bounded (see ``scssap``'s Notes).

    Returns
    -------
    PairFactors

    Notes
    -----
    Eq. 17, gamma = -min{q + max(0, -lam), max(0, lam)}: for lam >= 0 it is
    -min(q, lam); for lam < 0 it is -min(q - lam, 0) = 0. Hence
    gamma = -clip(lam, 0, q) <= 0. Eq. 20, omega = max{min(-q, -tau), min(q, tau)}
    = clip(tau, -q, q). With q = inf these are -max(lam, 0) and tau: no inf - inf.
    """
    ml = np.asarray(must_link, dtype=np.intp).reshape(-1, 2)
    cl = np.asarray(cannot_link, dtype=np.intp).reshape(-1, 2)
    q_m = _scaled_penalty(penalty_must, np.ones(len(ml)) if must_link_weight is None else must_link_weight)
    q_c = _scaled_penalty(penalty_cannot, np.ones(len(cl)) if cannot_link_weight is None else cannot_link_weight)
    # Directed rows: all must-link (i->k), (k->i), then all cannot-link.
    src = np.concatenate([ml[:, 0], ml[:, 1], cl[:, 0], cl[:, 1]])
    dst = np.concatenate([ml[:, 1], ml[:, 0], cl[:, 1], cl[:, 0]])
    n_ml, n_cl = len(ml), len(cl)
    rev = np.concatenate([
        np.arange(n_ml, 2 * n_ml), np.arange(n_ml),
        2 * n_ml + np.arange(n_cl, 2 * n_cl), 2 * n_ml + np.arange(n_cl),
    ]).astype(np.intp)
    is_cannot = np.concatenate([np.zeros(2 * n_ml, bool), np.ones(2 * n_cl, bool)])
    q = np.concatenate([q_m, q_m, q_c, q_c])
    if hard_penalty is not None:
        q[np.isinf(q)] = float(hard_penalty)
    sign = np.where(is_cannot, -1.0, 1.0)
    low = np.where(is_cannot, 0.0, -q)
    high = q
    # Group rows by source point; remap the reverse pointers accordingly.
    order = np.argsort(src, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    src, dst, sign, low, high, is_cannot = (a[order] for a in (src, dst, sign, low, high, is_cannot))
    rev = rank[rev[order]]
    points, starts = np.unique(src, return_index=True)
    return PairFactors(src, dst, rev, sign, low, high, is_cannot, points, starts.astype(np.intp))


def _update_pair_messages(factors: PairFactors, A, R, msg, out):
    """Algorithm 1 lines 1-2: ``out`` <- eqs. 17 / 20 from the (t-1) alpha, rho, messages."""
    k = factors.partner
    np.take(A, k, axis=0, out=out)
    out += R[k]
    out -= msg[factors.reverse]
    np.maximum(out, factors.low[:, None], out=out)
    np.minimum(out, factors.high[:, None], out=out)
    out *= factors.sign[:, None]
    return out


def _similarity_delta(factors: PairFactors, msg):
    """Per constrained point, sum of its pairwise messages (the sums in eq. 24)."""
    return np.add.reduceat(msg, factors.starts, axis=0)


# -- numpy back-end --------------------------------------------------------------------


def _availabilities_numpy(R, A, work, damping):
    """alpha <- mu alpha + (1 - mu) alpha_new (eq. 14), in place, ``work`` is scratch."""
    np.maximum(R, 0.0, out=work)
    np.fill_diagonal(work, 0.0)
    # sum_{k != j} max(rho_kj, 0), accumulated in float64 whatever the message dtype
    # (as the numba kernel does), rounded once to it
    pos = work.sum(axis=0, dtype=np.float64).astype(work.dtype, copy=False)
    np.subtract(pos, work, out=work)  # drop k = i
    work += np.diagonal(R)
    np.minimum(work, 0.0, out=work)
    np.fill_diagonal(work, pos)
    work *= 1.0 - damping
    A *= damping
    A += work


def _responsibilities_numpy(S, A, R, work, delta, points, damping):
    """rho <- mu rho + (1 - mu) (s_hat - max_{k != j}(s_hat + alpha)) (eq. 25), in place."""
    n = S.shape[0]
    rows = np.arange(n)
    np.add(S, A, out=work)
    if points.size:
        shat_c = S[points] + delta
        work[points] = shat_c + A[points]
    best_col = np.argmax(work, axis=1)
    best = work[rows, best_col]
    work[rows, best_col] = -np.inf
    second = np.max(work, axis=1)
    shat_best = S[rows, best_col]
    np.subtract(S, best[:, None], out=work)
    if points.size:
        work[points] = shat_c - best[points, None]
        shat_best[points] = shat_c[np.arange(points.size), best_col[points]]
    work[rows, best_col] = shat_best - second
    work *= 1.0 - damping
    R *= damping
    R += work


# -- exemplars and the driver ------------------------------------------------------------


def assign_exemplars(A, R):
    """Algorithm 1's end: Psi = {k : alpha_kk + rho_kk > 0}, c_i = argmax_{k in Psi} alpha_ik + rho_ik.

    Exemplars label themselves. Labels are 0..K-1 in increasing order of the
    exemplar's index. Returns ``(labels, exemplars)``; when Psi is empty,
    ``labels`` is all -1 and ``exemplars`` is empty (as scikit-learn does).
    """
    n = A.shape[0]
    diag = np.diagonal(A) + np.diagonal(R)
    exemplars = np.flatnonzero(diag > 0)
    if exemplars.size == 0:
        return np.full(n, -1, dtype=np.intp), exemplars
    belief = A[:, exemplars] + R[:, exemplars]
    labels = np.argmax(belief, axis=1)
    labels[exemplars] = np.arange(exemplars.size)
    return labels.astype(np.intp), exemplars


def similarity_assignment(S, exemplars):
    """Frey & Dueck's (and scikit-learn's) decoding of an exemplar set.

    Each point joins the exemplar of highest similarity s(i, k); each cluster
    is then re-centred on the member with the largest summed similarity to
    the others, and points are re-assigned to the new centres. Returns
    ``(labels, centres)``, labels 0..K-1 by centre index; all -1 if
    ``exemplars`` is empty.
    """
    n = S.shape[0]
    if len(exemplars) == 0:
        return np.full(n, -1, dtype=np.intp), np.asarray(exemplars, dtype=np.intp)
    centres = np.array(exemplars, dtype=np.intp)
    c = np.argmax(S[:, centres], axis=1)
    c[centres] = np.arange(centres.size)
    for k in range(centres.size):
        members = np.flatnonzero(c == k)
        centres[k] = members[np.argmax(S[np.ix_(members, members)].sum(axis=0))]
    c = np.argmax(S[:, centres], axis=1)
    c[centres] = np.arange(centres.size)
    used = np.unique(centres[c])
    return np.searchsorted(used, centres[c]).astype(np.intp), used


@dataclass
class APResult:
    """Output of :func:`affinity_propagation`.

    Attributes
    ----------
    labels : ndarray of shape (n,)
        Cluster index per row (-1 everywhere when no exemplar emerged).
    exemplars : ndarray of shape (K,)
        Indices of the exemplars (Psi), sorted.
    n_iter : int
    converged : bool
    availability, responsibility : ndarray of shape (n, n)
        Final alpha^(T), rho^(T).
    pair_messages : ndarray of shape (n_rows, m) or None
        Final gamma / omega, rows in :class:`PairFactors` order.
    """

    labels: np.ndarray
    exemplars: np.ndarray
    n_iter: int
    converged: bool
    availability: np.ndarray
    responsibility: np.ndarray
    pair_messages: np.ndarray | None = None


def affinity_propagation(
    S,
    *,
    damping: float = 0.75,
    max_iter: int = 1000,
    convergence_iter: int | None = 100,
    backend: str = "auto",
    factors: PairFactors | None = None,
    warn: bool = True,
    dtype: str = "float64",
) -> APResult:
    """Run (soft-constraint semi-supervised) affinity propagation on ``S``.

    Trusts its inputs (validation is the estimators' job).

    Parameters
    ----------
    S : ndarray of shape (n, n), C-contiguous
        Similarities with the preferences on the diagonal. Entries may be
        ``-inf`` (forbidden choices) as long as every row keeps at least two
        finite entries. Not modified; converted (copied) when its dtype is not
        ``dtype``.
    damping : float, default=0.75
        mu in [0.5, 1): new = mu * old + (1 - mu) * update for alpha and rho
        (Algorithm 1). Pairwise messages are not damped (Algorithm 1).
    max_iter : int, default=1000
    convergence_iter : int or None, default=100
        Stop once the exemplar set {k : alpha_kk + rho_kk > 0} has been the
        same, and non-empty, at the end of this many consecutive iterations.
        ``None`` disables the test (exactly ``max_iter`` iterations, e.g.
        for benchmarks).
    backend : {"auto", "numba", "numpy"}, default="auto"
    factors : PairFactors or None
        Must-link / cannot-link factors (SCSSAP); ``None`` is plain AP.
    warn : bool, default=True
        Emit a ``ConvergenceWarning`` when not converged.
    dtype : {"float64", "float32"}, default="float64"
        Precision of S, alpha, rho and the pairwise messages (both back-ends).
        Column sums over the N rows (eq. 14) are accumulated in float64 either
        way. float32 halves the memory of the messages and the memory traffic
        of an iteration (see the estimators' Notes for the measured speed-up).

    Returns
    -------
    APResult

    Notes
    -----
    Order per iteration exactly as Algorithm 1: gamma/omega^(t) from
    alpha, rho, gamma/omega^(t-1); s_hat^(t); alpha^(t) from rho^(t-1);
    rho^(t) from s_hat^(t) and alpha^(t). Exemplars are identified from
    alpha^(T) + rho^(T). If no exemplar emerges (Psi empty), the labels are
    all -1, ``converged`` is False and a ``ConvergenceWarning`` is emitted.

    Without pairwise factors, when every off-diagonal similarity is equal and
    every preference is equal (to tie-noise precision), no messages are run and
    the result is scikit-learn's: one cluster centred on point 0 if the
    preference is at most the similarity, else every point its own exemplar.
    """
    backend = resolve_backend(backend)
    dtype = np.dtype(dtype)
    S = np.ascontiguousarray(S, dtype=dtype)
    n = m = S.shape[0]
    if (factors is None or not factors.n_rows) and _equal_similarities(S):
        # scikit-learn's special case: nothing to pass messages about (ten identical
        # points otherwise split into several clusters by the tie noise alone).
        gap = np.diagonal(S).mean(dtype=np.float64) - (S.sum(dtype=np.float64) - np.trace(S, dtype=np.float64)) / (n * n - n)
        own = gap > _noise_tolerance(np.abs(S).max(), S.dtype)  # preference > similarity beyond the noise
        labels = np.arange(n, dtype=np.intp) if own else np.zeros(n, dtype=np.intp)
        exemplars = np.arange(n, dtype=np.intp) if own else np.zeros(1, dtype=np.intp)
        return APResult(labels, exemplars, 0, True, np.zeros((n, m), dtype), np.zeros((n, m), dtype), None)
    A = np.zeros((n, m), dtype)
    R = np.zeros((n, m), dtype)
    if factors is not None and not factors.n_rows:
        factors = None
    # the back-end is chosen once; each call of ``step`` is one iteration of Algorithm 1
    step = (_NumbaSteps if backend == "numba" else _NumpySteps)(S, A, R, factors, damping)
    threads = _set_kernel_threads(n * m) if backend == "numba" else None
    try:
        if backend == "numba":  # the same iterations and stopping rule, compiled: no Python call per iteration
            it, converged = step.run(max_iter, convergence_iter)
        else:
            it, converged = _iterate(step, max_iter, convergence_iter)
    finally:
        if threads is not None:
            import numba

            numba.set_num_threads(threads)
    labels, exemplars = assign_exemplars(A, R)
    if exemplars.size == 0:
        converged = False
    if warn and not converged:
        if exemplars.size == 0:
            text = "no exemplar emerged (alpha_kk + rho_kk <= 0 for all k); every label is -1"
        else:
            text = f"did not converge in {max_iter} iterations; labels may be degenerate"
        warnings.warn(f"Affinity propagation {text}. Raise max_iter or damping.", ConvergenceWarning, stacklevel=2)
    return APResult(labels, exemplars, it, converged, A, R, step.msg)


def _iterate(step, max_iter: int, convergence_iter: int | None) -> tuple[int, bool]:
    """Call ``step`` (one iteration) until the exemplar set {k : alpha_kk + rho_kk > 0} has been the
    same, and non-empty, for ``convergence_iter`` iterations (None: ``max_iter`` iterations);
    returns ``(n_iter, converged)``. ``_kernels.run_iterations`` is this loop compiled."""
    stable = 0
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        n_changed, n_exemplars = step()
        if convergence_iter is None:
            continue
        stable = 1 if it == 1 or n_changed else stable + 1
        if stable >= convergence_iter and n_exemplars:
            converged = True
            break
    return it, converged


def _pair_buffers(factors, m, dtype):
    if factors is None:
        return None, None
    msg = np.zeros((factors.n_rows, m), dtype)
    return msg, np.empty_like(msg)


class _NumpySteps:
    """Algorithm 1 iterations on the numpy path: in place, one N x N work array, several passes."""

    def __init__(self, S, A, R, factors, damping):
        self.S, self.A, self.R, self.factors, self.damping = S, A, R, factors, damping
        self.work = np.empty_like(A)
        self.msg, self.msg_next = _pair_buffers(factors, A.shape[1], A.dtype)
        self.points = factors.points if factors is not None else np.empty(0, dtype=np.intp)
        self.delta = np.zeros((0, A.shape[1]), A.dtype)
        self.is_exemplar = np.zeros(A.shape[0], dtype=bool)

    def __call__(self) -> tuple[int, int]:
        """One iteration; returns (exemplar flags that changed, exemplars)."""
        if self.factors is not None:
            _update_pair_messages(self.factors, self.A, self.R, self.msg, self.msg_next)
            self.msg, self.msg_next = self.msg_next, self.msg
            self.delta = _similarity_delta(self.factors, self.msg)
        _availabilities_numpy(self.R, self.A, self.work, self.damping)
        _responsibilities_numpy(self.S, self.A, self.R, self.work, self.delta, self.points, self.damping)
        is_exemplar = (np.diagonal(self.A) + np.diagonal(self.R)) > 0
        n_changed = int(np.count_nonzero(is_exemplar != self.is_exemplar))
        self.is_exemplar = is_exemplar
        return n_changed, int(np.count_nonzero(is_exemplar))


class _NumbaSteps:
    """Algorithm 1 iterations on the numba path: steps 3-4 fused in one row-parallel sweep."""

    def __init__(self, S, A, R, factors, damping):
        from . import _kernels

        n, m = A.shape
        dtype = A.dtype
        self.kern = _kernels
        # damping typed like the messages: a float64 scalar would promote a float32 kernel
        self.S, self.A, self.R, self.factors, self.damping = S, A, R, factors, dtype.type(damping)
        self.msg, self.msg_next = _pair_buffers(factors, m, dtype)
        points = factors.points if factors is not None else np.empty(0, dtype=np.intp)
        self.delta_row = np.full(n, -1, dtype=np.intp)  # row of delta that adds to s[i], -1: none
        self.delta_row[points] = np.arange(points.size)
        self.delta = np.empty((points.size, m), dtype)
        # column sums / diagonal of rho^(t-1), carried between fused sweeps
        self.pos_colsum = np.zeros(m, dtype)
        self.diag_r = np.zeros(n, dtype)
        self.diag_r_next = np.zeros(n, dtype)
        self.acc = np.empty((min(n, _ROW_BLOCKS), m))  # float64 accumulators (see _kernels)
        self.is_exemplar = np.zeros(n, dtype=np.bool_)

    def __call__(self) -> tuple[int, int]:
        """One iteration; returns (exemplar flags that changed, exemplars)."""
        f, kern = self.factors, self.kern
        if f is not None:
            kern.pair_messages(self.A, self.R, self.msg, self.msg_next, f.partner, f.reverse, f.sign, f.low, f.high)
            self.msg, self.msg_next = self.msg_next, self.msg
            kern.similarity_delta(self.msg, f.starts, self.delta)
        counts = kern.fused_iteration(self.S, self.A, self.R, self.delta, self.delta_row, self.pos_colsum,
                                      self.diag_r, self.diag_r_next, self.acc, self.damping, self.is_exemplar)
        self.diag_r, self.diag_r_next = self.diag_r_next, self.diag_r
        return counts

    def run(self, max_iter: int, convergence_iter: int | None) -> tuple[int, bool]:
        """Iterate until :func:`affinity_propagation`'s stopping rule holds, in one compiled loop
        (:func:`~ccbench_plugins.affinity._kernels.run_iterations`: the iterations of ``__call__``,
        bit for bit); returns ``(n_iter, converged)``. At n = 214 a Python call per iteration cost
        about a tenth of SCSSAP-ML's fit."""
        f, kern = self.factors, self.kern
        m = self.A.shape[1]
        if f is None:
            no_rows = np.zeros(0, dtype=np.intp)
            empty = np.zeros((0, m), self.A.dtype)
            msg, msg_next = empty, empty
            partner = reverse = starts = no_rows
            sign = low = high = np.zeros(0)  # float64, as PairFactors holds them: one compiled signature
        else:
            msg, msg_next = self.msg, self.msg_next
            partner, reverse, sign, low, high, starts = f.partner, f.reverse, f.sign, f.low, f.high, f.starts
        it, converged, last = kern.run_iterations(
            self.S, self.A, self.R, self.delta, self.delta_row, self.pos_colsum, self.diag_r, self.diag_r_next,
            self.acc, self.damping, self.is_exemplar, msg, msg_next, partner, reverse, sign, low, high, starts,
            int(max_iter), -1 if convergence_iter is None else int(convergence_iter))
        if f is not None:
            self.msg = last
        return int(it), bool(converged)


def _noise_tolerance(scale, dtype=np.float64) -> float:
    """A bound on differences made by :func:`add_tie_noise` ((eps s + 100 tiny) N(0, 1)) at ``|s| <= scale``,
    eps and tiny of ``dtype`` (the message precision)."""
    info = np.finfo(dtype)
    return 64 * float(info.eps) * float(scale) + 1e4 * float(info.tiny)


def _equal_similarities(S) -> bool:
    """All off-diagonal entries equal and all diagonal entries equal, up to tie noise."""
    n = S.shape[0]
    if n < 2:
        return False

    def flat(values):
        values = np.asarray(values)
        return bool(np.isfinite(values).all()) and np.ptp(values) <= _noise_tolerance(np.abs(values).max(), S.dtype)

    first = np.r_[S[0, 1:], S[1:, 0]]
    if not flat(first) or not flat(np.diagonal(S)):  # cheap exit on any real data
        return False
    off = ~np.eye(n, dtype=bool)
    return bool(flat(S[off]))


def add_tie_noise(S, rng: np.random.Generator, *, block_rows: int = 256, precision="float64"):
    """S += (eps * S + 100 * tiny) * N(0, 1), in place (scikit-learn's degeneracy noise).

    Breaks exact ties (e.g. duplicated points) that would otherwise make
    responsibilities oscillate. Drawn in row blocks so the temporary is small.
    ``-inf`` entries stay ``-inf``. ``eps`` and ``tiny`` are those of
    ``precision``, the dtype the messages will run in: noise at float64's eps
    would vanish when S is rounded to float32 and leave the ties in place.
    The draws do not depend on ``precision``, so float32 and float64 runs with
    one seed break each tie in the same direction.
    """
    eps = np.finfo(precision).eps
    tiny = np.finfo(precision).tiny * 100
    for r0 in range(0, S.shape[0], block_rows):
        block = S[r0 : r0 + block_rows]
        z = rng.standard_normal(block.shape)
        with np.errstate(invalid="ignore"):
            scale = block * eps
            scale += tiny
            scale *= z
        scale[~np.isfinite(scale)] = 0.0
        block += scale
    return S


# -- similarity set-up shared by the estimators ------------------------------------

# Hyper-parameters common to every estimator on the AP message core.
AP_PARAMETER_CONSTRAINTS = {
    "preference": [None, Interval(numbers.Real, None, None)],
    "damping": [Interval(numbers.Real, 0.5, 1.0, closed="left")],
    "max_iter": [Interval(numbers.Integral, 1, None)],
    "convergence_iter": [None, Interval(numbers.Integral, 1, None)],
    "backend": [Options(*BACKENDS)],
    "dtype": [Options(*DTYPES)],
    "random_state": ["random_state"],
}


def set_preference(S, preference, rng, *, precision="float64") -> float:
    """Put the preference (median by default) on S's diagonal and add tie noise, in place.

    Returns the preference. The noise is scikit-learn's
    ``(eps * s + 100 * tiny) * N(0, 1)`` drawn from ``rng``
    (:func:`add_tie_noise`), added after the preference, with the eps of
    ``precision`` (the message dtype).
    """
    pref = median_preference(S) if preference is None else float(preference)
    np.fill_diagonal(S, pref)
    add_tie_noise(S, rng, precision=precision)
    return pref


#: N x N message-dtype arrays alive during message passing: S, A, R and the numpy path's
#: work array. (With float32 the float64 S of the set-up, 8 N^2 bytes, is freed before
#: A and R exist, so 4 x 4 N^2 bounds the float32 peak too.)
_DENSE_ARRAYS = 4


def ap_similarity(X, preference, rng, dtype="float64", *, kind="sqeuclidean"):
    """S = -||x_i - x_j||^2 prepared by :func:`set_preference`, in ``dtype``; returns ``(S, preference)``.

    ``kind="precomputed"``: ``X`` is already the (N, N) similarity matrix; a float64
    copy of it is prepared instead (its diagonal is replaced by the preference).

    S, its median preference and the tie noise are computed in float64 and S is
    then rounded once to ``dtype``. Refuses
    (:class:`ccbench.base.InsufficientMemoryError`) before allocating when the
    dense message arrays would not fit in the available memory.
    """
    n = X.shape[0]
    check_memory(_DENSE_ARRAYS * np.dtype(dtype).itemsize * n * n, what=f"affinity propagation on {n} points (dense N x N messages)",
                 fix="subsample, use dtype='float32' (half the memory), or use scap with memory='linear' (O(N) memory)")
    S = np.array(X, dtype=np.float64) if kind == "precomputed" else negative_sq_euclidean(X)
    pref = set_preference(S, preference, rng, precision=dtype)
    return S.astype(dtype, copy=False), pref


# -- n_clusters: the preference found by bisection (issue 38) ----------------------------

#: Most fits one search may run (bisection steps of :func:`ccbench.similarity.bisect_preference`).
PREFERENCE_SEARCH_FITS = 20

N_CLUSTERS_CONSTRAINTS = {"n_clusters": [None, Interval(numbers.Integral, 1, None)]}


def n_clusters_found(labels) -> int:
    """Clusters in ``labels`` (-1, no exemplar, is none)."""
    return int(np.unique(labels[labels >= 0]).size)


class PreferenceSearchMixin:
    """``fit`` for estimators with a ``preference`` and an optional ``n_clusters``.

    The estimator implements ``_fit(X, constraints, preference)`` (one fit, setting the
    fitted attributes and ``preference_``); ``n_clusters=None`` runs it once at
    ``self.preference``, an int runs :func:`ccbench.similarity.bisect_preference`
    on :meth:`_preference_bracket` (:func:`ccbench.similarity.preference_bracket`: at or
    below its lower end one exemplar is optimal) and keeps the fit at the preference it
    returns (the upper end of the plateau that gives ``n_clusters``). Fitted: ``preference_``,
    ``n_preference_fits_`` (fits run: 1 without a search), ``n_clusters_exact_``, and the same fact as
    ``n_clusters_reached_`` with ``n_clusters_unreachable_`` (why not, else None), as SCAP and SSAP-L.
    """

    def _preference_bracket(self, X):
        return preference_bracket(X)

    def fit(self, X, y=None, *, constraints=None):
        if self.n_clusters is None:
            self._fit(X, constraints, self.preference)
            self.n_preference_fits_, self.n_clusters_exact_ = 1, True
            self.n_clusters_reached_, self.n_clusters_unreachable_ = True, None
            return self
        if self.preference is not None:
            raise ValueError(
                f"{type(self).__name__}: give preference or n_clusters, not both (n_clusters="
                f"{self.n_clusters!r} searches the preference; preference={self.preference!r} fixes it)"
            )
        X_checked, _ = self._validate_fit(X, constraints)
        low, high = self._preference_bracket(X_checked)  # at or below low one exemplar is optimal
        def fit_at(preference):
            self._fit(X, constraints, preference)
            return n_clusters_found(self.labels_)

        search = fit_for_n_clusters(self, fit_at, int(self.n_clusters), low, high, max_iter=PREFERENCE_SEARCH_FITS)
        self.preference_ = search.preference
        self.n_preference_fits_, self.n_clusters_exact_ = search.n_fits, search.exact
        # the names SCAP / SSAP-L give the same facts (issue 50): the harness and reports read one name
        self.n_clusters_reached_ = search.exact
        self.n_clusters_unreachable_ = None if search.exact else (
            f"no preference in [{low:.4g}, {high:.4g}] gave {self.n_clusters} clusters in {search.n_fits} bisection steps")
        if not search.exact:
            warnings.warn(
                f"{type(self).__name__}: no preference in [{low:.4g}, {high:.4g}] gave n_clusters="
                f"{self.n_clusters} in {search.n_fits} bisection steps; kept the closest, "
                f"{search.n_clusters} clusters at preference {search.preference:.6g} (n_clusters_exact_=False)",
                ConvergenceWarning,
                stacklevel=2,
            )
        elif hasattr(self, "converged_") and not self.converged_:
            warnings.warn(f"{type(self).__name__} did not converge at the preference found", ConvergenceWarning, stacklevel=2)
        return self
