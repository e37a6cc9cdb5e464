"""The harness's own cost per job (issue 54): what a job asks again and again is worked out once."""

from __future__ import annotations

import os

import pytest

from ccbench.running import provenance


def test_a_modules_imports_are_parsed_once_while_its_file_is_unchanged(tmp_path, monkeypatch):
    """Every job asked which modules its method's modules import (``code.inputs``), and each asking
    parsed the files again (a twentieth of the quick start); an edited file is parsed anew."""
    module = tmp_path / "some_method.py"
    module.write_text("import os\nfrom . import helper\n")
    parsed = []
    parse = provenance.ast.parse
    monkeypatch.setattr(provenance.ast, "parse", lambda source, **kw: parsed.append(kw) or parse(source, **kw))
    first = provenance._imported_modules("pkg.some_method", module)
    again = provenance._imported_modules("pkg.some_method", module)
    parsed_twice = len(parsed)
    module.write_text("import os\nimport json  # a new input\n")
    edited = provenance._imported_modules("pkg.some_method", module)
    monkeypatch.undo()  # pytest's own reporting parses source too
    assert first == again == {"os", "pkg", "pkg.helper"}
    assert parsed_twice == 1
    assert edited == {"os", "json"} and len(parsed) == 2


def test_a_joblib_worker_scans_hydra_plugins_once_not_before_every_job(monkeypatch):
    """Hydra's ``Singleton.set_state`` (what a joblib worker ran before each job) rebuilds ``Plugins``:
    a scan of every installed Hydra plugin, each time. The launcher keeps the worker's own."""
    from hydra.core.plugins import Plugins
    from hydra.core.singleton import Singleton

    from hydra_plugins.ccbench_sweeper import joblib_launcher

    scans = []
    initialize = Plugins._initialize
    monkeypatch.setattr(Plugins, "_initialize", lambda self: scans.append(1) or initialize(self))
    monkeypatch.setattr(Singleton, "_instances", dict(Singleton._instances))  # restored after the test
    state = Singleton.get_state()  # as the launcher ships it: without Plugins
    Singleton._instances.pop(Plugins, None)
    shipped = joblib_launcher._pickled_once(state)  # each job unpickles its own copy
    for _ in range(3):
        Singleton.set_state(joblib_launcher._unpickled(shipped))
    hydras = len(scans)
    scans.clear()
    Singleton._instances.pop(Plugins, None)  # a fresh worker
    for _ in range(3):  # three jobs, the state pickled once by the launcher
        joblib_launcher._set_singleton_state(shipped)
    ours = len(scans)
    found = Plugins.instance().plugin_type_to_subclass_list
    monkeypatch.undo()
    assert hydras == 3
    assert ours == 1 and found  # the plugins were found, once


# -- the joblib launcher's interpreters (issue 54, item 11) ------------------------------------------------------
# Each loky worker was an interpreter importing the harness, and each started a trial worker (ccbench.isolation)
# that imported it again: 1 + 2 x n_jobs interpreters a sweep, the joblib launcher's CPU 3.1-3.3x the basic one's
# on 30 cheap jobs. Now one fork server imports it and every worker, trial workers included, is a fork of it.


def test_a_trial_worker_of_a_forked_worker_is_forked_by_the_same_server_not_a_new_interpreter():
    """A process the fork server forked (a joblib worker) gets its trial worker from that server: a fork of a
    process that imported everything, its parent the server, not a spawned interpreter, the caller's child.
    Killed at its CPU limit and ended by ``os._exit`` it is still one error each, and is replaced."""
    import multiprocessing as mp
    from multiprocessing import forkserver

    from _forked_probe import probe

    if "forkserver" not in mp.get_all_start_methods():
        pytest.skip("no fork server on this platform")
    ctx = mp.get_context("forkserver")
    forkserver.set_forkserver_preload(["ccbench.isolation"])
    try:
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=probe, args=(child,))
        proc.start()
        out = parent.recv() if parent.poll(120) else {}
        proc.join(30)
    finally:
        forkserver._forkserver._stop()
        forkserver.set_forkserver_preload(["__main__"])
    assert out, "the forked process did not answer"
    (first, first_parent), (after, after_parent) = out["first"], out["after"]
    assert first_parent == after_parent == out["server"] != out["me"]  # forked by the server, not spawned
    assert first != after  # the worker that died was replaced
    assert "exit code 3" in out["died"] and "CPU time reached trial_timeout=0.3" in out["timeout"]


_COUNT_STARTS = """
import os
with open(os.environ["CCBENCH_TEST_STARTS"], "a") as f:
    f.write(f"{os.getpid()}\\n")
"""


@pytest.mark.slow  # a sweep in a subprocess (about 30-90 s): pytest -m slow tests/test_harness_cost.py
def test_a_joblib_sweep_starts_the_same_few_interpreters_whatever_n_jobs(tmp_path):
    """Interpreters started (a ``sitecustomize`` runs at each start, not at a fork) by a joblib sweep of 4 jobs
    with ``n_jobs=2``: the command, the fork server, multiprocessing's and loky's resource trackers. The
    launcher's workers and their trial workers are forks: the code before the fork server started 8."""
    import subprocess
    import sys

    import _proc
    from ccbench.running.results import read_results

    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_COUNT_STARTS)
    starts = tmp_path / "starts.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")]),
           "CCBENCH_TEST_STARTS": str(starts), "MPLBACKEND": "Agg"}
    sweep = tmp_path / "sweep"
    cmd = [sys.executable, "-c", "import sys; from ccbench.running.cli import main; sys.exit(main())", "-m",
           "hydra/launcher=local", "hydra.launcher.n_jobs=2", "method=kmeans", "dataset=iris", "constraints=random_pairs",
           "constraints.n_constraints=0,10,20,30", "n_trials=2", "metrics=[ari]", f"hydra.sweep.dir={sweep}"]
    proc = _proc.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [read_results(f) for f in sweep.rglob("results.parquet")]
    assert len(rows) == 4 and all((r["status"] == "ok").all() and len(r) == 2 for r in rows)
    started = starts.read_text().split()
    assert len(started) <= 4, started
