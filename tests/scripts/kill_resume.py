"""Kill a sweep at random points (SIGKILL of its whole process group), resume it, and check
that the result equals an uninterrupted run: exactly ``n_trials`` rows per cell, identical metrics.

    python tests/scripts/kill_resume.py [--kills 6] [--seed 0] [--workdir DIR]

The sweep uses Hydra's joblib launcher with 2 workers (``hydra/launcher=local``), so kills
land in the launcher, in a worker between two trials, in a Parquet write, or in a trial's
``trial_timeout`` worker. Prints one line per kill and a summary; exit status 1 on any mismatch.
``tests/test_reliability.py`` runs it with a few kills (marked slow).
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

GRID = ["-m", "hydra/launcher=local", "hydra.launcher.n_jobs=2", "dataset=iris,wine",
        "method=kmeans,scssap,cop_kmeans", "constraints.n_constraints=0,40", "n_trials=6",
        "metrics=[ari,nmi,modified_rand]"]
METRICS = ["ari", "nmi", "modified_rand", "n_clusters_found"]
CMD = [sys.executable, "-c", "import sys; from ccbench.running.cli import main; sys.exit(main())"]


def _rows(sweep: Path) -> pd.DataFrame:
    from ccbench.running.results import read_results

    frames = [read_results(f) for f in sorted(sweep.rglob("results.parquet"))]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _run(sweep: Path, extra=(), kill_after: float | None = None) -> int | None:
    """Run the sweep; with ``kill_after``, SIGKILL its process group then (None if it finished first)."""
    proc = subprocess.Popen([*CMD, *GRID, f"hydra.sweep.dir={sweep}", *extra], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    if kill_after is None:
        return proc.wait()
    try:
        return proc.wait(timeout=kill_after)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args(argv)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="ccbench-kill-"))
    rng = np.random.default_rng(args.seed)

    tic = time.perf_counter()
    assert _run(work / "reference") == 0, "the uninterrupted sweep failed"
    reference_time = time.perf_counter() - tic
    print(f"uninterrupted sweep: {reference_time:.1f} s, {len(_rows(work / 'reference'))} rows")

    killed = work / "killed"
    for i in range(args.kills):
        extra = ["trial_timeout=120"] if i % 2 else []  # every other run fits in a trial_timeout worker
        after = float(rng.uniform(0.5, max(1.0, reference_time)))
        code = _run(killed, extra, kill_after=after)
        rows = _rows(killed)
        print(f"kill {i + 1}: after {after:.1f} s{' (finished first)' if code is not None else ''}; "
              f"{len(rows)} rows on disk")
    assert _run(killed) == 0, "the resumed sweep failed"

    ref, got = _rows(work / "reference"), _rows(killed)
    per_cell = got.groupby("config_hash").size()
    key = ["config_hash", "trial"]
    merged = ref[key + METRICS].merge(got[key + METRICS], on=key, how="outer", suffixes=("", "_resumed"))
    diffs = {m: float(np.nanmax(np.abs(merged[m].astype(float) - merged[f"{m}_resumed"].astype(float))))
             for m in METRICS}
    ok = (per_cell == 6).all() and len(per_cell) == ref["config_hash"].nunique() and len(got) == len(ref) \
        and not merged.isna().any().any() and all(d == 0 for d in diffs.values())
    print(f"cells {len(per_cell)} (reference {ref['config_hash'].nunique()}), rows per cell "
          f"{per_cell.min()}..{per_cell.max()}, rows {len(got)} (reference {len(ref)}), "
          f"max |difference| {diffs}")
    print("IDENTICAL to the uninterrupted run" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
