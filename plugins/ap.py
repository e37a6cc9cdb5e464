"""``ap``: unsupervised affinity propagation (placeholder until the shared core lands)."""
from __future__ import annotations

from ccbench import ConstrainedClusterer, MethodSpec, hookimpl


@hookimpl
def ccbench_methods():
    return []
