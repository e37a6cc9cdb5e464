"""``ap``: the shared AP message core (numba and numpy backends) and its reference.

``APFit`` times a fixed number of iterations of the estimator; ``APVsSklearn`` measures
the per-iteration time of our core against scikit-learn's ``AffinityPropagation`` on the
same data in the same process (goal: ours / sklearn <= 0.25 for the default backend at
N = 2000).
"""

from .common import (
    QUICK,
    BenchData,
    EstimatorBenchmark,
    blobs,
    make,
    per_iteration_seconds,
    require_method,
    smoke_or,
)

#: Fixed work of the timed fits: ``max_iter`` iterations, convergence test on but unable
#: to stop the run early (``convergence_iter = max_iter``).
FIXED_ITER = 50
#: Converged runs for the quality tracks: scikit-learn's defaults (200 / 15), shorter than the
#: estimators' Frey & Dueck defaults (1000 / 100) so the suite stays quick.
QUALITY = dict(max_iter=200, convergence_iter=15)


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


class APVsSklearn:
    """Per-iteration time of ``ap`` (each backend) and scikit-learn's AffinityPropagation.

    Both fit the same blobs with the same S (negative squared Euclidean distances, median
    preference, tie noise), damping 0.75, and run exactly ``i`` iterations
    (``convergence_iter = max_iter``); the per-iteration time is the slope between 5 and
    20 iterations, median of 3 interleaved repeats, 1 in the smoke run
    (:func:`common.per_iteration_seconds`).
    All implementations are measured once, in one process, by ``setup_cache``.
    """

    param_names = ["n", "implementation"]
    params = (smoke_or([500, 2000], [200]), ["numba", "numpy", "sklearn"])
    timeout = 600

    def setup_cache(self):
        require_method("ap")
        from sklearn.cluster import AffinityPropagation

        times = {}
        for n in self.params[0]:
            X, _ = blobs(n)

            def sklearn_fit(i, X=X):
                AffinityPropagation(damping=0.75, max_iter=i, convergence_iter=i, random_state=0).fit(X)

            def ours(backend, X=X):
                def fit(i):
                    make("ap", backend=backend, max_iter=i, convergence_iter=i, random_state=0).fit(X)

                fit(2)  # compile / load the numba cache outside the measurement
                return fit

            fits = {"numba": ours("numba"), "numpy": ours("numpy"), "sklearn": sklearn_fit}
            times[n] = per_iteration_seconds(fits, iters=(5, 20), repeat=1 if QUICK else 3)
        return times

    setup_cache.timeout = 600

    def track_ratio_vs_sklearn(self, times, n, implementation):
        return times[n][implementation] / times[n]["sklearn"]

    track_ratio_vs_sklearn.unit = "time per iteration / sklearn's"

    def track_ms_per_iteration(self, times, n, implementation):
        return 1e3 * times[n][implementation]

    track_ms_per_iteration.unit = "ms per iteration"

