"""Run a trial where it can be interrupted: one spawned worker process, killed on a time-out.

A numba kernel or a solver in C holds the interpreter, so a time limit inside the
process cannot stop it; a separate process can be killed. :class:`IsolatedRunner`
keeps one worker per job (spawned, so no thread pool is forked half-way) and
replaces it after a kill or a crash. The cost is the worker's start-up (imports)
once per job and pickling each trial's arrays, which is why isolation is opt-in
(``trial_timeout``).
"""

from __future__ import annotations

import multiprocessing as mp
import sys
import traceback

__all__ = ["IsolatedRunner", "TrialTimeout", "WorkerDied", "die_with"]


class TrialTimeout(Exception):
    """The call did not return within its time limit (harness status ``timeout``)."""


class WorkerDied(RuntimeError):
    """The worker process ended without answering (killed by the OS, a crash in C code)."""


def _die_with_parent(parent_pid: int) -> None:
    """End this worker when the job process that started it dies (even by SIGKILL), so a killed
    job leaves no fit running: the kernel's parent-death signal where there is one (Linux), and
    everywhere a thread that notices the parent is gone within a second."""
    import os
    import threading
    import time

    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - not Linux: the watcher below is enough
        pass
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)

    def watch():
        while os.getppid() == parent_pid:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="ccbench-parent-watch").start()


def die_with(pid: int, interval: float = 1.0) -> None:
    """End this process (exit status 1) within ``interval`` seconds of process ``pid``'s end, even
    by SIGKILL: a thread polls it. For the workers of a launcher (joblib) whose fits must not go on
    writing rows after the sweep's main process was killed. Idempotent per ``pid``."""
    import os
    import threading
    import time

    if pid in _WATCHED or pid == os.getpid():
        return
    _WATCHED.add(pid)

    def alive() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # exists, owned by someone else (pid reused): treat as gone
            return False
        return True

    def watch():
        while alive():
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name=f"ccbench-watch-{pid}").start()


_WATCHED: set[int] = set()


def _serve(conn, preload, parent_pid=None) -> None:
    import importlib

    if parent_pid is not None:
        _die_with_parent(parent_pid)

    for name in preload:  # imports are start-up, not part of any call's time limit
        importlib.import_module(name)
    conn.send("ready")
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        func, args, parent_path = message
        added = [entry for entry in parent_path if entry not in sys.path]
        if added:  # a module made importable in the parent after this worker started (a plugin's folder)
            sys.path.extend(added)
            importlib.invalidate_caches()
        try:
            conn.send((True, func(*args), None))
        except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
            text = traceback.format_exc()
            try:
                conn.send((False, exc, text))
            except Exception:  # noqa: BLE001 - an exception that does not pickle
                conn.send((False, RuntimeError(text.strip().splitlines()[-1]), text))


class IsolatedRunner:
    """Call picklable functions in a worker process with a time limit.

    ``preload`` names modules the worker imports before it reports ready, so
    their import time does not count against a call's limit.

    >>> runner = IsolatedRunner()  # doctest: +SKIP
    >>> runner.call(pow, 2, 10, timeout=30)  # doctest: +SKIP
    1024
    """

    #: Seconds a new worker may take to start and import ``preload``.
    START_TIMEOUT = 300.0

    def __init__(self, preload: tuple[str, ...] = ()):
        self._ctx = mp.get_context("spawn")
        self._preload = tuple(preload)
        self._proc = None
        self._conn = None

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        import os

        self._proc = self._ctx.Process(target=_serve, args=(child, self._preload, os.getpid()), daemon=True)
        # The child re-applies the parent's *global* start method, which a library may have set
        # to one the child cannot resolve (joblib's "loky", inside Hydra's joblib launcher):
        # spawn is the global default while the worker starts, then the old one is put back.
        previous = mp.get_start_method(allow_none=True)
        mp.set_start_method("spawn", force=True)
        try:
            self._proc.start()
        finally:
            mp.set_start_method(previous, force=True)
        child.close()
        self._conn = parent
        if not parent.poll(self.START_TIMEOUT) or parent.recv() != "ready":
            self.close(kill=True)
            raise WorkerDied(f"the worker process did not start within {self.START_TIMEOUT:g} s")

    def call(self, func, *args, timeout: float | None):
        """``func(*args)`` in the worker (``timeout=None``: no limit); its exception is re-raised
        here with ``.worker_traceback``."""
        if self._proc is None or not self._proc.is_alive():
            self._start()
        self._conn.send((func, args, list(sys.path)))
        if timeout is not None and not self._conn.poll(timeout):
            self.close(kill=True)
            raise TrialTimeout(f"no result within trial_timeout={timeout:g} s; the worker was killed")
        try:
            ok, value, text = self._conn.recv()
        except (EOFError, OSError):
            self._proc.join(timeout=5)  # reap it, so the exit code is known
            code = self._proc.exitcode
            self.close(kill=True)
            raise WorkerDied(f"the worker process died (exit code {code}; -9 is usually the "
                             f"out-of-memory killer)") from None
        if ok:
            return value
        value.worker_traceback = text
        raise value

    def close(self, kill: bool = False) -> None:
        """Stop the worker (politely, or at once with ``kill``)."""
        if self._proc is None:
            return
        if kill:
            self._proc.kill()
        else:
            try:
                self._conn.send(None)
            except (OSError, ValueError):
                pass
        self._proc.join(timeout=5)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        self._conn.close()
        self._proc = self._conn = None
