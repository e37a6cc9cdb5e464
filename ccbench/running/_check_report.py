"""The results of ``ccbench check-plugin`` (:mod:`ccbench.running.check_plugin`): one
:class:`CheckResult` per check, its printed line, and the running list of a command's results
that stops the fitting checks once :data:`MAX_HUNG_IN_A_ROW` in a row gave no result within
``--timeout``. Re-exported by :mod:`ccbench.running.check_plugin` (import them from there).
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """One check of one method: ``status`` is ``pass``, ``fail``, ``xfail`` (a listed,
    expected failure) or ``skip``; ``detail`` says why."""

    group: str
    name: str
    status: str
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    def line(self) -> str:
        text = f"{self.status.upper():5} {self.group:9} {self.name}"
        return text + (f": {self.detail}" if self.detail else "")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


_NO_RESULT = "no result within --timeout"
#: checks in a row that give no result within ``--timeout`` before the others are skipped: a fit that
#: never returns would otherwise cost every remaining check the whole limit (21 checks: 105 min at 300 s)
MAX_HUNG_IN_A_ROW = 2


class _Results(list):
    """The results so far, each passed to ``on_result`` as it is added; ``stuck`` once
    :data:`MAX_HUNG_IN_A_ROW` of them in a row had no result within the time limit."""

    def __init__(self, on_result, timeout):
        super().__init__()
        self.on_result, self.timeout, self.hung = on_result, timeout, 0

    def __iadd__(self, results):
        for result in results:
            self.append(result)
            if result.status != "skip":  # a skipped check leaves the count where it was
                self.hung = self.hung + 1 if result.detail.startswith(_NO_RESULT) else 0
            if self.on_result is not None:
                self.on_result(result)
        return self

    @property
    def stuck(self) -> bool:
        return self.hung >= MAX_HUNG_IN_A_ROW

    def skipped(self, group: str, check: str) -> CheckResult:
        return CheckResult(group, check, "skip", f"not run: the last {self.hung} checks gave no result within "
                                                 f"--timeout {self.timeout:g} s (the fit never returns?); fix "
                                                 f"the hang, or raise --timeout if the fits are only slow")
