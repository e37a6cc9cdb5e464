"""The README's quick start as a user meets it: ``ccbench`` with no argument, in a fresh process.

AP, SCSSAP and k-means on iris over 0/30/60/120 random constraints, 10 trials each (12 jobs),
then the end-of-sweep table and report; the README promises it in under 7 s on an idle core once
numba's on-disk cache is warm. ``time_quickstart`` is its wall time (imports, Hydra composing the
sweep, the jobs, the report); ``track_quickstart_cpu`` the CPU seconds of the command and every
process it waited for, which a busy shared machine stretches far less than the wall time
(quote both, with the load average: ``tests/benchmarks/time_cli.py`` also breaks the wall time
into phases). ``track_quickstart_main_cpu`` is the CPU of the sweep's own process alone: the
end-of-sweep report is drawn by a process forked when the sweep starts
(:mod:`ccbench.reporting.background`), which runs beside the jobs on a second core, so on an idle
machine with two cores the wall time is about this figure plus the report's last second, while the
total CPU counts both. Each sample runs into a fresh sweep directory; ``setup_cache`` runs it once
first, so numba's cache and the OS file cache are warm, as on a user's second run.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
from pathlib import Path

_COMMAND = [sys.executable, "-m", "ccbench.running.cli"]
# the same command, which then prints the CPU seconds of its own process (its children left out)
_SELF_CPU = ("import resource, runpy, sys\n"
             "try:\n    runpy.run_module('ccbench.running.cli', run_name='__main__', alter_sys=True)\n"
             "finally:\n    u = resource.getrusage(resource.RUSAGE_SELF)\n"
             "    sys.__stderr__.write(f'\\nself-cpu {u.ru_utime + u.ru_stime}\\n')\n")


def _run(sweep: Path) -> None:
    subprocess.run([*_COMMAND, f"hydra.sweep.dir={sweep}"], cwd=sweep.parent, check=True, capture_output=True)


class QuickStart:
    """``ccbench`` (the quick start) into a fresh sweep directory, in a fresh process."""

    number = 1
    repeat = 5
    warmup_time = 0
    timeout = 600

    def setup_cache(self):
        root = Path(tempfile.mkdtemp(prefix="ccbench-quickstart-"))
        _run(root / "warm")  # numba's on-disk cache, the OS file cache
        return str(root)

    def setup(self, root):
        self.root = Path(tempfile.mkdtemp(prefix="run-", dir=root))
        self.count = 0

    def _next(self) -> Path:
        self.count += 1
        return self.root / f"sweep{self.count}"

    def time_quickstart(self, root):
        _run(self._next())

    def track_quickstart_cpu(self, root):
        """CPU seconds (user + system) of one quick start and the processes it waited for."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        _run(self._next())
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    track_quickstart_cpu.unit = "s"

    def track_quickstart_main_cpu(self, root):
        """CPU seconds (user + system) of the sweep's own process, its children (the report's) left out."""
        sweep = self._next()
        done = subprocess.run([sys.executable, "-c", _SELF_CPU, f"hydra.sweep.dir={sweep}"], cwd=sweep.parent,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the quick start failed (exit {done.returncode}): {done.stderr[-2000:]}")
        return float(done.stderr.rsplit("self-cpu ", 1)[1].split()[0])

    track_quickstart_main_cpu.unit = "s"
