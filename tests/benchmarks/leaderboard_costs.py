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
track (everything else). With ``--board`` (the reference board, ``experiment=board`` and its family): the
board's tracks as ``board_cost.py`` projects them (curves pairs, curves labels, unconstrained, noise, PCCC
scheme, k-free, k-free CVCP), each per size class, so that the measurement stands beside the projection.
With ``--kills-along-curves`` (a cut considered for the board and measured here): does a trial killed at one budget
of a curve speak for the curve's larger budgets? Per curve (method, data set, kind, base seed, noise), the first
budget whose trial was *fitted* and killed, how many larger budgets then finished, and the core-hours those larger
budgets cost; if the kills were monotone in the budget, the larger budgets could be recorded without fitting.
And per cell, where a kill and another base seed were both fitted, what that seed did.
``wall on N cores`` is the
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
from ccbench.running.results import not_fitted
from ccbench.reporting.leaderboard._frame import K_FREE
from ccbench.reporting.leaderboard._rerun_rows import rerun_mask

try:  # the size classes the projection uses (tests/benchmarks as a package, or run as a script)
    from .board_cost import SIZE_CLASSES, size_class
except ImportError:
    from board_cost import SIZE_CLASSES, size_class


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


def board_track_of(rows: pd.DataFrame) -> pd.Series:
    """The reference board's track of each row, named as ``board_cost.TRACKS`` names its supervisions."""
    label = rows["method_label"].astype(str)
    scheme = rows["constraints.name"].astype(str) if "constraints.name" in rows else pd.Series("", index=rows.index)
    noise = rows["noise.name"].astype(str) if "noise.name" in rows else pd.Series("none", index=rows.index)
    track = np.select(
        [label.str.contains(K_FREE + "+", regex=False), label.str.endswith(K_FREE), noise != "none",
         scheme == "pccc_random_pairs", scheme == "none", scheme == "labeled_subsets"],
        ["k-free CVCP", "k-free", "noise", "PCCC scheme", "unconstrained", "curves labels"], default="curves pairs")
    track = pd.Series(track, index=rows.index)
    track[rerun_mask(rows).reindex(rows.index).fillna(False).to_numpy(bool)] = "budget re-run"
    return track


def board_experiment_of(rows: pd.DataFrame) -> pd.Series:
    """The board experiment that made each row (``board``, ``board_noise``, ``board_noise_large``, ``board_pccc``,
    ``board_k_free``, ``board_k_free_cvcp``), from its track and, for noise, its size (the large class's noise is
    ``board_noise_large``): the rows do not name their experiment."""
    track, n = board_track_of(rows), _column(rows, "n_samples")
    experiment = track.map({"k-free CVCP": "board_k_free_cvcp", "k-free": "board_k_free", "PCCC scheme": "board_pccc",
                            "noise": "board_noise"}).fillna("board")
    experiment[(track == "noise") & (n > 5000)] = "board_noise_large"
    return experiment


def measured_vs_projected(rows: pd.DataFrame, projection: pd.DataFrame) -> pd.DataFrame:
    """Per (experiment, data set) with rows: measured core-hours of trials and cells beside ``board_cost.py
    --per-set``'s projection (``cpu_h``, ``cells``); ``complete`` where every projected cell has a row."""
    cpu = rows["env.cpu"].fillna("unknown").astype(str) if "env.cpu" in rows else pd.Series("unknown", index=rows.index)
    frame = pd.DataFrame({"experiment": board_experiment_of(rows), "dataset": rows["dataset.name"].astype(str),
                          "cpu_h": _cpu_hours(rows), "config_hash": rows["config_hash"], "cpu": cpu})
    measured = frame.groupby(["experiment", "dataset"]).agg(measured_h=("cpu_h", "sum"),
                                                             cells=("config_hash", "nunique"),
                                                             machines=("cpu", "nunique"), machine=("cpu", "first"))
    measured["machine"] = measured["machine"].where(measured.pop("machines") == 1, "mixed")
    projected = projection.set_index(["experiment", "dataset"])[["cpu_h", "cells"]]
    table = measured.join(projected.rename(columns={"cpu_h": "projected_h", "cells": "projected_cells"}), how="left")
    table["complete"] = table["cells"] >= table["projected_cells"]
    return table


def per_machine(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`measured_vs_projected`'s complete (experiment, data set) pairs summed per machine that made all their
    rows (``env.cpu``; ``mixed`` where a pair's rows came from more than one): the measured / projected ratio of
    each machine. The machines ran different data sets, so a gap between them is the machine's and the sets' at
    once; ``tests/benchmarks/machine_check.py`` pairs the same trials on two machines."""
    done = table[table["complete"]]
    out = done.groupby("machine").agg(sets=("measured_h", "size"), measured_h=("measured_h", "sum"),
                                      projected_h=("projected_h", "sum"))
    return out.assign(ratio=out["measured_h"] / out["projected_h"])


def size_classes(rows: pd.DataFrame) -> pd.Series:
    """The issue's size class of each row's data set (``board_cost.size_class``, by ``n_samples``)."""
    n = _column(rows, "n_samples")
    return n.map(lambda v: "n unknown" if pd.isna(v) else size_class(int(v)))


def board_costs(rows: pd.DataFrame) -> pd.DataFrame:
    """Measured core-hours per board track (rows) and size class (columns), with the totals."""
    frame = pd.DataFrame({"track": board_track_of(rows), "size_class": size_classes(rows), "cpu_h": _cpu_hours(rows)})
    table = frame.pivot_table(index="track", columns="size_class", values="cpu_h", aggfunc="sum", fill_value=0.0)
    table = table.reindex(columns=[c for c in (*SIZE_CLASSES, "n unknown") if c in table.columns])
    table["all"] = table.sum(axis=1)
    table.loc["all"] = table.sum()
    return table


_BUDGET_KEYS = ("constraints.per_point", "constraints.per_class", "constraints.fraction")
_CURVE_KEYS = ("method_label", "dataset.name", "constraints.name", "seed", "noise.name", "noise.rate")


def _budget(rows: pd.DataFrame) -> pd.Series:
    """Each row's supervision budget: pairs per point, labels per class, or PCCC's fraction (NaN: none)."""
    budget = pd.Series(np.nan, index=rows.index)
    for key in _BUDGET_KEYS:
        budget = budget.fillna(_column(rows, key))
    return budget


def kills_along_curves(rows: pd.DataFrame) -> pd.DataFrame:
    """Each curve with a fitted kill: the first killed budget, and of the larger budgets how many finished
    (``ok``, ``infeasible``), how many were killed, and their core-hours (module docstring, ``--kills-along-curves``).
    A kill recorded without fitting (:func:`ccbench.running.results.not_fitted`) measures nothing here."""
    budget = _budget(rows)
    fitted_kill = rows["status"].eq("timeout") & ~not_fitted(rows)
    frame = pd.DataFrame({"budget": budget, "kill": fitted_kill, "status": rows["status"],
                          "cpu_h": _cpu_hours(rows)})
    keys = [k for k in _CURVE_KEYS if k in rows]
    frame[keys] = rows[keys].astype(str)
    found = []
    for curve, group in frame[frame["budget"].notna()].groupby(keys, sort=True):
        group = group.sort_values("budget")
        killed = group.loc[group["kill"], "budget"]
        if killed.empty:
            continue
        later = group[group["budget"] > killed.iloc[0]]
        found.append({**dict(zip(keys, curve)), "first_kill": killed.iloc[0], "larger": len(later),
                      "larger_finished": int(later["status"].isin(("ok", "infeasible")).sum()),
                      "larger_killed": int(later["status"].eq("timeout").sum()), "larger_cpu_h": later["cpu_h"].sum()})
    return pd.DataFrame(found, columns=[*keys, "first_kill", "larger", "larger_finished", "larger_killed",
                                        "larger_cpu_h"])


def kills_across_seeds(rows: pd.DataFrame) -> pd.DataFrame:
    """Each cell (a curve's budget) with a fitted kill and another base seed fitted too: how many of its fitted
    seeds finished and how many were killed (``timeout_stops_seeds`` records the later seeds of a killed cell
    without fitting; where the seed order let two be fitted, this is what the others did)."""
    frame = pd.DataFrame({"budget": _budget(rows).fillna(-1), "status": rows["status"]})[~not_fitted(rows)]
    keys = [k for k in _CURVE_KEYS if k in rows and k != "seed"]
    frame[keys] = rows.loc[frame.index, keys].astype(str)
    counts = frame.groupby([*keys, "budget"])["status"].agg(
        killed=lambda s: int((s == "timeout").sum()), finished=lambda s: int(s.isin(("ok", "infeasible")).sum()))
    return counts[(counts["killed"] > 0) & (counts["killed"] + counts["finished"] > 1)].reset_index()


def _cpu_hours(rows: pd.DataFrame) -> pd.Series:
    """A trial's CPU in hours (module docstring); 0 for a trial that reused a shared fit."""
    tune = _column(rows, "tune_time").fillna(0)
    cpu = _column(rows, "trial_cpu_time").fillna(_column(rows, "fit_cpu_time").fillna(0) + tune)
    reused = rows["fit_reused"].fillna(False).astype(bool) if "fit_reused" in rows else False
    return cpu.where(~reused, 0.0) / 3600


def costs(rows: pd.DataFrame, cores: int = 2) -> pd.DataFrame:
    tune = _column(rows, "tune_time").fillna(0)
    wall = _column(rows, "trial_wall_time").fillna(_column(rows, "fit_time").fillna(0) + tune)
    reused = rows["fit_reused"].fillna(False).astype(bool) if "fit_reused" in rows else False
    frame = pd.DataFrame({"track": _track_of(rows), "config_hash": rows["config_hash"],
                          "cpu_h": _cpu_hours(rows), "wall_h": wall.where(~reused, 0.0) / 3600})
    table = frame.groupby("track").agg(cells=("config_hash", "nunique"), trials=("config_hash", "size"),
                                       cpu_h=("cpu_h", "sum"), wall_h=("wall_h", "sum"))
    table.loc["all"] = table.sum()
    table[f"wall_on_{cores}_cores_h"] = table["wall_h"] / cores
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", help="a sweep directory or a shipped folder (reports/leaderboard)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--board", action="store_true", help="the reference board's tracks per size class "
                                                             "(as board_cost.py projects them)")
    parser.add_argument("--projection", metavar="CSV", help="with --board: each experiment and data set measured "
                                                           "beside board_cost.py --per-set CSV's projection")
    parser.add_argument("--kills-along-curves", action="store_true",
                        help="whether a kill at one budget of a curve speaks for its larger budgets")
    args = parser.parse_args(argv)
    if args.projection and not args.board:
        parser.error("--projection sets the board's rows beside board_cost.py's projection: add --board")
    projection = None
    if args.projection:
        try:
            projection = pd.read_csv(args.projection)
        except (OSError, ValueError) as exc:
            parser.error(f"--projection {args.projection}: {exc} (write it with board_cost.py --per-set CSV)")
        missing = {"experiment", "dataset", "cpu_h", "cells"} - set(projection.columns)
        if missing:
            parser.error(f"--projection {args.projection}: no column {sorted(missing)} (write it with "
                         f"board_cost.py --per-set CSV)")
    try:
        rows = load(args.rows)
    except (OSError, ValueError) as exc:  # no such folder, a damaged or refused file: its message says which
        parser.error(str(exc))
    print(costs(rows, args.cores).round(2).to_string())
    if args.board:
        table = board_costs(rows)
        print(f"\nmeasured core-hours of trials per board track and size class (total {table.loc['all', 'all']:.2f}; "
              f"the issue's budget is 20):")
        print(table.round(2).to_string())
    if args.projection:
        table = measured_vs_projected(rows, projection)
        done = table[table["complete"]]
        print(f"\nmeasured beside the projection per experiment and data set ({len(done)} of {len(table)} complete; "
              f"on those, measured / projected = {done['measured_h'].sum() / done['projected_h'].sum():.2f}, "
              f"{done['measured_h'].sum():.2f} against {done['projected_h'].sum():.2f} core-hours):")
        print(table.round(3).to_string())
        print("\nthe complete ones per machine that made all their rows (env.cpu):")
        print(per_machine(table).round(3).to_string())
    if args.kills_along_curves:
        curves = kills_along_curves(rows)
        broken = curves[curves["larger_finished"] > 0]
        print(f"\n{len(curves)} curves with a fitted kill; in {len(broken)} of them a larger budget finished "
              f"({len(broken) / max(len(curves), 1):.0%}); the larger budgets cost {curves['larger_cpu_h'].sum():.2f} "
              f"core-hours, {curves.loc[curves['larger_finished'] == 0, 'larger_cpu_h'].sum():.2f} of them on curves "
              f"where every larger budget was killed too")
        print(broken.round(4).to_string(index=False))
        seeds = kills_across_seeds(rows)
        print(f"\n{len(seeds)} cells with a fitted kill and another base seed fitted too; in "
              f"{int((seeds['finished'] > 0).sum())} of them a seed finished (timeout_stops_seeds records the later "
              f"seeds of a killed cell without fitting)")
        print(seeds[seeds["finished"] > 0].to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
