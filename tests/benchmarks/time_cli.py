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
end-of-sweep report). The rest is then split by one instrumented quick start
(the same command, with the phases' wall-clock marks taken by wrapping the app's
callback and ``run_job``). Also prints the load average, since a busy 2-core
machine inflates every figure.
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

    ccbench = [sys.executable, "-m", "ccbench.running.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        _wall([*ccbench, f"hydra.sweep.dir={tmp}/warm"], cwd=tmp)
        walls, fits, jobs = [], [], 0
        for i in range(repeats):
            sweep = Path(tmp) / f"run{i}"
            walls.append(_wall([*ccbench, f"hydra.sweep.dir={sweep}"], cwd=tmp))
            files = sorted(sweep.rglob("results.parquet"))
            jobs = len(files)
            fits.append(float(sum(pd.read_parquet(f)["fit_time"].sum() for f in files)))
        marks = _timeline(Path(tmp) / "timeline")
    return {"wall": statistics.median(walls), "walls": walls, "fit": statistics.median(fits), "jobs": jobs,
            "marks": marks}


_TIMELINE = """
import json, os, sys, time
start = float(os.environ["CCBENCH_T0"])
marks = {}
import ccbench.running.cli, ccbench.running.app as app, ccbench.running.harness as harness
marks["imports"] = time.time() - start
run_job, begin, end = harness.run_job, app.SweepSummaryCallback.on_multirun_start, app.SweepSummaryCallback.on_multirun_end
def timed_run_job(*a, **k):
    marks.setdefault("first_job", time.time() - start)
    return run_job(*a, **k)
def timed_begin(self, *a, **k):
    marks["sweep_start"] = time.time() - start
    return begin(self, *a, **k)
def timed_end(self, *a, **k):
    marks["report_start"] = time.time() - start
    try:
        return end(self, *a, **k)
    finally:
        marks["report_end"] = time.time() - start
harness.run_job, app.SweepSummaryCallback.on_multirun_start, app.SweepSummaryCallback.on_multirun_end = timed_run_job, timed_begin, timed_end
code = ccbench.running.cli.main(sys.argv[1:])
sys.stderr.write("CCBENCH_MARKS " + json.dumps(marks) + "\\n")
sys.exit(code)
"""


def _timeline(sweep: Path) -> dict:
    """Phase marks (s since the process was started) of one quick start, and its exit."""
    import json

    t0 = time.time()
    proc = subprocess.run([sys.executable, "-c", _TIMELINE, f"hydra.sweep.dir={sweep}"], cwd=sweep.parent,
                          env={**os.environ, "CCBENCH_T0": repr(t0)}, capture_output=True, text=True, check=True)
    marks = json.loads(proc.stderr.rsplit("CCBENCH_MARKS ", 1)[1].splitlines()[0])
    marks["exit"] = time.time() - t0
    return marks


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
    ccbench = [sys.executable, "-m", "ccbench.running.cli"]
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
    m = q["marks"]
    print(f"one instrumented quick start, {m['exit']:.2f} s:")
    for label, a, b in (("interpreter and imports", None, "imports"),
                        ("Hydra: compose the sweep, validate every job", "imports", "first_job"),
                        ("jobs (fitting, harness, Hydra per job)", "first_job", "report_start"),
                        ("end-of-sweep summary and report", "report_start", "report_end"),
                        ("exit", "report_end", "exit")):
        print(f"  {label:<46} {m[b] - (m[a] if a else 0.0):6.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
