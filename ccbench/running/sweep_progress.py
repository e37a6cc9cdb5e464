"""A sweep's progress markers, shared by the progress callback (:mod:`ccbench.running.app`) and the
SLURM launcher's detached report job, which removes them in the callback's place (one module both
import: the launcher importing the app closed an import cycle)."""

from __future__ import annotations

import os
from pathlib import Path

TOTAL_FILE = ".ccbench_jobs"
DONE_FILE = ".ccbench_done"
#: The job directories a run finished, one line each (:func:`note_job`): a run that writes no report of
#: the folder (``write_report=false``, a block of ``sweeps/run_blocks.py``) counts and summarises its own
#: cells, not every row of a shared sweep directory (its exit status is then its own).
RAN_FILE = ".ccbench_ran"
# The run a job belongs to (set by on_multirun_start, inherited by launcher workers): two grids run
# into one sweep directory count their own jobs, not each other's ("jobs done 11/4").
RUN_ENV = "CCBENCH_SWEEP_RUN"


def forget_progress(sweep: Path, run: str | None = None) -> None:
    """Remove run ``run``'s markers (default: this process's run, from :data:`RUN_ENV`)."""
    run = run or os.environ.get(RUN_ENV)
    if run:
        for name in (TOTAL_FILE, DONE_FILE, RAN_FILE):
            (Path(sweep) / f"{name}.{run}").unlink(missing_ok=True)


def note_job(sweep: Path, run: str, job_dir) -> None:
    """Append ``job_dir`` (relative to ``sweep`` where it lies inside) to run ``run``'s list: one ``O_APPEND``
    write of one line, whole from any process or node, as the done count's."""
    job, sweep = Path(job_dir), Path(sweep)
    line = (str(job.relative_to(sweep)) if job.is_relative_to(sweep) else str(job)) + "\n"
    fd = os.open(sweep / f"{RAN_FILE}.{run}", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def jobs_of_run(sweep: Path, run: str | None) -> list[Path] | None:
    """The job directories run ``run`` finished (:func:`note_job`), or None where it kept no list."""
    path = Path(sweep) / f"{RAN_FILE}.{run}"
    if not run or not path.exists():
        return None
    return [Path(sweep) / line for line in dict.fromkeys(path.read_text().splitlines()) if line]
