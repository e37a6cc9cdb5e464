"""The active track's numbers (issue 53): entries, curves, the ranking of the areas, costs.

Rows are the anytime cells' (:mod:`ccbench.running.active_cells`: one row per trial's curve). Definitions
(each is stated on the page, :mod:`.active_page`):

- an **entry** is a (query strategy, method) pair, labelled ``strategy/method`` (``npu/pck_means``);
  COBRAS, which asks its own questions (``constraints.strategy=cobras``), is labelled ``cobras``. A pair that does not go together was recorded as ``skipped`` rows only: it is no entry;
- a **cell** is a (data set, oracle noise rate): the unit of :func:`cell_scores` from the leaderboard
  (``budget`` there is the question budget here, ``setting`` empty);
- a trial's **score** is its area under the curve, ``auc_ari`` (the normalised trapezoid area of ARI
  over q = 0..budget: a mean ARI over the questions); a failed curve (status ``error``) scores 0, the
  area of the one-cluster partition (``FAILURE_SCORE``), and a cell with a ``skipped`` trial is missing
  (the leaderboard's ``missing`` convention);
- the **unqueried area** ``auc_ari_unqueried`` (:data:`UNQUERIED`, ARI on the points in no asked pair,
  as the COBRAS papers score) is ranked by the same rule. It is NaN for an ``ok`` curve when, at some
  budget, fewer than two points are left unasked (a small set): such a trial makes its cell missing
  (one missing trial, the cell is missing: :func:`cell_scores`), and a data set on which no entry has a
  score is left out of that ranking (``unscored``; it has no block to compare on), so the best entry
  is chosen among the entries on every data set that is scored;
- the **ranking** is the leaderboard's headline statistics, reused: per data set the mean over its cells
  of the paired difference (entry - reference); its mean over the data sets with a percentile bootstrap
  interval over the data sets; Wilcoxon signed-rank over the data sets with Holm over each reference's
  family; the Bayesian signed-rank posterior with a ROPE of ``margin``; leave-one-data-set-out
  stability (:func:`ccbench.reporting.leaderboard.effects._pair_table`). References: ``random/<method>``
  for each method with a random entry (the baseline every curve is read against), whose family is the
  other entries of that method and the entries that ask their own questions (COBRAS: no random of its
  own), so a strategy is read against random on the method it feeds and Holm counts those comparisons
  only; and the **best** entry (highest mean over the data sets among those on every data set), whose
  family is every other entry (across methods);
- a **reference implementation** (an entry whose method is ``peer_<name>``: a third-party package of the
  same algorithm, :func:`reference_pairs`) is not ranked: it is neither the best nor in the random or
  best families, nor in P(best); its own family is the one entry it implements (ours against it, same
  statistics), so the page says whether our implementation matches its authors'.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .leaderboard._frame import N_BOOT
from .leaderboard.effects import _best, _pair_table, _set_means, cell_scores, p_best
from .leaderboard.gains import bootstrap_ci
from .shipped import merge_with

__all__ = ["ACTIVE_SCHEME", "METRIC", "UNQUERIED", "SELF_ASKING", "FAILURE_SCORE", "PEER_PREFIX", "is_active_rows",
           "entry_labels", "reference_pairs",
           "active_frame", "budgets_of", "curve_frame", "auc_table", "effects", "effects_by_noise", "cost_table", "status_table",
           "measured_core_hours", "merge_active_with", "STRATEGY"]

ACTIVE_SCHEME = "active_queries"
METRIC = "auc_ari"
UNQUERIED = "auc_ari_unqueried"
SELF_ASKING = "cobras"
STRATEGY = "constraints.strategy"
FAILURE_SCORE = 0.0
#: A method named ``peer_<name>`` is the reference implementation of ``<name>`` (a third-party package in a
#: worker: ``ccbench_plugins.kmeans.peers``, ``ccbench_plugins.cobras.peer``).
PEER_PREFIX = "peer_"
_CONVENTION = "missing"


def is_active_rows(data: pd.DataFrame) -> bool:
    """Whether ``data`` holds anytime rows only (every row's scheme is :data:`ACTIVE_SCHEME`)."""
    return len(data) > 0 and "constraints.name" in data and bool((data["constraints.name"] == ACTIVE_SCHEME).all())


def entry_labels(data: pd.DataFrame) -> pd.Series:
    """Each row's entry (module docstring): ``strategy/method``, or the method that asks itself (every
    method under the strategy :data:`SELF_ASKING`: ``cobras``, and its reference ``peer_cobras``)."""
    strategy, method = data[STRATEGY].astype(str), data["method.name"].astype(str)
    return method.where(strategy == SELF_ASKING, strategy + "/" + method)


def reference_pairs(entries: list[str]) -> dict[str, str]:
    """``{peer entry: our entry}`` for each entry whose method is a reference implementation of another
    entry's (:data:`PEER_PREFIX`: ``peer_cobras`` of ``cobras``, ``random/peer_pck_means`` of
    ``random/pck_means``) when both are among ``entries``."""
    out = {}
    for entry in entries:
        strategy, slash, method = entry.rpartition("/")
        if method.startswith(PEER_PREFIX):
            ours = f"{strategy}{slash}{method.removeprefix(PEER_PREFIX)}"
            if ours in entries:
                out[entry] = ours
    return out


def active_frame(data: pd.DataFrame) -> pd.DataFrame:
    """The rows with ``entry``, ``dataset``, ``noise`` (the oracle's rate) and the leaderboard's cell
    columns (``setting``, ``budget``), without the entries made of ``skipped`` rows only."""
    frame = data.copy()
    frame["entry"] = entry_labels(frame)
    frame["dataset"] = frame["dataset.name"].astype(str)
    rate = frame["noise.rate"] if "noise.rate" in frame else pd.Series(0.0, index=frame.index)
    frame["noise"] = rate.where(frame["noise.name"].astype(str) != "none", 0.0).astype(float)
    frame["budget"] = frame["constraints.budget"].astype(int)
    frame["setting"] = ""
    all_skipped = frame["status"].eq("skipped").groupby(frame["entry"]).transform("all").astype(bool)
    return frame[~all_skipped].reset_index(drop=True)


def budgets_of(frame: pd.DataFrame) -> list[int]:
    """The budgets q of the curves' columns ``ari_all_q<q>``, in increasing order."""
    return sorted(int(c.removeprefix("ari_all_q")) for c in frame.columns
                  if c.startswith("ari_all_q") and c.removeprefix("ari_all_q").isdigit())


def curve_frame(frame: pd.DataFrame, seed: int = 0, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Long form of the curves: per (dataset, noise, entry, view, q) the mean ARI over the ok trials and
    its 95 % percentile bootstrap interval over the trials; ``view`` is ``all`` or ``unqueried``."""
    ok = frame[frame["status"] == "ok"]
    out = []
    for (dataset, noise, entry), rows in ok.groupby(["dataset", "noise", "entry"], sort=True):
        for view in ("all", "unqueried"):
            for q in budgets_of(frame):
                column = f"ari_{view}_q{q}"
                if column not in rows:
                    continue
                values = rows[column].to_numpy(float)
                lo, hi = bootstrap_ci(values, n_boot=n_boot, seed=seed)
                out.append(dict(dataset=dataset, noise=noise, entry=entry, view=view, q=q,
                                mean=float(np.nanmean(values)) if np.isfinite(values).any() else np.nan,
                                ci_low=lo, ci_high=hi, n=int(np.isfinite(values).sum())))
    return pd.DataFrame(out, columns=["dataset", "noise", "entry", "view", "q", "mean", "ci_low", "ci_high", "n"])


def auc_table(frame: pd.DataFrame, metric: str = METRIC, seed: int = 0, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Per (dataset, noise, entry): the mean area over the ok trials (NaN when one of them is NaN: an
    undefined unqueried area, as in the ranking), its bootstrap interval over the trials, and the ok / all
    trial counts."""
    out = []
    for (dataset, noise, entry), rows in frame.groupby(["dataset", "noise", "entry"], sort=True):
        values = rows.loc[rows["status"] == "ok", metric].to_numpy(float)
        lo, hi = bootstrap_ci(values, n_boot=n_boot, seed=seed)
        out.append(dict(dataset=dataset, noise=noise, entry=entry, mean=float(np.mean(values)) if values.size else np.nan,
                        ci_low=lo, ci_high=hi, n_ok=int(values.size), n=len(rows)))
    return pd.DataFrame(out, columns=["dataset", "noise", "entry", "mean", "ci_low", "ci_high", "n_ok", "n"])


def _scores(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Cells x entries: the leaderboard's :func:`cell_scores` of ``metric`` (a failed curve scores 0)."""
    long = frame.assign(method=frame["entry"], value=frame[metric])
    return cell_scores(long, metric, _CONVENTION, failure_score=FAILURE_SCORE)


def effects(frame: pd.DataFrame, metric: str = METRIC, margin: float = 0.03, alpha: float = 0.05, seed: int = 0,
            n_boot: int = N_BOOT) -> dict:
    """The ranking of ``metric`` (module docstring): ``{"effects": one row per (reference, entry), "p_best":
    per entry, "best": the best entry or None, "set_means": data sets x entries, "unscored": the data sets
    on which no ranked entry has a score (left out), "reference_pairs": :func:`reference_pairs`}``."""
    scores = _scores(frame, metric)
    set_means = _set_means(scores)
    peers = reference_pairs(list(scores.columns))
    entries = [e for e in scores.columns if e not in peers]
    # a reference implementation scored where no ranked entry is makes no block: the blocks are the ranked entries'
    unscored = sorted(set_means.index[set_means[entries].isna().all(axis=1)])
    datasets = sorted(d for d in set_means.index if d not in unscored)
    set_means = set_means.reindex(datasets)
    best, _ = _best(set_means[entries])
    families = [(e, "random", _random_family(e, entries)) for e in entries if e.startswith("random/")]
    if best is not None:
        families.append((best, "best", [e for e in entries if e != best]))
    families += [(peer, "reference implementation", [ours]) for peer, ours in peers.items()]
    tables = []
    for name, kind, members in families:
        diffs = scores[members].sub(scores[name], axis=0).groupby(level="dataset").mean()
        diffs = diffs.reindex(datasets).dropna(how="all").round(12)
        if diffs.empty:  # no other entry, or no data set scored (e.g. every set too small to leave points unasked)
            continue
        tables.append(_pair_table(diffs, margin, alpha, seed, n_boot).assign(reference=kind, reference_name=name))
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    return {"effects": table, "p_best": p_best(set_means[entries], n_boot, seed), "best": best,
            "set_means": set_means, "unscored": unscored, "reference_pairs": peers}


def effects_by_noise(frame: pd.DataFrame, metric: str = METRIC, margin: float = 0.03, alpha: float = 0.05,
                     seed: int = 0, n_boot: int = N_BOOT) -> pd.DataFrame:
    """:func:`effects` against ``random/<method>`` at each oracle noise rate alone (the cells of that rate;
    Holm over each random family at that rate): whether a strategy's lead over random survives wrong
    answers. One row per (noise, reference, entry) with :func:`effects`' columns and ``noise``."""
    tables = []
    for noise, rows in frame.groupby("noise", sort=True):
        table = effects(rows, metric, margin=margin, alpha=alpha, seed=seed, n_boot=n_boot)["effects"]
        if len(table):
            tables.append(table[table["reference"] == "random"].assign(noise=float(noise)))
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


def _random_family(random_entry: str, entries: list[str]) -> list[str]:
    """The entries read against ``random/<method>``: the other entries of ``<method>`` and those that ask
    their own questions (no ``/`` in the label)."""
    method = random_entry.partition("/")[2]
    return [e for e in entries if e != random_entry and ("/" not in e or e.partition("/")[2] == method)]


def cost_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per entry: the median CPU seconds per question of the strategy and per refit of the method, the
    curves' CPU seconds in all, and the trials."""
    grouped = frame.groupby("entry")
    return pd.DataFrame({
        "strategy_cpu_per_query": grouped["strategy_cpu_per_query"].median(),
        "refit_cpu_mean": grouped["refit_cpu_mean"].median(),
        "curve_cpu_seconds": grouped["curve_cpu_time"].sum(),
        "trials": grouped.size(),
    }).reset_index()


def status_table(data: pd.DataFrame) -> pd.DataFrame:
    """Every row's status counted per entry (the skipped-only pairs included)."""
    return (data.assign(entry=entry_labels(data)).groupby(["entry", "status"]).size()
            .unstack("status", fill_value=0).reset_index())


def measured_core_hours(data: pd.DataFrame) -> float:
    """The curves' CPU time in all (``curve_cpu_time``, CPU seconds of this process), in hours."""
    return float(pd.to_numeric(data.get("curve_cpu_time"), errors="coerce").sum()) / 3600.0


def merge_active_with(new: pd.DataFrame, shipped: pd.DataFrame, **names) -> tuple[pd.DataFrame, list[str]]:
    """:func:`ccbench.reporting.merge_with` for anytime rows: the query strategy is the entry's, not the
    cell's, so a new strategy's rows join the shipped cells (the same data sets, budget and noise), and
    every other check of ``merge_with`` (protocol, cells, machines, clashes) applies unchanged."""
    hidden = "active.strategy"
    try:
        merged, notes = merge_with(new.rename(columns={STRATEGY: hidden}), shipped.rename(columns={STRATEGY: hidden}),
                                   **names)
    except ValueError as exc:
        raise ValueError(f"{exc}. For the active track: run the new strategy with experiment=active (dataset= and "
                         f"noise.rate= may pick a subset; keep its constraints.budget, step and n_trials)") from exc
    attrs = dict(merged.attrs)
    merged = merged.rename(columns={hidden: STRATEGY})
    merged.attrs.update(attrs)
    return merged, notes
