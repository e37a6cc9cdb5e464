"""Nothing hangs or goes stale silently (issue 42, items 6, 7 and 16): a results file with another
schema, runaway root values, two grids in one sweep directory, temporary files left by a kill.

Each test failed on the code before the fix; the sweeps run through the real command in a
subprocess (helpers from ``test_reliability``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from ccbench.running.cli import main
from ccbench.running.harness import run_job
from ccbench.running.results import (
    ResultsCorruptError,
    gather,
    read_results,
    write_results,
)
from test_reliability import _ccbench, _nap_args, plugin_dir  # noqa: F401 - a fixture

CELL = {"dataset": {"name": "iris"}, "method": {"name": "kmeans", "n_clusters": 3},
        "constraints": {"name": "none"}, "noise": {"name": "none"}, "n_trials": 2, "metrics": ["ari"]}


# -- 6. a readable results file with another schema ----------------------------------------------


def test_a_results_file_with_another_schema_is_named_not_a_traceback(tmp_path):
    foreign = tmp_path / "results.parquet"
    pd.DataFrame({"solver": ["a", "b"], "objective": [1.0, 2.0]}).to_parquet(foreign)
    with pytest.raises(ResultsCorruptError, match="not a ccbench results table") as info:
        run_job(CELL, out_dir=tmp_path)
    assert str(foreign) in str(info.value) and "move it aside" in str(info.value)


def test_a_sweep_names_a_foreign_results_file_and_runs_the_other_jobs(plugin_dir, tmp_path):  # noqa: F811
    sweep = tmp_path / "sweep"
    args = _nap_args(plugin_dir, sweep, "method.seconds=0,0.01")
    _ccbench(args, plugin_dir, tmp_path, expect=0)
    first, second = sorted(sweep.rglob("results.parquet"))
    pd.DataFrame({"solver": ["a"], "objective": [1.0]}).to_parquet(first)
    write_results(read_results(second).iloc[:1], second)  # the other job has a trial to re-run
    proc = _ccbench(args, plugin_dir, tmp_path, expect=1)
    assert str(first) in proc.stderr and "not a ccbench results table" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(read_results(second)) == 2  # the other job ran


def test_trial_stored_as_text_is_named_not_a_duplicate_key(tmp_path):
    run_job(CELL, out_dir=tmp_path / "a")
    rows = read_results(tmp_path / "a")
    (tmp_path / "b").mkdir()
    write_results(rows.assign(trial=rows["trial"].astype(str)), tmp_path / "b" / "results.parquet")
    damaged = []
    data = gather(tmp_path, damaged=damaged)
    assert not data.duplicated(["config_hash", "trial"]).any()
    assert len(damaged) == 1 and str(tmp_path / "b" / "results.parquet") in damaged[0] and "trial" in damaged[0]


def test_report_names_a_foreign_results_file_instead_of_leaving_it_out(tmp_path, capsys):
    run_job(CELL, out_dir=tmp_path / "a")
    (tmp_path / "b").mkdir()
    pd.DataFrame({"method.name": ["kmeans"], "ari": [0.5]}).to_parquet(tmp_path / "b" / "results.parquet")
    assert main(["report", str(tmp_path), "--metric", "ari"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "b" / "results.parquet") in err and "move it aside" in err


# -- 7. runaway root values are refused before anything runs -------------------------------------


@pytest.mark.parametrize("override, bound", [
    ("n_trials=1000000000", "at most 10,000"),
    (f"seed={2**63}", "2^63 - 1"),
    (f"seed={-(2**63) - 1}", "-2^63"),
])
def test_runaway_root_values_are_refused_by_the_precheck_naming_the_bound(plugin_dir, tmp_path, override, bound):  # noqa: F811
    sweep = tmp_path / "sweep"
    proc = _ccbench(_nap_args(plugin_dir, sweep, override), plugin_dir, tmp_path, expect=2, timeout=120)
    assert override.split("=")[0] in proc.stderr and bound in proc.stderr and "Traceback" not in proc.stderr
    assert not list(sweep.rglob("results.parquet"))


def test_run_job_refuses_a_seed_that_cannot_be_stored(tmp_path):
    with pytest.raises(ValueError, match=r"seed must fit in 64 bits"):
        run_job({**CELL, "seed": 2**64}, out_dir=tmp_path)
    assert not (tmp_path / "results.parquet").exists()
