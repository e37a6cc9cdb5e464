"""What start-up work the quick start and a SLURM task do not do (issue 54, items 9 and 10).

Counted, never timed: the times are in ``tests/benchmarks/bench_quickstart.py``,
``tests/benchmarks/bench_task.py`` and ``tests/benchmarks/task_startup.py``.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from types import SimpleNamespace

import cloudpickle
import pytest
from omegaconf import OmegaConf, open_dict

from hydra_plugins.ccbench_sweeper.ccbench_sweeper import ComposeOnceLoader, PackedTask, _PackingLauncher
from hydra_plugins.ccbench_sweeper.slurm_launcher import CCBenchSlurmLauncher


class _CountingLoader:
    """Hydra's config loader as far as a task uses it: each ``load_sweep_config`` is a composition
    (counted); the config says which cell it is."""

    def __init__(self, sweep_dir: str):
        self.sweep_dir = sweep_dir
        self.calls = 0

    def load_sweep_config(self, master, overrides):
        self.calls += 1
        values = dict(o.split("=", 1) for o in overrides)
        return OmegaConf.create({
            "method": {"name": values["method"]},
            "hydra": {"sweep": {"dir": self.sweep_dir, "subdir": values["method"]}, "job": {"id": None, "num": None},
                      "output_subdir": None, "job_logging": None, "hydra_logging": None, "verbose": False,
                      "callbacks": None, "runtime": {"output_dir": None}, "overrides": {"task": list(overrides)}}})


class _Executor:
    """submitit's executor as the launcher uses it: the tasks' arguments are kept, nothing runs."""

    def __init__(self):
        self.tasks = []

    def update_parameters(self, **kwargs):
        pass

    def map_array(self, fn, *columns):
        self.tasks += [(fn, args) for args in zip(*columns)]
        return [SimpleNamespace(job_id=f"7_{i}") for i in range(len(columns[0]))]


class _Recorder:
    """The task function: appends the name of each cell's method to a file (tasks run unpickled)."""

    def __init__(self, path):
        self.path = path

    def __call__(self, cfg):
        with open(self.path, "a") as f:
            f.write(cfg.method.name + "\n")


def _collect_nothing(self, submitted, log):
    return [], []  # the launcher waits for no task


class _NoCallbacks:
    def on_job_start(self, **kwargs):
        pass

    def on_job_end(self, **kwargs):
        pass


@pytest.fixture
def submitted(tmp_path, monkeypatch):
    """A packed grid of three cells in two tasks submitted by the SLURM launcher to a stand-in
    executor: ``(tasks as submitit pickles them, the loader, the cells run)``."""
    from ccbench.running import slurm, slurm_limits

    executor = _Executor()
    monkeypatch.setattr("submitit.AutoExecutor", lambda **kwargs: executor)
    for module, name in ((slurm, "request_problems"), (slurm, "array_problems"), (slurm_limits, "limit_problems")):
        monkeypatch.setattr(module, name, lambda *a, **k: [])
    counting = _CountingLoader(str(tmp_path))
    loader = ComposeOnceLoader(counting)
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}})
    from hydra.types import HydraContext

    ran = tmp_path / "ran.txt"
    context = HydraContext(config_loader=loader, callbacks=_NoCallbacks())
    task = PackedTask(_Recorder(str(ran)), context, config)
    launcher = CCBenchSlurmLauncher(submitit_folder=str(tmp_path / ".submitit"), mem_gb=4)
    launcher.setup(hydra_context=context, task_function=task, config=config)
    monkeypatch.setattr(CCBenchSlurmLauncher, "_collect", _collect_nothing)
    cells = [["method=kmeans"], ["method=pck_means"], ["method=ap"]]
    _PackingLauncher(launcher, task, cells_per_task=2, max_tasks=None).launch(cells, initial_job_idx=0)
    return [cloudpickle.dumps(t) for t in executor.tasks], counting, ran  # as submitit pickles a task


def _run_as_a_task(blob, monkeypatch):
    """Unpickle a task as submitit does in the SLURM task and run it (Hydra's ``run_job`` stubbed to
    call the task function with the config it is given, as it does)."""
    import hydra.core.utils
    import hydra_plugins.hydra_submitit_launcher.submitit_launcher as base

    def run_job(hydra_context, task_function, config, job_dir_key, job_subdir_key, **kwargs):
        task_function(config)
        return SimpleNamespace(status=SimpleNamespace(name="COMPLETED"))

    monkeypatch.setattr(base, "run_job", run_job)
    monkeypatch.setattr(hydra.core.utils, "run_job", run_job)
    monkeypatch.setattr("hydra.core.hydra_config.HydraConfig.get",
                        lambda: SimpleNamespace(job=SimpleNamespace(num=args[2], id="7_0")))
    monkeypatch.setenv("SUBMITIT_EXECUTOR", "slurm")
    monkeypatch.setenv("SLURM_JOB_ID", "8")
    fn, args = pickle.loads(blob)
    fn(*args)
    return fn


def test_a_slurm_task_runs_the_configs_it_was_shipped_and_composes_none(submitted, monkeypatch):
    """Each task (the launcher pickled with its arguments) composes none of its cells: the configs
    composed by the submitting process travel in its pickle (a task composed each cell again,
    0.35 s of Hydra per method, because the compose-once cache does not travel)."""
    blobs, _, ran = submitted
    assert len(blobs) == 2  # three cells, two to a task
    for blob in blobs:
        fn, _ = pickle.loads(blob)
        before = fn.hydra_context.config_loader._loader.calls
        fn = _run_as_a_task(blob, monkeypatch)
        assert fn.hydra_context.config_loader._loader.calls == before  # no composition in the task
    assert ran.read_text().split() == ["kmeans", "pck_means", "ap"]  # every cell once, with its own config


def test_a_task_pickled_without_configs_still_composes_its_cells(submitted, monkeypatch):
    """The fallback (a task pickled before configs were shipped, or a loader without the cache):
    the cells are composed in the task as before."""
    blobs, _, ran = submitted
    fn, args = pickle.loads(blobs[0])
    before = fn.hydra_context.config_loader._loader.calls
    fn = _run_as_a_task(cloudpickle.dumps((fn, args[:5])), monkeypatch)
    assert fn.hydra_context.config_loader._loader.calls == before + 2  # its own cell and the packed one
    assert ran.read_text().split() == ["kmeans", "pck_means"]


def test_the_quick_start_fits_each_unsupervised_method_once_per_trial(tmp_path):
    """The quick start shares an unsupervised fit across its constraint budgets
    (``share_unsupervised_fits``): k-means at 0 and 30 constraints, two trials, is fitted twice, not
    four times (AP and k-means were fitted once per budget: 30 of the 120 fits were needed)."""
    from hydra import compose, initialize_config_module

    from ccbench.running.cli import with_default_experiment
    from ccbench.running.harness import run_job

    fitted = []
    for n in (0, 30):
        with initialize_config_module("ccbench_conf", version_base="1.3"):
            cfg = compose("config", overrides=with_default_experiment(
                ["n_trials=2"]) + ["method=kmeans", f"constraints.n_constraints={n}"])
        rows = run_job(cfg, tmp_path / f"n{n}")
        assert list(rows["status"]) == ["ok", "ok"]
        # a row whose labels its own fit made (every row, when nothing is shared)
        fitted += [not r for r in rows["fit_reused"]] if "fit_reused" in rows else [True] * len(rows)
    assert sum(fitted) == 2  # one fit per trial, re-scored under each budget


def test_the_code_hash_of_a_method_looks_up_no_module_of_another_package(monkeypatch):
    """Hashing AP's implementation (every job does, in the process that runs it: a SLURM task's
    process fits nothing) looks up only its own package's modules: finding ``numba.core`` by name, as
    it did for every module AP imports, imported numba into a task that never fits there."""
    from ccbench.running import provenance

    ap = SimpleNamespace(estimator=type("AP", (), {"__module__": "ccbench_plugins.affinity.ap"}), uses=())
    looked_up = []
    find_spec = provenance.importlib.util.find_spec

    def recording(name, *args):
        looked_up.append(name)
        return find_spec(name, *args)

    monkeypatch.setattr(provenance, "_graphs", {})  # no cached walk
    monkeypatch.setattr(provenance.importlib.util, "find_spec", recording)
    code = provenance.method_code(ap)  # as the harness's cell_method_code calls it for AP's spec
    assert "ccbench_plugins.affinity.ap" in code["code.method_files"]
    assert looked_up and {name.split(".")[0] for name in looked_up} == {"ccbench_plugins"}, sorted(set(looked_up))
