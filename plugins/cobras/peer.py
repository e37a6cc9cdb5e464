"""Peer baseline: the COBRAS authors' own package, ``cobras-ts`` 0.1.3 (``cobras_ts.cobras_kmeans.COBRAS_kmeans``),
as ``peer_cobras``, beside our ``cobras`` (written from memory of the paper, :mod:`.core`).

An optional plugin, not loaded by default: install the extra (``pip install -e ".[peers]"``) and name
this module in a config (``plugins: [ccbench_plugins.cobras, ccbench_plugins.cobras.peer]``, method config
``peer_cobras`` in ``pkg://ccbench_plugins.cobras.conf``) or call ``ccbench.registry.load_plugins([...])``.
:class:`PeerCOBRAS` is our :class:`~ccbench_plugins.cobras.cobras.COBRAS` estimator (same parameters, same
oracle resolution, same fitted attributes) with the clustering done by the package.

Isolation and shims. The package draws from the global ``np.random`` (``KMeans(k)`` without a
``random_state``) and fails as shipped on current numpy and without its GUI's dependencies: its split
casts with ``np.int`` (removed in numpy 1.24), and its queriers cannot be imported on their own
(``cobras_ts.querier`` is a package whose ``__init__`` imports the GUI queriers and with them tornado and
friends; the module ``cobras_ts/querier.py`` it shadows has a ``Querier`` without the
``continue_cluster_process`` the main loop calls). So every fit runs in one long-lived worker process
(spawned or forked once, reused; a dead worker is replaced), where ``np.int = int`` is set if missing
(in the worker only, never here), the global generator is seeded per fit (``np.random.seed``, from
``random_state``), and the querier is ours, duck-typed (:class:`_OracleQuerier`: ``query_points(i, j)``
answered by the oracle, ``continue_cluster_process()`` True: no user to stop the run, and
``update_clustering`` a no-op), so only ``cobras_ts.cobras_kmeans`` and its non-GUI modules are imported.
The oracle is pickled to the worker: :class:`ccbench_plugins.active.oracle.Oracle`
pickles; a closure does not (a ``TypeError`` says so). The labels route of the harness
(scheme ``oracle_labels``) is sent as the labels themselves. After the fit the worker's oracle comes back
and its state replaces the caller's (``Oracle.n_queries``; a non-persistent oracle's stream has moved on
as if it had been asked here).

Failures. The package's own exceptions come back by name as :class:`PeerFailure` (harness status
``error``, an anytime row ``method error: PeerFailure: ...``), e.g. ``IndexError`` on data whose points are
all equal (its merging phase writes to the last intermediate result of an empty list); a worker that dies
(killed, out of memory) is a :class:`PeerFailure` too, and the next fit gets a fresh worker. An exception
of the oracle (or an answer that is not a bool) is re-raised as it is, as our COBRAS does.

**The anytime record.** With ``store_intermediate_results=True`` the package appends one labelling per
question, in the order asked (``len(intermediate) == len(ml) + len(cl)``). We map it to our rows as::

    labels_history_[0]     = every point in cluster 0      (before any question; not in the package's list)
    labels_history_[t]     = intermediate[t - 1]           (t = 1 .. n_questions_)

The package's labelling at question ``t`` is the clustering of its last *complete* merging phase (the
``clustering_to_store`` it passes down), and the last question of a merging phase that completes carries
the merged clustering, as in our :func:`~ccbench_plugins.cobras.core.run_cobras`. Two differences from
ours:

- the first iteration: the questions of its first merging phase carry the k-means split of the whole
  set (every new super-instance its own cluster, the package's ``clustering_to_store`` for that phase),
  not the one-cluster partition our rows keep until that phase ends;
- a budget spent before the first merging phase completes (in the first split-level search or in that
  merging phase): the package returns its split of the whole set, partly merged, as its result (its
  ``last_valid_clustering``: "the best clustering we have"), so ``labels_`` (the package's result) then
  differs from ``labels_history_[-1]`` (one cluster, or the split, as carried by the questions). A later
  iteration cut short returns the last complete clustering, which is also the last row. Ours always has
  ``labels_ == labels_history_[-1]``.

Cluster numbers are positions in the package's list of clusters (``construct_cluster_labeling``).

**Where the package differs from our reading of the paper** (plugins/cobras/core.py), read from
cobras_ts 0.1.3's source:

- split level (``determine_split_level``): after a cannot-link the search goes on with the *smaller*
  half that has at least two points (ours read the larger before this wrapper showed the package's
  rule; ours now follows the package by default, ``split_search="smaller"``, the larger kept as an
  option); there a two-point super-instance is split into its two points without k-means; the level is
  ``min(size, 2 ** max(1, cannot-links))``, as ours;
- merging: clusters are ranked by the distance between the closest *centroids* of their
  super-instances (ours: the closest representatives), and the pair asked about is the representative
  of each cluster's *first* super-instance ("any super-instance should do"), not the closest pair;
  the merged cluster keeps the first one's super-instances first;
- k-means: ``KMeans(k)`` with scikit-learn's current defaults, i.e. one k-means++ start
  (``n_init="auto"``; the package was written when the default was 10), against our ten;
- which super-instance is split: the largest, ties to the first met in cluster order (ours: lowest
  index); a super-instance whose split yields one part is never tried again (as ours);
- a pair can be asked twice: the questions of a later split-level search are not checked against the
  answers so far (ours answers a repeat from memory and never asks it). Repeats count against the
  budget, as they do in the package; ``n_repeated_questions_`` counts them.
"""

from __future__ import annotations

import pickle
import time

import numpy as np

from ccbench.base import check_random_state
from ccbench.hookspecs import hookimpl
from ccbench.isolation import IsolatedRunner, WorkerDied, shared_runner
from ccbench.registry import MethodSpec

from .cobras import COBRAS

_PACKAGE = "cobras-ts"
_VERSION = "0.1.3"
_FIX = f"install the optional extra: pip install -e '.[peers]' ({_PACKAGE}=={_VERSION})"
_MODULE = "cobras_ts.cobras_kmeans"


class PeerFailure(RuntimeError):
    """The peer package raised, or its worker died (the exception's name and message are kept)."""


class _LabelsOracle:
    """The exact oracle of fully revealed labels, picklable (the harness's ``oracle_labels`` route)."""

    def __init__(self, labels):
        self.labels = np.asarray(labels)

    def __call__(self, i, j) -> bool:
        return bool(self.labels[i] == self.labels[j])


class _OracleQuerier:
    """What ``COBRAS.cluster`` calls on its querier (duck-typed: the package's ``Querier`` is not imported,
    module docstring): ``query_points`` answered by ``oracle``, the questions kept in the order asked."""

    def __init__(self, oracle):
        self.oracle, self.pairs, self.answers, self.failure = oracle, [], [], None

    def query_points(self, idx1, idx2) -> bool:
        try:
            answer = self.oracle(int(idx1), int(idx2))
            if not isinstance(answer, (bool, np.bool_)) and answer not in (0, 1):
                raise TypeError(f"the oracle answered {answer!r} for the pair ({idx1}, {idx2}); it must "
                                f"return a bool (True = same cluster, must-link; False = cannot-link)")
        except Exception as exc:
            self.failure = exc  # the oracle's, not the package's: re-raised as it is
            raise
        self.pairs.append((int(idx1), int(idx2)))
        self.answers.append(bool(answer))
        return bool(answer)

    def continue_cluster_process(self) -> bool:  # no user to stop the run
        return True

    def update_clustering(self, clustering) -> None:  # for the package's GUI
        return None


def _peer_cobras(X, oracle, max_questions, seed, module=_MODULE):
    """Runs in the worker: shim, seed, cluster; ``(status, payload)``."""
    import importlib
    import warnings

    from .core import _thread_limit

    try:
        cobras_kmeans = importlib.import_module(module)
    except ImportError as exc:
        return "import", f"{exc}; {_FIX}"
    if "int" not in vars(np):  # removed in numpy 1.24; the package's split casts with .astype(np.int)
        np.int = int
    np.random.seed(seed)
    querier = _OracleQuerier(oracle)
    start = time.process_time()
    try:
        with warnings.catch_warnings(), _thread_limit(X.shape[0]):
            warnings.simplefilter("ignore")  # k-means on duplicates: ConvergenceWarning, handled by the package
            result = cobras_kmeans.COBRAS_kmeans(X, querier, max_questions, store_intermediate_results=True).cluster()
    except Exception as exc:
        if querier.failure is not None:
            raise querier.failure from None
        return type(exc).__name__, str(exc)
    clustering, intermediate = result[0], result[1]
    return "ok", dict(pairs=querier.pairs, answers=querier.answers, intermediate=intermediate,
                      labels=clustering.construct_cluster_labeling(), oracle=oracle,
                      seconds=time.process_time() - start)


def _runner() -> IsolatedRunner:
    """One worker for every peer_cobras fit of this process (replaced if it dies)."""
    return shared_runner(__name__)


def run_peer(X, oracle, max_questions, seed, module=_MODULE) -> dict:
    """The package's run in the worker: ``pairs``, ``answers``, ``intermediate``, ``labels``, ``oracle``,
    ``seconds`` (CPU, in the worker); raises :class:`PeerFailure`, ``ImportError`` or the oracle's exception."""
    try:
        status, out = _runner().call(_peer_cobras, X, oracle, max_questions, seed, module, timeout=None)
    except WorkerDied:  # killed, or crashed in C: the next fit gets a fresh worker
        raise PeerFailure(f"{_PACKAGE} worker process died during COBRAS_kmeans.cluster") from None
    if status == "ok":
        return out
    if status == "import":
        raise ImportError(out)
    raise PeerFailure(f"{_PACKAGE} {_VERSION} COBRAS_kmeans raised {status}" + (f": {out}" if out else ""))


def _history(n_samples: int, intermediate: list, n_questions: int) -> np.ndarray:
    """Rows ``[one cluster] + intermediate`` (module docstring), checked against the questions asked."""
    if len(intermediate) != n_questions or any(row is None or len(row) != n_samples for row in intermediate):
        raise PeerFailure(f"{_PACKAGE} returned {len(intermediate)} intermediate clusterings for {n_questions} "
                          f"questions (one labelling of {n_samples} points per question expected)")
    history = np.zeros((n_questions + 1, n_samples), dtype=np.intp)
    if n_questions:
        history[1:] = np.asarray(intermediate, dtype=np.intp)
    if np.any(history < 0):
        raise PeerFailure(f"{_PACKAGE} left points in no cluster in an intermediate clustering")
    return history


class PeerCOBRAS(COBRAS):
    """COBRAS by its authors' package ``cobras-ts`` 0.1.3, in a worker process (module docstring).

    Parameters
    ----------
    max_questions : int, default=100
        The budget (>= 1): questions the package may ask, repeats included.
    random_state : int, Generator or None, default=None
        Seeds the worker's global ``np.random`` (the package's k-means) before the fit.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The package's result (its last valid clustering).
    n_questions_ : int
        Questions asked (``<= max_questions``).
    queried_pairs_ : ndarray of shape (n_questions_, 2), int
        The pairs asked, in order, each ``i < j`` (a pair may recur: ``n_repeated_questions_``).
    answers_ : ndarray of shape (n_questions_,), bool
        The oracle's answers (True = must-link).
    labels_history_ : ndarray of shape (n_questions_ + 1, n_samples), int
        Row ``t``: the package's clustering after ``t`` answers; row 0: one cluster.
    n_repeated_questions_ : int
        Questions about a pair asked before.
    peer_fit_seconds_ : float
        CPU seconds of the package's run, in the worker (the caller's CPU clock does not see them).

    Examples
    --------
    >>> from ccbench.registry import load_plugins  # doctest: +SKIP
    >>> load_plugins(["ccbench_plugins.cobras.peer"])  # doctest: +SKIP
    """

    _module = _MODULE  # the package's module, imported in the worker
    _parameter_constraints = {"random_state": ["random_state"]}

    def __init__(self, max_questions=100, random_state=None):
        # the package's own rules, so none of ours (split_search) is a parameter here
        self.max_questions = max_questions
        self.random_state = random_state

    def fit(self, X, y=None, *, oracle=None, constraints=None):
        """Cluster ``X`` by the package, asking ``oracle(i, j) -> bool``; ``y`` is ignored."""
        self._check_budget()
        X, cons = self._validate_fit(X, constraints)
        resolved = self._resolve_oracle(oracle, constraints, cons, X.shape[0])
        if oracle is None:  # the labels route: the labels pickle, the closure over them does not
            resolved = _LabelsOracle(cons.labels)
        try:
            pickle.dumps(resolved)
        except Exception as exc:
            raise TypeError(f"peer_cobras runs {_PACKAGE} in a worker process, so its oracle must pickle; "
                            f"{type(resolved).__name__} does not ({exc}): pass an "
                            f"ccbench_plugins.active.oracle.Oracle or an instance of a module-level class") from None
        seed = int(check_random_state(self.random_state).integers(2**31 - 1))
        run = run_peer(X, resolved, int(self.max_questions), seed, self._module)
        if oracle is not None and hasattr(oracle, "__dict__") and type(run["oracle"]) is type(oracle):
            vars(oracle).update(vars(run["oracle"]))  # its counters and stream, as if asked here
        pairs = np.array(run["pairs"], dtype=np.intp).reshape(-1, 2)
        self.queried_pairs_ = np.sort(pairs, axis=1)
        self.answers_ = np.array(run["answers"], dtype=bool)
        self.n_questions_ = len(pairs)
        self.labels_history_ = _history(X.shape[0], run["intermediate"], self.n_questions_)
        self.labels_ = np.asarray(run["labels"], dtype=np.intp)
        self.n_repeated_questions_ = self.n_questions_ - len(np.unique(self.queried_pairs_, axis=0))
        self.peer_fit_seconds_ = float(run["seconds"])
        return self


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="peer_cobras",
            estimator=f"{__name__}:PeerCOBRAS",
            summary=f"COBRAS, reference implementation ({_PACKAGE} {_VERSION}, COBRAS_kmeans), in a worker process",
            paper="Van Craenendonck, Dumancic, Van Wolputte & Blockeel, IDA 2018",
            supervision=("labels",),
            needs_n_clusters=False,
            constraint_kind="soft",  # as cobras: answers obeyed between representatives only
        ),
    ]
