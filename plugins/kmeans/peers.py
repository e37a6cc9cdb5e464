"""Peer baselines: ``active-semi-supervised-clustering``'s COPKMeans, PCKMeans and
MPCKMeans as ``peer_cop_kmeans``, ``peer_pck_means``, ``peer_mpck_means``.

An optional plugin, not loaded by default: install the extra
(``pip install -e ".[peers]"``) and name this module in a config
(``plugins: [ccbench_plugins.kmeans.peers]``, as ``conf/experiment/kmeans_peers.yaml``
does) or call ``ccbench.registry.load_plugins([...])``.

Isolation. The package calls ``np.seterr('raise')`` at import (for the whole
process) and draws from the global ``np.random``; so every fit runs in one
long-lived worker process (spawned once, reused; a crashed worker is replaced),
seeded per fit with ``np.random.seed`` from the estimator's ``random_state``.
The package's own exceptions come back as ours: ``InconsistentConstraintsException``
(a cannot-link inside a must-link chunklet: no clustering exists) as
:class:`ccbench.base.InfeasibleConstraintsError` (status ``infeasible``),
``ClusteringNotFoundException`` (its greedy COP-k-means pass stranded a point, which
proves nothing) as :class:`ccbench.base.SolutionNotFoundError` (status ``not_found``),
``EmptyClustersException`` as :class:`PeerFailure` (status ``error``) -- a row
status, never a crashed sweep.
"""

from __future__ import annotations

import numbers
import time

import numpy as np

from ccbench.base import (
    ConstrainedClusterer,
    InfeasibleConstraintsError,
    Interval,
    SolutionNotFoundError,
    check_random_state,
)
from ccbench.hookspecs import hookimpl
from ccbench.isolation import IsolatedRunner, WorkerDied, shared_runner
from ccbench.registry import MethodSpec

_PACKAGE = "active-semi-supervised-clustering"
_INFEASIBLE = ("InconsistentConstraintsException",)  # proven: no clustering exists
_NOT_FOUND = ("ClusteringNotFoundException",)  # a greedy failure: proves nothing


class PeerFailure(RuntimeError):
    """The peer package raised (its message and exception name are kept)."""


def _peer_fit(cls_name, params, X, ml, cl, seed):
    """Runs in the worker: seed the global generator, fit, return labels or the failure."""
    import warnings

    np.random.seed(seed)
    try:
        from active_semi_clustering.semi_supervised.pairwise_constraints import COPKMeans, MPCKMeans, PCKMeans
    except ImportError as exc:
        return "import", f"{exc}; install the optional extra: pip install -e '.[peers]' ({_PACKAGE})", 0.0
    cls = {"COPKMeans": COPKMeans, "PCKMeans": PCKMeans, "MPCKMeans": MPCKMeans}[cls_name]
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = cls(**params).fit(X, ml=[tuple(p) for p in ml], cl=[tuple(p) for p in cl])
    except Exception as exc:  # the peer's own failures, reported by name
        return type(exc).__name__, str(exc), time.perf_counter() - t0
    return "ok", np.asarray(est.labels_, dtype=np.intp), time.perf_counter() - t0


def _runner() -> IsolatedRunner:
    """One spawned daemon worker for every peer fit of this process (replaced if it dies)."""
    return shared_runner(__name__)


def run_peer(cls_name, params, X, constraints, seed):
    """Labels from the peer class ``cls_name`` in the worker; raises our exceptions."""
    args = (cls_name, params, X, constraints.must_link, constraints.cannot_link, seed)
    try:
        status, out, seconds = _runner().call(_peer_fit, *args, timeout=None)
    except WorkerDied:  # killed, or crashed in C: the next fit gets a fresh worker
        raise PeerFailure(f"{_PACKAGE} worker process died during {cls_name}.fit") from None
    if status == "ok":
        return out, seconds
    if status == "import":
        raise ImportError(out)
    message = f"{_PACKAGE} {cls_name} raised {status}" + (f": {out}" if out else "")
    if status in _INFEASIBLE:
        raise InfeasibleConstraintsError(message)
    if status in _NOT_FOUND:
        raise SolutionNotFoundError(message)
    raise PeerFailure(message)


class _Peer(ConstrainedClusterer):
    _cls = ""

    _parameter_constraints = {
        "n_clusters": [Interval(numbers.Integral, 1, None)],
        "max_iter": [Interval(numbers.Integral, 1, None)],
        "random_state": ["random_state"],
    }

    def _peer_params(self):
        return {"n_clusters": self.n_clusters, "max_iter": self.max_iter}

    def fit(self, X, y=None, *, constraints=None):
        X, cons = self._validate_fit(X, constraints)
        seed = int(check_random_state(self.random_state).integers(2**31 - 1))
        self.labels_, self.peer_fit_seconds_ = run_peer(self._cls, self._peer_params(), X, cons, seed)
        return self


class PeerCOPKMeans(_Peer):
    """``active_semi_clustering`` COPKMeans (Wagstaff et al. 2001), in a worker process.

    Parameters
    ----------
    n_clusters : int, default=2
    max_iter : int, default=100
        The package's default.
    random_state : int, Generator or None, default=None
        Seeds the worker's global ``np.random`` before the fit.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    peer_fit_seconds_ : float
        The fit alone, timed inside the worker (no process overhead).

    Examples
    --------
    >>> from ccbench.registry import load_plugins  # doctest: +SKIP
    >>> load_plugins(["ccbench_plugins.kmeans.peers"])  # doctest: +SKIP
    """

    _cls = "COPKMeans"

    def __init__(self, n_clusters=2, *, max_iter=100, random_state=None):
        self.n_clusters = n_clusters
        self.max_iter = max_iter
        self.random_state = random_state


class PeerPCKMeans(_Peer):
    """``active_semi_clustering`` PCKMeans (Basu et al. 2004), in a worker process.

    Parameters
    ----------
    n_clusters : int, default=2
    max_iter : int, default=100
    w : float, default=1.0
        Penalty per violated constraint.
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    peer_fit_seconds_ : float
    """

    _cls = "PCKMeans"
    _parameter_constraints = {**_Peer._parameter_constraints, "w": [Interval(numbers.Real, 0, None)]}

    def __init__(self, n_clusters=2, *, max_iter=100, w=1.0, random_state=None):
        self.n_clusters = n_clusters
        self.max_iter = max_iter
        self.w = w
        self.random_state = random_state

    def _peer_params(self):
        return {**super()._peer_params(), "w": self.w}


class PeerMPCKMeans(PeerPCKMeans):
    """``active_semi_clustering`` MPCKMeans (Bilenko et al. 2004, a single diagonal
    metric: "MPCK-Means-S-D"), in a worker process.

    Parameters
    ----------
    n_clusters : int, default=2
    max_iter : int, default=10
        The package's default.
    w : float, default=1.0
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    peer_fit_seconds_ : float
    """

    _cls = "MPCKMeans"

    def __init__(self, n_clusters=2, *, max_iter=10, w=1.0, random_state=None):
        super().__init__(n_clusters, max_iter=max_iter, w=w, random_state=random_state)


_PAIRS = ("must_link", "cannot_link")
_REF = f"reference implementation ({_PACKAGE} 0.0.1), in a worker process"


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="peer_cop_kmeans",
            estimator=f"{__name__}:PeerCOPKMeans",
            summary=f"COP-k-means, {_REF}",
            paper="Wagstaff et al., ICML 2001",
            supervision=_PAIRS,
            needs_n_clusters=True,
            constraint_kind="hard",
        ),
        MethodSpec(
            name="peer_pck_means",
            estimator=f"{__name__}:PeerPCKMeans",
            summary=f"PCK-means, {_REF}",
            paper="Basu, Banerjee & Mooney, SDM 2004",
            supervision=_PAIRS,
            needs_n_clusters=True,
            constraint_kind="soft",
        ),
        MethodSpec(
            name="peer_mpck_means",
            estimator=f"{__name__}:PeerMPCKMeans",
            summary=f"MPCK-means (single diagonal metric), {_REF}",
            paper="Bilenko, Basu & Mooney, ICML 2004",
            supervision=_PAIRS,
            needs_n_clusters=True,
            constraint_kind="soft",
        ),
    ]
