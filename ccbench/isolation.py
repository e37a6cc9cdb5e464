"""Run a trial where it can be interrupted: one worker process, killed on a time-out.

A numba kernel or a solver in C holds the interpreter, so a time limit inside the
process cannot stop it; a separate process can be killed. :class:`IsolatedRunner`
keeps one worker per job (never forked with a thread pool half-way: see below) and
replaces it after a kill or a crash. The cost is the worker's start-up (imports, when it is
spawned) and pickling each trial's arrays, which is why isolation is opt-in
(``trial_timeout``). In a process that a fork server forked (the joblib launcher's workers,
whose server imported the harness once: :func:`_inherited_fork_server`), the worker is forked from
that same single-threaded server instead: no new interpreter, no imports; spawned again if the
server is gone. Elsewhere (a SLURM task, a local sweep's process) the worker is *forked from this
process* when that is safe (:func:`fork_is_safe`: called from the main thread, no Python thread but
ccbench's own watchers, no native thread but OpenBLAS's pool, which is fork-safe): the worker starts
with everything this process imported (a SLURM task spent 2-2.5 s of CPU importing the scientific
stack a second time in its spawned worker), and the handlers this process installed for signals
(submitit's preemption handler) are reset in it, as in a fresh interpreter. Otherwise (an OpenMP or
numba thread pool started by a fit in this process, a thread of some library) it is spawned.

The limit is CPU time, not wall time: the parent reads the worker's CPU seconds (user + system,
every thread of the process; Linux ``/proc/<pid>/stat``) while it waits, and kills the worker
when the call has used ``timeout`` seconds of CPU. On a busy machine a fit gets a fraction of a
core, so a wall-clock limit would exclude a method for the machine's load rather than for its
cost. A wall-clock backstop (``wall_factor`` x ``timeout``, default 3) still kills a worker that
is stuck (waiting on a lock, swapping); it counts wall time *less the time the worker waited for a
CPU* (Linux schedstat: :func:`process_wait_seconds`), so a worker starved by a busy machine is not
killed for the machine's load (issue 38: a leaderboard sweep beside other work had COBS killed on a
47-point set after 30 s of wall and 2.6 s of CPU). A hard limit of ``HARD_WALL_FACTOR`` x
``timeout`` of plain wall time ends even a starved call. Where the CPU time cannot be read (no
``/proc``), the limit falls back to wall time. ``last_cpu`` / ``last_wall`` hold the last call's
seconds of each (also after a kill).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import time
import traceback
import warnings

__all__ = ["IsolatedRunner", "TrialTimeout", "WorkerDied", "process_cpu_seconds", "process_wait_seconds", "die_with",
           "descends_from", "fork_is_safe", "shared_runner"]


class TrialTimeout(Exception):
    """The call did not return within its time limit (harness status ``timeout``)."""


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (all its threads), from Linux's
    ``/proc/<pid>/stat``; None where that cannot be read (another OS, the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            text = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()  # after "pid (comm) ": field 3 is fields[0]
    try:
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    except (IndexError, ValueError, OSError):
        return None


def process_wait_seconds(pid: int) -> float | None:
    """Seconds process ``pid``'s threads spent runnable but waiting for a CPU (summed over its
    threads: Linux ``/proc/<pid>/task/*/schedstat``, second field, ns); None where unreadable.

    Time a worker was *starved* by a busy machine, which the wall-clock backstop must not count: a
    stuck worker (sleeping on a lock, a pipe) does not accrue it, a starved one does. Summed, because
    a starved thread that holds up another (the GIL handed between the fit's thread and a helper
    thread) leaves the other asleep, not waiting; the sum can exceed the wall time only for a worker
    that is starved anyway."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    waits = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as fh:
                waits.append(int(fh.read().split()[1]))
        except (OSError, IndexError, ValueError):
            continue  # a thread that ended meanwhile
    return sum(waits) / 1e9 if waits else None


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
        try:  # Linux: a pidfd turns readable the moment the process ends
            import select

            fd = os.pidfd_open(pid)
            select.select([fd], [], [])
        except (AttributeError, OSError):  # elsewhere (or gone already): poll
            while alive():
                time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name=f"ccbench-watch-{pid}").start()


_WATCHED: set[int] = set()


def _serve(conn, preload, parent_pid=None, forked_by_server=False, forked_from=None) -> None:
    import importlib

    if forked_from is not None:  # forked from the caller (:func:`fork_is_safe`): a fresh process's state
        _forked_child_state(forked_from)
    if parent_pid is not None and forked_by_server:  # the server is its parent: watch the caller
        die_with(parent_pid)
    elif parent_pid is not None:
        _die_with_parent(parent_pid)

    for name in preload:  # imports are start-up, not part of any call's time limit
        importlib.import_module(name)
    conn.send("ready")
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the caller is gone
            return
        if message is None:
            return
        func, args, parent_path = message
        added = [entry for entry in parent_path if entry not in sys.path]
        if added:  # a module made importable in the parent after this worker started (a plugin's folder)
            sys.path.extend(added)
            importlib.invalidate_caches()
        try:
            answer = (True, func(*args), None)
        except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
            answer = (False, exc, traceback.format_exc())
        try:
            _answer(conn, answer)
        except OSError:  # the caller is gone: nobody to answer
            return


#: the threads ccbench starts that may run while the process forks: each waits in one system call
#: (``select`` on a pidfd, ``sleep``) holding no lock, and none is needed in the child
_OWN_THREADS = ("ccbench-watch-", "ccbench-parent-watch")


#: native threads known by name whose library makes them safe across ``fork`` (Linux ``comm``):
#: jemalloc's background thread (pyarrow's allocator: jemalloc takes its locks around ``fork``)
_FORK_SAFE_NATIVE = frozenset({"jemalloc_bg_thd"})


def _native_threads() -> int | None:
    """The number of threads of this process not in ``_FORK_SAFE_NATIVE`` (Linux
    ``/proc/self/task/*/comm``), None where unreadable."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    count = 0
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/comm") as fh:
                count += fh.read().strip() not in _FORK_SAFE_NATIVE
        except OSError:  # a thread that ended meanwhile
            continue
    return count


def _openblas_pool_threads() -> int | None:
    """Threads of the OpenBLAS pools loaded in this process (each pool has ``num_threads - 1``
    workers; the caller's thread is the last), as threadpoolctl reports them; None when another
    native pool (OpenMP, MKL, BLIS) may have threads, or threadpoolctl is missing."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    pools = 0
    for lib in threadpool_info():
        if lib.get("internal_api") == "openblas" and lib.get("threading_layer") in ("pthreads", None):
            pools += max(int(lib.get("num_threads") or 1) - 1, 0)
        elif lib.get("user_api") == "blas":  # MKL, BLIS, OpenBLAS built on OpenMP: not counted here
            return None
    return pools


def fork_is_safe() -> bool:
    """Whether a child forked from this process now can be trusted to run a fit.

    A fork copies one thread: a lock another thread held stays locked in the child, and a thread
    pool's bookkeeping names threads that no longer exist (GNU OpenMP's, numba's: the child's next
    parallel region hangs). Safe when (1) this is the main thread (the child's parent-death signal
    follows the thread that forked it), (2) every other Python thread is one of ccbench's watchers
    (``_OWN_THREADS``: blocked in a system call, holding nothing), and (3) every other native thread
    is accounted for by (2), by an OpenBLAS pool (pthreads; OpenBLAS shuts its pool down around
    ``fork``) or by name (``_FORK_SAFE_NATIVE``: pyarrow's jemalloc thread): counted,
    ``/proc/self/task`` against :func:`threading.enumerate` plus the pools' sizes, so an OpenMP pool
    that a fit in this process started (k-means), numba's, or any library's thread makes the count
    exceed it and the worker is spawned instead. An OpenBLAS pool is up (its size) or down (none:
    OpenBLAS stops it around each fork and starts it again at the next BLAS call), so the count may
    be below the sum; what it cannot tell (an OpenMP pool started while an OpenBLAS pool was down)
    takes a fit in this process, after which the harness forks no more (``IsolatedRunner.fork``).
    Linux only."""
    import threading

    if "fork" not in mp.get_all_start_methods() or threading.current_thread() is not threading.main_thread():
        return False
    python = threading.enumerate()
    if any(t is not threading.main_thread() and not t.name.startswith(_OWN_THREADS) for t in python):
        return False
    native = _native_threads()
    if native is None or native < len(python):
        return False
    if native == len(python):
        return True
    pools = _openblas_pool_threads()
    return pools is not None and native <= len(python) + pools


def _handled_signals() -> list:
    """The signals this process handles in Python (submitit's preemption and ``SIGTERM`` handlers,
    ``_task_start``'s recorder): a forked child must not run them."""
    import signal

    handled = []
    for signum in signal.valid_signals():
        try:
            handler = signal.getsignal(signum)
        except (OSError, ValueError):
            continue
        if callable(handler) and handler is not signal.default_int_handler:
            handled.append(signum)
    return handled


def _forked_child_state(forked_from) -> None:
    """In a worker forked from its caller, before anything else: the caller's end of the pipe closed
    (the worker sees the caller go), no watcher of the caller's (they did not survive the fork), and
    the caller's Python signal handlers replaced by the defaults a spawned worker has: a preemption
    signal that reaches the worker must not requeue the task a second time from here. The caller
    blocked those signals around the fork (:meth:`IsolatedRunner._launch`); one that came meanwhile
    is delivered, with its default action, when they are unblocked here."""
    import signal

    inherited_end, mask = forked_from
    inherited_end.close()
    _WATCHED.clear()
    for signum in _handled_signals():
        signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _answer(conn, answer) -> None:
    """Send ``(ok, value, traceback)`` to the caller; a value or an exception that does not pickle
    is sent as the error that says so. ``OSError``: the caller is gone."""
    ok, value, text = answer
    try:
        conn.send(answer)
        return
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - did not pickle
        failure, text = (exc, traceback.format_exc()) if ok else (RuntimeError(text.strip().splitlines()[-1]), text)
    try:
        conn.send((False, failure, text))
    except OSError:
        raise
    except Exception:  # noqa: BLE001 - nor did the pickling error
        conn.send((False, RuntimeError(text.strip().splitlines()[-1]), text))


class IsolatedRunner:
    """Call picklable functions in a worker process with a time limit.

    ``preload`` names modules the worker imports before it reports ready, so
    their import time does not count against a call's limit. ``fork`` (default True; an attribute,
    set False once this process runs fits itself): fork the worker from this process when
    :func:`fork_is_safe` (else spawn it); ``start_method`` says how the current worker was started
    (``fork``, ``forkserver`` or ``spawn``).

    >>> runner = IsolatedRunner()  # doctest: +SKIP
    >>> runner.call(pow, 2, 10, timeout=30)  # doctest: +SKIP
    1024
    """

    #: Seconds a new worker may take to start and import ``preload``.
    START_TIMEOUT = 300.0
    #: The wall-clock backstop: a call is killed after ``WALL_FACTOR x timeout`` seconds of wall time
    #: not spent waiting for a CPU, whatever CPU time it used.
    WALL_FACTOR = 3.0
    #: ... and after ``HARD_WALL_FACTOR x timeout`` seconds of wall time, starved or not.
    HARD_WALL_FACTOR = 30.0
    #: Seconds between two reads of the worker's CPU time while a call runs.
    POLL = 0.05

    def __init__(self, preload: tuple[str, ...] = (), fork: bool = True):
        self._server = _inherited_fork_server()
        self.fork = fork
        self._ctx = None
        self.start_method: str | None = None
        self._preload = tuple(preload)
        self._proc = None
        self._conn = None
        self.last_cpu: float | None = None
        self.last_wall: float | None = None
        self._finalizer = None

    def _context(self):
        """How to start the next worker: from the fork server this process came from, else forked from
        this process when that is safe now (threads come and go), else spawned."""
        if self._server is not None:
            return self._server
        return mp.get_context("fork") if self.fork and fork_is_safe() else mp.get_context("spawn")

    def _start(self) -> None:
        self._ctx = self._context()
        try:
            self._launch()
        except OSError:  # the fork server cannot be reached (killed from outside): spawn from now on
            if self._ctx.get_start_method() != "forkserver":
                raise
            self._server = None
            self._ctx = mp.get_context("spawn")
            self._launch()
        if not self._conn.poll(self.START_TIMEOUT) or self._conn.recv() != "ready":
            self.close(kill=True)
            raise WorkerDied(f"the worker process did not start within {self.START_TIMEOUT:g} s")

    def _launch(self) -> None:
        import signal

        method = self._ctx.get_start_method()
        forked = method == "forkserver"
        parent, child = self._ctx.Pipe()
        handled = _handled_signals() if method == "fork" else []
        # forked: the handlers this process installed must not run in the child before it resets them,
        # so those signals wait (blocked) across the fork; here they are delivered right after it
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, handled) if handled else None
        forked_from = (parent, mask if mask is not None else signal.pthread_sigmask(signal.SIG_BLOCK, [])) \
            if method == "fork" else None
        proc = self._ctx.Process(target=_serve, args=(child, self._preload, os.getpid(), forked, forked_from),
                                 daemon=True)
        # The child re-applies the parent's *global* start method, which a library may have set
        # to one the child cannot resolve (joblib's "loky", inside Hydra's joblib launcher):
        # spawn is the global default while the worker starts, then the old one is put back.
        previous = mp.get_start_method(allow_none=True)
        mp.set_start_method("spawn", force=True)
        try:
            with warnings.catch_warnings():  # Python >= 3.12 warns of any thread: fork_is_safe counted them
                warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*multi-threaded.*fork")
                proc.start()
        except BaseException:
            parent.close()
            raise
        finally:
            child.close()
            mp.set_start_method(previous, force=True)
            if mask is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        self._proc, self._conn, self.start_method = proc, parent, method
        if forked and self._finalizer is None:
            # a process forked by the fork server ends without running atexit (multiprocessing's
            # finalizers run): stop the trial worker then, not a second later (die_with)
            from multiprocessing import util

            self._finalizer = util.Finalize(None, self.close, exitpriority=10)

    def _wait(self, timeout: float, wall_timeout: float, cpu0: float | None, tic: float) -> str | None:
        """Wait for the answer; None when it came, else why the call must be killed."""
        poll = self.POLL
        wait0 = process_wait_seconds(self._proc.pid)
        hard = self.HARD_WALL_FACTOR * timeout
        while True:
            wall = time.perf_counter() - tic
            if self._conn.poll(max(0.0, min(poll, hard - wall))):
                return None
            wall = time.perf_counter() - tic
            now = process_cpu_seconds(self._proc.pid) if cpu0 is not None else None
            cpu = None if now is None else now - cpu0
            waited = process_wait_seconds(self._proc.pid) if wait0 is not None else None
            starved = 0.0 if waited is None else max(0.0, waited - wait0)
            self.last_cpu, self.last_wall = cpu, wall
            if cpu is not None and cpu >= timeout:
                return (f"{cpu:.1f} s of CPU time reached trial_timeout={timeout:g} s (after {wall:.1f} s of "
                        f"wall time); the worker was killed")
            if cpu is None and wall >= timeout:  # no CPU clock here: wall time is the limit
                return f"no result within trial_timeout={timeout:g} s (wall time); the worker was killed"
            if wall - starved >= wall_timeout or wall >= hard:
                return (f"wall-clock backstop: {wall:.1f} s of wall time, {starved:.1f} s of it waiting for a CPU "
                        f"(limit {wall_timeout:g} s = {wall_timeout / timeout:g} x trial_timeout={timeout:g} s "
                        f"not waiting, or {hard:g} s in all) with {'?' if cpu is None else f'{cpu:.1f}'} s of "
                        f"CPU time; the worker was killed")
            poll = min(0.5, poll * 1.5)

    def call(self, func, *args, timeout: float | None, wall_timeout: float | None = None):
        """``func(*args)`` in the worker; its exception is re-raised here with ``.worker_traceback``.

        ``timeout``: seconds of the worker's CPU time the call may use (None: no limit), killed at the
        limit (:class:`TrialTimeout`); ``wall_timeout`` (default ``WALL_FACTOR x timeout``): the
        wall-clock backstop. ``last_cpu`` and ``last_wall`` then hold what the call used."""
        if self._proc is None or not self._proc.is_alive():
            self._start()
        self.last_cpu = self.last_wall = None
        cpu0 = process_cpu_seconds(self._proc.pid)
        tic = time.perf_counter()
        self._conn.send((func, args, list(sys.path)))
        if timeout is not None:
            wall_timeout = self.WALL_FACTOR * timeout if wall_timeout is None else wall_timeout
            reason = self._wait(float(timeout), float(wall_timeout), cpu0, tic)
            if reason is not None:
                self.close(kill=True)
                raise TrialTimeout(reason)
        else:
            self._conn.poll(None)
        if cpu0 is not None:
            now = process_cpu_seconds(self._proc.pid)
            self.last_cpu = None if now is None else now - cpu0
        self.last_wall = time.perf_counter() - tic
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


def _inherited_fork_server():
    """The ``forkserver`` context of the fork server this process was forked from, or None.

    A launcher's worker forked from a fork server that preloaded the harness
    (:mod:`hydra_plugins.ccbench_sweeper.joblib_launcher`) forks its trial worker from the same
    server: a fork of a single-threaded process that imported everything already, not a new
    interpreter importing it all again. multiprocessing leaves the server's address and its "alive"
    pipe in such a process but not its pid, so its ``ensure_running`` would start a server of its
    own: here it only checks the resource tracker (the server is alive while this process is)."""
    from multiprocessing import forkserver, resource_tracker

    server = getattr(forkserver, "_forkserver", None)
    if (server is None or getattr(server, "_inherited_fds", None) is None
            or not getattr(server, "_forkserver_address", None) or getattr(server, "_forkserver_alive_fd", None) is None):
        return None
    server.ensure_running = resource_tracker.ensure_running
    return mp.get_context("forkserver")


def descends_from(pid: int) -> bool:
    """Whether ``pid`` is an ancestor of this process (Linux /proc; False where it cannot be read)."""
    current = os.getppid()
    for _ in range(64):
        if current == pid:
            return True
        if current <= 1:
            return False
        try:
            with open(f"/proc/{current}/stat") as fh:
                current = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False


_shared_runners: dict[str, IsolatedRunner] = {}


def shared_runner(name: str) -> IsolatedRunner:
    """The one long-lived :class:`IsolatedRunner` of ``name`` in this process (a peer package's worker:
    ``ccbench_plugins.kmeans.peers``, ``ccbench_plugins.cobras.peer``), made on first use and closed at exit;
    a runner whose worker died starts a fresh one on its next call."""
    runner = _shared_runners.get(name)
    if runner is None:
        if not _shared_runners:
            import atexit

            atexit.register(_close_shared_runners)
        runner = _shared_runners[name] = IsolatedRunner()
    return runner


def _close_shared_runners() -> None:
    for runner in _shared_runners.values():
        runner.close()
