"""Spectral family (Fu et al. 2011): ``srcp``, ``ncuts``, ``spectral_learning``."""

from ccbench.hookspecs import hookimpl
from ccbench.registry import MethodSpec


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return []
