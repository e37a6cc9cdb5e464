"""Shipped rows: a sweep's per-trial rows as one compact Parquet file with a manifest, read back like a sweep.

Why: the leaderboard's pages are aggregates; without the rows nobody can recompute a rank, add a
metric, or rank a new method without re-running every other one. ``ccbench report DIR --leaderboard
--out FOLDER`` therefore also writes, into ``FOLDER``:

- ``rows.parquet``: every row (config, seeds, statuses, metrics, times, memory, provenance), zstd
  compressed with dictionary-encoded columns, plus a ``protocol_hash`` column (:func:`protocol_hashes`);
- ``labels.parquet``: the predicted labels of each trial (``config_hash``, ``trial``, ``labels``) when
  the sweep stored them (``store_labels=true``, :mod:`ccbench.running.labels_store`);
- ``manifest.jsonl``: one JSON line per file: its sha256, bytes, row count, protocol hash(es), the
  protocol's values, the code versions that made the rows and the ccbench commit that shipped them.
  A contributor sends a Parquet file plus its line; appending both to a folder adds the rows.

``ccbench report FOLDER`` reads such a folder like a sweep directory (:func:`is_shipped`,
:func:`read_shipped`), after checking every file against its manifest line: a changed byte is an
error naming the file, never a different number. ``--with FOLDER`` ranks a new sweep's rows against
the shipped ones (:func:`merge_with`): refused when the rows were made under another protocol or in
cells the shipped rows do not have; a warning when timeout/refused verdicts come from another machine.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..running.config import canonical_json
from ._format import per_distinct_row
from ..running.results import KEY, _normalise
from ._safe import MAX_YAML_BYTES, check_regular, read_regular, staged_dir, write_bytes, write_text

__all__ = ["ROWS_FILE", "LABELS_FILE", "GRID_FILE", "MANIFEST_FILE", "PROTOCOL_KEYS", "is_shipped", "read_shipped",
           "read_shipped_labels", "read_shipped_grids", "write_shipped", "job_path", "protocol_hashes", "protocol_values", "newest_rows",
           "merge_with", "machine_text"]

ROWS_FILE = "rows.parquet"
LABELS_FILE = "labels.parquet"
GRID_FILE = "grid.json"
MANIFEST_FILE = "manifest.jsonl"
# a shipped row's ``source`` on reading: "<folder>/<rows file>::<job>" (the job relative to its sweep directory)
_JOB_SEPARATOR = "::"
#: the most jobs ccbench counts in one grid read from a results folder (a stranger's may claim billions)
MAX_GRID_JOBS = 10_000_000
#: the most rows ccbench loads from one shipped folder (its rows files' Parquet metadata, read before any
#: row): the reference leaderboard ships 76,320; a 7 MB file of 20 M rows took 4.8 GB to load.
#: ``CCBENCH_MAX_SHIPPED_ROWS`` raises it.
MAX_SHIPPED_ROWS = 2_000_000
#: the most bytes ccbench reads from one shipped folder's rows and labels files, on disk and unpacked
#: (Parquet metadata): the reference ships 12 MB (36 MB unpacked). ``CCBENCH_MAX_SHIPPED_BYTES`` raises it.
MAX_SHIPPED_BYTES = 1 << 30
#: the largest manifest ccbench reads (the reference's is 2 KB; a line per contributed file)
MAX_MANIFEST_BYTES = 1 << 20

#: The experiment's root keys that define what a number means (what every cell of the leaderboard
#: shares): rows that differ in one of them are not comparable. The cells themselves (data set and
#: its options, supervision, noise, tuner) are checked apart (:func:`merge_with`), so a sweep of a
#: few data sets can still be ranked against the full grid.
PROTOCOL_KEYS = ("seed", "n_trials", "metrics", "evaluate_on", "time_budget", "trial_timeout", "timeout_stops_cell",
                 "timeout_stops_seeds",
                 "share_unsupervised_fits", "tune_folds", "inconsistent", "dataset.preprocess")
#: protocol keys added after rows were shipped, at the value rows made before them had (a row without the column
#: was made under it): a new row at that value stays comparable with the old shipped rows
_ADDED_LATER = {"timeout_stops_seeds": False}

# columns a report adds on loading (recomputed from the rows): not shipped
_DERIVED = ("method_label", "setting")
# the columns that say which cell a row belongs to (beside the method)
_CELL_PREFIXES = ("dataset.", "constraints.", "noise.")
_MACHINE = ("env.cpu", "env.n_cores")


def _plain(value):
    """A row value as JSON-able Python (a list column comes back from Parquet as an array)."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    return value


def _column_text(values: pd.Series) -> pd.Series:
    """A column as canonical JSON texts, each distinct value encoded once (47,520 rows, few values)."""
    key = values.map(type).astype(str) + ":" + values.astype(str)
    first = ~key.duplicated()
    lookup = {k: canonical_json(_plain(v)) for k, v in zip(key[first], values[first])}
    return key.map(lookup)


def _texts(data: pd.DataFrame, cols: list) -> pd.DataFrame:
    """``cols`` of ``data`` as canonical JSON texts (missing columns as null)."""
    return pd.DataFrame({c: (_column_text(data[c]) if c in data else "null") for c in cols}, index=data.index)


def _hash_rows(data: pd.DataFrame, cols: list) -> pd.Series:
    """One stable hash per row over ``cols`` (computed once per distinct combination)."""
    texts = _texts(data, cols).astype(object)  # ``cols``: at least one
    codes, uniques = pd.factorize(texts.iloc[:, 0].str.cat(texts.iloc[:, 1:], sep="\x1f"))
    hashes = np.array([hashlib.sha256(u.encode()).hexdigest()[:16] for u in uniques], dtype=object)
    return pd.Series(hashes[codes] if len(codes) else [], index=data.index, dtype=object)


def _with_added_keys(data: pd.DataFrame) -> pd.DataFrame:
    missing = {k: v for k, v in _ADDED_LATER.items() if k not in data}
    return data.assign(**missing) if missing else data


def protocol_hashes(data: pd.DataFrame) -> pd.Series:
    """Each row's protocol hash: a hash of its :data:`PROTOCOL_KEYS` values (a key of :data:`_ADDED_LATER`
    missing from the rows at the value it stands for)."""
    return _hash_rows(_with_added_keys(data), list(PROTOCOL_KEYS))


def protocol_values(data: pd.DataFrame) -> dict:
    """{protocol hash: {key: value}} of the rows (one entry for a sweep made under one protocol)."""
    data = _with_added_keys(data)
    hashes = protocol_hashes(data)
    out = {}
    for h, idx in hashes.groupby(hashes).groups.items():
        row = data.loc[idx[0]]
        out[h] = {k: _plain(row[k]) if k in data else None for k in PROTOCOL_KEYS}
    return out


def _cell_ids(data: pd.DataFrame) -> pd.Series:
    """Each row's cell without its method: data set and options, supervision, noise and tuner, as text."""
    cols = sorted(c for c in data.columns if c.startswith(_CELL_PREFIXES)) + ["tune"]
    cell = per_distinct_row(_texts(data, cols), lambda r: ", ".join(f"{c}={v}" for c, v in r.items() if v != "null"))
    return pd.Series(cell, index=data.index, dtype=object)


def machine_text(data: pd.DataFrame) -> pd.Series:
    """Each row's machine as the time limits see it: CPU model and core count."""
    parts = [data[c].astype(str) if c in data else pd.Series("?", index=data.index) for c in _MACHINE]
    return parts[0] + ", " + parts[1] + " cores"


def newest_rows(data: pd.DataFrame) -> pd.DataFrame:
    """One row per ``(config_hash, trial)``: the most recent (``timestamp``), as gathering a sweep does."""
    if "timestamp" in data:
        data = data.sort_values("timestamp", kind="stable")
    if set(KEY) <= set(data.columns):
        # per budget too: a re-run at a larger budget (same config_hash) sits beside its board row
        data = data.drop_duplicates([*KEY, *(c for c in ("trial_timeout", "time_budget") if c in data)], keep="last")
    return data.reset_index(drop=True)


# -- writing -----------------------------------------------------------------------------------


def _parquet_bytes(frame) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if isinstance(frame, pd.DataFrame):
        frame = frame.copy(deep=False)
        frame.attrs = {}  # pandas would store them (a local folder: shipped_from) in the file
        # once through Arrow first: a column of texts gathered from job files is object, read back from a
        # shipped file it is str; the written types are those read back, so re-shipping changes no byte
        frame = pa.Table.from_pandas(frame, preserve_index=False).to_pandas()
    table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)
    buf = io.BytesIO()
    # zstd + dictionary pages: the config, status and provenance columns repeat across 47,520 rows
    pq.write_table(table, buf, compression="zstd", compression_level=9, use_dictionary=True,
                   write_page_checksum=True)
    return buf.getvalue()


def job_path(source) -> str:
    """Where a row's job ran: its job directory, or, for a row read from a shipped folder, the job's
    path relative to the sweep directory it was shipped from."""
    text = str(source)
    return text.split(_JOB_SEPARATOR, 1)[1] if _JOB_SEPARATOR in text else text


def _relative_source(source: pd.Series, dirs) -> pd.Series:
    """Job directories relative to the sweep directory they were found under (no local absolute path
    shipped); a re-shipped row keeps the job its first shipping named."""
    roots = [str(Path(d).resolve()) for d in dirs]

    def rel(s):
        s = str(s)
        if _JOB_SEPARATOR in s:
            return job_path(s)
        for root in roots:
            if s.startswith(root):
                return os.path.relpath(s, root)
        return Path(s).name
    return source.map(rel)


def _labels_frame(data: pd.DataFrame):
    """The stored labels of the rows' trials, from their job directories' ``labels.npz`` and from shipped
    folders' ``labels.parquet`` (a re-shipped merge keeps them); None when there are none."""
    from ..running.labels_store import LABELS_FILE as JOB_LABELS, read_labels

    ok = data[data["status"] == "ok"] if "status" in data else data.iloc[:0]  # a trial that is not ok has no partition
    wanted = set(zip(ok["config_hash"].astype(str), ok["trial"].astype(int))) if set(KEY) <= set(data) else set()
    from .leaderboard._rerun_rows import rerun_mask, shadowed_reruns

    # a larger-budget re-run shares its board twin's (config_hash, trial): the board's partition is the one
    # shipped, the re-run's only where the board has none (its twin refused or killed)
    rerun = rerun_mask(data)
    shadowed = data[shadowed_reruns(data)]
    shadowed_keys = set(zip(shadowed["config_hash"].astype(str), shadowed["trial"].astype(int)))
    found: dict = {}
    for source in (data["source"].dropna().unique() if "source" in data else []):
        folder = Path(str(source))
        if folder.is_dir() and not folder.is_symlink():
            if os.path.lexists(folder / JOB_LABELS):
                check_regular(folder / JOB_LABELS)  # a FIFO of that name would block the shipping for ever
            of_rerun = bool(rerun[data["source"] == source].any())
            for name, labels in read_labels(folder).items():
                chash, _, trial = name.rpartition("_")
                if of_rerun and (chash, int(trial)) in shadowed_keys:
                    continue
                found[(chash, int(trial))] = labels
    for folder in (data.attrs.get("shipped_from") or []):
        old = read_shipped_labels(folder)
        if old is not None:
            for chash, trial, labels in zip(old["config_hash"], old["trial"], old["labels"]):
                found.setdefault((str(chash), int(trial)), np.asarray(labels))
    keys = sorted(k for k in found if k in wanted)
    if not keys:
        return None
    widest = max(int(np.abs(found[k]).max(initial=0)) for k in keys)
    dtype = "int16" if widest < 2 ** 15 else "int32"
    import pyarrow as pa

    return pa.table({"config_hash": pa.array([k[0] for k in keys], pa.string()).dictionary_encode(),
                     "trial": pa.array([k[1] for k in keys], pa.int32()),
                     "labels": pa.array([np.asarray(found[k]).astype(dtype) for k in keys],
                                        pa.list_(getattr(pa, dtype)()))})


def _line(name: str, payload: bytes, rows: int, kind: str, extra: dict) -> dict:
    return {"file": name, "kind": kind, "sha256": hashlib.sha256(payload).hexdigest(), "bytes": len(payload),
            "rows": rows, **extra}


def write_shipped(data: pd.DataFrame, out, dirs=(), grids=None) -> dict:
    """Write ``rows.parquet`` (and ``labels.parquet`` when the trials' labels were stored, ``grid.json``
    when ``grids`` are given) and ``manifest.jsonl`` into ``out``; return {name: path}. ``dirs``: the sweep
    directories the rows came from (job directories are shipped relative to them); ``grids``: the
    experiment's grids ({key: [values]}, ``leaderboard.recorded_grids``), for the pages' coverage line.
    Written as a whole (:func:`._safe.staged_dir`): a writer killed midway leaves the folder as it was."""
    with staged_dir(out) as staging:  # a kill leaves the old folder or the new, never new rows beside an old manifest
        paths = _write_shipped(data, staging, dirs, grids)
    return {name: Path(out) / path.name for name, path in paths.items()}


def _write_shipped(data: pd.DataFrame, out: Path, dirs, grids) -> dict:
    from ..running import provenance

    rows = data.drop(columns=[c for c in _DERIVED if c in data]).copy()
    if "source" in rows:
        rows["source"] = _relative_source(rows["source"], dirs)
    rows["protocol_hash"] = protocol_hashes(rows)
    rows = _normalise(newest_rows(rows))
    payload = _parquet_bytes(rows)
    protocols = protocol_values(rows)
    commits = sorted(rows["code.git_commit"].dropna().astype(str).unique()) if "code.git_commit" in rows else []
    extra = {"protocol_hash": sorted(protocols)[0] if len(protocols) == 1 else sorted(protocols),
             "protocol": protocols, "code_commits": [c for c in commits if c],
             "ccbench_commit": provenance.ccbench_code().get("code.git_commit") or "",
             "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    paths = {"rows": write_bytes(out / ROWS_FILE, payload, out)}
    lines = [_line(ROWS_FILE, payload, len(rows), "rows", extra)]
    labels = _labels_frame(data)
    if labels is not None:
        blob = _parquet_bytes(labels)
        paths["labels"] = write_bytes(out / LABELS_FILE, blob, out)
        lines.append(_line(LABELS_FILE, blob, labels.num_rows, "labels", {"protocol_hash": extra["protocol_hash"]}))
    elif (out / LABELS_FILE).is_file() and not (out / LABELS_FILE).is_symlink():
        (out / LABELS_FILE).unlink()  # an older folder's labels would not match these rows
    if grids:
        blob = (canonical_json(grids) + "\n").encode()
        paths["grid"] = write_bytes(out / GRID_FILE, blob, out)
        lines.append(_line(GRID_FILE, blob, len(grids), "grid", {}))
    elif (out / GRID_FILE).is_file() and not (out / GRID_FILE).is_symlink():
        (out / GRID_FILE).unlink()
    paths["manifest"] = write_text(out / MANIFEST_FILE, "".join(canonical_json(x) + "\n" for x in lines), out)
    return paths


# -- reading -----------------------------------------------------------------------------------


def is_shipped(path) -> bool:
    """True for a folder holding a :data:`MANIFEST_FILE` (a shipped leaderboard, not a sweep)."""
    path = Path(path)
    return path.is_dir() and (path / MANIFEST_FILE).is_file()


def _limit(name: str) -> int:
    """The cap ``name`` (a module constant), or the ``CCBENCH_<name>`` environment variable when set."""
    text = os.environ.get(f"CCBENCH_{name}")
    if text is None:
        return globals()[name]
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"CCBENCH_{name}={text!r} is not a whole number") from None


def _manifest(folder: Path) -> list[dict]:
    """The manifest's lines, each naming a different file: a manifest naming one rows file 300 times made
    a report load it 300 times (4.9 GB); the file is refused unless it is a regular file of at most
    :data:`MAX_MANIFEST_BYTES`."""
    path = folder / MANIFEST_FILE
    if path.is_symlink():
        raise ValueError(f"{path} is a symbolic link; a shipped folder's manifest must be a plain file")
    payload = read_regular(path, MAX_MANIFEST_BYTES)
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text; each line describes one shipped file in JSON") from None
    lines, seen = [], {}
    for i, text in enumerate(text.splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except ValueError:
            raise ValueError(f"{path}, line {i}: not JSON; each line describes one shipped file") from None
        if not isinstance(line, dict) or not {"file", "sha256", "rows"} <= set(line):
            raise ValueError(f"{path}, line {i}: a manifest line needs file, sha256 and rows")
        name = str(line["file"])
        if name in seen:
            raise ValueError(f"{path}, line {i}: names {name!r} again (line {seen[name]}); a manifest lists each "
                             f"file once (a contributed file gets its own name and line)")
        seen[name] = i
        lines.append(line)
    return lines


def _check_volume(folder: Path, lines: list[dict]) -> None:
    """Refuse, before loading any row, a folder whose rows and labels files hold more than
    :data:`MAX_SHIPPED_ROWS` rows or :data:`MAX_SHIPPED_BYTES` bytes (on disk, or unpacked as their
    Parquet metadata say): a ValueError naming the folder, the cap and how to raise it."""
    import pyarrow.parquet as pq

    rows = packed = unpacked = 0
    for line in lines:
        kind = line.get("kind", "rows")
        if kind not in ("rows", "labels"):
            continue
        path = _plain_file(folder, line)
        packed += check_regular(path)
        try:
            meta = pq.read_metadata(path)
        except Exception as exc:  # noqa: BLE001 - whatever pyarrow says of a file that is not Parquet
            raise ValueError(f"{path}: not a Parquet file ({type(exc).__name__}: {str(exc)[:200]})") from None
        rows += meta.num_rows if kind == "rows" else 0
        unpacked += sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups))
    limit_rows, limit_bytes = _limit("MAX_SHIPPED_ROWS"), _limit("MAX_SHIPPED_BYTES")
    if rows > limit_rows:
        raise ValueError(f"refusing to load {folder}: its rows files hold {rows:,} rows, above the {limit_rows:,} "
                         f"ccbench loads from a shipped folder (MAX_SHIPPED_ROWS); if you trust it and have the "
                         f"memory, raise the cap: CCBENCH_MAX_SHIPPED_ROWS={rows}")
    if max(packed, unpacked) > limit_bytes:
        raise ValueError(f"refusing to load {folder}: its rows and labels files are {packed:,} bytes "
                         f"({unpacked:,} unpacked), above the {limit_bytes:,} ccbench reads from a shipped folder "
                         f"(MAX_SHIPPED_BYTES); if you trust it and have the memory, raise the cap: "
                         f"CCBENCH_MAX_SHIPPED_BYTES={max(packed, unpacked)}")


def _plain_file(folder: Path, line: dict) -> Path:
    """The file ``line`` names, refused unless a plain file name beside the manifest (no path, no link)."""
    name = str(line["file"])
    path = folder / name
    if "/" in name or "\\" in name or name.startswith(".") or path.is_symlink() or not path.is_file():
        raise ValueError(f"{folder / MANIFEST_FILE}: {name!r} is not a plain file in {folder} "
                         f"(a manifest names files beside it; symbolic links are not followed)")
    return path


def _verified(folder: Path, line: dict) -> bytes:
    """The bytes of the file ``line`` describes, after checking its name, sha256 and row count."""
    path = _plain_file(folder, line)
    payload = read_regular(path, _limit("MAX_SHIPPED_BYTES"), "if you trust it, raise the cap: "
                                                           "CCBENCH_MAX_SHIPPED_BYTES")
    digest = hashlib.sha256(payload).hexdigest()
    if digest != line["sha256"]:
        raise ValueError(f"{path} does not match its manifest line (sha256 {digest[:12]}... on disk, "
                         f"{str(line['sha256'])[:12]}... in {MANIFEST_FILE}): the file was changed or damaged "
                         f"after shipping; restore it (git checkout {path}) or ship it again with "
                         f"ccbench report <sweep dir> --leaderboard --out {folder}")
    return payload


def _read_verified(folder: Path, line: dict) -> pd.DataFrame:
    import pyarrow.parquet as pq

    payload = _verified(folder, line)
    parquet = pq.ParquetFile(io.BytesIO(payload), page_checksum_verification=True)
    if parquet.metadata.num_rows != int(line["rows"]):  # before loading: its rows were counted in the metadata
        raise ValueError(f"{folder / line['file']}: {parquet.metadata.num_rows} rows, its manifest line says "
                         f"{line['rows']}")
    frame = parquet.read().to_pandas()
    if len(frame) != int(line["rows"]):
        raise ValueError(f"{folder / line['file']}: {len(frame)} rows, its manifest line says {line['rows']}")
    return frame


def read_shipped(folder) -> pd.DataFrame:
    """Every rows file a shipped folder's manifest lists, checked (sha256, row count), newest row per
    ``(config_hash, trial)``; ``source`` points inside the folder (never outside it)."""
    folder = Path(folder)
    frames = []
    lines = _manifest(folder)
    _check_volume(folder, lines)
    for line in lines:
        if line.get("kind", "rows") != "rows":
            continue
        frame = _read_verified(folder, line)
        if "source" in frame:  # relative job names only: a stranger's row cannot point a report elsewhere
            rel = frame["source"].astype(str).str.replace("..", "_", regex=False).str.lstrip("/\\")
            frame["source"] = str(folder / line["file"]) + _JOB_SEPARATOR + rel
        frames.append(frame)
    if not frames:
        raise FileNotFoundError(f"{folder / MANIFEST_FILE} lists no rows file")
    data = newest_rows(pd.concat(frames, ignore_index=True))
    data.attrs["shipped_from"] = [str(folder)]
    return data


def check_grid_size(axes: dict, where) -> None:
    """A ValueError naming ``where`` when the grid ``axes`` ({key: [values]}) holds more than
    :data:`MAX_GRID_JOBS` jobs (counted without listing them)."""
    if axes and np.prod([len(v) for v in axes.values()], dtype=float) > MAX_GRID_JOBS:
        raise ValueError(f"{where}: a grid of more than {MAX_GRID_JOBS:,} jobs")


def read_shipped_grids(folder) -> list[dict]:
    """The grids a shipped folder's ``grid.json`` lists ({key: [values]}, checked like the rows), or [].
    A ValueError naming the file when its shape is not that."""
    folder = Path(folder)
    grids = []
    for line in _manifest(folder):
        if line.get("kind") != "grid":
            continue
        path = _plain_file(folder, line)
        if check_regular(path) > MAX_YAML_BYTES:  # bounded like a grid file of a sweep directory, before reading
            raise ValueError(f"{path}: {path.stat().st_size:,} bytes, above the {MAX_YAML_BYTES:,} "
                             f"ccbench reads as a grid")
        payload = _verified(folder, line)
        if len(payload) > MAX_YAML_BYTES:
            raise ValueError(f"{folder / line['file']}: {len(payload):,} bytes, above the {MAX_YAML_BYTES:,} "
                             f"ccbench reads as a grid")
        try:
            found = json.loads(payload)
        except ValueError:
            raise ValueError(f"{folder / line['file']}: not JSON") from None
        if not (isinstance(found, list) and all(
                isinstance(g, dict) and all(isinstance(k, str) and isinstance(v, list)
                                            and all(x is None or isinstance(x, str) for x in v) for k, v in g.items())
                for g in found)):
            raise ValueError(f"{folder / line['file']}: a grid file is a list of {{key: [values]}} with text values")
        for grid in found:
            check_grid_size(grid, folder / line["file"])
        grids += found
    return grids


def read_shipped_labels(folder) -> pd.DataFrame | None:
    """The labels files a shipped folder's manifest lists, checked like the rows; None when it has none."""
    folder = Path(folder)
    lines = _manifest(folder)
    _check_volume(folder, lines)
    frames = [_read_verified(folder, line) for line in lines if line.get("kind") == "labels"]
    return pd.concat(frames, ignore_index=True) if frames else None


# -- ranking a new sweep against shipped rows ------------------------------------------------------


def _describe(protocol: dict) -> str:
    return ", ".join(f"{k}={canonical_json(v)}" for k, v in protocol.items())


def _partial_note(new: pd.DataFrame, shipped: pd.DataFrame, new_name: str, shipped_name: str) -> list[str]:
    """A note when the new rows cover fewer data sets than the shipped ones (a sweep stopped early, or run
    on a subset): a method that ran only those is compared with the board over them, not ranked on it."""
    if "dataset.name" not in new or "dataset.name" not in shipped:
        return []
    mine, theirs = set(new["dataset.name"].astype(str)), set(shipped["dataset.name"].astype(str))
    left = sorted(theirs - mine)
    if not left:
        return []
    return [f"{new_name} cover {len(mine & theirs)} of the {len(theirs)} data sets of {shipped_name} (not run: "
            f"{', '.join(left[:8])}{', ...' if len(left) > 8 else ''}): a method run on these only is compared with "
            f"k-means and the best over them and not ranked on the board, and the pages and site say the run is "
            f"partial; resume the sweep with the same command to rank it on the board"]


def merge_with(new: pd.DataFrame, shipped: pd.DataFrame, *, new_name: str = "the new rows",
               shipped_name: str = "the shipped rows") -> tuple[pd.DataFrame, list[str]]:
    """``new`` ranked against ``shipped``: their rows together, one per ``(config_hash, trial)``, and
    the warnings to print.

    A shipped row never replaces a row of ``new`` (the reader's own): where both sides have a row of
    the same identity, ``new``'s is kept whatever the timestamps, and the clash is a warning naming how
    many and which methods (:func:`_clashing`). ``merged.attrs``: ``shipped_rows``, the shipped rows
    kept; ``shipped_clashes``, those left out.

    Refused (ValueError, with the reason and the fix) when a new row was made under a protocol the
    shipped rows do not have (:data:`PROTOCOL_KEYS`), or in a cell they do not have (a data set
    option, supervision or noise the leaderboard's grid lacks): ranks over different protocols or cells
    compare different questions. Warned when the time-budget verdicts (``timeout``, ``refused``) of
    either side come from a machine the other side did not use: a slower machine times out more; and
    when the new rows cover fewer data sets than the shipped ones (a partial run: :func:`_partial_note`).
    """
    mine, theirs = protocol_values(new), protocol_values(shipped)
    foreign = sorted(set(mine) - set(theirs))
    if foreign:
        ref = theirs[sorted(theirs)[0]] if theirs else {}
        diff = [f"{k}: {canonical_json(v)} in {new_name}, {canonical_json(ref.get(k))} in {shipped_name}"
                for k, v in mine[foreign[0]].items() if canonical_json(v) != canonical_json(ref.get(k))]
        raise ValueError(
            f"refusing to rank {new_name} against {shipped_name}: they were made under different protocols "
            f"(protocol hash {foreign[0]} vs {', '.join(sorted(theirs)) or 'none'}; differing keys: "
            f"{'; '.join(diff) or _describe(mine[foreign[0]])}). Run your method with the leaderboard's "
            f"experiment and no override of these keys (docs/leaderboard.md, 'Adding your method')")
    cells_new, cells_old = _cell_ids(new), set(_cell_ids(shipped))
    missing = sorted(set(cells_new) - cells_old)
    if missing:
        raise ValueError(
            f"refusing to rank {new_name} against {shipped_name}: {len(missing)} of its cell(s) are not in the "
            f"shipped grid, e.g. {missing[0]}; run the leaderboard's data sets and supervision cells "
            f"(experiment=leaderboard; dataset= and supervision= may pick a subset of them)")
    warnings = []
    verdicts = ("timeout", "refused")
    for side, other, name, other_name in ((new, shipped, new_name, shipped_name), (shipped, new, shipped_name, new_name)):
        timed = side["status"].isin(verdicts) if "status" in side else pd.Series(False, index=side.index)
        here, there = set(machine_text(side[timed])), set(machine_text(other))
        elsewhere = sorted(here - there)
        if timed.any() and elsewhere:
            warnings.append(f"{int(timed.sum())} timeout/refused verdict(s) of {name} come from "
                            f"{'; '.join(elsewhere)}, a machine {other_name} were not made on ({'; '.join(sorted(there))}): "
                            f"a time limit's verdict depends on the machine's speed; compare such cells with care")
    warnings += _partial_note(new, shipped, new_name, shipped_name)
    clash = _clashing(new, shipped)
    if clash.any():
        warnings.append(_clash_note(shipped[clash], new_name, shipped_name))
    kept = shipped[~clash.to_numpy()]
    merged = newest_rows(pd.concat([kept, new], ignore_index=True))
    merged.attrs["shipped_from"] = list(shipped.attrs.get("shipped_from") or [])
    # what the pages say the shipped side contributed, counted here where it is known (not len(merged) - len(new))
    merged.attrs["shipped_rows"] = len(kept)
    merged.attrs["shipped_clashes"] = int(clash.sum())
    return merged, warnings


def _row_keys(data: pd.DataFrame, columns: list) -> pd.Series:
    """Each row's identity (``columns`` of :func:`newest_rows`) as one text: the config hash as text, the
    trial and budgets as floats (``1`` from one file and ``1.0`` from another are one trial), a missing
    column as NaN (as :func:`pandas.concat` fills it)."""
    key = np.full(len(data), "", dtype=object)
    for column in columns:  # as plain Python texts: pandas' own string dtype would turn the sum into NaN
        if column == "config_hash":
            part = data[column].to_numpy(dtype=object).astype(str).astype(object)
        elif column in data:
            part = pd.to_numeric(data[column], errors="coerce").to_numpy(dtype=float).astype(str).astype(object)
        else:
            part = np.full(len(data), "nan", dtype=object)
        key = key + "\x1f" + part
    return pd.Series(key, index=data.index, dtype=object)


def _clashing(new: pd.DataFrame, shipped: pd.DataFrame) -> pd.Series:
    """For each shipped row, whether ``new`` has a row of the same identity (``(config_hash, trial)`` and
    budget, as :func:`newest_rows` keys them). Such a row is the reader's to keep: the newest-row rule of
    one sweep directory would let a shipped row with a later timestamp replace it, and a shipped folder's
    timestamps are whatever its author wrote."""
    columns = [*KEY, *(c for c in ("trial_timeout", "time_budget") if c in new or c in shipped)]
    if not set(KEY) <= set(shipped.columns) or not set(KEY) <= set(new.columns):
        return pd.Series(False, index=shipped.index)
    return _row_keys(shipped, columns).isin(set(_row_keys(new, columns)))


def _clash_note(dropped: pd.DataFrame, new_name: str, shipped_name: str) -> str:
    """The warning naming the shipped rows left out because the reader's rows have their identity."""
    methods = sorted(dropped["method.name"].dropna().astype(str).unique()) if "method.name" in dropped else []
    return (f"{len(dropped):,} row(s) of {shipped_name} have the (config_hash, trial) of rows of {new_name} "
            f"(method(s): {', '.join(methods[:8]) or 'unnamed'}{', ...' if len(methods) > 8 else ''}): yours are "
            f"kept and theirs left out, whatever their timestamps; to rank their rows instead, leave yours out "
            f"of the command")
