"""Spectral family: ``srcp``, ``e2cp``, ``ncuts``, ``spectral_learning``.

All four share one k-NN Gaussian graph, one constraint propagation / similarity
adjustment toolkit and one normalised spectral clustering step (:mod:`.core`).
"""

from ccbench.hookspecs import hookimpl
from ccbench.registry import K_AROUND, MemoryModel, MethodSpec, TimeModel

_PAIRS = ("must_link", "cannot_link")

# Measured for issue 29 (``cd tests && python -m benchmarks.bench_spectral stages METHOD N``: blobs d = 10,
# 0.01 n pairs, solver="auto", the 2-core machine at load 2-4; under load 8-9 walls were 3-5x longer):
# peak RSS minus ~200 MB of imports.
# srcp: W* (8 n^2 B) + the ADI factor Z and Z C (2 x n x 9p, p ~ 0.02 n: 0.36 n^2 floats);
#   1,295 MB at n = 10,000 and 4,480 MB at n = 20,000, i.e. ~1.35 n^2 floats.
#   (solver="eig", forced or chosen by "auto" when more than n / 16 points are constrained, holds ~7 n^2.)
# e2cp: W* + Z, Z C (n x p each): 1,031 MB at n = 10,000, ~1.05 n^2 floats.
_SRCP_MEMORY = MemoryModel(dense=1.5, alternative="subsample, or fewer constrained points (the factor grows with them)")
_E2CP_MEMORY = MemoryModel(dense=1.2, alternative="subsample, or fewer constrained points (the factor grows with them)")


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="srcp",
            grid={"mu": (0.05, 0.2, 1.0), "n_clusters": K_AROUND},  # n_neighbors at its default: 9 combinations at most
            estimator=f"{__name__}.srcp:SRCP",
            summary="symmetric graph-regularised constraint propagation (Lyapunov eq. 5), adjusted W, spectral clustering",
            paper="Fu, Lu, Ip, Peng & Lu, AAAI 2011",
            supervision=_PAIRS,
            needs_n_clusters=True,
            constraint_kind="soft",
            memory=_SRCP_MEMORY,
            # 3.2 / 18 / 49 s wall at n = 5k / 10k / 20k (load 2-3); 55 s at 15k, 104 s at 20k (load 4)
            # CPU per trial, calibrated on reports/leaderboard/rows.parquet by
            # `ccbench time-models reports/leaderboard` (issue 50; docs/harness.md, time budget)
            time=TimeModel(n=1000, seconds=0.447, exponent=2.36, pairs_exponent=0.02, k_exponent=-0.09, features_exponent=0.28, tuned=1.24,
                           k_free=TimeModel(n=1000, seconds=0.175, exponent=1.51, pairs_exponent=0.11, features_exponent=0.03)),
        ),
        MethodSpec(
            name="e2cp",
            grid={"alpha": (0.5, 0.8, 0.95), "n_clusters": K_AROUND},  # n_neighbors at its default
            estimator=f"{__name__}.e2cp:E2CP",
            summary="exhaustive and efficient constraint propagation (vertical + horizontal), adjusted W, spectral clustering",
            paper="Lu & Ip, ECCV 2010",
            supervision=_PAIRS,
            needs_n_clusters=True,
            constraint_kind="soft",
            memory=_E2CP_MEMORY,
            # CPU per trial, calibrated on reports/leaderboard/rows.parquet by
            # `ccbench time-models reports/leaderboard` (issue 50; docs/harness.md, time budget)
            time=TimeModel(n=1000, seconds=0.314, exponent=1.61, pairs_exponent=0.06, k_exponent=-0.22, features_exponent=0.09, tuned=0.838,
                           k_free=TimeModel(n=1000, seconds=0.175, exponent=1.52, pairs_exponent=0.14, features_exponent=0.04)),
        ),
        MethodSpec(
            name="ncuts",
            grid={"n_clusters": K_AROUND},  # CVCP chooses k from the constraints (issue 38)
            estimator=f"{__name__}.ncuts:NCuts",
            summary="normalised spectral clustering of the k-NN Gaussian graph (unsupervised baseline)",
            paper="Shi & Malik, IEEE TPAMI 2000",
            needs_n_clusters=True,
            memory=MemoryModel(dense=3, alternative="subsample (dense n x n graph)"),
        ),
        MethodSpec(
            name="spectral_learning",
            grid={"n_neighbors": (10, 20, 40), "n_clusters": K_AROUND},  # sigma at its default
            estimator=f"{__name__}.spectral_learning:SpectralLearning",
            summary="spectral learning: w_ij = 1 for must-links, 0 for cannot-links, then spectral clustering",
            paper="Kamvar, Klein & Manning, IJCAI 2003",
            supervision=_PAIRS,
            needs_n_clusters=True,
            constraint_kind="soft",
            # sparse graph and LOBPCG above 2,000 points (226 MB RSS at n = 10,000, imports
            # included); at most ~2 n^2 floats (64 MB) on the dense route below
            memory=MemoryModel(linear=30, alternative="subsample"),  # 6.3 MB traced at n = 3,000, d = 10
            # CPU per trial, calibrated on reports/leaderboard/rows.parquet by
            # `ccbench time-models reports/leaderboard` (issue 50; docs/harness.md, time budget)
            time=TimeModel(n=1000, seconds=0.0477, exponent=1.11, pairs_exponent=0.02, k_exponent=0.73, features_exponent=0.18, tuned=0.774,
                           k_free=TimeModel(n=1000, seconds=0.0537, exponent=1.02, pairs_exponent=0.14, features_exponent=0.01)),
        ),
    ]
