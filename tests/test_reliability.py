"""The defects found by fault injection (issue 27), one test each, plus results-file integrity.

Each test failed on the code before the fix; the sweeps run through the real
command in a subprocess (Hydra's exit path is part of what is tested).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ccbench import registry
from ccbench.reporting import summary as rsummary
from ccbench.reporting import constraint_utility as rutility
from ccbench.running import protocol
from ccbench.running.harness import run_job
from ccbench.running.results import (
    ResultsCorruptError,
    ResultsStore,
    read_results,
    write_results,
)
import _proc  # on time-out, the command's whole process group is killed (issue 54)

PLUGIN = "ccbench_reliability_plugin"
PLUGIN_SOURCE = """
import time
import numpy as np
from ccbench import ConstrainedClusterer, MethodSpec, hookimpl

class Nap(ConstrainedClusterer):
    def __init__(self, seconds=0.0, fail=False, log=None, random_state=None):
        self.seconds, self.fail, self.log, self.random_state = seconds, fail, log, random_state

    def fit(self, X, y=None, *, constraints=None):
        if self.log:  # one line per fit started: tests bound the work done, never the seconds
            with open(self.log, "a") as f:
                f.write("fit\\n")
        if self.fail:
            raise RuntimeError("nap: deliberate failure")
        time.sleep(self.seconds)
        self.labels_ = np.arange(len(X)) % 2
        return self

@hookimpl
def ccbench_methods():
    return [MethodSpec("nap", Nap, "sleeps, or fails on request")]
"""


@pytest.fixture
def plugin_dir(tmp_path):
    d = tmp_path / "plugin"
    (d / "conf" / "method").mkdir(parents=True)
    (d / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE)
    (d / "conf" / "method" / "nap.yaml").write_text("name: nap\n")
    return d


def _ccbench(args, plugin_dir, cwd, expect=None, timeout=300):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_dir), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-c", "import sys; from ccbench.running.cli import main; sys.exit(main())", *args]
    proc = _proc.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if expect is not None:
        assert proc.returncode == expect, (proc.returncode, proc.stderr[-3000:])
    return proc


def _nap_args(plugin_dir, sweep_dir, *extra):
    return ["-m", "method=nap", "dataset=iris", "constraints=none", "n_trials=2", "metrics=[ari]",
            f"plugins=[{PLUGIN}]", f"hydra.searchpath=[file://{plugin_dir / 'conf'}]",
            f"hydra.sweep.dir={sweep_dir}", *extra]


# -- 1. failed trials exit 1 even when the end-of-sweep callback fails -----------------------


def test_failed_trials_exit_1_when_a_results_file_outside_the_grid_is_damaged(plugin_dir, tmp_path):
    sweep = tmp_path / "sweep"
    outside = sweep / "an_old_job"
    outside.mkdir(parents=True)
    (outside / "results.parquet").write_bytes(b"PAR1 this is not parquet")
    proc = _ccbench(_nap_args(plugin_dir, sweep, "method.fail=true"), plugin_dir, tmp_path)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "2 trial(s) failed" in proc.stderr
    assert str(outside / "results.parquet") in proc.stderr  # the damaged file is named


def test_failed_trials_exit_1_and_the_report_survives_mathtext_in_labels(plugin_dir, tmp_path):
    sweep = tmp_path / "sweep"
    proc = _ccbench(_nap_args(plugin_dir, sweep, "method.fail=true,false", r"x_axis=$\frac$"), plugin_dir, tmp_path)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "2 trial(s) failed" in proc.stderr
    assert (sweep / "report" / "ari.png").exists()  # '$\frac$' is plain text, not a mathtext error


def test_an_exception_in_the_summary_is_visible_and_exits_1(monkeypatch, tmp_path):
    """Hydra turns a callback's exception into a warning; ours is recorded and printed instead."""
    from ccbench import reporting
    from ccbench.running import app, cli

    cell = {"dataset": {"name": "iris"}, "method": {"name": "kmeans", "n_clusters": 3},
            "constraints": {"name": "none"}, "noise": {"name": "none"}, "n_trials": 1, "metrics": ["ari"]}
    run_job(cell, out_dir=tmp_path / "job")

    def broken(*args, **kwargs):
        raise RuntimeError("summary exploded")

    monkeypatch.setattr(reporting, "summarise", broken)
    monkeypatch.setattr(app, "_outcome", {})  # its callback_error must not outlive the test (it is module state)
    callback = app.SweepSummaryCallback(metric="ari")

    class Config:  # the attributes on_multirun_* read
        class hydra:
            class sweep:
                dir = str(tmp_path)
            overrides = type("o", (), {"task": []})()
            sweeper = {}

    callback.on_multirun_start(Config)
    callback.on_multirun_end(Config)
    outcome = app.last_sweep_outcome()
    assert "summary exploded" in outcome["callback_error"]
    assert cli._exit_status(outcome, []) == 1


# -- 2. a timeout is a measured result (issue 55: exit 0, counted), retried on resume --------


def test_timeouts_are_counted_and_retried_with_a_larger_limit(plugin_dir, tmp_path):
    sweep = tmp_path / "sweep"
    # killed by the wall-clock backstop, 3 x trial_timeout of a sleep: 1.5 s (the sleep and the limits were
    # 4 s and 1 s, issue 56: each second here is paid once per timeout)
    args = _nap_args(plugin_dir, sweep, "method.seconds=3", "n_trials=1")
    proc = _ccbench([*args, "trial_timeout=0.5"], plugin_dir, tmp_path)
    assert proc.returncode == 0 and "1 trial(s) reached their budget" in proc.stderr, proc.stderr[-2000:]
    rows = pd.concat([read_results(f) for f in sweep.rglob("results.parquet")])
    assert rows["status"].tolist() == ["timeout"]
    _ccbench([*args, "trial_timeout=60"], plugin_dir, tmp_path, expect=0)
    rows = pd.concat([read_results(f) for f in sweep.rglob("results.parquet")])
    assert rows["status"].tolist() == ["ok"]


def test_timeout_stops_cell_records_later_trials_as_timeouts_without_fitting_them(plugin_dir, tmp_path):
    sweep = tmp_path / "sweep"
    log = tmp_path / "nap.log"
    args = _nap_args(plugin_dir, sweep, "method.seconds=4", "n_trials=3", "trial_timeout=0.5", f"method.log={log}")
    proc = _ccbench([*args, "timeout_stops_cell=true"], plugin_dir, tmp_path)
    assert proc.returncode == 0 and "3 trial(s) reached their budget" in proc.stderr, proc.stderr[-2000:]
    rows = pd.concat([read_results(f) for f in sweep.rglob("results.parquet")]).sort_values("trial")
    assert rows["status"].tolist() == ["timeout"] * 3
    assert "not fitted: trial 0 of this cell timed out" in rows["error"].iloc[1]
    assert "not fitted" not in rows["error"].iloc[0]
    assert log.read_text().split() == ["fit"]  # one fit timed out; the other two were never started
    # the default fits every trial: each times out on its own
    other = tmp_path / "other"
    _ccbench(_nap_args(plugin_dir, other, "method.seconds=4", "n_trials=2", "trial_timeout=0.5"), plugin_dir, tmp_path)
    rows = pd.concat([read_results(f) for f in other.rglob("results.parquet")])
    assert rows["error"].str.contains("not fitted").sum() == 0 and len(rows) == 2


def test_timeout_stops_seeds_through_the_command_one_fit_for_three_base_seeds(plugin_dir, tmp_path):
    """The app's sweep dir holds the marker (``.timeouts/`` beside ``.fits/``), and ``seed`` swept first runs
    seed 0's job before the others: one fit is killed, the other seeds' trials are recorded without one."""
    sweep = tmp_path / "sweep"
    log = tmp_path / "nap.log"
    args = _nap_args(plugin_dir, sweep, "seed=0,1,2", "method.seconds=4", "n_trials=1", "trial_timeout=0.5",
                     f"method.log={log}", "timeout_stops_cell=true", "timeout_stops_seeds=true")
    proc = _ccbench(args, plugin_dir, tmp_path)
    assert proc.returncode == 0 and "3 trial(s) reached their budget" in proc.stderr, proc.stderr[-2000:]
    rows = pd.concat([read_results(f) for f in sweep.rglob("results.parquet")]).sort_values("seed")
    assert rows["status"].tolist() == ["timeout"] * 3
    assert "not fitted" not in rows["error"].iloc[0]
    assert all("not fitted: base seed 0 of this cell timed out at trial 0" in e for e in rows["error"].iloc[1:])
    assert log.read_text().split() == ["fit"]  # seed 0's fit only
    assert len(list((sweep / ".timeouts").iterdir())) == 1


# -- 3. two processes writing one job directory lose nothing ---------------------------------


def _rows(chash, trials):
    return [{"config_hash": chash, "trial": t, "status": "ok", "ari": float(t)} for t in trials]


def test_two_writers_of_one_results_file_keep_each_others_rows(tmp_path):
    path = tmp_path / "results.parquet"
    a, b = ResultsStore(path, min_interval=0), ResultsStore(path, min_interval=0)  # both opened empty
    for row in _rows("cellA", range(3)):
        a.add(row)
    for row in _rows("cellB", range(3)):
        b.add(row)
    a.add(_rows("cellA", [3])[0])
    stored = read_results(path)
    assert sorted(map(tuple, stored[["config_hash", "trial"]].to_numpy().tolist())) == \
        sorted([("cellA", t) for t in range(4)] + [("cellB", t) for t in range(3)])


def test_two_concurrent_sweeps_with_different_grids_into_one_directory_lose_no_row(tmp_path):
    """The audit's case: two grids, one sweep dir, job directories named by job number (Hydra's
    default subdir), at the same time: job 0 of each sweep is a different cell in one directory."""
    sweep = tmp_path / "shared"
    common = ["-m", "dataset=iris", "constraints=none", "metrics=[ari]", "n_trials=20",
              f"hydra.sweep.dir={sweep}", "hydra.sweep.subdir=${hydra.job.num}"]
    cmd = [sys.executable, "-c", "import sys; from ccbench.running.cli import main; sys.exit(main())"]
    with contextlib.ExitStack() as stack:  # a sweep still running when the test gives up is killed, workers too
        procs = [stack.enter_context(_proc.started([*cmd, *common, f"method=kmeans", f"method.n_clusters={k}"],
                                                   cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
                 for k in (2, 3)]
        for p in procs:
            assert p.wait(timeout=300) == 0, p.stderr.read()[-2000:]
    rows = read_results(sweep / "0")
    assert len(rows) == 40 and rows.groupby("method.n_clusters").size().tolist() == [20, 20]


# -- 4. memory models: declared per method, checked in one place -----------------------------

# (spectral_learning is sparse above 2,000 points since issue 29: tests/test_spectral_lowrank.py checks its model)
DENSE = ("e2cp", "kmedoids", "ncuts", "rn_sdp", "scssap_ml", "srcp", "ssap_g",
         "ap", "scssap", "scap", "ssap_l", "cobs")


@pytest.mark.parametrize("name", DENSE)
def test_dense_methods_declare_a_memory_model_that_refuses_60000_points(name):
    spec = registry.get_method_spec(name)
    assert spec.memory is not None
    message = protocol.memory_refusal(spec, {}, 60_000, 10, available=24 * 2**30)
    assert message and "GiB" in message and f"n=60000" in message
    assert protocol.memory_refusal(spec, {}, 150, 4, available=24 * 2**30) is None  # iris fits


def test_every_method_without_a_model_is_linear_in_n():
    """A method declared O(n d) must not hold an n x n array: fit 2,000 points under a cap of
    about 20 n x d arrays (a dense 2,000 x 2,000 float64 array alone is 32 MB)."""
    import tracemalloc

    from ccbench import constraints as cgen

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(2000, 4)), rng.integers(0, 3, 2000)
    for spec in registry.list_methods():
        if spec.memory is not None or spec.name.startswith("peer_") or spec.name == "nnc":
            continue
        cons = cgen.random_pairs(y, n_constraints=20, rng=rng)
        est = registry.make_method(spec.name, **({"n_clusters": 3} if spec.needs_n_clusters else {}))
        if "max_iter" in est.get_params():
            est.set_params(max_iter=5)
        est.fit(X[:50], constraints=cgen.random_pairs(y[:50], n_constraints=5, rng=rng))  # numba compiles here
        tracemalloc.start()
        try:
            est.fit(X, constraints=cons)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 8 * 2000 * 2000 / 2, (spec.name, peak)


def test_the_protocol_refuses_before_fitting_and_records_why(monkeypatch, tmp_path):
    import ccbench.base

    monkeypatch.setattr(ccbench.base, "available_memory", lambda: 10_000)  # 10 kB
    cell = {"dataset": {"name": "iris"}, "method": {"name": "srcp", "n_clusters": 3},
            "constraints": {"name": "random_pairs", "n_constraints": 10}, "noise": {"name": "none"},
            "n_trials": 2, "metrics": ["ari"]}
    rows = run_job(cell, out_dir=tmp_path)
    assert rows["status"].tolist() == ["refused", "refused"]
    assert rows["error"].str.contains("needs about .* GiB for n=150", regex=True).all()
    assert rows["fit_time"].isna().all() if "fit_time" in rows else True  # nothing was fitted


# -- 5. damaged files: named, with what to do -------------------------------------------------


def test_a_truncated_results_file_is_named_on_resume_without_a_traceback(plugin_dir, tmp_path):
    sweep = tmp_path / "sweep"
    args = _nap_args(plugin_dir, sweep)
    _ccbench(args, plugin_dir, tmp_path, expect=0)
    (damaged,) = list(sweep.rglob("results.parquet"))
    damaged.write_bytes(damaged.read_bytes()[: len(damaged.read_bytes()) // 2])
    proc = _ccbench(args, plugin_dir, tmp_path, expect=1)
    assert str(damaged) in proc.stderr and "move it aside" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_truncated_cell_json_is_named_by_report(plugin_dir, tmp_path):
    sweep = tmp_path / "sweep"
    _ccbench(_nap_args(plugin_dir, sweep), plugin_dir, tmp_path, expect=0)
    (cell,) = list(sweep.rglob("cell.json"))
    cell.write_text(cell.read_text()[:40])
    proc = _ccbench(["report", str(sweep), "--metric", "ari"], plugin_dir, tmp_path, expect=2)
    assert str(cell) in proc.stderr and "move it aside" in proc.stderr and "Traceback" not in proc.stderr


# -- 6. a report never takes file locations or URLs from a results directory ------------------


def test_utility_does_not_load_data_from_locations_in_cell_json(monkeypatch, tmp_path):
    from ccbench import datasets

    cell = {"dataset": {"name": "iris"}, "method": {"name": "kmeans", "n_clusters": 3},
            "constraints": {"name": "random_pairs", "n_constraints": 10}, "noise": {"name": "none"},
            "n_trials": 1, "metrics": ["ari"]}
    run_job(cell, out_dir=tmp_path)
    crafted = json.loads((tmp_path / "cell.json").read_text())
    crafted["dataset"].update(data_dir=str(tmp_path / "evil"), manifest=str(tmp_path / "evil.tsv"))
    (tmp_path / "cell.json").write_text(json.dumps(crafted))
    seen = []
    real = datasets.load_dataset
    monkeypatch.setattr(datasets, "load_dataset", lambda name, **kw: seen.append(kw) or real(name, **kw))
    coherence = rutility.trial_coherence(rsummary.load(tmp_path))
    assert seen and all("data_dir" not in kw and "manifest" not in kw for kw in seen)
    assert coherence.notna().all()
    assert not (tmp_path / "evil").exists()


# -- 7. a '|' or markup in a label cannot shift or inject -------------------------------------


def test_pipes_and_markup_in_labels_stay_in_their_cell():
    from ccbench.reporting.html import markdown_to_html

    summary = pd.DataFrame({
        "dataset": ["iris", "iris"], "method_label": ["m(a=x|y)", "<b>bold</b>"], "setting": ["", ""],
        "x": [1, 1], "metric": ["ari", "ari"], "mean": [0.5, 0.7], "std": [0.1, 0.1], "n_trials": [2, 2],
        "n_ok": [2, 2], "n_error": [0, 0], "n_not_converged": [0, 0],
        **{f"n_{s}": [0, 0] for s in ("skipped", "infeasible", "timeout", "refused")},
    })
    text = rsummary.markdown_table(summary, "ari", "x")
    table = [ln for ln in text.splitlines() if ln.startswith("|")]
    widths = {len(re.split(r"(?<!\\)\|", ln)) for ln in table}
    assert len(widths) == 1  # every row has the header's number of columns
    assert "<b>" not in text
    page = markdown_to_html(text)
    assert "<td>m(a=x|y)</td><td>0.500 ± 0.100</td>" in page
    assert "<td>&lt;b&gt;bold&lt;/b&gt;</td><td>0.700 ± 0.100</td>" in page


# -- 8. the trial_timeout worker dies with its job --------------------------------------------


def test_the_worker_dies_when_its_job_process_is_killed(tmp_path):
    pid_file = tmp_path / "worker.pid"
    job = textwrap.dedent(f"""
        import os, time
        from ccbench.isolation import IsolatedRunner

        def nap(path):
            open(path, "w").write(str(os.getpid()))
            time.sleep(120)

        if __name__ == "__main__":
            IsolatedRunner().call(nap, {str(pid_file)!r}, timeout=300)
    """)
    (tmp_path / "job.py").write_text(job)
    parent = subprocess.Popen([sys.executable, str(tmp_path / "job.py")], cwd=tmp_path)
    deadline = time.time() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.time() < deadline, "the worker never started"
        time.sleep(0.2)
    worker = int(pid_file.read_text())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.kill(worker, signal.SIGKILL)
    pytest.fail("the worker outlived its job by 10 s")


# -- integrity ----------------------------------------------------------------------------


def test_a_flipped_byte_is_an_error_naming_the_file_never_a_different_number(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"config_hash": ["abc"] * 20, "trial": range(20), "ari": rng.random(20),
                          "status": ["ok"] * 20, "method.name": ["kmeans"] * 20, "error": [None] * 20})
    path = tmp_path / "results.parquet"
    write_results(frame, path)
    good, raw = read_results(path), path.read_bytes()
    outcomes = {"same": 0, "error": 0}
    for _ in range(400):
        damaged = bytearray(raw)
        damaged[rng.integers(len(damaged))] ^= 1 << int(rng.integers(8))
        path.write_bytes(bytes(damaged))
        try:
            back = read_results(path)
        except ResultsCorruptError as exc:
            assert str(path) in str(exc)
            outcomes["error"] += 1
            continue
        pd.testing.assert_frame_equal(back, good)  # never silently different
        outcomes["same"] += 1
    assert outcomes["error"] > 100  # the checks do fire


def test_files_are_written_with_page_checksums(tmp_path):
    """A flipped bit inside a data page is caught by the page CRC alone (pyarrow, no content hash):
    a file written without page checksums would read back the changed number."""
    import struct

    import pyarrow.parquet as pq

    value = 0.123456789012345
    path = tmp_path / "r.parquet"
    write_results(pd.DataFrame({"config_hash": ["a"], "trial": [0], "ari": [value]}), path)
    assert b"ccbench.content_sha256" in pq.ParquetFile(path).metadata.metadata
    raw = bytearray(path.read_bytes())
    at = raw.find(struct.pack("<d", value))
    assert at >= 0  # the value is stored as plain bytes in its data page
    raw[at] ^= 1
    path.write_bytes(bytes(raw))
    with pytest.raises(Exception, match="(?i)crc|checksum"):
        pq.read_table(path, page_checksum_verification=True)
    from ccbench.running.results import arrow_table

    with pytest.raises(Exception, match="(?i)crc|checksum"):  # the route read_results and gather take
        arrow_table(path)


# -- 9. the docs' code blocks run verbatim in a fresh interpreter ------------------------------

_ROOT = Path(__file__).resolve().parent.parent
_BLOCKS = [(path.relative_to(_ROOT), i, block)
           for path in [_ROOT / "README.md", *sorted((_ROOT / "docs").glob("*.md"))]
           for i, block in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S))]


@pytest.mark.parametrize("path, index, block", _BLOCKS, ids=[f"{p}-{i}" for p, i, _ in _BLOCKS])
def test_docs_python_blocks_run_verbatim(path, index, block, tmp_path):
    proc = _proc.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{path} block {index}:\n{proc.stderr[-3000:]}"


@pytest.mark.slow
def test_sigkill_at_random_points_then_resume_equals_an_uninterrupted_run(tmp_path):
    """tests/scripts/kill_resume.py with two kills (the closing note's figures use more) on iris, kmeans and
    cop_kmeans: 4 cells of 6 trials, two joblib workers (issue 56: its 12-cell default grid made this the
    suite's second slowest test, 104 s; a kill still lands in the launcher, a worker or a job half done)."""
    script = _ROOT / "tests" / "scripts" / "kill_resume.py"
    proc = _proc.run([sys.executable, str(script), "--kills", "2", "--workdir", str(tmp_path),
                      "--datasets", "iris", "--methods", "kmeans,cop_kmeans"],
                     capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0 and "IDENTICAL" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]


def test_a_declared_time_model_refuses_over_the_time_budget_only():
    from ccbench.registry import MethodSpec, TimeModel

    spec = MethodSpec("slowpoke", "x.y:Z", "cubic", time=TimeModel(n=1000, seconds=10.0, exponent=3.0))
    assert spec.time.predict(2000) == pytest.approx(80.0)
    assert spec.time.largest_n(60.0) == 1817  # 1000 * 6 ** (1/3)
    assert protocol.size_refusal(spec, {}, 5000, 10) is None  # no budget configured: nothing refused
    # refused over TIME_REFUSAL_FACTOR (3) x the budget only (issue 50): 80 s is run under a 60 s budget
    assert protocol.size_refusal(spec, {}, 2000, 10, time_budget=60) is None
    message = protocol.size_refusal(spec, {}, 2000, 10, time_budget=20)
    assert "predicted to take about 80 s" in message and "n <= 1,817" in message
    assert protocol.size_refusal(spec, {}, 1500, 10, time_budget=20) is None


def _import_and_read(module: str) -> int:
    import importlib

    return importlib.import_module(module).VALUE


def test_a_kept_worker_imports_a_module_made_importable_after_it_started(tmp_path, monkeypatch):
    """The harness keeps one worker per process across jobs: a plugin folder put on sys.path later (a
    test's throw-away plugin, a notebook's) must be importable there too, as it is in the parent."""
    from ccbench.isolation import IsolatedRunner

    runner = IsolatedRunner()
    try:
        assert runner.call(pow, 2, 5, timeout=60) == 32  # the worker is up before the folder exists
        (tmp_path / "late_plugin_module.py").write_text("VALUE = 7\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        assert runner.call(_import_and_read, "late_plugin_module", timeout=60) == 7
    finally:
        runner.close()


def test_a_jobs_rows_have_the_same_dtypes_whether_or_not_a_flush_came_first(tmp_path):
    """srcp's ``n_iter`` was ``Int64`` when a trial outlasted the flush interval and ``int64`` when every
    trial fitted within one: the rows ``run_job`` returns must be typed as the file stores them."""
    from ccbench.running.results import ResultsStore, read_results

    rows = [{"config_hash": "c", "trial": t, "status": "ok", "n_iter": 5 + t, "converged": True, "ari": 0.5}
            for t in range(3)]
    frames = []
    for interval in (0.0, 3600.0):  # a flush after every row / none before the last
        store = ResultsStore(tmp_path / f"{interval}" / "results.parquet", min_interval=interval)
        for row in rows:
            store.add(dict(row))
        store.flush(force=True)
        frames.append(store.frame())
    pd.testing.assert_frame_equal(frames[0], frames[1])
    on_disk = read_results(tmp_path / "3600.0" / "results.parquet")
    assert frames[1]["n_iter"].dtype == on_disk["n_iter"].dtype
