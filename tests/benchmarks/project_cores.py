"""The leaderboard's wall time on many cores, projected from a sweep's measured per-cell times.

    python tests/benchmarks/project_cores.py SWEEP_DIR_OR_SHIPPED_FOLDER [--cores 100 1000] [--max-tasks 1000]
        [--task-fixed TASK_FIXED_S] [--cell-fixed CELL_FIXED_S] [--array-parallelism P] [--experiment leaderboard]

An extrapolation, not a measurement: each cell's time is the sum of its trials' measured
``trial_wall_time`` (``fit_time`` plus ``tune_time`` in rows from before it was recorded; on the machine that ran the sweep, one core per job) plus ``--cell-fixed``
seconds of harness work per cell; the cells are packed as ``hydra.sweeper.max_tasks`` packs them
(consecutive cells of the experiment's grid, ``ceil(n / max_tasks)`` to a task); each task costs
``--task-fixed`` seconds before its first cell (SLURM's start-up and the task's own: see
:data:`TASK_FIXED_S` and :data:`CELL_FIXED_S` for what was measured); tasks start in index order as
a core frees up, at most ``--array-parallelism`` at once (SLURM's ``%P`` of the array: with
``hydra.launcher.array_parallelism=100`` a thousand cores run 100 tasks at a time; by default as
many as the cores). Prints, per core count, the projected wall
time with packing and with one cell per task (batches of ``max_tasks`` one after another, since
one array cannot hold more), and the lower bounds (total work / the cores running tasks; the longest task).
Cells of the grid without rows (a sweep still running) are listed and left out, or, with
``--extrapolate``, predicted (a second extrapolation, reported apart): per (supervision, method),
a power law ``t = a n^b`` in the data set's size fitted to the measured cells (``b`` in [0, 3];
with fewer than two measured sizes, the largest measured time), and capped as the budget caps a
cell (``--trial-timeout`` seconds per trial, ``--n-trials`` trials; a per-trial prediction past the
limit costs one killed trial: the cell stops at its first timeout).

``--board``: the reference board (issue 51), whose cells are its six experiments' (``board.yaml``'s family, as
``sweeps/run_blocks.py`` runs them) over base seeds: a cell is (experiment, seed, data set, supervision, method),
the grid each experiment's composed sweeper lists with ``board_all`` expanded, in that order.
"""

from __future__ import annotations

import argparse
import heapq
import math
from pathlib import Path

import pyarrow.parquet as pq
import yaml

GRID_KEYS = ("dataset", "supervision", "method")
#: a reference-board cell (``--board``): its experiment and base seed as well
BOARD_KEYS = ("experiment", "seed", "dataset", "supervision", "method")

#: Seconds a task costs before its first cell: SLURM's own start-up (scheduling, the step daemon, the
#: job's environment: about 24 s on the loaded one-node test cluster, docs/harness.md) plus the task's
#: CPU to its first trial, measured by ``tests/benchmarks/task_startup.py`` on a packed leaderboard
#: task (unpickling, imports, the ``trial_timeout`` worker's start; its cells' configs shipped, not
#: composed): see docs/harness.md, "Several cells per task", for the figures and the load.
TASK_FIXED_S = 30.0
#: Seconds of harness work a cell costs beside its trials' ``trial_wall_time`` (Hydra's job, the
#: results store, scoring in the task's process), measured by the same script's ``--full`` run.
CELL_FIXED_S = 0.4


def _grid(experiment: str) -> list[tuple[str, ...]]:
    conf = Path(__file__).resolve().parents[2] / "conf" / "experiment" / f"{experiment}.yaml"
    params = yaml.safe_load(conf.read_text())["hydra"]["sweeper"]["params"]
    lists = [str(params[k]).split(",") for k in GRID_KEYS]
    return [(d, s, m) for d in lists[0] for s in lists[1] for m in lists[2]]


def board_grid(config: str = "board") -> list[tuple[str, ...]]:
    """The reference board's cells (:data:`BOARD_KEYS`): every experiment of ``config``'s family in its header's
    order, each over its composed sweeper lists (seed, data set with suites expanded, supervision, method)."""
    import sys

    sweeps = Path(__file__).resolve().parents[2] / "sweeps"
    sys.path.insert(0, str(sweeps))
    try:
        import progress
        import run_blocks
    finally:
        sys.path.remove(str(sweeps))
    from ccbench.datasets import suites

    named = suites()
    conf = Path(__file__).resolve().parents[2] / "conf" / "experiment" / f"{config}.yaml"
    grid = []
    for experiment in dict.fromkeys(b[0].split("=", 1)[1] for b in run_blocks.blocks(conf)):
        lists = progress._experiment_lists(experiment)
        datasets = list(dict.fromkeys(m for d in lists["dataset"] for m in named.get(d, (d,))))
        grid += [(experiment, seed, d, s, m) for seed in lists.get("seed", ["0"]) for d in datasets
                 for s in lists["supervision"] for m in lists["method"]]
    return grid


def _shipped_cell_times(folder: Path, experiment: str, grid_keys=GRID_KEYS, family=None) -> dict[tuple[str, ...], float]:
    """The same from a shipped folder's rows (``ccbench report ... --leaderboard`` ships each row's job
    directory name as ``source``), so the table can be re-made from the published rows."""
    from ccbench.reporting.shipped import job_path, read_shipped

    rows = read_shipped(folder)
    times = {}
    for source, frame in rows.groupby(rows["source"].map(lambda s: Path(job_path(s)).name)):
        keys = dict(part.split("=", 1) for part in source.split(",") if "=" in part)
        if keys.get("experiment", experiment) in (family or {experiment}):
            times[tuple(keys.get(k) for k in grid_keys)] = float(frame["trial_wall_time"].fillna(0.0).sum())
    return times


def _cell_times(sweep: Path, experiment: str, grid_keys=GRID_KEYS, family=None) -> dict[tuple[str, ...], float]:
    """Each cell's summed trial seconds; ``family``: the experiments read (default: ``experiment`` alone)."""
    family = {experiment} if family is None else set(family)
    if (sweep / "manifest.jsonl").is_file():
        return _shipped_cell_times(sweep, experiment, grid_keys, family)
    times = {}
    for results in sweep.glob("*/results.parquet"):
        if results.is_symlink() or results.parent.is_symlink():
            continue
        keys = dict(part.split("=", 1) for part in results.parent.name.split(",") if "=" in part)
        if keys.get("experiment", experiment) not in family:
            continue
        names = pq.read_schema(results).names
        # trial_wall_time where recorded; rows written before it was: the fit (and tuning) time, except a
        # reused shared fit's (its fit_time is the fit another cell paid for)
        columns = [c for c in (("trial_wall_time",) if "trial_wall_time" in names else ("fit_time", "tune_time"))
                   if c in names]
        frame = pq.read_table(results, columns=columns + (["fit_reused"] if "fit_reused" in names else [])).to_pandas()
        if "fit_reused" in frame and "trial_wall_time" not in frame:
            frame = frame[~frame["fit_reused"].fillna(False).astype(bool)]
        times[tuple(keys.get(k) for k in grid_keys)] = float(frame[columns].fillna(0.0).to_numpy().sum())
    return times


def extrapolate(measured: dict, grid: list, sizes: dict, n_trials: int, trial_timeout: float) -> dict:
    """Predicted seconds of the grid's unmeasured cells (see the module docstring)."""
    import numpy as np

    by_key: dict = {}
    for (d, s, m), t in measured.items():
        by_key.setdefault((s, m), []).append((sizes[d], t))
    predicted = {}
    for cell in grid:
        if cell in measured:
            continue
        d, s, m = cell
        points = [(n, t) for n, t in by_key.get((s, m), []) if t > 0]
        if len({n for n, _ in points}) >= 2:
            logn, logt = np.log([n for n, _ in points]), np.log([t for _, t in points])
            b, a = np.polyfit(logn, logt, 1)
            b = min(max(b, 0.0), 3.0)
            a = float(np.mean(logt - b * logn))
            t = float(np.exp(a + b * np.log(sizes[d])))
        else:
            t = max((t for _, t in points), default=0.0)
        per_trial = t / n_trials
        predicted[cell] = trial_timeout if per_trial > trial_timeout else min(t, n_trials * trial_timeout)
    return predicted


def _sizes(names) -> dict:
    from ccbench import registry

    return {name: registry.get_dataset_spec(name).n_samples for name in names}


def makespan(task_times: list[float], cores: int) -> float:
    """Wall time of tasks started in index order, each on the first of ``cores`` slots to free up."""
    free = [0.0] * min(cores, len(task_times))
    for t in task_times:
        heapq.heapreplace(free, free[0] + t)
    return max(free)


def project(cells: list[float | None], cores: int, max_tasks: int, task_fixed: float, cell_fixed: float,
            array_parallelism: int | None = None) -> dict:
    """``cells``: the grid's cells in sweep order, each its measured seconds, or None (not measured:
    it keeps its place in the packing and costs nothing). ``array_parallelism``: at most that many
    tasks run at once whatever the cores (``None``: as many as the cores); ``slots`` is the lesser."""
    slots = cores if array_parallelism is None else max(1, min(cores, int(array_parallelism)))
    per_task = max(1, math.ceil(len(cells) / max_tasks))
    packed = [task_fixed + sum(c + cell_fixed for c in cells[i:i + per_task] if c is not None)
              for i in range(0, len(cells), per_task)]
    single = [task_fixed + cell_fixed + c for c in cells if c is not None]
    batches = [single[i:i + max_tasks] for i in range(0, len(single), max_tasks)]
    return {"cores": cores, "slots": slots, "tasks": len(packed), "cells_per_task": per_task,
            "packed_s": makespan(packed, slots), "unpacked_s": sum(makespan(b, slots) for b in batches),
            "bound_work_s": sum(packed) / slots, "bound_longest_s": max(packed)}


def _hms(seconds: float) -> str:
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min" if seconds >= 3600 else f"{seconds / 60:.1f} min"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sweep", type=Path)
    parser.add_argument("--cores", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--max-tasks", type=int, default=1000)
    parser.add_argument("--task-fixed", type=float, default=TASK_FIXED_S)
    parser.add_argument("--cell-fixed", type=float, default=CELL_FIXED_S)
    parser.add_argument("--array-parallelism", type=int, default=None,
                        help="hydra.launcher.array_parallelism: tasks at once (default: as many as the cores)")
    parser.add_argument("--experiment", default="leaderboard")
    parser.add_argument("--extrapolate", action="store_true", help="predict the unmeasured cells")
    parser.add_argument("--n-trials", type=int, default=10)
    parser.add_argument("--trial-timeout", type=float, default=10.0)
    parser.add_argument("--board", action="store_true", help="the reference board: board.yaml's six experiments "
                                                             "over base seeds (module docstring)")
    args = parser.parse_args(argv)
    if args.board and args.extrapolate:
        parser.error("--board measures only: its budget is per size class, which --extrapolate does not model")
    grid = board_grid() if args.board else _grid(args.experiment)
    keys = BOARD_KEYS if args.board else GRID_KEYS
    family = {cell[0] for cell in grid} if args.board else None
    try:
        measured = _cell_times(args.sweep, args.experiment, keys, family)
    except (OSError, ValueError) as exc:  # a shipped folder that is damaged or not one: its message says which
        parser.error(str(exc))
    missing = [cell for cell in grid if cell not in measured]
    predicted = {}
    if args.extrapolate and missing:
        predicted = extrapolate(measured, grid, _sizes({d for d, _, _ in grid}), args.n_trials, args.trial_timeout)
        print(f"EXTRAPOLATED, not measured: {len(predicted):,} cells, {sum(predicted.values()) / 3600:.2f} core-hours "
              f"(power law in n per supervision and method, capped at {args.n_trials} x {args.trial_timeout:g} s)")
    cells = [measured.get(cell, predicted.get(cell)) for cell in grid]
    times = [measured[cell] for cell in grid if cell in measured]
    if not times:
        raise SystemExit(f"no rows of experiment={'board (its family)' if args.board else args.experiment} in {args.sweep}")
    print(f"{len(times):,} of {len(grid):,} cells measured; their trials took {sum(times) / 3600:.2f} core-hours "
          f"(longest cell {max(times):.0f} s). AN EXTRAPOLATION: task fixed cost {args.task_fixed:g} s, "
          f"{args.cell_fixed:g} s per cell, cells packed {args.max_tasks} tasks at most.")
    if missing and not predicted:
        at = keys.index("dataset")
        order = list(dict.fromkeys(cell[at] for cell in grid))
        sets = sorted({cell[at] for cell in missing}, key=order.index)
        print(f"not measured ({len(missing):,} cells, left out): data sets {', '.join(sets)}")
    print("| cores | tasks (cells each) | packed | one cell per task | bound: work / cores | bound: longest task |")
    print("|---|---|---|---|---|---|")
    for cores in args.cores:
        p = project(cells, cores, args.max_tasks, args.task_fixed, args.cell_fixed, args.array_parallelism)
        if p["slots"] < cores:
            print(f"(array_parallelism={p['slots']:,}: {p['slots']:,} of the {cores:,} cores run tasks; set "
                  f"hydra.launcher.array_parallelism={cores} to use them all)")
        print(f"| {cores:,} | {p['tasks']:,} ({p['cells_per_task']}) | {_hms(p['packed_s'])} | {_hms(p['unpacked_s'])} "
              f"| {_hms(p['bound_work_s'])} | {_hms(p['bound_longest_s'])} |")


if __name__ == "__main__":
    main()
