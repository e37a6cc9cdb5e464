"""SDP family (Okabe & Yamada 2010): ``rn_sdp`` and ``kmedoids``; the ``lower_bound`` and
``bound_gap`` metrics (the certified k-means SDP bound of :mod:`.kmeans_bound`).

The RN-SDP problem, its reduction over must-link chunklets, its feasibility analysis and
the k-medoids swap live in :mod:`.core`; the SDPA, ADMM and cvxpy solvers (and
``solver="auto"``'s choice between the first two) in :mod:`._solvers`.
"""

from ccbench.hookspecs import hookimpl
from ccbench.registry import K_AROUND, MemoryModel, MethodSpec, MetricSpec, TimeModel, lazy_function

_OKABE = "Okabe & Yamada, JACIII 2010"


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="rn_sdp",
            grid={"sigma": (0.1, 0.3, 1.0), "n_clusters": K_AROUND},
            estimator=f"{__name__}.rn_sdp:RNSDP",
            summary="SDP similarity learning with relational-neighbour bounds (t = 0: KK-means), k-medoids on K",
            paper=_OKABE,
            supervision=("must_link", "cannot_link"),
            needs_n_clusters=True,
            constraint_kind="soft",  # K meets them exactly; k-medoids may still split a cannot-link
            # scale table (docs/benchmarks.md), default solver="auto" (SDPA there), load 8-9:
            # 5.2 s at 500, 35 s at 1,000, 60 s at 1,200, 92 s at 1,400 points (slopes 2.75-2.9;
            # at load 0.8: 1.5 s at 500, 11 s at 1,000, 132 s at 2,000)
            # CPU per trial, calibrated on reports/leaderboard/rows.parquet by
            # `ccbench time-models reports/leaderboard` (issue 50; docs/harness.md, time budget)
            time=TimeModel(n=1000, seconds=8.39, exponent=2.42, pairs_exponent=0.01, k_exponent=0.39, features_exponent=0.06, tuned=0.998,
                           k_free=TimeModel(n=1000, seconds=3.26, exponent=1.81, pairs_exponent=0.31, features_exponent=-0.11)),
            # SDPA's route: 87 / 337 / 486 / 763 MB at n = 500 / 1,000 / 1,200 / 1,500 (42-44 n^2 doubles);
            # the ADMM's: 79 MB at 500 (40 n^2)
            memory=MemoryModel(dense=44, alternative="subsample (the SDP holds dozens of n x n matrices)"),
        ),
        MethodSpec(
            name="kmedoids",
            grid={"n_clusters": K_AROUND},  # CVCP chooses k from the constraints (issue 38)
            estimator=f"{__name__}.kmedoids:KMedoids",
            summary="k-medoids, Algorithm 1's greedy swap (or FasterPAM), squared Euclidean (unsupervised)",
            paper=_OKABE,
            needs_n_clusters=True,
            # CPU per trial, calibrated on reports/leaderboard/rows.parquet by
            # `ccbench time-models reports/leaderboard` (issue 50; docs/harness.md, time budget)
            time=TimeModel(n=1000, seconds=0.146, exponent=2.33, pairs_exponent=-0.01, k_exponent=1.62, features_exponent=-0.04, tuned=0.984,
                           k_free=TimeModel(n=1000, seconds=1.3, exponent=2.45, pairs_exponent=0.08, features_exponent=0.08)),
            memory=MemoryModel(dense=3, alternative="subsample, or use kmeans"),
        ),
    ]


@hookimpl
def ccbench_metrics() -> list[MetricSpec]:
    # opt-in (list them in a cell's metrics): each instance costs one SDP solve (cached per process
    # and in $CCBENCH_BOUND_CACHE_DIR). Named, not imported: listing metrics loads no solver, and the
    # wrappers' module is kmeans_bound, so provenance hashes the bound's code (a change there makes rows stale)
    return [
        MetricSpec("lower_bound", lazy_function(f"{__name__}.kmeans_bound:lower_bound_metric"),
                   "certified lower bound on the constrained k-means objective (Peng-Wei SDP, safe dual), "
                   "k = clusters found", direction="none", label="SSE lower bound", needs_features=True,
                   needs_constraints=True),
        MetricSpec("bound_gap", lazy_function(f"{__name__}.kmeans_bound:bound_gap_metric"),
                   "(inertia - lower_bound) / lower_bound: the objective's certified distance from the optimum",
                   direction="lower", bounds=(-1.0, float("inf")), label="gap to the SSE lower bound",
                   needs_features=True, needs_constraints=True),
    ]
