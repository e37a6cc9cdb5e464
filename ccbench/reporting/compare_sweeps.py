"""Two sweeps of the same protocol, compared row by row (``ccbench report A B --compare-sweeps``).

Why: a second lab that re-runs our protocol, or we on a new machine or after a library upgrade, must
see where the numbers moved, not two leaderboards to eyeball. ``--compare`` already names the paired
verdict of two *methods* in one sweep; this compares two *sweeps*, config by config:

- rows are paired on ``(config_hash, trial)`` (the same cell, method and trial: the same data,
  constraints and seeds by construction);
- a config whose paired rows agree in status and in every compared metric (to 1e-9) is *identical*;
- otherwise its per-trial differences ``B - A`` (over the trials ok in both) are *within the trial
  spread* when ``|mean| <= 2 x their standard error`` (run-to-run noise, e.g. a non-deterministic
  solver), else the config *disagrees*; a paired trial whose status differs (``ok`` here,
  ``timeout`` there) is a *status* difference, counted apart;
- every non-identical config names the machine (CPU model, cores) and the code (ccbench commit,
  the method's code hash) that made each side, so a difference can be traced to what changed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ._format import md_text
from ._safe import output_dir, write_csv, write_text
from .shipped import machine_text

__all__ = ["compare_sweeps", "compare_rows", "VERDICTS"]

VERDICTS = ("identical", "within spread", "disagree", "status differs", "only in A", "only in B")
_TOL = 1e-9
#: what made a row, beside the machine: the code, and BLAS's thread count (a non-converged alternation
#: follows the last bits of a matrix product, which depend on it: scssap_ml on zoo under 1 and 2 threads)
_CODE = ("code.git_commit", "code.method_hash", "code.method_version", "env.blas_threads")


def _cell_text(rows: pd.DataFrame) -> pd.Series:
    """The cell of each row as short text: data set, constraint scheme with its options, noise, tuner."""
    parts = [rows["dataset.name"].astype(str)]
    for prefix in ("constraints.", "noise."):
        cols = sorted(c for c in rows.columns if c.startswith(prefix) and c != f"{prefix}name")
        cols = [f"{prefix}name", *cols] if f"{prefix}name" in rows else []
        if cols:
            parts.append(rows[cols].apply(lambda r: " ".join(
                [str(r.iloc[0])] + [f"{c.split('.', 1)[1]}={v:g}" if isinstance(v, float) else f"{c.split('.', 1)[1]}={v}"
                                    for c, v in r.iloc[1:].items() if pd.notna(v)]), axis=1))
    if "tune" in rows:
        parts.append(rows["tune"].astype(str).where(rows["tune"].astype(str) != "none", ""))
    text = parts[0]
    for p in parts[1:]:
        text = text + " | " + p
    return text.str.rstrip(" |")


def _made_by(rows: pd.DataFrame) -> pd.Series:
    """Per config hash: the machines and code versions of its rows, as text."""
    code = [c for c in _CODE if c in rows]
    text = machine_text(rows) + rows[code].astype(str).apply(
        lambda r: "; " + ", ".join(f"{c.split('.', 1)[1]}={v[:10]}" for c, v in r.items() if v not in ("", "nan", "None")),
        axis=1) if code else machine_text(rows)
    return text.groupby(rows["config_hash"]).agg(lambda s: " / ".join(sorted(set(s))))


def compare_rows(a: pd.DataFrame, b: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """One row per config hash: ``cell``, ``method``, ``verdict`` (:data:`VERDICTS`), ``n_paired``,
    ``n_identical``, ``n_status_differs``, per metric ``<m>_a``, ``<m>_b``, ``<m>_diff`` (mean of the
    paired ``B - A`` over trials ok in both) and ``<m>_se`` (its standard error), ``made_by_a``/``_b``."""
    keys = ["config_hash", "trial"]
    cols = [*keys, "status", *metrics]
    left = a[[c for c in cols if c in a]].copy()
    right = b[[c for c in cols if c in b]].copy()
    for m in metrics:
        for side in (left, right):
            side[m] = pd.to_numeric(side[m], errors="coerce") if m in side else np.nan
    pairs = left.merge(right, on=keys, how="outer", suffixes=("_a", "_b"), indicator=True)
    both = pairs["_merge"] == "both"
    same_status = pairs["status_a"].astype(str) == pairs["status_b"].astype(str)
    ok = both & (pairs["status_a"] == "ok") & (pairs["status_b"] == "ok")
    equal = both & same_status
    for m in metrics:
        va, vb = pairs[f"{m}_a"], pairs[f"{m}_b"]
        pairs[f"{m}_d"] = (vb - va).where(ok)
        equal &= ((va - vb).abs() <= _TOL) | (va.isna() & vb.isna())
    pairs["_identical"], pairs["_status"], pairs["_both"] = equal, both & ~same_status, both
    g = pairs.groupby("config_hash")
    out = pd.DataFrame({"n_paired": g["_both"].sum().astype(int), "n_identical": g["_identical"].sum().astype(int),
                        "n_status_differs": g["_status"].sum().astype(int),
                        "only_a": g["_merge"].agg(lambda s: int((s == "left_only").sum())),
                        "only_b": g["_merge"].agg(lambda s: int((s == "right_only").sum()))})
    beyond = pd.Series(False, index=out.index)
    out["beyond_on"] = ""
    for m in metrics:
        out[f"{m}_a"] = g[f"{m}_a"].mean()
        out[f"{m}_b"] = g[f"{m}_b"].mean()
        diff, sd, n = g[f"{m}_d"].mean(), g[f"{m}_d"].std(ddof=1), g[f"{m}_d"].count()
        out[f"{m}_diff"], out[f"{m}_se"] = diff, (sd / np.sqrt(n)).fillna(0.0)
        over = diff.abs().fillna(0.0) > np.maximum(2 * out[f"{m}_se"], _TOL)
        was = out.loc[over, "beyond_on"]
        out.loc[over, "beyond_on"] = np.where(was.eq(""), m, was + "," + m)
        beyond |= over
    verdict = np.select(
        [out["n_paired"].eq(0) & out["only_a"].gt(0), out["n_paired"].eq(0),
         out["n_identical"].eq(out["n_paired"]) & out["only_a"].eq(0) & out["only_b"].eq(0),
         out["n_status_differs"].gt(0), beyond],
        ["only in A", "only in B", "identical", "status differs", "disagree"], default="within spread")
    out.insert(0, "verdict", verdict)
    rows = pd.concat([a, b], ignore_index=True).drop_duplicates("config_hash")
    info = rows.set_index("config_hash")
    out.insert(0, "method", info["method_label"].reindex(out.index) if "method_label" in info
               else info["method.name"].reindex(out.index))
    out.insert(0, "cell", _cell_text(rows).set_axis(rows["config_hash"]).reindex(out.index))
    out["made_by_a"] = _made_by(a).reindex(out.index).fillna("-")
    out["made_by_b"] = _made_by(b).reindex(out.index).fillna("-")
    return out.reset_index().sort_values(["verdict", "cell", "method"], kind="stable").reset_index(drop=True)


def _metrics(a: pd.DataFrame, b: pd.DataFrame, metric: str | None) -> list[str]:
    if metric:
        wanted = [m.strip() for m in metric.split(",") if m.strip()]
        missing = [m for m in wanted if m not in a or m not in b]
        if missing:
            raise ValueError(f"--metric {','.join(missing)}: not a column of both sweeps; shared numeric columns: "
                             f"{sorted(c for c in set(a) & set(b) if pd.api.types.is_numeric_dtype(a[c]))[:20]}")
        return wanted
    listed = []
    for frame in (a, b):
        if "metrics" in frame:
            for value in frame["metrics"].dropna().unique() if frame["metrics"].map(type).eq(str).all() \
                    else frame["metrics"].dropna():
                if isinstance(value, str):  # rows keep the list as JSON text
                    try:
                        value = json.loads(value)
                    except ValueError:
                        value = [value]
                listed += [str(v) for v in (value if isinstance(value, (list, tuple, np.ndarray)) else [value])]
    chosen = [m for m in dict.fromkeys(listed) if m in a and m in b]
    chosen += [f"{m}_unconstrained" for m in chosen if f"{m}_unconstrained" in a and f"{m}_unconstrained" in b]
    if not chosen:
        raise ValueError("the two sweeps share no metric column; pass --metric")
    return chosen


def compare_sweeps(a_dir, b_dir, metric: str | None = None, out=None) -> tuple[str, dict]:
    """Compare two sweep directories (or shipped folders): the text to print and, with ``out``, the
    files written (``compare.md``, ``compare.csv``: every config with its verdict)."""
    from .summary import load

    a, b = load(a_dir), load(b_dir)
    metrics = _metrics(a, b, metric)
    table = compare_rows(a, b, metrics)
    counts = table["verdict"].value_counts()
    trials = int(table["n_paired"].sum())
    lines = [f"# Two sweeps compared: A = {md_text(str(a_dir))}, B = {md_text(str(b_dir))}", "",
             f"Rows paired on (config_hash, trial): {trials} paired trial(s) in {len(table)} config(s); "
             f"{int(table['n_identical'].sum())} paired trial(s) identical (status and {', '.join(metrics)}).", "",
             "| verdict | configs |", "|---|---|"]
    lines += [f"| {v} | {int(counts.get(v, 0))} |" for v in VERDICTS]
    lines += ["", "A config *disagrees* when the mean of its paired differences B - A (trials ok in both) is beyond "
              "2 standard errors of those differences (the trial spread); *within spread* otherwise; "
              "*status differs* when a paired trial has another status on each side.", ""]
    for side, frame in (("A", a), ("B", b)):
        made = machine_text(frame).value_counts()
        commits = frame["code.git_commit"].astype(str).value_counts() if "code.git_commit" in frame else pd.Series(dtype=int)
        lines.append(f"- {side}: machines {'; '.join(f'{md_text(k)} ({v} rows)' for k, v in made.items())}; "
                     f"ccbench commits {', '.join(f'{md_text(k[:10]) or chr(45)} ({v})' for k, v in commits.items()) or '-'}")
    for side in ("A", "B"):  # configs one sweep lacks: counted per data set, not listed (a re-run of 2 sets)
        alone = table[table["verdict"] == f"only in {side}"]
        if len(alone):
            per_set = alone["cell"].astype(str).str.split(" | ").str[0].value_counts()
            lines.append(f"- only in {side}: {len(alone):,} configs ({', '.join(f'{md_text(d)} {n}' for d, n in per_set.items())})")
    shown = table[~table["verdict"].isin(["identical", "only in A", "only in B"])]
    if len(shown):
        m = metrics[0]
        lines += ["", f"## Configs paired but not identical (on {m}; every metric in compare.csv)", "",
                  "| verdict | cell | method | paired | identical | A | B | B - A | 2 se | beyond on | made by A | made by B |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for _, r in shown.iterrows():
            num = (lambda v: "-" if pd.isna(v) else f"{v:.4f}")
            lines.append(f"| {r['verdict']} | {md_text(str(r['cell']))} | {md_text(str(r['method']))} | {r['n_paired']} | "
                         f"{r['n_identical']} | {num(r[f'{m}_a'])} | {num(r[f'{m}_b'])} | {num(r[f'{m}_diff'])} | "
                         f"{num(2 * r[f'{m}_se'])} | {md_text(str(r['beyond_on']))} | {md_text(str(r['made_by_a']))} | "
                         f"{md_text(str(r['made_by_b']))} |")
    text = "\n".join(lines) + "\n"
    paths = {}
    if out is not None:
        folder = output_dir(out)
        paths["compare_md"] = write_text(Path(folder) / "compare.md", text, folder)
        paths["compare_csv"] = write_csv(table, Path(folder) / "compare.csv", folder)
    return text, paths
