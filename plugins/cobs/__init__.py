"""COBS family: ``cobs``, constraint-based clustering selection over a pool of the built-in
unsupervised methods (``kmeans``, ``ap``, ``ncuts``, reached through the registry).
Grids, constraint count and selection rule live in :mod:`.core`."""

from ccbench.hookspecs import hookimpl
from ccbench.registry import K_AROUND, MemoryModel, MethodSpec, TimeModel

_PAIRS = ("must_link", "cannot_link", "labels")


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="cobs",
            grid={"n_clusters": K_AROUND},  # CVCP chooses k from the constraints (issue 38)
            estimator=f"{__name__}.cobs:COBS",
            summary="constraint-based selection: the k-means / AP / NCuts clustering satisfying the most constraints",
            paper="Van Craenendonck & Blockeel, Machine Learning 2017",
            supervision=_PAIRS,
            needs_n_clusters=False,
            accepts_n_clusters=True,  # given k (k_mode=auto/fixed) the pool is restricted to k
            # the constraints choose among unsupervised clusterings (an objective), never enforced
            constraint_kind="soft",
            # the AP members' messages (ap declares 5 n^2) bound the peak: members run one at a time
            memory=MemoryModel(dense=5, alternative="subsample (an upper bound: AP members, the dense part, are skipped above ap_max_samples)"),
            # scale table (docs/benchmarks.md), fitted on n = 3,200..10,000 (2.2 s, 6.3 s, 9.9 s): AP
            # skipped, NCuts on its low-rank route. Below 2,001 points AP and NCuts's dense route make
            # a fit slower than this predicts (21 s at n = 2,000, the curve's maximum), never a minute
            # CPU per trial, calibrated on reports/leaderboard/rows.parquet by
            # `ccbench time-models reports/leaderboard` (issue 50; docs/harness.md, time budget)
            time=TimeModel(n=1000, seconds=5.17, exponent=2.1, k_exponent=-0.03, features_exponent=-0.21, tuned=0.932,
                           k_free=TimeModel(n=1000, seconds=2.92, exponent=1.58, pairs_exponent=0.24, features_exponent=0.13)),
            uses=("kmeans", "ap", "ncuts"),  # built through make_method: their code is this method's
        ),
    ]
