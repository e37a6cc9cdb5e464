"""The cache of shared unsupervised fits (``share_unsupervised_fits``): one fit per key for a sweep.

A method that uses no supervision gives the same labels in every cell of a (data set, trial): the
harness (:mod:`ccbench.running.harness`) fits it once, keyed by :func:`fit_key`, writes the labels and the
fit's fields to ``<sweep dir>/.fits/<key>.npz`` and re-scores them with each cell's own constraints.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .. import registry
from . import provenance
from .config import canonical_json, stable_hash
from ._locks import locked
from .results import atomically

__all__ = ["FITS_DIR", "array_hash", "fit_key", "shared_fit"]

FITS_DIR = ".fits"  # beside the job directories of a sweep

log = logging.getLogger("ccbench")


def array_hash(X) -> str:
    """A fingerprint of the data matrix itself (dtype, shape and bytes)."""
    X = np.ascontiguousarray(X)
    digest = hashlib.sha256(f"{X.dtype.str}{X.shape}".encode())
    digest.update(X.tobytes())
    return digest.hexdigest()[:16]


def fit_key(cell: dict, data_hash: str, method_code: dict | None, t: int, method_seed: int, k,
            cons_hash: str | None) -> str:
    """What makes a shared fit: the data (dataset as in the seed plus ``data_hash``), the method
    config and code, the base seed, the trial, the seed and ``n_clusters`` given, and for a method
    that declares supervision the (empty) constraint set's fingerprint."""
    excluded = registry.get_dataset_spec(cell["dataset"]["name"]).not_in_seed
    key = {
        "dataset": {k_: v for k_, v in cell["dataset"].items() if k_ not in excluded},
        "data": data_hash,
        "method": cell["method"],
        "plugins": cell.get("plugins") or [],
        "method_hash": (method_code or {}).get(provenance.METHOD_HASH),
        "seed": cell.get("seed", 0),
        "trial": int(t),
        "method_seed": int(method_seed),
        "n_clusters": k,
        "constraints": cons_hash,
    }
    core = _shared_numerical_inputs(method_code)
    if core:  # the AP family's search for k lives in ccbench.similarity: a fit of the old search is no fit of this
        key["core"] = core
    return stable_hash(key, length=24)


def _shared_numerical_inputs(method_code: dict | None) -> dict:
    """The ``core:<module>`` entries of the method's ``code.inputs`` (:data:`provenance.SHARED_NUMERICAL`)."""
    try:
        inputs = json.loads((method_code or {}).get(provenance.INPUTS) or "{}")
    except ValueError:
        return {}
    return {k: v for k, v in sorted(inputs.items()) if k.startswith("core:")}


def shared_fit(fits_dir, key: str, n_samples: int, fit: Callable[[], dict]) -> tuple[dict, bool]:
    """``(fit, reused)``: the cached fit of ``key``, else ``fit()`` written to the cache.

    The fit runs outside any lock, so a process suspended mid-fit (Ctrl-Z, SLURM suspend) blocks
    no other sweep; the lock is held only to write. Two processes racing on one key may both fit:
    the first writer wins and the second returns the cached fit (the same labels, made from the
    same seed). A cache that cannot be written (a full disk) is skipped with a warning: the fit
    is still returned, to be scored and recorded.
    """
    path = Path(fits_dir) / f"{key}.npz"
    cached = _read(path, key, n_samples)  # written by atomic rename: a reader sees a whole file or none
    if cached is not None:
        return cached, True
    made = fit()
    try:
        with locked(path):
            cached = _read(path, key, n_samples)
            if cached is not None:  # another process wrote it meanwhile: the first writer wins
                return cached, False
            _write(path, key, made)
    except OSError as exc:
        log.warning("shared fit %s not cached (%s: %s); the fit is scored and recorded anyway, and "
                    "later cells fit again (free disk space under %s to share fits)",
                    path, type(exc).__name__, exc, path.parent)
    return made, False


def _write(path: Path, key: str, fit: dict) -> None:
    meta = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in fit.items() if k != "labels"}
    with atomically(path) as tmp, open(tmp, "wb") as handle:  # a file object: np.savez adds no suffix
        np.savez(handle, labels=np.asarray(fit["labels"]), meta=np.array(canonical_json({"key": key, **meta})))


def _read(path: Path, key: str, n_samples: int) -> dict | None:
    """The cached fit, or None when absent or unusable (damaged, another key, wrong length: refit)."""
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            labels, meta = data["labels"], json.loads(str(data["meta"]))
        if meta.pop("key") != key or labels.shape != (n_samples,):
            raise ValueError("it holds another fit")
    except Exception as exc:  # noqa: BLE001 - a damaged cache entry is refitted, never trusted
        log.warning("shared fit %s is unusable (%s: %s); fitting again", path, type(exc).__name__, exc)
        return None
    return {**meta, "labels": labels}
