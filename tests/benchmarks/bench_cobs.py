"""COBS family: ``cobs`` (Van Craenendonck & Blockeel 2017), the whole pool (k-means over k,
AP over preference quantiles, NCuts over k and sigma) and the selection by satisfied
constraints. Fixed work: the pool is fixed by the defaults; n = 3,200 lies above
``ap_max_samples`` (AP skipped, NCuts's low-rank route), the regime of the declared TimeModel."""

from .common import BenchData, EstimatorBenchmark, make, pairs_data, smoke_or


class COBSFit(EstimatorBenchmark):
    """Default pool on the suite's blobs (common.blobs) with 0.01 n random pairs, as the scale table."""

    method = "cobs"
    param_names = ["n"]
    params = (smoke_or([500, 2000, 3200], [200]),)
    heavy_n = (2000,)

    def make_data(self, params) -> BenchData:
        (n,) = params
        return pairs_data(n, 0.01)

    def make_estimator(self, params):
        return make("cobs", random_state=0)
