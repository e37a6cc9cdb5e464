"""NNC family (Yang et al. 2015): ``fpc`` and ``nnc`` are linear in n; the metric learners.

- ``FPCFit`` / ``NNCFit``: n = 10^3 ... 10^6 points, d = 10, k = 10 (5 labeled points per
  class for ``nnc``), Euclidean metric: O(nk) and O(n sum|S_i|) time, O(n) memory (no
  n x n array; ``track_fit_peak_mb`` at 10^6 stays a small multiple of the 80 MB input).
- ``NNCScaling.track_exponent``: the fitted exponent b of time ~ n^b between 10^5 and
  10^6 (1 = linear).
- ``MetricLearning``: ``lp_diag`` (HiGHS LP, eqs. 21-26) beside ``xing_diag`` against the
  number of dimensions d and classes k (the LP has k(k-1)/2 * 25 cannot-link rows).
- ``XingKMeansFit``: the paper's CopK Xing / PCK Xing baselines at moderate n.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from .common import QUICK, SMOKE, BenchData, EstimatorBenchmark, blobs, make, smoke_or

D, K, PER_CLASS = 10, 10, 5


@functools.lru_cache(maxsize=None)
def labeled_blobs(n: int, d: int = D, k: int = K):
    """10-D blobs around k centres with PER_CLASS revealed labels per class."""
    from ccbench.constraints import labeled_subsets

    X, y = blobs(n, n_features=d, n_centers=k)
    return BenchData(X, y, labeled_subsets(y, PER_CLASS, rng=np.random.default_rng(1)))


class FPCFit(EstimatorBenchmark):
    """``fpc``, Euclidean, k = 10 centres."""

    method = "fpc"
    param_names = ["n"]
    params = (smoke_or([1000, 10000, 100000, 1000000], [1000]),)
    heavy_n = (1000000,)

    def make_data(self, params):
        return labeled_blobs(params[0])

    def make_estimator(self, params):
        return make("fpc", n_clusters=K, random_state=0)


class NNCFit(FPCFit):
    """``nnc``, Euclidean, 5 labeled points in each of the 10 classes."""

    method = "nnc"

    def make_estimator(self, params):
        return make("nnc", n_clusters=K)


class NNCScaling:
    """Fitted exponent b of fit time ~ n^b (two sizes a decade apart, best of 3 each)."""

    param_names = ["method"]
    params = (["fpc", "nnc"],)
    timeout = 300
    sizes = (500, 5000) if SMOKE else (10000, 100000) if QUICK else (100000, 1000000)

    def setup(self, method):
        self.fits = {n: (make(method, n_clusters=K, random_state=0), labeled_blobs(n)) for n in self.sizes}
        for est, data in self.fits.values():  # warm caches and page in the data
            est.fit(data.X, constraints=data.constraints)

    def track_exponent(self, method):
        times = []
        for n in self.sizes:
            est, data = self.fits[n]
            best = np.inf
            for _ in range(3):
                t0 = time.perf_counter()
                est.fit(data.X, constraints=data.constraints)
                best = min(best, time.perf_counter() - t0)
            times.append(best)
        return float(np.log(times[1] / times[0]) / np.log(self.sizes[1] / self.sizes[0]))

    track_exponent.unit = "exponent (1 = linear)"


class MetricLearning:
    """Seconds to learn the metric from 5 labeled points per class (all their pairs)."""

    param_names = ["metric", "d", "k"]
    params = (["lp_diag", "xing_diag"], smoke_or([10, 50, 200], [10]), smoke_or([2, 10], [2]))
    timeout = 300
    number = 1
    repeat = (1, 5, 20.0)

    def setup(self, metric, d, k):
        from ccbench_plugins.nnc.metric_learning import learn_metric

        data = labeled_blobs(100 * k, d, k)
        self.run = lambda: learn_metric(data.X, data.constraints.must_link, data.constraints.cannot_link, metric)
        self.run()

    def time_learn(self, metric, d, k):
        self.run()


class COPKMeansXingFit(EstimatorBenchmark):
    """``cop_kmeans_xing``: Xing's diagonal metric, then COP-k-means seeded by the S_i."""

    method = "cop_kmeans_xing"
    param_names = ["n"]
    params = (smoke_or([1000, 10000], [500]),)

    def make_data(self, params):
        return labeled_blobs(params[0])

    def make_estimator(self, params):
        return make(self.method, n_clusters=K, random_state=0)


class PCKMeansXingFit(COPKMeansXingFit):
    """``pck_means_xing``: Xing's diagonal metric, then PCK-means seeded by the S_i."""

    method = "pck_means_xing"
