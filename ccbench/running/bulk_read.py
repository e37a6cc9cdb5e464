"""Reading many results files at once: the same checks as :func:`~ccbench.running.results.read_results`,
paid once per group of files instead of once per file.

A sweep of 100,000 jobs is 100,000 small files. Read one by one, each pays a fixed cost of
about 8 ms of CPU (2026-11, the 2-core machine): the Arrow-to-pandas conversion, the SHA-256
content check (``pd.util.hash_pandas_object`` column by column) and the schema check, each a
few dozen pandas calls on ten rows. Here the files are read as Arrow tables (in threads: pyarrow
releases the GIL while decoding), grouped by schema, and each group is converted, hashed and
checked once:

- one ``to_pandas`` per group: files whose Arrow schema and pandas metadata are equal convert
  to the same dtypes, alone or concatenated;
- one row hash per group: ``hash_pandas_object`` hashes each row from that row's values alone
  (columns combined row by row), so a file's slice of the group's row hashes is byte for byte
  the row hashes of the file read alone, and its SHA-256 (dtypes, then the row hashes) is the
  one written with it. A file whose slice does not match is damaged, and named;
- one schema check per group; when it fails, the group's files are read one by one, so that
  the error names the file, exactly as :func:`read_results` does.

Files without rows are read one by one (their dtypes need not match a group's). The frames
returned are equal to the per-file route's (``tests/test_gather_scale.py`` compares them).
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import pandas as pd

from . import results as _results

__all__ = ["read_many"]

#: files read before their groups are converted: bounds the Arrow tables held at once (a 10-row
#: table costs far more memory as Arrow objects than as rows of the converted frame)
CHUNK_FILES = 2_000


def _read_table(path: Path):
    try:
        return _results.arrow_table(path), None
    except Exception as exc:  # noqa: BLE001 - any decoding failure means a damaged file
        return None, _results.ResultsCorruptError(
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
        _results._check_schema(frame, paths[0])
    except _results.ResultsCorruptError:
        return None
    lengths = np.array([t.num_rows for t in tables])
    ends = np.cumsum(lengths)
    starts = ends - lengths
    dtype_repr = repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode()
    row_hashes = pd.util.hash_pandas_object(frame, index=False, categorize=False).to_numpy()
    keep = np.ones(len(frame), dtype=bool)
    for path, table, start, stop in zip(paths, tables, starts, ends):
        stored = (table.schema.metadata or {}).get(_results._CONTENT_KEY)
        if stored is not None and stored != _slice_digest(dtype_repr, row_hashes, start, stop):
            on_damaged(_results.ResultsCorruptError(path, "its content does not match the checksum written with it"))
            keep[start:stop] = False
    frame["source"] = np.repeat(np.array([str(p.parent) for p in paths], dtype=object), lengths)
    frame["_order"] = np.repeat(np.asarray(order), lengths)
    return frame[keep]


def _one_by_one(paths: list[Path], order: list[int], on_damaged: Callable) -> list[pd.DataFrame]:
    frames = []
    for path, position in zip(paths, order):
        try:
            frame = _results.read_results(path)
        except _results.ResultsCorruptError as exc:
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
