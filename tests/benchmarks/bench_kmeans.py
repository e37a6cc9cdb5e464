"""``kmeans``: the unsupervised baseline (scikit-learn's Lloyd iterations)."""

from .common import BenchData, EstimatorBenchmark, blobs, make


class KMeansFit(EstimatorBenchmark):
    """k-means on 8-D blobs; one initialisation and a fixed iteration count
    (``tol`` is scikit-learn's default, so a run may stop earlier on easy data: the
    time is a baseline for the suite, not a target)."""

    method = "kmeans"
    param_names = ["n"]
    params = ([500, 2000, 20000],)

    def make_data(self, params):
        (n,) = params
        X, y = blobs(n)
        return BenchData(X, y)

    def make_estimator(self, params):
        return make("kmeans", n_clusters=5, n_init=1, max_iter=100, random_state=0)
