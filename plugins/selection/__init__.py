"""Model selection from the supervision alone: ``tune=cvcp`` (CVCP, Pourrajabi et al., EDBT 2014).

The pluggy plugin of the selection procedures; it names them as ``"module:function"``
strings, so ``ccbench plugins`` imports no numerical code. A method's candidate
values are its :attr:`ccbench.registry.MethodSpec.grid`.
"""

from ccbench.hookspecs import hookimpl
from ccbench.registry import TunerSpec


@hookimpl
def ccbench_tuners() -> list[TunerSpec]:
    return [
        TunerSpec(
            name="cvcp",
            select=f"{__name__}.cvcp:select",
            summary="cross-validation over the constraints: F-measure of held-out must-/cannot-link satisfaction",
            paper="Pourrajabi, Moulavi, Campello, Zimek & Sander, EDBT 2014",
        ),
    ]
