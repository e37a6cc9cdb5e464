"""``scssap`` and ``scssap_ml``: AP with must-/cannot-link factors (Arzeno & Vikalo 2015).

``SCSSAPFit`` times a fixed number of iterations over n and the number of random
constraints; its ``peakmem_fit`` / ``track_fit_peak_mb`` at n = 2000 carry the memory goal
(<= 5 N^2 float64 = 160 MB on top of the baseline).  ``SCSSAPVsAP`` is the
per-iteration cost of the constraint messages: scssap with 0.1 N random constraints
over ap on the same data (goal <= 1.5).
"""

from .bench_ap import FIXED_ITER, QUALITY
from .common import (
    QUICK,
    EstimatorBenchmark,
    make,
    pairs_data,
    per_iteration_seconds,
    require_method,
    smoke_or,
)


class SCSSAPFit(EstimatorBenchmark):
    """``make_method("scssap")`` (infinite penalties, the default), 50 iterations, with
    ``constraint_fraction * n`` random pairs; dense N x N (n capped at 5000)."""

    method = "scssap"
    param_names = ["n", "constraint_fraction"]
    params = (smoke_or([500, 2000], [200]), smoke_or([0.01, 0.1], [0.1]))
    max_n = 5000

    def make_data(self, params):
        return pairs_data(*params)

    def make_estimator(self, params):
        return make("scssap", max_iter=FIXED_ITER, convergence_iter=FIXED_ITER, random_state=0)

    def make_quality_estimator(self, params):
        return make("scssap", random_state=0, **QUALITY)


class SCSSAPMLFit(EstimatorBenchmark):
    """``make_method("scssap_ml")``: 3 outer metric-learning iterations of 30 SCSSAP
    iterations each, 0.1 n random constraints, per-cluster diagonal metrics."""

    method = "scssap_ml"
    param_names = ["n", "constraint_fraction"]
    params = (smoke_or([300, 1000], [100]), [0.1])
    max_n = 2000

    def make_data(self, params):
        return pairs_data(*params)

    def make_estimator(self, params):
        return make("scssap_ml", max_outer_iter=3, max_iter=30, convergence_iter=30, random_state=0)

    def make_quality_estimator(self, params):
        return make("scssap_ml", max_outer_iter=3, random_state=0, **QUALITY)


class SCSSAPVsAP:
    """Per-iteration time of scssap (0.1 n random constraints) over ap, per backend.

    Same blobs and S, exactly ``i`` iterations each; slope between 5 and 20 iterations,
    median of 3 interleaved repeats (1 in the smoke run), measured once in one process
    by ``setup_cache``.
    """

    param_names = ["n", "backend"]
    params = (smoke_or([500, 2000], [200]), ["numba", "numpy"])
    timeout = 600

    def setup_cache(self):
        require_method("ap")
        require_method("scssap")
        times = {}
        for n in self.params[0]:
            data = pairs_data(n, 0.1)
            fits = {}
            for backend in self.params[1]:
                for name in ("ap", "scssap"):

                    def fit(i, name=name, backend=backend):
                        est = make(name, backend=backend, max_iter=i, convergence_iter=i, random_state=0)
                        est.fit(data.X, constraints=data.constraints if name == "scssap" else None)

                    fit(2)  # compile / load the numba cache outside the measurement
                    fits[name, backend] = fit
            times[n] = per_iteration_seconds(fits, iters=(5, 20), repeat=1 if QUICK else 3)
        return times

    setup_cache.timeout = 600

    def track_ratio_scssap_vs_ap(self, times, n, backend):
        return times[n]["scssap", backend] / times[n]["ap", backend]

    track_ratio_scssap_vs_ap.unit = "scssap time per iteration / ap's"

    def track_scssap_ms_per_iteration(self, times, n, backend):
        return 1e3 * times[n]["scssap", backend]

    track_scssap_ms_per_iteration.unit = "ms per iteration"
