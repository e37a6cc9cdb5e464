"""Affinity-propagation family: ``ap``, ``scssap``, ``scssap_ml``, ``ssap_g``.

All four run on one message core (:mod:`.core`, numba kernels in :mod:`._kernels`).
Each finds the number of clusters itself (``needs_n_clusters=False``) and accepts an
optional ``n_clusters``: the preference is then searched by bisection
(:func:`ccbench.similarity.bisect_preference`, issue 38).
"""

from ccbench.hookspecs import hookimpl
from ccbench.registry import K_AROUND, MemoryModel, MethodSpec, TimeModel

_ARZENO = "Arzeno & Vikalo, IEEE TPAMI 2015"
_PAIRS = ("must_link", "cannot_link")


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="ap",
            grid={"n_clusters": K_AROUND},  # CVCP chooses k from the constraints (issue 38)
            estimator=f"{__name__}.ap:AffinityPropagationClusterer",
            needs_n_clusters=False,
            accepts_n_clusters=True,  # n_clusters=k searches the preference (bisection)
            search_fits=10,  # the search's typical fits, charged to the time budget
            summary="affinity propagation on negative squared Euclidean similarities (unsupervised)",
            paper="Frey & Dueck, Science 2007",
            time=TimeModel(n=5000, seconds=15, exponent=1.44),  # scale table, docs/benchmarks.md
            memory=MemoryModel(dense=5, alternative="subsample, or use scap with memory='linear' (O(N) memory)"),
        ),
        MethodSpec(
            name="scssap",
            grid={"confidence": (None, 0.1, 0.5), "n_clusters": K_AROUND},
            estimator=f"{__name__}.scssap:SCSSAP",
            needs_n_clusters=False,
            accepts_n_clusters=True,  # n_clusters=k searches the preference (bisection)
            search_fits=10,  # the search's typical fits, charged to the time budget
            summary="soft-constraint semi-supervised affinity propagation (penalised must/cannot-link factors)",
            paper=_ARZENO,
            supervision=_PAIRS,
            constraint_kind="soft",
            time=TimeModel(n=5000, seconds=18, exponent=1.96),  # scale table, docs/benchmarks.md
            memory=MemoryModel(dense=5, alternative="subsample, or use scap with memory='linear' (O(N) memory)"),
        ),
        MethodSpec(
            name="scssap_ml",
            grid={"confidence": (None, 0.1, 0.5), "n_clusters": K_AROUND},
            estimator=f"{__name__}.scssap:SCSSAPMetricLearning",
            needs_n_clusters=False,
            accepts_n_clusters=True,  # n_clusters=k searches the preference (bisection)
            search_fits=10,  # the search's typical fits, charged to the time budget
            summary="SCSSAP alternated with closed-form diagonal metric learning (Algorithm 2)",
            paper=_ARZENO,
            supervision=_PAIRS,
            constraint_kind="soft",
            time=TimeModel(n=5000, seconds=143, exponent=1.82),  # scale table, docs/benchmarks.md
            memory=MemoryModel(dense=5, alternative="subsample, or use scap with memory='linear' (O(N) memory)"),
        ),
        MethodSpec(
            name="ssap_g",
            grid={"n_clusters": K_AROUND},  # CVCP chooses k from the constraints (issue 38)
            estimator=f"{__name__}.ssap_g:SSAPG",
            needs_n_clusters=False,
            accepts_n_clusters=True,  # n_clusters=k searches the preference (bisection)
            search_fits=10,  # the search's typical fits, charged to the time budget
            summary="semi-supervised AP with must-link meta-points and hard cannot-link factors",
            paper="Givoni & Frey, AISTATS 2009",
            supervision=_PAIRS,
            constraint_kind="hard",
            time=TimeModel(n=5000, seconds=17, exponent=1.97),  # scale table, docs/benchmarks.md
            memory=MemoryModel(dense=6, alternative="subsample, or use scap with memory='linear' (O(N) memory)"),
        ),
    ]
