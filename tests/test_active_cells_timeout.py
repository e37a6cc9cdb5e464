"""trial_timeout in anytime cells (issue 53): the curve runs in the harness's trial worker, so a curve
past the limit is a recorded ``timeout`` row, not a hang; within the limit the row is the in-process one."""

from __future__ import annotations

import numpy as np

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


def test_a_curve_in_the_trial_worker_is_the_curve_run_in_process(tmp_path):
    # first in the file: it starts the harness's trial worker (2-3 s), which the timeout test then reuses
    inside = run_job(_cell(trial_timeout=60), tmp_path / "worker").iloc[0]
    here = run_job(_cell(), tmp_path / "here").iloc[0]
    assert inside["status"] == here["status"] == "ok" and inside["trial_seed"] == here["trial_seed"]
    columns = ["ari_all_q0", "ari_all_q10", "ari_unqueried_q10", "n_must_link", "n_cannot_link", "auc_ari"]
    np.testing.assert_array_equal(inside[columns].to_numpy(float), here[columns].to_numpy(float))
    assert inside["trial_cpu_time"] > 0 and ("trial_cpu_time" not in here or np.isnan(here["trial_cpu_time"]))


def test_a_curve_past_trial_timeout_is_a_recorded_timeout_row(tmp_path, throwaway_plugin):
    module = throwaway_plugin(_SLOW_STRATEGY)
    cell = _cell("test_spins_first", trial_timeout=0.5)
    cell["plugins"] = [*cell["plugins"], module.__name__]
    row = run_job(cell, tmp_path).iloc[0]
    assert row["status"] == "timeout", (row["status"], row["error"])
    assert row["error"].startswith("TrialTimeout: ") and "trial_timeout=0.5" in row["error"], row["error"]
