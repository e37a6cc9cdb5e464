"""Run one cell and record it: :func:`run_job` writes one Parquet row per trial.

The trial protocol (seeds, supervision, skips, ``n_clusters``) is
:mod:`ccbench.running.protocol`; the schema and identity of a cell are
:mod:`ccbench.running.config`; the Hydra app and its callback are :mod:`ccbench.running.app`.
This module knows none of Hydra's state and does not import the report.

Statuses: ``ok``; ``error`` (the trial raised: the traceback tail is kept and the
sweep goes on; a re-run retries it unless ``rerun_errors=false``); ``skipped``
(the method cannot use the cell's supervision, as benchopt's ``Solver.skip``);
``infeasible`` (the method raised :class:`~ccbench.base.InfeasibleConstraintsError`: no
clustering meets the hard constraints); ``not_found`` (the method raised
:class:`~ccbench.base.SolutionNotFoundError`: its search gave up, which proves nothing);
``timeout`` (with ``trial_timeout`` set, the fit ran in a worker process that was
killed at the limit: :mod:`ccbench.isolation`); ``refused`` (the method's declared
:class:`~ccbench.registry.MemoryModel` exceeds the available memory: not fitted).
``error`` and ``timeout`` are failures: the command exits non-zero and a re-run
retries them (``rerun_errors``). An ``ok`` row also says whether the method
converged and how many given constraints it violated, so a report can flag what
an ``ok`` hides.

Every row carries the provenance of its job (:mod:`ccbench.running.provenance`: the
method's code hash, ccbench's commit, the environment). On resume a row
whose ``code.method_hash`` differs from the current code's is *stale*: it is
re-run (its new row's ``rerun_reason`` says why) unless ``keep_stale=true``; so is a
``skipped``, ``infeasible`` or ``not_found`` row (a verdict of that code), and a failure
even with ``rerun_errors=false``.

With ``share_unsupervised_fits``, a fit that uses no supervision is made once per (data set,
method config, trial) for the whole sweep, cached in ``<sweep dir>/.fits/<key>.npz`` (the
lock held only to write: :mod:`ccbench.running.shared_fits`) and re-scored with each cell's own constraints (:func:`score_labels`).
"""

from __future__ import annotations

import atexit
import datetime as _dt
import logging
import os
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .. import registry
from . import active_cells, protocol, provenance, seed_timeouts, shared_fits
from .tuning import tune_trial
from ._memory import peak_rss as _peak_rss, reset_peak_rss as _reset_peak_rss
from ..base import (
    InconsistentConstraintsWarning,
    InfeasibleConstraintsError,
    InsufficientMemoryError,
    InsufficientSupervisionError,
    SolutionNotFoundError,
)
from .config import CELL_FILE, canonical_json, cell_hash, to_cell
from ..datasets import load_dataset
from ..isolation import IsolatedRunner, TrialTimeout, WorkerDied, descends_from, die_with
from .labels_store import entry, write_labels
from ._resume import _needs_run, _say_stale
from .results import (FAILED_STATUSES, NOT_FITTED, NOT_SET_UP, RESULTS_FILE, ResultsStore, atomically, flatten,
                      journal_path, last_line)
from .slurm import TaskTimeLimit

__all__ = ["run_job", "config_hash", "validate_cell", "fit_and_score", "fit_labels", "score_labels",
           "evaluation_mask"]

ERROR_TAIL = 2000  # characters of traceback kept per error row
# set by the command to the pid that runs the sweep: only that process draws progress bars
MAIN_PID_ENV = "CCBENCH_MAIN_PID"
# Root keys written to cell.json but not flattened into every row.
_NOT_IN_ROWS = ("rerun_errors", "out_dir", "paper", "keep_stale", "store_labels")

log = logging.getLogger("ccbench")

config_hash = cell_hash  # the name rows and older code use


def validate_cell(cell: dict) -> None:
    """Refuse a cell whose root values cannot run at all (before anything is recorded).

    Other problems (an unknown method, an impossible constraint count) become
    ``error`` rows, so a sweep keeps a record of what was asked.
    """
    for key in ("n_trials", "seed", "metrics", "inconsistent", "evaluate_on", "tune", "tune_folds", "share_unsupervised_fits",
                "timeout_stops_cell", "timeout_stops_seeds"):
        message = protocol.check_value(key, cell[key])
        if message:
            raise ValueError(message)


def _metric_names(cell) -> list[str]:
    """The configured metrics plus ``n_clusters_found``, which every row records."""
    return list(dict.fromkeys([*cell["metrics"], "n_clusters_found"]))


class _Progress:
    """A job's trial progress with elapsed time and ETA.

    A tqdm bar on stderr when it is a terminal and this is the process that
    started the sweep; elsewhere (SLURM logs, joblib workers, whose bars would
    interleave) one whole log line at most every ``interval`` seconds and at the end.
    """

    def __init__(self, label: str, total: int, interval: float = 30.0):
        self.label, self.total, self.interval = label, total, interval
        self.start = self._last = time.perf_counter()
        self.bar = None
        if total and sys.stderr.isatty() and os.environ.get(MAIN_PID_ENV, str(os.getpid())) == str(os.getpid()):
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=label, unit="trial", file=sys.stderr, leave=False, mininterval=0.5)

    def update(self, done: int):
        if self.bar is not None:
            self.bar.update(1)
            return
        now = time.perf_counter()
        if now - self._last >= self.interval and done < self.total:
            self._last = now
            elapsed = now - self.start
            eta = elapsed / done * (self.total - done)
            log.info("%s: trial %d/%d, %s elapsed, ETA %s", self.label, done, self.total,
                     _duration(elapsed), _duration(eta))

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


def _error_text() -> str:
    return traceback.format_exc()[-ERROR_TAIL:]


def run_job(cell, out_dir=None, fits_dir=None) -> pd.DataFrame:
    """Run one cell for ``n_trials`` trials into ``out_dir``; return this cell's rows.

    Parameters
    ----------
    cell : DictConfig or dict
        A composed ccbench config (``dataset``, ``method``, ``constraints``,
        ``noise`` groups plus root keys; :class:`ccbench.running.config.CellConfig`
        fills the missing ones).
    out_dir : path-like, optional
        Where ``results.parquet`` and ``cell.json`` go. Default: ``cell["out_dir"]``.
    fits_dir : path-like, optional
        With ``share_unsupervised_fits``, where the shared fits are cached (one ``<key>.npz``
        each). Default: ``<out_dir>/../.fits``, beside the job directories of a sweep (the app
        passes ``<hydra.sweep.dir>/.fits``).

    Returns
    -------
    pandas.DataFrame
        Every row of this cell in the results file (old and new), one per trial.
    """
    cell = to_cell(cell)
    validate_cell(cell)
    out_dir = out_dir if out_dir is not None else cell["out_dir"]
    if out_dir is None:
        raise ValueError("run_job needs an output directory: pass out_dir=... or set out_dir in the config")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with atomically(out / CELL_FILE) as tmp:
        tmp.write_text(canonical_json(cell))
    store = ResultsStore(out / RESULTS_FILE)
    chash = cell_hash(cell)
    n_trials = int(cell["n_trials"])
    previous = store.rows_of(chash)
    wanted = set(_metric_names(cell))
    label = f"{cell['dataset']['name']}/{cell['method']['name']}"
    code, spec_error = _method_code(cell)
    reasons, kept = {}, []
    for t in range(n_trials):
        run, why = _needs_run(previous, t, rerun_errors=bool(cell["rerun_errors"]), metrics=wanted, code=code,
                              keep_stale=bool(cell.get("keep_stale")))
        if run:
            reasons[t] = why
        elif why:
            kept.append(why)
    todo = list(reasons)
    _say_stale(label, reasons, kept)

    base = flatten({k: v for k, v in cell.items() if k not in _NOT_IN_ROWS})
    base["config_hash"] = chash
    if len(previous):
        kept = n_trials - len(todo)
        why = pd.Series([r for r in reasons.values() if r]).value_counts()
        detail = "".join(f", {n} {r.split(':')[0].removeprefix('retry of a trial with ')}" for r, n in why.items())
        log.info("%s: resuming: %d trial(s) kept, %d to run%s", label, kept, len(todo), detail)
    progress = _Progress(label, len(todo))
    setup, setup_error = None, spec_error
    seeds_stop = seed_timeouts.stop_for(cell, code, out, fits_dir) if todo else None
    inherited = None if seeds_stop is None else seeds_stop[2]
    try:
        if todo and setup_error is None and inherited is None:  # a finished cell resumes without loading any data
            setup = _setup(cell)
            setup["code"] = code
            setup["fits_dir"] = Path(fits_dir) if fits_dir is not None else out.parent / shared_fits.FITS_DIR
            if cell.get("share_unsupervised_fits"):  # the shared fits are keyed by the data itself
                setup["data_hash"] = shared_fits.array_hash(setup["dataset"].X)
    except Exception:  # a bad option or a missing data file: every trial says why
        setup_error = _error_text()
    # once per job: the code (None when the method cannot be loaded) and the machine
    origin = {**provenance.ccbench_code(), **(code or {}), **provenance.environment()}
    timed_out = None  # the first trial that timed out (timeout_stops_cell)
    stopped = None  # the SLURM task's last time limit (TaskTimeLimit), raised once its trial is recorded
    try:
        for i, t in enumerate(todo, 1):
            row = {**base, "trial": t, **origin, "rerun_reason": reasons[t]}
            if setup_error is not None:
                row.update(status="error", error=f"{NOT_SET_UP}: the cell's set-up failed\n{setup_error}")
            elif inherited is not None:  # another base seed's trial was killed: logged once, after the loop
                row.update(status="timeout", error=seed_timeouts.not_fitted_error(inherited))
            elif timed_out is not None:  # logged once, after the loop
                row.update(status="timeout", error=f"{NOT_FITTED}: trial {timed_out} of this cell timed "
                                                   f"out at trial_timeout={cell['trial_timeout']:g} s "
                                                   f"(timeout_stops_cell=true)")
            else:
                try:
                    row.update(_run_trial(cell, setup, t))
                except TaskTimeLimit as exc:  # the SLURM task's own limit, not the method's error: recorded, then
                    row.update(status="task_time_limit", error=f"TaskTimeLimit: {exc}")  # the task stops
                    stopped = exc
                if row["status"] == "timeout" and cell.get("timeout_stops_cell"):
                    timed_out = t
                if seeds_stop is not None:
                    seed_timeouts.after_trial(seeds_stop, cell, t, row["status"])
            # store_labels: beside the rows, not in them, and on disk before the row (a job killed between the
            # two leaves no ok row without its labels); a re-run trial's old labels go when it made none
            fitted = row.pop("labels", None)
            write_labels(out, {} if fitted is None else {entry(chash, t): fitted}, drop=[entry(chash, t)])
            row["timestamp"] = _dt.datetime.now(_dt.timezone.utc).isoformat()
            store.add(row)
            progress.update(i)
            if row["status"] in FAILED_STATUSES and not row["error"].startswith(NOT_FITTED):
                log.error("%s trial %d: %s", label, t, last_line(row["error"]))
            if stopped is not None:
                _stop_worker(setup)
                log.error("%s trial %d: %s", label, t, row["error"])
                raise stopped
        if inherited is not None:
            log.error("%s: %d trial(s) recorded as timeout without fitting: base seed %d timed out at trial %d "
                      "(timeout_stops_seeds=true)", label, len(todo), inherited["seed"], inherited["trial"])
        if timed_out is not None and todo[-1] != timed_out:
            log.error("%s: trials after %d recorded as timeout without fitting (timeout_stops_cell=true)",
                      label, timed_out)
    finally:  # on Ctrl-C (KeyboardInterrupt) the finished trials are still written
        store.flush(force=True)
        progress.close()
    frame = store.frame()
    if frame.empty:
        return frame
    rows = frame[frame["config_hash"] == chash].sort_values("trial").reset_index(drop=True)
    log.info("%s: %s", label, ", ".join(f"{s} {n}" for s, n in rows["status"].value_counts().items()))
    return rows


def _stop_worker(setup: dict | None) -> None:
    """End the trial worker a fit stopped by :class:`TaskTimeLimit` may still run in (its call never returns)."""
    runner = (setup or {}).get("runner")
    if runner is not None:
        runner.close(kill=True)


def cell_is_complete(cell, out_dir) -> bool:
    """Whether :func:`run_job` of ``cell`` into ``out_dir`` would run no trial: each of its
    ``n_trials`` trials has a row in ``out_dir``'s results store that :func:`_needs_run` keeps
    (the same rule a resume applies, stale rows and ``rerun_errors`` included). A launcher that
    pays a start-up per task (SLURM) submits only the cells for which this is False. Reads no
    data; loads the method's plugin (its code hash) only when every trial has a row."""
    path = Path(out_dir) / RESULTS_FILE
    if not path.exists() and not journal_path(path).exists():  # a killed writer's rows are in its journal
        return False
    cell = to_cell(cell)
    n_trials = int(cell["n_trials"])
    previous = ResultsStore(path).rows_of(cell_hash(cell))
    if not set(range(n_trials)) <= set(previous.index):
        return False
    code, error = _method_code(cell)
    if error is not None:
        return False
    wanted = set(_metric_names(cell))
    return not any(_needs_run(previous, t, rerun_errors=bool(cell["rerun_errors"]), metrics=wanted, code=code,
                              keep_stale=bool(cell.get("keep_stale")))[0] for t in range(n_trials))


def _method_code(cell: dict) -> tuple[dict | None, str | None]:
    """The method's ``code.*`` provenance, or ``(None, traceback)`` when it cannot be loaded."""
    try:
        registry.load_plugins(cell.get("plugins") or [])
        # a tuned cell's numbers depend on the tuner's code too (part of the method hash); its grid,
        # the method a from_method cell takes k from and the metrics' code are code.inputs
        name, tune = cell["method"]["name"], cell.get("tune", "none")
        code = {**provenance.cell_method_code(name, tune),
                **provenance.cell_inputs(name, tune, provenance.from_method_of(cell["method"].get("n_clusters")),
                                         _metric_names(cell))}
        # an anytime row depends on its query strategy's and the curve's code too (code.inputs)
        return (active_cells.with_curve_inputs(cell, code) if active_cells.is_active(cell) else code), None
    except Exception:  # an unknown method or a broken plugin: every trial says why
        return None, _error_text()


def _setup(cell: dict) -> dict:
    """Everything shared by a cell's trials; raises on a bad config."""
    registry.load_plugins(cell.get("plugins") or [])
    spec = registry.get_method_spec(cell["method"]["name"])
    registry.get_scheme_spec(cell["constraints"]["name"])
    registry.get_noise_spec(cell["noise"]["name"])
    metrics = [registry.get_metric_spec(n) for n in _metric_names(cell)]
    ds = load_dataset(cell["dataset"]["name"], **protocol.group_params(cell["dataset"]))
    # a launcher's worker (joblib) fits in a worker of its own even without trial_timeout: a fit
    # that kills its process (os._exit, a crash in C) costs one error row, not the sweep
    in_launcher_worker = _in_launcher_worker()  # first: it arms die_with, which trial_timeout must not skip
    runner = _worker() if cell.get("trial_timeout") or in_launcher_worker else None
    if runner is None:
        _fits_in_this_process()
    return {"spec": spec, "metrics": metrics, "dataset": ds, "runner": runner}


#: whether a later trial worker may be forked from this process (``IsolatedRunner.fork``): until a
#: cell fits in this process, whose thread pools (OpenMP, numba) a fork would not carry over
_FORK_WORKERS = True


def _fits_in_this_process() -> None:
    global _FORK_WORKERS
    _FORK_WORKERS = False
    if _WORKER is not None:
        _WORKER.fork = False


def _in_launcher_worker() -> bool:
    """Whether this process runs jobs for a sweep's main process (``MAIN_PID_ENV``, set by
    ``ccbench``, names another process: a joblib worker). Such a process ends with the main one
    (:func:`ccbench.isolation.die_with`), so killing the sweep leaves no fit writing rows."""
    main = os.environ.get(MAIN_PID_ENV)
    if not main or not main.isdigit() or int(main) == os.getpid() or not descends_from(int(main)):
        return False  # a SLURM task inherits the variable but runs under slurmstepd, maybe on another node
    die_with(int(main))
    return True


_WORKER: IsolatedRunner | None = None


def _worker() -> IsolatedRunner:
    """This process's ``trial_timeout`` worker, kept from job to job (started on first use, replaced
    after a kill, stopped at exit or with this process). A local sweep runs thousands of jobs in one
    process; a new worker per job spent 1.5-3 s importing before each job's first trial, most of a
    small data set's job. A method's module is imported by its first call (inside its time limit).
    Forked from this process where that is safe (:func:`ccbench.isolation.fork_is_safe`), it starts
    with this process's imports: a SLURM task's worker spent 2-2.5 s of CPU importing them again."""
    global _WORKER
    if _WORKER is None:
        _WORKER = IsolatedRunner(preload=("ccbench.running.harness",), fork=_FORK_WORKERS)
        atexit.register(_WORKER.close)
    return _WORKER


def _run_trial(cell: dict, setup: dict, t: int) -> dict:
    spec, ds = setup["spec"], setup["dataset"]
    seed = protocol.trial_seed(cell, t)
    row = {
        "trial_seed": seed,
        "n_samples": int(ds.X.shape[0]),
        "n_features": int(ds.X.shape[1]),
        "n_classes": int(ds.n_classes),
        "status": "ok",
        "error": None,
    }
    if active_cells.is_active(cell):  # an anytime cell: one curve per trial, asked by the active plugin
        return {**row, **active_cells.run_curve(cell, ds, t, setup.get("runner"))}
    try:
        rng, method_seed = protocol.trial_streams(seed)
        cons, _ = protocol.draw_supervision(ds.y, cell["constraints"], cell["noise"], rng)
        n_conflicts = cons.n_conflicts()
        # a tuned fit is chosen from the constraints (CVCP): never unsupervised, never shared with the
        # default's (the shared path fits the defaults: kmeans+cvcp was kmeans with another label)
        shared = (bool(cell.get("share_unsupervised_fits")) and cell.get("tune", "none") == "none"
                  and protocol.fit_is_unsupervised(spec, cons))
        if shared:  # one seed for every budget and noise level of this trial: one fit serves them all
            _, method_seed = protocol.trial_streams(protocol.fit_seed(cell, t))
        if cell.get("share_unsupervised_fits"):
            row.update(fit_reused=False, fit_key=None)
        row.update(
            constraints_hash=protocol.constraints_hash(cons),
            n_must_link=cons.n_must_link,
            n_cannot_link=cons.n_cannot_link,
            n_labeled=cons.n_labeled,
            constraints_consistent=n_conflicts == 0,
            method_seed=method_seed,
        )
        reason = protocol.skip_reason(spec, cons)
        if reason is not None:
            row.update(status="skipped", error=reason)
            return row
        if not row["constraints_consistent"] and cell["inconsistent"] == "raise":
            row.update(status="infeasible", error=f"InconsistentConstraints: {n_conflicts} cannot-link(s) join "
                                                  f"must-linked points or contradict the revealed labels "
                                                  f"(inconsistent=raise)")
            return row
        params = {k: v for k, v in protocol.group_params(cell["method"]).items() if k != "n_clusters"}
        k = protocol.resolve_n_clusters(
            cell["method"].get("n_clusters"), spec=spec, n_classes=ds.n_classes,
            X=ds.X, constraints=cons, random_state=method_seed,
        )
        row["n_clusters_given"] = k
        tune = cell.get("tune", "none")
        fits = protocol.tuning_fits(spec, params, tune, cell.get("tune_folds", 3), n_clusters=k,
                                    n_samples=ds.X.shape[0])
        if tune != "none" and fits == 1:  # a tuned row equal to the defaults' row would count twice
            row.update(status="skipped", error=f"tune={tune}: method {spec.name!r} has no free grid parameter "
                                               f"(MethodSpec.grid), nothing to tune; its defaults are the tune=none rows")
            return row
        refusal = protocol.size_refusal(spec, params, ds.X.shape[0], ds.X.shape[1],
                                        time_budget=cell.get("time_budget"), fits=fits, n_clusters=k,
                                        n_pairs=cons.n_must_link + cons.n_cannot_link)
        if refusal is not None:
            row.update(status="refused", error=refusal)
            return row
        runner = setup.get("runner")
        timeout = float(cell["trial_timeout"]) if runner is not None and cell.get("trial_timeout") else None
        metric_names, evaluate_on = [m.name for m in setup["metrics"]], cell.get("evaluate_on", "all")
        if shared:
            fit_args = (cell.get("plugins") or [], spec.name, params, method_seed, k, ds.X, cons, cell["inconsistent"])
            key = shared_fits.fit_key(cell, setup["data_hash"], setup.get("code"), t, method_seed, k,
                                      None if not spec.supervision else row["constraints_hash"])
            fit, reused = shared_fits.shared_fit(
                setup["fits_dir"], key, ds.X.shape[0],
                lambda: fit_labels(*fit_args) if runner is None else _isolated(runner, row, fit_labels, fit_args, timeout))
            row.update(fit_reused=reused, fit_key=key)
            # a cached fit's fields come back in sorted order: sort a fresh one too, so a row's columns do not
            # depend on whether its job computed the fit or reused it (the SLURM and local rows differed)
            outcome = _merge({k_: fit[k_] for k_ in sorted(fit) if k_ != "labels"},
                             score_labels(spec, fit["labels"], ds.y, cons, metric_names, evaluate_on, X=ds.X))
            outcome.update({"labels": fit["labels"]} if cell.get("store_labels") else {})
        else:
            job = (cell.get("plugins") or [], spec.name, params, method_seed, k, ds.X, ds.y, cons,
                   metric_names, cell["inconsistent"], evaluate_on, cell.get("tune", "none"), cell.get("tune_folds", 3),
                   bool(cell.get("store_labels")))
            outcome = fit_and_score(*job) if runner is None else _isolated(runner, row, fit_and_score, job, timeout)
        row.update(outcome)
    except TrialTimeout as exc:
        row.update(status="timeout", error=f"TrialTimeout: {exc}")
    except WorkerDied as exc:  # the fit ended its process: this trial's error, the sweep goes on
        row.update(status="error", error=f"WorkerDied: {exc} during the fit of trial {t}")
    except InfeasibleConstraintsError as exc:
        row.update(status="infeasible", error=f"{type(exc).__name__}: {exc}")
    except SolutionNotFoundError as exc:
        row.update(status="not_found", error=f"{type(exc).__name__}: {exc}")
    except InsufficientSupervisionError as exc:  # this draw gives the method nothing to use: not a failure
        row.update(status="skipped", error=f"{type(exc).__name__}: {exc}")
    except InsufficientMemoryError as exc:  # a method's own guard, beside its declared MemoryModel
        row.update(status="refused", error=f"{type(exc).__name__}: {exc}")
    except protocol.MethodOutputError as exc:  # labels_ that are no clustering: named in one line, no traceback
        row.update(status="error", error=f"{type(exc).__name__}: {exc}")
    except Exception as exc:
        row.update(status="error", error=getattr(exc, "worker_traceback", None) or _error_text())
    return row


def _isolated(runner, row: dict, func, args, timeout):
    """``func(*args)`` in the worker, killed after ``timeout`` s of its CPU time (or 3 x of wall time); the
    row gets the call's ``trial_cpu_time`` / ``trial_wall_time``, also when it was killed."""
    try:
        return runner.call(func, *args, timeout=timeout)
    finally:
        row.update(trial_cpu_time=runner.last_cpu, trial_wall_time=runner.last_wall)


def fit_and_score(plugins, method, params, method_seed, n_clusters, X, y, cons, metric_names, inconsistent,
                  evaluate_on="all", tune="none", tune_folds=3, keep_labels=False) -> dict:
    """Fit one trial's estimator and score it: the part of a trial that may run in a worker process.

    Module-level and given only picklable values, so :class:`~ccbench.isolation.IsolatedRunner`
    can run it in a spawned process (``trial_timeout``). With ``tune`` other than ``none`` the
    method's grid is first chosen from ``cons`` alone (:func:`_tune`; ``y`` is used only to score).
    ``keep_labels`` (``store_labels``) returns the labels too, under ``labels``.
    """
    fit = fit_labels(plugins, method, params, method_seed, n_clusters, X, cons, inconsistent, tune, tune_folds)
    labels = fit.pop("labels")
    return {**_merge(fit, score_labels(registry.get_method_spec(method), labels, y, cons, metric_names, evaluate_on,
                                       X=X)), **({"labels": labels} if keep_labels else {})}


def _merge(fit: dict, scores: dict) -> dict:
    """A fit's fields and its scores in one row part; both may carry ``warnings``: keep both."""
    notes = "; ".join(w for w in (fit.get("warnings"), scores.get("warnings")) if w)
    out = {**fit, **scores}
    if notes:
        out["warnings"] = notes[:ERROR_TAIL]
    return out


def fit_labels(plugins, method, params, method_seed, n_clusters, X, cons, inconsistent, tune="none",
               tune_folds=3) -> dict:
    """Fit one estimator: ``labels`` plus what the fit reports (``fit_time``, ``n_iter``,
    ``converged``, ``warnings`` when any, peak memory; the tuner's fields under ``tune``).
    No true labels: a shared fit is scored per cell."""
    registry.load_plugins(plugins)
    spec = registry.get_method_spec(method)
    out = {}
    if tune != "none":
        params, n_clusters, out = tune_trial(tune, tune_folds, spec, params, method_seed, n_clusters, X, cons)
    est = protocol.build_estimator(spec, params, method_seed, n_clusters=n_clusters)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if inconsistent == "ignore":
            warnings.simplefilter("ignore", InconsistentConstraintsWarning)
        rss_before = _reset_peak_rss()
        cpu = time.process_time()
        tic = time.perf_counter()
        est.fit(X, constraints=cons)
        out["fit_time"] = time.perf_counter() - tic
        out["fit_cpu_time"] = time.process_time() - cpu
        out.update(_peak_rss(rss_before))
    if caught:
        out["warnings"] = "; ".join(sorted({f"{w.category.__name__}: {w.message}" for w in caught}))[:ERROR_TAIL]
    out["labels"] = protocol.checked_labels(spec, est.labels_, X.shape[0])  # the method's output, checked where it enters
    out["n_iter"] = getattr(est, "n_iter_", None)
    out["converged"] = getattr(est, "converged_", None)
    return out


def score_labels(spec, labels, y, cons, metric_names, evaluate_on="all", X=None) -> dict:
    """Score ``labels`` against the true ``y`` and the cell's constraints ``cons``.

    Label metrics see the points ``evaluate_on`` selects (:func:`evaluation_mask`); with
    ``both``, the metrics on all points keep their names and those on the unconstrained points
    are ``<metric>_unconstrained`` (NaN, noted in ``warnings``, when under two points are free: PCCC's
    scheme can leave one). A constraint metric is about the given pairs: it always sees every point.
    """
    labels = np.asarray(labels)
    views = [("", evaluate_on)] if evaluate_on != "both" else [("", "all"),
                                                                 (protocol.UNCONSTRAINED_SUFFIX, "unconstrained")]
    out = {}
    for suffix, where in views:
        if suffix and (held_out := int(_unconstrained(cons, len(labels)).sum())) < protocol.MIN_SCORED_POINTS:
            out[f"n_evaluated{suffix}"] = held_out
            out.update({f"{name}{suffix}": np.nan for name in metric_names
                        if not (registry.get_metric_spec(name).needs_constraints
                                or registry.get_metric_spec(name).needs_features)})
            out["warnings"] = f"evaluate_on=both: {'all points but one are' if held_out else 'every point is'} constrained, so the *_unconstrained metrics are NaN"  # noqa: E501
            continue
        mask = evaluation_mask(cons, len(labels), where)
        out[f"n_evaluated{suffix}"] = int(mask.sum())
        y_eval, labels_eval = (y, labels) if mask.all() else (y[mask], labels[mask])
        for name in metric_names:
            m = registry.get_metric_spec(name)
            if m.needs_constraints or m.needs_features:  # about every point: no _unconstrained view
                if not suffix:  # a metric may need both (lower_bound: the features and the constraints)
                    given = {"constraints": cons} if m.needs_constraints else {}
                    out[m.name] = float(m.func(y, labels, **given, **({"X": X} if m.needs_features else {})))
            else:
                out[f"{m.name}{suffix}"] = float(m.func(y_eval, labels_eval))
    split, joined = cons.violations(labels)
    # only the kinds the method uses count (SSAP-L ignores cannot-links by design)
    out["n_violated"] = split * ("must_link" in spec.supervision) + joined * ("cannot_link" in spec.supervision)
    out["constraint_kind"] = spec.constraint_kind
    return out


def _unconstrained(constraints, n_samples: int) -> np.ndarray:
    """Points in no must-link or cannot-link pair and without a revealed label."""
    mask = np.ones(n_samples, dtype=bool)
    mask[np.asarray(constraints.must_link, dtype=np.intp).ravel()] = False
    mask[np.asarray(constraints.cannot_link, dtype=np.intp).ravel()] = False
    if constraints.labels is not None:
        mask[np.asarray(constraints.labels) >= 0] = False
    return mask


def evaluation_mask(constraints, n_samples: int, evaluate_on: str = "all") -> np.ndarray:
    """Boolean mask of the points the label metrics score (the ``evaluate_on`` cell option).

    ``all``: every point. ``unconstrained``: the points that appear in no must-link
    or cannot-link pair and carry no label, so a method that merely copies its
    supervision gains nothing (the COBRAS papers score only such points).
    """
    if evaluate_on not in protocol.EVALUATE_ON:
        raise ValueError(f"evaluate_on must be one of {protocol.EVALUATE_ON}, got {evaluate_on!r}")
    if evaluate_on == "all":
        return np.ones(n_samples, dtype=bool)
    if evaluate_on == "both":
        raise ValueError("evaluate_on=both is two masks: score_labels takes all, then unconstrained")
    mask = _unconstrained(constraints, n_samples)
    if mask.sum() < protocol.MIN_SCORED_POINTS:  # the same floor as score_labels' evaluate_on=both
        raise ValueError(f"evaluate_on=unconstrained left {'one point' if mask.any() else 'no point'} to score: every "
                         "other point is in a constraint or labeled; draw fewer constraints or use evaluate_on=all")
    return mask
