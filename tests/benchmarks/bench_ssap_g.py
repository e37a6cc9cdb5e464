"""``ssap_g``: Givoni & Frey's meta-point SSAP on the AP core (free points + meta-points as nodes)."""

from .bench_ap import FIXED_ITER, QUALITY
from .common import EstimatorBenchmark, make, pairs_data, smoke_or


class SSAPGFit(EstimatorBenchmark):
    """``make_method("ssap_g")``, 50 iterations, ``constraint_fraction * n`` random pairs;
    dense N' x N' over the nodes, N' <= N (n capped at 5000)."""

    method = "ssap_g"
    param_names = ["n", "constraint_fraction"]
    params = (smoke_or([500, 2000], [200]), smoke_or([0.01, 0.1], [0.1]))
    max_n = 5000

    def make_data(self, params):
        return pairs_data(*params)

    def make_estimator(self, params):
        return make("ssap_g", max_iter=FIXED_ITER, convergence_iter=FIXED_ITER, random_state=0)

    def make_quality_estimator(self, params):
        return make("ssap_g", random_state=0, **QUALITY)
