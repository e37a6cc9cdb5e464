"""Per-job overhead of the harness: ``run_job`` on a method whose fit costs nothing.

What a Hydra job pays besides fitting: composing the cell, loading the data set,
drawing the supervision, computing the metrics, writing ``results.parquet`` and
``cell.json``. The method is registered here and returns a constant labelling, so
the time is the harness's own. ``time_resume`` is a job whose trials are all
recorded already (a re-run of a finished sweep).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np

from ccbench import registry
from ccbench.base import ConstrainedClusterer
from ccbench.hookspecs import hookimpl
from ccbench.running.harness import run_job

from .common import smoke_or


class _Constant(ConstrainedClusterer):
    def fit(self, X, y=None, *, constraints=None):
        self.labels_ = np.zeros(len(X), dtype=int)
        return self


class _TrivialPlugin:
    @hookimpl
    def ccbench_methods(self):
        return [registry.MethodSpec("bench_constant", _Constant, "one cluster, no work")]


def _cell(n_trials: int) -> dict:
    return {
        "dataset": {"name": "iris", "preprocess": "none"},
        "method": {"name": "bench_constant"},
        "constraints": {"name": "random_pairs", "n_constraints": 60},
        "noise": {"name": "none"},
        "n_trials": n_trials,
    }


class RunJobOverhead:
    """``run_job`` of one cell (iris, 60 random pairs, all default metrics) into a fresh directory."""

    param_names = ["n_trials"]
    params = (smoke_or([1, 10], [1]),)
    timeout = 120

    def setup(self, n_trials):
        registry.register_plugin(_TrivialPlugin(), name="bench_constant_plugin")
        self.root = Path(tempfile.mkdtemp(prefix="ccbench-bench-"))
        self.count = 0
        run_job(_cell(n_trials), out_dir=self.root / "warm")  # imports, data cache, metric modules
        self.done = self.root / "done"
        run_job(_cell(n_trials), out_dir=self.done)

    def teardown(self, n_trials):
        shutil.rmtree(self.root, ignore_errors=True)

    def time_run_job(self, n_trials):
        self.count += 1
        run_job(_cell(n_trials), out_dir=self.root / f"run{self.count}")

    def time_resume(self, n_trials):
        run_job(_cell(n_trials), out_dir=self.done)
