"""A launcher's worker process that dies under a sweep: which job it was running, why it died,
and the ``error`` row that records it (issue 42, item 9).

joblib's process pool (loky) reports a dead worker as ``TerminatedWorkerError`` and nothing
else: not which worker, not which job, and by then it has killed every other worker too (their
queues may be in a dirty state), so the exception alone cannot tell the job that was lost from
the jobs that were merely interrupted. Two records answer it:

- each job, in its worker, writes a *marker* ``<folder>/<job number>.<worker pid>`` holding the
  job's output directory while it runs (:func:`mark_job`, removed when the job returns; the pid is
  in the name, so watching for new workers is a directory listing, no file read);
- :class:`WorkerDeaths`, a thread of the main process, holds a pidfd (Linux) on every child process
  and notes each wake-up's dead processes in order. The pidfds that are ready when the kernel wakes
  the thread are those dead at that instant, so the first death it records is the one that broke
  the pool, before joblib's clean-up killed the others; its exit status is read without reaping
  the process (``waitid(..., WNOWAIT)``), which joblib still does.

The lost job becomes an ``error`` row (:func:`record_lost_trial`) for the first trial the job had
not recorded: a re-run retries it (``rerun_errors``), the interrupted jobs run again at once. Where
pidfds do not exist (not Linux) no worker is identified and the launcher says so.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import select
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["WorkerDeaths", "Lost", "mark_job", "unmark_job", "cause_of", "record_lost_trial", "note_lost_job",
           "lost_jobs", "forget_lost_jobs"]

# The lines naming the jobs this process's launcher lost to a dead worker, for the sweep's outcome
# (:func:`ccbench.running.app.last_sweep_outcome`). Kept here, not in the app, so the launcher that writes
# them and the app that reads them both import this module and not each other (issue 54, item 21).
_lost_lines: list[str] = []


def note_lost_job(line: str) -> None:
    """A launcher's worker died while running a job (printed already, as it happened): the command
    exits 1 even when no trial row could record it."""
    _lost_lines.append(line)


def lost_jobs() -> list[str]:
    """The lines :func:`note_lost_job` was given since the last :func:`forget_lost_jobs`."""
    return list(_lost_lines)


def forget_lost_jobs() -> None:
    """Start a new sweep's count (called when a sweep starts)."""
    _lost_lines.clear()


def mark_job(folder: str | os.PathLike, job: int, out_dir: str) -> Path:
    """Say, in ``folder``, that this process runs launcher job ``job`` into ``out_dir`` (atomic)."""
    path = Path(folder) / f"{job}.{os.getpid()}"
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps({"pid": os.getpid(), "out_dir": str(out_dir), "start": time.time()}))
    os.replace(tmp, path)
    return path


def unmark_job(path: Path) -> None:
    path.unlink(missing_ok=True)


@dataclass(frozen=True)
class Lost:
    """A job that was running in a worker that died: ``cause`` is "killed by signal 9 (SIGKILL...)"."""

    job: int
    pid: int
    out_dir: str
    start: float
    cause: str


def _status(fd: int) -> str | None:
    """How the child behind pidfd ``fd`` ended, without reaping it; None when it cannot be read
    (already reaped by its owner, or not a child)."""
    try:
        info = os.waitid(os.P_PIDFD, fd, os.WEXITED | os.WNOWAIT | os.WNOHANG)
    except (ChildProcessError, OSError, AttributeError):
        return None
    if info is None:
        return None
    if info.si_code == os.CLD_EXITED:
        return f"exited with status {info.si_status}"
    return f"signal {info.si_status}"


def cause_of(status: str | None, exc: BaseException | None = None) -> str:
    """A readable cause from :func:`_status`, else from the exit codes joblib's error lists."""
    if status is None and exc is not None:  # "The exit codes of the workers are {SIGKILL(-9)}"
        codes = re.findall(r"\((-?\d+)\)", str(exc).split("exit codes of the workers are", 1)[-1])
        if len(codes) == 1:
            code = int(codes[0])
            status = f"signal {-code}" if code < 0 else f"exited with status {code}"
    if status is None:
        return "died (how is unknown)"
    if status.startswith("signal "):
        number = int(status.split()[1])
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "unknown signal"
        why = {"SIGKILL": "another process, or the out-of-memory killer", "SIGSEGV": "a crash in native code",
               "SIGABRT": "an abort in native code", "SIGBUS": "a crash in native code"}.get(name, "")
        return f"was killed by signal {number} ({name}{': ' + why if why else ''})"
    return f"{status} (os._exit, or exit() in native code, outside the isolated fit)"


def _children(parent: int) -> set[int]:
    """Pids whose parent is ``parent`` (a /proc scan: run when a job names a worker not yet watched)."""
    found = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == parent:
            found.add(int(name))
    return found


class WorkerDeaths:
    """Watch the worker processes of a pool and tell, after the pool broke, which jobs were lost.

    ``folder`` holds the jobs' markers (:func:`mark_job`). Use as a context manager; :meth:`lost`
    after each ``BrokenProcessPool``."""

    def __init__(self, folder: str | os.PathLike, interval: float = 0.1):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.interval = interval
        self.supported = hasattr(os, "pidfd_open") and hasattr(select, "poll") and os.path.isdir("/proc")
        self._fds: dict[int, tuple[int, int]] = {}  # fd -> (pid, pool generation)
        self._known: set[int] = set()  # pids watched once (alive or dead)
        # one list of (pid, status, generation) per wake-up, in order; the generation counts the pool's
        # breaks, so the deaths of the workers joblib kills after a break are not taken for the next one's
        self._gen = 0
        self._deaths: list[list[tuple[int, str | None, int]]] = []
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._poll = select.poll() if self.supported else None
        self._thread = threading.Thread(target=self._run, daemon=True, name="ccbench-worker-deaths")

    def __enter__(self) -> "WorkerDeaths":
        if self.supported:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        for fd in list(self._fds):
            os.close(fd)
        self._fds.clear()
        for path in self.folder.iterdir():
            path.unlink(missing_ok=True)
        self.folder.rmdir()

    def _marked(self) -> dict[int, int]:
        """``job -> worker pid`` of the jobs marked as running (from the file names)."""
        out = {}
        for name in os.listdir(self.folder):
            job, _, pid = name.partition(".")
            if job.isdigit() and pid.isdigit():
                out[int(job)] = int(pid)
        return out

    def markers(self) -> dict[int, dict]:
        """``job -> {"pid", "out_dir", "start", "path"}`` of the jobs marked as running."""
        out = {}
        for job, pid in self._marked().items():
            path = self.folder / f"{job}.{pid}"
            try:
                out[job] = {**json.loads(path.read_text()), "pid": pid, "path": path}
            except (OSError, ValueError):
                pass
        return out

    def _watch_new(self) -> None:
        pids = set(self._marked().values())
        if pids <= self._known:
            return
        for pid in _children(os.getpid()) | pids:  # every worker, idle ones included
            if pid in self._known:
                continue
            self._known.add(pid)
            try:
                fd = os.pidfd_open(pid)
            except OSError:  # gone already: noted as dead now (its order is unknown)
                self._note([(pid, None, self._gen)])
                continue
            self._fds[fd] = (pid, self._gen)
            self._poll.register(fd, select.POLLIN)

    def _note(self, batch: list) -> None:
        with self._cond:
            self._deaths.append(batch)
            self._cond.notify_all()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                ready = self._poll.poll(self.interval * 1000)
            except InterruptedError:
                continue
            if ready:  # the processes dead at the instant of this wake-up
                batch = []
                for fd, _ in ready:
                    pid, gen = self._fds.pop(fd, (None, None))
                    if pid is None:
                        continue
                    batch.append((pid, _status(fd), gen))
                    self._poll.unregister(fd)
                    os.close(fd)
                if batch:
                    self._note(batch)
            try:
                self._watch_new()
            except OSError:
                pass

    def _first_death(self, markers: dict[int, dict]) -> list[tuple[int, str | None]] | None:
        """The first wake-up with a death that matters: a worker running a job, or one that did not end
        cleanly (an idle worker retiring after joblib's idle time-out exits with status 0)."""
        running = {m["pid"] for m in markers.values()}
        for batch in self._deaths:
            batch = [(pid, status) for pid, status, gen in batch if gen == self._gen]
            if any(pid in running or status != "exited with status 0" for pid, status in batch):
                return batch
        return None

    def lost(self, exc: BaseException | None = None, wait: float = 10.0) -> tuple[list[Lost], str | None]:
        """After the pool broke: the jobs that ran in the worker whose death broke it, and that death
        (``"pid P <cause>"``, None when no death was seen: no pidfds here). Every job marker is
        cleared (the pool's other workers were killed with it; their jobs run again)."""
        markers = self.markers()
        batch = None
        if self.supported:
            with self._cond:
                self._cond.wait_for(lambda: self._first_death(markers) is not None, timeout=wait)
                batch = self._first_death(markers)
                self._deaths.clear()
                self._gen += 1  # the workers watched so far are dead or being killed by joblib
        for marker in markers.values():
            unmark_job(marker["path"])
        if not batch:
            return [], None
        causes = {pid: cause_of(status, exc) for pid, status in batch}
        lost = [Lost(job, m["pid"], m["out_dir"], m["start"], causes[m["pid"]])
                for job, m in sorted(markers.items()) if m["pid"] in causes]
        death = "; ".join(f"pid {pid} {cause}" for pid, cause in causes.items())
        return lost, death


def record_lost_trial(out_dir: str | os.PathLike, cause: str, since: float) -> int | None:
    """Record an ``error`` row, in the job directory ``out_dir``, for the first trial of its cell that
    the job (started at ``since``) had not recorded when its worker died (``cause``). Returns that
    trial, or None when no row can be written: the job died before its cell began (no ``cell.json``),
    or every trial is recorded. A re-run retries the row like any ``error`` (``rerun_errors``)."""
    import pandas as pd

    from .config import CELL_FILE, cell_hash, to_cell
    from .harness import _NOT_IN_ROWS, _method_code
    from . import provenance
    from .results import FAILED_STATUSES, RESULTS_FILE, ResultsStore, flatten

    out = Path(out_dir)
    try:
        cell = to_cell(json.loads((out / CELL_FILE).read_text()))
    except FileNotFoundError:
        return None
    chash = cell_hash(cell)
    store = ResultsStore(out / RESULTS_FILE)
    previous = store.rows_of(chash)
    retried = bool(cell["rerun_errors"])
    trial = None
    for t in range(int(cell["n_trials"])):
        if t not in previous.index:
            trial = t
            break
        row = previous.loc[t]
        stamp = pd.to_datetime(row.get("timestamp"), utc=True, errors="coerce")
        if retried and row["status"] in FAILED_STATUSES and (pd.isna(stamp) or stamp.timestamp() < since):
            trial = t  # an old failure this job was retrying
            break
    if trial is None:
        return None
    code, _ = _method_code(cell)
    row = {**flatten({k: v for k, v in cell.items() if k not in _NOT_IN_ROWS}), "config_hash": chash,
           "trial": trial, **provenance.ccbench_code(), **(code or {}), **provenance.environment(),
           "rerun_reason": None, "status": "error",
           "error": f"WorkerDied: the joblib worker running this cell {cause} before trial {trial}'s row was "
                    f"written; re-run the same command to run it again",
           "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat()}
    store.add(row)
    store.flush(force=True)
    return trial
