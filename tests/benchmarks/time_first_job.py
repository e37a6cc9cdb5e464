"""Time from ``ccbench experiment=leaderboard`` to its first job: wall, and the main process's CPU.

    python tests/benchmarks/time_first_job.py /tmp/lb-start [more overrides...]

Starts the sweep into the given (new) directory, waits for the first job's ``.hydra`` directory,
reads the main process's CPU time from ``/proc/PID/stat`` (Linux), then stops the sweep (its
process group). On a shared machine the wall time is the sweep's share of a core; the CPU time is
what an idle core would take. docs/harness.md quotes it.
"""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time


def main(argv: list[str]) -> None:
    sweep, extra = argv[0], argv[1:]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    start = time.time()
    proc = subprocess.Popen([sys.executable, "-m", "ccbench.running.cli", "experiment=leaderboard",
                             f"hydra.sweep.dir={sweep}", *extra], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    tick = os.sysconf("SC_CLK_TCK")
    cpu = float("nan")
    try:
        while proc.poll() is None and time.time() - start < 1800:
            fields = open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / tick
            if glob.glob(f"{glob.escape(sweep)}/*/.hydra"):
                break
            time.sleep(0.25)
        print(f"first job after {time.time() - start:.1f} s wall, {cpu:.1f} s CPU in the main process")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


if __name__ == "__main__":
    main(sys.argv[1:])
