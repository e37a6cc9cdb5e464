"""The leaderboard's time-budget edge: the (method, data set) pairs whose trials sit within 30 % of the
per-trial budget (``trial_timeout``), where whether a method is excluded is decided by a few per cent of
speed: the machine's load, a library version, a neighbour's sweep."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._format import fmt
from ..origins import _frame_markdown

__all__ = ["EDGE", "budget_edge", "budget_blocks"]

#: A trial within this share of the budget is "at the edge" (0.3: from 70 % of the budget up).
EDGE = 0.3


def _measured(rows: pd.DataFrame) -> tuple[pd.Series, str]:
    """Seconds per trial as the budget counts them: the worker's CPU time of the whole call
    (``trial_cpu_time``) where recorded; else the fit's CPU time (``fit_cpu_time``: a shared
    unsupervised fit's rows carry the fit's, not a call's) plus ``tune_time``; else the wall time of
    fit plus tuning (``fit_time`` + ``tune_time``: rows recorded before CPU times). A shared fit on a
    loaded machine took 41.8 s of wall for 8.6 s of CPU: reading its wall time as CPU put it at 4x a
    budget it never reached."""
    def col(name):
        return pd.to_numeric(rows[name], errors="coerce") if name in rows else pd.Series(np.nan, index=rows.index)

    tune = col("tune_time").fillna(0.0)
    wall = col("fit_time").add(tune, fill_value=np.nan)
    fit_cpu = col("fit_cpu_time").add(tune, fill_value=np.nan)
    cpu = col("trial_cpu_time").where(col("trial_cpu_time").notna(), fit_cpu)
    what = "CPU s" if cpu.notna().any() else "wall s"
    return cpu.where(cpu.notna(), wall), what


def budget_edge(frame: pd.DataFrame, data: pd.DataFrame | None, edge: float = EDGE) -> pd.DataFrame:
    """Per (method, data set) of ``frame`` (the leaderboard's long frame; ``row`` points into ``data``):
    ``trials``, ``timeouts``, ``max_s`` (the slowest ok trial, in the budget's measure), ``budget_s``
    (``trial_timeout``) and ``max_share`` (max_s / budget_s); only the pairs with an ok trial at
    ``1 - edge`` of the budget or more, or with both ok and timed-out trials. Empty without ``data``
    or ``trial_timeout``."""
    if data is None or "trial_timeout" not in data or frame.empty:
        return pd.DataFrame(columns=["method", "dataset", "trials", "timeouts", "max_s", "budget_s", "max_share"])
    rows = data.iloc[frame["row"].to_numpy()]
    seconds, _ = _measured(rows)
    ok = rows["status"].astype(str).eq("ok").to_numpy()
    table = pd.DataFrame({
        "method": frame["method"].to_numpy(), "dataset": frame["dataset"].to_numpy(),
        "timeout": rows["status"].astype(str).eq("timeout").to_numpy(),
        "ok": ok, "seconds": np.where(ok, seconds.to_numpy(float), np.nan),
        "budget_s": pd.to_numeric(rows["trial_timeout"], errors="coerce").to_numpy(),
    })
    out = table.groupby(["method", "dataset"], sort=True).agg(
        trials=("ok", "size"), ok=("ok", "sum"), timeouts=("timeout", "sum"), max_s=("seconds", "max"),
        budget_s=("budget_s", "max")).reset_index()
    out["max_share"] = out["max_s"] / out["budget_s"]
    near = (out["max_share"] >= 1.0 - edge) | ((out["timeouts"] > 0) & (out["ok"] > 0))
    return out[near].drop(columns="ok").sort_values(["max_share", "method"], ascending=[False, True],
                                                     na_position="last").reset_index(drop=True)


def budget_blocks(frame: pd.DataFrame, data: pd.DataFrame | None, edge: float = EDGE) -> list:
    """The page's section on the budget's edge: a heading, what is counted, the table of
    :func:`budget_edge` (or a line saying no pair is near the budget)."""
    table = budget_edge(frame, data, edge)
    what = _measured(data.iloc[frame["row"].to_numpy()])[1] if data is not None and not frame.empty else "s"
    text = (f"Method-set pairs whose slowest ok trial used at least {fmt(1 - edge)} of the per-trial budget "
            f"(`trial_timeout`), or that both finished and timed out: there, whether the method is excluded "
            f"depends on a few per cent of speed. Seconds are the worker's CPU time of the whole call "
            f"(`trial_cpu_time`, what the limit counts) where recorded, else the fit's CPU time plus tuning "
            f"(`fit_cpu_time`: a shared unsupervised fit's rows), else the wall time of fit and tuning (rows "
            f"from before CPU times); measure here: {what}.")
    if table.empty:
        return [("h", 2, "8. Near the time budget"), ("md", text), ("md", "No method-set pair is within "
                                                                        f"{fmt(edge * 100)} % of the budget.")]
    shown = table.map(lambda v: f"{v:.3g}" if isinstance(v, (float, np.floating)) and np.isfinite(v) else
                      ("" if isinstance(v, (float, np.floating)) else v))
    return [("h", 2, "8. Near the time budget"), ("md", text), ("md", _frame_markdown(shown))]
