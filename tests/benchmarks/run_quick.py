"""CI smoke run of the asv suite: every benchmark once, any error fails.

Usage (from anywhere)::

    python tests/benchmarks/run_quick.py [--store] [extra asv run arguments, e.g. --bench KMeans]

``--store`` keeps the results, for a first dashboard in minutes
(``python tests/benchmarks/publish.py`` next): instead of ``--quick --dry-run``, asv takes one
sample per benchmark (``-a rounds=1 -a repeat=1 -a number=1 -a warmup_time=0``, which asv
stores, where it never stores a ``--quick`` run) and records it for the current commit
(``--set-commit-hash``: the working tree must be that commit). The numbers are single samples
on the smoke grids: a first picture, not measurements; ``asv run --python=same
--set-commit-hash ...`` later adds the full grids beside them.

Steps:

1. ``asv machine --yes`` writes the machine description non-interactively
   (``~/.asv-machine.json``), which ``asv run`` needs.
2. ``asv run --python=same --quick --show-stderr --dry-run`` in the current environment,
   with ``CCBENCH_BENCH_QUICK=1`` so the ``heavy`` parameter combinations (large ``n``)
   are skipped and ``CCBENCH_BENCH_SMOKE=1`` so every class declares a tiny parameter
   grid (``common.smoke_or``; the run proves each benchmark runs, in under 5 minutes on
   the loaded 2-core CI machine, instead of 23.5 with the full grids), and ``--launch-method forkserver`` so the library is imported once
   instead of once per benchmark (see ``common.preload``); ``--dry-run`` because a smoke
   run's single samples are not measurements worth keeping.
3. Exit non-zero when asv's exit status is non-zero (asv 0.6 returns 2 when a benchmark
   fails) *or* its output reports a failed / timed-out benchmark or a discovery error
   (belt and braces: the exit status of older asv versions did not say so).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: A benchmark's status line ("[ 40.00%] ··· bench_x.Cls.time_fit   failed") or a cell
#: of its parameter table, and the markers asv prints for errors outside benchmarks.
FAILED_LINE = re.compile(r"···\s+(\S+)\s+(failed|timeout)\s*$")
FAILED_CELL = re.compile(r"^\s.*\s(failed|timeout)\s*$")
ERROR_MARKERS = ("asv: benchmark failed", "Traceback (most recent call last)")


def failures(output: str) -> list[str]:
    """Lines of asv's output that report a failed benchmark or an error."""
    found = []
    for line in output.splitlines():
        if FAILED_LINE.search(line) or FAILED_CELL.match(line):
            found.append(line.strip())
        elif any(marker in line for marker in ERROR_MARKERS):
            found.append(line.strip())
    return found


#: ``--store``: one sample per benchmark, which asv keeps (it never keeps a ``--quick`` run).
ONE_SAMPLE = ["-a", "rounds=1", "-a", "repeat=1", "-a", "number=1", "-a", "warmup_time=0"]


def main(argv: list[str]) -> int:
    store = "--store" in argv
    argv = [a for a in argv if a != "--store"]
    env = dict(os.environ, CCBENCH_BENCH_QUICK="1", CCBENCH_BENCH_SMOKE="1")
    subprocess.run(
        [sys.executable, "-m", "asv", "machine", "--yes"],
        cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL,
    )
    if store:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, capture_output=True,
                              text=True).stdout.strip()
        mode = [*ONE_SAMPLE, "--set-commit-hash", head]
    else:
        mode = ["--quick", "--dry-run"]
    cmd = [
        sys.executable, "-m", "asv", "run", "--python=same", *mode, "--show-stderr",
        "--launch-method", "forkserver", "--durations", "10", *argv,
    ]
    print("+", " ".join(cmd[1:]), flush=True)
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines = []
    for line in proc.stdout:
        sys.stdout.write(line)
        lines.append(line)
    status = proc.wait()
    bad = failures("".join(lines))
    if status != 0 or bad:
        print(f"\nasv quick run FAILED (exit status {status}); reported problems:", file=sys.stderr)
        for line in bad or ["(no failure line found; see asv's output above)"]:
            print("  " + line, file=sys.stderr)
        return status or 1
    print("\nasv quick run: every benchmark ran without error", flush=True)
    if store:
        print("results stored for this commit; `python tests/benchmarks/publish.py` writes the dashboard", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
