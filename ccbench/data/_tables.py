"""Data beyond the manifest: a CSV file (``dataset=csv``) and OpenML by id (``dataset=openml``).

Both end in :func:`table_to_arrays`, one set of choices for a table of features and a
label column:

- **label**: any column, by name or by position (negative counts from the end);
  classes are coded ``0..k-1`` in sorted order of their values; a row without a
  label is always dropped (it cannot be scored).
- **missing values** (empty cells, ``NA``, ``?``): ``missing="drop"`` removes the
  rows that have one, ``missing="impute"`` fills a numeric column with its mean and
  a non-numeric one with its most frequent value (ties: the smallest).
- **non-numeric features**: ``categorical="error"`` (default) refuses them, naming
  the columns and the fix; ``"onehot"`` replaces each by one 0/1 column per value
  (sorted; the column names are in ``meta["features"]``); ``"codes"`` codes each
  as ``0..I-1`` in sorted order, as the UCI parsers do (:mod:`ccbench.data._uci`).
  Boolean columns are numbers (0/1).

OpenML goes through :func:`sklearn.datasets.fetch_openml` with ``data_home`` set to
the ccbench data directory (``CCBENCH_DATA_DIR``, else the user cache), so no
extra package is needed: scikit-learn keeps the API answers and the ARFF file,
gzipped, under ``<data dir>/openml/openml.org/`` and reads them from there
without any network access on later calls (an offline cluster node needs only a
copy of that folder: ``ccbench fetch dataset=openml dataset.data_id=61``). The
ARFF file is checked against the md5 that OpenML publishes for it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ._files import (
    DATA_DIR_ENV, DataDownloadError, DataIntegrityError, DataParseError, _sha256, resolve_data_dir,
)

__all__ = ["CATEGORICAL_OPTIONS", "table_to_arrays", "load_csv", "load_openml", "openml_home", "csv_path"]

CATEGORICAL_OPTIONS = ("error", "onehot", "codes")
_NA = ["?", "", "NA", "N/A", "NaN", "nan", "null"]


def _label_column(columns, target) -> str:
    """The column ``target`` names: a column name, or a position (an int, negative from the end)."""
    columns = list(columns)
    if isinstance(target, str) and target in columns:
        return target
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        if -len(columns) <= target < len(columns):
            return columns[int(target)]
        raise DataParseError(f"target={target} is out of range: the table has {len(columns)} columns "
                             f"(positions 0..{len(columns) - 1}, or -1 for the last)")
    raise DataParseError(f"target={target!r} is not a column; the columns are {columns[:20]}"
                         f"{' ...' if len(columns) > 20 else ''} (or give a position: 0, -1, ...)")


def table_to_arrays(frame, target, *, categorical: str = "error", missing: str = "drop", source: str = ""):
    """``(X float64, y int 0..k-1, classes, meta)`` from a DataFrame and its label column.

    Parameters
    ----------
    frame : pandas.DataFrame
        Features and the label column.
    target : str or int
        The label column: its name, or its position (negative from the end).
    categorical : {"error", "onehot", "codes"}, default="error"
        What to do with non-numeric feature columns (see the module docstring).
    missing : {"drop", "impute"}, default="drop"
    source : str
        What the table was read from, for messages and ``meta["source"]``.
    """
    import pandas as pd

    if categorical not in CATEGORICAL_OPTIONS:
        raise ValueError(f"categorical={categorical!r} is not an option; use one of {', '.join(CATEGORICAL_OPTIONS)}")
    label = _label_column(frame.columns, target)
    if len(frame) == 0:
        raise DataParseError(f"{source}: the table has a header but no data rows; check the file "
                             f"(a truncated download or export?) or dataset.path")
    n_unlabelled = int(frame[label].isna().sum())
    if n_unlabelled == len(frame):
        raise DataParseError(f"{source}: the label column {label!r} holds no value in any of its {len(frame)} rows; "
                             f"name the label column with dataset.target=<column>")
    frame = frame[frame[label].notna()]
    y_raw = frame[label]
    features = frame.drop(columns=[label])
    if features.shape[1] == 0:
        raise DataParseError(f"{source}: no feature column besides the label {label!r}")
    hollow = [str(c) for c in features.columns if features[c].isna().all()]
    if hollow:
        raise DataParseError(f"{source}: feature column(s) {hollow[:10]} hold no value at all (every cell empty "
                             f"or NA), so every row would be dropped or imputed from nothing; remove them from "
                             f"the file")
    for col in features.columns:  # "1.5" read as text because of one odd cell: a clear error below
        if features[col].dtype == bool:
            features[col] = features[col].astype(np.float64)
    text = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])]
    if text and categorical == "error":
        raise DataParseError(
            f"{source}: non-numeric feature column(s) {[str(c) for c in text][:10]}; "
            f"set dataset.categorical=onehot (one 0/1 column per value) or =codes (values coded 0..I-1), "
            f"or remove them"
        )
    incomplete = features.isna().any(axis=1)
    n_dropped = 0
    if missing == "drop":
        features, y_raw = features[~incomplete], y_raw[~incomplete]
        n_dropped = int(incomplete.sum())
    else:
        for col in features.columns:
            if features[col].isna().any():
                if col in text:
                    counts = features[col].value_counts()
                    fill = sorted(counts.index[counts == counts.max()], key=str)[0]
                else:
                    fill = features[col].mean()
                features[col] = features[col].fillna(fill)
    if len(features) == 0:
        raise DataParseError(f"{source}: no row is left after dropping rows with missing values; "
                             f"use dataset.missing=impute")
    names = [str(c) for c in features.columns if c not in text]
    blocks = [features[[c for c in features.columns if c not in text]].to_numpy(dtype=np.float64)]
    for col in text:
        values = features[col].astype(str)
        levels = sorted(values.unique())
        codes = np.searchsorted(np.asarray(levels), values.to_numpy())
        if categorical == "codes":
            blocks.append(codes[:, None].astype(np.float64))
            names.append(str(col))
        else:
            blocks.append((codes[:, None] == np.arange(len(levels))[None, :]).astype(np.float64))
            names += [f"{col}={v}" for v in levels]
    X = np.hstack(blocks)
    classes, y = np.unique(y_raw.to_numpy(), return_inverse=True)
    dropped = []
    if n_unlabelled:
        dropped.append(f"{n_unlabelled} row(s) without a label")
    if n_dropped:
        dropped.append(f"{n_dropped} row(s) with missing values (dataset.missing=impute keeps them)")
    after = f" after dropping {' and '.join(dropped)}" if dropped else ""
    if len(classes) < 2:
        raise DataParseError(
            f"{source}: the label column {label!r} holds one class ({classes[0]!r}) in its {len(y)} rows{after}: "
            f"every clustering scores as perfect or as nothing against one class; name the label column with "
            f"dataset.target=<column>")
    if len(classes) == len(y):
        raise DataParseError(
            f"{source}: the label column {label!r} gives every one of its {len(y)} rows its own class{after} "
            f"(k = n: an id column?), so k-means with k = n scores ARI 1.0 for nothing; name the label column "
            f"with dataset.target=<column>")
    meta = {"source": source, "target": str(label), "classes": classes.tolist(), "features": names,
            "missing": missing, "categorical": categorical, "n_dropped": n_dropped}
    return X, y.astype(np.intp), classes, meta


# -- CSV --------------------------------------------------------------------------------


def csv_path(path, data_dir=None) -> Path:
    """``path`` as given (absolute, or relative to the current directory), else under the data directory."""
    if path is None or str(path) in ("", "???"):
        raise ValueError("dataset=csv needs dataset.path=<file.csv> (and dataset.target=<label column>)")
    given = Path(os.path.expanduser(str(path)))
    if given.is_absolute() or given.exists():
        return given
    under = resolve_data_dir(data_dir) / given
    return under if under.exists() else given


def check_csv(path, sha256=None, data_dir=None) -> Path:
    """The CSV's path, after checking it exists and (when given) its sha256."""
    file = csv_path(path, data_dir)
    if file.is_dir():
        raise IsADirectoryError(f"dataset.path={path} is a directory ({file.resolve()}), not a CSV file; "
                                f"give the file inside it, e.g. dataset.path={Path(str(path)) / 'data.csv'}")
    if not file.is_file():
        raise FileNotFoundError(f"dataset.path={path}: no such file (looked at {file.resolve()}"
                                f"{'' if Path(str(path)).is_absolute() else ' and under the data directory'})")
    if sha256:
        actual = _sha256(file)
        if actual != str(sha256).strip().lower():
            raise DataIntegrityError(f"data file {file} failed its checksum: expected sha256 {sha256}, "
                                     f"actual sha256 {actual}. Replace it with the file dataset.sha256 names.")
    return file


def load_csv(*, path=None, target=-1, sep: str = ",", header: bool = True, categorical: str = "error",
             sha256=None, missing: str = "drop", data_dir=None, manifest=None):
    """Read a CSV file: features and one label column (``dataset=csv``).

    Parameters
    ----------
    path : path-like
        The file: absolute, relative to the current directory, or relative to the
        data directory (``CCBENCH_DATA_DIR``; useful on cluster nodes).
    target : str or int, default=-1
        The label column, by name (with ``header``) or by position (-1: the last).
    sep : str, default=","
    header : bool, default=True
        Whether the first line names the columns (else they are 0, 1, ...).
    categorical : {"error", "onehot", "codes"}, default="error"
        Non-numeric feature columns: refuse, one-hot encode, or code as integers.
    sha256 : str, optional
        Refuse the file unless its sha256 is this (``ccbench fetch`` checks it too).
    missing : {"drop", "impute"}, default="drop"
        Empty cells, ``?`` and ``NA`` are missing.
    data_dir, manifest
        ``data_dir``: where relative paths are also looked for; ``manifest`` is not used.
    """
    import pandas as pd

    file = check_csv(path, sha256, data_dir)
    try:
        frame = pd.read_csv(file, sep=sep, header=0 if header else None, na_values=_NA, skipinitialspace=True)
    except pd.errors.EmptyDataError as exc:
        raise DataParseError(f"{file}: the file is empty ({file.stat().st_size} bytes, no header and no rows); "
                             f"download or export it again, or point dataset.path at the right file") from exc
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataParseError(f"{file}: not a readable CSV ({exc}); check dataset.sep") from exc
    if not header:
        frame.columns = range(frame.shape[1])
    if isinstance(target, str) and target.lstrip("-").isdigit() and target not in frame.columns:
        target = int(target)  # "3" from a command line without a header
    X, y, classes, meta = table_to_arrays(frame, target, categorical=categorical, missing=missing, source=str(file))
    meta["files"] = [str(file)]
    return X, y, classes, meta


# -- OpenML -----------------------------------------------------------------------------


def openml_home(data_dir=None) -> Path:
    """Where scikit-learn's OpenML cache lives: ``<data dir>/openml`` (it adds the ``openml`` level)."""
    return resolve_data_dir(data_dir) / "openml"


def load_openml(*, data_id=None, target=None, categorical: str = "error", missing: str = "drop",
                data_dir=None, manifest=None):
    """An OpenML data set by id (``dataset=openml dataset.data_id=61``), from the local cache when present.

    Parameters
    ----------
    data_id : int
        The OpenML id (https://www.openml.org/d/<id>).
    target : str, optional
        The label column; default: the data set's default target.
    categorical : {"error", "onehot", "codes"}, default="error"
        OpenML's nominal features are non-numeric: choose ``onehot`` or ``codes`` for them.
    missing : {"drop", "impute"}, default="drop"
    data_dir : path-like, optional
        The ccbench data directory; the cache is its ``openml/`` folder.
    manifest
        Not used.
    """
    from urllib.error import URLError

    from sklearn.datasets import fetch_openml

    if data_id is None or isinstance(data_id, bool) or not str(data_id).isdigit():
        raise ValueError(f"dataset=openml needs dataset.data_id=<positive int>, got {data_id!r}")
    home = resolve_data_dir(data_dir)
    try:
        bunch = fetch_openml(data_id=int(data_id), data_home=str(home), as_frame=True, parser="pandas",
                             target_column="default-target" if target is None else target,
                             n_retries=1, delay=0.1)
    except (URLError, OSError, TimeoutError) as exc:
        raise DataDownloadError(
            f"OpenML data set {data_id} is not (or not intact) in the local cache {openml_home(data_dir)} and "
            f"could not be downloaded ({exc}). On a machine with network run `ccbench fetch dataset=openml "
            f"dataset.data_id={data_id}`, then copy that folder, or point {DATA_DIR_ENV} at a directory holding it."
        ) from exc
    except ValueError as exc:  # md5 mismatch, unknown target column
        raise DataIntegrityError(f"OpenML data set {data_id}: {exc}") from exc
    if bunch.target is None or getattr(bunch.target, "ndim", 1) != 1:
        raise DataParseError(f"OpenML data set {data_id} has no single default target; set dataset.target=<column>")
    frame = bunch.data.copy()
    label = f"{bunch.target.name}" if bunch.target.name not in frame.columns else "__target__"
    frame[label] = bunch.target.to_numpy()
    X, y, classes, meta = table_to_arrays(frame, label, categorical=categorical, missing=missing,
                                          source=f"OpenML data set {data_id}")
    meta.update(target=str(bunch.target.name), openml=bunch.url, openml_name=bunch.details.get("name"),
                files=[str(openml_home(data_dir))])
    return X, y, classes, meta
