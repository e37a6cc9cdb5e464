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

# No `from __future__ import annotations`: Hydra's plugin scan executes this module before it is
# in sys.modules, where string annotations break @dataclass.
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from hydra.core.config_store import ConfigStore
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, filter_overrides
from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf, SlurmQueueConf
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher
from omegaconf import OmegaConf

#: the launcher's keys that are ccbench's, not submitit's (never passed to the executor)
CCBENCH_KEYS = ("mem_gb_by_method", "detach")


@dataclass
class CCBenchSlurmConf(SlurmQueueConf):
    """submitit's SLURM launcher config with ccbench's keys (``conf/hydra/launcher/slurm.yaml``)."""

    _target_: str = "hydra_plugins.ccbench_sweeper.slurm_launcher.CCBenchSlurmLauncher"
    # memory per task (GB) for the cells of these methods; every other method gets mem_gb. Cells of
    # one memory class share tasks and each class is submitted as its own array with its own --mem
    # (null: none, every task asks for mem_gb)
    mem_gb_by_method: Optional[Dict[str, float]] = field(default_factory=dict)
    # submit, then a report job that runs after every task (--dependency=afterany), and exit at once
    detach: bool = False


ConfigStore.instance().store(group="hydra/launcher", name="ccbench_slurm", node=CCBenchSlurmConf, provider="ccbench")


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


#: the file the detached sweep's report job writes in the sweep directory
DETACHED_REPORT = "slurm_report.txt"


def _memory_classes(mems: Sequence[Any]) -> Dict[Any, List[int]]:
    """``{memory class: [task positions]}`` in the order of each class's first task."""
    classes: Dict[Any, List[int]] = {}
    for i, mem in enumerate(mems):
        classes.setdefault(mem, []).append(i)
    return classes


def submit_by_class(executor: Any, function: Any, job_params: Sequence[Any], classes: Dict[Any, List[int]],
                    default_mem_gb: Any) -> List[Any]:
    """``[(job, job params)]``: one array per memory class (``classes``: ``{mem GB or None:
    [positions in job_params]}``), each submitted with its own ``--mem`` (``None``: ``default_mem_gb``);
    submitit's executor holds one parameter set per ``map_array``."""
    submitted: List[Any] = []
    for mem, members in classes.items():
        executor.update_parameters(mem_gb=default_mem_gb if mem is None else mem)
        chosen = [job_params[i] for i in members]
        submitted += zip(executor.map_array(function, *zip(*chosen)), chosen)
    return submitted


def detached_message(arrays: Sequence[str], report_job: str, report: Path, resume: str) -> str:
    """What a detached sweep prints: its jobs, how to follow them, where the report comes, how to resume."""
    return (f"ccbench: submitted SLURM array(s) {', '.join(arrays)} and report job {report_job} (runs after them: "
            f"--dependency=afterany); this command is done, the sweep runs on without it.\n"
            f"  follow it:  squeue -j {','.join([*arrays, report_job])}\n"
            f"  its report, once job {report_job} has run: {report} (the tasks that did not finish, with their "
            f"cells) and the summary (`ccbench report {report.parent}`'s: report/ or leaderboard/ there)\n"
            f"  resume (only incomplete cells are submitted):\n    {resume}")


def _forget_progress(sweep: Path) -> None:
    """Remove the submitting command's progress markers, as its end of sweep would have (the
    detached command exited before it; the run's name reaches the report job in its environment)."""
    from ccbench.running.sweep_progress import forget_progress

    forget_progress(sweep)


def _write_summary(sweep: Path) -> None:
    """The end-of-sweep summary of ``sweep``: ``ccbench report <sweep>`` (``<sweep>/report/summary.md``
    and the rest), in a process of its own (the CLI imports this launcher: importing it here closed a
    cycle). A failed summary fails the report job (its log says why); the report file is written first."""
    import subprocess

    status = subprocess.run([sys.executable, "-c", "import sys; from ccbench.running.cli import main; "
                             "sys.exit(main(sys.argv[1:]))", "report", str(sweep)]).returncode
    if status:
        raise RuntimeError(f"ccbench report {sweep} exited {status}; {DETACHED_REPORT} is written, the summary is not")


class CCBenchSlurmLauncher(SlurmLauncher):
    """See the module docstring."""

    #: the ccbench sweeper launches only the cells not yet complete (a resume submits the missing ones)
    submits_incomplete_cells_only = True

    def resource_class(self, overrides: Sequence[str]) -> Any:
        """The memory (GB) a cell's task asks for: ``mem_gb_by_method[<its method>]``, else ``None``
        (the launcher's ``mem_gb``). Read from the cell's composed config (``method.name``; composed
        once, the sweeper's loader keeps it); nothing is composed when ``mem_gb_by_method`` is empty."""
        by_method = self.params.get("mem_gb_by_method") or {}
        if not by_method:
            return None
        assert self.hydra_context is not None and self.config is not None
        config = self.hydra_context.config_loader.load_sweep_config(self.config, list(overrides))
        return by_method.get(str(OmegaConf.select(config, "method.name")))

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        import logging

        import submitit

        from ccbench.running.slurm import (array_problems, default_mem_gb, failure_report, request_problems,
                                           resume_command)
        from ccbench.running.slurm_limits import limit_problems
        from ccbench.running.validate import ConfigProblems

        assert self.config is not None and len(job_overrides) > 0
        params = {k: v for k, v in self.params.items() if k not in CCBENCH_KEYS}
        if self.params.get("detach") and OmegaConf.select(self.config, "hydra.sweeper.max_batch_size") is not None:
            # the first batch's launch exits: the later batches would never be submitted
            raise ConfigProblems(["hydra.launcher.detach=true submits once and exits, so with "
                                  "hydra.sweeper.max_batch_size the later batches would never be submitted: drop "
                                  "max_batch_size (hydra.sweeper.max_tasks packs the grid into fewer tasks instead)"])
        if params.get("mem_gb") is None and not _asks_memory(params):
            params["mem_gb"] = default_mem_gb(params.get("partition"))
        classes = _memory_classes([self.resource_class(o) for o in job_overrides])
        if set(classes) != {None} and _asks_memory({**params, "mem_gb": None}):
            raise ConfigProblems(["hydra.launcher.mem_gb_by_method sets --mem for some of these cells' methods and "
                                  "cannot be combined with mem_per_cpu, mem_per_gpu or additional_parameters.mem: drop "
                                  "those, or set hydra.launcher.mem_gb_by_method=null"])
        problems: List[str] = []
        for mem, members in classes.items():
            asks = params if mem is None else {**params, "mem_gb": mem}
            found = request_problems(asks) + limit_problems(asks, len(job_overrides))
            where = "" if mem is None else f"the tasks of mem_gb_by_method ({mem} GB): "
            problems += [where + p for p in found if where + p not in problems]
            problems += [p for p in array_problems(len(members)) if p not in problems]
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
            job_params.append((list(overrides), "hydra.sweep.dir", idx, f"job_id_for_{idx}", Singleton.get_state(),
                               self.composed_cells(idx, overrides)))
        submitted = submit_by_class(executor, self, job_params, classes, params["mem_gb"])
        if self.params.get("detach"):
            raise SystemExit(self._detach(executor, submitted, resume_command(sys.argv), params["mem_gb"]))
        returns, failed = self._collect(submitted, log)
        if failed:
            raise SystemExit(failure_report(failed, resume_command(sys.argv)))
        return returns

    def composed_cells(self, job_num: int, overrides: Sequence[str]) -> Dict[tuple, Any]:
        """``{cell overrides: composed config}`` of the cells task ``job_num`` runs (its own and the
        packed ones), shipped in the task's pickle so that the task composes nothing.

        A task is a fresh interpreter: the sweeper's compose-once cache (:class:`ComposeOnceLoader`)
        does not travel with it (its pickle leaves the caches out), so each task composed its cells
        again with Hydra, about 0.35 s of CPU for each distinct method of its pack. The configs are
        the ones this process composed to validate the batch (the loader hands each out once; a
        cell it no longer holds is composed here, from its templates, in about 1 ms)."""
        loader = self.hydra_context.config_loader
        cells = [list(overrides)]
        pack = getattr(self.task_function, "pack_of", None)
        if pack is not None:
            cells += [list(o) for o in pack(job_num)]
        return {tuple(cell): loader.load_sweep_config(self.config, cell) for cell in cells}

    def _install_composed(self, composed: Optional[Dict[tuple, Any]]) -> None:
        """Hand the shipped configs (:meth:`composed_cells`) to this task's compose-once loader, keyed
        as its ``load_sweep_config`` looks them up (the master config's id: the launcher's and the
        packed task's, one object unless a task function holds its own)."""
        cache = getattr(self.hydra_context.config_loader, "_composed", None)
        if not composed or cache is None:
            return
        import copy

        masters = {id(self.config)} | {id(getattr(self.task_function, "config", self.config))}
        for overrides, config in composed.items():
            # a copy: running a cell makes its config read-only (HydraConfig), and submitit pickles the
            # task's arguments, ``composed`` included, again when it requeues the task; the requeued task
            # could then not set hydra.job.id ("object_type=JobConf", test_a_requeued_task_finishes)
            for master in masters:
                cache[(master, tuple(overrides))] = copy.deepcopy(config)

    def __call__(self, sweep_overrides: List[str], job_dir_key: str, job_num: int, job_id: str,
                 singleton_state: Dict[type, Singleton], composed: Optional[Dict[tuple, Any]] = None) -> JobReturn:
        """The task's work (in the SLURM task, under submitit), with submitit's ``USR2`` handler
        changed for the last allowed time-out (:func:`ccbench.running.slurm.stop_at_last_time_limit`):
        the trial it interrupts is recorded as ``task_time_limit`` and the task stops, ending with
        submitit's ``UncompletedJobError`` (its result file says why; the launcher names the task).
        A signal the task's start-up recorded (``_task_start.py``) is handed to the handler first.
        ``composed``: the cells' configs composed by the submitting process (:meth:`composed_cells`);
        the task runs them as they are, composing nothing (without them, as a task pickled by an
        older ccbench: Hydra composes each cell here)."""
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
            self._install_composed(composed)
            return super().__call__(sweep_overrides, job_dir_key, job_num, job_id, singleton_state)
        except TaskTimeLimit as exc:
            raise UncompletedJobError(str(exc)) from None

    def _collect(self, submitted: Sequence[Any], log: Any) -> tuple:
        """``(returns, failed)`` of ``submitted`` (``(job, job params)`` pairs): every task waited for
        with one state query per poll per array (:func:`ccbench.running.slurm.wait_for_array`), then
        the results read, and the tasks that did not finish named all together."""
        from ccbench.running.slurm import wait_for_array

        by_id = {job.job_id: job for job, _ in submitted}
        ended = wait_for_array(list(by_id), lambda t: by_id[t].paths.result_pickle.exists(),
                               warn=lambda line: print(line, file=sys.stderr, flush=True))
        returns, failed = [], []
        for job, (overrides, _, idx, *_) in submitted:
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

    def _detach(self, executor: Any, submitted: Sequence[Any], resume: str, mem_gb: Any) -> int:
        """Submit the report job (:meth:`report_after`, with the launcher's ``mem_gb``, not the last
        class's) with ``--dependency=afterany`` on every array, print how to follow the sweep, and
        return 0 (the exit status: nothing more to wait for here)."""
        arrays = sorted({job.job_id.split("_")[0] for job, _ in submitted}, key=int)
        records = [(job.job_id, job_params[:5]) for job, job_params in submitted]  # not the tasks' configs
        report = Path(str(self.config.hydra.sweep.dir)) / DETACHED_REPORT
        executor.update_parameters(slurm_additional_parameters={
            **(self.params.get("additional_parameters") or {}), "dependency": "afterany:" + ":".join(arrays)},
            slurm_array_parallelism=1, mem_gb=mem_gb)
        job = executor.submit(self.report_after, records, resume)
        print(detached_message(arrays, job.job_id, report, resume), flush=True)
        return 0

    def report_after(self, records: Sequence[Any], resume: str) -> str:
        """The report job's work (on the cluster, after every task ended): the tasks that did not
        finish named as the waiting command names them, written to ``<sweep dir>/slurm_report.txt``,
        then the end-of-sweep summary of the sweep directory (``ccbench report``'s). Returns the text."""
        import logging

        import submitit

        from ccbench.running.slurm import failure_report

        folder = self.params["submitit_folder"]
        submitted = [(submitit.SlurmJob(folder=folder, job_id=job_id), job_params) for job_id, job_params in records]
        _, failed = self._collect(submitted, logging.getLogger(__name__))
        text = (failure_report(failed, resume) if failed
                else f"ccbench: all {len(records)} SLURM task(s) finished; every cell is saved.")
        sweep = Path(str(self.config.hydra.sweep.dir))
        (sweep / DETACHED_REPORT).write_text(text + "\n")
        _forget_progress(sweep)
        _write_summary(sweep)
        return text

    def cells_of(self, job_num: int, overrides: Sequence[str]) -> List[str]:
        """The cells (override lines) a task runs: its own, plus the packed ones."""
        cells = [" ".join(filter_overrides(overrides))]
        pack = getattr(self.task_function, "pack_of", None)
        if pack is not None:
            cells += [" ".join(filter_overrides(o)) for o in pack(job_num)]
        return cells
