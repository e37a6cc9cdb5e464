"""The resume rule of :func:`ccbench.running.harness.run_job`: whether a recorded trial runs again.

A trial with no row runs. A recorded row is kept unless it is a failure (``error``, ``timeout``:
retried with ``rerun_errors``; an ``error`` whose set-up failed, :data:`~.results.NOT_SET_UP`, always), a
``refused`` row (memory or the model may have changed), a
``task_time_limit`` row (its SLURM task ran out of time, not the method: a fresh task may finish), a row
missing a metric the cell now asks for, or *stale*: made by other code of its method than the
current one (``code.method_hash``, :mod:`ccbench.running.provenance`) or with other inputs
(``code.inputs``), unless ``keep_stale=true``. :func:`~ccbench.running.harness.cell_is_complete`
applies the same rule without running anything. Private helpers of the harness, split from it
to keep it readable in one sitting.
"""

from __future__ import annotations

import logging

import pandas as pd

from . import provenance
from .results import FAILED_STATUSES, NOT_SET_UP

log = logging.getLogger("ccbench")


def _stale_reason(row: pd.Series, code: dict | None) -> str | None:
    """Why a row was not made by the current code of its method, or None."""
    if code is None:  # the method cannot be loaded now: its rows cannot be judged
        return None
    recorded = row.get(provenance.METHOD_HASH)
    if recorded is None or pd.isna(recorded):
        return "recorded before ccbench kept provenance (no code.method_hash): the code that made it is unknown"
    if recorded != code[provenance.METHOD_HASH]:
        files = provenance.changed_files(row.get(provenance.METHOD_FILES), code[provenance.METHOD_FILES])
        return f"method code changed ({', '.join(files) or 'its module list changed'})"
    inputs = provenance.changed_inputs(row.get(provenance.INPUTS), code.get(provenance.INPUTS))
    if inputs:
        return f"inputs changed ({', '.join(inputs)})"
    return None


def _needs_run(previous: pd.DataFrame, trial: int, *, rerun_errors: bool, metrics, code: dict | None = None,
               keep_stale: bool = False) -> tuple[bool, str | None]:
    """Whether trial ``trial`` must run given the rows already recorded, and why it re-runs."""
    if trial not in previous.index:
        return True, None
    row = previous.loc[trial]
    if row["status"] == "error" and str(row.get("error") or "").startswith(NOT_SET_UP):  # the run's failure
        return True, "retry of a trial whose set-up failed"
    if row["status"] in FAILED_STATUSES:
        if rerun_errors:
            return True, f"retry of a trial with status {row['status']}"
        # rerun_errors=false keeps a failure of this code (a CPU-time kill repeats), not one of older code
        stale = None if keep_stale else _stale_reason(row, code)
        return stale is not None, None if stale is None else f"stale: {stale}"
    if row["status"] == "refused":  # memory may have been freed, or the model changed: checking is cheap
        return True, "retry of a refused trial"
    if row["status"] == "task_time_limit":  # the SLURM task's time ran out, not the method's: a fresh task may finish
        return True, "retry of a trial stopped by its SLURM task's time limit"
    stale = _stale_reason(row, code)
    if stale is not None and not keep_stale:  # skipped, infeasible, not_found: verdicts of that code too
        return True, f"stale: {stale}"
    if row["status"] == "ok" and any(m not in row.index or pd.isna(row[m]) for m in metrics):
        return True, "a metric was added"  # to the config since
    if stale is not None:
        return False, f"kept stale: {stale}"
    untracked = [] if code is None else provenance.untracked_inputs(row.get(provenance.INPUTS), code.get(provenance.INPUTS))
    return False, f"untracked: {', '.join(untracked)}" if untracked else None


def _say_stale(label: str, reasons: dict, kept: list[str]) -> None:
    """One line per job about stale rows: how many re-run and why, how many kept, and how many kept that
    were recorded before an input of theirs was tracked (nothing says which version of it they ran)."""
    stale = {t: r for t, r in reasons.items() if r and r.startswith("stale: ")}
    if stale:
        why = sorted(set(stale.values()))
        log.warning("%s: re-running %d stale trial(s) -- %s", label, len(stale), "; ".join(w[7:] for w in why))
    if n_kept := sum(w.startswith("kept stale") for w in kept):
        log.warning("%s: keeping %d stale trial(s) made by other code (keep_stale=true; reports mark them)",
                    label, n_kept)
    if untracked := sorted({w[len("untracked: "):] for w in kept if w.startswith("untracked: ")}):
        log.warning("%s: keeping %d trial(s) recorded before ccbench tracked %s: which version of it they ran "
                    "is unknown (move the job's directory aside to re-run them)", label,
                    sum(w.startswith("untracked: ") for w in kept), "; ".join(untracked))
