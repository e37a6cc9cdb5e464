"""The first Python a SLURM task of ``hydra/launcher=slurm`` runs (issue 54, item 6).

SLURM signals a task (``USR2``, submitit's preemption signal) before preempting it or at its time
limit. Submitit installs its handler (checkpoint and requeue) only after unpickling the task, which
imports Hydra and ccbench: about 20 s of wall on a busy node in which ``USR2``'s default action
killed the task (``FAILED``, not requeued). The launcher therefore starts each task as

    sh -c 'trap "" USR2; exec PYTHON -u .../_task_start.py "$@"' ccbench-task -u -m submitit.core._submit FOLDER

(:func:`task_python`): from the shell's first instruction the signal is ignored (not fatal) while
the interpreter starts; this file's first statements replace that with a handler that *records*
the signal (``CCBENCH_EARLY_SIGNAL`` in the environment), then runs submitit's entry point as
``python -m`` would. Once submitit's handler is installed, the launcher hands it a recorded signal
(:func:`ccbench.running.slurm.replay_early_signal`, from
:meth:`~hydra_plugins.ccbench_sweeper.slurm_launcher.CCBenchSlurmLauncher.__call__`): the task
checkpoints and requeues itself as for any other preemption, before any cell runs.

Nothing is imported here but the standard library's ``os``, ``signal`` and ``sys`` (built in):
run by path, this file is not part of its package. ``CCBENCH_TEST_TASK_START_HOLD=<path>`` (tests
only) makes the start-up observable: it appends ``started <pid>`` to ``<path>.started``, a line
per recorded signal, and waits until ``<path>`` exists.
"""

import os
import signal
import sys

#: set to the signal's number when the preemption signal came before submitit's handler
EARLY_SIGNAL_ENV = "CCBENCH_EARLY_SIGNAL"
#: tests only: hold the start-up until this file exists (see the module docstring)
HOLD_ENV = "CCBENCH_TEST_TASK_START_HOLD"


def preemption_signal() -> int:
    """Submitit's preemption signal (``SUBMITIT_PREEMPT_SIGNAL``, ``USR2`` by default)."""
    return getattr(signal, "SIG" + os.environ.get("SUBMITIT_PREEMPT_SIGNAL", "USR2"))


def _record(signum, frame):
    os.environ[EARLY_SIGNAL_ENV] = str(signum)
    hold = os.environ.get(HOLD_ENV)
    if hold:
        with open(hold + ".started", "a") as f:
            f.write(f"signal {signum}\n")


def _hold() -> None:
    hold = os.environ.get(HOLD_ENV)
    if not hold:
        return
    import time

    with open(hold + ".started", "a") as f:
        f.write(f"started {os.getpid()}\n")
    while not os.path.exists(hold):
        time.sleep(0.05)


def _run(argv: list) -> None:
    """Run ``[-u] -m MODULE ARGS...`` (what submitit puts after the python command) as ``python -m`` would."""
    import runpy

    at = argv.index("-m")
    module, args = argv[at + 1], argv[at + 2:]
    sys.path[0] = os.getcwd()  # what -m puts first; not this file's directory
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    signal.signal(preemption_signal(), _record)
    _hold()
    _run(sys.argv[1:])
