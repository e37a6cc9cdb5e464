"""The many-cores projection (issue 40, item 3; tests/benchmarks/project_cores.py): hand-sized known
answers for the array's schedule and the packing, and a sweep directory read as the sweeper packs it."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/benchmarks as a package

from benchmarks.project_cores import BOARD_KEYS, _cell_times, _grid, board_grid, extrapolate, makespan, project  # noqa: E402


def test_tasks_start_in_index_order_on_the_first_free_core():
    assert makespan([5, 1, 1, 1, 1], cores=2) == 5  # the long task first: the others share core two
    assert makespan([1, 1, 1, 1, 5], cores=2) == 7  # the long task last starts at 2
    assert makespan([3, 3, 3], cores=10) == 3
    assert makespan([3, 3, 3], cores=1) == 9


def test_cells_are_packed_consecutively_with_the_fixed_costs():
    cells = [10.0, 10.0, 10.0, 10.0, None]  # the last cell not measured: its place kept, no cost
    p = project(cells, cores=1, max_tasks=2, task_fixed=28, cell_fixed=1)
    assert (p["tasks"], p["cells_per_task"]) == (2, 3)
    assert p["packed_s"] == (28 + 33) + (28 + 11)
    assert p["unpacked_s"] == 4 * (28 + 11)  # two batches of two tasks, one after another
    assert p["bound_longest_s"] == 61
    two = project(cells, cores=2, max_tasks=2, task_fixed=28, cell_fixed=1)
    assert two["packed_s"] == 61 and two["unpacked_s"] == 2 * 39
    assert two["bound_work_s"] == pytest.approx(100 / 2)


def test_a_sweep_dir_gives_each_cell_its_trials_time(tmp_path):
    grid = _grid("leaderboard")
    assert len(grid) > 1001 and grid[0] == ("soybean_small", "pairs_low", "ap_k")
    job = tmp_path / "dataset=zoo,experiment=leaderboard,method=kmeans,supervision=labels"
    job.mkdir()
    pd.DataFrame({"trial_wall_time": [1.5, 2.0, None]}).to_parquet(job / "results.parquet")
    old = tmp_path / "dataset=zoo,experiment=leaderboard,method=ap_k,supervision=labels"
    old.mkdir()  # written before trial_wall_time was recorded
    pd.DataFrame({"fit_time": [1.0, 1.0, 7.0], "tune_time": [0.5, None, None],
                  "fit_reused": [False, False, True]}).to_parquet(old / "results.parquet")  # 7 s: paid elsewhere
    other = tmp_path / "dataset=zoo,experiment=leaderboard_k_free,method=ap,supervision=labels"
    other.mkdir()
    pd.DataFrame({"trial_wall_time": [9.0]}).to_parquet(other / "results.parquet")
    times = _cell_times(tmp_path, "leaderboard")
    assert times == {("zoo", "labels", "kmeans"): 3.5, ("zoo", "labels", "ap_k"): 2.5}


def test_unmeasured_cells_follow_a_power_law_in_n_capped_by_the_budget():
    sizes = {"a": 100, "b": 200, "c": 300, "d": 400}
    grid = [(d, "labels", m) for d in sizes for m in ("km", "ap")]
    measured = {("a", "labels", "km"): 10.0, ("b", "labels", "km"): 40.0,  # t = 1e-3 n^2
                ("a", "labels", "ap"): 5.0}  # one size: its time, whatever n
    out = extrapolate(measured, grid, sizes, n_trials=10, trial_timeout=10.0)
    assert set(out) == set(grid) - set(measured)
    assert out[("c", "labels", "km")] == pytest.approx(90.0)  # 9 s a trial: under the limit
    assert out[("d", "labels", "km")] == 10.0  # 16 s a trial: the first is killed, the cell stops
    assert out[("b", "labels", "ap")] == out[("d", "labels", "ap")] == 5.0


def test_a_shipped_folder_gives_the_same_cell_times_as_its_sweep_dir(tmp_path):
    """The table can be re-made from the published rows: each row ships its job directory's name."""
    from ccbench.reporting.shipped import write_shipped

    sweep = tmp_path / "sweep"
    frames = []
    for name, times in (("dataset=zoo,experiment=leaderboard,method=kmeans,supervision=labels", [1.5, 2.0]),
                        ("dataset=zoo,experiment=leaderboard,method=ap_k,supervision=labels", [2.5, None]),
                        ("dataset=zoo,experiment=leaderboard_k_free,method=ap,supervision=labels", [9.0, 1.0])):
        job = sweep / name
        job.mkdir(parents=True)
        rows = pd.DataFrame({"config_hash": name[-20:], "trial": [0, 1], "status": "ok", "trial_wall_time": times})
        rows.to_parquet(job / "results.parquet")
        frames.append(rows.assign(source=str(job)))
    write_shipped(pd.concat(frames, ignore_index=True), tmp_path / "shipped", dirs=[sweep])
    assert _cell_times(tmp_path / "shipped", "leaderboard") == _cell_times(sweep, "leaderboard") == {
        ("zoo", "labels", "kmeans"): 3.5, ("zoo", "labels", "ap_k"): 2.5}


def test_the_board_s_cells_are_its_six_experiments_over_seeds_and_its_sweep_dir_reads_them(tmp_path):
    grid = board_grid()
    assert len(grid) == 75208 and len(set(grid)) == len(grid)  # board.yaml's family, as progress.py counts it
    assert {cell[0] for cell in grid} == {"board", "board_noise", "board_noise_large", "board_pccc", "board_k_free",
                                          "board_k_free_cvcp"}
    assert grid[0][:2] == ("board", "0") and ("board", "2", "keel_letter", "pairs_p40", "pccc") in grid
    # two seeds of one cell are two cells; an experiment outside the family is not read
    for seed, wall in (("0", [1.0, 2.0]), ("1", [4.0])):
        job = tmp_path / f"dataset=iris_uci,experiment=board,method=kmeans,seed={seed},supervision=labels_1"
        job.mkdir()
        pd.DataFrame({"trial_wall_time": wall}).to_parquet(job / "results.parquet")
    other = tmp_path / "dataset=iris_uci,experiment=leaderboard,method=kmeans,seed=0,supervision=labels"
    other.mkdir()
    pd.DataFrame({"trial_wall_time": [9.0]}).to_parquet(other / "results.parquet")
    times = _cell_times(tmp_path, "board", BOARD_KEYS, {cell[0] for cell in grid})
    assert times == {("board", "0", "iris_uci", "labels_1", "kmeans"): 3.0,
                     ("board", "1", "iris_uci", "labels_1", "kmeans"): 4.0}
    assert set(times) <= set(grid)
