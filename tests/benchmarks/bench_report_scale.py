"""Gathering at scale: ``ccbench report`` over a synthetic sweep of one results file per job.

The sweep is written once per asv run by ``setup_cache`` with ccbench's own writer
(``synthetic_results.py``: the leaderboard's cell shape, 10 trials a job). ``time_gather`` reads
every file (:func:`ccbench.running.results.gather`: checksums verified, one frame);
``time_report`` is the whole ``ccbench report DIR --metric ari`` (gather, labels, summary tables,
plots, HTML); ``peakmem_report`` its peak memory. Divide by ``n_jobs x 10`` for the cost per row
(docs/harness.md, "Gathering at scale", states the measured sizes, up to 1M rows).

The 100,000-job size (1M rows) is opt-in: writing it takes about an hour of one core and 5 GB
of disk, too much for every asv run. Generate it once, then point asv at its parent folder:

    python tests/benchmarks/synthetic_results.py DIR/100000 --jobs 100000
    CCBENCH_REPORT_SCALE_DIR=DIR asv run --python=same --bench ReportScale

With ``CCBENCH_REPORT_SCALE_DIR`` set, the sizes are those of its ``<n_jobs>`` subfolders plus
200 and 2,000, and ``setup_cache`` writes only the missing ones (into that folder, kept).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from .common import smoke_or
from .synthetic_results import generate

ROWS_PER_JOB = 10
#: a folder of pre-generated sweeps, one ``<n_jobs>`` subfolder each (see the module docstring)
SWEEPS = os.environ.get("CCBENCH_REPORT_SCALE_DIR")


def _sizes() -> list[int]:
    given = sorted(int(p.name) for p in Path(SWEEPS).iterdir() if p.name.isdigit()) if SWEEPS else []
    return sorted({200, 2000, *given})


class ReportScale:
    param_names = ["n_jobs"]
    params = (smoke_or(_sizes(), [20]),)
    timeout = 3600
    number = 1
    repeat = 1
    rounds = 1  # at 100,000 jobs one report is minutes: no second round,
    warmup_time = 0  # and no untimed warm-up call (asv made one: two reports per measurement)

    def setup_cache(self):
        root = Path(SWEEPS) if SWEEPS else Path(tempfile.mkdtemp(prefix="ccbench-report-scale-"))
        for n_jobs in self.params[0]:
            if not (root / str(n_jobs)).is_dir():
                generate(root / str(n_jobs), n_jobs, ROWS_PER_JOB, processes=1)
        return str(root)

    setup_cache.timeout = 4 * 3600

    def setup(self, root, n_jobs):
        self.sweep = Path(root) / str(n_jobs)
        self.out = Path(tempfile.mkdtemp(prefix="ccbench-report-out-"))

    def teardown(self, root, n_jobs):
        shutil.rmtree(self.out, ignore_errors=True)

    def time_gather(self, root, n_jobs):
        from ccbench.running.results import gather

        gather(self.sweep)

    def time_report(self, root, n_jobs):
        from ccbench.running.cli import main

        main(["report", str(self.sweep), "--metric", "ari", "--out", str(self.out)])

    def peakmem_report(self, root, n_jobs):
        from ccbench.running.cli import main

        main(["report", str(self.sweep), "--metric", "ari", "--out", str(self.out)])
