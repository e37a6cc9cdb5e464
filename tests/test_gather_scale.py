"""Gathering at scale (issue 40, item 6): a job's writes read only its own results file, whatever
the size of the sweep around it; the synthetic sweep the scale benchmark reads is ccbench's own rows."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/benchmarks as a package

from benchmarks.synthetic_results import generate, job_rows  # noqa: E402

from ccbench.running.results import RESULTS_FILE, KEY, ResultsStore, gather, read_results, write_results  # noqa: E402


def _count_reads(monkeypatch) -> list:
    """Every Parquet file read from now on (pyarrow's readers and pandas' one)."""
    import pyarrow.parquet as pq

    opened: list = []
    read_table, read_parquet, parquet_file = pq.read_table, pd.read_parquet, pq.ParquetFile

    def counted_file(source, *args, **kwargs):
        opened.append(Path(source).resolve())
        return parquet_file(source, *args, **kwargs)

    def counted_table(source, *args, **kwargs):
        opened.append(Path(source).resolve())
        return read_table(source, *args, **kwargs)

    def counted_parquet(source, *args, **kwargs):
        opened.append(Path(source).resolve())
        return read_parquet(source, *args, **kwargs)

    monkeypatch.setattr(pq, "read_table", counted_table)
    monkeypatch.setattr(pd, "read_parquet", counted_parquet)
    monkeypatch.setattr(pq, "ParquetFile", counted_file)
    return opened


def test_a_jobs_writes_read_only_its_own_file(tmp_path, monkeypatch):
    """The merge-on-write (rows another process wrote meanwhile are kept) re-reads the job's own
    file, and nothing else: a job of a 100k-job sweep costs what it costs alone. It reads it once on
    opening, and again only when another writer has replaced it since (issue 54: a re-read before
    every write was a quarter of the quick start)."""
    sweep = generate(tmp_path / "sweep", n_jobs=6, rows_per_job=3)
    own = next(p for p in sorted(sweep.iterdir()) if p.is_dir()) / RESULTS_FILE
    opened = _count_reads(monkeypatch)
    store = ResultsStore(own, min_interval=0)
    rows = job_rows(0, 6).to_dict("records")
    for row in rows[3:5]:
        store.add(row)
    store.flush(force=True)
    assert [p.resolve() for p in opened] == [own.resolve()]  # on opening only: nobody else wrote
    other = read_results(own)  # another process adds a row (its own write, not counted below)
    opened.clear()
    write_results(pd.concat([other, job_rows(99, 1)], ignore_index=True), own)
    store.add(rows[5])
    store.flush(force=True)
    assert opened, "the store did not re-read a file another writer replaced: the merge is not exercised"
    assert set(opened) == {own.resolve()}, sorted(set(opened) - {own.resolve()})
    assert len(read_results(own)) == 6 + 1


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


def _per_file(files) -> pd.DataFrame:
    """The reference route: each file read alone (:func:`read_results`), concatenated in file order."""
    frames = []
    for f in files:
        frame = read_results(f)
        frame["source"] = str(f.parent)
        frames.append(frame)
    return pd.concat([f for f in frames if not f.empty], ignore_index=True)


def _mixed_sweep(root: Path) -> list[Path]:
    """Files of several schemas: synthetic jobs, a job with an extra column, one with a text column
    that is all missing (another Arrow type), one with no rows."""
    from ccbench.running.results import write_results

    generate(root, n_jobs=12, rows_per_job=3)
    extra = job_rows(100, 2).assign(tune_time=[0.5, 0.25])
    write_results(extra, root / "dataset=syn_0,method=d" / RESULTS_FILE)  # amid the synthetic files
    nulls = job_rows(101, 2).assign(error=[None, None])
    write_results(nulls, root / "nulls" / RESULTS_FILE)
    write_results(job_rows(102, 2).iloc[:0], root / "empty" / RESULTS_FILE)
    return sorted(root.rglob(RESULTS_FILE))


def test_the_bulk_read_equals_reading_file_by_file(tmp_path):
    from ccbench.running.results import read_many

    files = _mixed_sweep(tmp_path / "s")
    bulk = read_many(files, on_damaged=lambda exc: (_ for _ in ()).throw(exc))
    pd.testing.assert_frame_equal(bulk, _per_file(files))


def _tamper(path: Path, column: str, value) -> None:
    """Rewrite ``path`` with one value changed but the checksum metadata of the original kept: what a
    flipped byte the page checksums do not see would leave."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    frame = table.to_pandas()
    frame.loc[0, column] = value
    changed = pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(table.schema.metadata)
    pq.write_table(changed, path)


def test_the_bulk_read_names_a_file_whose_content_no_longer_matches_its_checksum(tmp_path):
    """One file of a group of identical schemas altered: only it is reported (by name), its rows left out,
    every other file's rows kept. Fails if the group's row hashes are sliced at the wrong offsets."""
    from ccbench.running.results import read_many

    files = _mixed_sweep(tmp_path / "s")
    bad = files[5]
    _tamper(bad, "ari", 0.123456)
    damaged: list = []
    bulk = read_many(files, on_damaged=damaged.append)
    assert [exc.path for exc in damaged] == [bad]
    with __import__("pytest").raises(Exception, match="does not match the checksum"):
        read_results(bad)
    pd.testing.assert_frame_equal(bulk, _per_file([f for f in files if f != bad]))
    collected: list = []
    assert len(gather(tmp_path / "s", damaged=collected)) == len(bulk) and str(bad) in collected[0]


def test_a_file_that_fails_the_schema_check_is_named_as_when_read_alone(tmp_path):
    import pytest

    from ccbench.running.results import ResultsSchemaError, write_results

    files = _mixed_sweep(tmp_path / "s")
    foreign = job_rows(7, 2).assign(status=["ok", "finished"])  # a status ccbench never writes
    write_results(foreign, files[3])
    with pytest.raises(ResultsSchemaError, match=str(files[3]).replace("/", ".")):
        gather(tmp_path / "s")
    collected: list = []
    data = gather(tmp_path / "s", damaged=collected)
    assert len(collected) == 1 and str(files[3]) in collected[0]
    assert str(files[3].parent) not in set(data["source"])
