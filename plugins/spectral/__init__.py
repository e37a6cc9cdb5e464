"""Spectral family: ``srcp``, ``e2cp``, ``ncuts``, ``spectral_learning``.

All four share one k-NN Gaussian graph, one constraint propagation / similarity
adjustment toolkit and one normalised spectral clustering step (:mod:`.core`).
"""

from ccbench.hookspecs import hookimpl
from ccbench.registry import MemoryModel, MethodSpec

_PAIRS = ("must_link", "cannot_link")


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="srcp",
            grid={"mu": (0.05, 0.2, 1.0), "n_neighbors": (10, 20)},
            estimator=f"{__name__}.srcp:SRCP",
            summary="symmetric graph-regularised constraint propagation (Lyapunov eq. 5), adjusted W, spectral clustering",
            paper="Fu, Lu, Ip, Peng & Lu, AAAI 2011",
            supervision=_PAIRS,
            needs_n_clusters=True,
            constraint_kind="soft",
            memory=MemoryModel(dense=7, alternative="subsample (dense n x n propagation and graph)"),
        ),
        MethodSpec(
            name="e2cp",
            grid={"alpha": (0.5, 0.8, 0.95), "n_neighbors": (10, 20)},
            estimator=f"{__name__}.e2cp:E2CP",
            summary="exhaustive and efficient constraint propagation (vertical + horizontal), adjusted W, spectral clustering",
            paper="Lu & Ip, ECCV 2010",
            supervision=_PAIRS,
            needs_n_clusters=True,
            constraint_kind="soft",
            memory=MemoryModel(dense=7, alternative="subsample (dense n x n propagation and graph)"),
        ),
        MethodSpec(
            name="ncuts",
            estimator=f"{__name__}.ncuts:NCuts",
            summary="normalised spectral clustering of the k-NN Gaussian graph (unsupervised baseline)",
            paper="Shi & Malik, IEEE TPAMI 2000",
            needs_n_clusters=True,
            memory=MemoryModel(dense=3, alternative="subsample (dense n x n graph)"),
        ),
        MethodSpec(
            name="spectral_learning",
            grid={"n_neighbors": (10, 20, 40), "sigma": (1.0, None)},
            estimator=f"{__name__}.spectral_learning:SpectralLearning",
            summary="spectral learning: w_ij = 1 for must-links, 0 for cannot-links, then spectral clustering",
            paper="Kamvar, Klein & Manning, IJCAI 2003",
            supervision=_PAIRS,
            needs_n_clusters=True,
            constraint_kind="soft",
            memory=MemoryModel(dense=3, alternative="subsample (dense n x n graph)"),
        ),
    ]
