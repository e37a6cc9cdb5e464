"""The results table: one Parquet row per trial, written atomically, gathered with pandas.

Each Hydra job owns ``<output_dir>/results.parquet``. Rows are keyed by
``(config_hash, trial)``: re-running a job into the same directory skips the
keys already present (resume), and a retried trial replaces its old row.
Files are rewritten whole through a temporary file and :func:`os.replace`, so a
killed run leaves either the previous file or the new one, never half of one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from .config import canonical_json

__all__ = [
    "RESULTS_FILE",
    "STATUSES",
    "KEY",
    "flatten",
    "read_results",
    "write_results",
    "ResultsStore",
    "gather",
    "last_line",
]

RESULTS_FILE = "results.parquet"
STATUSES = ("ok", "error", "skipped", "infeasible", "not_found", "timeout")
KEY = ("config_hash", "trial")


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


def read_results(path) -> pd.DataFrame:
    """The rows in ``path`` (a results file or a job directory); empty when absent."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILE
    if not path.exists():
        return pd.DataFrame()
    return pd.read_parquet(path)


def write_results(frame: pd.DataFrame, path) -> None:
    """Write ``frame`` to ``path`` atomically (temporary file, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        _normalise(frame).to_parquet(tmp, index=False)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


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
    """Rows of one job's results file, with resume and throttled atomic writes.

    Parameters
    ----------
    path : path-like
        The ``results.parquet`` file.
    min_interval : float, default=1.0
        Seconds between writes while trials keep coming; :meth:`flush` with
        ``force=True`` always writes. A kill loses at most this much work.
    """

    def __init__(self, path, *, min_interval: float = 1.0):
        self.path = Path(path)
        self.min_interval = min_interval
        self.existing = read_results(self.path)
        self.new_rows: list[dict] = []
        self._last_write = time.monotonic()

    def rows_of(self, config_hash: str) -> pd.DataFrame:
        """Rows already recorded for ``config_hash``, indexed by trial."""
        old = self.existing
        if old.empty or "config_hash" not in old:
            return pd.DataFrame(index=pd.Index([], name="trial"))
        mine = old[old["config_hash"] == config_hash]
        return mine.set_index(mine["trial"].astype(int).rename("trial"))

    def add(self, row: dict) -> None:
        self.new_rows.append(row)
        self.flush()

    def flush(self, force: bool = False) -> None:
        if not self.new_rows:
            return
        if not force and time.monotonic() - self._last_write < self.min_interval:
            return
        write_results(self.frame(), self.path)
        self._last_write = time.monotonic()

    def frame(self) -> pd.DataFrame:
        """Existing rows (minus those replaced) followed by the new ones."""
        new = pd.DataFrame(self.new_rows)
        if self.existing.empty:
            return new.reset_index(drop=True)
        if new.empty:
            return self.existing
        replaced = pd.MultiIndex.from_frame(new[list(KEY)])
        old_keys = pd.MultiIndex.from_frame(self.existing[list(KEY)])
        kept = self.existing[~old_keys.isin(replaced)]
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


def gather(*paths) -> pd.DataFrame:
    """Every ``results.parquet`` under ``paths`` in one frame.

    Adds ``source`` (the job directory). A ``(config_hash, trial)`` present in
    several files (the same cell run into two directories) is kept once: the
    most recent row.
    """
    files = _result_files(paths)
    if not files:
        raise FileNotFoundError(
            f"no {RESULTS_FILE} under {', '.join(map(str, paths))}; "
            f"point at a run or multirun output directory"
        )
    frames = []
    for f in files:
        df = pd.read_parquet(f)
        df["source"] = str(f.parent)
        frames.append(df)
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    data = pd.concat(frames, ignore_index=True)
    if "timestamp" in data:
        data = data.sort_values("timestamp", kind="stable")
    if set(KEY) <= set(data.columns):
        data = data.drop_duplicates(list(KEY), keep="last")
    return data.reset_index(drop=True)
