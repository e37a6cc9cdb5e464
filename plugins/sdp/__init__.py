"""SDP family (Okabe & Yamada 2010): ``rn_sdp`` and ``kmedoids``.

The RN-SDP problem, its reduction over must-link chunklets, its feasibility analysis and
the k-medoids swap live in :mod:`.core`; the ADMM and cvxpy solvers in :mod:`._solvers`.
"""

from ccbench.hookspecs import hookimpl
from ccbench.registry import MemoryModel, MethodSpec, TimeModel

_OKABE = "Okabe & Yamada, JACIII 2010"


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="rn_sdp",
            grid={"sigma": (0.1, 0.3, 1.0)},
            estimator=f"{__name__}.rn_sdp:RNSDP",
            summary="SDP similarity learning with relational-neighbour bounds (t = 0: KK-means), k-medoids on K",
            paper=_OKABE,
            supervision=("must_link", "cannot_link"),
            needs_n_clusters=True,
            constraint_kind="soft",  # K meets them exactly; k-medoids may still split a cannot-link
            time=TimeModel(n=500, seconds=177, exponent=2.32),  # scale table, docs/benchmarks.md (slope: 500 -> 1,000 points)
            memory=MemoryModel(dense=36, alternative="subsample (the SDP holds dozens of n x n matrices)"),
        ),
        MethodSpec(
            name="kmedoids",
            estimator=f"{__name__}.kmedoids:KMedoids",
            summary="k-medoids, Algorithm 1's greedy swap (or FasterPAM), squared Euclidean (unsupervised)",
            paper=_OKABE,
            needs_n_clusters=True,
            time=TimeModel(n=5000, seconds=16, exponent=2.33),  # scale table, docs/benchmarks.md
            memory=MemoryModel(dense=3, alternative="subsample, or use kmeans"),
        ),
    ]
