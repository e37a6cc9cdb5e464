"""Nearest-neighbour clustering family (Yang et al. 2015): ``fpc``, ``nnc`` and their learned metrics.

Metric learners (the paper's LP / SDP models and Xing et al.'s diagonal metric) live in
:mod:`.metric_learning` and are the ``metric`` parameter of both methods.
"""

from ccbench.hookspecs import hookimpl
from ccbench.registry import K_AROUND, MethodSpec

_YANG = "Yang, Xiao, Wang, Ma & Shen, Comput. Intell. Neurosci. 2015"


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="fpc",
            grid={"metric": ("euclidean", "lp_diag", "xing_diag"), "n_clusters": K_AROUND},
            estimator=f"{__name__}.fpc:FarthestPointClustering",
            summary="Gonzalez farthest-point clustering; metric= learns a metric from the pairs",
            paper="Gonzalez 1985; " + _YANG,
            supervision=("must_link", "cannot_link"),
            needs_n_clusters=True,
        ),
        MethodSpec(
            name="nnc",
            grid={"metric": ("euclidean", "lp_diag", "xing_diag"), "n_clusters": K_AROUND},
            estimator=f"{__name__}.nnc:NearestNeighbourClustering",
            summary="nearest-neighbour (dMax) clustering from labeled subsets (Algorithm 2); metric=",
            paper=_YANG,
            supervision=("labels", "must_link", "cannot_link"),
            needs_n_clusters=True,
            constraint_kind="hard",
        ),
        # The paper's baselines; the clustering is the k-means family's, reached
        # through the registry. Names beyond DESIGN.md's list (method + metric pairs).
        MethodSpec(
            name="cop_kmeans_xing",
            grid={"metric": ("xing_diag", "lp_diag", "euclidean"), "n_clusters": K_AROUND},
            estimator=f"{__name__}.xing_kmeans:COPKMeansXing",
            summary="COP-k-means in Xing et al.'s learned diagonal metric (the NNC paper's CopK Xing)",
            paper="Wagstaff et al. 2001; Xing et al. 2002; " + _YANG,
            supervision=("labels", "must_link", "cannot_link"),
            needs_n_clusters=True,
            constraint_kind="hard",
            uses=("cop_kmeans",),  # built through make_method: its code counts as this method's
        ),
        MethodSpec(
            name="pck_means_xing",
            grid={"penalty": (0.1, 1.0, 10.0), "n_clusters": K_AROUND},
            estimator=f"{__name__}.xing_kmeans:PCKMeansXing",
            summary="PCK-means in Xing et al.'s learned diagonal metric (the NNC paper's PCK Xing)",
            paper="Basu et al. 2004; Xing et al. 2002; " + _YANG,
            supervision=("labels", "must_link", "cannot_link"),
            needs_n_clusters=True,
            constraint_kind="soft",
            uses=("pck_means",),  # built through make_method: its code counts as this method's
        ),
    ]
