"""The core projection honours ``array_parallelism`` (issue 54, item 9): SLURM runs at most that many
tasks of an array at once, so a thousand cores with ``array_parallelism=100`` are a hundred."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/benchmarks as a package

from benchmarks import project_cores  # noqa: E402
from benchmarks.project_cores import main, makespan, project  # noqa: E402


def test_array_parallelism_caps_the_tasks_running_at_once():
    cells = [10.0] * 40  # one cell per task: 40 tasks of 2 + 1 + 10 = 13 s
    free = project(cells, cores=20, max_tasks=40, task_fixed=2, cell_fixed=1)
    capped = project(cells, cores=20, max_tasks=40, task_fixed=2, cell_fixed=1, array_parallelism=4)
    assert free["packed_s"] == 26.0  # two rounds of 20
    assert capped["packed_s"] == 130.0 == makespan([13.0] * 40, 4)  # ten rounds of 4
    assert capped["bound_work_s"] == 40 * 13.0 / 4 and capped["slots"] == 4
    # a limit above the cores changes nothing
    assert project(cells, cores=20, max_tasks=40, task_fixed=2, cell_fixed=1, array_parallelism=1000) == free


def test_the_projection_says_when_array_parallelism_leaves_cores_idle(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(project_cores, "_grid", lambda experiment: [("d", "s", f"m{i}") for i in range(30)])
    monkeypatch.setattr(project_cores, "_cell_times",
                        lambda sweep, experiment, *rest: {("d", "s", f"m{i}"): 5.0 for i in range(30)})
    main([str(tmp_path), "--cores", "10", "--max-tasks", "30", "--array-parallelism", "5"])
    out = capsys.readouterr().out
    assert "hydra.launcher.array_parallelism=10" in out  # named with the value that would use every core
    # 30 tasks of TASK_FIXED_S + CELL_FIXED_S + 5 s, six rounds of 5
    per_task = project_cores.TASK_FIXED_S + project_cores.CELL_FIXED_S + 5.0
    assert f"{6 * per_task / 60:.1f} min" in out
