"""The leaderboard's budget sensitivity (issue 50, item 4): what the headline says when the cells that failed
at the board's per-trial budget are run once more at a larger one (``experiment=leaderboard_budget6x``), and
whether the measurements argue for a budget per data-set size class.

Definitions (stated on the page and in docs/leaderboard.md):

- The **board's budget** is the most common ``trial_timeout`` of the rows (ties: the smaller), and its
  ``time_budget`` the most common among those rows: the budget most of the board was run at.
- A **re-run row** (:func:`rerun_mask`) is a row whose ``trial_timeout`` or ``time_budget`` is above the
  board's and whose (``config_hash``, ``trial``) also has a row at the board's budget. Neither budget key is
  part of a cell's identity, so both rows name the same cell and trial. A re-run row never replaces its
  board twin (:func:`~._frame.long_frame` leaves it out; the loaders keep one row per key *and budget*):
  the board stays at its own budget; the re-run rows feed this section only.
- The **re-run headline** is :func:`~.effects.headline_effects` on the board's rows with each *complete*
  re-run (cell, method, seed) standing for the board's trials of it: the board's trials there are dropped and
  the re-run's take their place, so the cell's value is the mean of the re-run's trials. A re-run may run
  fewer trials than the board (``n_trials=3`` against the board's 10: the first three of the ten paired
  trials, same seeds): the power analysis (docs/leaderboard.md) finds three trials within two points of
  power of ten, the data sets deciding. A re-run (cell, method, seed) is **complete** when it has as many
  trials as its rows' ``n_trials`` (without that column: as many as the board's failed trials there);
  an incomplete one is shown (``incomplete``) and left out of the re-run headline. A **verdict change** is a (convention, subset,
  reference, method) whose verdict differs between the board's headline and the re-run one (the best may
  itself change: ``reference_name`` is shown for both).
- A re-run cell's **outcome**: ``now ok`` when every re-run trial is ok, else ``still timeout`` when one
  timed out, ``still refused`` when one was refused, else ``still failed`` (an error, a memory limit);
  ``incomplete`` while it is not complete.
- **Cost**: the sum of the re-run rows' ``trial_cpu_time`` (the worker's CPU for the whole trial), in
  core-hours.
- **Machines** (:func:`machine_comparison`): the CPUs the two sets of rows were made on (``env.cpu``) and, from
  the trials that finished at both budgets, the board's CPU over the re-run's per method: a re-run on a faster
  machine or with faster code (same answers) buys more than its factor of the board's work, and says by how much.
- **Size classes** (:data:`SIZE_CLASSES`, on ``n_samples``): per (method, class), the share of the method's
  cells (``config_hash``) that hit the board's budget (a trial timed out or was refused), and of those the
  share the installed (calibrated) time models predict to fit the larger budget (predicted CPU per trial
  <= :data:`RERUN_FACTOR` x the board's ``trial_timeout``; :func:`ccbench.running.time_models.predict_cells`).
"""

from __future__ import annotations

import re
from importlib import resources

import numpy as np
import pandas as pd

from ._rerun_rows import _KEY, BUDGET_KEYS, _numeric, board_budget, rerun_mask

__all__ = ["BUDGET_KEYS", "RERUN_FACTOR", "SIZE_CLASSES", "board_budget", "rerun_mask", "rerun_cells", "complete_groups",
           "verdict_changes", "size_class_table", "per_class_sentence", "budget_sensitivity_blocks"]

#: The re-run's budget as a multiple of the board's (conf/experiment/leaderboard_budget6x.yaml).
RERUN_FACTOR = 6

#: Data-set size classes on ``n_samples``: (label, low inclusive, high exclusive).
SIZE_CLASSES = (("n < 500", 0, 500), ("500 <= n <= 1,500", 500, 1501), ("n > 1,500", 1501, np.inf))

#: A class where at least this share of cells hits the budget is one the budget binds...
BINDS = 0.05
#: ... and the larger budget serves it when the models predict at least this share of its hits to fit.
SERVED = 0.5

_EXPERIMENT = "leaderboard_budget6x"


_GROUP = ["kind", "method", "seed"]  # with CELL: one re-run (cell, method, seed)


def _replaced(frame: pd.DataFrame, rerun: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (the board's long rows) with the trials of each (cell, kind, method, seed) of ``rerun`` (its
    complete groups: :func:`complete_groups`) in place of the board's trials of it."""
    from ._frame import CELL

    key = [*CELL, *_GROUP]
    taken = pd.MultiIndex.from_frame(rerun[key].astype(str))
    keep = ~pd.MultiIndex.from_frame(frame[key].astype(str)).isin(taken)
    return pd.concat([frame[keep], rerun], ignore_index=True)


def complete_groups(frame: pd.DataFrame, rerun: pd.DataFrame, expected: pd.Series | None = None) -> pd.Series:
    """Per row of ``rerun``: whether its (cell, method, seed) is complete (module docstring): it has as many
    trials as ``expected`` (the rows' ``n_trials``, aligned with ``rerun``), or, where that is missing, as many
    as the board's failed trials of it in ``frame``."""
    from ._frame import CELL

    key = [*CELL, *_GROUP]
    have = rerun.groupby(key, dropna=False)["trial"].transform("nunique")
    failed = frame[frame["status"] != "ok"].groupby(key, dropna=False).size().rename("failed").reset_index()
    board = rerun[key].merge(failed, on=key, how="left")["failed"].fillna(0).to_numpy()
    need = board if expected is None else np.where(np.isfinite(expected.to_numpy(float)), expected, board)
    return pd.Series(have.to_numpy() >= need, index=rerun.index)


def _outcome(statuses: pd.Series) -> str:
    if statuses.eq("ok").all():
        return "now ok"
    for status in ("timeout", "refused"):
        if statuses.eq(status).any():
            return f"still {status}"
    return "still failed"


def rerun_cells(frame: pd.DataFrame, rerun: pd.DataFrame, cpu: pd.Series, complete: pd.Series | None = None
                ) -> pd.DataFrame:
    """One row per re-run (cell, method, seed): ``board`` (the board's most common failure there), ``outcome``
    (module docstring; ``incomplete`` where ``complete`` (:func:`complete_groups`, by default with no
    ``n_trials``) is False), ``trials`` and ``cpu_s`` (the re-run trials' ``trial_cpu_time`` summed)."""
    from ._frame import CELL

    key = [*CELL, *_GROUP]
    complete = complete_groups(frame, rerun) if complete is None else complete
    out = rerun.assign(cpu_s=cpu.to_numpy(), complete=complete.to_numpy()).groupby(key, dropna=False).agg(
        outcome=("status", _outcome), trials=("status", "size"), cpu_s=("cpu_s", "sum"),
        complete=("complete", "all")).reset_index()
    bad = frame[frame["status"] != "ok"]
    board = bad.groupby(key, dropna=False)["status"].agg(board=lambda s: s.mode().iloc[0])
    out = out.merge(board.reset_index(), on=key, how="left").fillna({"board": "ok"})
    # a re-run still under way (or stopped) is not yet an outcome
    out["outcome"] = out["outcome"].where(out["complete"], "incomplete")
    return out.drop(columns="complete")


def verdict_changes(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """The rows of two headline effects tables (:data:`~.effects.EFFECT_COLUMNS`) whose verdict differs, per
    (convention, subset, reference, method); a method in one table only counts as a change (``none``)."""
    key = ["convention", "subset", "reference", "method"]
    cols = ["reference_name", "mean_diff", "verdict"]
    both = before[key + cols].merge(after[key + cols], on=key, how="outer", suffixes=("_board", "_rerun"))
    both[["verdict_board", "verdict_rerun"]] = both[["verdict_board", "verdict_rerun"]].fillna("none")
    changed = both[both["verdict_board"] != both["verdict_rerun"]]
    return changed.sort_values(key).reset_index(drop=True)


def _size_class(n: pd.Series) -> pd.Series:
    out = pd.Series(None, index=n.index, dtype=object)
    for label, low, high in SIZE_CLASSES:
        out[(n >= low) & (n < high)] = label
    return out


def size_class_table(data: pd.DataFrame) -> pd.DataFrame:
    """Per (method label, size class) of the board's rows: ``cells``, ``hit`` (cells with a timeout or a
    refusal), ``hit_share``, ``fit_at_rerun`` (of the hit cells, those whose calibrated prediction is within
    :data:`RERUN_FACTOR` x the board's trial_timeout) and ``predicted_at_rerun`` (hit cells with a prediction).
    Empty without the columns a calibration needs."""
    from ...running import time_models

    cols = ["method", "size_class", "cells", "hit", "hit_share", "fit_at_rerun", "predicted_at_rerun"]
    needed = {"config_hash", "method.name", "n_samples", "status", "trial_timeout"}
    if data.empty or not needed <= set(data.columns):
        return pd.DataFrame(columns=cols)
    cells = time_models.cell_times(data)
    labels = (data["method_label"] if "method_label" in data else data["method.name"]).astype(str)
    predicted = time_models.predict_cells(cells)  # on the method names (cells["method"])
    cells["method"] = labels.groupby(data["config_hash"]).first().reindex(cells.index)  # shown: the labels
    cells["hit"] = cells["censored"] | (cells["n_refused"] > 0)
    limit = RERUN_FACTOR * board_budget(data)[0]
    cells["fits"] = cells["hit"] & (predicted <= limit)
    cells["predicted"] = cells["hit"] & predicted.notna()
    cells["size_class"] = _size_class(pd.to_numeric(cells["n"], errors="coerce"))
    out = cells.groupby(["method", "size_class"]).agg(
        cells=("hit", "size"), hit=("hit", "sum"), fit_at_rerun=("fits", "sum"),
        predicted_at_rerun=("predicted", "sum")).reset_index()
    out["hit_share"] = out["hit"] / out["cells"]
    return out[cols]


def per_class_sentence(table: pd.DataFrame, board_timeout: float) -> str:
    """Whether the measurements argue for a budget per size class, derived from :func:`size_class_table`. A
    class is *bound* when :data:`BINDS` or more of its cells hit the board's budget, and *served* by the
    larger budget when the calibrated models predict at least :data:`SERVED` of its hit cells to fit it. The
    measurements argue for a budget per class when some classes are bound and others are not, and a bound
    class is served (a larger budget there, the board's elsewhere); not when no class is bound (one budget
    stands), when every class is (a larger budget would be one for all), or when no bound class is served
    (6x would not change what fails)."""
    if table.empty:
        return "No size-class analysis: the rows lack the columns a time-model calibration needs."
    per = table.groupby("size_class")[["cells", "hit", "fit_at_rerun"]].sum()
    per = per.loc[[c for c, _, _ in SIZE_CLASSES if c in per.index]]
    per["hit_share"] = per["hit"] / per["cells"]
    per["served_share"] = (per["fit_at_rerun"] / per["hit"].where(per["hit"] > 0)).fillna(0.0)
    shares = "; ".join(f"{c}: {int(r.hit)} of {int(r.cells)} cells hit it ({r.hit_share:.1%}), "
                       f"{int(r.fit_at_rerun)} of those ({r.served_share:.0%}) predicted to fit {RERUN_FACTOR}x"
                       for c, r in per.iterrows())
    bound = per[per["hit_share"] >= BINDS]
    free = per.index.difference(bound.index, sort=False)
    served = bound[bound["served_share"] >= SERVED]
    budget = f"{board_timeout:g} s" if np.isfinite(board_timeout) else "the board's budget"
    names = lambda idx: ", ".join(idx)  # noqa: E731
    if bound.empty:
        return (f"The measurements do not argue for a budget per size class ({shares}): {budget} binds on "
                f"{BINDS:.0%} of the cells or more in no class; one budget for every class stands.")
    if free.empty:
        return (f"The measurements do not argue for a budget per size class ({shares}): {budget} binds on "
                f"{BINDS:.0%} of the cells or more in every class, so a larger budget would be one for every class.")
    if served.empty:
        return (f"The measurements do not argue for a budget per size class ({shares}): {budget} binds on "
                f"{names(bound.index)}, but the models predict {RERUN_FACTOR}x to serve under {SERVED:.0%} of "
                f"the hits there.")
    unserved = bound.index.difference(served.index, sort=False)
    return (f"The measurements argue for a budget per size class ({shares}): {budget} binds on "
            f"{BINDS:.0%} of the cells or more in {names(bound.index)} and not in {names(free)}; "
            f"{RERUN_FACTOR}x is predicted to fit at least {SERVED:.0%} of the hits in {names(served.index)}"
            + (f" (in {names(unserved)} fewer: more than {RERUN_FACTOR}x would be needed there)" if len(unserved)
               else "") + f", so {RERUN_FACTOR * board_timeout:g} s for {names(served.index)} and {budget} for "
            f"{names(free)}.")


def _experiment_text() -> str:
    """The re-run's command and estimate, read from its experiment file's header (conf/experiment)."""
    try:
        text = (resources.files("ccbench_conf") / "experiment" / f"{_EXPERIMENT}.yaml").read_text()
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        return f"(the experiment file conf/experiment/{_EXPERIMENT}.yaml is not installed here)"
    commands = [m.group(1) for m in re.finditer(rf"^#\s+(ccbench experiment={_EXPERIMENT}\b.*)$", text, re.M)]
    estimate = re.search(r"(\d[\d.,]*) core-hours", text)
    if not commands:
        return f"(conf/experiment/{_EXPERIMENT}.yaml lists no command)"
    return (f"Run the {len(commands)} command(s) listed in conf/experiment/{_EXPERIMENT}.yaml into one sweep dir "
            f"(the first: `{commands[0]}`; `python sweeps/run_blocks.py conf/experiment/{_EXPERIMENT}.yaml "
            f"--jobs 2 --dir sweeps/{_EXPERIMENT}` runs them all), then report that dir beside this one "
            f"(`ccbench report reports/leaderboard sweeps/{_EXPERIMENT} --leaderboard --out DIR`)."
            + (f" The calibrated time models estimate {estimate.group(1)} core-hours." if estimate else ""))


def _machines(rows: pd.DataFrame) -> str:
    cpus = sorted(rows["env.cpu"].dropna().astype(str).unique()) if "env.cpu" in rows else []
    return ", ".join(f"`{c}`" for c in cpus) or "an unrecorded CPU"


def machine_comparison(data: pd.DataFrame, mask: pd.Series, rerun_timeout: float) -> str:
    """How a CPU second of the re-run compares with one of the board's, from the trials that finished (``ok``)
    at both budgets: the board's ``trial_cpu_time`` over the re-run's, per method. The re-run may be made on
    another machine, or with faster code of the same answers, and then buys more than its factor of the board's
    work; only these paired trials measure by how much (cells the board completed, run again, measure it too:
    ``tests/benchmarks/machine_check.py``)."""
    text = f"The re-run's rows were made on {_machines(data[mask])}, the board's on {_machines(data[~mask])}."
    cols = _KEY + ["method.name", "trial_cpu_time"] + (["code.method_hash"] if "code.method_hash" in data else [])

    def finished(rows: pd.DataFrame) -> pd.DataFrame:  # rows without a CPU clock (no trial_timeout) have none
        rows = rows[rows["status"].eq("ok")].reindex(columns=cols).astype({k: str for k in _KEY})
        return rows[pd.to_numeric(rows["trial_cpu_time"], errors="coerce").gt(0)]

    pairs = finished(data[mask]).merge(finished(data[~mask]), on=_KEY, suffixes=("", "_board"))
    if pairs.empty:
        return text + (" No trial finished at both budgets, so how a CPU second of one compares with one of the other "
                       "is not measured here (`tests/benchmarks/machine_check.py` measures it on cells the board "
                       "completed).")
    ratio = pairs["trial_cpu_time_board"].astype(float) / pairs["trial_cpu_time"].astype(float)
    per = ratio.groupby(pairs["method.name"]).median().sort_values()
    text += (f" {len(pairs)} trials finished at both budgets ({per.size} methods): the board's took {ratio.median():.2g}x "
             f"the re-run's CPU (median; per method " + ", ".join(f"`{m}` {r:.2g}x" for m, r in per.items())
             + f"), so for those methods the re-run's {rerun_timeout:g} s bought about that multiple of "
               f"{rerun_timeout:g} s of the board's work, not exactly {rerun_timeout:g} s.")
    if "code.method_hash" in pairs:
        changed = sorted(pairs.loc[pairs["code.method_hash"] != pairs["code.method_hash_board"], "method.name"].unique())
        if changed:
            text += (f" The code of {len(changed)} of them changed in between (`code.method_hash`: "
                     + ", ".join(f"`{m}`" for m in changed) + "), so the ratio holds the code's speed with the machine's.")
    return text


def _cpu_seconds(data: pd.DataFrame, rows: pd.DataFrame) -> pd.Series:
    """The ``trial_cpu_time`` of long-frame ``rows`` (``row`` points into ``data``); 0 where not recorded."""
    return _numeric(data, "trial_cpu_time").iloc[rows["row"].to_numpy()].fillna(0.0)


def budget_sensitivity_blocks(frame: pd.DataFrame, kind: str, data: pd.DataFrame | None, metric: str,
                              margin: float, alpha: float, md_frame) -> list:
    """The page's budget-sensitivity section: ``frame`` the board's rows of ``kind`` (every seed; re-run rows
    are not in it), ``data`` every row (re-run rows included; ``frame['row']`` points into it), ``md_frame``
    the page's table formatter."""
    from ._frame import long_frame, _of_kind
    from .effects import FAILURE_SCORE, headline_effects

    blocks = [("h", 2, "10. Budget sensitivity: the failed cells at a larger budget")]
    if data is None or data.empty:
        return blocks + [("md", "No rows: no budget-sensitivity analysis.")]
    timeout, budget = board_budget(data)
    board = data.iloc[frame["row"].to_numpy()]  # this page's cells at the board's budget
    blocks.append(("md", f"The board's budget: `trial_timeout` = {timeout:g} s of one core, `time_budget` = "
                         f"{budget:g} s (the most common in the rows). Re-run rows (same `config_hash` and trial "
                         f"at a larger budget) feed this section only; the board's numbers stay at its budget."))
    table = size_class_table(board)
    blocks += [("md", per_class_sentence(table, timeout))]
    if len(table):
        shown = table.assign(hit_share=table["hit_share"].map(lambda v: f"{v:.1%}"))
        blocks += [("md", f"Per method and data-set size class (`n_samples`) on this page's cells: cells (`config_hash`) run, those that "
                          f"hit the {timeout:g} s budget (a timeout or a refusal), and of those how many the installed "
                          f"(calibrated) time models predict to fit {RERUN_FACTOR}x ({RERUN_FACTOR * timeout:g} s) "
                          f"of the ones with a prediction."),
                   ("md", md_frame(shown[shown["hit"] > 0], index=False))]  # a class no cell of which hit it: left out
    mask = rerun_mask(data)
    if not mask.any():
        return blocks + [("md", "The re-run of the failed cells at a larger budget has not been made: these rows "
                                "hold no row above the board's budget. " + _experiment_text())]
    positions = np.flatnonzero(mask.to_numpy())
    rerun_all = long_frame(data.iloc[positions], metric)
    rerun_all["row"] = positions[rerun_all["row"].to_numpy()]  # back to positions in ``data``
    rerun = _of_kind(rerun_all, kind)
    total_h = float(_cpu_seconds(data, rerun_all).sum()) / 3600
    re_timeout = _numeric(data, "trial_timeout")[mask]
    complete = complete_groups(frame, rerun, _numeric(data, "n_trials").iloc[rerun["row"].to_numpy()]
                               .set_axis(rerun.index) if "n_trials" in data else None)
    cells = rerun_cells(frame, rerun, _cpu_seconds(data, rerun), complete)
    outcomes = cells["outcome"].value_counts()
    blocks.append(("md", f"Re-run at `trial_timeout` = {', '.join(f'{t:g}' for t in sorted(re_timeout.dropna().unique()))} s: "
                         f"{len(rerun_all)} trials over all kinds, {total_h:.3g} core-hours (sum of `trial_cpu_time`). "
                         f"On this page: {len(cells)} (cell, method, seed) re-run, {len(rerun)} trials, "
                         f"{cells['cpu_s'].sum() / 3600:.3g} core-hours; outcome: "
                         + ", ".join(f"{outcomes.get(o, 0)} {o}" for o in ("now ok", "still timeout", "still refused",
                                                                          "still failed", "incomplete")) + "."))
    if len(cells):
        blocks.append(("md", md_frame(cells.assign(cpu_s=cells["cpu_s"].round(2)), index=False)))
    blocks.append(("md", machine_comparison(data, mask, float(re_timeout.max()))))
    if metric not in FAILURE_SCORE or not complete.any():
        return blocks + [("md", "No verdict comparison: " + (f"no failure score for `{metric}`." if metric not in
                                                           FAILURE_SCORE else "no complete re-run of this kind."))]
    before = headline_effects(frame, metric, margin=margin, alpha=alpha)["effects"]
    after = headline_effects(_replaced(frame, rerun[complete]), metric, margin=margin, alpha=alpha)["effects"]
    changes = verdict_changes(before, after)
    if changes.empty:
        return blocks + [("md", f"No headline verdict (against `kmeans` or the best, either convention, either "
                                f"subset) changes when the complete re-runs' trials replace the board's.")]
    return blocks + [("md", f"{len(changes)} headline verdict(s) change when the complete re-runs' trials replace "
                            f"the board's (against `kmeans` and the best; the best named per side):"),
                     ("md", md_frame(changes, index=False))]
