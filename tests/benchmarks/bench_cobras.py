"""COBRAS (``cobras``, Van Craenendonck et al., IDA 2018): clustering by asking an oracle.

Times one run of the default budget (``max_questions=100``) on the suite's 8-D blobs (5 centres),
asking the exact oracle of the labels through the provisional harness route (the scheme
``oracle_labels``: every label revealed, no pairs; COBRAS reads them one question at a time). Fixed
work: the budget is spent whole at these sizes (nothing runs out of super-instances to split), and
the run is mostly its k-means splits (10 restarts each), about three a question asked. The quality
track is the ARI after the 100 answers. The plugin is loaded on request (``plugins:
[ccbench_plugins.cobras]``), so ``setup`` registers it first."""

import functools

from .common import BenchData, EstimatorBenchmark, blobs, make, smoke_or

PLUGIN = "ccbench_plugins.cobras"


@functools.lru_cache(maxsize=None)
def _oracle_labels(n: int):
    """Every blob label as the oracle's answer key (scheme ``oracle_labels``, nothing drawn)."""
    from ccbench.registry import get_scheme_spec, load_plugins

    load_plugins([PLUGIN])
    _, y = blobs(n)
    return get_scheme_spec("oracle_labels").func(y, rng=None)


class COBRASFit(EstimatorBenchmark):
    """Default budget (100 questions) on common.blobs, the exact oracle of the blob labels."""

    method = "cobras"
    param_names = ["n"]
    params = (smoke_or([500, 2000], [200]),)
    heavy_n = (2000,)

    def setup(self, *params):
        from ccbench.registry import load_plugins

        load_plugins([PLUGIN])
        super().setup(*params)

    def make_data(self, params) -> BenchData:
        (n,) = params
        X, y = blobs(n)
        return BenchData(X, y, _oracle_labels(n))

    def make_estimator(self, params):
        return make("cobras", max_questions=100, random_state=0)
