"""``hydra/launcher=local``: Hydra's joblib launcher, each job composed once, a dead worker one lost job.

Hydra's joblib launcher sends every worker the config loader and has it compose the job
again (``execute_job``), after the sweeper composed it to check it: two compositions per job,
the second one Hydra's full one (a worker's unpickled loader has none of the sweeper's
templates). This launcher ships each job its config as the sweeper composed it (in a
stand-in loader that only returns it), so a job is composed once, in the main process.

A worker that dies (killed from outside, the out-of-memory killer, ``os._exit`` in code the worker
runs itself) broke the whole sweep with joblib's ``TerminatedWorkerError`` traceback, and joblib
kills the pool's other workers with it. Here the job that ran in the dead worker is named in one
line with the cause, recorded as an ``error`` row for the trial it had not recorded
(:mod:`ccbench.running.worker_deaths`), and the other jobs, the interrupted ones included, run on a
new pool; the command exits 1 and the same command resumes.

The workers are forked from a fork server (:func:`_fork_server`): one interpreter that imported the
harness once, single-threaded, with joblib's worker environment. Each job worker, and the trial
worker each of them keeps (:class:`ccbench.isolation.IsolatedRunner`: a fit that hangs past
``trial_timeout``, crashes or calls ``os._exit`` is one row, the job goes on), is a fork of it: the
sweep starts two interpreters (this one and the server) whatever ``n_jobs`` is, where each worker
and each trial worker used to be one importing the harness anew (issue 54, item 11: the joblib
launcher's CPU was 3.1-3.3x the basic launcher's on 30 cheap jobs).
"""

import contextlib
import os
from typing import Any, Dict, List, Sequence

from hydra.core.utils import JobReturn
from hydra.types import HydraContext
from hydra_plugins.hydra_joblib_launcher.joblib_launcher import JoblibLauncher

#: pool breaks in a row in which no lost job could be named before the launcher stops trying
MAX_BLIND_BREAKS = 3


class Composed:
    """A config loader that returns one job's config, composed already."""

    def __init__(self, config: Any):
        self.config = config

    def load_sweep_config(self, master_config: Any, sweep_overrides: List[str]) -> Any:
        return self.config


def execute_marked(marks: str, idx: int, overrides: Sequence[str], hydra_context: HydraContext, config: Any,
                   task_function: Any, singleton_state: Dict[Any, Any]) -> Any:
    """Hydra's ``execute_job`` (joblib launcher), with a marker in ``marks`` naming this worker and the
    job's output directory while the job runs: if the worker dies, the main process knows which job
    it lost and where to record it. Returns ``(idx, JobReturn)``."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.core.singleton import Singleton
    from hydra.core.utils import run_job, setup_globals
    from omegaconf import OmegaConf, open_dict

    from ccbench.running.worker_deaths import mark_job, unmark_job

    setup_globals()
    _set_singleton_state(singleton_state)
    config = _unpickled(config)
    sweep_config = hydra_context.config_loader.load_sweep_config(config, list(overrides))
    with open_dict(sweep_config):
        sweep_config.hydra.job.id = "{}_{}".format(sweep_config.hydra.job.name, idx)
        sweep_config.hydra.job.num = idx
    HydraConfig.instance().set_config(sweep_config)
    out_dir = os.path.abspath(os.path.join(str(OmegaConf.select(sweep_config, "hydra.sweep.dir")),
                                           str(OmegaConf.select(sweep_config, "hydra.sweep.subdir"))))
    marker = mark_job(marks, idx, out_dir)
    try:
        return idx, run_job(hydra_context=hydra_context, config=sweep_config, task_function=task_function,
                            job_dir_key="hydra.sweep.dir", job_subdir_key="hydra.sweep.subdir")
    finally:
        unmark_job(marker)


def _unpickled(value: Any) -> Any:
    """A value the launcher pickled once for every job (:func:`_pickled_once`), or any other as it is."""
    import pickle

    return pickle.loads(value) if isinstance(value, bytes) else value


def _set_singleton_state(state: Any) -> None:
    """Hydra's ``Singleton.set_state``, keeping this worker's ``Plugins``.

    Hydra drops ``Plugins`` from the state it ships and ``set_state`` rebuilds it: a scan of every
    installed Hydra plugin (``pkgutil.walk_packages``, an import of each module), which a joblib
    worker repeated before every job (issue 54: 20-40 ms of CPU a job). The plugins a worker found
    for its first job are the same for its next ones: the installed packages do not change during a
    sweep, and what the sweep registers itself (``ccbench.running.app``) is registered at import."""
    from hydra.core.plugins import Plugins
    from hydra.core.singleton import Singleton

    state = _unpickled(state)
    found = Singleton._instances.get(Plugins)
    if found is not None:
        state = {**state, "instances": {**state["instances"], Plugins: found}}
    Singleton.set_state(state)


class CCBenchJoblibLauncher(JoblibLauncher):
    """See the module docstring."""

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        import logging
        import tempfile
        from pathlib import Path

        from hydra.core.singleton import Singleton
        from hydra.core.utils import configure_log, filter_overrides, setup_globals
        from hydra_plugins.hydra_joblib_launcher._core import process_joblib_cfg
        from joblib import Parallel, delayed
        from joblib.externals.loky.process_executor import BrokenProcessPool

        from ccbench.running.worker_deaths import WorkerDeaths

        assert self.config is not None and self.task_function is not None and self.hydra_context is not None
        log = logging.getLogger(__name__)
        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        joblib_cfg = self.joblib
        joblib_cfg["backend"] = "loky"
        process_joblib_cfg(joblib_cfg)
        log.info("Joblib.Parallel({}) is launching {} jobs".format(
            ",".join(f"{k}={v}" for k, v in joblib_cfg.items()), len(job_overrides)))
        modules = _method_modules(self.config, job_overrides)
        forked = _fork_server(joblib_cfg.get("n_jobs"), modules)
        log.info(f"Launching jobs, sweep output dir : {sweep_dir}")
        for idx, overrides in enumerate(job_overrides):
            log.info(f"\t#{idx} : {' '.join(filter_overrides(overrides))}")
        # pickled once here, not once per job by joblib (24 and 18 KB, a few ms each): a worker unpickles them
        singleton_state, master = _pickled_once(Singleton.get_state()), _pickled_once(self.config)
        loader, callbacks = self.hydra_context.config_loader, self.hydra_context.callbacks

        def context(overrides: Sequence[str]) -> HydraContext:
            config = loader.load_sweep_config(self.config, list(overrides))
            return HydraContext(config_loader=Composed(config), callbacks=callbacks)

        runs: Dict[int, JobReturn] = {}
        todo = list(range(len(job_overrides)))
        blind = 0
        with WorkerDeaths(tempfile.mkdtemp(prefix="ccbench-jobs-")) as deaths, _loky_start_method(forked):
            while todo:
                if forked:  # a new pool after a break: from a live server (one killed is started again)
                    _fork_server(joblib_cfg.get("n_jobs"), modules)
                try:
                    for idx, ret in Parallel(**joblib_cfg, return_as="generator_unordered")(
                            delayed(execute_marked)(str(deaths.folder), initial_job_idx + i, job_overrides[i],
                                                    context(job_overrides[i]), master, self.task_function,
                                                    singleton_state)
                            for i in todo):
                        runs[idx - initial_job_idx] = ret
                    todo = []
                except BrokenProcessPool as exc:  # a worker died; joblib stopped the others
                    todo = [i for i in todo if i not in runs]
                    lost, death = deaths.lost(exc)
                    for job in lost:
                        i = job.job - initial_job_idx
                        runs[i] = self._lost(job, job_overrides[i])
                        todo.remove(i)
                    blind = 0 if lost else blind + 1
                    if not lost:
                        _say(f"a joblib worker died ({death or 'which one and how is unknown here'}) while no job "
                             f"could be named as running in it; the {len(todo)} unfinished job(s) start again")
                    if blind >= MAX_BLIND_BREAKS:
                        for i in todo:
                            runs[i] = self._lost(None, job_overrides[i], initial_job_idx + i, death)
                        todo = []
        return [runs[i] for i in range(len(job_overrides))]

    def _lost(self, job: Any, overrides: Sequence[str], num: int = -1, death: Any = None) -> JobReturn:
        """Name a job whose worker died (one line), record its error row, and return it as completed:
        a failed ``JobReturn`` would make Hydra's sweeper raise and stop the sweep; the failure is in
        the row (and the exit status) instead."""
        from hydra.core.utils import JobStatus, filter_overrides

        from ccbench.running.worker_deaths import note_lost_job, record_lost_trial

        cells = " ".join(filter_overrides(overrides))
        if job is None:
            line = (f"job #{num} ({cells}) was not run: the joblib pool broke {MAX_BLIND_BREAKS} times in a row "
                    f"({death or 'no dead worker identified'}); re-run the same command to run it")
        else:
            try:
                trial = record_lost_trial(job.out_dir, job.cause, job.start)
            except Exception as exc:  # noqa: BLE001 - a damaged results file: named, the sweep goes on
                trial, why = None, f"; its error row could not be written ({type(exc).__name__}: {exc})"
            else:
                why = ""
            recorded = (f"recorded as an error row for trial {trial} in {job.out_dir}" if trial is not None else
                        f"no trial row to record in {job.out_dir}{why}")
            line = (f"job #{job.job} ({cells}) lost its joblib worker (pid {job.pid}), which {job.cause}; "
                    f"{recorded}; the other jobs go on. Re-run the same command to run it again "
                    f"(finished trials are kept)")
        _say(line)
        note_lost_job(line)
        return JobReturn(overrides=list(overrides), status=JobStatus.COMPLETED, _return_value={})


#: The module the fork server imports before it forks any worker (what a job needs).
PRELOAD = "hydra_plugins.ccbench_sweeper._worker_preload"
#: The environment variable naming, for :data:`PRELOAD`, the modules of the sweep's built-in methods.
METHODS_ENV = "CCBENCH_PRELOAD_MODULES"

_server_env: Dict[str, str] | None = None


def _fork_server(n_jobs: Any, modules: Sequence[str]) -> bool:
    """Start (or keep) the fork server the launch's workers are forked from; False when joblib runs
    the jobs in this process (``n_jobs`` 1) and there are no workers.

    The server is a new interpreter, single-threaded, that imports :data:`PRELOAD` (and ``modules``)
    once, with the environment joblib gives its workers (its thread limits: one BLAS thread a job
    on two cores); a worker forked from it starts with all of it imported, and so does the trial
    worker (:class:`ccbench.isolation.IsolatedRunner`) each job worker forks from the same server.
    Before, each of the two was an interpreter of its own importing the harness (issue 54, item 11)."""
    import atexit
    from multiprocessing import forkserver

    from joblib._parallel_backends import LokyBackend

    global _server_env
    backend = LokyBackend()
    n = backend.effective_n_jobs(n_jobs if n_jobs is not None else 1)
    if n <= 1:
        return False
    env = {**os.environ, **backend._prepare_worker_env(n), METHODS_ENV: ",".join(modules)}
    if _server_env is not None and _server_env != env:
        _stop_fork_server()  # started for another sweep, whose environment its workers would inherit
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        forkserver.set_forkserver_preload([PRELOAD])
        forkserver.ensure_running()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    if _server_env is None:
        atexit.register(_stop_fork_server)
    _server_env = env
    return True


def _stop_fork_server(wait: float = 10.0) -> None:
    """Stop the pool and then the fork server, and reap it (within ``wait`` seconds): its workers'
    CPU time is then this process's children's, and no process outlives the command."""
    import time
    from multiprocessing import forkserver

    from joblib.externals.loky import reusable_executor

    global _server_env
    executor = reusable_executor._executor
    if executor is not None:  # idle at a sweep's end; after Ctrl-C its jobs must not hold the exit
        executor.shutdown(wait=True, kill_workers=True)
    server = forkserver._forkserver
    pid, server._forkserver_pid = server._forkserver_pid, None
    if server._forkserver_alive_fd is not None:
        os.close(server._forkserver_alive_fd)  # the server ends once every process holding this has
        server._forkserver_alive_fd = None
    server._forkserver_address = None
    _server_env = None
    deadline = time.monotonic() + wait
    while pid is not None and time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                return
        except ChildProcessError:
            return
        time.sleep(0.02)


def _method_modules(config: Any, job_overrides: Sequence[Sequence[str]]) -> List[str]:
    """The modules of the built-in methods the launch runs (``method=NAME`` overrides and the
    config's own method), for the fork server to import once. Only ccbench's own plugins: a third
    party's module is imported where it always was (a hang at its import stays in one job)."""
    from omegaconf import OmegaConf

    from ccbench import registry

    names = {str(OmegaConf.select(config, "method.name", default=""))}
    names |= {o.split("=", 1)[1] for overrides in job_overrides for o in overrides if o.startswith("method=")}
    modules = set()
    try:
        specs = registry._specs("methods")
    except Exception:  # noqa: BLE001 - a broken plugin: the jobs say so; nothing to preload
        return []
    for name in names:
        estimator = getattr(specs.get(name), "estimator", None)
        module = estimator.partition(":")[0] if isinstance(estimator, str) else getattr(estimator, "__module__", "")
        if module.startswith("ccbench_plugins."):
            modules.add(module)
    return sorted(modules)


@contextlib.contextmanager
def _loky_start_method(forked: bool):
    """loky forks its workers from the fork server (:func:`_fork_server`) while the launch runs
    (joblib passes no start method on to loky), and starts them as before afterwards."""
    from joblib.externals.loky.backend import context

    previous = context.get_start_method()
    context.set_start_method("forkserver" if forked else previous, force=True)
    try:
        yield
    finally:
        context.set_start_method(previous, force=True)


def _pickled_once(value: Any) -> bytes:
    """``value`` pickled as joblib pickles a job's arguments (loky's pickler: cloudpickle when installed)."""
    from joblib.externals.loky.backend.reduction import dumps

    return bytes(dumps(value))


def _say(line: str) -> None:
    import sys

    sys.stderr.write(f"ccbench: {line}\n")
    sys.stderr.flush()
