"""The end-of-sweep report written by a process forked when the sweep starts.

The report's figure needs matplotlib (about a second of CPU to import, and the first figure drawn
pays for loading its fonts); the sweep's own process needs neither to run its jobs or to print its
summary table. :meth:`ReportWorker.start`, called when a sweep starts, forks a child that imports
the report's modules and draws one throw-away figure while the jobs run (on the machine's other
core, when it has one); at the end of the sweep :meth:`ReportWorker.submit` hands it the prepared
rows and the child writes ``summary.md``/``summary.parquet``/PNG and ``report.html``
(:func:`.summary.write_report`, :func:`.html.write_html`, the same calls with the same arguments,
so the same files) while the sweep's process prints its summary. The quick start's wall time drops
by about the import and the drawing; its CPU time stays (the child's is counted with the command's
once it is reaped).

When it is used (the choice, and why):

- only where ``os.fork`` exists and no other Python thread is alive in the sweep's process: a
  thread could hold a lock (an import's, a logger's) that the child would wait for forever;
- the child ignores Ctrl-C (the sweep's process decides) and ends within a second of the sweep's
  process, however that ends (:func:`ccbench.isolation.die_with`);
- :meth:`ReportWorker.result` returns ``None`` when the child gave no answer (it died, or the rows
  could not be sent): the caller then writes the report itself, as it did before this module;
  an exception raised by the report in the child comes back as :class:`ReportFailed` with the
  child's traceback, named as the original (``RuntimeError: ...``).

Protocol: each direction carries one message, an 8-byte length then a pickle; the parent ->
child message is ``(rows, out_dir, kwargs)``, the answer ``("ok", summary_md, html)`` or
``("error", type name, message, traceback text)``.
"""

from __future__ import annotations

import io
import os
import pickle
import signal
import struct
import sys
import threading

__all__ = ["ReportWorker", "ReportFailed"]

_HEADER = struct.Struct("<Q")


class ReportFailed(Exception):
    """The report raised in the child: ``kind`` is the original exception's type name, ``trace``
    the child's traceback text; ``str()`` is the original message."""

    def __init__(self, kind: str, message: str, trace: str):
        super().__init__(message)
        self.kind, self.trace = kind, trace


class ReportWorker:
    """A forked child that writes one end-of-sweep report (see the module docstring)."""

    def __init__(self, pid: int, to_child: int, from_child: int):
        self.pid, self._to_child, self._from_child = pid, to_child, from_child
        self._answer = None

    @classmethod
    def start(cls) -> ReportWorker | None:
        """Fork the child, or ``None`` where forking is not safe (see the module docstring)."""
        if not hasattr(os, "fork") or threading.active_count() > 1:
            return None
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        parent = os.getpid()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            status = 1
            try:
                os.close(down_w)
                os.close(up_r)
                status = _serve(parent, down_r, up_w)
            finally:
                os._exit(status)
        os.close(down_r)
        os.close(up_w)
        return cls(pid, down_w, up_r)

    def submit(self, rows, out_dir, **kwargs) -> bool:
        """Send the report's rows and arguments; ``False`` when they could not be sent (the child
        is then stopped and the caller writes the report itself)."""
        try:
            _send(self._to_child, (rows, str(out_dir), kwargs))
            return True
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            self.stop()
            return False

    def result(self):
        """Wait for the child's answer: ``(summary_md, html)`` paths, or ``None`` when it gave none.
        Raises :class:`ReportFailed` when the report raised in the child."""
        try:
            answer = _receive(self._from_child)
        except (OSError, EOFError, pickle.UnpicklingError):
            answer = None
        self.stop()
        if answer is None:
            return None
        if answer[0] == "error":
            raise ReportFailed(answer[1], answer[2], answer[3])
        return answer[1], answer[2]

    def stop(self) -> None:
        """End the child (if it still runs) and reap it; idempotent."""
        if self.pid is None:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self.pid = None


def _send(fd: int, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, n: int) -> bytes:
    parts, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other end closed the pipe")
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _receive(fd: int):
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size))
    return pickle.loads(_read_exactly(fd, size))


def _serve(parent: int, down: int, up: int) -> int:
    """The child: warm up, wait for the rows, write the report, answer. Exit status 0 when it
    answered (an answer may be an error), 1 otherwise."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from ..isolation import die_with

    die_with(parent)
    from .html import write_html
    from .summary import write_report

    _warm_up()
    try:
        rows, out_dir, kwargs = _receive(down)
    except (OSError, EOFError, pickle.UnpicklingError):
        return 1  # the sweep ended without a report
    try:
        paths = write_report(rows, out_dir, **kwargs)
        html = write_html(rows, out_dir, **kwargs)
        answer = ("ok", str(paths["summary_md"]), str(html))
    except Exception as exc:  # noqa: BLE001 - named to the sweep's process, which reports it
        import traceback

        answer = ("error", type(exc).__name__, str(exc), traceback.format_exc())
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    _send(up, answer)
    return 0


def _warm_up() -> None:
    """Draw a throw-away figure into memory: the report's first figure then finds matplotlib's
    fonts and renderer loaded (their caches hold what any later draw would compute the same)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1.5), layout="constrained")
    ax = fig.subplots()
    ax.errorbar([0, 1], [0.2, 0.8], yerr=[0.1, 0.1], marker="o", label="warm-up")
    ax.set_xlabel("x")
    ax.legend()
    fig.savefig(io.BytesIO(), format="png", dpi=100)
