"""The results store journals each row and rewrites its Parquet file O(log n) times (issue 54).

A re-read and a whole rewrite of ``results.parquet`` per flush wrote 1 + 2 + ... + n rows for a job
of n trials; each row is now appended to ``results.parquet.journal`` (its own bytes) and folded into
the file when the job ends, or once the journal holds as many rows as the file. A kill loses no row
that was added: the next store opened on the job folds the journal in before resuming.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccbench.running import results
from ccbench.running.results import ResultsCorruptError, ResultsStore, journal_path, read_results


def _row(trial: int, chash: str = "h") -> dict:
    return {"config_hash": chash, "trial": trial, "status": "ok", "ari": trial / 10, "n_iter": np.int64(trial),
            "converged": bool(trial % 2), "error": None}


def _count_written_rows(monkeypatch) -> list[int]:
    written = []
    write = results.write_results

    def counted(frame, path):
        written.append(len(frame))
        return write(frame, path)

    monkeypatch.setattr(results, "write_results", counted)
    return written


def test_a_job_of_n_trials_writes_O_n_rows_not_O_n_squared(tmp_path, monkeypatch):
    """20 trials, a fold allowed after every row (``min_interval=0``): the old store rewrote the file
    after each, 1 + 2 + ... + 20 = 210 rows (and 20 more on the last flush); the journal's doubling
    rule writes each row at most about twice before the last fold."""
    n = 20
    written = _count_written_rows(monkeypatch)
    path = tmp_path / "results.parquet"
    store = ResultsStore(path, min_interval=0)
    for t in range(n):
        store.add(_row(t))
    store.flush(force=True)
    assert sum(written) <= 3 * n, written
    assert len(written) <= 1 + int(np.log2(n)) + 1, written  # rewrites: O(log n)
    journal_bytes = sum(len(results._journal_line(_row(t))) for t in range(n))
    assert journal_bytes < 20 * path.stat().st_size  # the journal appended each row once
    assert not journal_path(path).exists()  # folded and removed when the job ended
    got = read_results(path)
    assert got["trial"].tolist() == list(range(n)) and got["ari"].tolist() == [t / 10 for t in range(n)]


def test_a_store_rereads_its_file_only_when_another_writer_replaced_it(tmp_path, monkeypatch):
    path = tmp_path / "results.parquet"
    reads = []
    read = results.read_results
    monkeypatch.setattr(results, "read_results", lambda p: reads.append(p) or read(p))
    store = ResultsStore(path, min_interval=0)
    for t in range(8):
        store.add(_row(t))
    store.flush(force=True)
    assert len(reads) == 1  # on opening
    other = ResultsStore(path, min_interval=0)  # a second process's store, its own write
    other.add(_row(0, "other"))
    other.flush(force=True)
    reads.clear()
    store.add(_row(8))
    store.flush(force=True)
    assert len(reads) == 1  # the file was replaced: re-read once, and the other writer's row kept
    assert sorted(read_results(path)["config_hash"].tolist()) == ["h"] * 9 + ["other"]


def test_a_killed_job_loses_no_added_row_and_resumes_from_them(tmp_path, monkeypatch):
    """A store that never folds (the job killed before its end): every row it added is on disk, and
    the next store opened on the file (the resumed job) has them and folds them into the file. The
    old store kept them in memory for up to ``min_interval`` (here an hour): all lost."""
    path = tmp_path / "results.parquet"
    store = ResultsStore(path, min_interval=3600)
    for t in range(5):
        store.add(_row(t))
    del store  # SIGKILL: no flush
    resumed = ResultsStore(path)
    assert resumed.rows_of("h").index.tolist() == list(range(5))
    assert read_results(path)["trial"].tolist() == list(range(5))  # in the file before any trial re-runs
    assert not journal_path(path).exists()


def test_rows_come_back_with_the_values_and_types_they_were_added_with(tmp_path):
    """The journal is JSON: ints stay ints, NaN stays NaN, None stays missing, numpy scalars become
    Python's; the folded file equals one written directly from the same rows."""
    rows = [{"config_hash": "h", "trial": 0, "status": "ok", "ari": float("nan"), "n_iter": np.int64(3),
             "converged": np.bool_(True), "error": None, "seed": 7, "note": "é \"quoted\"\n"},
            {"config_hash": "h", "trial": 1, "status": "error", "ari": 0.5, "n_iter": None, "converged": None,
             "error": "ValueError: x", "seed": 7, "note": ""}]
    store = ResultsStore(tmp_path / "a" / "results.parquet")
    for row in rows:
        store.add(row)
    store.flush(force=True)
    direct = tmp_path / "b" / "results.parquet"
    results.write_results(pd.DataFrame(rows), direct)
    pd.testing.assert_frame_equal(read_results(tmp_path / "a"), read_results(direct))


def test_a_retried_trial_replaces_its_row_in_the_journal_and_the_file(tmp_path):
    path = tmp_path / "results.parquet"
    store = ResultsStore(path, min_interval=3600)
    store.add({**_row(0), "status": "error", "error": "boom"})
    store.flush(force=True)
    again = ResultsStore(path, min_interval=3600)
    again.add({**_row(1)})
    again.add({**_row(0)})  # the retry
    del again  # killed: both rows only in the journal
    assert ResultsStore(path).rows_of("h")["status"].to_dict() == {0: "ok", 1: "ok"}


def test_a_row_cut_off_by_a_kill_is_left_out_with_a_warning(tmp_path, caplog):
    path = tmp_path / "results.parquet"
    store = ResultsStore(path, min_interval=3600)
    store.add(_row(0))
    with open(journal_path(path), "ab") as f:
        f.write(results._journal_line(_row(1))[:-9])  # a writer killed mid-append
    with caplog.at_level("WARNING", logger="ccbench"):
        resumed = ResultsStore(path)
    assert resumed.rows_of("h").index.tolist() == [0]
    assert "cut off" in caplog.text and str(journal_path(path)) in caplog.text


def test_a_damaged_journal_is_named_with_the_fix(tmp_path):
    path = tmp_path / "results.parquet"
    journal_path(path).write_bytes(results._journal_line(_row(0)) + b"not json\n" + results._journal_line(_row(1)))
    with pytest.raises(ResultsCorruptError, match=r"results\.parquet\.journal.*line 2.*move it aside"):
        ResultsStore(path)


def test_a_row_value_no_results_file_can_hold_is_refused_naming_its_type(tmp_path):
    store = ResultsStore(tmp_path / "results.parquet")
    with pytest.raises(TypeError, match="holds a object"):
        store.add({**_row(0), "bad": object()})
