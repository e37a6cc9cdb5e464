"""Stale anytime rows (issue 53): a row records the code of its query strategy and of the curve
(``code.inputs``: ``strategy:<name>``, ``curve``) beside its method's, and re-runs when either changes,
as a row re-runs when its method's code changes."""

from __future__ import annotations

import json

from ccbench.running import active_cells, provenance
from ccbench.running.harness import run_job

_STRATEGY = '''
from ccbench.hookspecs import hookimpl
from ccbench.registry import QueryStrategySpec


class FirstUnasked:
    def next_pair(self, X, asked, answers, labels=None, rng=None):
        from ccbench_plugins.active.core import random_unasked_pair

        return random_unasked_pair(len(X), asked, rng)


@hookimpl
def ccbench_query_strategies():
    return [QueryStrategySpec("test_stale_strategy", FirstUnasked)]
'''


def _cell(strategy, method="pck_means"):
    return {
        "dataset": {"name": "iris", "preprocess": "standardize"},
        "method": {"name": method, "n_clusters": "true_k"},
        "constraints": {"name": "active_queries", "strategy": strategy, "budget": 10, "step": 10},
        "noise": {"name": "none"},
        "n_trials": 1, "metrics": ["ari"], "plugins": ["ccbench_plugins.cobras"],
    }


def test_a_change_of_the_strategys_code_re_runs_its_rows(tmp_path, throwaway_plugin):
    module = throwaway_plugin(_STRATEGY)
    cell = _cell("test_stale_strategy")
    cell["plugins"] = [*cell["plugins"], module.__name__]
    first = run_job(cell, tmp_path / "job").iloc[0]
    assert first["status"] == "ok"
    assert "strategy:test_stale_strategy" in json.loads(first[provenance.INPUTS])
    again = run_job(cell, tmp_path / "job").iloc[0]
    assert again["timestamp"] == first["timestamp"]  # same code: kept
    with open(module.__file__, "a") as f:
        f.write("\n# an edit of the strategy's module\n")
    edited = run_job(cell, tmp_path / "job").iloc[0]
    assert edited["timestamp"] != first["timestamp"]
    assert "stale" in edited["rerun_reason"] and "strategy:test_stale_strategy" in edited["rerun_reason"], \
        edited["rerun_reason"]


def test_a_change_of_the_curves_code_re_runs_cobras_rows_too(tmp_path, monkeypatch):
    cell = _cell("cobras", method="cobras")
    first = run_job(cell, tmp_path).iloc[0]
    assert first["status"] == "ok" and set(json.loads(first[provenance.INPUTS])) >= {"curve"}
    assert not any(k.startswith("strategy:") for k in json.loads(first[provenance.INPUTS]))
    real = provenance._file_hash
    monkeypatch.setattr(provenance, "_file_hash",
                        lambda path: "edited" if path.name == "anytime.py" else real(path))
    edited = run_job(cell, tmp_path).iloc[0]
    assert edited["timestamp"] != first["timestamp"] and "curve" in edited["rerun_reason"], edited["rerun_reason"]


def test_the_inputs_are_the_strategys_modules_and_the_curves():
    # two routes: the hash active_cells records against provenance.method_code of a method living in the
    # same modules (explore_consolidate's module imports core.py; the curve's imports oracle.py)
    inputs = active_cells.curve_inputs(_cell("explore_consolidate"))
    assert set(inputs) == {"curve", "strategy:explore_consolidate"}

    class Shim:
        uses = ()

        class estimator:
            __module__ = "ccbench_plugins.active.strategies"

    code = provenance.method_code(Shim)
    assert inputs["strategy:explore_consolidate"] == code[provenance.METHOD_HASH]
    assert set(json.loads(code[provenance.METHOD_FILES])) == {"ccbench_plugins.active.strategies",
                                                               "ccbench_plugins.active.core"}
    assert active_cells.curve_inputs(_cell("no_such_strategy")).keys() == {"curve"}  # its trial says why
