"""What an ``ok`` row does not say by its status: the trials whose fit stopped before its own
convergence rule, those given the true k that returned another number of clusters, and those of a
hard-constraint method that left a constraint unmet (NNC's greedy placement can get stuck).

A method ranked "given the true k" is on equal terms only where it returned k: the affinity-propagation
family reaches k by a search on the preference (:func:`ccbench.similarity.bisect_preference`) and keeps
the closest count when no preference gives k; SSAP-L with random pairs missed k in 58 % of its trials
on the first 13 regenerated sets (its macro-nodes are the must-link chunklets, more than k). The ranks keep those trials (they are the method's answer); this
section says how many there are, per method and per data set.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._format import fmt
from ..origins import _frame_markdown

__all__ = ["fidelity_table", "fidelity_blocks"]

#: A method is listed per data set when at least this share of its ok trials there did not converge, missed k
#: or left a hard constraint unmet.
SHOWN = 0.1


def _flags(frame: pd.DataFrame, data: pd.DataFrame) -> pd.DataFrame:
    """Per ok trial of ``frame``: ``not_converged`` (the row's ``converged`` is False; NaN where the method
    records none) and ``k_missed`` (given a k, untuned, and ``n_clusters_found`` differs; NaN where no k was
    given, or where a tuner chose k)."""
    ok = frame["status"].astype(str).eq("ok").to_numpy()
    rows = data.iloc[frame["row"].to_numpy()[ok]]
    part = frame[ok]

    def col(name):
        return rows[name] if name in rows else pd.Series(np.nan, index=rows.index)

    converged = pd.to_numeric(col("converged").astype(object), errors="coerce")  # True/False/1.0/0.0, NaN unknown
    not_converged = np.where(converged.isna(), np.nan, (converged == 0).astype(float))
    given = pd.to_numeric(col("n_clusters_given"), errors="coerce")
    found = pd.to_numeric(col("n_clusters_found"), errors="coerce")
    untuned = col("tune").fillna("none").astype(str).eq("none") if "tune" in rows else pd.Series(True, index=rows.index)
    judged = given.notna() & found.notna() & untuned
    k_missed = np.where(judged, (given != found).astype(float), np.nan)
    kind = col("constraint_kind").astype(object)
    violated = pd.to_numeric(col("n_violated"), errors="coerce")
    hard_unmet = np.where(kind.eq("hard") & violated.notna(), (violated > 0).astype(float), np.nan)
    return pd.DataFrame({"method": part["method"].to_numpy(), "dataset": part["dataset"].to_numpy(),
                         "not_converged": not_converged.astype(float), "k_missed": k_missed,
                         "hard_unmet": hard_unmet})


def fidelity_table(frame: pd.DataFrame, data: pd.DataFrame | None,
                   by: tuple = ("method",)) -> pd.DataFrame:
    """Per ``by`` group of ok trials: ``ok_trials``, ``not_converged`` (share of the trials whose row records
    convergence), ``k_given`` (trials given a k by the protocol, untuned), ``k_missed`` (share of those
    that returned another number of clusters) and ``hard_unmet`` (share of a hard-constraint method's
    trials with a constraint unmet, ``n_violated`` > 0). Only groups with something to say (a share above 0)."""
    columns = [*by, "ok_trials", "not_converged", "k_given", "k_missed", "hard_unmet"]
    if data is None or frame.empty:
        return pd.DataFrame(columns=columns)
    flags = _flags(frame, data)
    if flags.empty:
        return pd.DataFrame(columns=columns)
    out = flags.groupby(list(by), sort=True).agg(
        ok_trials=("method", "size"), not_converged=("not_converged", "mean"),
        k_given=("k_missed", "count"), k_missed=("k_missed", "mean"), hard_unmet=("hard_unmet", "mean")).reset_index()
    keep = (out["not_converged"].fillna(0) > 0) | (out["k_missed"].fillna(0) > 0) | (out["hard_unmet"].fillna(0) > 0)
    return out[keep].reset_index(drop=True)[columns]


def _shown(table: pd.DataFrame) -> pd.DataFrame:
    return table.map(lambda v: f"{v:.3f}" if isinstance(v, (float, np.floating)) and np.isfinite(v) else
                     ("" if isinstance(v, (float, np.floating)) else v))


def fidelity_blocks(frame: pd.DataFrame, data: pd.DataFrame | None) -> list:
    """The page's section 9: per method, then the (method, data set) pairs at or above :data:`SHOWN`."""
    head = ("h", 2, "9. Not converged, another k than the one given, a hard constraint unmet")
    text = ("Trials with status ok whose row says more: `not_converged` is the share of a method's ok trials whose fit "
            "stopped before its own convergence rule (`converged` false; among the rows that record it); `k_given` "
            "counts the ok trials the protocol gave the true k (untuned: a tuner chooses k itself) and `k_missed` the "
            "share of those that returned another number of clusters (the AP family reaches k by a search on the "
            "preference and keeps the closest count where no preference gives k); `hard_unmet` is the share of a "
            "hard-constraint method's ok trials that left a constraint unmet (`n_violated` > 0: NNC's greedy "
            "placement of a point cannot-linked into every cluster). All are kept in the ranks: they are the "
            "method's answer. A method with nothing to report is absent.")
    table = fidelity_table(frame, data)
    if table.empty:
        return [head, ("md", text), ("md", "Every ok trial converged, returned the k it was given and met its "
                                           "hard constraints.")]
    per_set = fidelity_table(frame, data, by=("method", "dataset"))
    per_set = per_set[(per_set[["not_converged", "k_missed", "hard_unmet"]].fillna(0) >= SHOWN).any(axis=1)]
    blocks = [head, ("md", text), ("md", _frame_markdown(_shown(table)))]
    if len(per_set):
        blocks += [("md", f"Per data set, where at least {fmt(SHOWN * 100)} % of a method's ok trials did not "
                          f"converge, missed k or left a hard constraint unmet:"), ("md", _frame_markdown(_shown(per_set)))]
    return blocks
