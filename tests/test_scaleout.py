"""Scale-out without a cluster (issue 40): packed cells give the same rows as one cell per job,
packs bound the number of launcher jobs, progress costs the same at job 4,000 as at job 1.
(The SLURM side, on a real cluster: tests/slurm/.)"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
from omegaconf import OmegaConf

from ccbench.running.results import MEASURED_COLUMNS, read_results
from hydra_plugins.ccbench_sweeper.ccbench_sweeper import PackedTask, _PackingLauncher
import _proc  # on time-out, the command's whole process group is killed (issue 54)

GRID = ["method=kmeans,pck_means", "n_trials=2", "constraints.n_constraints=10,20,40"]


def _ccbench(args, cwd):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = _proc.run([sys.executable, "-m", "ccbench.running.cli", *args], cwd=cwd, env=env,
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
    packs = json.loads(next((tmp_path / "packed").glob(".ccbench_packs.*.json")).read_text())
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


def _loader_and_master(*overrides):
    import ccbench.running.app  # noqa: F401 - registers ccbench_schema
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra._internal.utils import create_config_search_path
    from hydra.types import RunMode

    loader = ConfigLoaderImpl(config_search_path=create_config_search_path("pkg://ccbench_conf"))
    master = loader.load_configuration("config", overrides=list(overrides), run_mode=RunMode.MULTIRUN)
    return loader, master


def test_fast_composition_equals_hydras_own_on_a_sample(tmp_path):
    """Composed once per set of group choices, value overrides applied after: the same config as
    Hydra composing each job (every key, the hydra node included, interpolations unresolved and
    resolved)."""
    from hydra.core.utils import setup_globals

    from hydra_plugins.ccbench_sweeper.ccbench_sweeper import ComposeOnceLoader

    setup_globals()  # Hydra's resolvers (now, ...), as a job has them
    loader, master = _loader_and_master("experiment=leaderboard_smoke", f"hydra.sweep.dir={tmp_path}",
                                        "hydra/launcher=local")
    fast = ComposeOnceLoader(loader)
    sample = [
        ["dataset=iris_uci", "supervision=pairs_mid", "method=kmeans"],
        ["dataset=iris_uci", "supervision=pairs_mid", "method=pck_means", "n_trials=3"],
        ["dataset=soybean_small", "supervision=labels", "method=scssap", "method.penalty=2.5", "seed=4"],
        ["supervision=unconstrained", "method=ap", "dataset=iris_uci", "trial_timeout=20"],
        ["dataset=wine_uci", "supervision=pairs_mid", "method=kmeans", "dataset.preprocess=minmax_1_2"],
        ["dataset=iris_uci", "supervision=pairs_mid", "method=kmeans", "constraints.n_constraints=7"],
        ["dataset=wine_uci", "supervision=labels_noisy", "method=cop_kmeans", "n_trials=3"],  # three groups changed
        ["dataset=soybean_small", "supervision=pairs_mid_cvcp", "method=scssap_ml"],
        ["dataset=glass", "supervision=pairs_mid", "method=mpck_means", "method.max_iter=7"],
    ]
    for overrides in sample:
        ours, hydras = fast.compose(master, overrides), loader.load_sweep_config(master, overrides)
        assert OmegaConf.to_container(ours) == OmegaConf.to_container(hydras), overrides
        with_hydra = {"hydra": {"runtime": {"output_dir": "x"}, "job": {"num": 0, "id": "0"}}}
        for cfg in (ours, hydras):
            from omegaconf import open_dict

            with open_dict(cfg):
                cfg.merge_with(with_hydra)
        assert OmegaConf.to_container(ours, resolve=True) == OmegaConf.to_container(hydras, resolve=True)
        assert OmegaConf.is_struct(ours) == OmegaConf.is_struct(hydras)
        for key in ("dataset", "method", "constraints", "noise"):  # open groups stay open
            assert OmegaConf.is_struct(ours[key]) == OmegaConf.is_struct(hydras[key]), key
        assert OmegaConf.get_type(ours) == OmegaConf.get_type(hydras)
    assert sum(v is not None for v in fast._options.values()) >= 3  # jobs were assembled from templates


def test_unusual_overrides_are_left_to_hydra(tmp_path):
    from hydra_plugins.ccbench_sweeper.ccbench_sweeper import ComposeOnceLoader

    loader, master = _loader_and_master(f"hydra.sweep.dir={tmp_path}")
    fast = ComposeOnceLoader(loader)
    for overrides in (["+supervision=labels"], ["~noise"], ["method=kmeans,ap"], ["hydra.job.name=x"]):
        assert fast._split(master, overrides) is None
    assert fast._split(master, ["+method.extra=1"]) is not None  # a value added: as Hydra does, after composing


_COUNT_COMPOSITIONS = """
import os
import hydra._internal.config_loader_impl as loader_impl

_compose = loader_impl.ConfigLoaderImpl.load_sweep_config


def _counted(self, *args, **kwargs):
    with open(os.environ["CCBENCH_TEST_COMPOSED"], "a") as f:
        f.write(f"{os.getpid()}\\n")
    return _compose(self, *args, **kwargs)


loader_impl.ConfigLoaderImpl.load_sweep_config = _counted
"""


def test_the_joblib_path_composes_each_job_once_in_the_main_process(tmp_path):
    """hydra/launcher=local ships each worker its job's config; Hydra's own launcher composed every
    job again in the worker (a full Hydra composition: the worker has no templates)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_COUNT_COMPOSITIONS)  # in the workers too
    log = tmp_path / "composed.txt"
    env = {**os.environ, "MPLBACKEND": "Agg", "CCBENCH_TEST_COMPOSED": str(log),
           "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    proc = _proc.run([sys.executable, "-m", "ccbench.running.cli", "hydra/launcher=local", "method=kmeans",
                           "n_trials=1", "constraints.n_constraints=10,20,40", f"hydra.sweep.dir={tmp_path / 's'}"],
                     cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    pids = log.read_text().split()
    assert len(pids) == 1, pids  # one set of group choices: one Hydra composition, in the main process
    assert len(list((tmp_path / "s").rglob("results.parquet"))) == 3
