"""Advisory file locks that say who holds them (issue 42, item 10).

:func:`locked` takes an exclusive ``flock`` on ``.<name>.lock`` beside a file and, while it holds
it, writes its holder into the lock file (pid, host, since when, command). A process that has
waited :data:`PATIENCE` seconds for a lock logs that holder once, with the way out: a sweep
suspended with Ctrl-Z or by SLURM while holding a lock would otherwise block the next one forever
without a word. Locks are held only around short writes (:mod:`ccbench.running.results`,
:mod:`ccbench.running.shared_fits`), never around a fit.

A file system without ``flock`` (Lustre mounted without ``-o flock``: ``ENOSYS``; NFS mounted
``nolock``: ``ENOLCK``; some FUSE mounts: ``EINVAL``/``EOPNOTSUPP``) raises something other than
``BlockingIOError``; :class:`LocksUnsupportedError` then names the directory and the mount option
instead of a bare ``OSError: [Errno 38] Function not implemented`` (issue 54, item 8).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import socket
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

__all__ = ["PATIENCE", "LOCK_TIMEOUT", "lock_path", "lock_holder", "locked", "LocksUnsupportedError"]

#: Seconds a process waits for a lock before it logs who holds it.
PATIENCE = 5.0
#: Seconds a process waits for a lock at all before it gives up naming the holder
#: (``CCBENCH_LOCK_TIMEOUT``): locks are held around short writes only, so a wait this long means a
#: holder that is stopped (Ctrl-Z, SLURM suspend) or stuck, which would otherwise be waited for for ever.
LOCK_TIMEOUT = 600.0
LOCK_TIMEOUT_ENV = "CCBENCH_LOCK_TIMEOUT"

log = logging.getLogger("ccbench")

#: what ``flock`` raises on a file system that does not lock (the lock is not busy: it cannot be taken)
_NO_LOCKS = frozenset({errno.ENOSYS, errno.ENOLCK, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP})


class LocksUnsupportedError(OSError):
    """The file system of a sweep directory does not support ``flock`` (see the module docstring)."""


def _try_lock(handle, lock: Path, fcntl) -> None:
    """``flock(LOCK_EX | LOCK_NB)``: ``BlockingIOError`` when another process holds it,
    :class:`LocksUnsupportedError` when the file system cannot lock at all."""
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise
    except OSError as exc:
        if exc.errno not in _NO_LOCKS:
            raise
        raise LocksUnsupportedError(
            exc.errno,
            f"cannot lock {lock}: its file system does not support file locks (flock: {exc.strerror}, "
            f"{errno.errorcode.get(exc.errno, exc.errno)}). ccbench locks a results file so that concurrent "
            f"writers lose no rows. On Lustre the mount needs the option `-o flock` (ask the cluster's "
            f"administrators; `mount | grep lustre` shows the options); on NFS, a mount without `nolock`; "
            f"or put the sweep directory (hydra.sweep.dir) on a file system that locks") from exc


def lock_path(path) -> Path:
    """The lock file of ``path``: ``.<name>.lock`` in the same directory."""
    path = Path(path)
    return path.with_name(f".{path.name}.lock")


def lock_holder(lock) -> str:
    """Who holds ``lock`` as its holder wrote it ("an unknown process" when it wrote nothing)."""
    try:
        info = json.loads(Path(lock).read_text() or "{}")
    except (OSError, ValueError):
        info = {}
    if not info.get("pid"):
        return "an unknown process (it wrote no holder: an older ccbench, or it is starting)"
    return (f"pid {info['pid']} on {info.get('host', '?')} since {info.get('since', '?')}"
            f" ({info.get('command', '?')})")


def _holder_text() -> str:
    return json.dumps({
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv)[:200],
    })


@contextlib.contextmanager
def locked(path):
    """An exclusive advisory lock on ``.<name>.lock`` beside ``path`` (all ccbench writers of
    ``path`` take it); the holder is written into the lock file while held, and a waiter names it
    after :data:`PATIENCE` seconds."""
    import fcntl

    lock = lock_path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+") as handle:
        try:
            _try_lock(handle, lock, fcntl)
        except BlockingIOError:
            _wait(handle, lock, fcntl)
        try:
            handle.truncate(0)
            handle.write(_holder_text())
            handle.flush()
        except OSError:  # a full disk must not stop the write the lock protects
            pass
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                handle.truncate(0)
            fcntl.flock(handle, fcntl.LOCK_UN)


def _lock_timeout() -> float:
    try:
        return float(os.environ.get(LOCK_TIMEOUT_ENV, LOCK_TIMEOUT))
    except ValueError:
        return LOCK_TIMEOUT


def _wait(handle, lock: Path, fcntl) -> None:
    start, told, pause, limit = time.monotonic(), False, 0.05, _lock_timeout()
    while True:
        time.sleep(pause)
        pause = min(pause * 2, 0.5)
        try:
            _try_lock(handle, lock, fcntl)
            if told:
                log.warning("got the lock %s after %.0f s", lock, time.monotonic() - start)
            return
        except BlockingIOError:
            pass
        if time.monotonic() - start >= limit:
            raise TimeoutError(
                f"gave up waiting for the lock {lock} after {time.monotonic() - start:.0f} s ({LOCK_TIMEOUT_ENV}="
                f"{limit:g}), held by {lock_holder(lock)}; if that process is suspended (Ctrl-Z, SLURM suspend) "
                f"resume it (fg, `kill -CONT <pid>`, scontrol resume) or end it, then run the command again")
        if not told and time.monotonic() - start >= PATIENCE:
            told = True
            log.warning(
                "waiting for the lock %s, held by %s; if that process is suspended (Ctrl-Z, SLURM suspend) "
                "resume it (fg, `kill -CONT <pid>`, scontrol resume) or end it, and this one goes on",
                lock, lock_holder(lock))
