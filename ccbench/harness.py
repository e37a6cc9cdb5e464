"""The experiment harness: one Hydra job = one (dataset, method, constraints, noise) cell.

:func:`run_job` runs a cell for ``n_trials`` paired trials and writes one
Parquet row per trial (see :mod:`ccbench.results`). Pairing: trial ``t`` draws
its label noise, constraints and constraint noise from a seed that hashes the
base seed, the dataset, constraints and noise configs and ``t``, never the
method, so every method of a sweep sees the same constraint sets. The method's
``random_state`` is a child of the same seed (identical across methods too).

Statuses: ``ok``; ``error`` (the trial raised: the traceback tail is kept and the
sweep goes on); ``skipped`` (the method cannot use the cell's supervision, e.g.
a labels-only method given bare pairs, as benchopt's ``Solver.skip``);
``infeasible`` (the method raised :class:`~ccbench.base.InfeasibleConstraintsError`).
"""

from __future__ import annotations

import datetime as _dt
import inspect
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import DictConfig, OmegaConf

from . import registry
from .base import InfeasibleConstraintsError
from .constraints import Constraints
from .datasets import load_dataset
from .results import RESULTS_FILE, ResultsStore, canonical_json, flatten, stable_hash

__all__ = [
    "run_job",
    "trial_seed",
    "draw_supervision",
    "constraints_hash",
    "resolve_n_clusters",
    "skip_reason",
    "SweepSummaryCallback",
]

GROUPS = ("dataset", "method", "constraints", "noise")
# Root keys that steer the harness but do not define the experiment.
CONTROL_KEYS = ("rerun_errors", "out_dir", "paper")  # not settings of a trial
DEFAULT_METRICS = ("modified_rand", "ari", "nmi", "n_clusters_found", "constraint_violations")
ERROR_TAIL = 2000  # characters of traceback kept per error row
# Dataset options that do not change which points or labels a set has.
_NOT_IN_SEED = ("preprocess", "data_dir", "manifest")


# -- seeds and supervision ----------------------------------------------------


def trial_seed(conf: dict, trial: int) -> int:
    """The seed of trial ``trial`` of a cell: a 63-bit int, independent of the method.

    sha256 of the canonical JSON of (base seed, dataset config without
    ``preprocess``, ``data_dir`` and ``manifest``, constraints config, noise
    config, trial). Preprocessing is left out so that scaling variants of one
    data set are paired too; where the files live does not change the data.
    """
    dataset = {k: v for k, v in conf["dataset"].items() if k not in _NOT_IN_SEED}
    key = {
        "seed": conf.get("seed", 0),
        "dataset": dataset,
        "constraints": conf["constraints"],
        "noise": conf["noise"],
        "trial": int(trial),
    }
    return int(stable_hash(key, length=16), 16) >> 1


def _trial_streams(seed: int) -> tuple[np.random.Generator, int]:
    """(generator for noise and constraints, int random_state for the method)."""
    supervision, method = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(supervision), int(method.generate_state(1, np.uint32)[0])


def _params(section: dict) -> dict:
    return {k: v for k, v in section.items() if k != "name"}


def draw_supervision(y, constraints_conf: dict, noise_conf: dict, rng: np.random.Generator):
    """Draw one trial's supervision from labels ``y``.

    Label noise (``NoiseSpec.stage == "labels"``) corrupts ``y`` before the
    scheme draws; constraint noise (``"constraints"``) acts on the drawn set.

    Returns
    -------
    constraints : Constraints
    y_used : ndarray
        The labels the scheme saw (noisy under label noise). Evaluation uses
        the true labels, never these.
    """
    noise_spec = registry.get_noise_spec(noise_conf["name"])
    scheme = registry.get_scheme_spec(constraints_conf["name"])
    y_used = np.asarray(y)
    if noise_spec.stage == "labels":
        y_used = noise_spec.func(y_used, rng=rng, **_params(noise_conf))
    cons = scheme.func(y_used, rng=rng, **_params(constraints_conf))
    if noise_spec.stage == "constraints":
        cons = noise_spec.func(cons, rng=rng, **_params(noise_conf))
    if not isinstance(cons, Constraints):
        raise TypeError(
            f"constraint scheme {scheme.name!r} returned {type(cons).__name__}; "
            f"schemes must return a ccbench.Constraints"
        )
    return cons, y_used


def constraints_hash(cons: Constraints) -> str:
    """A short fingerprint of a constraint set (pairs, confidences, partial labels)."""
    import hashlib

    h = hashlib.sha256()
    h.update(str(cons.n_samples).encode())
    for arr in (cons.must_link, cons.cannot_link, cons.must_link_confidence, cons.cannot_link_confidence):
        h.update(np.ascontiguousarray(arr).tobytes())
        h.update(b"|")
    if cons.labels is not None:
        h.update(np.ascontiguousarray(cons.labels, dtype=np.int64).tobytes())
    return h.hexdigest()[:16]


def skip_reason(spec: registry.MethodSpec, cons: Constraints) -> str | None:
    """Why ``spec`` cannot use this supervision, or None when it can.

    Unsupervised methods always run. Pair-based methods run on any cell (an
    empty set is the unconstrained case). A method that uses only partial
    labels is skipped when the scheme revealed none.
    """
    if not spec.supervision:
        return None
    available = {"must_link", "cannot_link"}
    if cons.labels is not None:
        available.add("labels")
    if set(spec.supervision) & available:
        return None
    return (
        f"method {spec.name!r} uses {'/'.join(spec.supervision)} supervision but the "
        f"constraint scheme gives {'/'.join(sorted(available))}; use a labeled scheme "
        f"such as constraints=labeled_subsets"
    )


def _accepts(estimator: type, name: str) -> bool:
    return name in inspect.signature(estimator).parameters


def _build(spec: registry.MethodSpec, params: dict, random_state: int, n_clusters=None):
    params = dict(params)
    # random_state null (the method configs' default) = the trial's derived seed;
    # an explicit value in the config wins.
    if _accepts(spec.estimator, "random_state") and params.get("random_state") is None:
        params["random_state"] = random_state
    if n_clusters is not None:
        params["n_clusters"] = n_clusters
    return registry.make_method(spec.name, **params)


def resolve_n_clusters(value, *, spec, n_classes, X, constraints, random_state) -> int | None:
    """The ``n_clusters`` a method receives (None when it needs none).

    ``value`` is the method config's reserved ``n_clusters`` key: ``"true_k"``
    (default; the number of true classes), an int, ``"from_method=<name>"`` or a
    mapping ``{from_method: <name>, <param>: ...}``: run that method on the same
    data and constraints and use the number of clusters it found (SCSSAP feeds
    constrained EM the count found by SCSSAP with infinite penalty).
    """
    if not spec.needs_n_clusters:
        return None
    if value is None or value == "true_k":
        return int(n_classes)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and value.startswith("from_method="):
        source, params = value.split("=", 1)[1].strip(), {}
    elif isinstance(value, dict) and "from_method" in value:
        source, params = value["from_method"], {k: v for k, v in value.items() if k != "from_method"}
    else:
        raise ValueError(
            f"method.n_clusters={value!r} is not understood; use true_k, an int, "
            f"from_method=<name> or {{from_method: <name>, <param>: <value>}}"
        )
    source_spec = registry.get_method_spec(source)
    if source_spec.needs_n_clusters:
        raise ValueError(
            f"n_clusters=from_method={source} needs a method that finds the number of "
            f"clusters itself, but {source!r} needs n_clusters"
        )
    est = _build(source_spec, params, random_state)
    est.fit(X, constraints=constraints)
    return int(len(np.unique(est.labels_)))


# -- the job --------------------------------------------------------------------


def _to_conf(cfg) -> dict:
    if isinstance(cfg, DictConfig):
        cfg = OmegaConf.to_container(
            OmegaConf.masked_copy(cfg, [k for k in cfg.keys() if k != "hydra"]), resolve=True
        )
    conf = dict(cfg)
    missing = [g for g in GROUPS if g not in conf]
    if missing:
        raise ValueError(f"config lacks the group(s) {missing}; compose it from ccbench_conf")
    for g in GROUPS:
        if not isinstance(conf[g], dict) or "name" not in conf[g]:
            raise ValueError(f"config group {g!r} must be a mapping with a 'name' key, got {conf[g]!r}")
    conf.setdefault("n_trials", 1)
    conf.setdefault("seed", 0)
    conf.setdefault("metrics", list(DEFAULT_METRICS))
    conf.setdefault("plugins", [])
    return conf


def config_hash(conf: dict) -> str:
    """Identity of a cell: the four groups and the base seed.

    ``n_trials`` is left out so that raising it on resume only adds trials, and
    ``metrics`` so that asking for a new metric recomputes (see :func:`_needs_run`)
    instead of starting a second copy of the cell.
    """
    keyed = {k: conf[k] for k in (*GROUPS, "seed")}
    return stable_hash(keyed)


def _needs_run(previous: pd.DataFrame, trial: int, *, rerun_errors: bool, metrics) -> bool:
    """Whether trial ``trial`` must run given the rows already recorded."""
    if trial not in previous.index:
        return True
    row = previous.loc[trial]
    if row["status"] == "error":
        return bool(rerun_errors)
    if row["status"] == "ok":  # a metric added to the config since: recompute
        return any(m not in row.index or pd.isna(row[m]) for m in metrics)
    return False


def _output_dir(conf: dict, out_dir) -> Path:
    if out_dir is not None:
        return Path(out_dir)
    try:
        from hydra.core.hydra_config import HydraConfig

        return Path(HydraConfig.get().runtime.output_dir)
    except ValueError:  # HydraConfig not set: a direct call
        pass
    if conf.get("out_dir"):
        return Path(conf["out_dir"])
    raise ValueError("run_job needs an output directory: pass out_dir=... or set cfg.out_dir")


def _metric_names(conf) -> list[str]:
    """The configured metrics plus ``n_clusters_found``, which every row records."""
    return list(dict.fromkeys([*conf["metrics"], "n_clusters_found"]))


class _Progress:
    """``trial t/T, elapsed`` on stderr, only when stderr is a terminal."""

    def __init__(self, label: str, total: int):
        self.label, self.total = label, total
        self.enabled = sys.stderr.isatty()
        self.start = time.perf_counter()

    def update(self, done: int):
        if self.enabled:
            elapsed = time.perf_counter() - self.start
            sys.stderr.write(f"\r[ccbench] {self.label}: trial {done}/{self.total}, {elapsed:.1f}s ")
            sys.stderr.flush()

    def close(self):
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _error_text() -> str:
    return traceback.format_exc()[-ERROR_TAIL:]


def run_job(cfg, out_dir=None) -> pd.DataFrame:
    """Run one cell for ``cfg.n_trials`` trials; return this cell's rows.

    Parameters
    ----------
    cfg : DictConfig or dict
        A composed ccbench config (``dataset``, ``method``, ``constraints``,
        ``noise`` groups plus root keys; see ``conf/config.yaml``).
    out_dir : path-like, optional
        Where ``results.parquet`` goes. Default: Hydra's job output directory,
        else ``cfg.out_dir``.

    Returns
    -------
    pandas.DataFrame
        Every row of this cell in the results file (old and new), one per trial.
    """
    conf = _to_conf(cfg)
    store = ResultsStore(_output_dir(conf, out_dir) / RESULTS_FILE)
    chash = config_hash(conf)
    n_trials = int(conf["n_trials"])
    previous = store.rows_of(chash)
    wanted = set(_metric_names(conf))
    todo = [
        t for t in range(n_trials)
        if _needs_run(previous, t, rerun_errors=bool(conf.get("rerun_errors")), metrics=wanted)
    ]

    base = flatten({k: v for k, v in conf.items() if k not in CONTROL_KEYS})
    base["config_hash"] = chash
    label = f"{conf['dataset']['name']}/{conf['method']['name']}"
    progress = _Progress(label, n_trials)
    setup, setup_error = None, None
    try:
        if todo:  # a finished cell resumes without loading anything
            setup = _setup(conf)
    except Exception:  # a bad config or a missing data file: every trial says why
        setup_error = _error_text()
    try:
        for t in todo:
            row = {**base, "trial": t}
            if setup_error is not None:
                row.update(status="error", error=setup_error)
            else:
                row.update(_run_trial(conf, setup, t))
            row["timestamp"] = _dt.datetime.now(_dt.timezone.utc).isoformat()
            store.add(row)
            progress.update(t + 1)
    finally:  # on Ctrl-C (KeyboardInterrupt) the finished trials are still written
        store.flush(force=True)
        progress.close()
    frame = store.frame()
    if frame.empty:
        return frame
    return frame[frame["config_hash"] == chash].sort_values("trial").reset_index(drop=True)


def _setup(conf: dict) -> dict:
    """Everything shared by a cell's trials; raises on a bad config."""
    registry.load_plugins(conf.get("plugins") or [])
    spec = registry.get_method_spec(conf["method"]["name"])
    registry.get_scheme_spec(conf["constraints"]["name"])
    registry.get_noise_spec(conf["noise"]["name"])
    metrics = [registry.get_metric_spec(n) for n in _metric_names(conf)]
    dataset_options = _params(conf["dataset"])
    ds = load_dataset(conf["dataset"]["name"], **dataset_options)
    return {"spec": spec, "metrics": metrics, "dataset": ds}


def _run_trial(conf: dict, setup: dict, t: int) -> dict:
    spec, ds = setup["spec"], setup["dataset"]
    seed = trial_seed(conf, t)
    row = {
        "trial_seed": seed,
        "n_samples": int(ds.X.shape[0]),
        "n_features": int(ds.X.shape[1]),
        "n_classes": int(ds.n_classes),
        "status": "ok",
        "error": None,
    }
    try:
        rng, method_seed = _trial_streams(seed)
        cons, _ = draw_supervision(ds.y, conf["constraints"], conf["noise"], rng)
        row.update(
            constraints_hash=constraints_hash(cons),
            n_must_link=cons.n_must_link,
            n_cannot_link=cons.n_cannot_link,
            n_labeled=cons.n_labeled,
            method_seed=method_seed,
        )
        reason = skip_reason(spec, cons)
        if reason is not None:
            row.update(status="skipped", error=reason)
            return row
        params = {k: v for k, v in _params(conf["method"]).items() if k != "n_clusters"}
        k = resolve_n_clusters(
            conf["method"].get("n_clusters"), spec=spec, n_classes=ds.n_classes,
            X=ds.X, constraints=cons, random_state=method_seed,
        )
        row["n_clusters_given"] = k
        est = _build(spec, params, method_seed, n_clusters=k)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tic = time.perf_counter()
            est.fit(ds.X, constraints=cons)
            row["fit_time"] = time.perf_counter() - tic
        if caught:
            row["warnings"] = "; ".join(sorted({f"{w.category.__name__}: {w.message}" for w in caught}))[:ERROR_TAIL]
        labels = np.asarray(est.labels_)
        for m in setup["metrics"]:
            kwargs = {"constraints": cons} if m.needs_constraints else {}
            row[m.name] = float(m.func(ds.y, labels, **kwargs))
        row["n_iter"] = getattr(est, "n_iter_", None)
        row["converged"] = getattr(est, "converged_", None)
    except InfeasibleConstraintsError as exc:
        row.update(status="infeasible", error=f"{type(exc).__name__}: {exc}")
    except Exception:
        row.update(status="error", error=_error_text())
    return row


# -- Hydra callback --------------------------------------------------------------

try:
    from hydra.experimental.callback import Callback
except ImportError:  # pragma: no cover - hydra is a dependency
    Callback = object

_TOTAL_FILE = ".ccbench_jobs"
_DONE_FILE = ".ccbench_done"


def _count_jobs(config) -> int | None:
    """Number of jobs a basic sweep will launch (product of the sweep lists)."""
    try:
        from hydra.core.override_parser.overrides_parser import OverridesParser

        params = [f"{k}={v}" for k, v in (config.hydra.sweeper.get("params") or {}).items()]
        args = list(config.hydra.overrides.task)
        lengths = {}
        for o in OverridesParser.create().parse_overrides(params + args):
            key = o.get_key_element()
            lengths[key] = len(list(o.sweep_string_iterator())) if o.is_sweep_override() else 1
        return int(np.prod(list(lengths.values()))) if lengths else 1
    except Exception:
        return None


class SweepSummaryCallback(Callback):
    """Multirun progress (jobs done / total, on a terminal) and a summary at the end.

    ``on_multirun_end`` gathers the sweep directory, prints mean ± std of
    ``metric`` per method and x value, and writes the full report
    (``summary.md``, ``summary.parquet``, PNG) to ``<sweep dir>/report``.

    Parameters
    ----------
    metric : str, default="modified_rand"
    write_report : bool, default=True
    """

    def __init__(self, metric: str = "modified_rand", write_report: bool = True):
        self.metric = metric
        self.write_report = write_report

    def on_multirun_start(self, config, **kwargs):
        sweep = Path(config.hydra.sweep.dir)
        sweep.mkdir(parents=True, exist_ok=True)
        total = _count_jobs(config)
        (sweep / _TOTAL_FILE).write_text(canonical_json({"total": total, "start": time.time()}))

    def on_job_end(self, config, job_return, **kwargs):
        try:
            import json

            out = Path(config.hydra.runtime.output_dir)
            (out / _DONE_FILE).write_text(str(time.time()))
            if not sys.stderr.isatty():
                return
            sweep = Path(config.hydra.sweep.dir)
            info = json.loads((sweep / _TOTAL_FILE).read_text())
            done = sum(
                1 for f in sweep.rglob(_DONE_FILE) if f.stat().st_mtime >= info["start"]
            )
            total = info["total"] or "?"
            sys.stderr.write(f"[ccbench] jobs done {done}/{total}\n")
        except Exception:  # progress must never break a sweep
            pass

    def on_multirun_end(self, config, **kwargs):
        from . import report

        sweep = Path(config.hydra.sweep.dir)
        x = OmegaConf.select(config, "x_axis", default=None) or report.DEFAULT_X
        try:
            data = report.load(sweep)
        except FileNotFoundError:
            return
        print(f"\n{report.markdown_table(report.summarise(data, self.metric, x), self.metric, x)}")
        if self.write_report:
            paths = report.write_report(data, sweep / "report", metrics=[self.metric], x=x)
            print(f"report: {paths['summary_md']}")
