"""SLURM checks for ``hydra/launcher=slurm`` (no Hydra, no submitit here).

:func:`request_problems` compares what each array task asks for (``mem_gb``,
``cpus_per_task``, ``timeout_min``, ``partition``) with what the partition's nodes
declare (``scontrol show partition`` / ``scontrol show node``), so a request no node
can ever satisfy stops the sweep before submission with one line per problem, instead
of being refused by ``sbatch`` with a terse message or, for a time limit above the
partition's ``MaxTime`` or a partition whose nodes are all down, left pending forever.
:func:`array_problems` does the same for an array longer than the cluster's ``MaxArraySize``
(``sbatch`` refuses it after the whole grid was pickled). :func:`failure_report` words the tasks that did not finish (killed, cancelled, out of
memory, timed out too often) with the cells they were running.

:func:`array_states` asks SLURM for the state of every task of a job array in one call
(``sacct``; without accounting, ``squeue`` and ``scontrol`` instead), so the launcher learns
which tasks ended without a result in one query per poll, not one 15 s wait per failed task.

:class:`TaskTimeLimit` is what a task's last allowed time-out becomes
(:func:`stop_at_last_time_limit`): submitit's signal handler raises its ``UncompletedJobError``
(an ``Exception``) wherever the task is, inside a trial's fit; the trial's ``except Exception``
recorded it as the method's ``error`` and the task went on fitting until SLURM killed it.
:class:`TaskTimeLimit` is a ``BaseException``: no trial catches it; the harness records the trial
it stopped as ``task_time_limit`` and stops the task's work. :func:`replay_early_signal` hands
submitit's handler a preemption signal that came during the task's start-up, before the handler
existed (recorded by ``hydra_plugins/ccbench_sweeper/_task_start.py``): the task requeues.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from typing import Callable, Iterable, Sequence

__all__ = ["request_problems", "array_problems", "failure_report", "parse_slurm_minutes", "default_mem_gb", "DEFAULT_MEM_GB",
           "array_states", "parse_task_states", "is_finished", "resume_command", "wait_for_array", "TaskTimeLimit",
           "stop_at_last_time_limit", "TASK_TIME_LIMIT_FIX", "replay_early_signal"]

#: memory per task when ``mem_gb`` is null: this, or the largest node's when that is smaller
DEFAULT_MEM_GB = 4

_UNUSABLE = ("DOWN", "DRAIN", "FAIL", "NOT_RESPONDING", "INVAL", "FUTURE")


def _scontrol(*args: str) -> list[dict]:
    out = subprocess.run(["scontrol", *args, "-o"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip() or out.stdout.strip())
    return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in out.stdout.splitlines() if line.strip()]


def parse_slurm_minutes(text: str) -> float | None:
    """SLURM's time format (``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH[:MM[:SS]]``) in minutes;
    None for ``UNLIMITED``/``INFINITE``."""
    if not text or text.upper() in ("UNLIMITED", "INFINITE", "NONE"):
        return None
    days = 0
    if "-" in text:
        d, text = text.split("-", 1)
        days = int(d)
        parts = [int(p) for p in text.split(":")] + [0, 0]
        h, m, s = parts[:3]
    else:
        parts = [int(p) for p in text.split(":")]
        h, m, s = {1: (0, parts[0], 0), 2: (0, parts[0], parts[1])}.get(len(parts), tuple(parts[:3]))
    return days * 1440 + h * 60 + m + s / 60


def _hostnames(expr: str) -> list[str]:
    out = subprocess.run(["scontrol", "show", "hostnames", expr], capture_output=True, text=True, timeout=60)
    return out.stdout.split() if out.returncode == 0 else [expr]


def _partition(partition: str | None) -> dict | None:
    parts = _scontrol("show", "partition", *([partition] if partition else []))
    if not partition:
        parts = [p for p in parts if p.get("Default") == "YES"] or parts[:1]
    return parts[0] if parts else None


def _node_mem_mb(n: dict) -> int:
    """Memory a job may ask for on node ``n`` (RealMemory less MemSpecLimit), MB."""
    return int(n.get("RealMemory", 0) or 0) - int(n.get("MemSpecLimit", 0) or 0)


def default_mem_gb(partition: str | None = None) -> float:
    """``DEFAULT_MEM_GB``, or the memory of the partition's largest node when that is smaller
    (a small node that declares 2 GB still runs tasks); ``DEFAULT_MEM_GB`` when SLURM cannot be asked."""
    try:
        part = _partition(partition) if shutil.which("scontrol") else None
        if part is None:
            return DEFAULT_MEM_GB
        names = set(_hostnames(part.get("Nodes", ""))) if part.get("Nodes") else set()
        mems = [_node_mem_mb(n) for n in _scontrol("show", "node") if not names or n.get("NodeName") in names]
    except (RuntimeError, OSError, subprocess.SubprocessError):
        return DEFAULT_MEM_GB
    mems = [m for m in mems if m > 0]
    return min(DEFAULT_MEM_GB, max(mems) / 1024) if mems else DEFAULT_MEM_GB


def request_problems(params: dict) -> list[str]:
    """What in the launcher's ``params`` no node of the partition can satisfy (empty: fine, or no
    ``scontrol`` on this machine to ask)."""
    if shutil.which("scontrol") is None:
        return []
    partition = params.get("partition")
    try:
        parts = _scontrol("show", "partition", *([partition] if partition else []))
    except RuntimeError as exc:
        if partition:
            return [f"hydra.launcher.partition={partition}: SLURM does not know it ({exc})"]
        return []  # cannot ask: let sbatch decide
    if not partition:
        parts = [p for p in parts if p.get("Default") == "YES"] or parts[:1]
    if not parts:
        return []
    part = parts[0]
    name = part.get("PartitionName", partition)
    problems = []
    if part.get("State", "UP") != "UP":
        problems.append(f"partition {name} is {part['State']}: its jobs would wait until an administrator "
                        "brings it up")
    timeout = params.get("timeout_min")
    max_time = parse_slurm_minutes(part.get("MaxTime", ""))
    if timeout and max_time is not None and timeout > max_time:
        problems.append(f"hydra.launcher.timeout_min={timeout}: partition {name} allows at most "
                        f"{max_time:g} min (MaxTime={part['MaxTime']}); the tasks would stay pending forever")
    names = set(_hostnames(part.get("Nodes", ""))) if part.get("Nodes") else set()
    try:
        nodes = [n for n in _scontrol("show", "node") if not names or n.get("NodeName") in names]
    except RuntimeError:
        return problems
    usable = [n for n in nodes if not any(s in n.get("State", "") for s in _UNUSABLE)]
    if nodes and not usable:
        problems.append(f"every node of partition {name} is unusable ("
                        + ", ".join(f"{n.get('NodeName')}: {n.get('State')}" for n in nodes) + ")")
    mem_mb = int((params.get("mem_gb") or 0) * 1024)
    cpus = params.get("cpus_per_task") or 1
    pool = usable or nodes
    if pool and (mem_mb or cpus > 1):
        mem_of = _node_mem_mb
        fits = [n for n in pool if mem_of(n) >= mem_mb and int(n.get("CPUTot", 0) or 0) >= cpus]
        if not fits:
            best_mem = max(mem_of(n) for n in pool)
            best_cpu = max(int(n.get("CPUTot", 0) or 0) for n in pool)
            if mem_mb > best_mem:
                problems.append(f"hydra.launcher.mem_gb={params.get('mem_gb')}: the largest node of partition "
                                f"{name} declares {best_mem} MB ({best_mem / 1024:.1f} GB); ask for at most "
                                f"mem_gb={best_mem // 1024}, or leave it null")
            if cpus > best_cpu:
                problems.append(f"hydra.launcher.cpus_per_task={cpus}: the nodes of partition {name} have at "
                                f"most {best_cpu} CPUs")
            if mem_mb <= best_mem and cpus <= best_cpu:
                problems.append(f"no node of partition {name} has both {cpus} CPUs and {mem_mb} MB")
    max_mem = part.get("MaxMemPerNode", "UNLIMITED")
    if mem_mb and max_mem.isdigit() and mem_mb > int(max_mem):
        problems.append(f"hydra.launcher.mem_gb={params.get('mem_gb')}: partition {name} allows at most "
                        f"{max_mem} MB per node (MaxMemPerNode)")
    return problems


def _max_array_size() -> int | None:
    out = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True, timeout=60)
    found = re.search(r"^MaxArraySize\s*=\s*(\d+)", out.stdout, flags=re.M) if out.returncode == 0 else None
    return int(found.group(1)) if found else None


def array_problems(n_tasks: int) -> list[str]:
    """Whether one job array of ``n_tasks`` tasks (indices 0 to n_tasks - 1) exceeds the cluster's
    ``MaxArraySize`` (SLURM's default 1001: at most 1,001 tasks); empty when it fits or nothing can
    be asked."""
    if shutil.which("scontrol") is None:
        return []
    limit = _max_array_size()
    if limit is None or n_tasks <= limit:
        return []
    return [f"the sweep is {n_tasks:,} array tasks and this cluster's MaxArraySize is {limit} (at most {limit:,} "
            f"tasks, indices 0-{limit - 1}): pack several cells into each task with "
            f"hydra.sweeper.max_tasks={min(limit, 1000)}, or submit batches one after another with "
            f"hydra.sweeper.max_batch_size={min(limit, 1000)}"]


def failure_report(failed: Sequence[tuple[str, str, Iterable[str]]], resume: str | None = None) -> str:
    """One paragraph per task that did not finish: ``(slurm job id, what happened, cells)``; the
    command that resumes (:func:`resume_command`) when given."""
    lines = [f"ccbench: {len(failed)} SLURM task(s) did not finish; the other tasks' cells are saved:"]
    for job_id, what, cells in failed:
        cells = list(cells)
        lines.append(f"  task {job_id}: {what}")
        lines.extend(f"    cell: {c}" for c in cells)
    lines.append("Re-run the same command to resume: finished trials are kept, only the missing ones run"
                 + (f":\n  {resume}" if resume else "."))
    return "\n".join(lines)


def resume_command(argv: Sequence[str]) -> str:
    """The command line that resumes a sweep: ``ccbench`` and the arguments it was given
    (``argv[1:]``), quoted for a POSIX shell."""
    import shlex

    return " ".join(["ccbench", *(shlex.quote(a) for a in argv[1:])])


class TaskTimeLimit(BaseException):
    """The SLURM task was signalled (its time limit, or a preemption) once more than
    ``hydra.launcher.max_num_timeout`` allows requeueing: the task's work stops here.

    A ``BaseException`` (as ``KeyboardInterrupt``), so that no ``except Exception`` around a fit
    takes it for the method's error; :func:`ccbench.running.harness.run_job` records the trial it
    interrupted with status ``task_time_limit`` (re-run on resume: it says nothing about the
    method) and lets it end the task."""


#: what a task_time_limit row and the failure report suggest
TASK_TIME_LIMIT_FIX = ("the trial was stopped and the same command runs it again; give each task more time "
                       "(hydra.launcher.timeout_min), more requeues (hydra.launcher.max_num_timeout) or fewer "
                       "cells (hydra.sweeper.cells_per_task / max_tasks)")


def stop_at_last_time_limit(handler: Callable, uncompleted: type) -> Callable:
    """Submitit's ``USR2`` handler ``handler``, changed in one case: where it raises
    ``uncompleted`` (its ``UncompletedJobError``: the signal came once more than requeues are
    allowed, "timed-out too many times"), :class:`TaskTimeLimit` is raised instead, naming it.
    Any other outcome (a requeue: its ``SystemExit``; a signal it ignores) is the handler's own,
    but for one race: ``scontrol requeue`` run from inside the task is itself in the task's step, and
    the requeue's SIGTERM to the step may end it before it exits (seen on the test cluster); submitit
    raised that ``CalledProcessError``, its result file said the task failed and the launcher named
    a task that was in fact requeued. That case ends the task as a requeue does (``SystemExit``)."""

    def on_signal(signum, frame):
        try:
            handler(signum, frame)
        except subprocess.CalledProcessError as exc:
            if not _killed_by_its_own_requeue(exc):
                raise
            raise SystemExit(-1) from None  # requeued: what submitit does once `scontrol requeue` returned
        except uncompleted as exc:
            raise TaskTimeLimit(f"the SLURM task reached its time limit (or was preempted) after its last allowed "
                                f"requeue ({_last_line(str(exc))}); {TASK_TIME_LIMIT_FIX}") from None

    on_signal.wrapped = handler
    return on_signal


def _killed_by_its_own_requeue(exc) -> bool:
    """Whether ``exc`` is ``scontrol requeue`` ended by SIGTERM (the requeue it asked for)."""
    import signal

    cmd = exc.cmd if isinstance(exc.cmd, (list, tuple)) else str(exc.cmd).split()
    return list(cmd[:2]) == ["scontrol", "requeue"] and exc.returncode == -signal.SIGTERM


#: set by the task's first instruction when the preemption signal came before submitit's handler
#: (hydra_plugins/ccbench_sweeper/_task_start.py, which cannot import this module: it runs first)
EARLY_SIGNAL_ENV = "CCBENCH_EARLY_SIGNAL"


def replay_early_signal(handler: Callable, warn: Callable[[str], None] = print) -> bool:
    """Hand ``handler`` (submitit's, installed since) the preemption signal the task's start-up
    recorded (:data:`EARLY_SIGNAL_ENV`), once; whether there was one. A signal SLURM sent while the
    task was still importing (before submitit's handler existed) killed the task, not requeued."""
    import os

    signum = os.environ.pop(EARLY_SIGNAL_ENV, None)
    if not signum:
        return False
    warn(f"ccbench: signal {signum} (SLURM: preemption or time limit) came during the task's start-up, before "
         "submitit's handler; handing it over now")
    handler(int(signum), None)
    return True


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else text


#: states in which a task may still run (or run again): not finished
_ACTIVE = frozenset({"PENDING", "RUNNING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "COMPLETING", "CONFIGURING",
                     "RESIZING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT", "PREEMPTED", "RESV_DEL_HOLD",
                     "UNKNOWN"})


def is_finished(state: str) -> bool:
    """Whether a task in SLURM state ``state`` (``CANCELLED by 0``, ``PENDING``, ...) will not run
    again. ``PREEMPTED`` is not finished: a requeued task passes through it."""
    return state.split()[0].upper() not in _ACTIVE if state.strip() else False


def _expand_task_ids(task_id: str) -> list[str]:
    """``12_3`` -> [``12_3``]; ``12_[4-6,9%2]`` (a pending array's range) -> [``12_4``, ``12_5``, ``12_6``, ``12_9``];
    a plain job id as it is."""
    m = re.fullmatch(r"(\d+)_\[([^\]]*)\]", task_id)
    if m is None:
        return [task_id]
    array, spec = m.group(1), m.group(2).split("%")[0]
    out = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        if lo.isdigit():
            out += [f"{array}_{i}" for i in range(int(lo), int(hi or lo) + 1)]
    return out


def parse_task_states(text: str, source: str) -> dict[str, str]:
    """``{task id (array_index): state}`` from the output of one query of a job array:

    - ``sacct``: ``sacct -n -X -P -o JobID,State -j ARRAY`` (``12_3|CANCELLED by 0``; a pending
      range ``12_[4-7%2]|PENDING``; a requeued task has one line per attempt, the last is current);
    - ``squeue``: ``squeue -h -r -j ARRAY -o "%i %T"`` (``12_3 RUNNING``; only tasks in the queue);
    - ``scontrol``: ``scontrol -o show job ARRAY`` (``JobId=.. ArrayJobId=12 ArrayTaskId=3 JobState=COMPLETED``;
      finished tasks only for ``MinJobAge``, 300 s by default).
    """
    states: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        if source == "scontrol":
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            array, index, state = fields.get("ArrayJobId"), fields.get("ArrayTaskId"), fields.get("JobState")
            if not (array and index and state):
                continue
            ids = _expand_task_ids(f"{array}_[{index}]") if not index.isdigit() else [f"{array}_{index}"]
        else:
            task, _, state = line.strip().partition("|" if source == "sacct" else " ")
            if "." in task:  # a job step (12_3.batch), not the task
                continue
            ids = _expand_task_ids(task.strip())
        for task_id in ids:
            states[task_id] = state.strip()
    return states


def _query(args: list[str]) -> tuple[str | None, str | None]:
    """(stdout, None) or (None, why it failed)."""
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{args[0]}: {exc}"
    if out.returncode != 0:  # the last line says what (slurmdbd down: three lines, the last "Problem talking ...")
        said = (out.stderr.strip() or out.stdout.strip()).splitlines()
        return None, f"{args[0]}: " + (said[-1].strip() if said else f"exit status {out.returncode}")
    return out.stdout, None


def array_states(array_id: str) -> tuple[dict[str, str] | None, str | None]:
    """The state of every task of job array ``array_id``, in one query, and why ``sacct`` could
    not answer (None when it did).

    ``sacct`` first (it remembers every task). When it fails (no accounting on this cluster,
    ``slurmdbd`` down) the states come from ``squeue`` (tasks still queued or running) and
    ``scontrol show job`` (tasks that ended less than ``MinJobAge`` ago); a task neither lists has
    left the queue: the caller treats it as finished (with its result file, or without one).
    When neither can be asked either, the states are None and the reason names both failures.
    """
    text, sacct_error = _query(["sacct", "-n", "-X", "-P", "-o", "JobID,State", "-j", str(array_id)])
    if text is not None:
        return parse_task_states(text, "sacct"), None
    queued, squeue_error = _query(["squeue", "-h", "-r", "-j", str(array_id), "-o", "%i %T"])
    if queued is None and "invalid job id" in (squeue_error or "").lower():
        queued = ""  # the whole array has left the queue
    shown, _ = _query(["scontrol", "-o", "show", "job", str(array_id)])  # fails once the array left memory
    if queued is None:
        return None, f"{sacct_error}; {squeue_error}"
    states = parse_task_states(shown or "", "scontrol")
    states.update(parse_task_states(queued, "squeue"))
    return states, sacct_error



#: states in which a task's own code may have written its result file just before SLURM's record
#: changed (a shared file system shows it a little later); other final states wait for nothing
_MAY_HAVE_RESULT = ("COMPLETED", "FAILED")
#: what a task that left the queue is called when SLURM has no accounting to say how it ended
LEFT_QUEUE = "left the queue without a result (state unknown: SLURM accounting cannot be asked)"


def wait_for_array(task_ids: Sequence[str], has_result: Callable[[str], bool], *,
                   states_of: Callable[[str], tuple] = array_states, sleep: Callable[[float], None] = time.sleep,
                   warn: Callable[[str], None] = print, grace_s: float = 15.0, max_poll_s: float = 30.0) -> dict[str, str]:
    """Wait until every task of ``task_ids`` (``array_index``) has its result file (``has_result``)
    or has ended without one; return ``{task id: final state}`` of the latter.

    One state query per array per poll (:func:`array_states`), polls 1 s apart doubling to
    ``max_poll_s``: the failed tasks of an array are known together (submitit's ``Job.results``
    waited 15 s for each failed task's result file, one after another: 20 cancelled tasks took
    305 s to be named). A task in a final state without its result file is waited for once more,
    all together, at most ``grace_s`` (a shared file system shows a file late) when its state is
    ``COMPLETED`` or ``FAILED`` (or unknown: left the queue). Without ``sacct`` (no accounting, ``slurmdbd`` down) the states
    come from ``squeue``/``scontrol`` and a task that has left the queue without its result file
    is :data:`LEFT_QUEUE`; ``warn`` says so once. When SLURM cannot be asked at all, ``warn`` says
    so once and the wait goes on for the result files (Ctrl-C stops it; the same command resumes).
    """
    left = list(task_ids)
    arrays = sorted({t.split("_")[0] for t in left})
    delay, said = 1.0, set()
    while True:
        left = [t for t in left if not has_result(t)]
        if not left:
            return {}
        states: dict[str, str] = {}
        unanswered = fallback = False
        for array in arrays:
            found, why = states_of(array)
            if found is None:
                unanswered = True
            else:
                states.update(found)
                fallback = fallback or why is not None
            if why and why not in said:
                said.add(why)
                warn(f"ccbench: SLURM cannot tell how array {array}'s tasks ended ({why}); "
                     + ("their states come from squeue and scontrol instead, and a task that leaves the queue "
                        "without a result is reported as not finished" if found is not None else
                        "waiting for the tasks' result files; Ctrl-C stops waiting and the same command resumes"))
        ended = {}
        for t in left:
            state = states.get(t)
            if state is not None and is_finished(state):
                ended[t] = state
            elif state is None and fallback and not unanswered:
                ended[t] = LEFT_QUEUE
        if len(ended) == len(left):
            late = [t for t, state in ended.items() if state == LEFT_QUEUE or state.split()[0] in _MAY_HAVE_RESULT]
            waited = 0.0
            while late and waited < grace_s:
                sleep(1.0)
                waited += 1.0
                late = [t for t in late if not has_result(t)]
            return {t: state for t, state in ended.items() if not has_result(t)}
        sleep(delay)
        delay = min(2 * delay, max_poll_s)
