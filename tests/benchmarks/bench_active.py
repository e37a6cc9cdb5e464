"""Active query strategies (issue 53, item 6): the cost of choosing a question, and what the questions buy.

One class, parametrised over the registered strategies (:data:`VARIANTS`, NPU with both of its
similarities) and ``n``. One run asks :data:`N_QUERIES` = 50 questions through
``ccbench_plugins.active.loop.run_queries`` of the exact ``Oracle`` of the blob labels, seed 0, so
every run asks the same pairs. The data are ``common.blobs`` in :data:`N_FEATURES` = 10 dimensions
(5 centres), the size of the per-query costs measured for issue 53 (n = 5000, d = 10), not the
suite's 8.

The partition a strategy sees is fixed for the whole run (no refit between answers, which is the
method's cost, timed by the method's own benchmark): the blob labels, our choice, so NPU's
``"forest"`` similarity has a partition to train on (with none it falls back to ``"rbf"``). The
forest is then trained once per run (NPU keeps it while the partition does not change), as in the
anytime protocol between two budgets.

- ``time_queries`` / ``peakmem_queries``: the 50 questions, the exact oracle's answers included (a
  label comparison and one seeded generator per question, tens of microseconds);
- ``track_ms_per_query``: CPU milliseconds (``time.process_time``) per question of one run, the
  number the anytime rows record as ``strategy_seconds`` and docs/architecture.md quotes;
- ``track_must_link_share``: share of must-link answers among the 50 (uniform pairs of 5 equal
  blobs: about 1/5; the Explore-Consolidate family asks a point against its nearest neighbourhood
  first, so its share is higher once the K neighbourhoods exist);
- ``track_ari_pck_means``: ARI of ``pck_means`` (K = 5, seed 0) fitted on the 50 answers.
"""

from __future__ import annotations

import time

from .common import QUICK, blobs, smoke_or

#: Benchmark parameter -> (registry name, options): every registered strategy at its defaults, and
#: NPU with its cheaper similarity too. ``tests/test_benchmark_suite.py`` checks that every
#: registered strategy is here.
VARIANTS = {
    "random": ("random", {}),
    "explore_consolidate": ("explore_consolidate", {}),
    "min_max": ("min_max", {}),
    "npu_forest": ("npu", {"similarity": "forest"}),
    "npu_rbf": ("npu", {"similarity": "rbf"}),
    "cobra": ("cobra", {}),
}
N_QUERIES = 50
N_FEATURES = 10


def _make_strategy(variant: str, n_clusters: int):
    from ccbench.registry import get_query_strategy_spec, make_query_strategy

    name, options = VARIANTS[variant]
    spec = get_query_strategy_spec(name)
    if spec.needs_n_clusters:
        options = {**options, "n_clusters": n_clusters}
    return make_query_strategy(name, **options)


class QueryStrategyCost:
    """50 questions of each strategy to the exact oracle on 10-D blobs of ``n`` points."""

    #: Registry names covered (read by tests/test_benchmark_suite.py).
    query_strategies = tuple(sorted({name for name, _ in VARIANTS.values()}))
    param_names = ["strategy", "n"]
    params = (list(VARIANTS), smoke_or([500, 5000], [200]))
    heavy_n = (5000,)
    timeout = 300
    # one run per sample (0.01-3 s each), at most 5 samples or 20 s per round, no warm-up loop
    number = 1
    repeat = (1, 5, 20.0)
    warmup_time = 0.0

    def setup(self, strategy, n):
        if QUICK and n in self.heavy_n:
            raise NotImplementedError(f"n={n} skipped in the quick run (CCBENCH_BENCH_QUICK)")
        from ccbench_plugins.active.oracle import Oracle

        self.X, self.y = blobs(n, n_features=N_FEATURES)
        self.n_clusters = len(set(self.y.tolist()))
        self.strategy = _make_strategy(strategy, self.n_clusters)
        self.oracle = Oracle(self.y)

    def _ask(self):
        from ccbench_plugins.active.loop import run_queries

        return run_queries(self.strategy, self.X, self.oracle, N_QUERIES, labels=self.y, rng=0)

    def time_queries(self, strategy, n):
        self._ask()

    def peakmem_queries(self, strategy, n):
        self._ask()

    def track_ms_per_query(self, strategy, n):
        start = time.process_time()
        self._ask()
        return 1000.0 * (time.process_time() - start) / N_QUERIES

    track_ms_per_query.unit = "CPU ms per question"

    def track_must_link_share(self, strategy, n):
        _, answers = self._ask()
        return float(answers.mean())

    track_must_link_share.unit = "share of must-link answers"

    def track_ari_pck_means(self, strategy, n):
        import warnings

        from ccbench.constraints import Constraints
        from ccbench.metrics import adjusted_rand
        from ccbench.registry import make_method

        asked, answers = self._ask()
        cons = Constraints(must_link=asked[answers], cannot_link=asked[~answers], n_samples=len(self.X))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            labels = make_method("pck_means", n_clusters=self.n_clusters, random_state=0).fit(
                self.X, constraints=cons).labels_
        return adjusted_rand(self.y, labels)

    track_ari_pck_means.unit = "adjusted Rand index"
