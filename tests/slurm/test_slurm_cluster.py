"""The SLURM path end to end on a real one-node cluster (``slurm_cluster``, tests/slurm/conftest.py):
rows equal to the local launcher's, a killed task named and resumed, a requeued (preempted) task
finished, an impossible request refused before submission, packed cells."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ccbench.running.results import MEASURED_COLUMNS, read_results

ROOT = Path(__file__).resolve().parents[2]
#: provenance columns that describe the machine or process, not the result
HOST_COLUMNS = ("env.hostname", "env.cpu", "env.n_cores", "env.memory_gb", "env.platform", "env.blas_threads",
                "env.omp_num_threads")
#: the leaderboard's protocol on a grid small enough for a test
GRID = ["experiment=leaderboard_smoke", "dataset=iris_uci", "supervision=pairs_mid,unconstrained",
        "method=kmeans,pck_means", "n_trials=2", "trial_timeout=60"]


def _ccbench(args, cwd, env=None, timeout=900):
    env = {**(env or os.environ), "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "ccbench.running.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _start(args, cwd, env):
    return subprocess.Popen([sys.executable, "-m", "ccbench.running.cli", *args], cwd=cwd,
                            env={**env, "MPLBACKEND": "Agg"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _rows(sweep: Path) -> pd.DataFrame:
    rows = pd.concat([read_results(f) for f in sorted(sweep.rglob("results.parquet"))], ignore_index=True)
    drop = [c for c in rows if c in MEASURED_COLUMNS or c in HOST_COLUMNS]
    return rows.drop(columns=drop).sort_values(["config_hash", "trial"]).reset_index(drop=True)


def _running_tasks(cluster) -> list[str]:
    out = cluster.run("squeue", "-h", "-t", "R", "-o", "%i", check=False)
    return [line for line in out.stdout.split() if line]


def _wait_running(cluster, proc, timeout=300) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        tasks = _running_tasks(cluster)
        if tasks:
            return tasks[0]
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        time.sleep(0.5)
    raise AssertionError("no task started running")


@pytest.mark.slow  # starts the real test cluster (issue 54, item 19: not in the fast subset)
@pytest.mark.ci_slurm  # CI's SLURM phase (.ci/run): the real cluster's core path
def test_the_cluster_runs_a_job_and_accounts_for_it(slurm_cluster, tmp_path):
    info = slurm_cluster.run("sinfo", "-h", "-N", "-o", "%N %T %c %m").stdout.split()
    assert info[0] == slurm_cluster.node and info[1] == "idle"
    assert int(info[2]) == slurm_cluster.cpus
    out = tmp_path / "out"
    job = slurm_cluster.run("sbatch", "--parsable", "--wait", "-o", str(out), "--wrap", "echo hello").stdout.strip()
    assert out.read_text().strip() == "hello"
    acct = slurm_cluster.run("sacct", "-n", "-X", "-j", job, "-o", "State", "--parsable2").stdout.split()
    assert acct == ["COMPLETED"]


def test_slurm_yaml_requeues_and_asks_for_memory_a_small_node_has():
    conf = yaml.safe_load((ROOT / "conf" / "hydra" / "launcher" / "slurm.yaml").read_text())
    assert conf["max_num_timeout"] >= 1  # 0: a preempted (or signalled) task is not requeued
    assert conf["mem_gb"] is None  # derived: 4 GB or the largest node's memory


@pytest.mark.slow  # starts the real test cluster (issue 54, item 19: not in the fast subset)
def test_an_impossible_request_is_refused_before_submission(slurm_cluster, tmp_path):
    mem = slurm_cluster.memory_mb // 1024 + 1
    run = _ccbench(["hydra/launcher=slurm", "method=kmeans", "n_trials=1", f"hydra.launcher.mem_gb={mem}",
                    "hydra.launcher.cpus_per_task=64", f"hydra.sweep.dir={tmp_path / 's'}"],
                   cwd=tmp_path, env=slurm_cluster.env, timeout=300)
    assert run.returncode == 2, run.stderr[-3000:]
    assert f"hydra.launcher.mem_gb={mem}" in run.stderr and f"declares {slurm_cluster.memory_mb} MB" in run.stderr
    assert "hydra.launcher.cpus_per_task=64" in run.stderr
    assert slurm_cluster.run("squeue", "-h").stdout.strip() == ""  # nothing was submitted


@pytest.mark.slow  # starts the real test cluster (issue 54, item 19: not in the fast subset)
def test_an_array_longer_than_max_array_size_is_refused_before_submission(slurm_cluster, tmp_path):
    """1,002 cells, one task each, on a cluster with SLURM's default MaxArraySize (1001): refused with
    the fix named, before anything is pickled or submitted (sbatch would reject it with
    "Invalid job array specification")."""
    run = _ccbench(["hydra/launcher=slurm", "method=kmeans", "n_trials=1", "constraints.n_constraints=range(1,1003)",
                    f"hydra.sweep.dir={tmp_path / 's'}"], cwd=tmp_path, env=slurm_cluster.env, timeout=600)
    assert run.returncode == 2, run.stderr[-3000:]
    assert "the sweep is 1,002 array tasks and this cluster's MaxArraySize is 1001" in run.stderr, run.stderr[-3000:]
    assert "hydra.sweeper.max_tasks=1000" in run.stderr
    assert slurm_cluster.run("squeue", "-h").stdout.strip() == ""
    assert not list((tmp_path / "s").glob(".submitit/*/*.pkl"))


@pytest.mark.slow
def test_accounting_limits_are_read_from_the_real_sacctmgr(slurm_cluster, monkeypatch):
    """QOS and association limits set with sacctmgr are read back by the commands limit_problems
    runs (their syntax and output as this SLURM has them; a single "where user=..." argument was
    refused: "Unknown condition"). The test cluster enforces nothing (AccountingStorageEnforce=none,
    so the check is skipped there); its answer is read as if it enforced limits."""
    from ccbench.running import slurm_limits

    for key, value in slurm_cluster.env.items():
        monkeypatch.setenv(key, value)
    user = slurm_cluster.run("id", "-un").stdout.strip()

    def enforcing(args):
        out = slurm_limits._run(args)
        return out.replace("AccountingStorageEnforce = none", "AccountingStorageEnforce = associations,limits") \
            if args[0] == "scontrol" else out
    sacctmgr = ("sacctmgr", "-i", "modify")
    try:
        slurm_cluster.run(*sacctmgr, "qos", "normal", "set", "MaxWall=02:00:00", "MaxTRESPerJob=cpu=1,mem=2G",
                          "MaxSubmitJobsPerUser=5")
        slurm_cluster.run(*sacctmgr, "user", user, "set", "MaxSubmitJobs=4")
        problems = slurm_limits.limit_problems({"timeout_min": 180, "cpus_per_task": 2, "mem_gb": 4}, 6, run=enforcing)
        bad_account = slurm_limits.limit_problems({"account": "nope"}, 1, run=enforcing)
    finally:
        slurm_cluster.run(*sacctmgr, "qos", "normal", "set", "MaxWall=-1", "MaxTRESPerJob=cpu=-1,mem=-1",
                          "MaxSubmitJobsPerUser=-1", check=False)
        slurm_cluster.run(*sacctmgr, "user", user, "set", "MaxSubmitJobs=-1", check=False)
    text = "\n".join(problems)
    assert len(problems) == 5, text
    assert "(MaxWall=02:00:00)" in text and "at most 1 CPUs" in text and "at most 2048 MB" in text
    assert "(MaxSubmitJobs=4)" in text and "(MaxSubmitJobsPerUser=5)" in text
    assert bad_account and f"user {user} has no association with it" in bad_account[0]
    assert slurm_limits.limit_problems({"timeout_min": 180}, 6) == []  # not enforced here: not checked


@pytest.mark.slow
@pytest.mark.ci_slurm  # CI's SLURM phase (.ci/run): the real cluster's core path
def test_slurm_rows_equal_local_rows(slurm_cluster, tmp_path):
    """The leaderboard protocol (a small grid) through hydra/launcher=slurm: the same rows as the
    local (joblib) launcher's, measured and host columns aside."""
    local = _ccbench([*GRID, "hydra/launcher=local", f"hydra.sweep.dir={tmp_path / 'local'}"], cwd=tmp_path)
    assert local.returncode == 0, local.stderr[-3000:]
    slurm = _ccbench([*GRID, "hydra/launcher=slurm", f"hydra.sweep.dir={tmp_path / 'slurm'}"], cwd=tmp_path,
                     env=slurm_cluster.env)
    assert slurm.returncode == 0, slurm.stderr[-3000:]
    a, b = _rows(tmp_path / "local"), _rows(tmp_path / "slurm")
    assert len(a) == 2 * 2 * 2
    pd.testing.assert_frame_equal(a, b)


#: a test-only method whose fit writes "<SLURM task> <pid>" to ``log`` and then waits until the file
#: ``release`` exists: a test signals a task while it is provably running (its line is there), then
#: releases the fits. On an idle machine kmeans finished before the signal arrived (the CI rehearsal).
HELD = "ccbench_slurm_held"
HELD_SOURCE = """
import os, time
import numpy as np
from ccbench import ConstrainedClusterer, MethodSpec, hookimpl

class Held(ConstrainedClusterer):
    def __init__(self, log=None, release=None, random_state=None):
        self.log, self.release, self.random_state = log, release, random_state

    def fit(self, X, y=None, *, constraints=None):
        array, index = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
        task = f"{array}_{index}" if array else os.environ.get("SLURM_JOB_ID", "?")
        with open(self.log, "a") as f:
            f.write(f"{task} {os.getpid()}\\n")
        end = time.monotonic() + 900
        while not os.path.exists(self.release) and time.monotonic() < end:
            time.sleep(0.05)
        self.labels_ = np.arange(len(X)) % 3
        return self

@hookimpl
def ccbench_methods():
    return [MethodSpec("held", Held, "waits for a file")]
"""


@pytest.fixture
def held(tmp_path, slurm_cluster):
    """``(args, env, log, release)``: the held method's command-line arguments and the cluster's
    environment with the plugin importable (the tasks inherit it: sbatch exports the environment)."""
    plugin = tmp_path / "plugin"
    (plugin / "conf" / "method").mkdir(parents=True)
    (plugin / f"{HELD}.py").write_text(HELD_SOURCE)
    (plugin / "conf" / "method" / "held.yaml").write_text("name: held\n")
    log, release = tmp_path / "fits.log", tmp_path / "release"
    env = {**slurm_cluster.env, "PYTHONPATH": os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")])}
    args = ["method=held", f"method.log={log}", f"method.release={release}", f"plugins=[{HELD}]",
            f"hydra.searchpath=[file://{plugin / 'conf'}]"]
    return args, env, log, release


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_fitting(log: Path, proc, timeout=600) -> str:
    """The SLURM task id of the first fit that started (its line in ``log``)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if log.exists() and log.read_text().strip():
            return log.read_text().split()[0]
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        time.sleep(0.2)
    raise AssertionError("no fit started")


@pytest.mark.slow
@pytest.mark.ci_slurm  # CI's SLURM phase (.ci/run): the real cluster's core path
def test_a_killed_task_is_named_and_the_same_command_resumes(slurm_cluster, held, tmp_path):
    extra, env, log, release = held
    args = ["hydra/launcher=slurm", *extra, "n_trials=3", "constraints.n_constraints=10,20",
            f"hydra.sweep.dir={tmp_path / 's'}"]
    proc = _start(args, tmp_path, env)
    try:
        task = _wait_fitting(log, proc)  # the task is fitting, held until the release
        fit = int(log.read_text().split()[1])  # its process (one node: this machine)
        slurm_cluster.run("scancel", "-s", "KILL", task)
        # SLURM says CANCELLED at once but its step daemon delivers the signal later (seconds under load):
        # the fit is released only once its process is gone, so it cannot finish first
        end = time.monotonic() + 300
        while time.monotonic() < end and _alive(fit):
            time.sleep(0.2)
        assert not _alive(fit), "the killed task's process is still running"
        release.touch()
        _, err = proc.communicate(timeout=600)
    finally:
        release.touch()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, err[-3000:]
    assert f"task {task}: SLURM state CANCELLED" in err, err[-3000:]
    assert "cell: method=held " in err and "constraints.n_constraints=" in err, err[-3000:]
    again = _ccbench(args, cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    rows = _rows(tmp_path / "s")
    assert len(rows) == 6 and (rows["status"] == "ok").all()


@pytest.mark.slow
@pytest.mark.ci_slurm  # CI's SLURM phase (.ci/run): the real cluster's core path
def test_a_requeued_task_finishes(slurm_cluster, held, tmp_path):
    """SLURM signals a task (USR2) before preempting it or at its time limit minus signal_delay_s;
    submitit checkpoints and requeues it, up to max_num_timeout times (with timeout_min <= 10 every
    such signal counts as a time-out: docs/harness.md). The requeued task resumes its cell.
    Fails with ``max_num_timeout: 0`` in conf/hydra/launcher/slurm.yaml (the requeue is refused)."""
    extra, env, log, release = held
    sweep = tmp_path / "s"
    proc = _start(["hydra/launcher=slurm", *extra, "n_trials=3", "hydra.launcher.timeout_min=5",
                   f"hydra.sweep.dir={sweep}"], tmp_path, env)
    try:
        task = _wait_fitting(log, proc)  # the task is fitting, held until the release
        slurm_cluster.run("scancel", "-s", "USR2", task)
        # SLURM holds a requeued job for 2 minutes (BeginTime); an administrator's release, to keep the
        # test short. The fit is released only once the task is back in the queue: it cannot finish first.
        # The start is released only once the node has cleaned up the interrupted attempt and a new second
        # has begun: slurmd revokes the job's credential when it kills the attempt, at one-second
        # resolution, and a restart within that second dies "Job credential revoked" (the CI flake).
        end = time.monotonic() + 300
        while time.monotonic() < end and proc.poll() is None:
            state = slurm_cluster.run("squeue", "-h", "-j", task.split("_")[0], "-o", "%T %r", check=False).stdout
            node = slurm_cluster.run("sinfo", "-h", "-N", "-o", "%T", check=False).stdout.split()
            if "PENDING" in state and node == ["idle"]:
                release.touch()
                time.sleep(2)
                slurm_cluster.run("scontrol", "update", f"JobId={task}", "StartTime=now", check=False)
                break
            time.sleep(0.2)
        release.touch()
        _, err = proc.communicate(timeout=600)
    finally:
        release.touch()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err[-3000:]
    acct = slurm_cluster.run("sacct", "-n", "-D", "-X", "-j", task.split("_")[0], "-o", "State",
                             "--parsable2").stdout.split()
    assert "REQUEUED" in acct and acct[-1] == "COMPLETED", acct
    fits = [line.split() for line in log.read_text().splitlines()]
    assert len(fits) == 4 and fits[0][1] != fits[1][1]  # trial 0 signalled, then the requeued task's 3 trials
    rows = _rows(sweep)
    assert len(rows) == 3 and (rows["status"] == "ok").all()


@pytest.mark.slow
def test_the_last_allowed_time_limit_is_recorded_as_such_and_stops_the_task(slurm_cluster, held, tmp_path):
    """A task signalled (USR2) with no requeue left (``max_num_timeout=0``; with ``timeout_min`` <= 10
    every signal counts as a time-out) while fitting trial 0 of 3: the trial is recorded as
    ``task_time_limit`` and the task stops, named by the command. Submitit's exception was recorded as
    trial 0's ``error`` and the task went on to fit trial 1 until SLURM killed it (issue 54, item 3).
    The fits are never released: a task that goes on fitting shows as a second line in the fit log."""
    extra, env, log, release = held
    sweep = tmp_path / "s"
    proc = _start(["hydra/launcher=slurm", *extra, "n_trials=3", "hydra.launcher.timeout_min=5",
                   "hydra.launcher.max_num_timeout=0", f"hydra.sweep.dir={sweep}"], tmp_path, env)
    try:
        task = _wait_fitting(log, proc)
        slurm_cluster.run("scancel", "-s", "USR2", task)
        end = time.monotonic() + 300
        while proc.poll() is None and time.monotonic() < end:
            assert len(log.read_text().splitlines()) == 1, "the task went on to fit its next trial"
            time.sleep(0.2)
        _, err = proc.communicate(timeout=60)
    finally:
        release.touch()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, err[-3000:]
    assert "the task raised: submitit.core.utils.UncompletedJobError: the SLURM task reached its time limit" in err, \
        err[-3000:]
    assert "hydra.launcher.timeout_min" in err and "cell: method=held " in err
    rows = _rows(sweep)
    assert rows["trial"].tolist() == [0] and rows["status"].tolist() == ["task_time_limit"], rows[["trial", "status"]]
    assert "timed-out too many times" in rows["error"].iloc[0]
    assert len(log.read_text().splitlines()) == 1  # trial 1 never started


@pytest.mark.slow
def test_a_preemption_during_the_task_s_start_up_requeues_it(slurm_cluster, held, tmp_path):
    """USR2 (SLURM's preemption / time-limit signal) sent while the task is still starting (before
    submitit's handler exists: it used to be 20 s of imports on a busy node): the task is requeued
    before any cell runs and the requeued task finishes. Start-up is held by a file
    (``CCBENCH_TEST_TASK_START_HOLD``, read by the task's first Python, _task_start.py) so the signal
    lands in it for certain; USR2's default action killed such a task (FAILED, not requeued;
    issue 54, item 6)."""
    extra, env, log, release = held
    hold = tmp_path / "hold"
    started = Path(f"{hold}.started")
    env = {**env, "CCBENCH_TEST_TASK_START_HOLD": str(hold)}
    sweep = tmp_path / "s"
    release.touch()  # the fits need not wait: no fit may start before the requeue
    proc = _start(["hydra/launcher=slurm", *extra, "n_trials=2", "hydra.launcher.timeout_min=30",
                   f"hydra.sweep.dir={sweep}"], tmp_path, env)
    try:
        end = time.monotonic() + 300
        while not (started.exists() and "started" in started.read_text()):
            assert proc.poll() is None and time.monotonic() < end, proc.communicate()[1][-3000:]
            time.sleep(0.2)
        task = _running_tasks(slurm_cluster)[0]
        slurm_cluster.run("scancel", "-s", "USR2", task)
        while "signal" not in started.read_text():  # delivered (the step daemon may take seconds)
            assert proc.poll() is None and time.monotonic() < end, proc.communicate()[1][-3000:]
            time.sleep(0.2)
        hold.touch()
        # requeued: SLURM holds it for 2 minutes (BeginTime); released once the node is idle and a new
        # second began (see test_a_requeued_task_finishes)
        while proc.poll() is None and time.monotonic() < end:
            state = slurm_cluster.run("squeue", "-h", "-j", task.split("_")[0], "-o", "%T", check=False).stdout
            node = slurm_cluster.run("sinfo", "-h", "-N", "-o", "%T", check=False).stdout.split()
            if "PENDING" in state and node == ["idle"]:
                assert not log.exists(), "a cell ran before the requeue"
                time.sleep(2)
                slurm_cluster.run("scontrol", "update", f"JobId={task}", "StartTime=now", check=False)
                break
            time.sleep(0.2)
        _, err = proc.communicate(timeout=600)
    finally:
        hold.touch()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err[-3000:]
    marks = started.read_text().split("\n")
    assert [m.split()[0] for m in marks if m] == ["started", "signal", "started"], marks  # two starts, one signal
    acct = slurm_cluster.run("sacct", "-n", "-D", "-X", "-j", task.split("_")[0], "-o", "State",
                             "--parsable2").stdout.split()
    assert "REQUEUED" in acct and acct[-1] == "COMPLETED", acct
    rows = _rows(sweep)
    assert len(rows) == 2 and (rows["status"] == "ok").all()


@pytest.mark.slow
def test_a_killed_packed_task_loses_at_most_the_cell_it_was_running(slurm_cluster, tmp_path):
    """Three cells in one array task (hydra.sweeper.cells_per_task=3), killed while running its
    second cell: the error names the task's three cells; the resume keeps the first cell's rows as
    they were (not re-run) and finishes the others."""
    sweep = tmp_path / "s"
    args = ["hydra/launcher=slurm", "method=kmeans", "n_trials=600", "constraints.n_constraints=10,20,40",
            "hydra.sweeper.cells_per_task=3", f"hydra.sweep.dir={sweep}"]
    proc = _start(args, tmp_path, slurm_cluster.env)
    task = _wait_running(slurm_cluster, proc)
    end = time.monotonic() + 300
    while len(list(sweep.glob("*/cell.json"))) < 2 and time.monotonic() < end:  # the second cell began
        time.sleep(0.2)
    slurm_cluster.run("scancel", "-s", "KILL", task)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 1, err[-3000:]
    assert f"task {task}: SLURM state CANCELLED" in err
    assert err.count("cell: method=kmeans n_trials=600 constraints.n_constraints=") == 3
    before = pd.concat([read_results(f) for f in sweep.rglob("results.parquet")])
    done_before = before.groupby("config_hash").size()
    assert (done_before == 600).sum() >= 1  # the first cell finished before the kill
    again = _ccbench(args, cwd=tmp_path, env=slurm_cluster.env)
    assert again.returncode == 0, again.stderr[-3000:]
    after = pd.concat([read_results(f) for f in sweep.rglob("results.parquet")])
    assert len(after) == 1800 and (after["status"] == "ok").all()
    kept = before.merge(after, on=["config_hash", "trial"], suffixes=("", "_after"))
    assert len(kept) == len(before)
    assert (kept["timestamp"] == kept["timestamp_after"]).all()  # no finished trial ran again


@pytest.mark.slow
def test_the_leaderboard_is_one_array_per_memory_class_of_at_most_1000_tasks(slurm_cluster, tmp_path):
    """The whole leaderboard submitted with ``hydra.sweeper.max_tasks=1000``: sbatch accepts it (SLURM's
    default MaxArraySize is 1001; the unpacked grid is rejected) as one array per memory class
    (``mem_gb_by_method``: rn_sdp's and the others', each with its own ``--mem``), at most 1,000 tasks
    in all, covering every cell of the grid once, no task mixing classes. Submitted held (``--hold``),
    so nothing runs; cancelled afterwards."""
    experiment = yaml.safe_load((ROOT / "conf" / "experiment" / "leaderboard.yaml").read_text())
    grid = experiment["hydra"]["sweeper"]["params"]
    n_cells = 1
    for values in grid.values():
        n_cells *= len(str(values).split(","))
    config = slurm_cluster.run("scontrol", "show", "config").stdout
    assert "MaxArraySize            = 1001" in config  # SLURM's default, as on most clusters
    assert n_cells > 1001  # else this proves nothing about packing
    sweep = tmp_path / "s"
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "ccbench.running.cli", "experiment=leaderboard",
                             "hydra/launcher=slurm", "hydra.sweeper.max_tasks=1000",
                             "+hydra.launcher.additional_parameters={hold:true}", f"hydra.sweep.dir={sweep}"],
                            cwd=tmp_path, env={**slurm_cluster.env, "MPLBACKEND": "Agg"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    queued: list[str] = []
    try:
        end = time.monotonic() + 900
        while len(queued) < 2 and time.monotonic() < end:  # rn_sdp's array and the others
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            time.sleep(1)
            queued = slurm_cluster.run("squeue", "-h", "-o", "%F %K %T %r %m", check=False).stdout.split("\n")
            queued = [q for q in queued if q.strip()]
        submitted_after = time.monotonic() - start
    finally:
        for array in {q.split()[0] for q in queued}:
            slurm_cluster.run("scancel", array, check=False)
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
        proc.wait()
    assert len(queued) == 2, queued  # one array per memory class, no batches after them
    n_tasks, mems = 0, set()
    for line in queued:
        array, tasks, state, reason, mem = line.split()
        assert (state, reason) == ("PENDING", "JobHeldUser")
        first, last = map(int, tasks.split("%")[0].split("-"))
        assert first == 0
        n_tasks, mems = n_tasks + last - first + 1, mems | {mem}
    assert n_tasks <= 1000 and len(mems) == 2, queued  # each class its own --mem
    packs = json.loads((next(sweep.glob(".ccbench_packs.*.json"))).read_text())
    assert len(packs) == n_tasks
    packed = [cell for pack in packs.values() for cell, _ in pack]
    assert len(set(packed)) == len(packed) and n_tasks + len(packed) == n_cells  # every cell once
    for pack in packs.values():  # no task mixes rn_sdp (6 GB) with the others
        assert len({"method=rn_sdp" in overrides for _, overrides in pack}) <= 1, pack
    print(f"\nleaderboard: {n_cells} cells in two arrays ({', '.join(queued)}) of {n_tasks} tasks, submitted after "
          f"{submitted_after:.0f} s", file=sys.stderr)


# -- two packed grids in one sweep directory (issue 54, items 1, 4 and 5); in this file so that one
# pytest-xdist worker (--dist loadfile) starts the one test cluster for all of them ------------------------------

#: two grids of two cells each, each packed into one task: the tiniest grids that pack
GRIDS = {"a": "constraints.n_constraints=10,20", "b": "constraints.n_constraints=30,40"}


def _command(grid: str, sweep) -> list[str]:
    return [sys.executable, "-m", "ccbench.running.cli", "hydra/launcher=slurm", "method=kmeans", "n_trials=1",
            GRIDS[grid], "hydra.sweeper.cells_per_task=2", f"hydra.sweep.dir={sweep}"]


def _submitted(cluster) -> int:
    return len(cluster.run("sacct", "-n", "-X", "-o", "JobID", "--parsable2", check=False).stdout.split())


@pytest.mark.slow
def test_two_packed_grids_into_one_directory_at_once_run_every_cell_and_a_resume_submits_nothing(
        slurm_cluster, tmp_path):
    """Both commands' tasks run their own two cells (one shared pack map let the second command's
    map replace the first's: both exited 0 and two of the first grid's cells never ran); the first
    command run again finds its cells complete and submits no task."""
    sweep = tmp_path / "s"
    env = {**slurm_cluster.env, "MPLBACKEND": "Agg"}
    procs = [subprocess.Popen(_command(g, sweep), cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for g in GRIDS]
    try:
        errs = [p.communicate(timeout=600)[1] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, err in zip(procs, errs):
        assert p.returncode == 0, err[-3000:]
    assert len(list(sweep.glob(".ccbench_packs.*.json"))) == 2
    rows = pd.concat([read_results(f) for f in sweep.rglob("results.parquet")], ignore_index=True)
    assert sorted(rows["constraints.n_constraints"].astype(int)) == [10, 20, 30, 40]  # every cell, each once
    assert (rows["status"] == "ok").all()
    before = _submitted(slurm_cluster)
    again = subprocess.run(_command("a", sweep), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "2 of 2 cells are complete" in again.stderr and "submitting the other 0" in again.stderr
    assert _submitted(slurm_cluster) == before  # no task submitted


def _held_tasks(cluster) -> list[str]:
    out = cluster.run("squeue", "-h", "-r", "-o", "%i %r", check=False).stdout.splitlines()
    return sorted(line.split()[0] for line in out if line.endswith("JobHeldUser"))


@pytest.mark.slow
def test_without_sacct_a_cancelled_task_is_named_and_the_resume_submits_only_its_cell(slurm_cluster, tmp_path):
    """Accounting down for the command (a ``sacct`` that fails, first on its PATH): a cancelled task
    is named from squeue/scontrol, said once, with the command that resumes (submitit waited for
    ever, printing "Bypassing sacct error"); the other cell's row is saved, and the resume submits
    one task, for the cancelled task's cell only."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "sacct").write_text("#!/bin/sh\necho 'sacct: error: Problem talking to the database: "
                                "Connection refused' >&2\nexit 1\n")
    (fake / "sacct").chmod(0o755)
    env = {**slurm_cluster.env, "MPLBACKEND": "Agg", "PATH": f"{fake}:{slurm_cluster.env.get('PATH', '')}"}
    sweep = tmp_path / "s"
    args = [sys.executable, "-m", "ccbench.running.cli", "hydra/launcher=slurm", "method=kmeans", "n_trials=1",
            "constraints.n_constraints=10,20", f"hydra.sweep.dir={sweep}"]
    proc = subprocess.Popen([*args, "+hydra.launcher.additional_parameters={hold:true}"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        held: list[str] = []
        end = time.monotonic() + 300
        while len(held) < 2:  # both tasks submitted, held: cancel one before it runs, release the other
            assert proc.poll() is None and time.monotonic() < end, proc.communicate()[1][-3000:]
            time.sleep(0.5)
            held = _held_tasks(slurm_cluster)
        cancelled, kept = held
        slurm_cluster.run("scancel", cancelled)
        slurm_cluster.run("scontrol", "release", kept)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, err[-3000:]
    assert err.count("squeue and scontrol instead") == 1, err[-3000:]
    assert f"task {cancelled}: SLURM state CANCELLED" in err or f"task {cancelled}: SLURM state left the queue" in err
    assert "1 SLURM task(s) did not finish" in err and "ccbench hydra/launcher=slurm method=kmeans" in err
    assert len(list(sweep.rglob("results.parquet"))) == 1  # the released task's cell is saved
    before = _submitted(slurm_cluster)
    again = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "1 of 2 cells are complete" in again.stderr, again.stderr[-3000:]
    assert _submitted(slurm_cluster) == before + 1  # one task, the cancelled one's cell
    rows = pd.concat([read_results(f) for f in sweep.rglob("results.parquet")], ignore_index=True)
    assert sorted(rows["constraints.n_constraints"].astype(int)) == [10, 20] and (rows["status"] == "ok").all()


@pytest.mark.slow
def test_a_detached_sweep_packs_by_memory_and_its_report_job_writes_the_summary(slurm_cluster, tmp_path):
    """Two cells, two memory classes (``mem_gb_by_method``), ``detach=true``: the command exits 0 at
    once, printing its arrays and report job; each class is its own array with its own ``--mem``;
    the report job (``--dependency=afterany``) writes ``slurm_report.txt`` and the summary after the
    tasks, with nothing of the submitting process left running."""
    import re

    sweep = tmp_path / "s"
    run = _ccbench(["-m", "experiment=leaderboard_smoke", "dataset=iris_uci", "supervision=pairs_mid",
                    "method=kmeans,pck_means", "n_trials=2", "trial_timeout=60", "hydra/launcher=slurm",
                    "hydra.launcher.mem_gb=1", "+hydra.launcher.mem_gb_by_method.pck_means=0.5",
                    "hydra.launcher.detach=true", f"hydra.sweep.dir={sweep}"], cwd=tmp_path, env=slurm_cluster.env,
                   timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    follow = re.search(r"squeue -j ([\d,]+)", run.stdout)
    assert follow, run.stdout[-3000:]
    *arrays, report_job = follow.group(1).split(",")
    assert len(arrays) == 2
    end = time.monotonic() + 600
    while slurm_cluster.run("squeue", "-h", "-j", report_job, check=False).stdout.strip() and time.monotonic() < end:
        time.sleep(1)
    mems = {a: slurm_cluster.run("sacct", "-n", "-X", "-P", "-j", a, "-o", "ReqMem").stdout.split()[0] for a in arrays}
    assert sorted(mems.values()) == ["1G", "512M"], mems  # each class its own --mem (kmeans: mem_gb=1)
    dependency = slurm_cluster.run("sacct", "-n", "-X", "-P", "-j", report_job, "-o", "State").stdout.split()
    assert dependency == ["COMPLETED"], dependency
    text = (sweep / "slurm_report.txt").read_text()
    assert "all 2 SLURM task(s) finished" in text, text
    assert len(_rows(sweep)) == 2 * 2
    # the summary: `ccbench report`'s, for this experiment its leaderboard pages
    assert (sweep / "leaderboard" / "index.md").exists(), sorted(p.name for p in sweep.iterdir())
    assert not list(sweep.glob(".ccbench_jobs.*")) and not list(sweep.glob(".ccbench_done.*"))  # progress forgotten
    assert f"{sweep / 'slurm_report.txt'}" in run.stdout and "resume" in run.stdout
