"""One way for tests to run a command under a time limit: on time-out, the whole process tree is killed.

``subprocess.run(..., timeout=T)`` kills only the child it started: a ccbench sweep's joblib workers, a
``trial_timeout`` fit's worker or a lock holder it spawned keep running after the test has failed (9+ minutes
after a leaderboard smoke sweep hit its limit, issue 54). :func:`run` starts the child in a new session, so
the child and everything it starts share one process group (unless one of them starts its own session), and
on time-out, or any exception while waiting (Ctrl-C included), kills that group with ``SIGKILL`` before
raising. Same arguments and return value as ``subprocess.run``; ``timeout`` is required. A test that
drives its child while it runs uses :func:`started` (a ``Popen`` whose group is killed when the block ends).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

__all__ = ["run", "started", "kill_group"]

#: Seconds to collect the output of a killed group (its pipes close when its last member dies).
_DRAIN = 10.0


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group of ``proc`` (started with ``start_new_session=True``); gone already is fine."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@contextlib.contextmanager
def started(cmd, **popen_kwargs):
    """``subprocess.Popen(cmd, ...)`` in a new session, as a context manager: when the block ends (the test's
    wait timed out, an assertion failed, or all went well and only stragglers are left), the child's whole
    process group is killed, then the child is reaped and its pipes closed."""
    with subprocess.Popen(cmd, start_new_session=True, **popen_kwargs) as proc:
        try:
            yield proc
        finally:
            kill_group(proc)


def run(cmd, *, timeout: float, input=None, capture_output: bool = False, check: bool = False,
        **popen_kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run(cmd, timeout=timeout, ...)`` that kills the child's whole process group on time-out."""
    if capture_output:
        popen_kwargs["stdout"] = popen_kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        popen_kwargs["stdin"] = subprocess.PIPE
    with subprocess.Popen(cmd, start_new_session=True, **popen_kwargs) as proc:
        try:
            stdout, stderr = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            kill_group(proc)
            try:
                stdout, stderr = proc.communicate(timeout=_DRAIN)
            except subprocess.TimeoutExpired:  # a member that left the group still holds a pipe
                stdout, stderr = exc.output, exc.stderr
            raise subprocess.TimeoutExpired(cmd, timeout, output=stdout, stderr=stderr) from None
        except BaseException:
            kill_group(proc)
            raise
    completed = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    if check:
        completed.check_returncode()
    return completed
