"""SDP family (Okabe & Yamada 2010): ``rn_sdp`` and ``kmedoids``."""

from ccbench.hookspecs import hookimpl
from ccbench.registry import MethodSpec


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return []
