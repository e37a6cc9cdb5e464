"""Wall time of the command line as a user meets it: ``--help``, ``plugins``, the quick start.

Usage::

    python tests/benchmarks/time_cli.py [--repeats 5] [--quickstart-repeats 3]

Each command runs in a fresh process (so imports count, as they do for a user),
``repeats`` times; the median is reported. The quick start (``ccbench`` with no
arguments) runs into a fresh temporary directory each time after one warm-up run
(numba's on-disk cache and the OS file cache warm, as on a user's second run),
and is broken down from its own output: fitting (sum of the rows' ``fit_time``),
the per-job harness overhead measured in process by ``bench_harness``'s recipe,
and the rest (interpreter and library start-up, Hydra composing every job, the
end-of-sweep report). Also prints the load average, since a busy 2-core machine
inflates every figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _wall(cmd: list[str], cwd=None) -> float:
    tic = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - tic


def _median(cmd, repeats, **kw) -> tuple[float, list[float]]:
    times = [_wall(cmd, **kw) for _ in range(repeats)]
    return statistics.median(times), times


def _quickstart(repeats: int) -> dict:
    import pandas as pd

    ccbench = [sys.executable, "-m", "ccbench.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        _wall([*ccbench, f"hydra.sweep.dir={tmp}/warm"], cwd=tmp)
        walls, fits, jobs = [], [], 0
        for i in range(repeats):
            sweep = Path(tmp) / f"run{i}"
            walls.append(_wall([*ccbench, f"hydra.sweep.dir={sweep}"], cwd=tmp))
            files = sorted(sweep.rglob("results.parquet"))
            jobs = len(files)
            fits.append(float(sum(pd.read_parquet(f)["fit_time"].sum() for f in files)))
    return {"wall": statistics.median(walls), "walls": walls, "fit": statistics.median(fits), "jobs": jobs}


def _job_overhead(repeats: int = 7) -> float:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.bench_harness import RunJobOverhead

    bench = RunJobOverhead()
    bench.setup(10)
    try:
        times = []
        for _ in range(repeats):
            tic = time.perf_counter()
            bench.time_run_job(10)
            times.append(time.perf_counter() - tic)
    finally:
        bench.teardown(10)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quickstart-repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"load average: {os.getloadavg()}")
    ccbench = [sys.executable, "-m", "ccbench.cli"]
    for name, cmd in (("python -c pass", [sys.executable, "-c", "pass"]),
                      ("ccbench --help", [*ccbench, "--help"]),
                      ("ccbench plugins", [*ccbench, "plugins"])):
        med, times = _median(cmd, args.repeats)
        print(f"{name:<18} median {med:6.2f} s   ({', '.join(f'{t:.2f}' for t in times)})")
    q = _quickstart(args.quickstart_repeats)
    per_job = _job_overhead()
    harness = per_job * q["jobs"]
    print(f"quick start        median {q['wall']:6.2f} s   ({', '.join(f'{t:.2f}' for t in q['walls'])})")
    print(f"  fitting (sum of fit_time)        {q['fit']:6.2f} s")
    print(f"  harness per job x {q['jobs']:>2} jobs       {harness:6.2f} s  ({per_job * 1000:.0f} ms per 10-trial job)")
    print(f"  start-up, Hydra, report (rest)   {q['wall'] - q['fit'] - harness:6.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
