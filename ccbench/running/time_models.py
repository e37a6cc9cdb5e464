"""Calibrating the methods' :class:`~ccbench.specs.TimeModel` from measured rows (``ccbench time-models``).

Harness calibration, nothing algorithmic: what a trial of a method costs in CPU, so that the protocol
refuses only trials that would surely time out (:func:`ccbench.running.protocol.size_refusal`).

What is measured (:func:`cell_times`). One value per cell (``config_hash``: method, data set,
supervision, tuning, k given or not): the median over its trials of the trial's CPU seconds, where

- an ``ok`` trial that fitted counts its ``trial_cpu_time`` (the worker's CPU for the whole trial:
  the given-k search, the tuning's fits and the refit, the scoring);
- an ``ok`` trial that *reused* a shared unsupervised fit (``fit_reused``) counts that fit's
  ``fit_cpu_time``: what the trial would have cost had it fitted, which is what the refusal, made
  before the fit, has to predict (its own ``trial_cpu_time`` is not recorded);
- a ``timeout`` trial is *censored*: it took at least ``trial_timeout`` (killed there). It counts as +inf in
  the median; a cell whose median is +inf is a lower bound (``censored``), never a measurement. A trial
  recorded as ``timeout`` without fitting (after the cell's first kill, ``timeout_stops_cell``, or another
  base seed's, ``timeout_stops_seeds``: :data:`~.results.NOT_FITTED`) is no trial here: it was never run;
- refused, skipped and infeasible trials measured nothing and are left out.

The model (:class:`~ccbench.specs.TimeModel`), per method, fitted in log space::

    t(n, p, k, d) = seconds * (n / 1000)**exponent * (1 + p / n)**pairs_exponent * (k / 2)**k_exponent
                    * (d / 10)**features_exponent

``p`` the median supervision pairs of the cell (the dense track reaches 200,000), ``k`` the k given,
``d`` the features. Why these terms: on the shipped rows, n alone puts 77 % of the cells measured at
0.1 s or more within a factor 2, adding k (k-medoids, the AP family's search) 83 %, adding d (SRCP and
SCAP on the 216-240-feature sets) 87 %; ``p`` is what the dense track's runs turn on (SCSSAP, SCSSAP-ML).
The cells fit the five numbers and, where tuned cells exist, ``tuned``: a tuned cell is
``tuned * fits * t`` (``fits`` from :func:`ccbench.running.protocol.tuning_fits`, the count the harness
charges); n's exponent is bounded to [0, 3] (time does not fall with n; nothing here is worse than an
SDP's cube), the others to [-2, 3] (a method whose cells are all below the clock floor has no slope to
find), ``tuned`` to [0.1, 10]. The rows span n = 47-3,175: a model says nothing reliable far beyond. A method that finds k itself and was run both given k and k-free (the AP
family) gets two models: the given-k one (its search for k inside it, so ``search_fits`` is not
charged on top) and ``k_free``.

The fit. Robust least squares on the log residual ``r = log(max(pred, FLOOR) / max(measured, FLOOR))``
with the Welsch loss ``c**2 (1 - exp(-(r / c)**2))``, ``c = log 2``: it weighs a cell like least squares
while it is within a factor 2 and stops pulling once it is far off (a data set whose search or
convergence is unlike the rest's, e.g. AP's 20-fit cap on voting), so the model follows the bulk of
the cells, which is what "within a factor 2 for most cells" asks. A censored cell pulls only when the
model predicts below its lower bound. A cell measured within its budget must not be predicted above
``TIME_REFUSAL_FACTOR`` times it (the model would refuse what the rows show fits: COBS's n > 2,000
sets, where it skips AP and runs 100 times faster than its n <= 2,000 curve): that excess is penalised
a hundredfold, so it wins over the bulk where the two disagree. ``FLOOR`` (0.1 s) is ten ticks of the CPU clock the rows record
(10 ms): below it a factor 2 is clock noise, and no refusal turns on it.

Fit quality (:func:`quality`): the share of uncensored cells whose prediction is within a factor 2 of
the measured median (both clipped at ``FLOOR``); reported overall and for the cells measured at
``FLOOR`` or more.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from .. import registry
from ..specs import TimeModel
from . import protocol
from .results import not_fitted

__all__ = ["FLOOR", "N_REF", "cell_times", "fit_model", "calibrate", "predict_cells", "quality", "declaration",
           "read_rows", "main"]

#: Seconds below which measured and predicted CPU are compared as equal (ten 10-ms clock ticks).
FLOOR = 0.1
#: The n at which a calibrated model states its ``seconds``.
N_REF = 1000
_C = math.log(2.0)  # the Welsch loss's scale: a factor 2
_N_BOUNDS = (0.0, 3.0)  # n's exponent: time does not fall with n, and no method here is worse than cubic (SDP)
_BOUNDS = (-2.0, 3.0)  # the other exponents' range
_LOG_TUNED = (-math.log(10.0), math.log(10.0))  # a tuned fit costs between a tenth and 10 untuned ones
_COLUMNS = ["config_hash", "method.name", "dataset.name", "n_samples", "n_features", "n_must_link", "n_cannot_link",
            "n_clusters_given", "method.n_clusters", "tune", "tune_folds", "tune_fits", "status", "trial_cpu_time",
            "fit_cpu_time", "fit_reused", "trial_timeout", "time_budget", "error"]


def read_rows(path) -> pd.DataFrame:
    """The rows of ``path``: a parquet file, a folder holding ``rows.parquet`` (a shipped leaderboard), or a
    sweep's output folder (every job's ``results.parquet`` under it: :func:`~.results.gather`)."""
    path = Path(path)
    if path.is_dir() and not (path / "rows.parquet").is_file():
        from .results import gather

        try:
            rows = gather(path)
        except FileNotFoundError:
            raise FileNotFoundError(f"no rows under {path}: give a rows .parquet file (e.g. "
                                    f"reports/leaderboard/rows.parquet), the folder holding rows.parquet, or a "
                                    f"sweep's output folder") from None
        return _checked(rows, path)
    if path.is_dir():
        path = path / "rows.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"no rows file at {path}: give a rows .parquet file (e.g. "
                                f"reports/leaderboard/rows.parquet), the folder holding rows.parquet, or a "
                                f"sweep's output folder")
    try:
        rows = pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for one cause
        raise ValueError(f"{path} is not a readable Parquet file ({type(exc).__name__}: {exc}): give the rows "
                         f"file a sweep or a shipped leaderboard wrote") from exc
    return _checked(rows, path)


def _checked(rows: pd.DataFrame, path) -> pd.DataFrame:
    missing = sorted({"config_hash", "method.name", "n_samples", "status", "trial_cpu_time"} - set(rows.columns))
    if missing:
        raise ValueError(f"{path} lacks the columns {missing} a calibration needs: rows written by ccbench's harness "
                         f"(results.parquet, or a leaderboard's rows.parquet) hold them")
    return rows


def _fits(row) -> int:
    """The fits the harness charges a tuned cell (protocol.tuning_fits), or 1 + the recorded tune_fits."""
    if row["tune"] in (None, "none") or (isinstance(row["tune"], float) and math.isnan(row["tune"])):
        return 1
    k = None if pd.isna(row["k"]) else int(row["k"])
    try:
        spec = registry.get_method_spec(row["method"])
        return protocol.tuning_fits(spec, {}, row["tune"], int(row["tune_folds"]), n_clusters=k,
                                    n_samples=int(row["n"]))
    except KeyError:  # a method not installed here: the count its rows recorded
        return 1 + int(row["tune_fits"]) if pd.notna(row["tune_fits"]) else 1


def cell_times(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per cell: method, data set, n, pairs p, k given (NaN: k-free), tune, fits, the measured median CPU
    per trial (``measured``; +inf when censored), ``censored``, ``budget`` (trial_timeout), ``n_trials`` measured
    and ``n_refused``. See the module docstring for what counts."""
    rows = rows.reindex(columns=_COLUMNS)
    # a kill recorded without fitting (another trial's or seed's) is no measurement, and such a job loaded no
    # data (no n, d, k: read as a k-free cell of n = NaN, it broke the fit)
    rows = rows[~not_fitted(rows).to_numpy()]
    reused = rows["fit_reused"].eq(True)
    cpu = np.where(reused, rows["fit_cpu_time"], rows["trial_cpu_time"]).astype(float)
    cpu = np.where(rows["status"].eq("timeout"), np.inf, cpu)
    measured = rows["status"].isin(["ok", "timeout"]) & ~np.isnan(cpu)
    frame = rows.assign(cpu=np.where(measured, cpu, np.nan), pairs=rows["n_must_link"].fillna(0)
                        + rows["n_cannot_link"].fillna(0), refused=rows["status"].eq("refused"))
    # a cell per budget too: a re-run at a larger budget (leaderboard_budget6x) shares the board row's config_hash,
    # and its trials measured to 60 s are not the board's killed at 10 s (one median of both was neither)
    cells = frame.groupby(["config_hash", frame["trial_timeout"].fillna(-1.0)], sort=True).agg(
        method=("method.name", "first"), dataset=("dataset.name", "first"), n=("n_samples", "first"),
        d=("n_features", "first"),
        p=("pairs", "median"), k=("n_clusters_given", "median"), k_config=("method.n_clusters", "first"),
        tune=("tune", "first"), tune_folds=("tune_folds", "first"), tune_fits=("tune_fits", "median"),
        budget=("trial_timeout", "first"), time_budget=("time_budget", "first"),
        measured=("cpu", lambda s: float(np.median(s.dropna())) if s.notna().any() else np.nan),
        n_trials=("cpu", "count"), n_refused=("refused", "sum"))
    # a k-free cell is one whose method config gives no k (a refused row records no k either way)
    cells.loc[cells["k_config"].isna(), "k"] = np.nan
    cells["tune"] = cells["tune"].fillna("none")
    cells["tune_folds"] = cells["tune_folds"].fillna(3)
    cells["fits"] = [_fits(r) for _, r in cells.iterrows()] if len(cells) else []
    cells["censored"] = np.isinf(cells["measured"])
    cells.index = cells.index.get_level_values(0)  # by config_hash; a re-run's cell repeats its board cell's
    return cells.drop(columns=["k_config"])


def _design(cells: pd.DataFrame, with_k: bool, with_d: bool) -> np.ndarray:
    n = cells["n"].to_numpy(float)
    columns = [np.ones(len(cells)), np.log(n / N_REF), np.log1p(cells["p"].to_numpy(float) / n)]
    if with_k:
        columns.append(np.log(cells["k"].to_numpy(float) / TimeModel.K_REF))
    if with_d:
        columns.append(np.log(cells["d"].to_numpy(float) / TimeModel.D_REF))
    return np.column_stack(columns)


def _identifiable(X: np.ndarray) -> np.ndarray:
    """Which columns of ``X`` the cells can identify: the intercept, then each column kept only where it adds to
    the rank of those kept before it. A term the cells do not vary (every cell at the same pairs per point, as a
    pilot at one budget) or vary only together with another (pairs in proportion to n) has no exponent of its
    own to find: it is fixed at 0 and the others carry its effect, where a free exponent would let the fit trade
    it against the intercept without bound (a pilot of 15 PCCC cells fitted seconds = 5e-31 that way)."""
    keep = np.zeros(X.shape[1], dtype=bool)
    keep[0] = True
    for j in range(1, X.shape[1]):
        trial = keep.copy()
        trial[j] = True
        if np.linalg.matrix_rank(X[:, trial]) > keep.sum():
            keep = trial
    return keep


def _bounds(width: int, n_exponents: int, keep: np.ndarray) -> list:
    """The box of each kept coefficient: none on the intercept, _N_BOUNDS on n's exponent, _BOUNDS on the other
    exponents, _LOG_TUNED on the tuned factor."""
    every = [(None, None), _N_BOUNDS] + [_BOUNDS] * (n_exponents - 1) + [_LOG_TUNED] * (width - 1 - n_exponents)
    return [b for b, k in zip(every, keep) if k]


def _welsch_fit(X: np.ndarray, offset: np.ndarray, measured: np.ndarray, censored: np.ndarray, budget: np.ndarray,
                n_exponents: int, bounds: list | None = None) -> np.ndarray:
    """beta minimising the Welsch loss of ``X @ beta + offset`` against log(measured) (module docstring), plus the
    safety term: a cell measured within its budget predicted above TIME_REFUSAL_FACTOR times it would be refused
    by the model although the rows show it fits, so that excess is penalised a hundredfold. ``bounds``: each
    column's box (default: intercept free, then n's exponent, the other exponents, the tuned factor)."""
    from scipy.optimize import lsq_linear, minimize

    y = np.log(np.maximum(np.where(censored, budget, measured), FLOOR))
    ok = ~censored
    bounds = bounds if bounds is not None else _bounds(X.shape[1], n_exponents, np.ones(X.shape[1], dtype=bool))
    lower = np.array([-np.inf if lo is None else lo for lo, _ in bounds])
    upper = np.array([np.inf if hi is None else hi for _, hi in bounds])
    # the start: least squares on the measured cells *within* the bounds, so the intercept answers for a clipped
    # exponent (clipping an unbounded solution afterwards left a pilot's start e^60 off and the robust loss flat)
    start = (lsq_linear(X[ok], np.log(np.maximum(measured[ok], 0.01)) - offset[ok], bounds=(lower, upper)).x
             if ok.sum() >= X.shape[1] else np.clip(np.zeros(X.shape[1]), lower, upper))
    log_floor = math.log(FLOOR)
    fits = ok & (measured <= budget)
    limit = np.log(protocol.TIME_REFUSAL_FACTOR * np.where(np.isfinite(budget), budget, np.inf))

    def loss(beta):
        log_pred = X @ beta + offset
        r = np.maximum(log_pred, log_floor) - y
        r = np.where(censored, np.minimum(r, 0.0), r)  # a lower bound pulls only from below
        refused = np.where(fits, np.maximum(log_pred - limit, 0.0), 0.0)
        return float(np.sum(_C**2 * (1.0 - np.exp(-(r / _C) ** 2))) + 100.0 * np.sum(refused**2))

    best, shift = start, np.r_[0.5, np.zeros(X.shape[1] - 1)]
    for beta0 in (start, start + shift, start - shift):
        result = minimize(loss, beta0, method="Powell", bounds=bounds)
        if loss(result.x) < loss(best):
            best = result.x
    return best


def fit_model(cells: pd.DataFrame) -> TimeModel:
    """The :class:`TimeModel` of one regime from its cells, untuned and tuned together (a tuned cell is
    ``tuned * fits`` untuned trials, ``tuned`` fitted with the rest). ``k_exponent`` and ``features_exponent``
    are fitted only where the cells hold three or more distinct k, d."""
    cells = cells[cells["n_trials"] > 0]
    if cells.empty:
        raise ValueError("no measured cell to fit a time model on (every trial refused, skipped or infeasible)")
    with_k = bool(cells["k"].notna().all() and cells["k"].nunique() >= 3)
    with_d = bool(cells["d"].notna().all() and cells["d"].nunique() >= 3)
    is_tuned = cells["tune"].ne("none").to_numpy()
    X = _design(cells, with_k, with_d)
    n_exponents = X.shape[1] - 1
    if is_tuned.any():
        X = np.column_stack([X, is_tuned.astype(float)])
    offset = np.log(np.where(is_tuned, cells["fits"].to_numpy(float), 1.0))
    keep = _identifiable(X)
    beta = np.zeros(X.shape[1])
    beta[keep] = _welsch_fit(X[:, keep], offset, cells["measured"].to_numpy(float), cells["censored"].to_numpy(bool),
                             cells["budget"].fillna(np.inf).to_numpy(float), int(keep[:1 + n_exponents].sum()) - 1,
                             bounds=_bounds(X.shape[1], n_exponents, keep))
    exponents = iter(beta[2:1 + n_exponents])
    return TimeModel(n=N_REF, seconds=_round(math.exp(beta[0])), exponent=round(float(beta[1]), 2),
                     pairs_exponent=round(float(next(exponents)), 2),
                     k_exponent=round(float(next(exponents)), 2) if with_k else 0.0,
                     features_exponent=round(float(next(exponents)), 2) if with_d else 0.0,
                     tuned=_round(math.exp(beta[-1])) if is_tuned.any() else 1.0)


def _round(x: float) -> float:
    return float(f"{x:.3g}")


def calibrate(cells: pd.DataFrame, methods=None) -> dict[str, TimeModel]:
    """Each method's calibrated model from :func:`cell_times`: given k (or the only regime) outside,
    ``k_free`` inside when the method also ran k-free."""
    models = {}
    for method, own in cells.groupby("method", sort=True):
        if methods and method not in methods:
            continue
        given, free = own[own["k"].notna()], own[own["k"].isna()]
        main = given if given.loc[given["tune"] == "none", "n_trials"].sum() else free
        model = fit_model(main)
        if main is given and free["n_trials"].sum():
            model = dataclasses.replace(model, k_free=fit_model(free))
        models[method] = model
    return models


def _spec(method: str, model: TimeModel | None):
    try:
        spec = registry.get_method_spec(method)
    except KeyError:
        spec = registry.MethodSpec(method, "unknown.module:Unknown", "not installed here",
                                   accepts_n_clusters=model is not None and model.k_free is not None)
    return spec if model is None else dataclasses.replace(spec, time=model)


def predict_cells(cells: pd.DataFrame, models: dict[str, TimeModel] | None = None) -> pd.Series:
    """Each cell's predicted CPU seconds per trial (:func:`ccbench.running.protocol.predicted_seconds`), from
    ``models`` (method -> TimeModel) or, without them, the installed methods' declarations; NaN where none."""
    specs = {m: _spec(m, None if models is None else models.get(m)) for m in cells["method"].unique()}
    values = []
    for c in cells.itertuples():
        spec = specs[c.method]
        if spec.time is None or (models is not None and c.method not in models):
            values.append(np.nan)
            continue
        values.append(protocol.predicted_seconds(spec, int(c.n), int(c.p), None if pd.isna(c.k) else int(c.k),
                                                 int(c.fits), int(c.d)))
    return pd.Series(values, index=cells.index, dtype=float)


def within(predicted, measured, factor: float = 2.0) -> np.ndarray:
    """Whether each prediction is within ``factor`` of its measurement, both clipped below at :data:`FLOOR`."""
    p, m = np.maximum(np.asarray(predicted, float), FLOOR), np.maximum(np.asarray(measured, float), FLOOR)
    return np.abs(np.log(p / m)) <= math.log(factor) + 1e-12


def quality(cells: pd.DataFrame, predicted: pd.Series) -> pd.DataFrame:
    """Per method: ``cells`` (uncensored, measured, predicted), ``within2`` (share within a factor 2),
    ``big`` / ``within2_big`` (the same over cells measured at FLOOR or more), ``censored`` and
    ``censored_ok`` (censored cells predicted at half the budget or more), ``median_ratio``
    (median predicted / measured over the big cells)."""
    frame = cells.assign(pred=predicted)
    out = []
    for method, c in frame.groupby("method", sort=True):
        c = c[c["pred"].notna() & (c["n_trials"] > 0)]
        meas, cens = c[~c["censored"]], c[c["censored"]]
        big = meas[meas["measured"] >= FLOOR]
        ratio = float(np.median(big["pred"] / big["measured"])) if len(big) else np.nan
        out.append({"method": method, "cells": len(meas), "within2": float(within(meas["pred"], meas["measured"]).mean())
                    if len(meas) else np.nan, "big": len(big),
                    "within2_big": float(within(big["pred"], big["measured"]).mean()) if len(big) else np.nan,
                    "censored": len(cens), "censored_ok": int((cens["pred"] >= cens["budget"] / 2).sum()),
                    "median_ratio": ratio})
    return pd.DataFrame(out).set_index("method") if out else pd.DataFrame()


def declaration(model: TimeModel) -> str:
    """The ``TimeModel(...)`` expression to paste into a plugin's MethodSpec (optional terms only when set)."""
    def one(m: TimeModel) -> str:
        extra = [f"pairs_exponent={m.pairs_exponent:g}" if m.pairs_exponent else "",
                 f"k_exponent={m.k_exponent:g}" if m.k_exponent else "",
                 f"features_exponent={m.features_exponent:g}" if m.features_exponent else "",
                 f"tuned={m.tuned:g}" if m.tuned != 1.0 else "",
                 f"k_free={one(m.k_free)}" if m.k_free is not None else ""]
        return f"TimeModel(n={m.n}, seconds={m.seconds:g}, exponent={m.exponent:g}" + "".join(
            f", {e}" for e in extra if e) + ")"
    return one(model)


def _overall(cells: pd.DataFrame, predicted: pd.Series) -> dict:
    ok = predicted.notna() & (cells["n_trials"] > 0) & ~cells["censored"]
    big = ok & (cells["measured"] >= FLOOR)
    def share(mask) -> float:  # NaN for no cell (no declared model), without numpy's empty-mean warning
        return float(within(predicted[mask], cells.loc[mask, "measured"]).mean()) if mask.any() else math.nan

    return {"cells": int(ok.sum()), "within2": share(ok), "big": int(big.sum()), "within2_big": share(big)}


def main(args) -> int:
    """``ccbench time-models ROWS [--method M] [--json OUT]``: refit and print every method's model."""
    rows = read_rows(args.rows)
    registry.load_plugins(getattr(args, "plugin", None) or [])
    methods = set(args.method or [])
    unknown = methods - set(rows["method.name"].unique())
    if unknown:
        raise ValueError(f"--method {sorted(unknown)}: no rows of that method in {args.rows} "
                         f"(it holds {sorted(rows['method.name'].unique())})")
    cells = cell_times(rows if not methods else rows[rows["method.name"].isin(methods)])
    models = calibrate(cells)
    before, after = predict_cells(cells), predict_cells(cells, models)
    q_before, q_after = quality(cells, before), quality(cells, after)
    report = {}
    for method, model in models.items():
        qa = q_after.loc[method]
        qb = q_before.loc[method] if method in q_before.index else None
        spec = _spec(method, None)
        old = "none declared" if spec.time is None else (
            f"{declaration(spec.time)}: within 2x {qb['within2']:.0%} of {int(qb['cells'])} cells "
            f"({qb['within2_big']:.0%} of {int(qb['big'])} at >= {FLOOR:g} s), predicted/measured x{qb['median_ratio']:.2g}")
        print(f"{method}\n  declared:   {old}\n  calibrated: within 2x {qa['within2']:.0%} of {int(qa['cells'])} cells "
              f"({qa['within2_big']:.0%} of {int(qa['big'])} at >= {FLOOR:g} s), predicted/measured "
              f"x{qa['median_ratio']:.2g}; censored cells predicted >= budget/2: {int(qa['censored_ok'])} of "
              f"{int(qa['censored'])}\n  paste:      time={declaration(model)},")
        report[method] = {"model": dataclasses.asdict(model), "declaration": declaration(model),
                          "after": {k: _plain(v) for k, v in qa.items()},
                          "before": None if qb is None else {k: _plain(v) for k, v in qb.items()}}
    print(f"overall: declared {_fmt(_overall(cells, before))}; calibrated {_fmt(_overall(cells, after))}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": str(args.rows), "floor_s": FLOOR, "methods": report,
                                               "overall": {"declared": _overall(cells, before),
                                                           "calibrated": _overall(cells, after)}}, indent=1))
    return 0


def _fmt(o: dict) -> str:
    if not o["cells"]:
        return "no cell has a prediction"
    return f"within 2x {o['within2']:.1%} of {o['cells']} cells ({o['within2_big']:.1%} of {o['big']} at >= {FLOOR:g} s)"


def _plain(v):
    return None if isinstance(v, float) and math.isnan(v) else (v.item() if hasattr(v, "item") else v)


def add_parser(sub) -> None:
    """The ``time-models`` subcommand of ``ccbench`` (see :mod:`ccbench.running.cli`)."""
    p = sub.add_parser("time-models", help="refit every method's TimeModel from a rows file and print the "
                                           "declarations (harness calibration: what the time budget refuses)")
    p.add_argument("rows", help="a rows .parquet file or a folder holding rows.parquet (reports/leaderboard)")
    p.add_argument("--method", action="append", metavar="M", help="only this method (repeatable)")
    p.add_argument("--json", default=None, metavar="OUT", help="also write the models and their fit quality as JSON")
    p.add_argument("--plugin", action="append", metavar="MODULE", help="extra plugin module to load first")
    p.set_defaults(func=main)
