"""The leaderboard's long frame: one row per trial with its kind, cell, budget, noise and family, and the
per-cell means every ranking starts from.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._format import K_FREE, fmt, key_values, method_labels, per_distinct_row
from ...running.results import NOT_FITTED, not_fitted as not_fitted_mask  # a predicted kill: scored nowhere
from ._rerun_rows import rerun_mask  # a larger-budget re-run of a board row never replaces it
from ..stats import (
    _sign,
)

__all__ = ["KINDS", "BUDGET", "UNCONSTRAINED", "DEFAULT_METRIC", "CELL", "N_BOOT", "CI", "long_frame", "completed",
           "cell_means", "attempted_cells", "cell_table", "main_methods", "TRIAL_KEYS", "MEASURED_FAILURES",
           "NOT_MEASURED", "CONVENTIONS", "DEFAULT_CONVENTION", "unmeasured_cells", "RankedMetric", "ranked_metric",
           "ranked_long_frame", "NOT_FITTED", "not_fitted_mask", "not_fitted_frame", "not_fitted_counts", "NOT_FITTED_STATUS",
           "split_not_fitted"]

#: The supervision kind of each constraint scheme. ``pccc_pairs`` is PCCC's own scheme (the reference board's
#: track: C(ceil(f n), 2) random pairs over all points), apart from ``pairs`` (round(f n) pairs: a curve over
#: other budgets) and ``dense_pairs`` (every pair among f n points), whose budgets mean other things.
KINDS = {"pairs": ("random_pairs", "per_class_pairs"), "dense_pairs": ("fraction_pairs", "pccc_file"),
         "labels": ("labeled_subsets",), "pccc_pairs": ("pccc_random_pairs",)}


#: The column that holds each scheme's supervision budget.
# random_pairs' budget is constraints.per_point instead where that is set (pairs per point)
BUDGET = {"random_pairs": "constraints.n_constraints", "per_class_pairs": "constraints.n_pairs",
          "labeled_subsets": "constraints.per_class", "fraction_pairs": "constraints.fraction",
          "pccc_file": "constraints.fraction", "pccc_random_pairs": "constraints.fraction"}


UNCONSTRAINED = "none"


DEFAULT_METRIC = "ari"


class RankedMetric(str):
    """A metric's name with its direction resolved once: ``sign`` = +1 where higher is better, -1 where
    lower is (:func:`ccbench.reporting.stats._sign`; a metric without a direction is refused there, named).

    The choice: made where the long frame is built (:func:`ranked_long_frame`, in ``write_leaderboard`` and
    the site) and passed on, so no ranking looks the direction up again from the name; the rankings read
    ``.sign``. A function also called with a plain name (a test, a caller outside the pages) resolves it
    itself (:func:`ranked_metric`: no look-up for a metric resolved already). It is the name itself (a ``str``): every text, dict key and column
    made from it on the pages is the plain name's, unchanged."""

    sign: float

    def __new__(cls, name: str) -> "RankedMetric":
        self = super().__new__(cls, name)
        self.sign = _sign(name)
        return self


def ranked_metric(metric: str) -> RankedMetric:
    """``metric`` itself when its direction is resolved already, else its name resolved (a caller outside
    the pages, e.g. a test, passes the name)."""
    return metric if isinstance(metric, RankedMetric) else RankedMetric(metric)


CELL = ["dataset", "setting", "budget", "noise"]


# Columns that name a cell, not a setting of it (the setting is what else varies: preprocessing, evaluate_on).
_NOT_SETTING = {"dataset.name", "constraints.name", "noise.name", "noise.rate", "constraints.per_point",
                *BUDGET.values()}


_SETTING_PREFIXES = ("dataset.", "constraints.", "evaluate_on")


# What defines "the same data, setting and trial" across supervision kinds: the data set's options and
# evaluate_on, never a constraints key (``constraints.small_classes=all`` is on the labeled rows only,
# and an unconstrained run has no scheme options at all).
_DATA_SETTING_PREFIXES = ("dataset.", "evaluate_on")


#: The join of a supervised trial with the same method's unconstrained run (hurt share) or with the
#: baseline's row of another cell (gains): data set, its options and evaluate_on (``data_setting``),
#: and the trial index (``trial_seed`` is per cell; the trial index is what the cells share).
TRIAL_KEYS = ["dataset", "data_setting", "trial"]


N_BOOT = 2000


#: Statuses that are a measured failure: the trial ran and failed (the CPU-time kill, an error, a measured
#: memory limit, contradictory constraints). They rank last and score as the one-cluster partition.
MEASURED_FAILURES = ("timeout", "error", "infeasible")

#: Statuses that are no measurement: a refusal is the method's ``TimeModel``/``MemoryModel`` *predicting*
#: that the trial would exceed the budget (issue 50, item 3: those models are off by large factors); a
#: skipped draw is one the method cannot take (``cop_kmeans_xing`` on a draw with no cannot-link: item 6);
#: ``not_found`` is a job with no row. None is a result of the method.
NOT_MEASURED = ("refused", "skipped", "not_found")

#: The long frame's status of a row recorded as ``timeout`` without fitting, where it is kept (counted apart).
NOT_FITTED_STATUS = "timeout (not fitted)"

#: The two failure conventions. ``missing`` (the default): a (cell, method) with a :data:`NOT_MEASURED`
#: trial is missing (not ranked, no score there); only a measured failure ranks last / scores as a
#: failure. ``last``: every trial that is not ``ok`` counts as a failure (the convention before issue 50).
#: A status in neither list (a stranger's rows) counts as a measured failure under both: no result is
#: dropped silently.
CONVENTIONS = ("missing", "last")

DEFAULT_CONVENTION = "missing"


CI = 0.95


def _noise_text(data: pd.DataFrame) -> pd.Series:
    """``name=rate`` and, in parentheses, every other ``noise.*`` option a row has (``pccc_confidence(low=0.8)``):
    two noise settings that differ in any option are two cells."""
    name = data["noise.name"].astype(str) if "noise.name" in data else pd.Series("none", index=data.index)
    rate = data["noise.rate"] if "noise.rate" in data else pd.Series(np.nan, index=data.index)
    text = name + rate.map(lambda r: "" if pd.isna(r) else f"={fmt(r)}")
    options = sorted(c for c in data.columns if c.startswith("noise.") and c not in ("noise.name", "noise.rate"))
    if options:
        extra = per_distinct_row(data[options].rename(columns=lambda c: c.removeprefix("noise.")),
                                 lambda r: key_values(r, skip_missing=True))
        text = text + pd.Series(extra, index=data.index).map(lambda e: f"({e})" if e else "")
    return text.where(name != "none", "none")


def _setting_text(data: pd.DataFrame, prefixes: tuple = _SETTING_PREFIXES) -> pd.Series:
    """What else varies within a data set's rows (``evaluate_on``, preprocessing), as ``key=value`` text;
    per data set, so an option only some sets have (``dataset.missing``) splits nothing."""
    cols = [c for c in data.columns if c.startswith(prefixes) and c not in _NOT_SETTING]
    text = pd.Series("", index=data.index, dtype=object)
    for _, rows in data.groupby("dataset.name", sort=False):
        varying = [c for c in cols if rows[c].astype(str).nunique(dropna=False) > 1]
        if varying:
            text[rows.index] = per_distinct_row(rows[varying], lambda r: key_values(r, skip_missing=True))
    return text


def _unsupervised(labels: pd.Series, names: pd.Series) -> dict:
    """{method label: True when its method declares no supervision}; a method not installed here
    counts as supervised (it cannot be a baseline unless its spec says so)."""
    from ... import registry

    out = {}
    for label, name in zip(labels, names):
        if label in out:
            continue
        try:
            out[label] = not registry.get_method_spec(str(name)).supervision
        except Exception:  # noqa: BLE001 - a report must open without the method's package
            out[label] = False
    return out


def _families(names: pd.Series) -> dict:
    """{method name: its family}: the plugin package its estimator lives in (``ccbench_plugins.affinity.ap``
    -> ``affinity``; a third-party package's top-level name), ``?`` for a method not installed here."""
    from ... import registry

    out = {}
    for name in pd.unique(names.astype(str)):
        try:
            module = registry.get_method_spec(name).estimator.__module__.split(".")
        except Exception:  # noqa: BLE001 - a report must open without the method's package
            out[name] = "?"
            continue
        out[name] = module[1] if module[0] == "ccbench_plugins" and len(module) > 1 else module[0]
    return out


def not_fitted_frame(data: pd.DataFrame, metric: str = DEFAULT_METRIC) -> pd.DataFrame:
    """The rows :func:`ranked_long_frame` leaves out as not fitted (those that are a trial's last row), as its
    long frame with the status ``timeout (not fitted)``: what the pages count apart."""
    return split_not_fitted(ranked_long_frame(data, metric, keep_not_fitted=True)[0])[1]


def split_not_fitted(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A ``keep_not_fitted`` long frame as (the frame every ranking reads, its not-fitted rows): one pass for both."""
    unfitted = frame["status"].eq(NOT_FITTED_STATUS)
    return frame[~unfitted].reset_index(drop=True), frame[unfitted].reset_index(drop=True)


def not_fitted_counts(unfitted: pd.DataFrame | None, kind: str, seed=None) -> pd.Series:
    """Per method: ``kind``'s rows of :func:`not_fitted_frame` (at base seed ``seed``; every seed when None)."""
    if unfitted is None or unfitted.empty:
        return pd.Series(dtype=int)
    unfitted = _of_kind(unfitted, kind)
    if seed is not None:
        unfitted = unfitted[unfitted["seed"] == seed]
    return unfitted.groupby("method").size()


def long_frame(data: pd.DataFrame, metric: str = DEFAULT_METRIC) -> pd.DataFrame:
    """:func:`ranked_long_frame`'s frame."""
    return ranked_long_frame(data, metric)[0]


def ranked_long_frame(data: pd.DataFrame, metric: str = DEFAULT_METRIC,
                      keep_not_fitted: bool = False) -> tuple[pd.DataFrame, RankedMetric]:
    """The long frame of ``data`` on ``metric``, and ``metric`` with its direction resolved
    (:class:`RankedMetric`): what the pages pass on to every ranking.

    The frame: one row per trial: ``kind`` (pairs, labels, or ``both`` for ``constraints=none``), ``dataset``,
    ``setting``, ``budget``, ``noise``, ``method``, ``trial``, ``status``, ``value`` (``metric`` of an
    ok trial, else NaN), ``fit_time``, ``peak_rss_mb``, ``fit_rss_mb``, ``unconstrained``,
    ``unsupervised``, ``family`` (:func:`_families`), ``fit_key`` (the shared unsupervised fit an ok row
    re-scored, else None), ``row`` (the row's position in ``data``), ``n_samples`` (the data set's size,
    for the size classes; NaN without it), ``seed`` (the base seed: the headline pools every seed, the
    ranks rank the smallest, :mod:`.seeds` compares the others).

    Rows of other schemes (``csv``-style custom ones) are left out; a duplicate
    (cell, method, trial) keeps its last row (a resumed sweep re-ran it), except that a re-run at a larger
    budget (:func:`~._rerun_rows.rerun_mask`) is left out: it feeds the budget-sensitivity section only.
    A trial whose last row is recorded as ``timeout`` without fitting (:data:`NOT_FITTED`, :func:`not_fitted_mask`)
    is left out after that: no ranking or score counts a predicted kill (``keep_not_fitted``: kept, with the
    status :data:`NOT_FITTED_STATUS`, for the pages to count apart).
    """
    if data.empty:
        raise ValueError("no results for a leaderboard")
    if metric not in data:
        known = [c for c in data.columns if pd.api.types.is_numeric_dtype(data[c])]
        raise ValueError(f"metric {metric!r} is not a results column; numeric columns: {known}")
    ranked = ranked_metric(metric)  # an unranked metric has no leaderboard: say so now
    data = data.reset_index(drop=True)
    scheme = data["constraints.name"].astype(str)
    kind = pd.Series(None, index=data.index, dtype=object)
    for k, schemes in KINDS.items():
        kind[scheme.isin(schemes)] = k
    kind[scheme == UNCONSTRAINED] = "both"
    budget = pd.Series(0.0, index=data.index)
    for s, col in BUDGET.items():
        if col in data:
            budget[scheme == s] = pd.to_numeric(data.loc[scheme == s, col], errors="coerce")
    if "constraints.per_point" in data:  # a budget that scales with n (pairs per point) wins
        per_point = pd.to_numeric(data["constraints.per_point"], errors="coerce")
        budget = budget.where(per_point.isna() | (scheme != "random_pairs"), per_point)
    labels = data["method_label"] if "method_label" in data else method_labels(data)
    ok = data["status"].eq("ok")
    out = pd.DataFrame({
        "kind": kind, "dataset": data["dataset.name"].astype(str), "setting": _setting_text(data),
        "budget": budget, "noise": _noise_text(data), "method": labels.astype(str),
        "trial": data["trial"].astype(int), "status": data["status"].astype(str),
        "value": pd.to_numeric(data[metric], errors="coerce").where(ok),
        "fit_time": pd.to_numeric(data.get("fit_time", pd.Series(np.nan, index=data.index)), errors="coerce").where(ok),
        **{c: pd.to_numeric(data.get(c, pd.Series(np.nan, index=data.index)), errors="coerce").where(ok)
           for c in ("peak_rss_mb", "fit_rss_mb")},
    })
    out["unconstrained"] = (scheme == UNCONSTRAINED) | (budget == 0)
    out["data_setting"] = _setting_text(data, _DATA_SETTING_PREFIXES)
    tune = data["tune"].astype(str) if "tune" in data else pd.Series("none", index=data.index)
    tuned = ~tune.isin(["none", "nan", "None", ""])
    suffix = "+" + tune  # the label's suffix: +cvcp, or +cvcp(folds=2) off the default folds
    out["default_method"] = [lab[: lab.rfind(suf)] if t and lab.rfind(suf) > 0 else lab
                             for lab, t, suf in zip(out["method"], tuned, suffix)]
    out["tuned"] = tuned.to_numpy() & (out["default_method"] != out["method"]).to_numpy()
    # the k-free track (issue 38): ``ap[k-free]`` is compared with ``ap`` (given the true k), not ranked
    out["k_free"] = out["default_method"].str.endswith(K_FREE)
    out["k_free_of"] = out["default_method"].str.removesuffix(K_FREE).where(out["k_free"])
    out["method_name"] = data["method.name"].astype(str)
    # the shared unsupervised fit a row re-scored (share_unsupervised_fits): one fit, however many rows carry it
    out["fit_key"] = data["fit_key"].where(ok & data["fit_key"].notna(), None) if "fit_key" in data else None
    out["tuned_params"] = data["tuned_params"] if "tuned_params" in data else None
    out["row"] = data.index  # back to the full row (provenance, error messages)
    out["n_samples"] = pd.to_numeric(data["n_samples"], errors="coerce") if "n_samples" in data else np.nan
    out["seed"] = pd.to_numeric(data["seed"], errors="coerce").fillna(0).astype(int) if "seed" in data else 0
    flags = _unsupervised(labels, data["method.name"])
    # a tuned variant chose its parameters from the supervision (CVCP): no unsupervised baseline
    out["unsupervised"] = out["method"].map(flags).astype(bool) & ~out["tuned"]
    out["family"] = data["method.name"].astype(str).map(_families(data["method.name"]))
    if "timestamp" in data:
        out = out.iloc[np.argsort(data["timestamp"].astype(str).to_numpy(), kind="stable")]
    out = out[out["kind"].notna() & ~rerun_mask(data).reindex(out.index).to_numpy()]
    out = out.drop_duplicates([*CELL, "kind", "method", "seed", "trial"], keep="last")
    unfitted = not_fitted_mask(data).reindex(out["row"]).to_numpy()
    if keep_not_fitted:
        out.loc[unfitted, "status"] = NOT_FITTED_STATUS
    else:
        out = out[~unfitted]
    return out.reset_index(drop=True), ranked


def _of_kind(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """The rows of ``kind``: its schemes' rows and the shared ``constraints=none`` rows."""
    return frame[frame["kind"].isin([kind, "both"])]


def _cells(frame: pd.DataFrame) -> pd.DataFrame:
    """The ranking cells' rows: supervised budgets only (an unconstrained run ranks nothing), and
    only methods with some row that is not ``skipped``: a variant every one of whose trials was
    skipped by design (``ap+cvcp``: nothing to tune) is no entry; section 7 still counts its rows."""
    supervised = frame[~frame["unconstrained"]]
    ran = supervised["status"].ne("skipped").groupby(supervised["method"]).transform("any")
    return supervised[ran.astype(bool)]


def _worst_status(frame: pd.DataFrame, keys: list) -> pd.Series:
    """Per group of ``keys``: the most common status other than ok (the first by name on a tie, as
    ``Series.mode``); absent where every row is ok."""
    bad = frame.loc[frame["status"].ne("ok").fillna(True).astype(bool), [*keys, "status"]].astype({"status": str})
    counts = bad.groupby([*keys, "status"]).size().rename("n").reset_index()
    counts = counts.sort_values(["n", "status"], ascending=[False, True], kind="stable")
    return counts.drop_duplicates(keys).set_index(keys)["status"]


def completed(frame: pd.DataFrame) -> pd.DataFrame:
    """Index cells, columns methods: True where every trial of the method in the cell is ``ok``
    (False where some is not; absent where the method has no row in the cell)."""
    ok = frame["status"].eq("ok").fillna(False).astype(bool)
    return ok.groupby([frame[c] for c in [*CELL, "method"]]).all().unstack("method")


def cell_means(frame: pd.DataFrame) -> pd.DataFrame:
    """Index cells, columns methods: the metric's mean over the trials of a completed cell, NaN elsewhere."""
    means = frame.groupby([*CELL, "method"])["value"].mean().unstack("method")
    done = completed(frame).reindex_like(means).fillna(False).astype(bool)
    return means.where(done)


def unmeasured_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Index cells, columns methods: True where some trial of the method in the cell is
    :data:`NOT_MEASURED` (refused by a prediction, skipped, not found): under the ``missing`` convention
    the cell is missing for the method, neither ranked nor scored. A cell that mixes such a trial with a
    measured failure is missing too (its mean would be over the draws that were run; none in the
    shipped rows: a refusal is per method and data set). Absent where the method has no row."""
    return frame.assign(_nm=frame["status"].isin(NOT_MEASURED)).groupby([*CELL, "method"])["_nm"].any().unstack("method")


def _missing_mask(unmeasured: pd.DataFrame | None, like: pd.DataFrame) -> np.ndarray:
    if unmeasured is None:
        return np.zeros(like.shape, dtype=bool)
    return unmeasured.reindex(index=like.index, columns=like.columns).fillna(False).astype(bool).to_numpy()


def _worst_filled(means: pd.DataFrame, metric: RankedMetric, attempted: pd.DataFrame | None = None,
                  unmeasured: pd.DataFrame | None = None) -> pd.DataFrame:
    """Convention (b): a cell a method did not complete holds a value worse than any real one, so it
    ranks last there (several such methods tie for last). With ``attempted`` (cells x methods, True
    where the method has rows in the cell), a cell outside the method's grid stays NaN: a variant the
    experiment runs on some cells only (a tuned one) is not ranked last where it was never asked. With
    ``unmeasured`` (:func:`unmeasured_cells`), the ``missing`` convention: a cell whose failure is no
    measurement (refused, skipped) stays NaN too, so only measured failures rank last; without it every
    failure ranks last (the ``last`` convention)."""
    sign = metric.sign
    finite = means.to_numpy(float)
    finite = finite[np.isfinite(finite)]
    worst = -sign if not finite.size else (  # nobody completed anything: every method ties for last
        finite.min() - (finite.max() - finite.min() + 1.0) if sign > 0 else finite.max() + (finite.max() - finite.min() + 1.0))
    filled = means.fillna(worst).mask(_missing_mask(unmeasured, means) & means.isna().to_numpy())
    return filled if attempted is None else filled.where(attempted.reindex_like(means).fillna(False).astype(bool))


def attempted_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Index cells, columns methods: True where the method has any row (of any status) in the cell."""
    return completed(frame).notna()


def main_methods(frame: pd.DataFrame) -> list:
    """The methods every ranking ranks: each method at its defaults, not a tuned variant (``name+tuner``,
    compared with its own default separately), and given the true k where it can take one: a k-free run
    (``ap[k-free]``) beside the same method given k is the k-free track, compared with it separately;
    sorted."""
    tuned = frame.groupby("method")["tuned"].any() if "tuned" in frame else pd.Series(False, index=[])
    methods = set(pd.unique(frame["method"]))
    k_free = set()
    if "k_free" in frame:
        pairs = frame.loc[frame["k_free"], ["method", "k_free_of"]].drop_duplicates()
        k_free = {m for m, given in pairs.itertuples(index=False) if given in methods}
    return sorted(m for m in methods if not bool(tuned.get(m, False)) and m not in k_free)


def cell_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Every (cell, method) of the ranking cells, in long form: ``mean`` (the metric over the cell's ok
    trials), ``n_trials`` (rows), ``n_ok``, ``status`` (``completed`` when every trial is ok, else the
    most common other status), ``main`` (ranked in section 1) -- enough to recompute the ranks: pivot
    the completed main rows to cells x methods and rank per cell (:func:`rank_table`), a cell whose status
    is in :data:`NOT_MEASURED` missing and any other failure last (the default convention)."""
    cols = [*CELL, "method", "mean", "n_trials", "n_ok", "status", "main"]
    if frame.empty:
        return pd.DataFrame(columns=cols)
    main = set(main_methods(frame))
    keys = [*CELL, "method"]
    g = frame.groupby(keys)
    out = pd.DataFrame({"mean": g["value"].mean(), "n_trials": g.size(),
                        "n_ok": frame["status"].eq("ok").astype(int).groupby([frame[c] for c in keys]).sum(),
                        "status": _worst_status(frame, keys)}).reset_index()
    out["status"] = out["status"].fillna("completed")
    out["mean"] = out["mean"].where(out["status"] == "completed")
    out["main"] = out["method"].isin(main)
    return out[cols]
