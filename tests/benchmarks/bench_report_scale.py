"""Gathering at scale: ``ccbench report`` over a synthetic sweep of one results file per job.

The sweep is written once per asv run by ``setup_cache`` with ccbench's own writer
(``synthetic_results.py``: the leaderboard's cell shape, 10 trials a job). ``time_gather`` reads
every file (:func:`ccbench.running.results.gather`: checksums verified, one frame);
``time_report`` is the whole ``ccbench report DIR --metric ari`` (gather, labels, summary tables,
plots, HTML); ``peakmem_report`` its peak memory. Divide by ``n_jobs x 10`` for the cost per row
(docs/harness.md, "Gathering at scale", states the measured sizes, up to 1M rows).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .common import smoke_or
from .synthetic_results import generate

ROWS_PER_JOB = 10


class ReportScale:
    param_names = ["n_jobs"]
    params = (smoke_or([200, 2000], [20]),)
    timeout = 1800
    number = 1
    repeat = 1

    def setup_cache(self):
        root = Path(tempfile.mkdtemp(prefix="ccbench-report-scale-"))
        for n_jobs in self.params[0]:
            generate(root / str(n_jobs), n_jobs, ROWS_PER_JOB, processes=1)
        return str(root)

    setup_cache.timeout = 1800

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
