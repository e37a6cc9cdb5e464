"""How far a sweep folder under ``sweeps/`` is: cells complete, trials by status, core-hours of its trials.

    python sweeps/progress.py sweeps/leaderboard_budget6x [--config conf/experiment/leaderboard_budget6x.yaml]

A cell is complete when it has a row for each of its ``n_trials`` trials (a cell stopped by its first
timeout, ``timeout_stops_cell``, writes the rest as timeouts). The number of cells the experiment holds
is the sum over its header's blocks of the product of each block's comma lists (every swept key: method,
dataset, supervision, seed, method.name, constraints.strategy, noise.rate, ...), a key a block does not give
taking the experiment's own sweeper list (composed by Hydra, data-set suites expanded).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from run_blocks import blocks


SWEEP_KEYS = ("method", "dataset", "supervision", "seed")


def _experiment_lists(name: str) -> dict[str, list[str]]:
    """The sweeper lists of ``conf/experiment/<name>.yaml`` as Hydra composes them ({} when it is no
    experiment of the project: a config written elsewhere gives every list in its blocks)."""
    from hydra import compose, initialize_config_module
    from hydra.errors import HydraException

    from ccbench.running import app  # noqa: F401 - registers the schema and the sweeper

    try:
        with initialize_config_module("ccbench_conf", version_base="1.3"):
            params = compose("config", overrides=[f"experiment={name}"], return_hydra_config=True).hydra.sweeper.params
    except HydraException:
        return {}
    return {str(k): str(v).split(",") for k, v in params.items()}  # every swept key (method.name, noise.rate, ...)


def _count(key: str, values: list[str]) -> int:
    if key != "dataset":
        return len(values)
    from ccbench.datasets import suites

    named = suites()
    return len(dict.fromkeys(m for v in values for m in named.get(v.strip(), (v.strip(),))))


def planned_cells(config: Path) -> int:
    total, own = 0, {}
    for args in blocks(config):
        given = {a.split("=", 1)[0]: a.split("=", 1)[1].split(",") for a in args if "=" in a}
        experiment = given.get("experiment", [config.stem])[0]  # a block may be another of the family
        if experiment not in own:
            own[experiment] = _experiment_lists(experiment)
        lists = {**own[experiment], **{k: v for k, v in given.items() if k in SWEEP_KEYS or k in own[experiment]}}
        total += math.prod(_count(k, v) for k, v in lists.items())
    return total


def _cpu_seconds(rows):
    """Each row's CPU: ``trial_cpu_time`` (a trial run in the worker), else an active curve's
    ``curve_cpu_time`` (run in the job's process without ``trial_timeout``), else 0."""
    import pandas as pd

    cpu = pd.Series(0.0, index=rows.index)
    for column in ("curve_cpu_time", "trial_cpu_time"):  # the worker's measure wins where both exist
        if column in rows:
            cpu = rows[column].astype(float).where(rows[column].notna(), cpu)
    return cpu


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
          f"{len(rows)} trial rows, {_cpu_seconds(rows).sum() / 3600:.2f} core-hours of trials")
    print("  " + ", ".join(f"{s} {n}" for s, n in rows.status.value_counts().items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
