"""The sweep command's exit status (issue 55): a trial that reached its budget (status ``timeout``) is a
measured result of the protocol, ranked like any other, so timeouts alone exit 0 with their count and
cells printed; an exception (status ``error``) is a failure of the run and exits 1 with its cause.

The sweeps run through the real command in a subprocess (Hydra's exit path is part of what is tested);
the method sleeps or raises on request, so the timeouts are the harness's CPU kill at ``trial_timeout``
(a sleeping trial spends no CPU: the kill falls back on wall time after a multiple of it) and nothing
depends on the machine's speed. ``trial_timeout=0.5``: each timeout costs its wall-clock backstop, 3 x 0.5 s
(3 s at the former 1 s, issue 56); a trial that must pass uses 0.04 s of CPU (measured: the first call in a
new worker, at load 25), so the limit is 12 times what it needs.
"""

from __future__ import annotations

import os
import sys

import pandas as pd
import pytest

from ccbench.running.results import read_results
import _proc  # on time-out, the command's whole process group is killed (issue 54)

PLUGIN = "ccbench_exit_status_plugin"
PLUGIN_SOURCE = """
import time
import numpy as np
from ccbench import ConstrainedClusterer, MethodSpec, hookimpl

class Doze(ConstrainedClusterer):
    def __init__(self, seconds=0.0, fail=False, random_state=None):
        self.seconds, self.fail, self.random_state = seconds, fail, random_state

    def fit(self, X, y=None, *, constraints=None):
        if self.fail:
            raise RuntimeError("doze: deliberate failure")
        time.sleep(self.seconds)
        self.labels_ = np.arange(len(X)) % 2
        return self

@hookimpl
def ccbench_methods():
    return [MethodSpec("doze", Doze, "sleeps, or raises on request")]
"""


@pytest.fixture
def plugin_dir(tmp_path):
    d = tmp_path / "plugin"
    (d / "conf" / "method").mkdir(parents=True)
    (d / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE)
    (d / "conf" / "method" / "doze.yaml").write_text("name: doze\n")
    return d


def _sweep(plugin_dir, sweep, *extra):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_dir), os.environ.get("PYTHONPATH", "")])}
    args = ["-m", "method=doze", "dataset=iris", "constraints=none", "n_trials=2", "metrics=[ari]",
            "hydra/launcher=basic", f"plugins=[{PLUGIN}]", f"hydra.searchpath=[file://{plugin_dir / 'conf'}]",
            f"hydra.sweep.dir={sweep}", *extra]
    cmd = [sys.executable, "-c", "import sys; from ccbench.running.cli import main; sys.exit(main())", *args]
    return _proc.run(cmd, cwd=sweep.parent, env=env, capture_output=True, text=True, timeout=600)


def _statuses(sweep) -> list[str]:
    rows = pd.concat([read_results(f) for f in sweep.rglob("results.parquet")], ignore_index=True)
    return sorted(rows["status"])


def test_timeouts_alone_exit_0_and_are_counted_with_their_cells(plugin_dir, tmp_path):
    sweep = tmp_path / "sweep"
    proc = _sweep(plugin_dir, sweep, "method.seconds=0,4", "trial_timeout=0.5")
    assert _statuses(sweep) == ["ok", "ok", "timeout", "timeout"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "2 trial(s) reached their budget (status timeout" in proc.stderr
    # the cell that timed out, named (its job directory tells it from the one that did not)
    assert "iris / doze / none (job constraints=none,dataset=iris,method.seconds=4,method=doze): 2 of 2 trial(s)" \
        in proc.stderr
    assert "failed" not in proc.stderr.lower()


def test_an_error_exits_1_with_its_cause_and_timeouts_beside_it_are_still_counted(plugin_dir, tmp_path):
    sweep = tmp_path / "sweep"
    proc = _sweep(plugin_dir, sweep, "method.seconds=4", "method.fail=true,false", "trial_timeout=0.5")
    assert _statuses(sweep) == ["error", "error", "timeout", "timeout"]
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "2 trial(s) failed (status error)" in proc.stderr
    assert "doze: deliberate failure" in proc.stderr  # the real cause, not only a count
    assert "2 trial(s) reached their budget" in proc.stderr


def _rows(statuses):
    return pd.DataFrame({"config_hash": "c0", "trial": range(len(statuses)), "status": statuses,
                         "error": [None if st == "ok" else f"{st}: message {t}" for t, st in enumerate(statuses)],
                         "dataset.name": "iris", "method.name": "doze", "tune": "none", "constraints.name": "none",
                         "noise.name": "none"})


@pytest.mark.parametrize("statuses, failed, timeouts, status", [
    (["ok", "timeout", "timeout"], 0, 2, 0),
    (["error", "timeout", "ok"], 1, 1, 1),
    (["ok", "ok"], 0, 0, 0),
])
def test_the_end_of_sweep_count_keeps_timeouts_apart_from_errors(tmp_path, monkeypatch, statuses, failed, timeouts,
                                                                 status):
    """The rule from the rows the callback reads: errors decide the status, timeouts are counted beside them."""
    from ccbench.running import app, cli
    from ccbench.running.results import write_results

    (tmp_path / "job").mkdir()
    write_results(_rows(statuses), tmp_path / "job" / "results.parquet")
    # a fresh sweep's outcome (on_multirun_start clears it): another file's test in this worker left a callback_error
    monkeypatch.setattr(app, "_outcome", {})
    app.SweepSummaryCallback(metric="ari")._count(tmp_path)
    outcome = app.last_sweep_outcome()
    assert (outcome["failed"], outcome["timeouts"]) == (failed, timeouts)
    assert len(outcome["timeout_cells"]) == (1 if timeouts else 0)
    assert cli._exit_status(outcome, []) == status


def test_a_run_without_the_folder_report_counts_only_the_jobs_it_ran(plugin_dir, tmp_path):
    """A block of a shared folder (``sweeps/run_blocks.py`` sets write_report=false) is judged on its own
    cells: another run's error rows in the folder neither fail it nor reach its summary. With the report
    (the default) the folder's every row counts, as before."""
    sweep = tmp_path / "sweep"
    assert _sweep(plugin_dir, sweep, "method.fail=true").returncode == 1
    own = _sweep(plugin_dir, sweep, "method.seconds=0.01", "hydra.callbacks.ccbench_summary.write_report=false")
    assert own.returncode == 0, own.stderr[-3000:]
    assert "deliberate failure" not in own.stdout + own.stderr
    assert not list(sweep.glob(".ccbench_ran.*"))  # the run's list went with its other markers
    folder = _sweep(plugin_dir, sweep, "method.seconds=0.02")
    assert folder.returncode == 1, folder.stderr[-3000:]
    assert "doze: deliberate failure" in folder.stderr
