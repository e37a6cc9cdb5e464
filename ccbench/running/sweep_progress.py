"""A sweep's progress markers, shared by the progress callback (:mod:`ccbench.running.app`) and the
SLURM launcher's detached report job, which removes them in the callback's place (one module both
import: the launcher importing the app closed an import cycle)."""

from __future__ import annotations

import os
from pathlib import Path

TOTAL_FILE = ".ccbench_jobs"
DONE_FILE = ".ccbench_done"
# The run a job belongs to (set by on_multirun_start, inherited by launcher workers): two grids run
# into one sweep directory count their own jobs, not each other's ("jobs done 11/4").
RUN_ENV = "CCBENCH_SWEEP_RUN"


def forget_progress(sweep: Path, run: str | None = None) -> None:
    """Remove run ``run``'s markers (default: this process's run, from :data:`RUN_ENV`)."""
    run = run or os.environ.get(RUN_ENV)
    if run:
        for marker in (Path(sweep) / f"{TOTAL_FILE}.{run}", Path(sweep) / f"{DONE_FILE}.{run}"):
            marker.unlink(missing_ok=True)
