"""Affinity-propagation family: ``ap``, ``scssap``, ``scssap_ml``, ``ssap_g``.

All four run on one message core (:mod:`.core`, numba kernels in :mod:`._kernels`).
"""

from ccbench.hookspecs import hookimpl
from ccbench.registry import MethodSpec

_ARZENO = "Arzeno & Vikalo, IEEE TPAMI 2015"
_PAIRS = ("must_link", "cannot_link")


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="ap",
            estimator=f"{__name__}.ap:AffinityPropagationClusterer",
            summary="affinity propagation on negative squared Euclidean similarities (unsupervised)",
            paper="Frey & Dueck, Science 2007",
        ),
        MethodSpec(
            name="scssap",
            estimator=f"{__name__}.scssap:SCSSAP",
            summary="soft-constraint semi-supervised affinity propagation (penalised must/cannot-link factors)",
            paper=_ARZENO,
            supervision=_PAIRS,
            constraint_kind="soft",
        ),
        MethodSpec(
            name="scssap_ml",
            estimator=f"{__name__}.scssap:SCSSAPMetricLearning",
            summary="SCSSAP alternated with closed-form diagonal metric learning (Algorithm 2)",
            paper=_ARZENO,
            supervision=_PAIRS,
            constraint_kind="soft",
        ),
        MethodSpec(
            name="ssap_g",
            estimator=f"{__name__}.ssap_g:SSAPG",
            summary="semi-supervised AP with must-link meta-points and hard cannot-link factors",
            paper="Givoni & Frey, AISTATS 2009",
            supervision=_PAIRS,
            constraint_kind="hard",
        ),
    ]
