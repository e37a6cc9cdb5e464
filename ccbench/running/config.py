"""One experiment cell: its schema, every root default, its identity and its seed key.

This module is the only place these are written down:

- :class:`CellConfig` is registered with Hydra's ConfigStore as ``ccbench_schema``
  and is the first entry of ``conf/config.yaml``'s defaults list, so the YAML
  holds no root default of its own and a typo (``n_trails=5``) is an error;
- a field's ``metadata["identity"]`` says whether it defines the cell.
  :data:`IDENTITY_KEYS` feed :func:`cell_hash` (resume finds a cell by it) and
  :data:`NON_IDENTITY_KEYS` feed Hydra's ``override_dirname.exclude_keys``
  (through the ``${ccbench_non_identity_keys:}`` resolver), so a CLI override
  of a non-identity key (``n_trials``, ``metrics``, ...) reuses the job directory;
- the report metadata (``x_axis``, ``metrics``, ``paper``) travels with each
  job: ``x_axis`` and ``metrics`` in its rows, the whole cell in ``cell.json``
  (:data:`CELL_FILE`) beside ``results.parquet``.

Nothing here imports Hydra or numpy, so the command line stays fast.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

__all__ = [
    "CellConfig",
    "GROUPS",
    "IDENTITY_KEYS",
    "NON_IDENTITY_KEYS",
    "DEFAULT_X_AXIS",
    "CELL_FILE",
    "canonical_json",
    "stable_hash",
    "cell_hash",
    "identity",
    "to_cell",
    "register_configs",
]

GROUPS = ("dataset", "method", "constraints", "noise")
CELL_FILE = "cell.json"


def _identity(default=dataclasses.MISSING, *, hash_default=True, **kwargs):
    # hash_default=False: a cell at this default hashes as if the key did not exist, so an identity
    # key added later leaves every existing cell's hash (and its resume) unchanged
    return field(default=default, metadata={"identity": True, "hash_default": hash_default}, **kwargs)


@dataclass
class CellConfig:
    """The root of a ccbench config (one Hydra job = one cell).

    The four groups come from ``conf/<group>/*.yaml`` (a ``name`` key plus
    options); everything else has its one default here.
    """

    dataset: dict[str, Any] = _identity(default_factory=dict)
    method: dict[str, Any] = _identity(default_factory=dict)
    constraints: dict[str, Any] = _identity(default_factory=dict)
    noise: dict[str, Any] = _identity(default_factory=dict)
    seed: int = _identity(0)  # base seed; trial seeds derive from it (paired across methods)
    n_trials: int = 10
    metrics: list[str] = field(
        default_factory=lambda: ["modified_rand", "ari", "nmi", "n_clusters_found", "constraint_violations"]
    )
    plugins: list[str] = field(default_factory=list)  # extra plugin modules to import and register
    x_axis: str = "constraints.n_constraints"  # the column reports plot against
    rerun_errors: bool = True  # on resume, retry error/timeout rows (false: only those of changed method code)
    # on resume, keep ok rows made by other code of their method (default: re-run them; reports mark kept ones)
    keep_stale: bool = False
    # write each trial's predicted labels to labels.npz beside results.parquet (ccbench.running.labels_store):
    # a new metric or reference partition then needs no refit. Not identity: it changes no number.
    store_labels: bool = False
    out_dir: Optional[str] = None  # where results go when run_job is called without one
    paper: Optional[dict[str, Any]] = None  # numbers a paper prints, shown beside ours by reports
    # contradictory constraints (a cannot-link inside a must-link chunklet): warn = fit anyway and
    # record it, raise = status infeasible without fitting, ignore = fit silently
    inconsistent: str = "warn"
    # seconds per trial; set, each fit runs in a worker process that is killed at the limit
    # (status timeout) -- a numba kernel or a C solver cannot be stopped inside the process
    trial_timeout: Optional[float] = None
    # once a trial of the cell times out, record its later trials as timeout without fitting them (each
    # would cost trial_timeout seconds to learn the same); a resume retries them like any timeout
    timeout_stops_cell: bool = False
    # once a trial of the cell is killed at trial_timeout, the cell's jobs at the other base seeds record their
    # trials as timeout without fitting (ccbench.running.seed_timeouts: a marker in <sweep dir>/.timeouts/)
    timeout_stops_seeds: bool = False
    # seconds a fit may be predicted to take (MethodSpec.time); set, a longer cell is refused
    # before fitting (status refused) instead of running into trial_timeout
    time_budget: Optional[float] = None
    # the experiment whose cells this one runs again (leaderboard_budget6x: leaderboard): its grid adds no job to
    # that experiment's, so a report's coverage line counts those jobs once (reporting.leaderboard.coverage)
    rerun_of: Optional[str] = None
    # which points the label metrics score: all, or only those in no constraint and without a label
    # (held-out, as the COBRAS papers score). Identity: it changes the recorded numbers, so a cell
    # scored both ways is two cells (two job directories), never one overwriting the other.
    # ``both`` scores once on all points (metric columns under their names) and once on the
    # unconstrained points (``<metric>_unconstrained`` columns) from one fit.
    evaluate_on: str = _identity("all", hash_default=False)
    # model selection of the method's MethodSpec.grid from the supervision alone: none = the configured
    # values; cvcp = cross-validation over the constraints (ccbench_plugins.selection), refitted on all of
    # them. Identity (it changes the numbers); a cell left at none hashes as before the key existed.
    tune: str = _identity("none", hash_default=False)
    tune_folds: int = _identity(3, hash_default=False)  # folds of the supervision under tune=cvcp
    # fit a method that uses no supervision (MethodSpec.supervision empty, or given an empty
    # constraint set) once per (data set, method config, trial) and re-score the shared labels in
    # every cell of the sweep (cache <sweep dir>/.fits/). Identity: such fits take their
    # random_state from a seed without the constraints/noise configs (protocol.fit_seed), so the
    # numbers differ from the default's.
    share_unsupervised_fits: bool = _identity(False, hash_default=False)


IDENTITY_KEYS = tuple(f.name for f in dataclasses.fields(CellConfig) if f.metadata.get("identity"))
NON_IDENTITY_KEYS = tuple(f.name for f in dataclasses.fields(CellConfig) if not f.metadata.get("identity"))
_HASH_SKIPS_DEFAULT = {
    f.name: f.default for f in dataclasses.fields(CellConfig) if f.metadata.get("hash_default") is False
}
DEFAULT_X_AXIS = CellConfig.x_axis


# -- hashing ---------------------------------------------------------------------


def _jsonable(value):
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # "inf", "-inf", "nan": JSON has no spelling for them
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def canonical_json(value) -> str:
    """JSON with sorted keys and no whitespace: equal configs give equal strings."""
    return json.dumps(_jsonable(value), sort_keys=True, separators=(",", ":"), default=str)


def stable_hash(value, length: int = 16) -> str:
    """First ``length`` hex digits of the sha256 of :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:length]


def identity(cell: Mapping, exclude=()) -> dict:
    """The :data:`IDENTITY_KEYS` values that identify ``cell`` (a key at its ``hash_default=False`` default left
    out), less ``exclude``."""
    return {k: cell[k] for k in IDENTITY_KEYS if k not in exclude and (
        k not in _HASH_SKIPS_DEFAULT or cell.get(k, _HASH_SKIPS_DEFAULT[k]) != _HASH_SKIPS_DEFAULT[k])}


def cell_hash(cell: Mapping) -> str:
    """The identity of a cell: the hash of its :data:`IDENTITY_KEYS` (groups and base seed)."""
    return stable_hash(identity(cell))


# -- building a cell -------------------------------------------------------------


def to_cell(cfg) -> dict:
    """A plain dict with every :class:`CellConfig` key, from a composed config or a dict.

    Missing root keys take the schema's defaults; the ``hydra`` node is dropped;
    a group without a ``name`` is refused with the fix.
    """
    from omegaconf import DictConfig, OmegaConf

    if isinstance(cfg, DictConfig):
        cfg = OmegaConf.to_container(
            OmegaConf.masked_copy(cfg, [k for k in cfg.keys() if k != "hydra"]), resolve=True
        )
    cfg = dict(cfg)
    missing = [g for g in GROUPS if g not in cfg]
    if missing:
        raise ValueError(f"config lacks the group(s) {missing}; compose it from ccbench_conf")
    for g in GROUPS:
        if not isinstance(cfg[g], Mapping) or "name" not in cfg[g]:
            raise ValueError(f"config group {g!r} must be a mapping with a 'name' key, got {cfg[g]!r}")
    unknown = sorted(set(cfg) - {f.name for f in dataclasses.fields(CellConfig)})
    if unknown:
        raise ValueError(
            f"unknown root config key(s) {unknown}; the root keys are "
            f"{[f.name for f in dataclasses.fields(CellConfig)]}"
        )
    defaults = dataclasses.asdict(CellConfig())
    return {**defaults, **cfg}


# -- Hydra registration ------------------------------------------------------------

_registered = False


def register_configs() -> None:
    """Store :class:`CellConfig` as ``ccbench_schema`` and add the key-list resolver (idempotent)."""
    global _registered
    if _registered:
        return
    from hydra.core.config_store import ConfigStore
    from omegaconf import OmegaConf

    schema = OmegaConf.structured(CellConfig)
    for group in GROUPS:
        # open groups: `method.n_init=1` works although method files list only their deviations
        # from the estimator's defaults (Hydra makes the rest of the config struct)
        OmegaConf.set_struct(schema[group], False)
    ConfigStore.instance().store(name="ccbench_schema", node=schema)
    if not OmegaConf.has_resolver("ccbench_non_identity_keys"):
        OmegaConf.register_new_resolver("ccbench_non_identity_keys", lambda: list(NON_IDENTITY_KEYS))
    _registered = True
