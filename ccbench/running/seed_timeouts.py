"""A measured timeout shared across base seeds (``timeout_stops_seeds``): one killed trial per cell, not per seed.

With ``timeout_stops_cell`` a cell's later trials are recorded as ``timeout`` without fitting once one
trial has been killed at ``trial_timeout``. The base seeds of a cell are separate jobs (``seed`` is an
identity key), so each of them used to pay its own killed trial: on the reference board's curves, three
times the budget for one fact. Under ``timeout_stops_seeds`` the first job of a *family* (the cell's
identity without its base seed, plus ``trial_timeout`` and the method's code hash) whose trial is killed
writes a marker ``<sweep dir>/.timeouts/<family>.json``; a job of the same family at another base seed
finds it and records its trials as ``timeout`` without fitting, naming the seed and trial that were
measured. Why this is the same rule, not a prediction: a base seed only draws other supervision of the
same size (the power analysis of docs/leaderboard.md measures ``sd_seed`` at 0-0.009 ARI, "a seed is just
more trials"), as a trial does within a cell.

The marker is written by atomic rename; a reader takes only a regular file (never a symlink) whose
content names its own family, and ignores anything else (a damaged or foreign marker: the job fits).
A marker is removed when its own seed's trial, run again (a resume with ``rerun_errors``), completes.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

from . import provenance
from .config import canonical_json, identity, stable_hash
from .results import NOT_FITTED, atomically

__all__ = ["TIMEOUTS_DIR", "family_key", "find", "record", "clear", "not_fitted_error", "stop_for", "after_trial"]

TIMEOUTS_DIR = ".timeouts"  # beside the job directories of a sweep, as the shared fits' .fits/

log = logging.getLogger("ccbench")


def family_key(cell: dict, method_code: dict | None) -> str:
    """The cell's identity without ``seed``, with its ``trial_timeout``, plugins and method code hash: the
    jobs one measured timeout speaks for (another budget or another version of the method is another family)."""
    return stable_hash({"identity": identity(cell, exclude=("seed",)), "trial_timeout": cell.get("trial_timeout"),
                        "plugins": cell.get("plugins") or [],
                        "method_hash": (method_code or {}).get(provenance.METHOD_HASH)}, length=24)


def _path(timeouts_dir, family: str) -> Path:
    return Path(timeouts_dir) / f"{family}.json"


def find(timeouts_dir, family: str) -> dict | None:
    """The family's marker (``seed``, ``trial``, ``trial_timeout``), or None when there is none usable."""
    path = _path(timeouts_dir, family)
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):  # a symlink or a directory is not ours to follow
            log.warning("%s is not a regular file; ignored (timeout_stops_seeds)", path)
            return None
        marker = json.loads(path.read_text())
        if marker.get("family") != family or not isinstance(marker.get("seed"), int) \
                or not isinstance(marker.get("trial"), int):
            raise ValueError("it names another family or lacks its seed and trial")
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("timeout marker %s is unusable (%s: %s); the job fits its trials", path, type(exc).__name__, exc)
        return None
    return marker


def record(timeouts_dir, family: str, seed: int, trial: int, trial_timeout: float) -> None:
    """Write the family's marker unless one exists (the first measured timeout speaks for the family)."""
    path = _path(timeouts_dir, family)
    if path.exists():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomically(path) as tmp:
            tmp.write_text(canonical_json({"family": family, "seed": int(seed), "trial": int(trial),
                                           "trial_timeout": float(trial_timeout)}))
    except OSError as exc:  # the other seeds then measure their own timeouts: slower, never wrong
        log.warning("timeout marker %s not written (%s: %s); the other base seeds fit their trials",
                    path, type(exc).__name__, exc)


def clear(timeouts_dir, family: str, seed: int, trial: int) -> None:
    """Remove the marker measured at (``seed``, ``trial``) once that trial, run again, is no longer a timeout."""
    marker = find(timeouts_dir, family)
    if marker is not None and (marker["seed"], marker["trial"]) == (int(seed), int(trial)):
        _path(timeouts_dir, family).unlink(missing_ok=True)


def not_fitted_error(marker: dict) -> str:
    """The ``error`` of a trial recorded without fitting because another base seed timed out."""
    return (f"{NOT_FITTED}: base seed {marker['seed']} of this cell timed out at trial {marker['trial']} "
            f"(trial_timeout={float(marker['trial_timeout']):g} s; timeout_stops_seeds=true)")


def stop_for(cell: dict, code: dict | None, out: Path, fits_dir) -> tuple | None:
    """What :func:`ccbench.running.harness.run_job` needs under ``timeout_stops_seeds`` (None without it):
    (the sweep's ``.timeouts`` dir, the cell's family, the marker another base seed left, or None). The sweep
    dir is the shared fits' parent, else the job directory's parent."""
    if not cell.get("timeout_stops_seeds") or cell.get("trial_timeout") is None:
        return None
    timeouts_dir = (Path(fits_dir).parent if fits_dir is not None else Path(out).parent) / TIMEOUTS_DIR
    family = family_key(cell, code)
    marker = find(timeouts_dir, family)
    return timeouts_dir, family, marker if marker is not None and marker["seed"] != int(cell["seed"]) else None


def after_trial(stop: tuple, cell: dict, trial: int, status: str) -> None:
    """After a fitted trial: a kill at trial_timeout is written for the other seeds; a trial that ran again and
    finished takes back the marker it had written."""
    timeouts_dir, family, _ = stop
    if status == "timeout":
        record(timeouts_dir, family, cell["seed"], trial, cell["trial_timeout"])
    elif status in ("ok", "infeasible", "not_found"):  # a fit that ended: what the marker claimed is not so
        clear(timeouts_dir, family, cell["seed"], trial)
