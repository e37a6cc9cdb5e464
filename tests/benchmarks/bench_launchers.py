"""The joblib launcher's own cost beside the basic launcher's: the same cheap jobs, whole commands.

``ccbench method=kmeans dataset=iris constraints=random_pairs constraints.n_constraints=0..N-1 n_trials=1``
(N = 30; 4 in the CI smoke run), once with Hydra's basic launcher (the jobs one after another in the
command's process) and once with ``hydra/launcher=local`` (ccbench's joblib launcher, ``n_jobs=2``), each
into a fresh sweep directory in a fresh process. ``track_joblib_over_basic_cpu`` is the ratio of their CPU
seconds (user + system of the command and every process it waited for): what running the same jobs in
parallel workers costs on top. Issue 54 (item 11) measured 3.1-3.3x when each worker and each worker's
trial worker was an interpreter importing the harness; with the workers forked from one fork server that
imported it (hydra_plugins/ccbench_sweeper/joblib_launcher.py) what is left is that server's imports and
the per-job hand-over. A busy machine stretches both commands alike: quote the ratio.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import SMOKE

#: cheap jobs per command (k-means on iris, one trial each)
N_JOBS = 4 if SMOKE else 30
_COMMAND = [sys.executable, "-m", "ccbench.running.cli", "method=kmeans", "dataset=iris", "constraints=random_pairs",
            f"constraints.n_constraints=range(0,{N_JOBS})", "n_trials=1"]
_JOBLIB = ["hydra/launcher=local", "hydra.launcher.n_jobs=2"]


def _cpu_of(sweep: Path, *extra: str) -> float:
    """CPU seconds (user + system) of one command into ``sweep`` and the processes it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([*_COMMAND, *extra, f"hydra.sweep.dir={sweep}"], cwd=sweep.parent, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


class LauncherCost:
    """The same cheap jobs with the joblib launcher and with the basic one, each command in a fresh process."""

    number = 1
    repeat = 3
    warmup_time = 0
    timeout = 1800

    def setup_cache(self):
        root = Path(tempfile.mkdtemp(prefix="ccbench-launchers-"))
        _cpu_of(root / "warm-basic")  # numba's on-disk cache, the OS file cache
        _cpu_of(root / "warm-joblib", *_JOBLIB)
        return str(root)

    def setup(self, root):
        self.root = Path(tempfile.mkdtemp(prefix="run-", dir=root))
        self.count = 0

    def _next(self) -> Path:
        self.count += 1
        return self.root / f"sweep{self.count}"

    def track_joblib_cpu(self, root):
        """CPU seconds of the command with ``hydra/launcher=local`` (n_jobs=2)."""
        return _cpu_of(self._next(), *_JOBLIB)

    def track_basic_cpu(self, root):
        """CPU seconds of the command with Hydra's basic launcher."""
        return _cpu_of(self._next())

    def track_joblib_over_basic_cpu(self, root):
        """joblib's CPU seconds over the basic launcher's, measured back to back."""
        return _cpu_of(self._next(), *_JOBLIB) / _cpu_of(self._next())

    track_joblib_cpu.unit = track_basic_cpu.unit = "s"
    track_joblib_over_basic_cpu.unit = "ratio"
