"""trial_timeout in anytime cells (issue 53): the curve runs in the harness's trial worker, so a curve
past the limit is a recorded ``timeout`` row, not a hang; within the limit the row is the in-process one.

The fast tests hand the harness a stand-in worker (the real one costs 3-7 s to start on a loaded
machine); the real kill is the slow test: `pytest -m slow tests/test_active_cells_timeout.py`."""

from __future__ import annotations

import numpy as np
import pytest

from ccbench.isolation import TrialTimeout
from ccbench.running import active_cells, harness
from ccbench.running.harness import run_job

# spins 3 s of CPU on its first question, then asks random pairs: in-process (no limit) the curve ends
# ok after about 3 s, so the timeout test fails on a harness that ignores trial_timeout instead of hanging
_SLOW_STRATEGY = '''
import time

from ccbench.hookspecs import hookimpl
from ccbench.registry import QueryStrategySpec


class SpinsFirst:
    def next_pair(self, X, asked, answers, labels=None, rng=None):
        from ccbench_plugins.active.core import random_unasked_pair

        if not len(asked):
            start = time.process_time()
            while time.process_time() - start < 3.0:
                pass
        return random_unasked_pair(len(X), asked, rng)


@hookimpl
def ccbench_query_strategies():
    return [QueryStrategySpec("test_spins_first", SpinsFirst)]
'''


def _cell(strategy="random", **root):
    return {
        "dataset": {"name": "iris", "preprocess": "standardize"},
        "method": {"name": "pck_means", "n_clusters": "true_k"},
        "constraints": {"name": "active_queries", "strategy": strategy, "budget": 10, "step": 10},
        "noise": {"name": "constraint_flip", "rate": 0.1},
        "n_trials": 1, "metrics": ["ari"], "plugins": ["ccbench_plugins.cobras"], **root,
    }


class _StandIn:
    """The harness's trial worker, in process: records each call; ``limit_hit`` makes it raise the
    worker's TrialTimeout instead of calling."""

    def __init__(self, limit_hit=False):
        self.limit_hit, self.calls = limit_hit, []
        self.last_cpu = self.last_wall = None

    def call(self, func, *args, timeout):
        self.calls.append((func, timeout))
        self.last_cpu = self.last_wall = 0.25
        if self.limit_hit:
            raise TrialTimeout(f"0.3 s of CPU time reached trial_timeout={timeout:g} s; the worker was killed")
        return func(*args)


def test_with_trial_timeout_the_curve_runs_in_the_worker_and_is_the_in_process_curve(tmp_path, monkeypatch):
    worker = _StandIn()
    monkeypatch.setattr(harness, "_worker", lambda: worker)
    inside = run_job(_cell(trial_timeout=60), tmp_path / "worker").iloc[0]
    here = run_job(_cell(), tmp_path / "here").iloc[0]
    assert worker.calls == [(active_cells.curve_in_worker, 60.0)]  # once, the whole curve, under the limit
    assert inside["status"] == here["status"] == "ok" and inside["trial_seed"] == here["trial_seed"]
    columns = ["ari_all_q0", "ari_all_q10", "ari_unqueried_q10", "n_must_link", "n_cannot_link", "auc_ari"]
    np.testing.assert_array_equal(inside[columns].to_numpy(float), here[columns].to_numpy(float))
    assert inside["trial_cpu_time"] == 0.25


def test_a_curve_stopped_at_trial_timeout_is_a_timeout_row(tmp_path, monkeypatch):
    monkeypatch.setattr(harness, "_worker", lambda: _StandIn(limit_hit=True))
    rows = run_job({**_cell(trial_timeout=0.5), "n_trials": 2, "timeout_stops_cell": True}, tmp_path)
    assert list(rows["status"]) == ["timeout", "timeout"]
    assert rows["error"][0].startswith("TrialTimeout: ") and "trial_timeout=0.5" in rows["error"][0]
    assert "timeout_stops_cell=true" in rows["error"][1]  # the harness's rule applies to curves too


@pytest.mark.slow
def test_a_curve_past_trial_timeout_is_killed_in_the_real_worker(tmp_path, throwaway_plugin):
    """The real worker (3-7 s to start): a strategy spinning 3 s of CPU under trial_timeout=0.5 is killed."""
    module = throwaway_plugin(_SLOW_STRATEGY)
    cell = _cell("test_spins_first", trial_timeout=0.5)
    cell["plugins"] = [*cell["plugins"], module.__name__]
    row = run_job(cell, tmp_path).iloc[0]
    assert row["status"] == "timeout", (row["status"], row["error"])
    assert row["error"].startswith("TrialTimeout: ") and "trial_timeout=0.5" in row["error"], row["error"]
