"""Gathering at scale (issue 40, item 6): a job's writes read only its own results file, whatever
the size of the sweep around it; the synthetic sweep the scale benchmark reads is ccbench's own rows."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/benchmarks as a package

from benchmarks.synthetic_results import generate, job_rows  # noqa: E402

from ccbench.running.results import RESULTS_FILE, KEY, ResultsStore, gather, read_results  # noqa: E402


def _count_reads(monkeypatch) -> list:
    """Every Parquet file read from now on (pyarrow's reader and pandas' one)."""
    import pyarrow.parquet as pq

    opened: list = []
    read_table, read_parquet = pq.read_table, pd.read_parquet

    def counted_table(source, *args, **kwargs):
        opened.append(Path(source).resolve())
        return read_table(source, *args, **kwargs)

    def counted_parquet(source, *args, **kwargs):
        opened.append(Path(source).resolve())
        return read_parquet(source, *args, **kwargs)

    monkeypatch.setattr(pq, "read_table", counted_table)
    monkeypatch.setattr(pd, "read_parquet", counted_parquet)
    return opened


def test_a_jobs_writes_read_only_its_own_file(tmp_path, monkeypatch):
    """The merge-on-write (rows another process wrote meanwhile are kept) re-reads the job's own
    file before each write, and nothing else: a job of a 100k-job sweep costs what it costs alone."""
    sweep = generate(tmp_path / "sweep", n_jobs=6, rows_per_job=3)
    own = next(p for p in sorted(sweep.iterdir()) if p.is_dir()) / RESULTS_FILE
    opened = _count_reads(monkeypatch)
    store = ResultsStore(own, min_interval=0)
    rows = job_rows(0, 6).to_dict("records")
    for row in rows[3:]:  # three new trials, one write each
        store.add(row)
    store.flush(force=True)
    assert opened, "the store read nothing: the merge-on-write is not exercised"
    assert set(opened) == {own.resolve()}, sorted(set(opened) - {own.resolve()})
    assert len(opened) == 1 + 4  # once on opening, once before each write (3 adds, 1 forced flush)
    assert len(read_results(own)) == 6


def test_the_synthetic_sweep_is_ccbench_rows(tmp_path):
    """What the scale benchmark gathers: one file per job, written by ccbench's writer (its
    checksums verify), keyed as the harness keys rows, the leaderboard's cell shape."""
    sweep = generate(tmp_path / "sweep", n_jobs=30, rows_per_job=4, processes=2)
    files = sorted(sweep.rglob(RESULTS_FILE))
    assert len(files) == 30
    data = gather(sweep)
    assert len(data) == 30 * 4 and not data.duplicated(list(KEY)).any()
    assert data["config_hash"].nunique() == 30
    assert {"dataset.name", "method.name", "constraints.name", "noise.name", "status", "ari", "fit_time",
            "timestamp", "source"} <= set(data.columns)
    assert set(data["status"]) <= {"ok", "error", "timeout"}
