"""A joblib worker that dies under the sweep (issue 42, item 9, its last part): killed from outside
(SIGKILL of the worker's pid, the out-of-memory killer) or ended by code that runs in the worker
itself rather than in the isolated fit (``os._exit`` while loading data). The sweep names the job
and the cause in one line, records an ``error`` row for the trial that was lost, runs the other
jobs, exits 1, and the same command resumes to completion.

The first two tests failed on the code before the fix (joblib's ``TerminatedWorkerError``
traceback ended the sweep, and the other jobs were not run). The two other sub-cases of item 9
(workers die with the main process; ``os._exit`` in a fit) are
``test_reliability_hangs.py::test_joblib_workers_die_with_the_main_process`` and
``::test_a_fit_that_ends_its_joblib_worker_is_an_error_row``.

No test asserts a duration: each waits for a file a fit writes (the worker is provably busy when it
is killed) and bounds the wait generously only so that a regression fails instead of hanging.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from ccbench.running.results import read_results
import _proc  # on time-out, the command's whole process group is killed (issue 54)

HANG = 900  # seconds before a wait is called a hang (a loaded 2-core machine took 174 s to a joblib sweep's first fit)
PLUGIN = "ccbench_worker_deaths_plugin"
SOURCE = """
import os, time
import numpy as np
from ccbench import ConstrainedClusterer, DatasetSpec, MethodSpec, hookimpl
from ccbench.datasets import load_dataset

class Held(ConstrainedClusterer):
    '''Logs "<tag> <pid> <parent pid>" when a fit starts, then waits until the file ``release`` exists.'''

    def __init__(self, tag="", log=None, release=None, random_state=None):
        self.tag, self.log, self.release, self.random_state = tag, log, release, random_state

    def fit(self, X, y=None, *, constraints=None):
        if self.log:
            with open(self.log, "a") as f:
                f.write(f"{self.tag} {os.getpid()} {os.getppid()}\\n")
        end = time.monotonic() + 600
        while self.release and not os.path.exists(self.release) and time.monotonic() < end:
            time.sleep(0.05)
        self.labels_ = np.arange(len(X)) % 3
        return self

def load_doomed(die=False, tag="", log=None, **options):
    if die:  # runs in the joblib worker itself (data are loaded outside the isolated fit)
        os._exit(3)
    if log:  # "<tag> <pid>": the joblib worker running the job (its fits run in another process)
        with open(log, "a") as f:
            f.write(f"{tag} {os.getpid()}\\n")
    return load_dataset("iris")

@hookimpl
def ccbench_methods():
    return [MethodSpec("held", Held, "waits for a file")]

@hookimpl
def ccbench_datasets():
    return [DatasetSpec("doomed_iris", load_doomed, "iris, or the end of the process loading it")]
"""


@pytest.fixture
def plugin(tmp_path):
    d = tmp_path / "plugin"
    (d / "conf" / "method").mkdir(parents=True)
    (d / "conf" / "dataset").mkdir(parents=True)
    (d / f"{PLUGIN}.py").write_text(SOURCE)
    (d / "conf" / "method" / "held.yaml").write_text("name: held\n")
    (d / "conf" / "dataset" / "doomed_iris.yaml").write_text("name: doomed_iris\n")
    return d


def _command(plugin, sweep, *extra):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")]),
           "MPLBACKEND": "Agg"}
    cmd = [sys.executable, "-c", "import sys; from ccbench.running.cli import main; sys.exit(main())",
           "-m", "hydra/launcher=local", "hydra.launcher.n_jobs=2", "method=held", "constraints=none",
           "metrics=[ari]", f"plugins=[{PLUGIN}]", f"hydra.searchpath=[file://{plugin / 'conf'}]",
           f"hydra.sweep.dir={sweep}", *extra]
    return cmd, env


def _wait_for(predicate, what: str, proc=None, timeout: float = HANG):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the sweep ended (exit {proc.returncode}) before {what}:\n"
                                 f"{proc.stderr.read()[-3000:]}")
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")


def _without_a_sibling_killed_while_starting(err: str) -> str:
    """``err`` less the one traceback ccbench does not print: when a joblib worker dies, loky ends the other
    worker too, and if that one was starting its trial worker (multiprocessing's spawn), the half-started
    child prints the standard library's ``EOFError: Ran out of input`` before it dies (a race: seen once in
    two CI runs). Known and not fixed (issue 56's closing note); anything else stays in."""
    pattern = (r"Traceback \(most recent call last\):\n(?:  .*\n)*?.*multiprocessing/spawn\.py.*\n(?:  .*\n)*"
               r"EOFError: Ran out of input\n")
    return re.sub(pattern, "", err)


def _rows(sweep: Path) -> pd.DataFrame:
    return pd.concat([read_results(f) for f in sweep.rglob("results.parquet")], ignore_index=True)


def _lines(log: Path) -> list[list[str]]:
    return [line.split() for line in log.read_text().splitlines()] if log.exists() else []


def test_a_killed_joblib_worker_is_named_an_error_row_and_the_sweep_resumes(plugin, tmp_path):
    sweep, log, loads, release = tmp_path / "sweep", tmp_path / "fits.log", tmp_path / "loads.log", tmp_path / "release"
    cmd, env = _command(plugin, sweep, "dataset=doomed_iris", "dataset.tag=a,b", f"dataset.log={loads}", "n_trials=3",
                        f"method.log={log}", f"method.release={release}")
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:  # both jobs are fitting their first trial, each job in its own joblib worker

        def workers():
            return {int(pid): tag for tag, pid in _lines(loads) if int(pid) != proc.pid}

        _wait_for(lambda: len(set(workers().values())) == 2 and len(_lines(log)) == 2, "both jobs to start fitting",
                  proc)
        worker, tag = next(iter(workers().items()))
        os.kill(worker, signal.SIGKILL)
        release.touch()
        _, err = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:  # the sweep and its joblib workers
            _proc.kill_group(proc)
            proc.wait()
    assert proc.returncode == 1, err[-3000:]
    assert "Traceback" not in _without_a_sibling_killed_while_starting(err) and "TerminatedWorkerError" not in err, \
        err[-3000:]
    named = [line for line in err.splitlines() if f"worker (pid {worker})" in line]
    assert len(named) == 1, err[-3000:]  # one clear line: the job, the cause, what was recorded
    assert f"dataset.tag={tag}" in named[0] and "killed by signal 9 (SIGKILL" in named[0], named[0]
    assert "error row for trial 0" in named[0], named[0]
    rows = _rows(sweep)
    lost, other = rows[rows["dataset.tag"] == tag], rows[rows["dataset.tag"] != tag]
    assert lost["status"].tolist() == ["error"] and lost["trial"].tolist() == [0]
    assert lost["error"].iloc[0].startswith("WorkerDied: ") and "signal 9" in lost["error"].iloc[0]
    assert other["status"].tolist() == ["ok"] * 3  # the other job, stopped by joblib with it, ran again
    again = _proc.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG)
    assert again.returncode == 0, again.stderr[-3000:]
    rows = _rows(sweep)
    assert len(rows) == 6 and (rows["status"] == "ok").all()


def test_os_exit_in_a_joblib_worker_outside_the_fit_is_an_error_row_not_a_traceback(plugin, tmp_path):
    """``os._exit`` (or a crash in C) in code the worker runs itself, here a data set's loader, without
    ``trial_timeout``: one line naming the job and its exit status, an error row, the others run."""
    sweep = tmp_path / "sweep"
    cmd, env = _command(plugin, sweep, "dataset=doomed_iris", "dataset.die=true,false", "n_trials=2")
    proc = _proc.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "Traceback" not in _without_a_sibling_killed_while_starting(proc.stderr), proc.stderr[-3000:]
    named = [line for line in proc.stderr.splitlines() if "lost its joblib worker" in line]
    assert len(named) == 1 and "dataset.die=true" in named[0].lower(), proc.stderr[-3000:]
    assert "exited with status 3" in named[0], named[0]
    rows = _rows(sweep)
    died = rows[rows["dataset.die"].astype(bool)]
    assert died["status"].tolist() == ["error"] and "exited with status 3" in died["error"].iloc[0]
    assert rows[~rows["dataset.die"].astype(bool)]["status"].tolist() == ["ok", "ok"]


# -- the watcher itself: the first worker to die is the one named, with its cause -------------------


def _sleeper(code: str = "import time; time.sleep(600)") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code])


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="pidfds are Linux-only")
def test_the_first_worker_to_die_is_named_not_the_ones_killed_after_it(tmp_path):
    from ccbench.running.worker_deaths import WorkerDeaths

    first, second, idle = _sleeper(), _sleeper(), _sleeper()

    def mark(job, pid):  # as a worker does at the start of a job (mark_job, with another pid)
        (tmp_path / "marks" / f"{job}.{pid}").write_text(f'{{"out_dir": "{tmp_path / str(job)}", "start": 0}}')

    try:
        with WorkerDeaths(tmp_path / "marks") as deaths:
            mark(3, first.pid)
            mark(4, second.pid)
            _wait_for(lambda: {first.pid, second.pid, idle.pid} <= deaths._known, "the watcher to hold the workers")
            first.kill()  # the worker killed from outside
            _wait_for(lambda: len(deaths._deaths) == 1, "the watcher to see the death")
            second.kill()  # what joblib does to the other workers after a break
            _wait_for(lambda: len(deaths._deaths) == 2, "the watcher to see the second death")
            lost, death = deaths.lost()
            assert [(j.job, j.pid) for j in lost] == [(3, first.pid)], (lost, death)
            assert "killed by signal 9 (SIGKILL" in lost[0].cause
            assert deaths.markers() == {}  # cleared: the interrupted jobs run again
            idle.kill()  # a worker of the broken pool, killed late: not the cause of the next break
            _wait_for(lambda: len(deaths._deaths) == 1, "the watcher to see the late death")
            third = _sleeper("import os, time; time.sleep(0.5); os._exit(3)")  # the next pool's worker
            mark(7, third.pid)
            lost, death = deaths.lost(wait=HANG)
            third.wait()
            assert [(j.job, j.pid) for j in lost] == [(7, third.pid)], (lost, death)
            assert lost[0].cause.startswith("exited with status 3"), lost[0].cause
    finally:
        for proc in (first, second, idle):
            proc.kill()
            proc.wait()
    assert not (tmp_path / "marks").exists()
