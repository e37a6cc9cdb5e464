"""The end-of-sweep report drawn by the process forked when the sweep starts (issue 54, item 10).

The sweep's own process imports matplotlib and draws no figure; the files are those the sweep's
process would have written from the same rows (byte for byte); an error in the report is named as
before; the forked process is always reaped. Counted and compared, never timed: the time is
``tests/benchmarks/bench_quickstart.py``'s.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ccbench import reporting
from ccbench.reporting import background
from ccbench.reporting import summary as rsummary
from ccbench.running import app
from ccbench.running.harness import run_job

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the report process is forked")

_CELL = {"dataset": {"name": "iris"}, "method": {"name": "kmeans", "n_clusters": 3},
         "constraints": {"name": "none"}, "noise": {"name": "none"}, "n_trials": 2, "metrics": ["ari"]}
_FILES = ("summary.md", "summary.parquet", "ari.png", "report.html")


def _config(sweep: Path, launcher: str = "hydra._internal.core_plugins.basic_launcher.BasicLauncher"):
    class Config:  # the attributes the callback reads
        class hydra:
            class sweep:
                dir = str(sweep)

            overrides = type("o", (), {"task": []})()
            sweeper = {}

    Config.hydra.launcher = type("l", (), {"_target_": launcher})()
    return Config


@pytest.fixture(autouse=True)
def _threads_of_other_tests_ignored(monkeypatch):
    """The suite's worker process (pytest-xdist) keeps threads that earlier test files left running,
    so the callback would never fork there; these tests are about the report process's protocol, and
    the thread rule itself is tested on its own (``test_no_report_process_..._with_another_thread_alive``)."""
    monkeypatch.setattr(background.threading, "active_count", lambda: 1)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    sweep = tmp_path_factory.mktemp("sweep")
    run_job(_CELL, out_dir=sweep / "job")
    return sweep


def _in_process_report(sweep: Path, out: Path) -> None:
    """What the callback wrote in the sweep's process before the report process existed."""
    from ccbench.running.results import gather

    data = reporting.prepare(gather(sweep), [sweep])
    kwargs = {"metrics": ["ari"], "x": reporting.resolve_x(data), "paper": reporting.paper_reference(data)}
    reporting.write_report(data, out, **kwargs)
    reporting.write_html(data, out, **kwargs)


def _gone(pid: int) -> bool:
    """Reaped: no process (not even a zombie) under ``pid`` is a child of this one."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def _refuse_writing_here(monkeypatch) -> None:
    """After the fork: the report's writers (as the callback reaches them) raise in the sweep's process only."""

    def here(*args, **kwargs):
        raise AssertionError("the sweep's process wrote the report itself")

    monkeypatch.setattr(reporting, "write_report", here)
    monkeypatch.setattr(reporting, "write_html", here)


def test_the_sweeps_process_writes_no_report_and_reaps_the_one_that_does(sweep, monkeypatch, capsys):
    for name in _FILES:
        (sweep / "report" / name).unlink(missing_ok=True)
    callback = app.SweepSummaryCallback(metric="ari")
    callback.on_multirun_start(_config(sweep))
    worker = callback._worker
    assert worker is not None, "no report process was forked with the basic launcher"
    pid = worker.pid
    _refuse_writing_here(monkeypatch)
    callback.on_multirun_end(_config(sweep))
    outcome = app.last_sweep_outcome()
    assert outcome.get("callback_error") is None, outcome.get("callback_error")
    assert all((sweep / "report" / name).is_file() for name in _FILES)
    out = capsys.readouterr().out
    assert f"report: {sweep / 'report' / 'summary.md'}\nreport: {sweep / 'report' / 'report.html'}" in out
    assert _gone(pid) and worker.pid is None


@pytest.mark.slow  # two reports drawn (about 4 s): python -m pytest -m slow tests/test_report_worker.py
def test_the_forked_report_is_the_sweeps_process_report_byte_for_byte(sweep, tmp_path, monkeypatch):
    _in_process_report(sweep, tmp_path / "reference")
    callback = app.SweepSummaryCallback(metric="ari")
    callback.on_multirun_start(_config(sweep))
    assert callback._worker is not None
    _refuse_writing_here(monkeypatch)
    callback.on_multirun_end(_config(sweep))
    assert app.last_sweep_outcome().get("callback_error") is None
    for name in _FILES:
        assert (sweep / "report" / name).read_bytes() == (tmp_path / "reference" / name).read_bytes(), name


def test_an_error_in_the_forked_report_is_named_as_the_original(sweep, monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("report exploded")

    monkeypatch.setattr(rsummary, "write_report", broken)  # before the fork: the child has it too
    callback = app.SweepSummaryCallback(metric="ari")
    callback.on_multirun_start(_config(sweep))
    pid = callback._worker.pid
    callback.on_multirun_end(_config(sweep))
    assert app.last_sweep_outcome()["callback_error"] == "the end-of-sweep report failed: RuntimeError: report exploded"
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError: report exploded" in err
    assert _gone(pid)


def test_no_report_process_for_other_launchers_or_with_another_thread_alive(sweep, monkeypatch):
    callback = app.SweepSummaryCallback(metric="ari")
    callback.on_multirun_start(_config(sweep, launcher="hydra_plugins.x.CCBenchSlurmLauncher"))
    assert callback._worker is None  # a SLURM sweep's process would keep it waiting for hours
    monkeypatch.setattr(background.threading, "active_count", lambda: 2)
    assert background.ReportWorker.start() is None  # another thread could hold a lock the child needs


def test_a_report_process_the_sweep_never_used_is_ended_and_reaped(sweep):
    callback = app.SweepSummaryCallback(metric="ari")
    callback.on_multirun_start(_config(sweep))  # e.g. the sweeper then refuses the jobs: no on_multirun_end
    pid = callback._worker.pid
    app.stop_report_workers()  # what the command does when hydra_app returns or raises
    assert _gone(pid) and not app._report_workers


def test_a_report_process_that_dies_leaves_the_report_to_the_sweeps_process(sweep, monkeypatch):
    import signal

    callback = app.SweepSummaryCallback(metric="ari")
    callback.on_multirun_start(_config(sweep))
    pid = callback._worker.pid
    os.kill(pid, signal.SIGKILL)
    calls = []
    monkeypatch.setattr(reporting, "write_report", lambda data, out, **kw: calls.append("md") or {"summary_md": "s.md"})
    monkeypatch.setattr(reporting, "write_html", lambda data, out, **kw: calls.append("html") or "r.html")
    callback.on_multirun_end(_config(sweep))
    assert app.last_sweep_outcome().get("callback_error") is None
    assert calls == ["md", "html"] and _gone(pid)
