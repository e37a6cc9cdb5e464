"""Where the rows of a report came from: machines, code versions, stale rows (the report's Provenance section).

Reads the ``code.*`` and ``env.*`` columns that :mod:`ccbench.running.provenance` writes into every row.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..running.results import VERDICT_STATUSES
from ._format import fmt, md_text
from .shipped import job_path

__all__ = ["provenance_table", "method_versions", "stale_rows", "provenance_warnings", "provenance_markdown"]

# What says which machine and code made a row (ccbench.running.provenance); shown once per distinct combination.
_ORIGIN_COLUMNS = ("env.hostname", "env.cpu", "env.n_cores", "env.python", "env.numpy", "env.scipy",
                   "env.scikit-learn", "env.kmedoids", "env.sdpa-python", "env.blas", "env.blas_threads",
                   "code.ccbench_version", "code.git_commit", "code.git_dirty")
# The library versions a row records (ccbench.running.provenance.environment): a cell whose rows
# mix them is warned about, as one mixing code versions or machines
_LIBRARY_COLUMNS = ("env.python", "env.numpy", "env.scipy", "env.scikit-learn", "env.numba", "env.cvxpy",
                    "env.pandas", "env.pyarrow", "env.kmedoids", "env.sdpa-python", "env.blas")


def provenance_table(data: pd.DataFrame) -> pd.DataFrame:
    """The machines and code versions found in the rows (not the report writer's), with row counts.

    One row per distinct (machine, libraries, ccbench commit) plus, per method, one row per
    distinct ``code.method_hash``; ``jobs`` names the job directories the rows came from.
    """
    cols = [c for c in _ORIGIN_COLUMNS if c in data]
    if not cols:
        return pd.DataFrame({"origin": ["unknown: rows recorded before ccbench kept provenance"],
                             "rows": [len(data)]})
    filled = data[cols].astype(str).replace({"nan": "?", "None": "?", "<NA>": "?"})
    sources = data["source"].astype(str) if "source" in data else pd.Series("", index=data.index)

    def where(dirs: pd.Series) -> str:
        names = sorted({Path(job_path(d)).name for d in dirs})
        return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")

    table = (filled.assign(rows=1, jobs=sources, job_dirs=sources)
             .groupby(cols, sort=True).agg(rows=("rows", "sum"), jobs=("jobs", "nunique"), job_dirs=("job_dirs", where))
             .reset_index())
    table.columns = [c.removeprefix("env.").removeprefix("code.") for c in table.columns]
    return table


def method_versions(data: pd.DataFrame) -> pd.DataFrame:
    """Per method: each ``code.method_hash`` found, its rows, and whether it is the installed code."""
    if "code.method_hash" not in data:
        return pd.DataFrame(columns=["method", "method_hash", "rows", "installed"])
    keys = _code_keys(data)
    current = _installed_hashes(tuple(keys.dropna().unique()))
    hashes = data["code.method_hash"].astype(object).where(data["code.method_hash"].notna(), "(none)")
    out = (data.assign(_h=hashes, _k=keys).groupby(["_k", "_h"], sort=True).size()
           .rename("rows").reset_index().rename(columns={"_k": "method", "_h": "method_hash"}))
    out["installed"] = [("?" if current.get(m) is None else "yes" if current[m] == h else "no")
                        for m, h in zip(out["method"], out["method_hash"])]
    return out


def _code_keys(data: pd.DataFrame) -> pd.Series:
    """Per row, whose code made it: ``method.name``, or ``name+tuner`` for a tuned cell (its hash
    includes the tuner's code: :func:`ccbench.running.provenance.cell_method_code`)."""
    keys = data["method.name"].astype(object)
    if "tune" in data:
        tuned = (data["tune"].notna() & (data["tune"] != "none")).to_numpy()
        keys = keys.where(~tuned, keys + "+" + data["tune"].astype(str))
    return keys


def _installed_hashes(keys: tuple) -> dict:
    """``code.method_hash`` of each method's (``name`` or ``name+tuner``) code as installed here
    (None when not installed)."""
    from ..running import provenance

    out = {}
    for key in keys:
        name, _, tune = str(key).partition("+")
        try:
            out[key] = provenance.cell_method_code(name, tune or "none")[provenance.METHOD_HASH]
        except Exception:  # noqa: BLE001 - a report must open without the method's package
            out[key] = None
    return out


def stale_rows(data: pd.DataFrame) -> pd.Series:
    """Rows of a status the method's code decides (``ok``, ``skipped``, ``infeasible``, ``not_found``: the
    ones the harness re-runs when that code changes) not made by the method code installed here (kept
    with ``keep_stale=true``, or recorded before provenance); False where the method is not installed."""
    if "method.name" not in data:
        return pd.Series(False, index=data.index)
    keys = _code_keys(data)
    current = _installed_hashes(tuple(keys.dropna().unique()))
    recorded = data["code.method_hash"] if "code.method_hash" in data else pd.Series(None, index=data.index)
    installed = keys.map(current)
    verdict = data["status"].isin(VERDICT_STATUSES)
    stale = verdict & installed.notna() & (recorded.isna() | (recorded != installed))
    return (stale | (verdict & _inputs_changed(data))).astype(bool)


def _inputs_changed(data: pd.DataFrame) -> pd.Series:
    """Rows whose ``code.inputs`` (tuning grid, the ``from_method`` method, the metrics' code) differ
    from the installed ones (:func:`ccbench.running.provenance.changed_inputs`)."""
    import json

    from ..running import provenance

    changed = pd.Series(False, index=data.index)
    if provenance.INPUTS not in data:
        return changed
    cols = {"tune": "tune", "k": "method.n_clusters", "k_from": "method.n_clusters.from_method", "metrics": "metrics"}
    frame = pd.DataFrame({k: (data[c].astype(object) if c in data else None) for k, c in cols.items()}, index=data.index)
    frame["name"] = data["method.name"].astype(object)
    frame["inputs"] = data[provenance.INPUTS].astype(object)
    for key, rows in frame.groupby(list(frame.columns), dropna=False, sort=False):
        rec = dict(zip(frame.columns, key))
        if not isinstance(rec["inputs"], str):
            continue
        source = rec["k_from"] if isinstance(rec["k_from"], str) else provenance.from_method_of(rec["k"])
        try:
            metrics = json.loads(rec["metrics"]) if isinstance(rec["metrics"], str) else []
            now = provenance.cell_inputs(rec["name"], rec["tune"], source, [*metrics, "n_clusters_found"])
        except Exception:  # noqa: BLE001 - a method or tuner not installed here: cannot be judged
            continue
        if provenance.changed_inputs(rec["inputs"], now[provenance.INPUTS]):
            changed[rows.index] = True
    return changed


def provenance_warnings(data: pd.DataFrame) -> list[str]:
    """Cells whose rows mix code versions or machines, and rows made by code other than the installed."""
    out = []
    key = "config_hash" if "config_hash" in data else None
    for col, what in (("code.method_hash", "code versions of the method"), ("env.hostname", "machines")):
        if key is None or col not in data:
            continue
        mixed = data.groupby(key)[col].nunique(dropna=False)
        mixed = mixed[mixed > 1]
        for chash in mixed.index[:5]:
            rows = data[data[key] == chash]
            first = rows.iloc[0]
            out.append(f"cell {first.get('dataset.name')}/{first.get('method_label', first.get('method.name'))} "
                       f"({chash}) mixes {mixed[chash]} {what}: "
                       + ", ".join(f"{v} ({n} rows)" for v, n in rows[col].astype(str).value_counts().items()))
        if len(mixed) > 5:
            out.append(f"... and {len(mixed) - 5} more cells mixing {what}")
    libraries = [c for c in _LIBRARY_COLUMNS if c in data]
    if key is not None and libraries:
        # a column absent from older rows (NaN) is no version of its own: only recorded versions count
        counts = data.groupby(key)[libraries].nunique(dropna=True)
        mixed = counts[(counts > 1).any(axis=1)]
        for chash in mixed.index[:5]:
            rows = data[data[key] == chash]
            first = rows.iloc[0]
            parts = [f"{c.removeprefix('env.')} " + ", ".join(f"{v} ({n} rows)" for v, n in
                                                             rows[c].dropna().astype(str).value_counts().items())
                     for c in libraries if mixed.loc[chash, c] > 1]
            out.append(f"cell {first.get('dataset.name')}/{first.get('method_label', first.get('method.name'))} "
                       f"({chash}) mixes library versions: " + "; ".join(parts))
        if len(mixed) > 5:
            out.append(f"... and {len(mixed) - 5} more cells mixing library versions")
    if "code.method_hash" not in data:
        out.append("the rows carry no provenance (recorded before ccbench kept it): the code and machine "
                   "that made them are unknown")
    else:
        stale = stale_rows(data)
        if stale.any():
            methods = sorted(data.loc[stale, "method.name"].astype(str).unique())
            ok = int((stale & data["status"].eq("ok")).sum())
            other = int(stale.sum()) - ok
            counted = " and ".join([f"{ok} ok row(s)"] * bool(ok) + [f"{other} skipped/infeasible/not_found row(s)"] * bool(other))
            out.append(f"{counted} were made by code other than the installed one "
                       f"({', '.join(methods)}): marked stale; re-run without keep_stale=true to refresh them")
    return out


def provenance_markdown(data: pd.DataFrame) -> str:
    """The Provenance section of ``summary.md``: machines and code, method versions, warnings."""
    parts = ["Machines and code that made these rows (from the rows themselves):", "",
             _frame_markdown(provenance_table(data))]
    versions = method_versions(data)
    if len(versions):
        parts += ["", "Method code (`code.method_hash`; installed = the code installed where this report was written):",
                  "", _frame_markdown(versions)]
    warn = provenance_warnings(data)
    if warn:
        parts += ["", "Warnings:", ""] + [f"- {md_text(w)}" for w in warn]
    return "\n".join(parts)


def _frame_markdown(frame: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(md_text(c) for c in frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(md_text(fmt(v)) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)
