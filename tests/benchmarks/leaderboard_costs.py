"""What a leaderboard's rows cost, per track: the figures of reports/README.md's "Cost, measured".

    python tests/benchmarks/leaderboard_costs.py reports/leaderboard [--cores 2]

Reads a sweep directory or a shipped folder (``ccbench.reporting.load``). A trial's CPU is its
``trial_cpu_time`` (the worker's CPU time for the whole call), else ``fit_cpu_time`` plus ``tune_time``;
its wall is ``trial_wall_time``, else ``fit_time`` plus ``tune_time``. A trial that reused a shared
unsupervised fit (``fit_reused``) costs nothing here: the fit was paid in the cell that made it.
Tracks: the second seed (rows of a seed above the smallest), the k-free track (``<method>[k-free]``), the
k-free CVCP track (``<method>[k-free]+cvcp``: a method that needs k choosing it by CVCP over k),
the dense pairs (``fraction_pairs``), the budget re-run (a cell's trials at a larger budget than the board's,
``experiment=leaderboard_budget6x``: :func:`~ccbench.reporting.leaderboard._rerun_rows.rerun_mask`), and the main
track (everything else). ``wall on N cores`` is the
trials' wall divided by N (N jobs at a time): a lower bound of a run from scratch, which also pays
job start-up, data loading and row writing.

A script, not an asv benchmark: asv collects every module of this folder, so no name here starts
with ``time_``, ``track_``, ``mem_`` or ``peakmem_``.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from ccbench.reporting import load
from ccbench.reporting.leaderboard._frame import K_FREE
from ccbench.reporting.leaderboard._rerun_rows import rerun_mask


def _column(rows: pd.DataFrame, name: str) -> pd.Series:
    return pd.to_numeric(rows[name], errors="coerce") if name in rows else pd.Series(np.nan, index=rows.index)


def _track_of(rows: pd.DataFrame) -> pd.Series:
    seed = _column(rows, "seed").fillna(0)
    label = rows["method_label"].astype(str)
    scheme = rows["constraints.name"].astype(str) if "constraints.name" in rows else pd.Series("", index=rows.index)
    track = pd.Series("main", index=rows.index)
    track[scheme == "fraction_pairs"] = "dense pairs"
    track[label.str.endswith(K_FREE)] = "k-free"
    track[label.str.contains(K_FREE + "+", regex=False)] = "k-free CVCP"  # kmeans[k-free]+cvcp: needs k, chose it
    track[seed > seed.min()] = "second seed"
    track[rerun_mask(rows).reindex(rows.index).fillna(False).to_numpy(bool)] = "budget re-run"
    return track


def costs(rows: pd.DataFrame, cores: int = 2) -> pd.DataFrame:
    tune = _column(rows, "tune_time").fillna(0)
    cpu = _column(rows, "trial_cpu_time").fillna(_column(rows, "fit_cpu_time").fillna(0) + tune)
    wall = _column(rows, "trial_wall_time").fillna(_column(rows, "fit_time").fillna(0) + tune)
    reused = rows["fit_reused"].fillna(False).astype(bool) if "fit_reused" in rows else False
    frame = pd.DataFrame({"track": _track_of(rows), "config_hash": rows["config_hash"],
                          "cpu_h": cpu.where(~reused, 0.0) / 3600, "wall_h": wall.where(~reused, 0.0) / 3600})
    table = frame.groupby("track").agg(cells=("config_hash", "nunique"), trials=("config_hash", "size"),
                                       cpu_h=("cpu_h", "sum"), wall_h=("wall_h", "sum"))
    table.loc["all"] = table.sum()
    table[f"wall_on_{cores}_cores_h"] = table["wall_h"] / cores
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", help="a sweep directory or a shipped folder (reports/leaderboard)")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args(argv)
    try:
        rows = load(args.rows)
    except (OSError, ValueError) as exc:  # no such folder, a damaged or refused file: its message says which
        parser.error(str(exc))
    print(costs(rows, args.cores).round(2).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
