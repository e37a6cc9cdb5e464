"""Shared pieces of the asv suite: cached deterministic data and the estimator mixin.

No data are built and nothing is computed at import time (asv imports every module
during discovery, and ``peakmem_`` counts whatever the process holds): data are built on
first use by getters cached with :func:`functools.lru_cache`, with fixed seeds, so every
commit benchmarks the same inputs.

Library modules (ccbench, its registry and plugins, scikit-learn) are imported at import
time, by :func:`preload`: every benchmark needs them before it can fit anything, so they
are part of every ``peakmem_`` baseline either way, and with ``--launch-method
forkserver`` (the smoke run) they are imported once in asv's fork server instead of once
per benchmark and parameter combination (about 2 s each on the CI machine).

The mixin follows scikit-learn's ``asv_benchmarks/benchmarks/common.py``: a benchmark
class says how to build its data (``make_data``) and its estimator (``make_estimator``)
and which parameter combinations do not apply (``skip``); the mixin provides
``time_fit``, ``peakmem_fit``, ``track_fit_peak_mb`` and the quality tracks.
"""

from __future__ import annotations

import functools
import os
import time
import tracemalloc
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

#: ``CCBENCH_BENCH_QUICK=1`` (set by ``run_quick.py``) skips the parameter combinations
#: marked ``heavy`` so the CI smoke run stays within a few minutes; a plain
#: ``asv run`` measures them.
QUICK = os.environ.get("CCBENCH_BENCH_QUICK", "") not in ("", "0")

#: ``CCBENCH_BENCH_SMOKE=1`` (set by ``run_quick.py`` only, the CI smoke run): every class
#: declares tiny parameter grids (:func:`smoke_or`), because the smoke run proves that each
#: benchmark *runs*, not how fast.  The full grids at ``QUICK`` alone took 23.5 minutes on
#: the loaded CI machine (``setup_cache`` of ``RNSDPVsCvxpy`` alone 6.3 min).  Not set by
#: ``check_regressions.py`` / ``publish.py --history``: their numbers are stated for the
#: full sizes (e.g. the ratio goals at n = 2000).
SMOKE = os.environ.get("CCBENCH_BENCH_SMOKE", "") not in ("", "0")


def smoke_or(full, smoke):
    """``smoke`` in the CI smoke run (:data:`SMOKE`), else ``full``: a parameter grid.

    asv reads ``params`` when it discovers the benchmarks, in a process that inherits
    the environment, so a class attribute ``params = (smoke_or([500, 2000], [200]),)``
    is all it takes.
    """
    return list(smoke) if SMOKE else list(full)

#: ``CCBENCH_BENCH_CPU_TIME=1`` (set by ``check_regressions.py``, together with one thread
#: per library): :func:`per_iteration_seconds` measures the process's CPU time instead of
#: wall time.  Other jobs on the machine stretch wall time (by up to 1.7x between two runs
#: of one commit on the shared 2-core machine) but hardly the CPU time a fit needs.
CPU_TIME = os.environ.get("CCBENCH_BENCH_CPU_TIME", "") not in ("", "0")

#: Number of features and blob centres of the synthetic data (8-D Gaussian blobs, as in
#: the N = 2000 measurement that motivated the suite).
N_FEATURES = 8
N_CENTERS = 5
SEED = 0


def preload() -> None:
    """Import the library and register its plugins (no data, no computation)."""
    import ccbench.metrics  # noqa: F401  (pulls in scikit-learn)
    from ccbench.registry import list_methods

    list_methods()


preload()


# --------------------------------------------------------------------------- data


@functools.lru_cache(maxsize=None)
def blobs(n: int, *, n_features: int = N_FEATURES, n_centers: int = N_CENTERS, seed: int = SEED):
    """``(X, y)``: ``n`` points in ``n_features`` dimensions around ``n_centers`` centres.

    The arrays are read-only because the cache hands the same objects to every caller.
    """
    from sklearn.datasets import make_blobs

    X, y = make_blobs(
        n_samples=n, n_features=n_features, centers=n_centers, cluster_std=2.0, random_state=seed
    )
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


@functools.lru_cache(maxsize=None)
def random_constraints(n: int, n_constraints: int, *, seed: int = SEED):
    """``n_constraints`` random must-/cannot-link pairs drawn from the blob labels
    (SCSSAP section 4.1 scheme, :func:`ccbench.constraints.random_pairs`)."""
    from ccbench.constraints import random_pairs

    _, y = blobs(n, seed=seed)
    return random_pairs(y, n_constraints, rng=np.random.default_rng(seed + 1))


def pairs_data(n: int, constraint_fraction: float) -> "BenchData":
    """Blobs with ``round(constraint_fraction * n)`` random pairs (the SCSSAP / SSAP-G input)."""
    X, y = blobs(n)
    return BenchData(X, y, random_constraints(n, int(round(constraint_fraction * n))))


@functools.lru_cache(maxsize=None)
def labeled_constraints(n: int, per_class: int, *, seed: int = SEED):
    """``per_class`` revealed labels per blob (SCAP / NNC style supervision)."""
    from ccbench.constraints import labeled_subsets

    _, y = blobs(n, seed=seed)
    return labeled_subsets(y, per_class, rng=np.random.default_rng(seed + 1))


# --------------------------------------------------------------------------- helpers


def require_method(name: str):
    """The registry spec of ``name``; ``NotImplementedError`` (asv's skip) when no plugin
    provides it yet, so a module can be written before its algorithm lands."""
    from ccbench.registry import UnknownNameError, get_method_spec

    try:
        return get_method_spec(name)
    except UnknownNameError as exc:
        raise NotImplementedError(f"method {name!r} is not registered: {exc}") from None


def require_extra(module: str, extra: str) -> None:
    """``NotImplementedError`` (asv's skip) when ``module`` of the optional extra ``extra``
    is not installed.

    Call it from ``setup``, never from ``setup_cache``: asv 0.6 skips a benchmark whose
    ``setup`` raises ``NotImplementedError`` but reports a failed ``setup_cache`` (exit
    status 2), so a machine without the extra would fail the smoke run.
    """
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise NotImplementedError(
            f"optional extra {extra!r} not installed ({module!r} missing): pip install -e '.[{extra}]'"
        )


def make(name: str, **params):
    """``make_method(name, **params)`` dropping the options the estimator does not take
    (e.g. ``backend`` for a method without one), so one benchmark body fits every variant."""
    import inspect

    from ccbench.registry import make_method

    accepted = inspect.signature(require_method(name).estimator).parameters
    return make_method(name, **{k: v for k, v in params.items() if k in accepted})


def _rss_kb(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(f"{field} not in /proc/self/status")


def peak_extra_mb(func) -> float:
    """Peak memory (MB) ``func()`` adds on top of what the process holds when it starts.

    Linux: reset the resident-set high-water mark (``echo 5 > /proc/self/clear_refs``),
    run, read ``VmHWM`` minus the ``VmRSS`` before the call; this sees numba's
    allocations too.  Elsewhere: :mod:`tracemalloc` (numpy-allocated memory only).
    """
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        before = _rss_kb("VmRSS")
    except OSError:
        tracemalloc.start()
        try:
            func()
            return tracemalloc.get_traced_memory()[1] / 2**20
        finally:
            tracemalloc.stop()
    func()
    return (_rss_kb("VmHWM") - before) / 1024


def per_iteration_seconds(fits: dict, iters: tuple[int, int] = (10, 30), repeat: int = 3) -> dict:
    """Median per-iteration wall time (CPU time with :data:`CPU_TIME`) of each
    ``fits[name](max_iter)``.

    One sample is the slope between two iteration counts,
    ``(t(i2) - t(i1)) / (i2 - i1)``, which cancels the per-fit work that is not the
    message-passing loop (similarities, input copies, tie noise, final labelling).  The
    fits are interleaved (every repeat runs every fit at both counts, in turn) so a change
    of machine load affects all of them alike; the median over ``repeat`` samples is
    returned, in seconds, keyed like ``fits``.
    """
    i1, i2 = iters
    clock = time.process_time if CPU_TIME else time.perf_counter
    samples = {name: [] for name in fits}
    for _ in range(repeat):
        for name, fit in fits.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = clock()
                fit(i1)
                t1 = clock()
                fit(i2)
                t2 = clock()
            samples[name].append(((t2 - t1) - (t1 - t0)) / (i2 - i1))
    return {name: max(float(np.median(v)), 1e-12) for name, v in samples.items()}


# --------------------------------------------------------------------------- mixin


@dataclass
class BenchData:
    """What a benchmark fits: features, ground truth, supervision (or ``None``)."""

    X: np.ndarray
    y: np.ndarray
    constraints: object = None


class EstimatorBenchmark(ABC):
    """Mixin: ``time_fit`` / ``peakmem_fit`` / quality tracks of one registered method.

    Subclasses set ``method`` (registry name), ``params`` / ``param_names`` and
    implement :meth:`make_data` and :meth:`make_estimator`; :meth:`skip` returns a
    reason string (or ``""``) for combinations that do not apply, e.g. ``n`` above
    ``max_n`` for methods holding N x N arrays.  Work per run is fixed by the subclass
    (``max_iter`` with convergence checks effectively off), so times compare across
    commits even when a change alters the number of iterations to convergence.
    """

    method: str = ""
    #: Largest ``n`` the benchmark runs (dense N x N methods); ``None``: no cap.
    max_n: int | None = None
    #: ``n`` values skipped by the CI smoke run (``CCBENCH_BENCH_QUICK=1``).
    heavy_n: tuple[int, ...] = ()
    timeout = 300
    # asv timing: one fit per sample (fits take 0.01-10 s), at most 5 samples or 20 s per
    # round, no asv warm-up loop (``setup`` already warms up with a tiny fit).
    number = 1
    repeat = (1, 5, 20.0)
    warmup_time = 0.0

    # -- hooks (abstract, which also keeps asv from collecting the mixin itself)
    @abstractmethod
    def make_data(self, params) -> BenchData:
        """Inputs for the parameter combination ``params`` (cached getters only)."""

    @abstractmethod
    def make_estimator(self, params):
        """The estimator timed for ``params`` (fixed work per fit)."""

    def skip(self, params) -> str:
        n = dict(zip(self.param_names, params)).get("n")
        if n is not None and self.max_n is not None and n > self.max_n:
            return f"n={n} above the cap {self.max_n} of {self.method!r} (N x N memory)"
        if QUICK and n in self.heavy_n:
            return f"n={n} skipped in the quick run (CCBENCH_BENCH_QUICK)"
        return ""

    def make_quality_estimator(self, params):
        """The estimator the quality tracks fit; by default the timed one. Override to let
        an iterative method run to convergence (a quality number should describe the
        method's actual output, while timings need fixed work)."""
        return self.make_estimator(params)

    def warm_up(self, params) -> None:
        """One fit on 60 points so JIT compilation (or loading numba's on-disk cache) and
        other first-call costs stay out of the timed region. Not in the smoke run
        (:data:`SMOKE`), whose single samples are not measurements: there it would only
        double the cost of every benchmark process."""
        if SMOKE:
            return
        small = list(params)
        small[list(self.param_names).index("n")] = 60
        small = tuple(small)
        self._fit(self.make_estimator(small), self.make_data(small))

    # -- asv
    def setup(self, *params):
        reason = self.skip(params)  # first: a skipped combination builds nothing
        if reason:
            raise NotImplementedError(reason)
        require_method(self.method)
        self.data = self.make_data(params)
        self.estimator = self.make_estimator(params)
        self.warm_up(params)

    @staticmethod
    def _fit(estimator, data):
        # Fixed-work runs stop at max_iter on purpose: their ConvergenceWarning is noise.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return estimator.fit(data.X, constraints=data.constraints)

    def time_fit(self, *params):
        self._fit(self.estimator, self.data)

    def peakmem_fit(self, *params):
        self._fit(self.estimator, self.data)

    def track_fit_peak_mb(self, *params):
        """Memory the fit adds on top of the inputs (see :func:`peak_extra_mb`)."""
        return peak_extra_mb(lambda: self._fit(self.estimator, self.data))

    track_fit_peak_mb.unit = "MB"

    def _quality_labels(self, params):
        return self._fit(self.make_quality_estimator(params), self.data).labels_

    def track_modified_rand(self, *params):
        from ccbench.metrics import modified_rand

        return modified_rand(self.data.y, self._quality_labels(params))

    track_modified_rand.unit = "modified Rand index"

    def track_ari(self, *params):
        from ccbench.metrics import adjusted_rand

        return adjusted_rand(self.data.y, self._quality_labels(params))

    track_ari.unit = "adjusted Rand index"
