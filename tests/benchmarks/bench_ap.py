"""``ap``: the shared AP message core (numba and numpy backends) and its reference.

``APFit`` times a fixed number of iterations of the estimator; ``APVsSklearn`` measures
the per-iteration time of our core against scikit-learn's ``AffinityPropagation`` on the
same data in the same process (goal: ours / sklearn <= 0.25 for the default backend at
N = 2000); ``APFloat32`` the per-iteration time of float32 messages against float64.

Both ratio benchmarks report the **median of per-repeat ratios** (:func:`paired_ratio`):
each repeat times the two sides back to back, in alternating order, so a change of
machine load between repeats scales both sides of that repeat's ratio alike, and the
median discards the repeats a burst of load hit on one side only.
"""

import time
import warnings

import numpy as np

from . import common
from .common import (
    QUICK,
    BenchData,
    EstimatorBenchmark,
    blobs,
    make,
    require_method,
    smoke_or,
)

#: Fixed work of the timed fits: ``max_iter`` iterations, convergence test on but unable
#: to stop the run early (``convergence_iter = max_iter``).
FIXED_ITER = 50
#: Converged runs for the quality tracks: scikit-learn's defaults (200 / 15), shorter than the
#: estimators' Frey & Dueck defaults (1000 / 100) so the suite stays quick.
QUALITY = dict(max_iter=200, convergence_iter=15)
#: Sizes of the ratio benchmarks (the goals are stated at N = 2000).
RATIO_SIZES = smoke_or([500, 2000], [200])
#: Iteration counts whose time difference is one per-iteration sample (cancels the per-fit
#: set-up: similarities, median preference, tie noise, labelling).
SLOPE_ITERS = (10, 50)
#: Repeats of each ratio; the smoke run (``CCBENCH_BENCH_QUICK``) needs only one.
REPEATS = 1 if QUICK else 7


class APFit(EstimatorBenchmark):
    """``make_method("ap")`` on 8-D blobs, 50 iterations; dense N x N (n capped at 5000)."""

    method = "ap"
    param_names = ["n", "backend"]
    params = (smoke_or([500, 2000, 5000], [200]), ["numba", "numpy"])
    max_n = 5000
    heavy_n = (5000,)

    def make_data(self, params):
        X, y = blobs(params[0])
        return BenchData(X, y)

    def make_estimator(self, params):
        return make("ap", backend=params[1], max_iter=FIXED_ITER, convergence_iter=FIXED_ITER, random_state=0)

    def make_quality_estimator(self, params):
        return make("ap", backend=params[1], random_state=0, **QUALITY)


def _slope(fit, iters, clock) -> float:
    """Seconds per iteration of ``fit``: ``(t(i2) - t(i1)) / (i2 - i1)``."""
    i1, i2 = iters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fixed-work runs do not converge on purpose
        t0 = clock()
        fit(i1)
        t1 = clock()
        fit(i2)
        t2 = clock()
    return max((t2 - t1) - (t1 - t0), 1e-12) / (i2 - i1)


def paired_ratio(num, den, *, iters=SLOPE_ITERS, repeat=REPEATS) -> dict:
    """Median over ``repeat`` of per-iteration time ``num`` / ``den``, each repeat paired.

    ``num(i)`` and ``den(i)`` run ``i`` iterations. Repeat r times both sides back to back
    (``num`` first on even r, ``den`` first on odd r, so a steady drift of the load
    favours neither) and forms their ratio; the result is the median of the ``repeat``
    ratios, not the ratio of medians: a load burst that slows one side of one repeat
    moves one ratio, which the median drops. Wall time, or process CPU time with
    ``CCBENCH_BENCH_CPU_TIME=1`` (:data:`common.CPU_TIME`).

    Returns ``{"ratio": median ratio, "ratios": all of them, "num": median seconds per
    iteration of num, "den": of den}``.
    """
    clock = time.process_time if common.CPU_TIME else time.perf_counter
    ratios, t_num, t_den = [], [], []
    for r in range(repeat):
        if r % 2 == 0:
            a = _slope(num, iters, clock)
            b = _slope(den, iters, clock)
        else:
            b = _slope(den, iters, clock)
            a = _slope(num, iters, clock)
        ratios.append(a / b)
        t_num.append(a)
        t_den.append(b)
    return {"ratio": float(np.median(ratios)), "ratios": ratios,
            "num": float(np.median(t_num)), "den": float(np.median(t_den))}


def _ap_fit(X, **params):
    """``fit(i)``: ``ap`` with exactly ``i`` iterations, numba compiled / loaded first."""

    def fit(i):
        make("ap", max_iter=i, convergence_iter=i, random_state=0, **params).fit(X)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit(2)  # compile / load the numba cache outside the measurement
    return fit


class APVsSklearn:
    """Per-iteration time of ``ap`` (each backend) over scikit-learn's AffinityPropagation.

    Both fit the same blobs with the same S (negative squared Euclidean distances, median
    preference, tie noise), damping 0.75, and run exactly ``i`` iterations
    (``convergence_iter = max_iter``); one sample is the slope between 5 and 20
    iterations. ``track_ratio_vs_sklearn`` is the median over 7 repeats (1 in the smoke
    run) of the ratio of a pair of samples timed back to back (:func:`paired_ratio`), so
    it is robust to the machine's load; ``track_ms_per_iteration`` is the median time
    itself, which is not. Everything is measured once, in one process, by ``setup_cache``.
    """

    param_names = ["n", "implementation"]
    params = (RATIO_SIZES, ["numba", "numpy", "sklearn"])
    timeout = 900
    version = "paired-median-1"

    def setup_cache(self):
        require_method("ap")
        from sklearn.cluster import AffinityPropagation

        out = {}
        for n in self.params[0]:
            X, _ = blobs(n)

            def sklearn_fit(i, X=X):
                AffinityPropagation(damping=0.75, max_iter=i, convergence_iter=i, random_state=0).fit(X)

            for backend in ("numba", "numpy"):
                out[n, backend] = paired_ratio(_ap_fit(X, backend=backend), sklearn_fit)
            dens = [out[n, b]["den"] for b in ("numba", "numpy")]
            out[n, "sklearn"] = {"ratio": 1.0, "num": float(np.median(dens))}
        return out

    setup_cache.timeout = 900

    def track_ratio_vs_sklearn(self, out, n, implementation):
        return out[n, implementation]["ratio"]

    track_ratio_vs_sklearn.unit = "time per iteration / sklearn's (median of paired repeats)"

    def track_ms_per_iteration(self, out, n, implementation):
        return 1e3 * out[n, implementation]["num"]

    track_ms_per_iteration.unit = "ms per iteration"


class APFloat32:
    """Per-iteration time of ``ap`` with ``dtype="float32"`` messages over ``"float64"``.

    Same data, backend and iterations on both sides; median of paired repeats
    (:func:`paired_ratio`), measured once by ``setup_cache``. Below 1 is a speed-up.
    """

    param_names = ["n", "backend"]
    params = (RATIO_SIZES, ["numba", "numpy"])
    timeout = 900

    def setup_cache(self):
        require_method("ap")
        out = {}
        for n in self.params[0]:
            X, _ = blobs(n)
            for backend in self.params[1]:
                out[n, backend] = paired_ratio(_ap_fit(X, backend=backend, dtype="float32"),
                                               _ap_fit(X, backend=backend, dtype="float64"))
        return out

    setup_cache.timeout = 900

    def track_ratio_float32_vs_float64(self, out, n, backend):
        return out[n, backend]["ratio"]

    track_ratio_float32_vs_float64.unit = "float32 time per iteration / float64's (median of paired repeats)"
