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


# -- the task's trial_timeout worker: a fork of the task, not a second interpreter (issue 54, item 9) -----------
# A SLURM task's trial worker was spawned: a fresh interpreter importing numpy, scipy, scikit-learn, pandas and
# the harness again (2-2.5 s of the task's CPU to its first trial, beside the task's own 3 s). It is now forked
# from the task (ccbench.isolation.fork_is_safe); these run a process with the task's native threads (OpenBLAS's
# pool: numpy; jemalloc's: pyarrow) and a submitit-like USR2 handler, and ask its trial worker what it is.

_TASK_LIKE = r"""
import json, os, signal, sys, _thread, time
import numpy, pyarrow  # the native threads a task has: OpenBLAS's pool, jemalloc's background thread
from ccbench import isolation
from ccbench.isolation import IsolatedRunner, TrialTimeout, WorkerDied

fork_is_safe = getattr(isolation, "fork_is_safe", lambda: None)  # (none before workers were forked)

sys.modules["ccbench_task_only"] = type(sys)("ccbench_task_only")  # a module only this process imported
signal.signal(signal.SIGUSR2, lambda *a: print("requeued from", os.getpid(), flush=True))  # as submitit's
PROBE = ("(__import__('os').getppid(), 'ccbench_task_only' in __import__('sys').modules, "
         "open('/proc/self/cmdline', 'rb').read().decode('latin-1'), "
         "__import__('signal').getsignal(__import__('signal').SIGUSR2) == __import__('signal').SIG_DFL)")
if sys.argv[1] == "unsafe":  # a thread of some library, unknown to Python's threading: a fork would lose it
    _thread.start_new_thread(time.sleep, (60,))
out = {"me": os.getpid(), "cmdline": open("/proc/self/cmdline", "rb").read().decode("latin-1"), "safe": fork_is_safe()}
runner = IsolatedRunner()
out["first"], out["first_method"] = runner.call(eval, PROBE, timeout=None), getattr(runner, "start_method", None)
if sys.argv[1] == "safe":
    try:
        runner.call(eval, "__import__('os')._exit(3)", timeout=5)
    except WorkerDied as exc:
        out["died"] = str(exc)
    try:
        runner.call(eval, "[0 for _ in iter(int, 1)]", timeout=0.3)  # spins for ever
    except TrialTimeout as exc:
        out["spun"] = str(exc)
    out["after"], out["after_method"] = runner.call(eval, PROBE, timeout=None), getattr(runner, "start_method", None)
    runner._conn.close()  # the caller's end gone: the worker sees it (it must not hold a copy) and ends
    runner._proc.join(10)
    out["eof_exit"], runner._proc, runner._conn = runner._proc.exitcode, None, None
out["held"] = runner.call(eval, "__import__('os').getpid()", timeout=None)
print(json.dumps(out), flush=True)
runner.call(eval, "__import__('time').sleep(120)", timeout=None)  # held until the test kills this process
"""


def _run_task_like(mode: str) -> tuple[dict, int]:
    """Run ``_TASK_LIKE``; once it has answered, SIGKILL it (while its worker sleeps in a call) and
    return ``(its answers, seconds its held worker outlived it, -1 for never within 10 s)``."""
    import json
    import os
    import signal
    import time

    proc = subprocess.Popen([sys.executable, "-c", _TASK_LIKE, mode], stdout=subprocess.PIPE, text=True)
    try:
        out = json.loads(proc.stdout.readline() or "{}")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert out, "the task-like process did not answer"
    for waited in range(100):
        try:
            os.kill(out["held"], 0)
        except ProcessLookupError:
            return out, waited // 10
        time.sleep(0.1)
    os.kill(out["held"], signal.SIGKILL)
    return out, -1


def test_a_tasks_trial_worker_is_a_fork_of_the_task_with_its_modules_not_a_new_interpreter():
    """The trial worker of a process with a task's threads is forked from it: its parent is the task, it
    has the module only the task imported (no import work of its own), it runs the task's command line
    (a spawned worker runs ``multiprocessing.spawn``'s), and the task's USR2 handler (submitit's requeue)
    is not inherited. A fit ending its process (``os._exit``) or spinning past ``trial_timeout`` costs one
    call; the next worker is forked again; it ends when the task closes its end of the pipe; and it dies
    with the task (SIGKILL)."""
    out, outlived = _run_task_like("safe")
    for parent, has_task_module, cmdline, usr2_default in (out["first"], out["after"]):
        assert parent == out["me"] and has_task_module and cmdline == out["cmdline"] and usr2_default
    assert out["safe"] and out["first_method"] == out["after_method"] == "fork"
    assert out["first"] is not out["after"] and "exit code 3" in out["died"]
    assert "CPU time reached trial_timeout=0.3" in out["spun"] and out["eof_exit"] == 0
    assert outlived != -1, "the forked worker outlived its task by 10 s"


def test_a_task_with_a_thread_fork_would_lose_spawns_its_trial_worker():
    """A native thread the count cannot place (not Python's ``threading``, not OpenBLAS's or jemalloc's:
    an OpenMP or numba pool a fit started here) makes forking unsafe: the worker is then a new
    interpreter (without the task's modules), and still dies with the task."""
    out, outlived = _run_task_like("unsafe")
    assert not out["safe"] and out["first_method"] == "spawn"
    parent, has_task_module, cmdline, _ = out["first"]
    assert parent == out["me"] and not has_task_module and "multiprocessing" in cmdline
    assert outlived != -1, "the spawned worker outlived its task by 10 s"


def test_a_process_that_fitted_a_cell_itself_forks_no_trial_worker(monkeypatch):
    """Once a cell of this process runs without a worker (its fits here may start OpenMP or numba thread
    pools that a fork would not carry over), the harness's kept worker and any new one are spawned."""
    from ccbench.isolation import IsolatedRunner
    from ccbench.running import harness

    kept = IsolatedRunner()
    monkeypatch.setattr(harness, "_WORKER", kept)
    monkeypatch.setattr(harness, "_FORK_WORKERS", True)
    assert kept.fork
    harness._fits_in_this_process()
    assert not kept.fork and not harness._FORK_WORKERS
    monkeypatch.setattr(harness, "_WORKER", None)
    monkeypatch.setattr(harness.atexit, "register", lambda f: None)
    assert not harness._worker().fork
