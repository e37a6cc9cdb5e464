"""How far a sweep folder under ``sweeps/`` is: cells complete, trials by status, core-hours of its trials.

    python sweeps/progress.py sweeps/leaderboard_budget6x [--config conf/experiment/leaderboard_budget6x.yaml]

A cell is complete when it has a row for each of its ``n_trials`` trials (a cell stopped by its first
timeout, ``timeout_stops_cell``, writes the rest as timeouts). The number of cells the experiment holds
is the sum over its header's blocks of the product of each block's comma lists.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from run_blocks import blocks


def planned_cells(config: Path) -> int:
    total = 0
    for args in blocks(config):
        total += math.prod(len(a.split("=", 1)[1].split(",")) for a in args
                           if a.split("=", 1)[0] in ("method", "dataset", "supervision"))
    return total


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--config", type=Path, help="default: conf/experiment/<folder name>.yaml")
    opts = parser.parse_args(argv)
    from ccbench.running.results import gather

    config = opts.config or Path("conf/experiment") / f"{opts.folder.name}.yaml"
    try:
        rows = gather(opts.folder)
    except FileNotFoundError as exc:
        raise SystemExit(f"progress: {exc}") from None
    per_cell = rows.groupby("config_hash").agg(trials=("trial", "nunique"), wanted=("n_trials", "max"))
    complete = int((per_cell.trials >= per_cell.wanted).sum())
    planned = planned_cells(config) if config.exists() else float("nan")
    print(f"{opts.folder}: {complete} of {planned} cells complete ({len(per_cell)} started), "
          f"{len(rows)} trial rows, {rows.trial_cpu_time.sum() / 3600:.2f} core-hours of trials")
    print("  " + ", ".join(f"{s} {n}" for s, n in rows.status.value_counts().items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
