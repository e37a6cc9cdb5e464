"""The power analysis of docs/leaderboard.md ("Power analysis and the reference board's protocol"): the
variance components of a paired difference fitted from a board's rows, and the simulated power of the
headline test per design (data sets N, base seeds S, trials per cell T).

    nice python tests/benchmarks/leaderboard_power.py reports/leaderboard [--reps 1000] [--quantile 0.75]

Reads a sweep directory or a shipped folder (``ccbench.reporting.load``), builds the long frame on ARI,
fits :func:`ccbench.reporting.leaderboard.power.variance_components` for every neighbouring pair of a
kind's main methods (adjacent by mean ARI over the data sets), every method against ``kmeans`` and the
kind's best against every method, and pools each component over the neighbouring pairs (median, and the
pessimistic ``--quantile``). Then :func:`~ccbench.reporting.leaderboard.power.power_grid` per kind: the
share of replicates in which the two-sided Wilcoxon signed-rank test over the data sets rejects at
``alpha`` = 0.05 (Holm's last step) and at 0.05 / 21 (Holm's first step over the board's family of 21
methods compared with one reference), and in which the 95 % bootstrap interval excludes 0; ``N80``: the
data sets the closed form (:func:`~ccbench.reporting.leaderboard.power.sets_for_power`) needs for 80 %
at today's S and T. ``cost``:
N x S x T relative to the shipped board's seed-0 design (24 x 1 x 10). About 2 minutes of one core.

A script, not an asv benchmark: asv collects every module of this folder, so no name here starts
with ``time_``, ``track_``, ``mem_`` or ``peakmem_``.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from ccbench.reporting import load
from ccbench.reporting.leaderboard._frame import long_frame
from ccbench.reporting.leaderboard.power import (COMPONENTS, pair_components, pooled_components, power_grid,
                                                 sets_for_power, set_variance, wilcoxon_power)

KINDS = ("pairs", "labels", "dense_pairs")
FAMILY = 21  # the board's Holm family: 22 main methods, each compared with one reference
ALPHA = 0.05
EFFECTS = (0.02, 0.05)
#: the reference board as committed (conf/experiment/board.yaml): N data sets, S base seeds, T trials per cell,
#: C cells of a curve (5 budgets); and the designs it was cut from, for the closed form beside it
COMMITTED = {"N": 71, "S": 3, "T": 1, "C": 5}
CLOSED_FORM_DESIGNS = ((3, 3), (3, 2), (3, 1), (1, 3))


def _components(frame: pd.DataFrame, quantile: float) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
    tables, sets = zip(*(pair_components(frame, kind, with_sets=True) for kind in KINDS))
    pairs, sets = pd.concat(tables, ignore_index=True), pd.concat(sets, ignore_index=True)
    pooled = {}
    for kind, rows in pairs.groupby("kind", sort=False):
        neighbours = rows[rows["pair"] == "neighbour"]
        pooled[(kind, "median")] = pooled_components(neighbours, 0.5)
        pooled[(kind, f"q{quantile:g}")] = pooled_components(neighbours, quantile)
    return pairs, pooled, sets


def _summary(pairs: pd.DataFrame, quantile: float) -> pd.DataFrame:
    """Per kind and pair type: |mean difference| and each component, median [quantile] over the pairs."""
    cols = ["abs_mean", *COMPONENTS]
    pairs = pairs.assign(abs_mean=pairs["mean"].abs())
    g = pairs.groupby(["kind", "pair"], sort=False)
    med, q = g[cols].median(), g[cols].quantile(quantile)
    out = med.round(3).astype(str) + " [" + q.round(3).astype(str) + "]"
    out.insert(0, "pairs", g.size())
    return out


def _committed(pooled: dict) -> pd.DataFrame:
    """The committed design against the designs it was cut from, in closed form (normal D[s], the signed-rank
    test's efficiency): sd_D over C curve cells and the power at N data sets, per kind and pooling."""
    print(f"## The committed design (N = {COMMITTED['N']}, C = {COMMITTED['C']} curve cells): sd_D and closed-form "
          f"power of the signed-rank test, alpha = {ALPHA:g}\n")
    rows = []
    for (kind, pool), comp in pooled.items():
        for s, t in CLOSED_FORM_DESIGNS:
            sd = float(np.sqrt(set_variance(*(comp[k] for k in COMPONENTS), COMMITTED["C"], s, t)))
            rows.append({"kind": kind, "components": pool, "S": s, "T": t, "draws per cell": s * t, "sd_D": sd,
                         **{f"power@{e:g}": wilcoxon_power(sd, e, COMMITTED["N"], ALPHA) for e in EFFECTS}})
    return pd.DataFrame(rows).round(4)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", help="a sweep directory or a shipped folder (reports/leaderboard)")
    parser.add_argument("--reps", type=int, default=1000, help="replicates per design (default 1000)")
    parser.add_argument("--quantile", type=float, default=0.75, help="the pessimistic pooling quantile")
    args = parser.parse_args(argv)
    try:
        rows = load(args.rows)
    except (OSError, ValueError) as exc:  # no such folder, a damaged or refused file: its message says which
        parser.error(str(exc))
    frame = long_frame(rows, "ari")
    pairs, pooled, sets = _components(frame, args.quantile)
    pd.set_option("display.width", 200)
    print("## Effects and variance components: median [q%g] over the pairs\n" % args.quantile)
    print(_summary(pairs, args.quantile).to_string(), "\n")
    print("## Pooled components (over the neighbouring pairs)\n")
    table = pd.DataFrame(pooled).T
    table["sd_D_today"] = [np.sqrt(set_variance(*(c[k] for k in COMPONENTS), c["cells"], 1, 10))
                           for c in pooled.values()]
    for effect in EFFECTS:  # the closed form: data sets for 80 % at Holm's last step and at its first
        table[f"N80_{effect:g}"] = [sets_for_power(sd, effect, ALPHA) for sd in table["sd_D_today"]]
        table[f"N80_{effect:g}_holm1"] = [sets_for_power(sd, effect, ALPHA / FAMILY) for sd in table["sd_D_today"]]
    print(table.round(4).to_string(float_format=lambda v: f"{v:.4g}"), "\n")
    print(_committed(pooled).to_string(), "\n")
    alphas = (ALPHA, ALPHA / FAMILY)
    summary = []
    for (kind, pool), comp in pooled.items():
        models = {"normal": ({}, EFFECTS)}
        if pool == "median":  # the heavier-tailed check: the observed D[s] of the neighbouring pairs
            mine = sets[(sets["kind"] == kind) & (sets["pair"] == "neighbour")].dropna(subset=["z"])
            # at effect 0 too: the signed-rank test's null is symmetry, and skewed D[s] move it
            models["resampled"] = ({"residuals": mine["z"].to_numpy(),
                                    "set_sd_trial": mine["rel_sd_trial"].fillna(1.0).to_numpy()}, (0.0, *EFFECTS))
        for model, (extra, effects) in models.items():
            grid = power_grid(comp, cells=int(round(comp["cells"])), effects=effects, reps=args.reps,
                              alphas=alphas, **extra)
            wide = grid.set_index(["N", "S", "T", "cost", "effect"])[[f"p<={a:.3g}" for a in alphas] +
                                                                       ["ci_excludes_0"]].unstack("effect")
            wide.columns = [f"{c}@{e:g}" for c, e in wide.columns]
            print(f"## Power: {kind}, components {pool} of the neighbouring pairs, model {model}\n")
            print(wide.round(3).to_string(), "\n")
            summary.append(grid.assign(kind=kind, components=pool, model=model))
    print("## Summary: power over the designs at each N (min-max over S x T), effect 0.02 and 0.05\n")
    summary = pd.concat(summary, ignore_index=True)
    summary = summary[summary["effect"] > 0]
    cols = [f"p<={a:.3g}" for a in alphas] + ["ci_excludes_0"]
    g = summary.groupby(["kind", "components", "model", "effect", "N"], sort=False)[cols]
    lo, hi = g.min().round(2), g.max().round(2)
    print((lo.astype(str) + "-" + hi.astype(str)).unstack("N").to_string(), "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
