"""The SLURM launcher's logic without a cluster (issue 54, items 1, 2, 4, 5): one pack map per grid,
the array's states read from one query, the fallback without ``sacct``, and which cells a resume
submits. The real-cluster counterpart is tests/slurm/test_slurm_cluster.py (its last two tests)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest
from omegaconf import OmegaConf

from ccbench.running import slurm
from ccbench.running.slurm import LEFT_QUEUE, array_states, is_finished, parse_task_states, wait_for_array
from hydra_plugins.ccbench_sweeper.ccbench_sweeper import PACKS_GLOB, PackedTask, _PackingLauncher


class _FakeLauncher:
    def launch(self, job_overrides, initial_job_idx):
        return list(job_overrides)


def _as_a_task_gets_it(task: PackedTask) -> PackedTask:
    """What a task unpickles (submitit pickles the launcher and its task function): the pack map
    left out, read back from the sweep directory."""
    copy = PackedTask.__new__(PackedTask)
    copy.__dict__.update(task.__getstate__())
    return copy


def test_two_packed_grids_in_one_sweep_directory_each_read_their_own_cells(tmp_path):
    """Two commands pack into one sweep directory at once; each task must run its own grid's cells
    (one shared .ccbench_packs.json let the second command's map replace the first's)."""
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}})
    grids = {"a": [["method=kmeans", f"constraints.n_constraints={n}"] for n in (10, 20, 40, 80)],
             "b": [["method=pck_means", f"constraints.n_constraints={n}"] for n in (10, 20, 40, 80)]}
    tasks, leads = {}, {}
    for name, cells in grids.items():
        tasks[name] = PackedTask(lambda cfg: None, SimpleNamespace(config_loader=None), config)
        leads[name] = _PackingLauncher(_FakeLauncher(), tasks[name], cells_per_task=2, max_tasks=None).launch(
            cells, initial_job_idx=0)
    assert len(list(tmp_path.glob(PACKS_GLOB))) == 2
    for name, cells in grids.items():
        task = _as_a_task_gets_it(tasks[name])
        ran = [c for num, lead in enumerate(leads[name]) for c in [lead, *task.pack_of(num)]]
        assert ran == cells  # every cell of its own grid once, none of the other's


def test_equal_pack_maps_share_a_name_and_a_task_without_one_refuses_to_guess(tmp_path):
    from hydra_plugins.ccbench_sweeper.ccbench_sweeper import packs_name

    assert packs_name({0: [[1, ["a=1"]]]}) == packs_name({0: [[1, ["a=1"]]]})
    assert packs_name({0: [[1, ["a=1"]]]}) != packs_name({0: [[1, ["a=2"]]]})
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}})
    for value in (1, 2):
        PackedTask(None, None, config).add({0: [[1, [f"a={value}"]]]})
    with pytest.raises(RuntimeError, match="holds 2 pack maps"):
        PackedTask(None, None, config).pack_of(0)


def test_task_states_are_read_from_each_command_s_output():
    sacct = "7_0|COMPLETED\n7_1|CANCELLED by 0\n7_1.batch|CANCELLED\n7_[2-4,6%2]|PENDING\n"
    assert parse_task_states(sacct, "sacct") == {"7_0": "COMPLETED", "7_1": "CANCELLED by 0", "7_2": "PENDING",
                                                 "7_3": "PENDING", "7_4": "PENDING", "7_6": "PENDING"}
    assert parse_task_states("7_2 RUNNING\n7_5 PENDING\n", "squeue") == {"7_2": "RUNNING", "7_5": "PENDING"}
    scontrol = ("JobId=9 ArrayJobId=7 ArrayTaskId=1 JobState=CANCELLED Reason=None\n"
                "JobId=7 ArrayJobId=7 ArrayTaskId=3-4 JobState=PENDING Reason=Priority\n")
    assert parse_task_states(scontrol, "scontrol") == {"7_1": "CANCELLED", "7_3": "PENDING", "7_4": "PENDING"}
    assert [is_finished(s) for s in ("COMPLETED", "CANCELLED by 0", "OUT_OF_MEMORY", "PENDING", "REQUEUED",
                                     "PREEMPTED", "")] == [True, True, True, False, False, False, False]


def test_the_failed_tasks_of_an_array_are_known_from_one_query_per_poll():
    """20 tasks, 5 cancelled: every poll asks SLURM once for the whole array, and the wait ends with
    all 5 named together, after the polls the running tasks needed and no wait per failed task
    (submitit's Job.results waited 15 s for each: 20 cancelled tasks took 305 s)."""
    ids = [f"7_{i}" for i in range(20)]
    cancelled = {f"7_{i}" for i in range(0, 20, 4)}
    polls, slept = [], []

    def states_of(array):
        polls.append(array)
        return {t: "CANCELLED by 0" if t in cancelled else "RUNNING" for t in ids}, None

    def has_result(t):  # the running tasks write their results after the second poll
        return t not in cancelled and len(polls) >= 2

    ended = wait_for_array(ids, has_result, states_of=states_of, sleep=slept.append, warn=pytest.fail)
    assert ended == {t: "CANCELLED by 0" for t in cancelled}
    assert polls == ["7"] * 3  # one query per poll, for the whole array
    assert slept == [1.0, 2.0]  # between the polls; nothing waited per cancelled task


def test_a_completed_task_whose_result_file_shows_late_is_waited_for_once():
    calls = []

    def has_result(t):
        calls.append(t)
        return len(calls) > 3  # a shared file system shows the file on the fourth look

    slept = []
    ended = wait_for_array(["7_0"], has_result, states_of=lambda a: ({"7_0": "COMPLETED"}, None),
                           sleep=slept.append, warn=pytest.fail, grace_s=15)
    assert ended == {} and 1 <= len(slept) <= 15


def _fake_slurm(bin_dir: Path, **scripts: str) -> None:
    bin_dir.mkdir(exist_ok=True)
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text("#!/bin/sh\n" + body + "\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_without_sacct_states_come_from_squeue_and_a_task_gone_from_the_queue_is_named(tmp_path, monkeypatch):
    """Accounting down (sacct fails): the state of the array comes from squeue and scontrol; a task
    that left the queue without a result ends the wait as not finished (submitit waited for ever,
    printing only "Bypassing sacct error"), and the reason is said once."""
    _fake_slurm(tmp_path / "bin",
                sacct='echo "sacct: error: Problem talking to the database: Connection refused" >&2; exit 1',
                squeue='echo "7_2 RUNNING"',
                scontrol='echo "JobId=8 ArrayJobId=7 ArrayTaskId=0 JobState=COMPLETED"')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    states, why = array_states("7")
    assert states == {"7_0": "COMPLETED", "7_2": "RUNNING"}
    assert "Connection refused" in why
    warned = []
    finishes = iter([False, False, True])  # 7_2 writes its result while the command waits
    ended = wait_for_array(["7_0", "7_1", "7_2"], lambda t: t == "7_0" or (t == "7_2" and next(finishes)),
                           sleep=lambda s: None, warn=warned.append)
    assert ended == {"7_1": LEFT_QUEUE}
    assert len(warned) == 1 and "squeue" in warned[0] and "Connection refused" in warned[0]


def test_when_slurm_cannot_be_asked_at_all_it_is_said_and_the_result_files_decide(tmp_path, monkeypatch):
    _fake_slurm(tmp_path / "bin", sacct="exit 1", squeue='echo "slurm_load_jobs error: Unable to contact" >&2; exit 1',
                scontrol="exit 1")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    states, why = array_states("7")
    assert states is None and "Unable to contact" in why
    looks, warned = [], []
    ended = wait_for_array(["7_0"], lambda t: looks.append(t) or len(looks) > 4, sleep=lambda s: None,
                           warn=warned.append)
    assert ended == {} and len(warned) == 1 and "Ctrl-C" in warned[0]


def test_the_failure_report_prints_the_command_that_resumes():
    text = slurm.failure_report([("7_1", "SLURM state CANCELLED by 0", ["method=kmeans n_trials=1"])],
                                slurm.resume_command(["/x/cli.py", "hydra/launcher=slurm", "method=a b"]))
    assert "task 7_1: SLURM state CANCELLED by 0" in text and "cell: method=kmeans n_trials=1" in text
    assert text.endswith("ccbench hydra/launcher=slurm 'method=a b'")


CELL = {"dataset": {"name": "iris"}, "method": {"name": "kmeans"}, "constraints": {"name": "random_pairs",
        "n_constraints": 10}, "noise": {"name": "none"}, "n_trials": 2, "metrics": ["ari"]}


def test_a_cell_is_complete_when_a_resume_would_run_none_of_its_trials(tmp_path):
    from ccbench.running.harness import cell_is_complete, run_job
    from ccbench.running.results import ResultsStore

    out = tmp_path / "job"
    assert not cell_is_complete(CELL, out)  # nothing recorded
    run_job(CELL, out_dir=out)
    assert cell_is_complete(CELL, out)
    assert not cell_is_complete({**CELL, "n_trials": 3}, out)  # another cell (n_trials is in the hash): no rows
    store = ResultsStore(out / "results.parquet")  # an error row is kept with rerun_errors=false only
    row = store.frame().iloc[-1].to_dict()
    store.add({**row, "status": "error", "error": "boom"})
    store.flush(force=True)
    assert not cell_is_complete(CELL, out)
    assert cell_is_complete({**CELL, "rerun_errors": False}, out)


def test_a_resume_launches_only_the_cells_that_are_not_complete(tmp_path):
    """The sweeper's wrapper of the SLURM launcher, on two cells of which one ran: one is launched."""
    from ccbench.running.harness import run_job
    from hydra_plugins.ccbench_sweeper.ccbench_sweeper import _IncompleteCellsOnly

    cells = {"a": CELL, "b": {**CELL, "constraints": {"name": "random_pairs", "n_constraints": 20}}}
    run_job(cells["a"], out_dir=tmp_path / "a")

    class Loader:  # a composed job: the cell and where Hydra puts it
        def load_sweep_config(self, config, overrides):
            name = overrides[0].split("=")[1]
            return OmegaConf.create({**cells[name], "hydra": {"sweep": {"dir": str(tmp_path), "subdir": name}}})

    launched = _IncompleteCellsOnly(_FakeLauncher(), Loader(), None).launch([["cell=a"], ["cell=b"]], 0)
    assert launched == [["cell=b"]]
