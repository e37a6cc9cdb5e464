"""The CPU a sweep job costs beyond its trials: start-up is paid once, the rest per job.

Runs the leaderboard's protocol (``experiment=leaderboard``: its launcher, shared fits, stored labels,
rows and per-job provenance) for one cheap method (``kmeans``) twice, on a small and a large grid of
jobs, and reads the CPU of everything the ``ccbench`` command ran (its children's accounting) and the
trials' own CPU from the rows. The difference of the two runs divided by the difference in jobs is
the CPU per job beyond its trials (composition, data loading, worker hand-off, rows, labels); what the
two share (imports, the end-of-sweep report) cancels.

    python tests/benchmarks/job_overhead.py            # about 1 minute on an idle 2-core machine

``tests/benchmarks/board_cost.py`` charges the board's jobs at this figure (``JOB_OVERHEAD_S``).
"""

from __future__ import annotations

import argparse
import glob
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

SMALL_SETS = "iris,wine,glass"
LARGE_SETS = "iris,wine,glass,ecoli,zoo,soybean_small,hepatitis,promoters,ionosphere,keel_sonar,keel_heart,balance"
SUPERVISIONS = "pairs_low,pairs_mid,labels,pairs_high"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(datasets: str, method: str) -> dict:
    ccbench = str(Path(sys.executable).with_name("ccbench"))
    with tempfile.TemporaryDirectory() as tmp:
        before, start = _children_cpu(), time.monotonic()
        subprocess.run([ccbench, "-m", "experiment=leaderboard", f"method={method}", f"dataset={datasets}",
                        f"supervision={SUPERVISIONS}", f"hydra.sweep.dir={tmp}"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cpu, wall = _children_cpu() - before, time.monotonic() - start
        rows = pd.concat([pd.read_parquet(f) for f in glob.glob(os.path.join(tmp, "*", "results.parquet"))])
    return {"jobs": rows["config_hash"].nunique(), "cpu": cpu, "wall": wall,
            "trial_cpu": float(rows["trial_cpu_time"].sum())}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", default="kmeans")
    opts = parser.parse_args(argv)
    if not os.environ.get("CCBENCH_DATA_DIR"):
        raise SystemExit("set CCBENCH_DATA_DIR to the data sets' folder (the grids read UCI and KEEL files)")
    small, large = run(SMALL_SETS, opts.method), run(LARGE_SETS, opts.method)
    for name, r in (("small", small), ("large", large)):
        print(f"{name}: {r['jobs']} jobs, {r['cpu']:.2f} s CPU ({r['trial_cpu']:.2f} s of it in trials), "
              f"{r['wall']:.1f} s wall")
    extra = large["jobs"] - small["jobs"]
    per_job = ((large["cpu"] - large["trial_cpu"]) - (small["cpu"] - small["trial_cpu"])) / extra
    fixed = small["cpu"] - small["trial_cpu"] - per_job * small["jobs"]
    print(f"per job beyond its trials: {per_job:.3f} s CPU; once per command: {fixed:.1f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
