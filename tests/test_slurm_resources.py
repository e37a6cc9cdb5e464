"""The SLURM launcher's resource classes and detached sweeps without a cluster (issue 54, item 7):
cells are packed only with cells of the same memory class, each class is its own array with its
own ``--mem``, and ``detach=true`` submits a report job after the arrays and exits at once. The
real-cluster counterpart is ``tests/slurm/test_slurm_cluster.py::test_a_detached_sweep_...``."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from omegaconf import OmegaConf

from hydra_plugins.ccbench_sweeper import slurm_launcher
from hydra_plugins.ccbench_sweeper.ccbench_sweeper import PackedTask, _PackingLauncher, pack_by_class
from hydra_plugins.ccbench_sweeper.slurm_launcher import CCBenchSlurmLauncher


def test_packs_never_mix_classes_and_keep_within_max_tasks():
    classes = ["a", "b", "a", "a", "b", "a"]
    packs = pack_by_class(classes, cells_per_task=2)
    assert packs == [[0, 2], [3, 5], [1, 4]]  # by hand: a's 0,2,3,5 in twos, then b's 1,4
    # max_tasks=2: k = ceil(6/2) = 3 gives a: 2 packs + b: 1 = 3 > 2, so k rises to 4: one pack a class
    assert pack_by_class(classes, cells_per_task=1, max_tasks=2) == [[0, 2, 3, 5], [1, 4]]
    assert pack_by_class([None] * 5, cells_per_task=2) == [[0, 1], [2, 3], [4]]  # no classes: as before


class _Launcher:
    """A launcher whose class is the cell's ``mem=`` override; it returns the leads it was given."""

    def resource_class(self, overrides):
        return next(o.split("=")[1] for o in overrides if o.startswith("mem="))

    def launch(self, job_overrides, initial_job_idx):
        return [list(o) for o in job_overrides]


def test_two_classes_never_share_a_task(tmp_path):
    cells = [[f"cell={i}", f"mem={'8' if i % 3 == 0 else '4'}"] for i in range(7)]
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}})
    task = PackedTask(lambda cfg: None, SimpleNamespace(config_loader=None), config)
    leads = _PackingLauncher(_Launcher(), task, cells_per_task=3, max_tasks=None).launch(cells, initial_job_idx=0)
    tasks = [[lead, *task.pack_of(num)] for num, lead in enumerate(leads)]
    assert sorted(c for t in tasks for c in t) == sorted(cells)  # every cell once
    for t in tasks:
        assert len({_Launcher().resource_class(c) for c in t}) == 1, t


class _Executor:
    """submitit's executor as the launcher uses it: parameters set, arrays and jobs submitted."""

    def __init__(self, **kwargs):
        self.params, self.arrays, self.submitted, self.next_id = {}, [], [], 40

    def update_parameters(self, **kwargs):
        self.params.update(kwargs)

    def map_array(self, fn, *columns):
        self.next_id += 1
        self.arrays.append((self.params.get("mem_gb"), [row[2] for row in zip(*columns)]))
        return [SimpleNamespace(job_id=f"{self.next_id}_{i}") for i in range(len(columns[0]))]

    def submit(self, fn, *args):
        self.submitted.append((dict(self.params), fn, args))
        return SimpleNamespace(job_id="99")


class _Loader:
    def load_sweep_config(self, config, overrides):
        return OmegaConf.create({"method": {"name": dict(o.split("=") for o in overrides)["method"]}})


def _launcher(tmp_path, monkeypatch, **params) -> tuple:
    from ccbench.running import slurm, slurm_limits

    executor = _Executor()
    monkeypatch.setattr("submitit.AutoExecutor", lambda **kwargs: executor)
    for module, name in ((slurm, "request_problems"), (slurm, "array_problems"), (slurm_limits, "limit_problems")):
        monkeypatch.setattr(module, name, lambda *a, **k: [])
    monkeypatch.setattr(slurm, "default_mem_gb", lambda partition=None: 4)
    launcher = CCBenchSlurmLauncher(submitit_folder=str(tmp_path / ".submitit"), mem_gb=None, **params)
    launcher.config = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}})
    launcher.hydra_context = SimpleNamespace(config_loader=_Loader())
    return launcher, executor


def test_each_memory_class_is_its_own_array_with_its_own_mem(tmp_path, monkeypatch):
    launcher, executor = _launcher(tmp_path, monkeypatch, mem_gb_by_method={"rn_sdp": 6})
    collected = []
    monkeypatch.setattr(launcher, "_collect", lambda submitted, log: (collected.extend(submitted), ([], []))[1])
    cells = [["method=rn_sdp"], ["method=kmeans"], ["method=rn_sdp"], ["method=pccc"]]
    launcher.launch(cells, initial_job_idx=10)
    assert executor.arrays == [(6, [10, 12]), (4, [11, 13])]  # job numbers kept: the pack map is by number
    # every task's job params travel with its own job (the failure report names its cells)
    assert {job.job_id: params[2] for job, params in collected} == {"41_0": 10, "41_1": 12, "42_0": 11, "42_1": 13}


def test_mem_gb_by_method_with_another_memory_request_is_refused(tmp_path, monkeypatch):
    from ccbench.running.validate import ConfigProblems

    launcher, executor = _launcher(tmp_path, monkeypatch, mem_gb_by_method={"rn_sdp": 6}, mem_per_cpu="2G")
    monkeypatch.setattr(launcher, "_collect", lambda submitted, log: ([], []))
    with pytest.raises(ConfigProblems, match="mem_gb_by_method.*mem_per_cpu"):
        launcher.launch([["method=rn_sdp"]], initial_job_idx=0)
    launcher.launch([["method=kmeans"]], initial_job_idx=0)  # no cell of a listed method: mem_per_cpu as before
    assert executor.arrays == [(None, [0])] and executor.params["slurm_mem_per_cpu"] == "2G"  # no --mem


def test_detach_submits_a_report_job_after_every_array_and_exits_0(tmp_path, monkeypatch, capsys):
    launcher, executor = _launcher(tmp_path, monkeypatch, mem_gb_by_method={"rn_sdp": 6}, detach=True)
    monkeypatch.setattr(launcher, "_collect", lambda *a: pytest.fail("a detached sweep must not wait"))
    with pytest.raises(SystemExit) as stop:
        launcher.launch([["method=kmeans"], ["method=rn_sdp"]], initial_job_idx=0)
    assert stop.value.code == 0
    (params, fn, (records, resume)), = executor.submitted
    assert params["slurm_additional_parameters"]["dependency"] == "afterany:41:42"
    assert params["mem_gb"] == 4  # the launcher's mem_gb, not the last class's (rn_sdp's 6)
    assert fn == launcher.report_after and [r[0] for r in records] == ["41_0", "42_0"]
    out = capsys.readouterr().out
    assert "squeue -j 41,42,99" in out and str(Path(tmp_path) / slurm_launcher.DETACHED_REPORT) in out


def test_detach_with_batches_is_refused_before_anything_is_submitted(tmp_path, monkeypatch):
    """A detached launch exits after submitting: with ``max_batch_size`` the second batch would never be."""
    from ccbench.running.validate import ConfigProblems

    launcher, executor = _launcher(tmp_path, monkeypatch, detach=True)
    launcher.config = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}, "sweeper": {"max_batch_size": 2}}})
    with pytest.raises(ConfigProblems, match="max_batch_size"):
        launcher.launch([["method=kmeans"]], initial_job_idx=0)
    assert executor.arrays == [] and executor.submitted == []
