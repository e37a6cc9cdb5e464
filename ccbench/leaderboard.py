"""The leaderboard: one ranking page per supervision kind (pairs, labels) over many data sets.

``ccbench report DIR --leaderboard --out reports/leaderboard`` writes, per kind,
``<kind>.md`` (with PNG figures beside it) and ``<kind>.html`` (figures embedded,
opens offline), plus ``index.md`` and ``leaderboard.parquet`` (every number of the
pages in long form). Each page holds:

1. average ranks over *cells* (data set x budget x noise x setting) on one metric
   (default ``ari``), ranked two ways (see *Scale honesty*), with a
   critical-difference diagram (:func:`ccbench.stats.cd_diagram`: Friedman blocks
   are the cells, Nemenyi's test between methods);
2. a win/tie/loss matrix over all pairs of methods (:func:`win_tie_loss_cells`), and the cells
   where nothing beats a method (:func:`unbeaten`; for ``cobs``: where no semi-supervised method
   is better than choosing among unsupervised clusterings by the constraints);
3. per data set, the gain of every supervised method over the best unsupervised
   baseline, with a bootstrap 95 % confidence interval (:func:`gains`);
4. the share of trials in which the supervision made a method worse than its own
   unconstrained run (:func:`hurt_share`);
5. what noise does: each noisy cell against the method's noiseless twin, per method and
   family, with bootstrap intervals (:func:`noise_effect`);
6. fit time and peak memory beside quality, and a quality-vs-time scatter plot;
7. per method the count of every status, and the ranking both ways;

then the failure messages and the provenance (machines, code) of the kind's rows.
Plain ``ccbench report DIR`` writes the leaderboard when the cells' ``paper`` block
holds ``leaderboard: {metric: ..., margin: ...}`` (:func:`config_request`).

Definitions (every one is stated on the page as well):

- *kind*: the constraint scheme's: ``random_pairs`` and ``per_class_pairs`` are
  pairs, ``labeled_subsets`` labels. The *budget* is the scheme's size key
  (:data:`BUDGET`).
- *unconstrained run*: a row with ``constraints=none`` or budget 0 (``n_constraints=0``,
  ``per_class=0``); ``constraints=none`` rows serve both kinds. These rows are no
  ranking cell (nothing supervises them): they are the reference of item 4.
- *method*: the report's method label (:func:`ccbench.report.method_labels`, with a
  tuned variant as ``name+tuner``, e.g. ``pck_means+cvcp``).
- *completed cell*: every trial of the method in that cell has status ``ok`` (a
  mean over the trials that survived a time limit would be over easier draws).
- *unsupervised*: a method whose :class:`~ccbench.specs.MethodSpec` declares no
  supervision (``kmeans``, ``ap``, ``ncuts``, ``kmedoids``, ``scap``).
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from . import report, stats
from .results import STATUSES, write_results

__all__ = [
    "KINDS",
    "BUDGET",
    "DEFAULT_METRIC",
    "long_frame",
    "cell_means",
    "completed",
    "rank_table",
    "win_tie_loss_cells",
    "bootstrap_ci",
    "unbeaten",
    "noise_effect",
    "gains",
    "hurt_share",
    "status_counts",
    "cost_table",
    "ranks_by_condition",
    "config_request",
    "write_leaderboard",
]

#: The supervision kind of each constraint scheme.
KINDS = {"pairs": ("random_pairs", "per_class_pairs"), "labels": ("labeled_subsets",)}
#: The column that holds each scheme's supervision budget.
# random_pairs' budget is constraints.per_point instead where that is set (pairs per point)
BUDGET = {"random_pairs": "constraints.n_constraints", "per_class_pairs": "constraints.n_pairs",
          "labeled_subsets": "constraints.per_class"}
UNCONSTRAINED = "none"
DEFAULT_METRIC = "ari"
CELL = ["dataset", "setting", "budget", "noise"]
# Columns that name a cell, not a setting of it (the setting is what else varies: preprocessing, evaluate_on).
_NOT_SETTING = {"dataset.name", "constraints.name", "noise.name", "noise.rate", "constraints.per_point",
                *BUDGET.values()}
_SETTING_PREFIXES = ("dataset.", "constraints.", "evaluate_on")
N_BOOT = 2000
CI = 0.95


# -- the long frame -----------------------------------------------------------------------


def _noise_text(data: pd.DataFrame) -> pd.Series:
    name = data["noise.name"].astype(str) if "noise.name" in data else pd.Series("none", index=data.index)
    rate = data["noise.rate"] if "noise.rate" in data else pd.Series(np.nan, index=data.index)
    text = name + rate.map(lambda r: "" if pd.isna(r) else f"={report._fmt(r)}")
    return text.where(name != "none", "none")


def _setting_text(data: pd.DataFrame) -> pd.Series:
    """What else varies within a data set's rows (``evaluate_on``, preprocessing), as ``key=value`` text;
    per data set, so an option only some sets have (``dataset.missing``) splits nothing."""
    cols = [c for c in data.columns if c.startswith(_SETTING_PREFIXES) and c not in _NOT_SETTING]
    text = pd.Series("", index=data.index, dtype=object)
    for _, rows in data.groupby("dataset.name", sort=False):
        varying = [c for c in cols if rows[c].astype(str).nunique(dropna=False) > 1]
        if varying:
            text[rows.index] = rows[varying].apply(
                lambda r: ", ".join(f"{c}={report._fmt(v)}" for c, v in r.items() if pd.notna(v)), axis=1)
    return text


def _unsupervised(labels: pd.Series, names: pd.Series) -> dict:
    """{method label: True when its method declares no supervision}; a method not installed here
    counts as supervised (it cannot be a baseline unless its spec says so)."""
    from . import registry

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
    from . import registry

    out = {}
    for name in pd.unique(names.astype(str)):
        try:
            module = registry.get_method_spec(name).estimator.__module__.split(".")
        except Exception:  # noqa: BLE001 - a report must open without the method's package
            out[name] = "?"
            continue
        out[name] = module[1] if module[0] == "ccbench_plugins" and len(module) > 1 else module[0]
    return out


def long_frame(data: pd.DataFrame, metric: str = DEFAULT_METRIC) -> pd.DataFrame:
    """One row per trial: ``kind`` (pairs, labels, or ``both`` for ``constraints=none``), ``dataset``,
    ``setting``, ``budget``, ``noise``, ``method``, ``trial``, ``status``, ``value`` (``metric`` of an
    ok trial, else NaN), ``fit_time``, ``peak_rss_mb``, ``fit_rss_mb``, ``unconstrained``,
    ``unsupervised``, ``family`` (:func:`_families`), ``row`` (the row's position in ``data``).

    Rows of other schemes (``csv``-style custom ones) are left out; a duplicate
    (cell, method, trial) keeps its last row (a resumed sweep re-ran it).
    """
    if data.empty:
        raise ValueError("no results for a leaderboard")
    if metric not in data:
        known = [c for c in data.columns if pd.api.types.is_numeric_dtype(data[c])]
        raise ValueError(f"metric {metric!r} is not a results column; numeric columns: {known}")
    stats._sign(metric)  # an unranked metric has no leaderboard: say so now
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
    labels = data["method_label"] if "method_label" in data else report.method_labels(data)
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
    out["row"] = data.index  # back to the full row (provenance, error messages)
    flags = _unsupervised(labels, data["method.name"])
    out["unsupervised"] = out["method"].map(flags).astype(bool)
    out["family"] = data["method.name"].astype(str).map(_families(data["method.name"]))
    if "timestamp" in data:
        out = out.iloc[np.argsort(data["timestamp"].astype(str).to_numpy(), kind="stable")]
    out = out[out["kind"].notna()]
    return out.drop_duplicates([*CELL, "kind", "method", "trial"], keep="last").reset_index(drop=True)


def _of_kind(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """The rows of ``kind``: its schemes' rows and the shared ``constraints=none`` rows."""
    return frame[frame["kind"].isin([kind, "both"])]


def _cells(frame: pd.DataFrame) -> pd.DataFrame:
    """The ranking cells' rows: supervised budgets only (an unconstrained run ranks nothing), and
    only methods with some row that is not ``skipped``: a variant every one of whose trials was
    skipped by design (``ap+cvcp``: nothing to tune) is no entry; section 7 still counts its rows."""
    supervised = frame[~frame["unconstrained"]]
    ran = supervised.groupby("method")["status"].transform(lambda s: bool((s != "skipped").any()))
    return supervised[ran.astype(bool)]


# -- per cell -----------------------------------------------------------------------------


def completed(frame: pd.DataFrame) -> pd.DataFrame:
    """Index cells, columns methods: True where every trial of the method in the cell is ``ok``
    (False where some is not; absent where the method has no row in the cell)."""
    return frame.groupby([*CELL, "method"])["status"].agg(lambda s: bool((s == "ok").all())).unstack("method")


def cell_means(frame: pd.DataFrame) -> pd.DataFrame:
    """Index cells, columns methods: the metric's mean over the trials of a completed cell, NaN elsewhere."""
    means = frame.groupby([*CELL, "method"])["value"].mean().unstack("method")
    done = completed(frame).reindex_like(means).fillna(False).astype(bool)
    return means.where(done)


def _worst_filled(means: pd.DataFrame, metric: str, attempted: pd.DataFrame | None = None) -> pd.DataFrame:
    """Convention (b): a cell a method did not complete holds a value worse than any real one, so it
    ranks last there (several such methods tie for last). With ``attempted`` (cells x methods, True
    where the method has rows in the cell), a cell outside the method's grid stays NaN: a variant the
    experiment runs on some cells only (a tuned one) is not ranked last where it was never asked."""
    sign = stats._sign(metric)
    finite = means.to_numpy(float)
    finite = finite[np.isfinite(finite)]
    worst = -sign if not finite.size else (  # nobody completed anything: every method ties for last
        finite.min() - (finite.max() - finite.min() + 1.0) if sign > 0 else finite.max() + (finite.max() - finite.min() + 1.0))
    filled = means.fillna(worst)
    return filled if attempted is None else filled.where(attempted.reindex_like(means).fillna(False).astype(bool))


def attempted_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Index cells, columns methods: True where the method has any row (of any status) in the cell."""
    return completed(frame).notna()


def rank_table(means: pd.DataFrame, metric: str, attempted: pd.DataFrame | None = None) -> pd.DataFrame:
    """Average ranks both ways, per method (1 = best; ties share the average rank):

    ``rank_completed`` (a): per cell, ranks among the methods that completed it, averaged over the
    cells the method completed (``cells_completed``); ``rank_failed_last`` (b): per cell over every
    method, a cell not completed ranked last (tied with the other failures), averaged over all
    ``cells``. With ``attempted`` (:func:`attempted_cells`), (b) counts only the cells where the
    method has rows (a sweep that runs a variant on some cells only). Sorted by (b).
    """
    ascending = stats._sign(metric) < 0
    a = means.rank(axis=1, ascending=ascending, method="average")
    worst = _worst_filled(means, metric, attempted)
    b = worst.rank(axis=1, ascending=ascending, method="average")
    out = pd.DataFrame({"rank_completed": a.mean(), "cells_completed": means.notna().sum(),
                        "rank_failed_last": b.mean(), "cells": worst.notna().sum()})
    out.index.name = "method"
    return out.sort_values(["rank_failed_last", "rank_completed"])


def _paired(frame: pd.DataFrame) -> pd.DataFrame:
    """Index (cell, trial), columns methods: the metric of completed cells only."""
    not_ok = (frame["status"] != "ok").groupby([frame[c] for c in [*CELL, "method"]]).transform("any")
    return frame[~not_ok.astype(bool)].pivot_table(index=[*CELL, "trial"], columns="method", values="value",
                                                   aggfunc="first")


def win_tie_loss_cells(frame: pd.DataFrame, metric: str, margin: float = 0.03, alpha: float = 0.05) -> dict:
    """Win/tie/loss counts of every ordered pair of methods over the cells both completed.

    A cell is a *win* for A over B when A's mean over the paired trials is better by at least
    ``margin`` and, where the cell has enough trials for a test to reach ``alpha``
    (:func:`ccbench.stats.min_pairs`: 6), the two-sided Wilcoxon signed-rank test on the paired
    differences says p < ``alpha`` (one test per pair and cell, not corrected: each matrix entry
    is about one pair); a *loss* when the same holds for B; a *tie* otherwise. The rule is
    symmetric, so wins(A, B) = losses(B, A). Returns ``{"wins", "ties", "losses"}`` square
    DataFrames (row method against column method), ``"table"`` with ``w/t/l`` text, and ``"beaten_by"``:
    index cells, columns methods, how many methods win over the method in that cell (NaN where it did
    not complete the cell; 0 = unbeaten there).
    """
    sign = stats._sign(metric)
    wide = _paired(frame)
    methods = sorted(wide.columns)
    wide = wide[methods]
    first, second = np.triu_indices(len(methods), k=1)
    wins, ties = np.zeros((len(methods),) * 2, dtype=int), np.zeros((len(methods),) * 2, dtype=int)
    need = stats.min_pairs(alpha)
    beaten_by = {}
    for cell, rows in wide.groupby(level=CELL, sort=False):
        values = rows.to_numpy(float)
        d = sign * (values[:, first] - values[:, second])  # trials x pairs, NaN where either is missing
        n = np.isfinite(d).sum(axis=0)
        mean = np.nansum(d, axis=0) / np.maximum(n, 1)
        decided = (n > 0) & (np.abs(mean) >= margin)
        for j in np.flatnonzero(decided & (n >= need)):  # the test only where the margin is met
            both = np.isfinite(d[:, j])
            decided[j] = stats._wilcoxon(d[both, j], np.zeros(both.sum()))[1] < alpha
        a_wins, b_wins = decided & (mean > 0), decided & (mean < 0)
        np.add.at(wins, (first[a_wins], second[a_wins]), 1)
        np.add.at(wins, (second[b_wins], first[b_wins]), 1)
        tied = (n > 0) & ~decided
        np.add.at(ties, (first[tied], second[tied]), 1)
        np.add.at(ties, (second[tied], first[tied]), 1)
        beaten = np.bincount(second[a_wins], minlength=len(methods)) + np.bincount(first[b_wins], minlength=len(methods))
        beaten_by[cell] = np.where(np.isfinite(values).any(axis=0), beaten, np.nan)
    counts = {k: pd.DataFrame(v, index=methods, columns=methods)
              for k, v in (("wins", wins), ("ties", ties), ("losses", wins.T.copy()))}
    w, t, lo = (counts[k].to_numpy() for k in ("wins", "ties", "losses"))
    text = np.char.add(np.char.add(np.char.add(np.char.add(w.astype(str), "/"), t.astype(str)), "/"), lo.astype(str))
    text = text.astype(object)
    np.fill_diagonal(text, "")
    table = pd.DataFrame(text, index=pd.Index(methods, name="method"), columns=methods)
    beaten = pd.DataFrame.from_dict(beaten_by, orient="index", columns=methods)
    if len(beaten):
        beaten.index = pd.MultiIndex.from_tuples(beaten.index, names=CELL)
    return {**counts, "table": table, "beaten_by": beaten}


def unbeaten(beaten_by: pd.DataFrame) -> pd.DataFrame:
    """Per method: ``cells`` it completed, ``unbeaten`` (cells where no method wins over it, by the rule
    of :func:`win_tie_loss_cells`) and their share; per data set as ``unbeaten_sets`` (data sets where
    it is unbeaten in every cell it completed)."""
    if beaten_by.empty:
        return pd.DataFrame(columns=["cells", "unbeaten", "share_unbeaten", "unbeaten_sets"])
    done = beaten_by.notna()
    zero = beaten_by.eq(0) & done
    per_set = zero.groupby(level="dataset").all() & done.groupby(level="dataset").any()
    out = pd.DataFrame({"cells": done.sum(), "unbeaten": zero.sum()})
    out["share_unbeaten"] = out["unbeaten"] / out["cells"].where(out["cells"] > 0)
    out["unbeaten_sets"] = [", ".join(per_set.index[per_set[m]]) for m in out.index]
    out.index.name = "method"
    return out.sort_values(["share_unbeaten", "unbeaten"], ascending=False)


# -- gains over the best unsupervised baseline -----------------------------------------------


def bootstrap_ci(diff, level: float = CI, n_boot: int = N_BOOT, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``diff`` (trials resampled with replacement,
    ``n_boot`` times, a fixed seed so pages do not change between runs); NaN for no value."""
    d = np.asarray(diff, dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return np.nan, np.nan
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, d.size, size=(n_boot, d.size))].mean(axis=1)
    q = (1.0 - level) / 2.0
    return float(np.quantile(means, q)), float(np.quantile(means, 1.0 - q))


def best_baseline(frame: pd.DataFrame, metric: str) -> pd.Series:
    """Per data set, the unsupervised method with the best mean over all its ok trials there
    (chosen on the whole data set, not per trial: the best of several noisy values per trial
    would flatter the baseline)."""
    base = frame[frame["unsupervised"]]
    if base.empty:
        return pd.Series(dtype=object)
    means = base.groupby(["dataset", "method"])["value"].mean().dropna().reset_index()
    sign = stats._sign(metric)
    means["key"] = sign * means["value"]
    return means.sort_values(["key", "method"], ascending=[False, True]).groupby("dataset")["method"].first()


def gains(frame: pd.DataFrame, metric: str, seed: int = 0) -> pd.DataFrame:
    """Per (cell, supervised method): the mean gain over the data set's best unsupervised baseline
    (:func:`best_baseline`) in the metric's direction (positive = better), paired by trial, with its
    bootstrap ``ci_low``, ``ci_high`` and ``n_pairs``.

    The baseline's value on a trial is its row in the same cell (the same constraint draw, which it
    ignores); where it has none there (a sweep that fits baselines once per data set), its mean over
    its rows of the same data set, setting and trial index.
    """
    sign = stats._sign(metric)
    best = best_baseline(frame, metric)
    cells = _cells(frame)
    out = []
    for dataset, base_label in best.items():
        base = frame[(frame["dataset"] == dataset) & (frame["method"] == base_label) & frame["value"].notna()]
        same_cell = base.set_index([*CELL, "trial"])["value"]
        fallback = base.groupby(["setting", "trial"])["value"].mean()
        rows = cells[(cells["dataset"] == dataset) & ~cells["unsupervised"] & cells["value"].notna()]
        for key, g in rows.groupby([*CELL, "method"], sort=True):
            idx = pd.MultiIndex.from_frame(g[[*CELL, "trial"]])
            ref = same_cell.reindex(idx).to_numpy(float)
            missing = np.isnan(ref)
            if missing.any():
                by_trial = fallback.reindex(pd.MultiIndex.from_frame(g[["setting", "trial"]]))
                ref[missing] = by_trial.to_numpy(float)[missing]
            d = sign * (g["value"].to_numpy(float) - ref)
            d = d[np.isfinite(d)]
            lo, hi = bootstrap_ci(d, seed=seed)
            out.append(dict(zip([*CELL, "method"], key), baseline=base_label, n_pairs=d.size,
                            gain=float(d.mean()) if d.size else np.nan, ci_low=lo, ci_high=hi))
    return pd.DataFrame(out, columns=[*CELL, "method", "baseline", "n_pairs", "gain", "ci_low", "ci_high"])


# -- did the supervision hurt? --------------------------------------------------------------


def _own_unconstrained(frame: pd.DataFrame) -> pd.Series:
    """Per (method, dataset, setting, trial): the method's value on its unconstrained run, the
    ``noise=none`` row where there is one, else the mean of its unconstrained rows there."""
    ref = frame[frame["unconstrained"] & frame["value"].notna()]
    clean = ref[ref["noise"] == "none"]
    keys = ["method", "dataset", "setting", "trial"]
    has_clean = ref.set_index(keys).index.isin(clean.set_index(keys).index)
    ref = ref[has_clean & (ref["noise"] == "none") | ~has_clean]
    return ref.groupby(keys)["value"].mean()


def hurt_share(frame: pd.DataFrame, metric: str, by=("method",)) -> pd.DataFrame:
    """Share of supervised ok trials worse than the same method's own unconstrained run of the same
    data set, setting and trial index (:func:`_own_unconstrained`; strictly worse in the metric's
    direction: an equal value is no harm). Columns: ``by``, ``n_trials`` (trials with a reference),
    ``n_worse``, ``share_worse``, ``mean_change``. A method without an unconstrained run has no row.
    """
    sign = stats._sign(metric)
    ref = _own_unconstrained(frame)
    cells = _cells(frame)
    cells = cells[cells["value"].notna()]
    keyed = pd.MultiIndex.from_frame(cells[["method", "dataset", "setting", "trial"]])
    change = sign * (cells["value"].to_numpy(float) - ref.reindex(keyed).to_numpy(float))
    cells = cells.assign(change=change)[np.isfinite(change)]
    by = list(by)
    out = cells.groupby(by).agg(n_trials=("change", "size"), n_worse=("change", lambda c: int((c < 0).sum())),
                                mean_change=("change", "mean")).reset_index()
    out["share_worse"] = out["n_worse"] / out["n_trials"]
    return out[[*by, "n_trials", "n_worse", "share_worse", "mean_change"]]


# -- what noise does -------------------------------------------------------------------------


def noise_effect(frame: pd.DataFrame, metric: str, seed: int = 0) -> pd.DataFrame:
    """Per (family, supervised method, noise, budget): the change noise makes, in the metric's direction
    (negative = noise hurt), paired with the same method's noiseless row of the same data set,
    setting, budget and trial index; its mean over ok pairs with a bootstrap interval
    (:func:`bootstrap_ci`), ``n_pairs`` and ``n_sets`` (data sets with a pair)."""
    sign = stats._sign(metric)
    cells = _cells(frame)
    cells = cells[cells["value"].notna() & ~cells["unsupervised"]]  # a baseline ignores the noise: 0 by design
    keys = ["method", "dataset", "setting", "budget", "trial"]
    clean = cells[cells["noise"] == "none"].drop_duplicates(keys).set_index(keys)["value"]
    noisy = cells[cells["noise"] != "none"]
    ref = clean.reindex(pd.MultiIndex.from_frame(noisy[keys])).to_numpy(float)
    noisy = noisy.assign(change=sign * (noisy["value"].to_numpy(float) - ref))
    noisy = noisy[np.isfinite(noisy["change"])]
    out = []
    for (family, method, noise, budget), g in noisy.groupby(["family", "method", "noise", "budget"], sort=True):
        lo, hi = bootstrap_ci(g["change"], seed=seed)
        out.append(dict(family=family, method=method, noise=noise, budget=budget, n_pairs=len(g),
                        n_sets=g["dataset"].nunique(), change=float(g["change"].mean()), ci_low=lo, ci_high=hi))
    return pd.DataFrame(out, columns=["family", "method", "noise", "budget", "n_pairs", "n_sets", "change",
                                      "ci_low", "ci_high"])


def _noise_figure(effect: pd.DataFrame, metric: str, colors: dict):
    """Each method's mean change under noise with its bootstrap interval, grouped by family."""
    from matplotlib.figure import Figure

    effect = effect.sort_values(["family", "method"])
    labels = [f"{m} ({n})" if effect["noise"].nunique() > 1 else m
              for m, n in zip(effect["method"], effect["noise"])]
    fig = Figure(figsize=(7.5, 1.0 + 0.22 * len(effect)), layout="constrained")
    ax = fig.subplots()
    y = np.arange(len(effect))
    err = np.vstack([effect["change"] - effect["ci_low"], effect["ci_high"] - effect["change"]])
    for i, (m, c) in enumerate(zip(effect["method"], effect["change"])):
        ax.errorbar([c], [y[i]], xerr=np.nan_to_num(err[:, i:i + 1]), fmt="o", color=colors.get(m, "k"),
                    markersize=4, capsize=2, elinewidth=0.8)
    ax.axvline(0.0, color="k", linewidth=0.8)
    ax.set_yticks(y, [f"{f}: {lab}" for f, lab in zip(effect["family"], labels)], fontsize="x-small")
    ax.set_ylim(len(effect) - 0.5, -0.5)
    ax.set_xlabel(f"change in {report.axis_label(metric)} under noise (paired with the noiseless run, 95% CI)")
    ax.grid(alpha=0.3, axis="x")
    return fig


# -- honesty about scale and cost -----------------------------------------------------------


def status_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method: trials of every status, and ``cells_missing``: ranking cells of this kind in
    which the method has no row at all (never run, or its rows lost)."""
    counts = frame.groupby(["method", "status"]).size().unstack("status", fill_value=0)
    counts = counts.reindex(columns=[s for s in STATUSES if s in counts.columns or s in
                                     ("ok", "timeout", "refused", "error", "skipped")], fill_value=0)
    present = _cells(frame).groupby([*CELL, "method"]).size().unstack("method")
    counts["cells_missing"] = present.isna().sum().reindex(counts.index).fillna(len(present)).astype(int)
    counts.columns.name = None
    return counts


def cost_table(frame: pd.DataFrame, means: pd.DataFrame, ranks: pd.DataFrame) -> pd.DataFrame:
    """Per method: quality (mean of its completed-cell means, rank (b)) beside cost (median and
    total fit time of its ok supervised trials, median and largest peak RSS)."""
    ok = _cells(frame)
    ok = ok[ok["status"] == "ok"]
    g = ok.groupby("method")
    out = pd.DataFrame({
        "quality": means.mean(),
        "rank_failed_last": ranks["rank_failed_last"],
        "fit_time_median_s": g["fit_time"].median(),
        "fit_time_total_s": g["fit_time"].sum(),
        "peak_rss_median_mb": g["peak_rss_mb"].median(),
        "peak_rss_max_mb": g["peak_rss_mb"].max(),
        "fit_rss_median_mb": g["fit_rss_mb"].median(),
        "fit_rss_max_mb": g["fit_rss_mb"].max(),
    })
    out.index.name = "method"
    return out.sort_values("rank_failed_last")


def _scatter(cost: pd.DataFrame, metric: str, colors: dict):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.0, 5.5), layout="constrained")
    ax = fig.subplots()
    shown = cost.dropna(subset=["quality", "fit_time_median_s"])
    for method, rec in shown.iterrows():
        ax.scatter(max(rec["fit_time_median_s"], 1e-6), rec["quality"], color=colors[method], s=40,
                   label=method, edgecolor="k", linewidth=0.5)
        ax.annotate(method, (max(rec["fit_time_median_s"], 1e-6), rec["quality"]), fontsize="x-small",
                    xytext=(4, 3), textcoords="offset points")
    ax.set_xscale("log")
    # plain tick text: with mathtext off (report.plain_text) the log formatter's $10^{-2}$ would print raw
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("median fit time per trial (s, log scale)")
    ax.set_ylabel(f"{report.axis_label(metric)}: mean over completed cells")
    ax.grid(alpha=0.3, which="both")
    if len(shown) <= 20:
        ax.legend(fontsize="x-small", loc="best")
    ax.set_title("quality against fit time (one point per method)", fontsize="medium")
    return fig


def _gain_heatmap(g: pd.DataFrame, metric: str):
    """Data sets x methods, colour = gain (diverging around 0), the value written in each square;
    ``*`` where the bootstrap interval excludes 0. Readable where one dot per pair would not be."""
    from matplotlib.figure import Figure

    gain = g.pivot_table(index="dataset", columns="method", values="gain", aggfunc="mean")
    sure = g.assign(sure=(g["ci_low"] > 0) | (g["ci_high"] < 0)).pivot_table(
        index="dataset", columns="method", values="sure", aggfunc="max").reindex_like(gain)
    fig = Figure(figsize=(2.0 + 0.55 * gain.shape[1], 1.6 + 0.32 * gain.shape[0]), layout="constrained")
    ax = fig.subplots()
    bound = float(np.nanmax(np.abs(gain.to_numpy()))) if np.isfinite(gain.to_numpy()).any() else 1.0
    image = ax.imshow(gain.to_numpy(float), cmap="RdBu", vmin=-bound, vmax=bound, aspect="auto")
    for (i, j), v in np.ndenumerate(gain.to_numpy(float)):
        if np.isfinite(v):
            ax.text(j, i, f"{v:+.2f}" + ("*" if sure.iat[i, j] is True or sure.iat[i, j] == 1 else ""),
                    ha="center", va="center", fontsize="xx-small")
    ax.set_xticks(range(gain.shape[1]), gain.columns, rotation=60, ha="right", fontsize="x-small")
    ax.set_yticks(range(gain.shape[0]), gain.index, fontsize="x-small")
    fig.colorbar(image, ax=ax, label="gain (* = 95% CI excludes 0)")
    ax.set_title(f"gain in {report.axis_label(metric)} over the best unsupervised baseline", fontsize="medium")
    return fig


def _gain_figure(g: pd.DataFrame, metric: str, colors: dict):
    """Per data set, each method's gain with its bootstrap interval (a dot and a bar); a heatmap
    (:func:`_gain_heatmap`) when there are more than 40 (data set, method) pairs."""
    from matplotlib.figure import Figure

    datasets = sorted(g["dataset"].unique())
    methods = sorted(g["method"].unique())
    if len(datasets) * len(methods) > 40:
        return _gain_heatmap(g, metric)
    fig = Figure(figsize=(8.0, 1.2 + 0.28 * len(datasets) * max(1, len(methods)) ** 0.5 + 0.3 * len(datasets)),
                 layout="constrained")
    ax = fig.subplots()
    step = 0.8 / max(1, len(methods))
    for j, m in enumerate(methods):
        rows = g[g["method"] == m].set_index("dataset").reindex(datasets)
        y = np.arange(len(datasets)) + (j - (len(methods) - 1) / 2) * step
        err = np.vstack([rows["gain"] - rows["ci_low"], rows["ci_high"] - rows["gain"]])
        ax.errorbar(rows["gain"], y, xerr=np.nan_to_num(err), fmt="o", color=colors[m], label=m, markersize=4,
                    capsize=2, elinewidth=0.8)
    ax.axvline(0.0, color="k", linewidth=0.8)
    ax.set_yticks(range(len(datasets)), datasets)
    ax.set_ylim(len(datasets) - 0.5, -0.5)
    ax.set_xlabel(f"gain in {report.axis_label(metric)} over the best unsupervised baseline (95% bootstrap CI)")
    ax.legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.grid(alpha=0.3, axis="x")
    return fig


# -- the pages ---------------------------------------------------------------------------------


def _md_frame(frame: pd.DataFrame, index: bool = True, floats: str = "{:.3g}") -> str:
    f = frame.reset_index() if index else frame
    f = f.map(lambda v: floats.format(v) if isinstance(v, (float, np.floating)) and np.isfinite(v) else
              ("" if isinstance(v, (float, np.floating)) else v))
    return report._frame_markdown(f)


def _headline(cells: pd.DataFrame) -> tuple:
    """The (budget, noise) of the gains table: the largest budget without noise (else the most common noise)."""
    noise = "none" if (cells["noise"] == "none").any() else cells["noise"].mode().iloc[0]
    return float(cells.loc[cells["noise"] == noise, "budget"].max()), noise


def _cd_selection(attempted: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """The methods and cells of the CD diagram: the methods run on more than half of the cells (a variant
    the experiment runs on some cells only, a tuned one, is left out), and the cells where every one of
    them was run (an unfinished data set, where only some jobs are done, is left out)."""
    counts = attempted.sum(axis=0)
    core = counts > 0.5 * counts.max()
    return core, attempted.loc[:, core].all(axis=1)


def ranks_by_condition(means: pd.DataFrame, metric: str, attempted: pd.DataFrame | None = None) -> pd.DataFrame:
    """Average rank (b) per method within each (budget, noise): where a method's standing moves with
    the supervision budget or the noise. Columns ``budget / noise``, rows methods."""
    ranks = _worst_filled(means, metric, attempted).rank(axis=1, ascending=stats._sign(metric) < 0, method="average")
    keys = ranks.index.to_frame(index=False)
    label = keys["budget"].map(report._fmt) + " / " + keys["noise"].astype(str)
    order = keys.assign(label=label).sort_values(["noise", "budget"])["label"].unique()
    return ranks.set_axis(label.to_numpy()).groupby(level=0).mean().T.reindex(columns=order)


def _page_blocks(frame: pd.DataFrame, kind: str, metric: str, margin: float, alpha: float, colors: dict,
                 command: str | None, data: pd.DataFrame | None = None) -> tuple[list, dict]:
    """The page as blocks: ``("h", level, text)``, ``("md", markdown)``, ``("fig", name, figure)``;
    and its tables for the parquet file."""
    cells = _cells(frame)
    means = cell_means(cells)
    attempted = attempted_cells(cells).reindex_like(means).fillna(False).astype(bool)
    ranks = rank_table(means, metric, attempted)
    n_cells, n_sets = len(means), cells["dataset"].nunique()
    blocks = [("h", 1, f"ccbench leaderboard: {kind} supervision"),
              ("md", f"{len(frame)} trials, {n_sets} data set(s), {n_cells} ranking cells (data set x budget x "
                     f"noise x setting), {means.shape[1]} methods; metric `{metric}` "
                     f"({'higher' if stats._sign(metric) > 0 else 'lower'} is better)."
                     + (f" Generated by `{command}`." if command else ""))]
    blocks += [("h", 2, "1. Average ranks"),
               ("md", "Ranked per cell on the method's mean over the cell's trials (1 = best, ties share the "
                      "average rank). Scale honesty: a method completes a cell when every one of its trials there "
                      "is ok. (a) `rank_completed`: ranked only among the methods that completed the cell, "
                      "averaged over the cells it completed; (b) `rank_failed_last`: a cell it did not complete "
                      "(timeout, refused, error, skipped, infeasible, not found, or not run) ranks it last there, "
                      "tied with the other failures; averaged over the cells the method was run on (`cells`: a "
                      "variant the experiment runs on some cells only, such as a tuned one, is ranked there only). "
                      "The table is sorted by (b)."),
               ("md", _md_frame(ranks, floats="{:.2f}"))]
    core, cd_cells = _cd_selection(attempted)
    worst = _worst_filled(means.loc[cd_cells, core], metric)
    if not core.all():
        blocks.append(("md", "The CD diagram ranks the methods run on most cells; left out (run on some cells "
                             "only, ranked in the table above on those): "
                             + ", ".join(f"`{m}`" for m in core.index[~core]) + "."))
    if not cd_cells.all():
        blocks.append(("md", f"The CD diagram leaves out {int((~cd_cells).sum())} cell(s) where not every one of "
                             f"those methods was run (an unfinished data set: "
                             + ", ".join(sorted(set(means.index[~cd_cells].get_level_values("dataset"))))
                             + ")."))
    n_cd = int(cd_cells.sum())
    try:  # a degenerate table (every cell ranks the methods alike, all failed) has no test to draw
        fr = stats.friedman(worst) if n_cd >= 2 and worst.shape[1] >= 3 else None
    except ValueError as exc:
        fr, why = None, str(exc)
    else:
        why = ("it needs at least 3 methods and 2 cells" if fr is None else
               "Friedman's statistic is undefined here (every method ties in every cell)")
    if fr is not None and np.isfinite(fr["statistic"]):
        blocks.append(("md", f"Critical-difference diagram on convention (b): Friedman chi² = {fr['statistic']:.2f}, "
                             f"p = {fr['pvalue']:.3g} over {n_cd} cells and {worst.shape[1]} methods; Nemenyi "
                             f"post-hoc test at alpha = {alpha}. The cells are the Friedman blocks; cells of one data "
                             f"set are not independent, so read the bars as optimistic (the CD with {n_sets} data "
                             f"sets as blocks would be wider)."))
        blocks.append(("fig", f"{kind}_cd", stats.cd_diagram(
            worst, metric, alpha=alpha, colors=colors,
            title=f"{metric}, {kind}: average ranks over {n_cd} cells, failures ranked last (1 = best)\n"
                  f"a bar joins methods the Nemenyi test does not separate "
                  f"(CD = {stats.critical_difference(worst.shape[1], n_cd, alpha):.2f})")))
    else:
        blocks.append(("md", f"No CD diagram: {why}."))
    by_condition = ranks_by_condition(means, metric, attempted).reindex(ranks.index)
    blocks += [("md", "Average rank (b) within each budget / noise (columns): how a method's standing moves "
                      "with the amount of supervision and with noise."),
               ("md", _md_frame(by_condition, floats="{:.2f}"))]
    wtl = win_tie_loss_cells(cells, metric, margin=margin, alpha=alpha)
    blocks += [("h", 2, "2. Win/tie/loss"),
               ("md", f"Row method against column method, counted over the cells both completed (w/t/l). A cell is "
                      f"a win when the row's mean over the paired trials is better by at least {margin:g} and, where "
                      f"the cell has at least {stats.min_pairs(alpha)} paired trials, the two-sided Wilcoxon "
                      f"signed-rank test on the per-trial differences gives p < {alpha} (uncorrected: one test per "
                      f"pair and cell); with fewer trials the margin alone decides. Symmetric: "
                      f"win(A, B) = loss(B, A)."),
               ("md", _md_frame(wtl["table"]))]
    never_beaten = unbeaten(wtl["beaten_by"])
    blocks += [("md", "Where nothing beats a method: the cells it completed in which no other method wins over it "
                      "by the rule above (`unbeaten`), and the data sets where that holds in every cell it "
                      "completed (`unbeaten_sets`). For `cobs`, an unconstrained pool chosen by the constraints, "
                      "these are the cells where no semi-supervised method is better than the selection baseline."),
               ("md", _md_frame(never_beaten, floats="{:.2f}"))]
    g = gains(frame, metric)
    blocks.append(("h", 2, "3. Gain over the best unsupervised baseline"))
    if g.empty:
        blocks.append(("md", "No gains: no unsupervised method (empty `MethodSpec.supervision`) has ok trials here."))
    else:
        budget, noise = _headline(cells)
        head = g[(g["budget"] == budget) & (g["noise"] == noise)]
        base = best_baseline(frame, metric)
        text = head.assign(cell=[f"{v:+.3f} [{lo:+.3f}, {hi:+.3f}]" for v, lo, hi in
                                 zip(head["gain"], head["ci_low"], head["ci_high"])])
        table = text.pivot_table(index=["dataset", "setting"], columns="method", values="cell", aggfunc="first")
        table.insert(0, "baseline", [base.get(d, "") for d, _ in table.index])
        if not any(s for _, s in table.index):  # no setting varies: the column would be empty
            table.index = table.index.droplevel("setting")
        blocks += [("md", f"Per data set, the best unsupervised method (best mean over its ok trials there, among "
                          f"{', '.join(sorted(frame.loc[frame['unsupervised'], 'method'].unique()))}) is the baseline; "
                          f"gain = method minus baseline on the same trial (positive = better), its mean and a "
                          f"{CI:.0%} percentile bootstrap interval over the trials ({N_BOOT} resamples, seed 0). "
                          f"Shown at budget {report._fmt(budget)}, noise {noise}; every cell is in "
                          f"`leaderboard.parquet` (table `gains`)."),
                   ("md", _md_frame(table.rename_axis(columns=None))),
                   ("fig", f"{kind}_gains", _gain_figure(head, metric, colors))]
    hurt = hurt_share(frame, metric)
    hurt_cells = hurt_share(frame, metric, by=("method", "budget", "noise"))
    blocks += [("h", 2, "4. Did the supervision hurt?"),
               ("md", "Share of a method's ok supervised trials in which it scored worse than its own "
                      "unconstrained run (its row with `constraints=none` or budget 0: `n_constraints=0`, "
                      "`per_class=0`) on the same data set, setting and trial index; the noiseless "
                      "unconstrained run where there is one. The two runs draw their method seeds from different "
                      "cells, so part of the change is seed variance. Methods without an unconstrained run are "
                      "absent."),
               ("md", _md_frame(hurt.set_index("method"), floats="{:.3f}") if len(hurt) else
                "No method has an unconstrained run in these results."),
               ("md", _md_frame(hurt_cells.assign(budget=hurt_cells["budget"].map(report._fmt)), index=False,
                                floats="{:.3f}") if len(hurt_cells) else "")]
    effect = noise_effect(frame, metric)
    blocks.append(("h", 2, "5. What noise does"))
    if effect.empty:
        blocks.append(("md", "No noisy cell with a noiseless twin (same data set, setting and budget) here."))
    else:
        by_family = effect.groupby(["family", "noise"]).apply(
            lambda g: pd.Series({"methods": g["method"].nunique(), "n_pairs": int(g["n_pairs"].sum()),
                                 "mean_change": float(np.average(g["change"], weights=g["n_pairs"])),
                                 "worst_method": g.loc[g["change"].idxmin(), "method"],
                                 "worst_change": float(g["change"].min())}), include_groups=False)
        blocks += [("md", "Each noisy cell against the same method's noiseless cell of the same data set, setting and "
                          "budget, paired by trial index: the change in the metric (negative = the noise hurt), its "
                          f"mean over the pairs and a {CI:.0%} bootstrap interval. A hard-constraint method can also "
                          "fail outright under noise (`infeasible`: contradictory constraints); those trials are not "
                          "pairs here but are counted in section 7. Per family (pair-weighted mean over its methods):"),
                   ("md", _md_frame(by_family, floats="{:.3f}")),
                   ("md", _md_frame(effect.assign(budget=effect["budget"].map(report._fmt)), index=False,
                                    floats="{:.3f}")),
                   ("fig", f"{kind}_noise", _noise_figure(effect, metric, colors))]
    cost = cost_table(frame, means, ranks)
    blocks += [("h", 2, "6. Cost beside quality"),
               ("md", "Fit time: seconds in `fit` per ok supervised trial. Peak memory: the row's `peak_rss_mb`, the "
                      "peak resident set size of the process that ran `fit`, reset right before it (Linux "
                      "/proc/self/clear_refs): with `trial_timeout` the worker process's, else the whole job "
                      "process's (data and imports included); `fit_rss` is that peak minus the resident size "
                      "just before `fit` (what the fit itself added). Empty for rows recorded before these columns existed."),
               ("md", _md_frame(cost, floats="{:.3g}")),
               ("fig", f"{kind}_time", _scatter(cost, metric, colors))]
    counts = status_counts(frame)
    blocks += [("h", 2, "7. Scale honesty: every trial counted"),
               ("md", "Trials per method and status over every row of this kind (unconstrained runs included); "
                      "`cells_missing` counts ranking cells where the method has no row at all. Both rankings of "
                      "section 1 follow from these: (a) ignores the cells a method did not complete, (b) ranks them "
                      "last."),
               ("md", _md_frame(counts))]
    if data is not None:
        rows = data.iloc[frame["row"].to_numpy()]
        rows = rows if "error" in rows else rows.assign(error=None)  # rows made outside the harness
        errors = report.error_summary(rows)
        blocks += [("h", 2, "Problems"),
                   ("md", "\n".join(report.md_text(e) for e in errors) if errors else "No failed trial."),
                   ("h", 2, "Provenance"), ("md", report.provenance_markdown(rows))]
    tables = {"ranks": ranks.reset_index(), "ranks_by_condition": by_condition.reset_index(), "gains": g, "hurt": hurt_cells, "cost": cost.reset_index(),
              "status": counts.reset_index(), "unbeaten": never_beaten.reset_index(), "noise": effect, "wtl": wtl["table"].rename_axis("method").reset_index()}
    return blocks, tables


def _to_markdown(blocks: list, out: Path) -> str:
    parts = []
    for block in blocks:
        if block[0] == "h":
            parts.append("#" * block[1] + " " + block[2])
        elif block[0] == "md":
            if block[1]:
                parts.append(block[1])
        else:
            block[2].savefig(out / f"{block[1]}.png", dpi=100)
            parts.append(f"![{block[1]}]({block[1]}.png)")
    return "\n\n".join(parts) + "\n"


def _to_html(blocks: list, title: str) -> str:
    from . import report_html

    body = []
    for block in blocks:
        if block[0] == "h":
            body.append(f"<h{block[1]}>{html.escape(block[2])}</h{block[1]}>")
        elif block[0] == "md":
            body.append(report_html.markdown_to_html(block[1]))
        else:
            body.append(report_html._png(block[2]))
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{report_html._CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def config_request(data: pd.DataFrame) -> dict | None:
    """The ``leaderboard`` entry of the cells' ``paper`` block (``paper: {leaderboard: {metric: ari,
    margin: 0.03}}`` in an experiment file), or None: with it, plain ``ccbench report DIR`` writes the
    leaderboard, on the metric the experiment chose."""
    paper = report.paper_reference(data) or {}
    request = paper.get("leaderboard")
    if request is None:
        return None
    if request is True:
        return {}
    if not isinstance(request, dict) or set(request) - {"metric", "margin"}:
        raise ValueError(f"paper.leaderboard must be true or a mapping with metric and/or margin, got {request!r}")
    return dict(request)


def sweep_coverage(dirs, data: pd.DataFrame) -> str | None:
    """One line on how much of the sweep's grid the rows cover, or None when no directory holds a
    Hydra ``multirun.yaml``: the jobs its sweeper params (and sweep overrides on the command line)
    ask for, against the jobs whose every trial has a row. A partial sweep says so on its pages."""
    import yaml

    from .datasets import SUITES

    asked, per_set, grid = 0, {}, {}
    for d in dirs:
        path = Path(d) / "multirun.yaml"
        if not path.is_file():
            continue
        conf = yaml.safe_load(path.read_text())
        params = dict(conf["hydra"]["sweeper"].get("params") or {})
        for override in conf["hydra"]["overrides"].get("task") or []:
            key, _, value = override.partition("=")
            # a command-line value replaces the sweeper's list (Hydra's rule), one value included
            if ("," in value or key in params) and not key.startswith("hydra"):
                params[key] = value
        n, sets = 1, []
        for key, value in params.items():
            values = str(value).split(",")
            if key == "dataset":
                values = sets = [m for v in values for m in SUITES.get(v, [v])]
            if key in ("dataset", "method"):
                grid.setdefault(f"{key}.name", set()).update(values)
            n *= len(values)
        asked += n
        for name in sets:
            per_set[name] = per_set.get(name, 0) + n // len(sets)
    if not asked:
        return None
    trials = pd.to_numeric(data.get("n_trials"), errors="coerce")
    counts = data.groupby("config_hash")["trial"].nunique()
    wanted = trials.groupby(data["config_hash"]).max()
    full = counts >= wanted.reindex(counts.index)
    # rows of data sets or methods outside the last command's grid (an earlier, wider sweep into the
    # same directory) are finished jobs, but not of this grid
    in_grid = pd.Series(True, index=full.index)
    for column, values in grid.items():
        if column in data:
            in_grid &= data.groupby("config_hash")[column].first().reindex(full.index).isin(values)
    outside = int((full & ~in_grid).sum())
    full &= in_grid
    done = int(full.sum())
    share = done / asked
    line = (f"Sweep coverage: {done:,} of the {asked:,} jobs its grid asks for have every trial recorded "
            f"({share:.0%})" + ("." if done >= asked else "; **the sweep is incomplete**: resume it with the "
                                                            "same command, then regenerate this page."))
    if outside:
        line += (f" The rows also hold {outside:,} finished jobs outside that grid (data sets or methods an "
                 "earlier command into the same directory ran); they are on this page too.")
    if per_set and done < asked and "dataset.name" in data:
        names = data.groupby("config_hash")["dataset.name"].first()
        done_per_set = names[full[full].index].value_counts()
        complete = [d for d, n in per_set.items() if done_per_set.get(d, 0) >= n]
        partial = [f"{d} ({done_per_set[d]} of {n} jobs)" for d, n in per_set.items() if 0 < done_per_set.get(d, 0) < n]
        missing = [d for d in per_set if done_per_set.get(d, 0) == 0]
        line += (f" Data sets complete: {len(complete)} of {len(per_set)}"
                 + (f"; partly done: {', '.join(partial)}" if partial else "")
                 + (f"; not started: {', '.join(missing)}" if missing else "") + ".")
    return line


def write_leaderboard(data: pd.DataFrame, out_dir, metric: str = DEFAULT_METRIC, margin: float = 0.03,
                      alpha: float = 0.05, command: str | None = None, coverage: str | None = None) -> dict:
    """Write ``<kind>.md``, ``<kind>.html`` (and the markdown's PNGs) per supervision kind found in
    ``data``, ``index.md`` and ``leaderboard.parquet``; return the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    frame = long_frame(data, metric)
    colors = report.method_colors(frame["method"])  # one colour per method on both pages
    paths, tables, index = {}, [], ["# ccbench leaderboard", ""]
    with report.plain_text():
        for kind in KINDS:
            rows = _of_kind(frame, kind)
            if _cells(rows[rows["kind"] == kind]).empty:
                continue
            blocks, kind_tables = _page_blocks(rows, kind, metric, margin, alpha, colors, command,
                                               data.reset_index(drop=True))
            if coverage:
                blocks.insert(2, ("md", coverage))
            paths[f"{kind}_md"] = out / f"{kind}.md"
            paths[f"{kind}_md"].write_text(_to_markdown(blocks, out))
            paths[f"{kind}_html"] = out / f"{kind}.html"
            paths[f"{kind}_html"].write_text(_to_html(blocks, f"ccbench leaderboard: {kind}"), encoding="utf-8")
            for name, t in kind_tables.items():
                tables.append(t.assign(kind=kind, table=name).astype({c: str for c in t.columns
                                                                      if t[c].dtype == object}))
            index.append(f"- {kind} supervision: [{kind}.md]({kind}.md), [{kind}.html]({kind}.html)")
    if not paths:
        raise ValueError("no leaderboard cells: the rows need constraints=random_pairs/per_class_pairs (pairs) or "
                         "labeled_subsets (labels) with a budget above 0")
    paths["parquet"] = out / "leaderboard.parquet"
    write_results(pd.concat(tables, ignore_index=True), paths["parquet"])
    paths["index"] = out / "index.md"
    paths["index"].write_text("\n".join(index + ["", *([coverage, ""] if coverage else []), f"Metric `{metric}`."
                                                 + (f" Generated by `{command}`." if command else "")]) + "\n")
    return paths
