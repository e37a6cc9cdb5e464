"""Kill a sweep at random points (SIGKILL of its whole process group), resume it, and check
that the result equals an uninterrupted run: exactly ``n_trials`` rows per cell, identical metrics.

    python tests/scripts/kill_resume.py [--kills 6] [--seed 0] [--workdir DIR]
                                        [--datasets iris,wine] [--methods kmeans,scssap,cop_kmeans]

The sweep uses Hydra's joblib launcher with 2 workers (``hydra/launcher=local``), so kills
land in the launcher, in a worker between two trials, in a Parquet write, or in a trial's
``trial_timeout`` worker. Each kill time is drawn between the moment the uninterrupted run's first
job started (its ``cell.json`` written) and that run's end, never during start-up alone. Prints one line per kill and a summary; exit status 1 on any mismatch.
``tests/test_reliability.py`` runs it with two kills on a smaller grid (one data set, two methods:
4 cells of 6 trials; the default grid is 12 cells).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

N_TRIALS = 6
DATASETS, METHODS = "iris,wine", "kmeans,scssap,cop_kmeans"
METRICS = ["ari", "nmi", "modified_rand", "n_clusters_found"]
CMD = [sys.executable, "-c", "import sys; from ccbench.running.cli import main; sys.exit(main())"]


def _rows(sweep: Path) -> pd.DataFrame:
    from ccbench.running.results import read_results

    frames = [read_results(f) for f in sorted(sweep.rglob("results.parquet"))]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def grid(datasets: str = DATASETS, methods: str = METHODS) -> list[str]:
    """The sweep's arguments: each data set x method at 0 and 40 pairs, :data:`N_TRIALS` trials a cell."""
    return ["-m", "hydra/launcher=local", "hydra.launcher.n_jobs=2", f"dataset={datasets}", f"method={methods}",
            "constraints.n_constraints=0,40", f"n_trials={N_TRIALS}", "metrics=[ari,nmi,modified_rand]"]


def _run(sweep: Path, args: list[str], extra=(), kill_after: float | None = None) -> int | None:
    """Run the sweep; with ``kill_after``, SIGKILL its process group then (None if it finished first)."""
    proc = subprocess.Popen([*CMD, *args, f"hydra.sweep.dir={sweep}", *extra], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    if kill_after is None:
        return proc.wait()
    try:
        return proc.wait(timeout=kill_after)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


def _reference(sweep: Path, args: list[str]) -> tuple[int, float, float]:
    """Run the sweep uninterrupted: (exit status, seconds until its first job wrote its ``cell.json``, seconds)."""
    tic = time.perf_counter()
    proc = subprocess.Popen([*CMD, *args, f"hydra.sweep.dir={sweep}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    first_job = None
    while True:
        try:
            code = proc.wait(timeout=0.1)
            break
        except subprocess.TimeoutExpired:
            if first_job is None and next(sweep.glob("*/cell.json"), None) is not None:
                first_job = time.perf_counter() - tic
    total = time.perf_counter() - tic
    return code, total if first_job is None else first_job, total


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--datasets", default=DATASETS, help="comma-separated (default: %(default)s)")
    parser.add_argument("--methods", default=METHODS, help="comma-separated (default: %(default)s)")
    args = parser.parse_args(argv)
    sweep_args = grid(args.datasets, args.methods)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="ccbench-kill-"))
    rng = np.random.default_rng(args.seed)

    code, first_job, reference_time = _reference(work / "reference", sweep_args)
    assert code == 0, "the uninterrupted sweep failed"
    print(f"uninterrupted sweep: {reference_time:.1f} s (first job after {first_job:.1f} s), "
          f"{len(_rows(work / 'reference'))} rows")

    killed = work / "killed"
    for i in range(args.kills):
        extra = ["trial_timeout=120"] if i % 2 else []  # every other run fits in a trial_timeout worker
        # between the first job's start and the end: a kill during start-up alone tests nothing (on a small grid
        # or a loaded machine most of the run is start-up; a kill drawn over the whole run often landed there)
        after = float(rng.uniform(first_job, max(first_job + 0.5, reference_time)))
        code = _run(killed, sweep_args, extra, kill_after=after)
        rows = _rows(killed)
        print(f"kill {i + 1}: after {after:.1f} s{' (finished first)' if code is not None else ''}; "
              f"{len(rows)} rows on disk")
    assert _run(killed, sweep_args) == 0, "the resumed sweep failed"

    ref, got = _rows(work / "reference"), _rows(killed)
    per_cell = got.groupby("config_hash").size()
    key = ["config_hash", "trial"]
    merged = ref[key + METRICS].merge(got[key + METRICS], on=key, how="outer", suffixes=("", "_resumed"))
    diffs = {m: float(np.nanmax(np.abs(merged[m].astype(float) - merged[f"{m}_resumed"].astype(float))))
             for m in METRICS}
    ok = (per_cell == N_TRIALS).all() and len(per_cell) == ref["config_hash"].nunique() and len(got) == len(ref) \
        and not merged.isna().any().any() and all(d == 0 for d in diffs.values())
    print(f"cells {len(per_cell)} (reference {ref['config_hash'].nunique()}), rows per cell "
          f"{per_cell.min()}..{per_cell.max()}, rows {len(got)} (reference {len(ref)}), "
          f"max |difference| {diffs}")
    print("IDENTICAL to the uninterrupted run" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
