"""What supervision and noise do: gains over the best unsupervised baseline (bootstrap intervals), the
share of trials hurt by supervision, the effect of noise, and the status and cost tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...running.results import STATUSES
from ._frame import CELL, CI, N_BOOT, TRIAL_KEYS, _cells, completed, ranked_metric

__all__ = ["bootstrap_ci", "bootstrap_cis", "best_baseline", "gains", "hurt_share", "noise_effect", "status_counts", "not_fitted_note", "cost_table",
           "NO_UNCONSTRAINED_REFERENCE", "hurt_exclusions", "same_fit_note"]


#: Methods whose run without supervision is not the method itself, so "did the supervision hurt?" has no
#: reference for them: the hurt share leaves them out and the page says why (keyed by ``method.name``;
#: their tuned variants too). Not COBS (issue 50, item 9): given k, with no constraints every member of
#: its pool (k-means, NCuts, AP searched for k) satisfies none, so the silhouette tie rule selects one;
#: it returned the true k in 197 of its 200 unconstrained ok trials on the shipped leaderboard. Its hurt
#: share asks whether selecting by the constraints did worse than selecting by the silhouette.
NO_UNCONSTRAINED_REFERENCE = {
    "rn_sdp": "with no constraints RN-SDP's learned similarity is (nearly) all ones, every point alike, and its "
              "k-medoids step splits noise: not a clustering the constraints could have made worse",
}


def hurt_exclusions(frame: pd.DataFrame) -> dict:
    """{method label: reason} for the methods of ``frame`` left out of the hurt share
    (:data:`NO_UNCONSTRAINED_REFERENCE`)."""
    names = frame.drop_duplicates("method").set_index("method")["method_name"] if "method_name" in frame else {}
    return {m: NO_UNCONSTRAINED_REFERENCE[n] for m, n in dict(names).items() if n in NO_UNCONSTRAINED_REFERENCE}


def _completed_rows(cells: pd.DataFrame) -> pd.DataFrame:
    """The rows of (cell, method) pairs whose every trial is ok (a cell where most trials failed would
    give a mean, and an interval, over the few easy draws that survived)."""
    done = completed(cells).stack()
    done = done[done.astype(bool)]
    keep = pd.MultiIndex.from_frame(cells[[*CELL, "method"]]).isin(done.index)
    return cells[keep]


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


def bootstrap_cis(samples: list, level: float = CI, n_boot: int = N_BOOT, seed: int = 0) -> np.ndarray:
    """:func:`bootstrap_ci` of each of ``samples`` (finite values), as rows ``(low, high)``, the same
    numbers: the draws depend only on a sample's size, so the samples of one size share them and are
    resampled in one array operation (one bootstrap call per (cell, method) was most of a report)."""
    out = np.full((len(samples), 2), np.nan)
    sizes = np.array([len(x) for x in samples], dtype=int)
    q = (1.0 - level) / 2.0
    for size in np.unique(sizes[sizes > 0]):
        idx = np.random.default_rng(seed).integers(0, size, size=(n_boot, size))
        which = np.flatnonzero(sizes == size)
        for part in np.array_split(which, -(-which.size * n_boot * size // 2**24)):  # about 128 MB at a time
            drawn = np.stack([samples[i] for i in part]).astype(float)[:, idx]
            means = drawn.reshape(-1, size).mean(axis=1).reshape(len(part), n_boot)  # 2-D: bootstrap_ci's sums
            out[part, 0] = [float(np.quantile(m, q)) for m in means]
            out[part, 1] = [float(np.quantile(m, 1.0 - q)) for m in means]
    return out


def best_baseline(frame: pd.DataFrame, metric: str) -> pd.Series:
    """Per data set, the unsupervised method with the best mean over all its ok trials there
    (chosen on the whole data set, not per trial: the best of several noisy values per trial
    would flatter the baseline), over its completed cells only (a cell where most of its trials failed
    would choose it on the draws that survived)."""
    base = _completed_rows(frame[frame["unsupervised"]])
    if base.empty:
        return pd.Series(dtype=object)
    means = base.groupby(["dataset", "method"])["value"].mean().dropna().reset_index()
    sign = ranked_metric(metric).sign
    means["key"] = sign * means["value"]
    return means.sort_values(["key", "method"], ascending=[False, True]).groupby("dataset")["method"].first()


def _group_positions(rows: pd.DataFrame, keys: list):
    """``(key, positions)`` per group of ``rows`` by ``keys``, in the order of ``groupby(keys, sort=True)``
    and with each group's rows in their order (rows with a missing key in none, as groupby drops them)."""
    grouped = rows.groupby(keys, sort=True)
    codes = grouped.ngroup().to_numpy()
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(grouped.ngroups + 1))
    return [(key, order[bounds[i]:bounds[i + 1]]) for i, key in enumerate(grouped.size().index)]


def gains(frame: pd.DataFrame, metric: str, seed: int = 0) -> pd.DataFrame:
    """Per (cell, supervised method): the mean gain over the data set's best unsupervised baseline
    (:func:`best_baseline`) in the metric's direction (positive = better), paired by trial, with its
    bootstrap ``ci_low``, ``ci_high`` and ``n_pairs``.

    The baseline's value on a trial is its row in the same cell (the same constraint draw, which it
    ignores); where it has none there (a sweep that fits baselines once per data set), its mean over
    its rows of the same data set, data options and trial index (:data:`TRIAL_KEYS`).

    Completed cells only, as the ranks: a (cell, method) with a trial that is not ok has no gain (its
    mean and interval would be over the draws that survived: a single trial, an interval [x, x]).
    """
    metric = ranked_metric(metric)
    sign = metric.sign
    best = best_baseline(frame, metric)
    cells = _completed_rows(_cells(frame))
    out, samples = [], []
    for dataset, base_label in best.items():
        base = frame[(frame["dataset"] == dataset) & (frame["method"] == base_label) & frame["value"].notna()]
        same_cell = base.set_index([*CELL, "trial"])["value"]
        fallback = base.groupby(["data_setting", "trial"])["value"].mean()
        rows = cells[(cells["dataset"] == dataset) & ~cells["unsupervised"] & cells["value"].notna()]
        ref = np.array(same_cell.reindex(pd.MultiIndex.from_frame(rows[[*CELL, "trial"]])), dtype=float)
        missing = np.isnan(ref)
        if missing.any():
            by_trial = fallback.reindex(pd.MultiIndex.from_frame(rows[["data_setting", "trial"]]))
            ref[missing] = by_trial.to_numpy(float)[missing]
        diff = sign * (rows["value"].to_numpy(float) - ref)
        for key, at in _group_positions(rows, [*CELL, "method"]):
            d = diff[at]
            d = d[np.isfinite(d)]
            samples.append(d)
            out.append(dict(zip([*CELL, "method"], key), baseline=base_label, n_pairs=d.size,
                            gain=float(d.mean()) if d.size else np.nan))
    table = pd.DataFrame(out, columns=[*CELL, "method", "baseline", "n_pairs", "gain"])
    table[["ci_low", "ci_high"]] = bootstrap_cis(samples, seed=seed) if samples else np.empty((0, 2))
    return table


def _own_unconstrained(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (method, dataset, data_setting, trial): the method's value on its unconstrained run, the
    ``noise=none`` row where there is one, else the mean of its unconstrained rows there, and its
    ``fit_key`` (the shared fit it re-scored, else None). Keyed by :data:`TRIAL_KEYS` (data set, its
    options, evaluate_on, trial index), never by a constraints key: the labeled rows'
    ``constraints.small_classes`` is no option of an unconstrained run."""
    ref = frame[frame["unconstrained"] & frame["value"].notna()]
    clean = ref[ref["noise"] == "none"]
    keys = ["method", *TRIAL_KEYS]
    has_clean = ref.set_index(keys).index.isin(clean.set_index(keys).index)
    ref = ref[has_clean & (ref["noise"] == "none") | ~has_clean]
    fit_key = ref["fit_key"] if "fit_key" in ref else pd.Series(None, index=ref.index, dtype=object)
    g = ref.assign(fit_key=fit_key).groupby(keys)
    return pd.DataFrame({"value": g["value"].mean(), "fit_key": g["fit_key"].first()})


def hurt_share(frame: pd.DataFrame, metric: str, by=("method",)) -> pd.DataFrame:
    """Share of supervised ok trials worse than the same method's own unconstrained run of the same
    data set, setting and trial index (:func:`_own_unconstrained`; strictly worse in the metric's
    direction: an equal value is no harm). Columns: ``by``, ``n_trials`` (trials with a reference),
    ``n_worse``, ``share_worse``, ``mean_change``, ``same_fit`` (share of those trials that re-scored
    the unconstrained run's own fit: the same ``fit_key``, a shared unsupervised fit; their change is 0
    by construction). A method without an unconstrained run has no row; nor has a method of
    :data:`NO_UNCONSTRAINED_REFERENCE` (:func:`hurt_exclusions`: its run without supervision is not
    the method).
    """
    sign = ranked_metric(metric).sign
    frame = frame[~frame["method"].isin(list(hurt_exclusions(frame)))]
    ref = _own_unconstrained(frame)
    cells = _cells(frame)
    cells = cells[cells["value"].notna()]
    keyed = pd.MultiIndex.from_frame(cells[["method", *TRIAL_KEYS]])
    change = sign * (cells["value"].to_numpy(float) - ref["value"].reindex(keyed).to_numpy(float))
    own_key = cells["fit_key"] if "fit_key" in cells else pd.Series(None, index=cells.index, dtype=object)
    ref_key = ref["fit_key"].reindex(keyed).to_numpy(object)
    same = own_key.notna().to_numpy() & (own_key.to_numpy(object) == ref_key)
    cells = cells.assign(change=change, same_fit=same)[np.isfinite(change)]
    by = list(by)
    out = cells.groupby(by).agg(n_trials=("change", "size"), n_worse=("change", lambda c: int((c < 0).sum())),
                                mean_change=("change", "mean"), same_fit=("same_fit", "mean")).reset_index()
    out["share_worse"] = out["n_worse"] / out["n_trials"]
    return out[[*by, "n_trials", "n_worse", "share_worse", "mean_change", "same_fit"]]


def same_fit_note(hurt: pd.DataFrame) -> str:
    """The page's sentence on the methods of ``hurt`` (:func:`hurt_share` by method) whose every trial
    re-scored its unconstrained run's own fit: their share is 0 by construction, no measure of anything
    (not a seed-variance floor: the seeds are the same). Empty when there is none."""
    if hurt.empty or "same_fit" not in hurt:
        return ""
    same = sorted(hurt.loc[hurt["same_fit"] == 1.0, "method"])
    if not same:
        return ""
    return (" " + ", ".join(f"`{m}`" for m in same) + (" re-score" if len(same) > 1 else " re-scores")
            + " one shared unsupervised fit per data set and trial (`share_unsupervised_fits`: the same `fit_key` "
            "in every cell, `same_fit` = 1): the supervised trial's partition is the unconstrained run's, so "
            "the change is 0 and the share 0 by construction, not a seed-variance floor.")


def noise_effect(frame: pd.DataFrame, metric: str, seed: int = 0) -> pd.DataFrame:
    """Per (family, supervised method, noise, budget): the change noise makes, in the metric's direction
    (negative = noise hurt), paired with the same method's noiseless row of the same data set,
    setting, budget and trial index; its mean over ok pairs with a bootstrap interval
    (:func:`bootstrap_ci`), ``n_pairs`` and ``n_sets`` (data sets with a pair)."""
    sign = ranked_metric(metric).sign
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


def status_counts(frame: pd.DataFrame, not_fitted: pd.Series | None = None) -> pd.DataFrame:
    """Per method: trials of every status, and ``cells_missing``: ranking cells of this kind in
    which the method has no row at all (never run, or its rows lost). ``not_fitted`` (per method: the kills
    recorded without fitting that the long frame leaves out, :func:`._frame.not_fitted_counts`), where any:
    a ``timeout_not_fitted`` column."""
    counts = frame.groupby(["method", "status"]).size().unstack("status", fill_value=0)
    counts = counts.reindex(columns=[s for s in STATUSES if s in counts.columns or s in
                                     ("ok", "timeout", "refused", "error", "skipped")], fill_value=0)
    present = _cells(frame).groupby([*CELL, "method"]).size().unstack("method")
    counts["cells_missing"] = present.isna().sum().reindex(counts.index).fillna(len(present)).astype(int)
    if not_fitted is not None and not_fitted.any():
        counts["timeout_not_fitted"] = not_fitted.reindex(counts.index).fillna(0).astype(int)
    counts.columns.name = None
    return counts


def not_fitted_note(counts: pd.DataFrame) -> str:
    """The sentence that says what :func:`status_counts`'s ``timeout_not_fitted`` column counts ("" without it)."""
    if "timeout_not_fitted" not in counts:
        return ""
    n = int(counts["timeout_not_fitted"].sum())
    return (f" `timeout_not_fitted` ({n:,} trial{'s' * (n != 1)}): recorded as `timeout` without fitting, because a "
            "trial earlier in the cell (`timeout_stops_cell`) or at another base seed (`timeout_stops_seeds`) was "
            "killed. Such a row is a prediction, not a measurement. No ranking or score counts it: the kill it "
            "repeats is scored where it was measured.")


def _fit_time_total(ok: pd.DataFrame) -> pd.Series:
    """Per method: seconds of the fits behind its ok rows, a shared unsupervised fit counted once.

    A row that re-scored a shared fit (``share_unsupervised_fits``: same ``fit_key``) carries the time
    of that one fit, so summing ``fit_time`` over rows would charge it once per cell that re-scored it
    (9 to 12 times on the leaderboard). Total = sum of ``fit_time`` over rows without a ``fit_key`` +
    sum over the distinct ``fit_key`` of its ``fit_time`` (one row's: the cached fit's time, the same on
    every row that carries it). Per table: a fit shared by two kinds' pages counts once on each, as
    each page's trials needed it (``tests/benchmarks/leaderboard_costs.py`` charges it once to the
    sweep, to the row that made it)."""
    keys = ok["fit_key"] if "fit_key" in ok else pd.Series(None, index=ok.index, dtype=object)
    own = ok[keys.isna()].groupby("method")["fit_time"].sum()
    shared = ok[keys.notna()].drop_duplicates(["method", "fit_key"]).groupby("method")["fit_time"].sum()
    return own.add(shared, fill_value=0.0)


def _fit_count(ok: pd.DataFrame) -> pd.Series:
    """Per method: the fits behind its ok rows (rows without a ``fit_key``, plus distinct ``fit_key``)."""
    keys = ok["fit_key"] if "fit_key" in ok else pd.Series(None, index=ok.index, dtype=object)
    own = keys.isna().groupby(ok["method"]).sum()
    shared = ok.loc[keys.notna(), ["method", "fit_key"]].drop_duplicates().groupby("method").size()
    return own.add(shared, fill_value=0).astype(int)


def cost_table(frame: pd.DataFrame, means: pd.DataFrame, ranks: pd.DataFrame) -> pd.DataFrame:
    """Per method: quality (mean of its completed-cell means, rank (b)) beside cost: median fit time of
    its ok supervised trials (``fit_time_median_s``: what one trial's fit takes), ``fit_time_total_s``
    (the fits behind those trials, a shared unsupervised fit counted once: :func:`_fit_time_total`),
    ``fits`` (how many fits that is), median and largest peak RSS."""
    ok = _cells(frame)
    ok = ok[ok["status"] == "ok"]
    g = ok.groupby("method")
    out = pd.DataFrame({
        "quality": means.mean(),
        "rank_failed_last": ranks["rank_failed_last"],
        "fit_time_median_s": g["fit_time"].median(),
        "fit_time_total_s": _fit_time_total(ok),
        "fits": _fit_count(ok),
        "peak_rss_median_mb": g["peak_rss_mb"].median(),
        "peak_rss_max_mb": g["peak_rss_mb"].max(),
        "fit_rss_median_mb": g["fit_rss_mb"].median(),
        "fit_rss_max_mb": g["fit_rss_mb"].max(),
    })
    out.index.name = "method"
    return out.sort_values("rank_failed_last")
