"""Which rows of a results table are a larger-budget re-run of a board row (issue 50, item 4).

Kept apart from :mod:`.budget_sensitivity` (which reads the headline) so that :func:`~._frame.long_frame`
can leave re-run rows out without an import cycle. Definitions: :mod:`.budget_sensitivity`'s docstring.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["BUDGET_KEYS", "board_budget", "rerun_mask", "shadowed_reruns"]

#: The row columns that hold the budget (not identity keys: a re-run keeps its cell's config_hash).
BUDGET_KEYS = ("trial_timeout", "time_budget")

_KEY = ["config_hash", "trial"]


def _numeric(data: pd.DataFrame, col: str) -> pd.Series:
    return pd.to_numeric(data[col], errors="coerce") if col in data else pd.Series(np.nan, index=data.index)


def board_budget(data: pd.DataFrame) -> tuple[float, float]:
    """(trial_timeout, time_budget) of the board (:mod:`.budget_sensitivity`'s docstring); NaN where the rows lack the column."""
    timeout = _numeric(data, "trial_timeout")
    if timeout.notna().any():
        counts = timeout.value_counts()
        board_timeout = float(counts[counts == counts.max()].index.min())
        at_board = timeout == board_timeout
    else:
        board_timeout, at_board = np.nan, pd.Series(True, index=data.index)
    budget = _numeric(data, "time_budget")[at_board]
    counts = budget.value_counts()
    return board_timeout, float(counts[counts == counts.max()].index.min()) if len(counts) else np.nan


def rerun_mask(data: pd.DataFrame) -> pd.Series:
    """True on the re-run rows of ``data`` (:mod:`.budget_sensitivity`'s docstring): above the board's budget, with a twin at it."""
    if data.empty or not set(_KEY) <= set(data.columns) or not any(k in data for k in BUDGET_KEYS):
        return pd.Series(False, index=data.index)
    timeout, budget = board_budget(data)
    above = _numeric(data, "trial_timeout").gt(timeout) | _numeric(data, "time_budget").gt(budget)
    at_board = ~above
    board_keys = pd.MultiIndex.from_frame(data.loc[at_board, _KEY].astype(str))
    keys = pd.MultiIndex.from_frame(data[_KEY].astype(str))
    return pd.Series(above.to_numpy() & keys.isin(board_keys), index=data.index)


def shadowed_reruns(data: pd.DataFrame) -> pd.Series:
    """True on the ``ok`` re-run rows whose board twin (same ``config_hash`` and trial) is ``ok`` too: the key's
    partition is the board's (the one a shipped folder carries), so such a row has no partition of its own there."""
    rerun = rerun_mask(data)
    if not rerun.any() or "status" not in data:
        return pd.Series(False, index=data.index)
    ok = data["status"].eq("ok")
    keys = pd.MultiIndex.from_frame(data[_KEY].astype(str))
    board_ok = pd.MultiIndex.from_frame(data.loc[ok & ~rerun, _KEY].astype(str))
    return pd.Series((ok & rerun).to_numpy() & keys.isin(board_ok), index=data.index)
