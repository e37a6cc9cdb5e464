"""The SLURM launcher's logic without a cluster (issue 54, items 1, 2, 3, 4, 5, 6, 8): one pack map per grid,
the array's states read from one query, the fallback without ``sacct``, which cells a resume
submits, a task's last time limit recorded as such, a signal during start-up, and the accounting
limits and a file system without locks checked before anything runs. The real-cluster
counterparts are in tests/slurm/test_slurm_cluster.py."""

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


# -- limits checked before submission (issue 54, item 8) -------------------------------------------------------------

#: what the test cluster's sacctmgr printed (slurm 22.05) with these limits set, -n -P
CONFIG = "ClusterName             = hpc\nAccountingStorageEnforce = associations,limits,qos\nMaxArraySize = 1001\n"
ASSOC = "proj||normal,long|normal|4|1-00:00:00|cpu=2\nother||normal|normal|||\n"
QOS = {"normal": "normal|02:00:00|cpu=1,mem=2G|5|7", "long": "long|7-00:00:00||1000|"}


def _sacctmgr(config=CONFIG, assoc=ASSOC, queued=0, default="proj"):
    """A fake ``run`` answering the four queries limit_problems makes (and recording them)."""
    asked = []

    def run(args):
        asked.append(args)
        if args[0] == "scontrol":
            return config
        if args[0] == "squeue":
            return "".join(f"{i}\n" for i in range(queued))
        if args[4] in ("assoc", "qos"):  # conditions as separate arguments: "where user=x" as one is refused
            assert args[5] == "where" and all("=" in a and " " not in a for a in args[6:]), args
        if args[4] == "assoc":
            return assoc
        if args[4] == "user":
            return f"{default}\n"
        name = next(a for a in args if a.startswith("name=")).split("=", 1)[1]
        return QOS.get(name, "") + "\n"
    run.asked = asked
    return run


def test_sizes_of_slurm_tres_and_memory():
    from ccbench.running.slurm_limits import parse_mem_mb, parse_tres

    assert parse_mem_mb("2G") == 2048 and parse_mem_mb("500M") == 500 and parse_mem_mb("1T") == 1024 ** 2
    assert parse_mem_mb("300") == 300  # no unit: MB
    assert parse_tres("cpu=4,mem=1.5G,node=1,gres/gpu=2") == {"cpu": 4, "mem": 1536, "node": 1, "gres/gpu": 2}


def test_which_limits_slurm_enforces():
    from ccbench.running.slurm_limits import enforcement

    assert enforcement("AccountingStorageEnforce = none\n") == (False, False)
    assert enforcement("AccountingStorageEnforce = associations\n") == (True, False)
    assert enforcement("AccountingStorageEnforce = qos\n") == (True, False)  # qos implies associations
    assert enforcement("AccountingStorageEnforce = safe\n") == (True, True)  # safe implies limits
    assert enforcement("AccountingStorageEnforce = associations,limits\n") == (True, True)


def test_a_request_within_every_limit_passes():
    from ccbench.running.slurm_limits import limit_problems

    run = _sacctmgr()
    assert limit_problems({"timeout_min": 60, "cpus_per_task": 1, "mem_gb": 2}, 4, run=run, user="ann") == []
    assert run.asked[-1][:2] == ["squeue", "-h"]  # the user's queued jobs count too


def test_each_broken_limit_is_named_with_its_fix():
    """Association MaxSubmitJobs=4 and MaxWall 1 day; QOS normal MaxWall 2 h, MaxTRESPerJob cpu=1,mem=2G,
    MaxSubmitJobsPerUser=5, MaxSubmitJobsPerAccount=7; the user has 2 jobs queued."""
    from ccbench.running.slurm_limits import limit_problems

    problems = limit_problems({"timeout_min": 180, "cpus_per_task": 2, "mem_gb": 4}, 4, run=_sacctmgr(queued=2),
                              user="ann")
    text = "\n".join(problems)
    assert len(problems) == 5, text
    assert "hydra.launcher.timeout_min=180: QOS normal allows at most 120 min per job (MaxWall=02:00:00)" in text
    assert "timeout_min=120" in text and "hydra.launcher.qos" in text
    assert "hydra.launcher.cpus_per_task=2: QOS normal allows at most 1 CPUs per job" in text
    assert "hydra.launcher.mem_gb=4: QOS normal allows at most 2048 MB per job" in text and "mem_gb=2," in text
    # 4 tasks + 2 queued: over the association's 4 and the QOS's 5 per user, within its 7 per account
    assert "(MaxSubmitJobs=4) allows at most 4 jobs" in text and "hydra.sweeper.max_tasks=2" in text
    assert "(MaxSubmitJobsPerUser=5)" in text and "hydra.sweeper.max_tasks=3" in text
    assert "MaxSubmitJobsPerAccount" not in text


def test_a_longer_qos_lifts_the_wall_limit_and_its_own_limits_apply():
    from ccbench.running.slurm_limits import limit_problems

    problems = limit_problems({"timeout_min": 180, "qos": "long"}, 1001, run=_sacctmgr(), user="ann")
    assert len(problems) == 2 and all("the sweep is 1,001 array tasks" in p for p in problems)  # no MaxWall
    assert "(MaxSubmitJobs=4)" in problems[0] and "hydra.sweeper.max_tasks=4" in problems[0]
    assert "QOS long (MaxSubmitJobsPerUser=1000)" in problems[1] and "max_tasks=1000" in problems[1]


def test_a_bad_account_or_qos_is_refused_naming_what_is_allowed():
    from ccbench.running.slurm_limits import limit_problems

    problems = limit_problems({"account": "nope"}, 1, run=_sacctmgr(), user="ann")
    assert problems == ["hydra.launcher.account=nope: user ann has no association with it on cluster hpc (their "
                        "accounts: other, proj); set hydra.launcher.account to one of them"]
    problems = limit_problems({"account": "other", "qos": "long"}, 1, run=_sacctmgr(), user="ann")
    assert problems and "account other may not use QOS long (allowed: normal)" in problems[0]
    problems = limit_problems({"qos": "gpu"}, 1, run=_sacctmgr(assoc="proj|||||"), user="ann")
    assert problems and "hydra.launcher.qos=gpu: SLURM does not know this QOS" in problems[0]
    problems = limit_problems({}, 1, run=_sacctmgr(assoc=""), user="ann")
    assert problems and "user ann has no SLURM association on cluster hpc" in problems[0]


def test_limits_slurm_does_not_enforce_are_not_checked():
    from ccbench.running.slurm_limits import limit_problems

    loose = CONFIG.replace("associations,limits,qos", "none")
    assert limit_problems({"timeout_min": 10 ** 5, "account": "nope"}, 10 ** 4, run=_sacctmgr(config=loose)) == []
    assoc_only = CONFIG.replace("associations,limits,qos", "associations")
    assert limit_problems({"timeout_min": 10 ** 5}, 10 ** 4, run=_sacctmgr(config=assoc_only), user="ann") == []
    assert limit_problems({"account": "nope"}, 1, run=_sacctmgr(config=assoc_only), user="ann")


def test_when_sacctmgr_cannot_answer_it_is_said_and_sbatch_decides(caplog):
    from ccbench.running.slurm_limits import limit_problems

    def down(args):
        if args[0] == "sacctmgr":
            raise RuntimeError("sacctmgr: error: Problem talking to the database: Connection refused")
        return CONFIG
    assert limit_problems({"timeout_min": 10 ** 5}, 10 ** 4, run=down, user="ann") == []
    assert "Connection refused" in caplog.text and "without checking them" in caplog.text


@pytest.mark.parametrize("code", ["ENOSYS", "ENOLCK", "EINVAL", "EOPNOTSUPP"])
def test_a_file_system_without_flock_is_named_with_the_mount_option(tmp_path, monkeypatch, code):
    """Lustre mounted without ``-o flock`` answers flock with ENOSYS (NFS ``nolock``: ENOLCK), not
    BlockingIOError: the error names the lock, the file system and the mount option, at once."""
    import errno
    import fcntl

    from ccbench.running import _locks

    def no_flock(handle, flags):
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)))
    monkeypatch.setattr(fcntl, "flock", no_flock)
    with pytest.raises(_locks.LocksUnsupportedError) as caught:
        with _locks.locked(tmp_path / "results.parquet"):
            pytest.fail("the body ran without a lock")
    text = str(caught.value)
    assert str(tmp_path / ".results.parquet.lock") in text and "-o flock" in text
    assert errno.errorcode[getattr(errno, code)] in text
    assert caught.value.errno == getattr(errno, code)


def test_another_flock_error_is_not_mistaken_for_a_file_system_without_locks(tmp_path, monkeypatch):
    import errno
    import fcntl

    from ccbench.running import _locks

    def bad_handle(handle, flags):
        raise OSError(errno.EBADF, "Bad file descriptor")
    monkeypatch.setattr(fcntl, "flock", bad_handle)
    with pytest.raises(OSError) as caught:
        with _locks.locked(tmp_path / "results.parquet"):
            pass
    assert not isinstance(caught.value, _locks.LocksUnsupportedError)


# -- a task's last allowed time limit (issue 54, item 3) ------------------------------------------------------------

SIGNALLED = '''
import os, signal, time
import numpy as np
from ccbench import ConstrainedClusterer, MethodSpec, hookimpl

class Signalled(ConstrainedClusterer):
    """Counts its fits in ``count``; the fit numbered ``at`` is sent USR2 (as SLURM signals a task at its
    time limit) and goes on fitting, as a long fit would."""
    def __init__(self, count=None, at=1, random_state=None):
        self.count, self.at, self.random_state = count, at, random_state

    def fit(self, X, y=None, *, constraints=None):
        n = len(open(self.count).read()) if os.path.exists(self.count) else 0
        open(self.count, "a").write("x")
        if n == self.at:
            os.kill(os.getpid(), signal.SIGUSR2)
            time.sleep(30)
        self.labels_ = np.arange(len(X)) % 3
        return self

@hookimpl
def ccbench_methods():
    return [MethodSpec("signalled", Signalled, "signalled during its second fit")]
'''


class _Uncompleted(Exception):
    """Stands for submitit's UncompletedJobError (an Exception)."""


def _submitit_at_its_last_time_out(signum, frame):  # what submitit's handler does when requeues are used up
    raise _Uncompleted("Job not requeued because: timed-out too many times.")


def test_the_last_time_out_becomes_task_time_limit_and_a_requeue_stays_submitit_s():
    from ccbench.running.slurm import TaskTimeLimit, stop_at_last_time_limit

    handler = stop_at_last_time_limit(_submitit_at_its_last_time_out, _Uncompleted)
    with pytest.raises(TaskTimeLimit, match="timed-out too many times") as caught:
        handler(12, None)
    assert not isinstance(caught.value, Exception)  # no `except Exception` around a fit takes it

    def requeue(signum, frame):
        raise SystemExit(-1)  # submitit after `scontrol requeue`
    with pytest.raises(SystemExit):
        stop_at_last_time_limit(requeue, _Uncompleted)(12, None)


def test_a_trial_stopped_by_the_task_s_last_time_limit_is_recorded_as_such_and_the_task_stops(
        tmp_path, throwaway_plugin, monkeypatch):
    """Trial 1 of 3 is signalled mid-fit with submitit's handler at its last allowed time-out: its
    row is ``task_time_limit`` (it was ``error``, submitit's exception taken for the method's), no
    later trial runs (the task went on fitting until SLURM killed it), and a resume re-runs trial 1
    and 2 only, whatever ``rerun_errors`` says."""
    import signal

    from ccbench.running.harness import cell_is_complete, run_job
    from ccbench.running.results import ResultsStore
    from ccbench.running.slurm import TaskTimeLimit, stop_at_last_time_limit

    throwaway_plugin(SIGNALLED)
    count = tmp_path / "fits"
    cell = {**CELL, "method": {"name": "signalled", "count": str(count), "at": 1}, "n_trials": 3,
            "rerun_errors": False}
    before = signal.signal(signal.SIGUSR2, stop_at_last_time_limit(_submitit_at_its_last_time_out, _Uncompleted))
    try:
        with pytest.raises(TaskTimeLimit):
            run_job(cell, out_dir=tmp_path / "job")
    finally:
        signal.signal(signal.SIGUSR2, before)
    rows = ResultsStore(tmp_path / "job" / "results.parquet").frame().sort_values("trial")
    assert rows["trial"].tolist() == [0, 1] and rows["status"].tolist() == ["ok", "task_time_limit"]
    assert "timed-out too many times" in rows["error"].iloc[1] and "hydra.launcher.timeout_min" in rows["error"].iloc[1]
    assert count.read_text() == "xx"  # trial 2 never started
    assert not cell_is_complete(cell, tmp_path / "job")
    first = rows["timestamp"].iloc[0]
    rows = run_job(cell, out_dir=tmp_path / "job")  # the resume: no signal this time (the count is past 1)
    assert rows["status"].tolist() == ["ok"] * 3 and rows["timestamp"].iloc[0] == first
    assert count.read_text() == "xxxx"  # trials 1 and 2 ran again, trial 0 was kept


def test_a_task_s_error_is_named_by_its_exception_not_by_the_path_of_its_log():
    from hydra_plugins.ccbench_sweeper.slurm_launcher import _raised

    text = ("Job (task=0) failed during processing with trace:\n----------------------\nTraceback (most recent call "
            "last):\n  File \"x.py\", line 1, in f\nValueError: bad cell\n\n----------------------\nYou can check full "
            "logs with 'job.stderr(0)' and 'job.stdout(0)'or at paths:\n  - /s/1_0_log.err\n  - /s/1_0_log.out")
    assert _raised(text) == "ValueError: bad cell"
    assert _raised("Job not requeued because: timed-out too many times.") == "Job not requeued because: timed-out too many times."


# -- a preemption signal during a task's start-up (issue 54, item 6) --------------------------------------------------

def _wait_for_line(path: Path, prefix: str, proc, timeout: float = 60.0) -> str:
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        lines = [ln for ln in (path.read_text().splitlines() if path.exists() else []) if ln.startswith(prefix)]
        if lines:
            return lines[-1]
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError(f"no line {prefix!r} in {path}")


def test_a_preemption_signal_during_start_up_is_recorded_not_fatal(tmp_path):
    """A task started as the launcher starts it (sh, then _task_start.py, then ``-m`` submitit's
    entry, here a probe module) is sent USR2 while its start-up is held: it is not killed (USR2's
    default action killed a task still importing), the signal is recorded for submitit's handler,
    and the module runs with its arguments as ``python -m`` would run it."""
    import signal
    import subprocess

    from ccbench.running.slurm import EARLY_SIGNAL_ENV
    from hydra_plugins.ccbench_sweeper import _task_start
    from hydra_plugins.ccbench_sweeper.slurm_launcher import task_python

    assert _task_start.EARLY_SIGNAL_ENV == EARLY_SIGNAL_ENV  # the two ends of one hand-over
    (tmp_path / "ccb_probe.py").write_text("import os, sys\nprint(os.environ.get(%r), sys.argv[1:])\n" % EARLY_SIGNAL_ENV)
    hold = tmp_path / "hold"
    env = {k: v for k, v in os.environ.items() if k not in (EARLY_SIGNAL_ENV, "SUBMITIT_PREEMPT_SIGNAL")}
    proc = subprocess.Popen(f"{task_python()} -u -m ccb_probe a 'b c'", shell=True, cwd=tmp_path, text=True,
                            env={**env, _task_start.HOLD_ENV: str(hold)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        pid = int(_wait_for_line(Path(f"{hold}.started"), "started", proc).split()[1])
        os.kill(pid, signal.SIGUSR2)
        assert _wait_for_line(Path(f"{hold}.started"), "signal", proc) == f"signal {int(signal.SIGUSR2)}"
        hold.touch()
        out, err = proc.communicate(timeout=60)
    finally:
        hold.touch()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.split("\n")[0] == f"{int(signal.SIGUSR2)} ['a', 'b c']"


def test_a_signal_recorded_during_start_up_is_handed_to_submitit_s_handler_once(monkeypatch):
    from ccbench.running.slurm import EARLY_SIGNAL_ENV, replay_early_signal

    got, said = [], []
    monkeypatch.delenv(EARLY_SIGNAL_ENV, raising=False)
    assert not replay_early_signal(lambda s, f: got.append(s), warn=said.append)
    monkeypatch.setenv(EARLY_SIGNAL_ENV, "12")
    assert replay_early_signal(lambda s, f: got.append(s), warn=said.append)
    assert not replay_early_signal(lambda s, f: got.append(s), warn=said.append)  # once
    assert got == [12] and len(said) == 1 and "start-up" in said[0]


def test_a_requeue_whose_scontrol_the_requeue_itself_ended_is_a_requeue_not_a_failure():
    """``scontrol requeue`` runs inside the task's step, so the requeue's SIGTERM may end it first
    (the test cluster, at a signal during start-up): the task must end as requeued (SystemExit, no
    result file), not with submitit's CalledProcessError (a result file saying it failed)."""
    import signal
    import subprocess

    from ccbench.running.slurm import stop_at_last_time_limit

    def requeue_ended_by_its_sigterm(signum, frame):
        raise subprocess.CalledProcessError(-signal.SIGTERM, ["scontrol", "requeue", "4"])
    with pytest.raises(SystemExit):
        stop_at_last_time_limit(requeue_ended_by_its_sigterm, _Uncompleted)(12, None)

    def requeue_refused(signum, frame):
        raise subprocess.CalledProcessError(1, ["scontrol", "requeue", "4"])
    with pytest.raises(subprocess.CalledProcessError):  # a real failure stays one
        stop_at_last_time_limit(requeue_refused, _Uncompleted)(12, None)
