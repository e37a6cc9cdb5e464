"""``scap`` and ``ssap_l``: soft-constraint AP (Leone et al. 2008), dense and O(N) memory.

``SCAPFit`` compares the two storage modes at moderate n; ``SCAPLinearLarge`` is the
point of the linear mode: its ``track_fit_peak_mb`` must stay far below one N x N float64
array (3.2 GB at N = 20000).  The N = 20000 case is skipped by the CI smoke run
(``CCBENCH_BENCH_QUICK``), which measures n = 5000 instead.
"""

from .common import (
    BenchData,
    EstimatorBenchmark,
    blobs,
    labeled_constraints,
    make,
    smoke_or,
)

#: Fixed work: sweeps with the stationarity test unable to stop early.
FIXED_SWEEPS = 10
QUALITY = dict(max_iter=200, convergence_iter=10)


class SCAPFit(EstimatorBenchmark):
    """``make_method("scap")``, 10 random sequential sweeps, numba backend; dense mode
    holds N x N arrays (capped at n = 5000)."""

    method = "scap"
    param_names = ["n", "memory"]
    params = (smoke_or([500, 2000], [200]), ["dense", "linear"])

    def skip(self, params):
        n, memory = params
        if memory == "dense" and n > 5000:
            return f"n={n}: dense SCAP holds N x N arrays (cap 5000)"
        return super().skip(params)

    def make_data(self, params):
        X, y = blobs(params[0])
        return BenchData(X, y)

    def make_estimator(self, params):
        return make(
            "scap", memory=params[1], backend="numba", max_iter=FIXED_SWEEPS,
            convergence_iter=FIXED_SWEEPS, random_state=0,
        )

    def make_quality_estimator(self, params):
        return make("scap", memory=params[1], backend="numba", random_state=0, **QUALITY)


class SCAPLinearLarge(EstimatorBenchmark):
    """``scap`` with ``memory="linear"``: 3 sweeps at large n (memory O(N d))."""

    method = "scap"
    param_names = ["n"]
    params = (smoke_or([5000, 20000], [1000]),)
    heavy_n = (20000,)
    timeout = 900

    def make_data(self, params):
        X, y = blobs(params[0])
        return BenchData(X, y)

    def make_estimator(self, params):
        return make("scap", memory="linear", backend="numba", max_iter=3, convergence_iter=3, random_state=0)

    # Quality at this size is SCAPFit's business; only time and memory here.
    track_modified_rand = None
    track_ari = None


class SSAPLFit(EstimatorBenchmark):
    """``make_method("ssap_l")``: macro-nodes from ``labeled_fraction * n`` revealed labels
    (spread over the 5 blobs), linear memory, 10 sweeps."""

    method = "ssap_l"
    param_names = ["n", "labeled_fraction"]
    params = (smoke_or([500, 2000], [200]), smoke_or([0.02, 0.1], [0.1]))

    def make_data(self, params):
        n, labeled_fraction = params
        X, y = blobs(n)
        per_class = max(1, int(round(labeled_fraction * n / 5)))
        return BenchData(X, y, labeled_constraints(n, per_class))

    def make_estimator(self, params):
        return make(
            "ssap_l", memory="linear", backend="numba", max_iter=FIXED_SWEEPS,
            convergence_iter=FIXED_SWEEPS, random_state=0,
        )

    def make_quality_estimator(self, params):
        return make("ssap_l", memory="linear", backend="numba", random_state=0, **QUALITY)
