"""The anytime protocol in the harness (issue 53, item 4): ccbench.running.active_cells and run_job.

Each anytime cell's row is one trial's curve; these tests check it against the active plugin's
anytime_curve run directly, the paired seeds, that the answers reach the method, and that bad input
is a recorded row naming the problem. The smoke experiment (experiment=active_smoke) is the slow test
at the end: `pytest -m slow tests/test_active_cells.py`.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ccbench import registry
from ccbench.datasets import load_dataset
from ccbench.running import active_cells, protocol
from ccbench.running.harness import run_job
from ccbench_plugins.active.anytime import anytime_curve, area_under_curve

BUDGETS = [0, 10, 20]


def _cell(strategy="random", rate=0.1, method="pck_means", n_trials=2, budget=20, **constraints):
    return {
        "dataset": {"name": "iris", "preprocess": "standardize"},
        "method": {"name": method, "n_clusters": "true_k"},
        "constraints": {"name": "active_queries", "strategy": strategy, "budget": budget, "step": 10,
                        **constraints},
        "noise": {"name": "constraint_flip", "rate": rate},
        "n_trials": n_trials, "metrics": ["ari"], "plugins": ["ccbench_plugins.cobras"],
    }


@pytest.fixture(scope="module")
def iris():
    return load_dataset("iris", preprocess="standardize")


def test_the_harness_row_is_the_curve_of_anytime_curve_run_directly(tmp_path, iris):
    rows = run_job(_cell(), tmp_path)
    assert list(rows["status"]) == ["ok", "ok"]
    for _, row in rows.iterrows():
        # the seed of the oracle, the strategy and the method: the cell's shared unsupervised-fit seed
        assert row["trial_seed"] == protocol.fit_seed(_cell(), int(row["trial"]))
        curve = anytime_curve(iris.X, iris.y, strategy="random", method="pck_means", budgets=BUDGETS,
                              seed=int(row["trial_seed"]),
                              oracle_kwargs={"noise_rate": 0.1, "persistent": True, "confidence": None})
        np.testing.assert_array_equal([row[f"ari_all_q{q}"] for q in BUDGETS], curve["ari_all"])
        np.testing.assert_array_equal([row[f"ari_unqueried_q{q}"] for q in BUDGETS], curve["ari_unqueried"])
        assert row["auc_ari"] == area_under_curve(BUDGETS, curve["ari_all"])
        assert row["ari"] == curve["ari_all"].iloc[-1]
        assert row["n_questions"] == 20 == row["n_must_link"] + row["n_cannot_link"]
        assert row["n_must_link"] == curve["n_must_link"].iloc[-1]
        assert row["strategy_cpu_per_query"] >= 0 and row["refit_cpu_mean"] >= 0 and row["curve_cpu_time"] > 0
    assert rows["trial_seed"].nunique() == 2  # trials differ


def test_trials_share_the_oracle_draws_across_strategies_methods_and_noise_rates(tmp_path):
    seeds = {}
    # another strategy at another rate, another method: one seed per (data set, trial) all the same
    for name, cell in {"random": _cell(budget=10), "min_max exact": _cell("min_max", rate=0.0, budget=10),
                       "cobras": _cell("cobras", method="cobras", budget=10)}.items():
        rows = run_job(cell, tmp_path / name)
        assert (rows["status"] == "ok").all(), rows["error"].tolist()
        seeds[name] = rows.set_index("trial")["trial_seed"]
    for name, s in seeds.items():
        pd.testing.assert_series_equal(s, seeds["random"], check_names=False, obj=name)
    # not the harness's usual trial seed, which hashes the constraints config (the strategy) and the noise
    assert protocol.trial_seed(_cell(), 0) != protocol.trial_seed(_cell("min_max"), 0)


def test_the_answers_reach_the_method_exact_answers_beat_a_coin(tmp_path):
    exact = run_job(_cell("min_max", rate=0.0, budget=40), tmp_path / "exact")
    coin = run_job(_cell("min_max", rate=0.5, budget=40), tmp_path / "coin")
    # min_max's answers on iris put points together: the partition moves with them
    assert (exact["ari_all_q40"] != exact["ari_all_q0"]).all()
    assert (exact["ari_all_q0"] == coin["ari_all_q0"]).all()  # the same unsupervised start (paired)
    assert (exact["auc_ari"] > coin["auc_ari"]).all()


_BAD_STRATEGY = '''
from ccbench.hookspecs import hookimpl
from ccbench.registry import QueryStrategySpec


class AsksTwice:
    def next_pair(self, X, asked, answers, labels=None, rng=None):
        return 0, 1


class OutOfRange:
    def next_pair(self, X, asked, answers, labels=None, rng=None):
        return 0, len(X)


@hookimpl
def ccbench_query_strategies():
    return [QueryStrategySpec("test_asks_twice", AsksTwice), QueryStrategySpec("test_out_of_range", OutOfRange)]
'''


@pytest.mark.parametrize("strategy, cause", [("test_asks_twice", "already asked"),
                                             ("test_out_of_range", "outside the 150 points")])
def test_a_strategy_proposing_a_bad_pair_is_a_recorded_error_row(tmp_path, throwaway_plugin, strategy, cause):
    module = throwaway_plugin(_BAD_STRATEGY)
    cell = _cell(strategy, n_trials=1)
    cell["plugins"] = [*cell["plugins"], module.__name__]
    row = run_job(cell, tmp_path).iloc[0]
    assert row["status"] == "error"
    assert "strategy error" in row["error"] and cause in row["error"], row["error"]
    assert np.isnan(row["auc_ari"])


_IN_A_WORKER = '''
import numpy as np
from ccbench.hookspecs import hookimpl
from ccbench.registry import MethodSpec


class InAWorker:
    """Cuts on the first feature; says its fit spent 2.5 CPU seconds in a worker process (a peer library's)."""

    def __init__(self, n_clusters=2, random_state=None):
        self.n_clusters = n_clusters

    def fit(self, X, constraints=None):
        self.labels_, self.peer_fit_seconds_ = (X[:, 0] > 0).astype(int), 2.5
        return self


@hookimpl
def ccbench_methods():
    return [MethodSpec(name="test_in_a_worker", estimator=InAWorker, summary="fits in a worker",
                       supervision=("must_link", "cannot_link"), needs_n_clusters=True)]
'''


def test_the_curves_cpu_counts_what_its_fits_spent_in_a_worker(tmp_path, throwaway_plugin):
    module = throwaway_plugin(_IN_A_WORKER)
    cell = _cell("random", rate=0.0, method="test_in_a_worker", n_trials=1)
    cell["plugins"] = [*cell["plugins"], module.__name__]
    row = run_job(cell, tmp_path).iloc[0]
    assert row["status"] == "ok", row["error"]
    # three fits (q = 0, 10, 20) of 2.5 s each in the worker, which this process's clock does not see
    assert 7.5 <= row["curve_cpu_time"] < 7.5 + 5.0


@pytest.mark.parametrize("change, cause", [
    (lambda c: c["noise"].update(rate=0.7), "noise_rate must be a number in [0, 0.5]"),
    (lambda c: c["constraints"].update(budget=0), "constraints.budget must be an int >= 1"),
    (lambda c: c["constraints"].update(step=0), "constraints.step must be an int >= 1"),
    (lambda c: c.update(noise={"name": "label_noise", "rate": 0.1}), "noise=none or noise=constraint_flip"),
    (lambda c: c["constraints"].update(strategy="no_such_strategy"), "no_such_strategy"),
])
def test_bad_input_is_a_recorded_error_row_naming_it(tmp_path, change, cause):
    cell = _cell(n_trials=1)
    change(cell)
    row = run_job(cell, tmp_path).iloc[0]
    assert row["status"] == "error" and cause in row["error"], row["error"]


@pytest.mark.parametrize("strategy, method, cause", [("random", "cobras", "asks its own questions"),
                                                     ("cobras", "pck_means", "needs a query strategy")])
def test_a_strategy_and_method_that_do_not_go_together_are_skipped_rows(tmp_path, strategy, method, cause):
    rows = run_job(_cell(strategy, method=method), tmp_path)
    assert list(rows["status"]) == ["skipped", "skipped"] and cause in rows["error"].iloc[0]


def test_budgets_end_at_the_budget_and_start_at_zero():
    assert active_cells.curve_budgets(_cell(budget=25)) == [0, 10, 20, 25]
    assert active_cells.curve_budgets(_cell(budget=20)) == BUDGETS


def test_a_resumed_anytime_cell_runs_nothing_again(tmp_path):
    first = run_job(_cell(n_trials=1), tmp_path)
    again = run_job(_cell(n_trials=1), tmp_path)
    assert again["timestamp"].tolist() == first["timestamp"].tolist()  # kept: every metric is in the row


@pytest.mark.slow
def test_the_smoke_experiment_runs_and_reports(tmp_path):
    """`ccbench experiment=active_smoke` (11 s of CPU measured, 31 s of wall): every cell recorded, the page
    written. Run with `pytest -m slow tests/test_active_cells.py`."""
    env = {**os.environ, "CCBENCH_DATA_DIR": os.environ.get("CCBENCH_DATA_DIR", "/work/shared/datasets")}
    sweep = tmp_path / "sweep"
    done = subprocess.run([sys.executable, "-m", "ccbench.running.cli", "experiment=active_smoke", f"hydra.sweep.dir={sweep}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = pd.concat([pd.read_parquet(p) for p in sweep.glob("*/results.parquet")], ignore_index=True)
    assert len(rows) == 12 * 2
    ok = rows[rows["status"] == "ok"]
    assert set(ok["method.name"] if "method.name" in ok else ok["method"]) >= {"pck_means", "cobras"}
    assert len(ok) == 3 * 2 * 2 and ok["auc_ari"].notna().all()  # random/pck_means, min_max/pck_means, cobras; 2 rates
    assert (sweep / "report" / "summary.md").exists()  # the end-of-sweep summary
    from ccbench.running.cli import main

    assert main(["report", str(sweep), "--out", str(tmp_path / "page")]) == 0
    assert "cobras" in (tmp_path / "page" / "index.md").read_text()


def test_the_registered_scheme_declares_the_keywords_of_its_function():
    """The plugin's __init__ names the scheme lazily (listing plugins imports no numerical code) and declares
    its keywords for the sweep's check; they must be the function's own."""
    import inspect

    from ccbench_plugins.active.scheme import active_queries

    def keywords(func):
        return [(p.name, p.kind, p.default) for p in inspect.signature(func).parameters.values()]

    assert keywords(registry.get_scheme_spec("active_queries").func) == keywords(active_queries)
