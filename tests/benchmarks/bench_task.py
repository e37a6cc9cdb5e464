"""The fixed cost of a SLURM array task before its first trial, outside SLURM itself.

Each array task is a fresh interpreter (``python -m submitit.core._submit``) that imports
submitit, Hydra, ccbench's launcher and harness (numpy, scipy, scikit-learn, pandas, pyarrow,
numba) and every registered plugin, then composes its cell. ``time_task_imports`` times that in
a fresh process (its wall time; the process is one core's work); with
``hydra.sweeper.cells_per_task`` it is paid once per task, not once per cell. SLURM's own
start-up (scheduling, the step daemon, the prolog) comes on top: docs/harness.md, "Several
cells per task", gives both, measured on the test cluster.

``LeaderboardTask.track_task_startup_cpu`` is the whole of it for a real task: a packed leaderboard
task pickled by the SLURM launcher (to a stand-in ``sbatch``), run in a fresh interpreter as a node
runs it, stopped at its first trial: the CPU seconds of the task and of its ``trial_timeout`` worker
(``tests/benchmarks/task_startup.py``). The worker is forked from the task once its imports are done
(``ccbench.isolation.fork_is_safe``), so its share is about 0; a spawned worker (a thread the fork
check cannot place) imports the stack again, 2-3 s more.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

#: what a task imports before its first trial: submitit's entry point, the launcher (which
#: unpickles into Hydra and the ccbench sweeper), the harness and every plugin's methods
_TASK_IMPORTS = """
import submitit.core._submit
import hydra_plugins.ccbench_sweeper.slurm_launcher
import ccbench.running.app
from ccbench.running.harness import run_job
from ccbench import registry
registry.list_methods()
"""


class TaskStartup:
    """A fresh interpreter doing what an array task does before its first trial."""

    number = 1
    repeat = 5
    warmup_time = 0
    timeout = 300

    def setup(self):
        self.time_task_imports()  # the OS file cache and numba's on-disk cache warm, as on a cluster node

    def time_task_imports(self):
        subprocess.run([sys.executable, "-c", _TASK_IMPORTS], check=True, capture_output=True)


class LeaderboardTask:
    """A packed leaderboard task's CPU to its first trial (``task_startup.py``): its process and its
    ``trial_timeout`` worker, each sample a fresh interpreter. The task (7 cells of soybean_small at
    ``supervision=pairs_mid``) is made once by the real launcher."""

    number = 1
    repeat = 5
    warmup_time = 0
    timeout = 900

    def setup_cache(self):
        from .common import SMOKE
        from .task_startup import make_task, run_task

        # the CI smoke run proves it runs: two cells to submit, not seven
        folder, job_id = make_task(Path(tempfile.mkdtemp(prefix="ccbench-task-")), cells=2 if SMOKE else 7)
        run_task(folder, job_id)  # the OS file cache and numba's cache warm
        return str(folder), job_id

    def track_task_startup_cpu(self, task):
        from .task_startup import run_task

        folder, job_id = task
        first = next(e for e in run_task(Path(folder), job_id) if e["event"] == "first_trial")
        return first["main_cpu"] + first["worker_cpu"]

    track_task_startup_cpu.unit = "s"
