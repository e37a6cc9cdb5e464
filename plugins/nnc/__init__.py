"""Nearest-neighbour clustering family (Yang et al. 2015): ``fpc``, ``nnc`` and their learned metrics."""

from ccbench.hookspecs import hookimpl
from ccbench.registry import MethodSpec


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return []
