"""The results table: one Parquet row per trial, written atomically, gathered with pandas.

Each Hydra job owns ``<output_dir>/results.parquet``. Rows are keyed by
``(config_hash, trial)``: re-running a job into the same directory skips the
keys already present (resume), and a retried trial replaces its old row.
Files are rewritten whole through a temporary file and :func:`os.replace`, so a
killed run leaves either the previous file or the new one, never half of one.

Integrity: every file is written with Parquet page checksums (CRC-32 of each data
page, verified on read) and a SHA-256 of the decoded table (column names, types
and values) in the file's key-value metadata, checked on read. Page checksums
do not cover page headers or the footer (where the column names live), so a
flipped byte there could otherwise change a number or a name silently; with both,
a damaged file is a :class:`ResultsCorruptError` naming the file, never a
different number.

Concurrency: a write happens under an exclusive lock on ``<file>.lock`` and merges
the rows on disk (written meanwhile by another process using the same job
directory, e.g. a second sweep into the same ``hydra.sweep.dir``) with this
process's new rows, so no process's rows are lost.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd

from ._locks import locked  # noqa: F401 (re-exported: every writer of a results file takes it)
from .config import canonical_json
from ._results_errors import ResultsCorruptError, ResultsSchemaError
from ._results_journal import JOURNAL_SUFFIX, _append, _journal_line, journal_path, read_journal  # noqa: F401

__all__ = [
    "RESULTS_FILE",
    "STATUSES",
    "NOT_FITTED",
    "NOT_SET_UP",
    "not_fitted",
    "KEY",
    "flatten",
    "read_results",
    "write_results",
    "ResultsStore",
    "gather",
    "last_line",
    "ResultsCorruptError",
    "ResultsSchemaError",
    "read_many",
    "FAILED_STATUSES",
    "VERDICT_STATUSES",
    "MEASURED_COLUMNS",
]

RESULTS_FILE = "results.parquet"
STATUSES = ("ok", "error", "skipped", "infeasible", "not_found", "timeout", "refused", "task_time_limit")
#: How the ``error`` of a ``timeout`` row recorded *without fitting* starts (``timeout_stops_cell``: a kill earlier
#: in the cell; ``timeout_stops_seeds``: a kill at another base seed). Such a row is a prediction, not a
#: measurement: the pages score it nowhere and the time models do not read it.
NOT_FITTED = "TrialTimeout: not fitted"
#: How the ``error`` of an ``error`` row starts when the cell's set-up failed before any trial ran (a data file
#: missing, a download refused, a bad option, a plugin not installed): the run's failure, not a verdict of the
#: method's code, so a resume runs it again even with ``rerun_errors=false`` (it costs no fit). A sweep started
#: once without ``CCBENCH_DATA_DIR`` must not keep thousands of such rows as the methods' errors.
NOT_SET_UP = "SetupError: no trial ran"
# task_time_limit: a SLURM task's last allowed time limit stopped the trial (not the method's doing): always
# re-run on resume, like refused; the launcher names the task (exit status 1)
# statuses that make a sweep exit non-zero and are retried on resume (rerun_errors)
FAILED_STATUSES = ("error", "timeout")
#: statuses the method's code decides: a row of one is stale once that code changes (the harness re-runs it)
VERDICT_STATUSES = ("ok", "skipped", "infeasible", "not_found")
#: Columns that measure the run rather than the result (they differ between two runs of the same
#: trial): leave them out when comparing rows for equality
# What a run observes rather than computes: times, memory, and which of two racing jobs fitted a shared
# fit first (``fit_reused``: the lock covers only the write, so either may; the results are identical)
MEASURED_COLUMNS = ("fit_time", "fit_cpu_time", "trial_cpu_time", "trial_wall_time", "tune_time", "peak_rss_mb",
                    "fit_rss_mb", "timestamp", "fit_reused")
# (not_found, like infeasible, is a recorded outcome: the same seed repeats the same search)
KEY = ("config_hash", "trial")
log = logging.getLogger("ccbench")
_CONTENT_KEY = b"ccbench.content_sha256"


def not_fitted(rows: pd.DataFrame) -> pd.Series:
    """True for a row recorded as ``timeout`` without fitting (:data:`NOT_FITTED`), aligned with ``rows``."""
    if "error" not in rows or "status" not in rows:
        return pd.Series(False, index=rows.index)
    return rows["status"].astype(str).eq("timeout") & rows["error"].fillna("").astype(str).str.startswith(NOT_FITTED)


def _check_schema(frame: pd.DataFrame, path) -> None:
    """The columns every ccbench row has, with the types resume and gather rely on: ``config_hash`` and
    ``status`` text, ``trial`` a whole number (text would make ``"0"`` and ``0`` two keys)."""
    if frame.empty and not len(frame.columns):
        return
    missing = [c for c in (*KEY, "status") if c not in frame.columns]
    if missing:
        raise ResultsSchemaError(path, f"no column {', '.join(missing)}")
    trial = frame["trial"]
    if not pd.api.types.is_integer_dtype(trial.dtype):
        raise ResultsSchemaError(path, f"column trial has type {trial.dtype}, not integers")
    if len(frame) and trial.isna().any():
        raise ResultsSchemaError(path, "column trial has missing values")
    for col in ("config_hash", "status"):
        values = frame[col].dropna()
        if not values.map(lambda v: isinstance(v, str)).all():
            raise ResultsSchemaError(path, f"column {col} holds values that are not text")
    unknown = sorted(set(frame["status"].dropna()) - set(STATUSES))
    if unknown:
        raise ResultsSchemaError(path, f"unknown status {', '.join(map(repr, unknown[:3]))}")


def flatten(mapping: Mapping, prefix: str = "") -> dict:
    """Nested mapping -> ``{"a.b.c": value}``; lists become JSON strings.

    Lists are stored as text so every cell of a Parquet column has one type.
    """
    flat = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, prefix=f"{name}."))
        elif isinstance(value, (list, tuple)):
            flat[name] = canonical_json(list(value))
        else:
            flat[name] = value
    return flat


def last_line(text) -> str:
    """The line of an ``error`` cell (a traceback tail) that says what went wrong."""
    lines = [ln for ln in str(text or "").strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else ""


def _content_hash(frame: pd.DataFrame) -> bytes:
    """SHA-256 of a table's column names, types and values (independent of the file layout)."""
    digest = hashlib.sha256()
    digest.update(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode())
    if len(frame.columns):
        values = pd.util.hash_pandas_object(frame, index=False, categorize=False)
        digest.update(values.to_numpy().tobytes())
    return digest.hexdigest().encode()


def arrow_table(path):
    """The Arrow table of one results file, its page checksums verified.

    ``ParquetFile.read`` rather than ``pq.read_table``: the same table at a third of the CPU on a
    small file (1.3 ms against 3.9 ms for a 10-row results file), as ``read_table`` goes through the
    datasets layer; at 100,000 files that is the difference between 2 and 7 minutes."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path, page_checksum_verification=True) as parquet:
        return parquet.read(use_threads=False)


def read_results(path) -> pd.DataFrame:
    """The rows in ``path`` (a results file or a job directory); empty when absent.

    Raises :class:`ResultsCorruptError` (naming the file and the fix) when the file
    is truncated or damaged, :class:`ResultsSchemaError` (a subclass) when it is another table.
    """
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILE
    if not path.exists():
        return pd.DataFrame()
    try:
        table = arrow_table(path)
        frame = table.to_pandas()
    except Exception as exc:  # noqa: BLE001 - any decoding failure means a damaged file
        raise ResultsCorruptError(path, f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}") from None
    stored = (table.schema.metadata or {}).get(_CONTENT_KEY)
    if stored is not None and stored != _content_hash(frame):
        raise ResultsCorruptError(path, "its content does not match the checksum written with it")
    _check_schema(frame, path)
    return frame


@contextlib.contextmanager
def atomically(path):
    """Yield a temporary path beside ``path``; on success it replaces ``path`` in one rename, so a
    killed writer leaves the old file or the new one, never half of one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_tmp(path.parent)
    tmp = _exclusive_tmp(path)
    try:
        yield tmp
        os.replace(tmp, path)  # replaces the directory entry: a symlink at ``path`` is replaced, never followed
    finally:
        if os.path.lexists(tmp):
            tmp.unlink()


# when this process started writing (a temporary file older than this, of a dead process, is stale)
_STARTED = time.time()
_TMP_NAME = re.compile(r"^\..+\.(\d+)(\.[0-9a-f]{8})?\.tmp$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def clean_stale_tmp(folder) -> list[Path]:
    """Remove the temporary files (``.<name>.<pid>[.<hex>].tmp``) a killed writer left in ``folder``
    between write and rename: those older than this process's first write and whose process is not
    alive here. Returns the files removed; a file another live process holds is never touched."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _TMP_NAME.match(entry.name)
        if not match or int(match.group(1)) == os.getpid():
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime >= _STARTED or _alive(int(match.group(1))):
                continue
            os.unlink(entry.path)  # a symlink is removed, never followed
            removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def _exclusive_tmp(path: Path) -> Path:
    """A new, empty temporary file beside ``path``, created by this call (``O_EXCL``): a file or
    symlink planted under the name is never opened, so the write cannot land anywhere else."""
    import secrets

    while True:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644))
            return tmp
        except FileExistsError:
            continue


def write_results(frame: pd.DataFrame, path) -> pd.DataFrame:
    """Write ``frame`` to ``path`` atomically (:func:`atomically`), with checksums. Returns the rows
    as a reader decodes them (what :func:`read_results` of the file gives)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(_normalise(frame), preserve_index=False)
    # hash what a reader will decode, so the check compares like with like
    decoded = table.to_pandas()
    meta = {**(table.schema.metadata or {}), _CONTENT_KEY: _content_hash(decoded)}
    with atomically(path) as tmp:
        pq.write_table(table.replace_schema_metadata(meta), tmp, write_page_checksum=True)
    return decoded


def _normalise(frame: pd.DataFrame) -> pd.DataFrame:
    """Give columns that may hold missing values a nullable type Parquet accepts."""
    frame = frame.copy()
    if "n_iter" in frame:
        frame["n_iter"] = pd.to_numeric(frame["n_iter"], errors="coerce").astype("Int64")
    if "converged" in frame:
        frame["converged"] = frame["converged"].astype("boolean")
    for col in frame.columns[frame.dtypes == object]:
        values = frame[col].dropna()
        kinds = {type(v) for v in values}
        if len(kinds) > 1 and not kinds <= {int, float}:
            # e.g. n_clusters "true_k" next to 3: keep the column readable as text
            frame[col] = frame[col].map(lambda v: v if v is None else str(v))
    return frame


class ResultsStore:
    """Rows of one job's results file, with resume, a journal of every row and batched rewrites.

    Each :meth:`add` appends the row, one JSON line, to ``<file>.journal`` beside the results file
    (under the file's lock): the row is on disk before the next trial starts, and an append costs
    the row's bytes, not the file's. The journal is folded into the Parquet file (one atomic
    rewrite, :func:`write_results`, then the journal is removed):

    - when the job ends (:meth:`flush` with ``force=True``; also on Ctrl-C);
    - while trials keep coming, at most once per ``min_interval`` (default 30 s) and only once the
      journal holds at least as many of this store's rows as the file held at its last fold. The
      file therefore doubles between two rewrites, so a job of ``n`` trials rewrites it ``O(log n)``
      times and writes ``O(n)`` bytes in all (a rewrite per second, as before, wrote ``O(n^2)``).
      These folds only let a reader of the file see a long job's progress: the journal already
      keeps every row, so most jobs (seconds long) are folded once, at their end;
    - when a store is opened on a file whose journal is not empty (a killed writer's rows): before
      anything reads the rows to resume, so a killed job loses no row it had added.

    Between folds a reader of ``results.parquet`` alone (``gather``, ``ccbench report``) does not
    see the journal's rows of a job still running or killed; the next store opened on the job
    (the same command, resumed) folds them in.

    The file is re-read before a fold only when another writer replaced it since this store last
    read or wrote it (its inode, size and modification time differ: every write is a rename of a
    new file, so a replaced file is a new inode); the rows another process wrote are kept (merge).
    For a key in both, the row added last wins (a retried trial replaces its old row).

    Parameters
    ----------
    path : path-like
        The ``results.parquet`` file.
    min_interval : float, default=30.0
        Least seconds between two folds while trials keep coming; ``flush(force=True)`` always folds.
    """

    def __init__(self, path, *, min_interval: float = 30.0):
        self.path = Path(path)
        self.journal = journal_path(self.path)
        self.min_interval = min_interval
        self.existing = pd.DataFrame()
        self.pending: list[dict] = []  # rows this store journaled since its last fold
        self._seen = _UNREAD
        with locked(self.path):
            journaled = self._load()
            if journaled:  # a killed writer's rows: into the file before anyone resumes from it
                self._fold(journaled)
        self._last_write = time.monotonic()

    def rows_of(self, config_hash: str) -> pd.DataFrame:
        """Rows already recorded for ``config_hash``, indexed by trial."""
        old = self.existing
        if old.empty or "config_hash" not in old:
            return pd.DataFrame(index=pd.Index([], name="trial"))
        mine = old[old["config_hash"] == config_hash]
        return mine.set_index(mine["trial"].astype(int).rename("trial"))

    def add(self, row: dict) -> None:
        """Journal ``row`` (on disk when this returns), then fold if one is due (:meth:`flush`)."""
        line = _journal_line(row)
        with locked(self.path):
            _append(self.journal, line)
        self.pending.append(json.loads(line))  # as the journal gives it back: a fold reads the same values
        self.flush()

    def flush(self, force: bool = False) -> None:
        """Fold the journal into the results file if due (see the class docstring); always with ``force``."""
        if not self.pending:
            return
        if not force and (time.monotonic() - self._last_write < self.min_interval
                          or len(self.pending) < len(self.existing)):
            return
        with locked(self.path):
            self._fold(self._load())
        self._last_write = time.monotonic()

    def frame(self) -> pd.DataFrame:
        """Existing rows (minus those replaced) followed by the new ones, typed as the file stores them.

        Always normalised (:func:`_normalise`): whether a fold happened before the last trial
        depends on how long the trials took, and the rows a job returns must not change their
        dtypes with that (``n_iter`` was ``int64`` when every trial fitted within one flush interval,
        ``Int64`` otherwise)."""
        return _normalise(_merge(self.existing, self.pending))

    def _load(self) -> list[dict]:
        """Under the lock: refresh :attr:`existing` if another writer replaced the file since this
        store last saw it, and return the journal's rows (every writer's, in the order added)."""
        seen = _signature(self.path)
        if seen != self._seen:
            self.existing = read_results(self.path)
            self._seen = seen
        return read_journal(self.journal)

    def _fold(self, rows: list[dict]) -> None:
        """Under the lock, with the journal's ``rows`` (:meth:`_load`): write the file's rows and the
        journal's as one file, then remove the journal (a kill in between leaves rows in both: folding
        them again gives the same file, the journal's row being the same as the file's)."""
        self.existing = write_results(_merge(self.existing, rows), self.path)
        self._seen = _signature(self.path)
        self.journal.unlink(missing_ok=True)
        self.pending = []


_UNREAD = object()


def _signature(path: Path):
    """What tells one version of a file from another without reading it: every writer replaces the
    file by a rename (a new inode), and size and modification time tell a reused inode apart."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _merge(existing: pd.DataFrame, rows: list[dict]) -> pd.DataFrame:
    """``existing`` minus the keys ``rows`` replace, then ``rows`` (the last of a key wins, in its place)."""
    if not rows:
        return existing
    last = {}
    for i, row in enumerate(rows):  # a dict, not DataFrame.drop_duplicates: a tenth of the cost on a job's rows
        last[(row.get("config_hash"), row.get("trial"))] = i
    new = pd.DataFrame([rows[i] for i in sorted(last.values())])
    if existing.empty:
        return new
    replaced = pd.MultiIndex.from_frame(new[list(KEY)])
    old_keys = pd.MultiIndex.from_frame(existing[list(KEY)])
    kept = existing[~old_keys.isin(replaced)]
    return pd.concat([kept, new], ignore_index=True)


def _result_files(paths: Iterable) -> list[Path]:
    files = []
    for p in paths:
        p = Path(p)
        if p.is_file():
            files.append(p)
        elif p.is_dir():
            files.extend(sorted(p.rglob(RESULTS_FILE)))
        else:
            raise FileNotFoundError(f"no such results file or directory: {p}")
    return files


def gather(*paths, damaged: str | list = "raise") -> pd.DataFrame:
    """Every ``results.parquet`` under ``paths`` in one frame.

    Adds ``source`` (the job directory). A ``(config_hash, trial)`` present in
    several files (the same cell run into two directories) is kept once: the
    most recent row. ``damaged="skip"`` leaves out damaged files with a warning
    naming each, a list collects their messages instead; by default one raises
    :class:`ResultsCorruptError`.
    """
    files = _result_files(paths)
    if not files:
        raise FileNotFoundError(
            f"no {RESULTS_FILE} under {', '.join(map(str, paths))}; "
            f"point at a run or multirun output directory"
        )
    def on_damaged(exc: ResultsCorruptError) -> None:
        if isinstance(damaged, list):
            damaged.append(str(exc))
        elif damaged != "skip":
            raise exc
        else:
            import warnings

            warnings.warn(str(exc), stacklevel=3)

    data = read_many(files, on_damaged)
    if data.empty:
        return pd.DataFrame()
    if "timestamp" in data:
        data = data.sort_values("timestamp", kind="stable")
    if set(KEY) <= set(data.columns):
        # per budget too: a re-run at a larger budget (same config_hash) sits beside its board row
        data = data.drop_duplicates([*KEY, *(c for c in ("trial_timeout", "time_budget") if c in data)], keep="last")
    return data.reset_index(drop=True)


# -- reading many files at once (:func:`read_many`, used by :func:`gather`) ---------------------------
# The same checks as :func:`read_results`, paid once per group of files instead of once per file.
#
# A sweep of 100,000 jobs is 100,000 small files. Read one by one, each pays a fixed cost of
# about 8 ms of CPU (2026-11, the 2-core machine): the Arrow-to-pandas conversion, the SHA-256
# content check (``pd.util.hash_pandas_object`` column by column) and the schema check, each a
# few dozen pandas calls on ten rows. Here the files are read as Arrow tables (in threads: pyarrow
# releases the GIL while decoding), grouped by schema, and each group is converted, hashed and
# checked once:
#
# - one ``to_pandas`` per group: files whose Arrow schema and pandas metadata are equal convert
#   to the same dtypes, alone or concatenated;
# - one row hash per group: ``hash_pandas_object`` hashes each row from that row's values alone
#   (columns combined row by row), so a file's slice of the group's row hashes is byte for byte
#   the row hashes of the file read alone, and its SHA-256 (dtypes, then the row hashes) is the
#   one written with it. A file whose slice does not match is damaged, and named;
# - one schema check per group; when it fails, the group's files are read one by one, so that
#   the error names the file, exactly as :func:`read_results` does.
#
# Files without rows are read one by one (their dtypes need not match a group's). The frames
# returned are equal to the per-file route's (``tests/test_gather_scale.py`` compares them).

#: files read before their groups are converted: bounds the Arrow tables held at once (a 10-row
#: table costs far more memory as Arrow objects than as rows of the converted frame)
CHUNK_FILES = 2_000


def _read_table(path: Path):
    try:
        return arrow_table(path), None
    except Exception as exc:  # noqa: BLE001 - any decoding failure means a damaged file
        return None, ResultsCorruptError(
            path, f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}")


def _group_key(table) -> tuple:
    schema = table.schema
    return schema.remove_metadata(), (schema.metadata or {}).get(b"pandas")


def _slice_digest(dtype_repr: bytes, row_hashes, start: int, stop: int) -> bytes:
    digest = hashlib.sha256()
    digest.update(dtype_repr)
    digest.update(row_hashes[start:stop].tobytes())
    return digest.hexdigest().encode()


def _read_group(paths: list[Path], order: list[int], tables: list, on_damaged: Callable) -> pd.DataFrame | None:
    """One frame of a group's files (with ``source`` and ``_order``), the damaged ones reported and left
    out; None when the group fails the schema check (the caller reads it file by file)."""
    import numpy as np
    import pyarrow as pa

    frame = pa.concat_tables([t.replace_schema_metadata(tables[0].schema.metadata) for t in tables]).to_pandas()
    try:
        _check_schema(frame, paths[0])
    except ResultsCorruptError:
        return None
    lengths = np.array([t.num_rows for t in tables])
    ends = np.cumsum(lengths)
    starts = ends - lengths
    dtype_repr = repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode()
    row_hashes = pd.util.hash_pandas_object(frame, index=False, categorize=False).to_numpy()
    keep = np.ones(len(frame), dtype=bool)
    for path, table, start, stop in zip(paths, tables, starts, ends):
        stored = (table.schema.metadata or {}).get(_CONTENT_KEY)
        if stored is not None and stored != _slice_digest(dtype_repr, row_hashes, start, stop):
            on_damaged(ResultsCorruptError(path, "its content does not match the checksum written with it"))
            keep[start:stop] = False
    frame["source"] = np.repeat(np.array([str(p.parent) for p in paths], dtype=object), lengths)
    frame["_order"] = np.repeat(np.asarray(order), lengths)
    return frame[keep]


def _one_by_one(paths: list[Path], order: list[int], on_damaged: Callable) -> list[pd.DataFrame]:
    frames = []
    for path, position in zip(paths, order):
        try:
            frame = read_results(path)
        except ResultsCorruptError as exc:
            on_damaged(exc)
            continue
        frame["source"] = str(path.parent)
        frame["_order"] = position
        frames.append(frame)
    return frames


def read_many(files: list[Path], on_damaged: Callable[[Exception], None],
              threads: int | None = None) -> pd.DataFrame:
    """Every row of ``files`` in one frame, in file order, with ``source`` (the job directory): equal to
    concatenating :func:`~ccbench.running.results.read_results` of each file.

    ``on_damaged(exc)`` is called with the :class:`~ccbench.running.results.ResultsCorruptError` of
    each damaged file (it may raise to stop); that file's rows are left out.
    """
    threads = threads or min(4, os.cpu_count() or 1)
    frames: list[pd.DataFrame] = []
    with ThreadPoolExecutor(threads) as pool:
        for begin in range(0, len(files), CHUNK_FILES):
            chunk = files[begin:begin + CHUNK_FILES]
            groups: dict[tuple, tuple[list, list, list]] = {}
            alone, alone_order = [], []
            for position, path, (table, error) in zip(range(begin, begin + len(chunk)), chunk,
                                                      pool.map(_read_table, chunk)):
                if error is not None:
                    on_damaged(error)
                elif table.num_rows == 0:
                    alone.append(path)
                    alone_order.append(position)
                else:
                    paths, order, tables = groups.setdefault(_group_key(table), ([], [], []))
                    paths.append(path)
                    order.append(position)
                    tables.append(table)
            for paths, order, tables in groups.values():
                frame = _read_group(paths, order, tables, on_damaged)
                if frame is None:
                    frames.extend(_one_by_one(paths, order, on_damaged))
                else:
                    frames.append(frame)
            frames.extend(_one_by_one(alone, alone_order, on_damaged))
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    data = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return data.sort_values("_order", kind="stable").drop(columns="_order").reset_index(drop=True)
