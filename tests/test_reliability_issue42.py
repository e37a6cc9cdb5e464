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


# -- 16. two grids in one sweep directory; temporary files left by a kill ------------------------


def test_two_grids_in_one_sweep_dir_count_their_own_jobs_and_both_grids_are_kept(plugin_dir, tmp_path):  # noqa: F811
    from ccbench.reporting import load
    from ccbench.reporting.leaderboard import sweep_coverage

    sweep = tmp_path / "sweep"
    _ccbench(_nap_args(plugin_dir, sweep, "method.seconds=0,0.01,0.02"), plugin_dir, tmp_path, expect=0)
    proc = _ccbench(_nap_args(plugin_dir, sweep, "dataset=wine", "method.seconds=0"), plugin_dir, tmp_path, expect=0)
    progress = [line for line in proc.stderr.splitlines() if "jobs done" in line]
    assert progress and all("jobs done 1/1" in line for line in progress), progress
    line = sweep_coverage([sweep], load(sweep))
    assert line.startswith("Sweep coverage: 4 of the 4 jobs"), line  # both grids: 3 iris jobs + 1 wine job
    assert not list(sweep.rglob(".ccbench_done*"))  # progress markers are removed at the end


def _dead_pid() -> int:
    pid = 4_000_000
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid -= 1


def test_temporary_files_left_by_a_kill_are_cleaned_on_the_next_write(tmp_path):
    old = time.time() - 3600
    stale = tmp_path / f".results.parquet.{_dead_pid()}.tmp"  # a kill between write and rename
    stale_new_style = tmp_path / f".results.parquet.{_dead_pid()}.0123abcd.tmp"
    held = tmp_path / f".results.parquet.{os.getppid()}.tmp"  # a live process's write in progress
    fresh = tmp_path / f".results.parquet.{_dead_pid()}.89abcdef.tmp"  # newer than this writer
    for path in (stale, stale_new_style, held, fresh):
        path.write_bytes(b"half a file")
    for path in (stale, stale_new_style, held):
        os.utime(path, (old, old))
    later = time.time() + 60
    os.utime(fresh, (later, later))
    write_results(pd.DataFrame({"config_hash": ["c"], "trial": [0], "status": ["ok"]}), tmp_path / "results.parquet")
    assert not stale.exists() and not stale_new_style.exists()
    assert held.exists() and fresh.exists()
    assert len(read_results(tmp_path)) == 1


def test_two_grids_running_at_once_into_one_sweep_dir_each_count_their_own_jobs(tmp_path, monkeypatch, capsys):
    from omegaconf import OmegaConf

    from ccbench.running.app import SweepSummaryCallback

    def conf(out, methods):
        (tmp_path / out).mkdir(exist_ok=True)
        return OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}, "runtime": {"output_dir": str(tmp_path / out)},
                                           "sweeper": {"params": {"method": methods}}, "overrides": {"task": []}}})

    monkeypatch.delenv("CCBENCH_SWEEP_RUN", raising=False)
    first, second = SweepSummaryCallback(), SweepSummaryCallback()
    first.on_multirun_start(conf("a0", "a,b,c,d"))  # 4 jobs
    run_first = os.environ.get("CCBENCH_SWEEP_RUN", "")
    second.on_multirun_start(conf("x0", "x"))  # 1 job, started meanwhile by another command
    run_second = os.environ.get("CCBENCH_SWEEP_RUN", "")
    monkeypatch.setenv("CCBENCH_SWEEP_RUN", run_second)  # each job runs in its own command's process
    second.on_job_end(conf("x0", "x"), None)
    monkeypatch.setenv("CCBENCH_SWEEP_RUN", run_first)
    first.on_job_end(conf("a0", "a,b,c,d"), None)
    first.on_job_end(conf("a1", "a,b,c,d"), None)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "jobs done" in ln]
    assert [ln.split(",")[0] for ln in lines] == ["[ccbench] jobs done 1/1", "[ccbench] jobs done 1/4",
                                                  "[ccbench] jobs done 2/4"], lines
    assert len(list((tmp_path / ".ccbench_grids").glob("*.yaml"))) == 2  # both grids kept
