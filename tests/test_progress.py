"""Progress and the end of a sweep (issue 30, items 5 and 9): elapsed time and ETA without a
terminal, a resume that says what it kept, and report.html written by every sweep."""

from __future__ import annotations

import logging
import sys

from ccbench.running import harness
from ccbench.running.harness import run_job
import _proc  # on time-out, the command's whole process group is killed (issue 54)

CELL = {"dataset": {"name": "iris"}, "method": {"name": "kmeans", "n_clusters": 3},
        "constraints": {"name": "none"}, "noise": {"name": "none"}, "metrics": ["ari"]}


def test_without_a_terminal_progress_is_logged_with_elapsed_and_eta(tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(harness._Progress.__init__, "__defaults__", (0.0,))  # a line per trial
    with caplog.at_level(logging.INFO, logger="ccbench"):
        run_job({**CELL, "n_trials": 3}, out_dir=tmp_path)
    lines = [r.getMessage() for r in caplog.records if "ETA" in r.getMessage()]
    assert lines and all("elapsed" in ln for ln in lines)
    assert lines[0].startswith("iris/kmeans: trial 1/3")


def test_resume_says_what_it_kept_and_what_it_runs(tmp_path, caplog):
    run_job({**CELL, "n_trials": 3}, out_dir=tmp_path)
    with caplog.at_level(logging.INFO, logger="ccbench"):
        run_job({**CELL, "n_trials": 5}, out_dir=tmp_path)
    assert "iris/kmeans: resuming: 3 trial(s) kept, 2 to run" in caplog.text


def test_a_sweep_writes_report_html_and_prints_jobs_eta_and_the_path(tmp_path):
    sweep = tmp_path / "sweep"
    cmd = [sys.executable, "-c", "import sys; from ccbench.running.cli import main; sys.exit(main())",
           "-m", "method=kmeans,ap", "n_trials=2", f"hydra.sweep.dir={sweep}"]
    proc = _proc.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "[ccbench] jobs done 1/2" in proc.stderr and "ETA" in proc.stderr
    assert (sweep / "report" / "report.html").exists()
    assert f"report: {sweep / 'report' / 'report.html'}" in proc.stdout


def test_durations_read_as_clock_time():
    assert harness._duration(5) == "0:05" and harness._duration(125) == "2:05"
    assert harness._duration(3725) == "1:02:05"
