"""k-means family: ``kmeans`` (unsupervised baseline)."""

from ccbench.hookspecs import hookimpl
from ccbench.registry import MethodSpec


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="kmeans",
            estimator=f"{__name__}.kmeans:KMeansClusterer",
            summary="k-means (unsupervised baseline)",
            paper="Lloyd 1982; Arthur & Vassilvitskii 2007",
            needs_n_clusters=True,
        )
    ]
