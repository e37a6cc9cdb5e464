"""Scale-out without a cluster (issue 40): packed cells give the same rows as one cell per job,
packs bound the number of launcher jobs, progress costs the same at job 4,000 as at job 1.
(The SLURM side, on a real cluster: tests/slurm/.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
from omegaconf import OmegaConf

from ccbench.running.results import MEASURED_COLUMNS, read_results
from hydra_plugins.ccbench_sweeper.ccbench_sweeper import PackedTask, _PackingLauncher

GRID = ["method=kmeans,pck_means", "n_trials=2", "constraints.n_constraints=10,20,40"]


def _ccbench(args, cwd):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-m", "ccbench.running.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _rows(sweep: Path) -> pd.DataFrame:
    rows = pd.concat([read_results(f) for f in sorted(sweep.rglob("results.parquet"))], ignore_index=True)
    return (rows.drop(columns=[c for c in MEASURED_COLUMNS if c in rows])
            .sort_values(["config_hash", "trial"]).reset_index(drop=True))


def test_packed_cells_give_the_rows_of_one_cell_per_job(tmp_path):
    _ccbench([*GRID, f"hydra.sweep.dir={tmp_path / 'one'}"], tmp_path)
    packed = _ccbench([*GRID, "hydra.sweeper.cells_per_task=4", f"hydra.sweep.dir={tmp_path / 'packed'}"], tmp_path)
    assert "jobs done 6/6" in packed.stderr  # every cell is a job of its own for callbacks and progress
    packs = json.loads((tmp_path / "packed" / ".ccbench_packs.json").read_text())
    assert [len(v) for v in packs.values()] == [3, 1]  # 6 cells in 2 launcher jobs
    one, two = _rows(tmp_path / "one"), _rows(tmp_path / "packed")
    assert len(one) == 12
    pd.testing.assert_frame_equal(one, two)
    dirs = sorted(p.parent.name for p in (tmp_path / "packed").rglob("results.parquet"))
    assert dirs == sorted(p.parent.name for p in (tmp_path / "one").rglob("results.parquet"))


class _FakeLauncher:
    def __init__(self):
        self.launched = []

    def launch(self, job_overrides, initial_job_idx):
        self.launched.append((list(job_overrides), initial_job_idx))
        return list(range(len(job_overrides)))


def test_max_tasks_bounds_the_launcher_jobs_and_every_cell_runs_once(tmp_path):
    """The leaderboard's 4,752 cells in at most 1,000 SLURM array tasks."""
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}})
    task = PackedTask(lambda cfg: None, SimpleNamespace(config_loader=None), config)
    fake = _FakeLauncher()
    launcher = _PackingLauncher(fake, task, cells_per_task=1, max_tasks=1000)
    cells = [[f"cell={i}"] for i in range(4752)]
    launcher.launch(cells, initial_job_idx=0)
    (firsts, start), = fake.launched
    assert len(firsts) <= 1000 and start == 0
    fresh = PackedTask(lambda cfg: None, None, config)  # as a task reads it, from the sweep directory
    ran = [c for num, first in enumerate(firsts) for c in [first, *fresh.pack_of(num)]]
    assert ran == cells


def test_progress_is_counted_without_walking_the_sweep(tmp_path, monkeypatch, capsys):
    from ccbench.running.app import SweepSummaryCallback

    sweep = tmp_path / "sweep"
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(sweep)}, "sweeper": {"params": {"method": "a,b,c"}},
                                         "overrides": {"task": []}, "runtime": {"output_dir": str(sweep / "x")}}})
    callback = SweepSummaryCallback()
    callback.on_multirun_start(config)

    def no_walking(*args, **kwargs):
        raise AssertionError("progress walked the sweep directory")

    monkeypatch.setattr(Path, "rglob", no_walking)
    monkeypatch.setattr(Path, "glob", no_walking)
    for _ in range(3):
        callback.on_job_end(config, None)
    err = capsys.readouterr().err
    assert "jobs done 1/3" in err and "jobs done 3/3" in err
    callback.on_multirun_start(config)  # a resume counts from zero again
    callback.on_job_end(config, None)
    assert "jobs done 1/3" in capsys.readouterr().err
