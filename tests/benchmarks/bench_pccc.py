"""PCCC (``pccc``): k-means whose assignment step is a MILP solved by HiGHS (scipy ``milp``).

Times one start on 8-D blobs (5 centres) with ``0.1 n`` random pairs, all hard, with every
centre a candidate (``n_neighbors=None``, the reference default) and with the KD-tree
restriction to the 2 nearest centres (raised to 1 + the largest cannot-link degree where
needed): the restriction's saving is the ratio of the two rows."""

from .common import BenchData, EstimatorBenchmark, make, pairs_data, smoke_or


class PCCCFit(EstimatorBenchmark):
    method = "pccc"
    param_names = ["n", "n_neighbors"]
    params = (smoke_or([500, 1000], [200]), [None, 2])  # n = 2000: 15-17 s a fit (30 MILPs)

    def make_data(self, params) -> BenchData:
        n, _ = params
        return pairs_data(n, 0.1)

    def make_estimator(self, params):
        _, q = params
        return make("pccc", n_clusters=5, n_neighbors=q, max_iter=30, random_state=0)
