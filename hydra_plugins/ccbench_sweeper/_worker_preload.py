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


_preload()
