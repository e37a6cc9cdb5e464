"""``hydra/launcher=slurm``: Hydra's submitit SLURM launcher with these changes.

- Before submitting, what each task asks for is checked against the partition
  (:func:`ccbench.running.slurm.request_problems`), the array's length against the
  cluster's ``MaxArraySize`` (:func:`~ccbench.running.slurm.array_problems`), and both against
  the accounting limits SLURM enforces (account, QOS, ``MaxSubmitJobs``, ``MaxWall``,
  ``MaxTRESPerJob``: :func:`ccbench.running.slurm_limits.limit_problems`): a request SLURM
  would refuse or never run stops the sweep at once (exit status 2, one line per problem)
  instead of an ``sbatch`` error or a task pending forever.
- It waits for every task, asking SLURM for the whole array's states in one query per poll
  (``sacct``; without accounting ``squeue``/``scontrol``, and it says so), then names every task
  that did not finish (killed, cancelled, out of memory, timed out too often) with the cells it
  ran, all together, with the command that resumes, and exits 1; Hydra's own stops at the first
  such task with submitit's traceback while the others still run, and submitit waits 15 s for
  each failed task's result file, and forever without ``sacct``.
- With packed cells (``hydra.sweeper.cells_per_task``), a task's cells are all named.
- A task starts through ``_task_start.py`` (:func:`task_python`): a preemption signal during its
  start-up is recorded and handed to submitit's handler once it exists (the task requeues), not
  fatal; the last allowed time limit stops the task (``task_time_limit``).
- The ccbench sweeper submits only the cells that are not complete
  (``submits_incomplete_cells_only``): a resume submits the lost tasks' cells, not the grid.
"""

import sys
from pathlib import Path
from typing import Any, List, Sequence

from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, filter_overrides
from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher
from omegaconf import OmegaConf


def _asks_memory(params: dict) -> bool:
    extra = params.get("additional_parameters") or {}
    return any(params.get(k) or extra.get(k) for k in ("mem", "mem_per_cpu", "mem_per_gpu"))


def _last_line(path: Path) -> str:
    """``; <last non-empty line of the task's error log>``, or nothing."""
    try:
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines()[-50:] if line.strip()]
    except OSError:
        return ""
    return f"; {lines[-1]}" if lines else ""


def task_python() -> str:
    """The command submitit starts each task's Python with (its ``python`` parameter; submitit
    appends ``-u -m submitit.core._submit FOLDER``): ``sh`` ignoring the preemption signal from
    its first instruction, then this interpreter running ``_task_start.py``, which records the
    signal until submitit's handler exists (see that file)."""
    import os
    import shlex

    start = Path(__file__).with_name("_task_start.py")
    name = os.environ.get("SUBMITIT_PREEMPT_SIGNAL", "USR2")
    inner = f"trap '' {name}; exec {shlex.quote(sys.executable)} -u {shlex.quote(str(start))} \"$@\""
    return f"sh -c {shlex.quote(inner)} ccbench-task"


def _raised(text: str) -> str:
    """The exception line of a task's error as submitit words it: its traceback stands between two
    lines of dashes, followed by the paths of the logs (whose last line was named instead)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    rules = [i for i, line in enumerate(lines) if set(line) == {"-"}]
    if len(rules) >= 2 and rules[-1] - rules[-2] > 1:
        return lines[rules[-1] - 1]
    return lines[-1] if lines else ""


class CCBenchSlurmLauncher(SlurmLauncher):
    """See the module docstring."""

    #: the ccbench sweeper launches only the cells not yet complete (a resume submits the missing ones)
    submits_incomplete_cells_only = True

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        import logging

        import submitit

        from ccbench.running.slurm import (array_problems, default_mem_gb, failure_report, request_problems,
                                           resume_command)
        from ccbench.running.slurm_limits import limit_problems
        from ccbench.running.validate import ConfigProblems

        assert self.config is not None and len(job_overrides) > 0
        params = dict(self.params)
        if params.get("mem_gb") is None and not _asks_memory(params):
            params["mem_gb"] = default_mem_gb(params.get("partition"))
        problems = (request_problems(params) + array_problems(len(job_overrides))
                    + limit_problems(params, len(job_overrides)))
        if problems:
            raise ConfigProblems(["SLURM cannot run these tasks: " + p for p in problems])
        log = logging.getLogger(__name__)
        init_keys = {"max_num_timeout", "submitit_folder"}
        executor = submitit.AutoExecutor(cluster=self._EXECUTOR, folder=params["submitit_folder"],
                                         slurm_max_num_timeout=params.get("max_num_timeout", 0),
                                         slurm_python=task_python())
        baseparams = set(OmegaConf.structured(BaseQueueConf).keys())
        executor.update_parameters(**{k if k in baseparams else f"{self._EXECUTOR}_{k}": v
                                      for k, v in params.items() if k not in init_keys})
        log.info(f"Submitit '{self._EXECUTOR}' sweep output dir : {self.config.hydra.sweep.dir}")
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        job_params: List[Any] = []
        for idx, overrides in enumerate(job_overrides, start=initial_job_idx):
            log.info(f"\t#{idx} : {' '.join(filter_overrides(overrides))}")
            job_params.append((list(overrides), "hydra.sweep.dir", idx, f"job_id_for_{idx}", Singleton.get_state()))
        jobs = executor.map_array(self, *zip(*job_params))
        returns, failed = self._collect(jobs, job_params, log)
        if failed:
            raise SystemExit(failure_report(failed, resume_command(sys.argv)))
        return returns

    def __call__(self, *args: Any, **kwargs: Any) -> JobReturn:
        """The task's work (in the SLURM task, under submitit), with submitit's ``USR2`` handler
        changed for the last allowed time-out (:func:`ccbench.running.slurm.stop_at_last_time_limit`):
        the trial it interrupts is recorded as ``task_time_limit`` and the task stops, ending with
        submitit's ``UncompletedJobError`` (its result file says why; the launcher names the task).
        A signal the task's start-up recorded (``_task_start.py``) is handed to the handler first."""
        import signal

        import submitit
        from submitit.core.utils import UncompletedJobError

        from ccbench.running.slurm import TaskTimeLimit, replay_early_signal, stop_at_last_time_limit

        usr = submitit.JobEnvironment._usr_sig()
        current = signal.getsignal(usr)
        if callable(current) and not hasattr(current, "wrapped"):
            signal.signal(usr, stop_at_last_time_limit(current, UncompletedJobError))
        try:
            # a signal that came during start-up (recorded by _task_start.py): requeue before any cell runs
            replay_early_signal(signal.getsignal(usr), warn=lambda line: print(line, file=sys.stderr, flush=True))
            return super().__call__(*args, **kwargs)
        except TaskTimeLimit as exc:
            raise UncompletedJobError(str(exc)) from None

    def _collect(self, jobs: Sequence[Any], job_params: Sequence[Any], log: Any) -> tuple:
        """``(returns, failed)``: every task waited for with one state query per poll for the whole
        array (:func:`ccbench.running.slurm.wait_for_array`), then the results read, and the tasks
        that did not finish named all together."""
        from ccbench.running.slurm import wait_for_array

        by_id = {job.job_id: job for job in jobs}
        ended = wait_for_array(list(by_id), lambda t: by_id[t].paths.result_pickle.exists(),
                               warn=lambda line: print(line, file=sys.stderr, flush=True))
        returns, failed = [], []
        for job, (overrides, _, idx, _, _) in zip(jobs, job_params):
            if job.job_id in ended:
                failed.append((job.job_id, f"SLURM state {ended[job.job_id]}" + _last_line(job.paths.stderr),
                               self.cells_of(idx, overrides)))
                continue
            try:
                returns.append(job.results()[0])
            except Exception as exc:  # noqa: BLE001 - the task's own error: named with the others
                detail = _raised(str(exc))
                what = "the task raised" + (f": {detail}" if detail else "")
                failed.append((job.job_id, what, self.cells_of(idx, overrides)))
        return returns, failed

    def cells_of(self, job_num: int, overrides: Sequence[str]) -> List[str]:
        """The cells (override lines) a task runs: its own, plus the packed ones."""
        cells = [" ".join(filter_overrides(overrides))]
        pack = getattr(self.task_function, "pack_of", None)
        if pack is not None:
            cells += [" ".join(filter_overrides(o)) for o in pack(job_num)]
        return cells
