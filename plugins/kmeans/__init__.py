"""k-means family: ``kmeans`` (unsupervised baseline), ``cop_kmeans``, ``pck_means``,
``mpck_means``, ``constrained_em`` and ``pccc``. Shared pieces live in :mod:`.core`."""

from ccbench.hookspecs import hookimpl
from ccbench.registry import K_AROUND, MethodSpec

_PAIRS = ("must_link", "cannot_link", "labels")


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="kmeans",
            grid={"n_clusters": K_AROUND},  # CVCP chooses k from the constraints (issue 38)
            estimator=f"{__name__}.kmeans:KMeansClusterer",
            summary="k-means (unsupervised baseline)",
            paper="Lloyd 1982; Arthur & Vassilvitskii 2007",
            needs_n_clusters=True,
        ),
        MethodSpec(
            name="cop_kmeans",
            grid={"n_clusters": K_AROUND},  # CVCP chooses k from the constraints (issue 38)
            estimator=f"{__name__}.cop_kmeans:COPKMeans",
            summary="COP-k-means: nearest feasible centre, chunklets move as one",
            paper="Wagstaff et al., ICML 2001",
            supervision=_PAIRS,
            needs_n_clusters=True,
            constraint_kind="hard",
        ),
        MethodSpec(
            name="pck_means",
            grid={"penalty": (0.1, 1.0, 10.0), "n_clusters": K_AROUND},
            estimator=f"{__name__}.pck_means:PCKMeans",
            summary="pairwise-constrained k-means: penalty w per violated constraint",
            paper="Basu, Banerjee & Mooney, SDM 2004",
            supervision=_PAIRS,
            needs_n_clusters=True,
            constraint_kind="soft",
        ),
        MethodSpec(
            name="mpck_means",
            grid={"penalty": (0.1, 1.0, 10.0), "n_clusters": K_AROUND},
            estimator=f"{__name__}.mpck_means:MPCKMeans",
            summary="PCK-means with a learned diagonal metric per cluster",
            paper="Bilenko, Basu & Mooney, ICML 2004",
            supervision=_PAIRS,
            needs_n_clusters=True,
            constraint_kind="soft",
        ),
        MethodSpec(
            name="constrained_em",
            grid={"covariance_type": ("full", "diag", "spherical"), "n_clusters": K_AROUND},
            estimator=f"{__name__}.constrained_em:ConstrainedEM",
            summary="Gaussian-mixture EM with chunklets and a cannot-link Markov network",
            paper="Shental, Bar-Hillel, Hertz & Weinshall, NIPS 2003",
            supervision=_PAIRS,
            needs_n_clusters=True,
            constraint_kind="hard",
        ),
        MethodSpec(
            name="pccc",
            grid={"n_clusters": K_AROUND},  # CVCP chooses k from the constraints (issue 38)
            estimator=f"{__name__}.pccc:PCCC",
            summary="PCCC: k-means with an assignment MILP (HiGHS), hard and soft pairs with confidences",
            paper="Baumann & Hochbaum, INFORMS J. Computing 2024 (arXiv:2212.14437)",
            supervision=_PAIRS,
            needs_n_clusters=True,
            constraint_kind="hard",
        ),
    ]
