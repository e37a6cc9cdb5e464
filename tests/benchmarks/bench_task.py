"""The fixed cost of a SLURM array task before its first trial, outside SLURM itself.

Each array task is a fresh interpreter (``python -m submitit.core._submit``) that imports
submitit, Hydra, ccbench's launcher and harness (numpy, scipy, scikit-learn, pandas, pyarrow,
numba) and every registered plugin, then composes its cell. ``time_task_imports`` times that in
a fresh process (its wall time; the process is one core's work); with
``hydra.sweeper.cells_per_task`` it is paid once per task, not once per cell. SLURM's own
start-up (scheduling, the step daemon, the prolog) comes on top: docs/harness.md, "Several
cells per task", gives both, measured on the test cluster.
"""

from __future__ import annotations

import subprocess
import sys

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
