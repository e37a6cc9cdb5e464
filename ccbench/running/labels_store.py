"""Predicted labels per trial, kept beside a job's rows when the cell asks (``store_labels: true``).

Why: a results row keeps the scores of a fit, not the partition it found, so a new metric or a new
reference partition means refitting every trial (the leaderboard's 47,520 of them: hours). With
``store_labels`` each job writes ``labels.npz`` beside ``results.parquet``: one integer array per
``(config_hash, trial)`` (entry ``<config_hash>_<trial>``), in the smallest integer type that holds
the labels, compressed (``numpy.savez_compressed``). A trial that produced no labels (refused,
timeout, error) has no entry. The file is rewritten whole through a temporary file under the job's
lock, merged with what is on disk, like the results file: a resume adds its trials' labels and a
retried trial replaces its old ones, or removes them when it produced none. The harness writes a
trial's labels before its row, so a killed job leaves no ok row without its labels.

``ccbench report DIR --leaderboard --out FOLDER`` ships them as ``labels.parquet`` beside the rows
(:mod:`ccbench.reporting.leaderboard.shipped`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._locks import locked
from .results import atomically

__all__ = ["LABELS_FILE", "compact", "entry", "read_labels", "write_labels"]

LABELS_FILE = "labels.npz"


def entry(config_hash: str, trial: int) -> str:
    """The name of one trial's array in ``labels.npz``."""
    return f"{config_hash}_{int(trial)}"


def compact(labels) -> np.ndarray:
    """``labels`` as the smallest signed integer type that holds them (noise labels are -1)."""
    labels = np.asarray(labels).astype(np.int64, copy=False).ravel()
    if labels.size == 0:
        return labels.astype(np.int8)
    lo, hi = int(labels.min()), int(labels.max())
    for dtype in (np.int8, np.int16, np.int32):
        info = np.iinfo(dtype)
        if info.min <= lo and hi <= info.max:
            return labels.astype(dtype)
    return labels


def read_labels(path) -> dict[str, np.ndarray]:
    """Every entry of a ``labels.npz`` (a file or a job directory); empty when absent."""
    path = Path(path)
    if path.is_dir():
        path = path / LABELS_FILE
    if not path.is_file():
        return {}
    with np.load(path, allow_pickle=False) as npz:
        return {name: npz[name] for name in npz.files}


def write_labels(job_dir, labels: dict[str, np.ndarray], drop=()) -> Path | None:
    """Merge ``labels`` ({entry: array}) into ``job_dir/labels.npz`` (new entries win) and remove the
    entries named in ``drop`` that ``labels`` does not replace (a trial re-run without labels: its old
    array is another run's partition); None when nothing changes."""
    path = Path(job_dir) / LABELS_FILE
    drop = set(drop) - set(labels)
    if not labels and not (drop and path.is_file()):
        return None
    with locked(path):
        old = read_labels(path)
        if not labels and not drop & set(old):
            return None
        merged = {**{k: v for k, v in old.items() if k not in drop}, **{k: compact(v) for k, v in labels.items()}}
        with atomically(path) as tmp:
            with open(tmp, "wb") as handle:
                np.savez_compressed(handle, **merged)
    return path
