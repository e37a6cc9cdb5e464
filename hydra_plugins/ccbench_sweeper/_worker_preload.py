"""What a joblib worker needs before its first job, imported once by the launcher's fork server.

:mod:`hydra_plugins.ccbench_sweeper.joblib_launcher` forks every worker, and every trial worker,
from one server that imported this: the app, the harness, the results store, the metrics, the
registry's built-in plugins, and the modules of the sweep's built-in methods (named by the launcher
in ``CCBENCH_PRELOAD_MODULES``). A module that fails to import here is left to the worker, which
imports it where it always did and reports the failure in the job's rows.
"""

import importlib
import os

import joblib.externals.loky.process_executor  # noqa: F401
import pyarrow.parquet  # noqa: F401

import ccbench.metrics  # noqa: F401
import ccbench.running.app  # noqa: F401
import ccbench.running.harness  # noqa: F401
import hydra_plugins.ccbench_sweeper.joblib_launcher  # noqa: F401


def _preload() -> None:
    from ccbench import registry

    try:
        registry.list_methods(load=False)  # the built-in plugins' modules
    except Exception:  # noqa: BLE001 - a worker discovers the plugins again and names the problem
        pass
    for name in filter(None, os.environ.get("CCBENCH_PRELOAD_MODULES", "").split(",")):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - as above
            pass


def _end_with_the_sweep() -> None:
    """Every process forked from this server ends with the sweep's main process (the server's
    parent), idle or busy: a job worker arms :func:`ccbench.isolation.die_with` when its first job
    starts, and one killed before that (a pool with more workers than jobs) kept the server and
    itself running after the sweep was killed. A hook, not a thread here: the server forks, so it
    stays single-threaded."""
    from ccbench.isolation import die_with

    main = os.getppid()
    os.register_at_fork(after_in_child=lambda: die_with(main))


_preload()
_end_with_the_sweep()
