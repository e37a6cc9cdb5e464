"""Per method, the CPU a trial takes here against the shipped rows of the same (config_hash, trial).

    python tests/benchmarks/machine_check.py [--rows sweeps/leaderboard_machine_check] [--shipped reports/leaderboard]
    python tests/benchmarks/machine_check.py --rows runs/here --shipped sweeps/leaderboard_machine_check  # two machines

The rows are those of ``conf/experiment/leaderboard_machine_check.yaml`` (cells the board completed, run
again). Prints, per method, the shipped and the new median ``trial_cpu_time`` over the paired trials, their
ratio (shipped / here: above 1, this machine is faster for that method) and whether each pair's ARI is
identical (the same answer: the code did not change in between), then the two machines (``env.cpu``).
A budget of B seconds here buys about ratio x B seconds of the shipped machines' work. ``--shipped`` may also be
a sweep directory of the same experiment made on another machine (``sweeps/leaderboard_machine_check`` was made on
an AMD EPYC on 2026-11-30): the same trials, paired across the two machines.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]


def paired(rows: pd.DataFrame, shipped: pd.DataFrame) -> pd.DataFrame:
    keys = ["config_hash", "trial"]
    new = rows[rows["status"] == "ok"][keys + ["method.name", "method.n_clusters", "dataset.name", "trial_cpu_time",
                                               "ari", "env.cpu"]]
    old = shipped[shipped["status"] == "ok"][keys + ["trial_cpu_time", "ari", "env.cpu"]]
    return new.merge(old, on=keys, suffixes=("_here", "_shipped"))


def table(pairs: pd.DataFrame) -> pd.DataFrame:
    pairs = pairs.assign(method=pairs["method.name"] + pairs["method.n_clusters"].astype(str).map(
        lambda v: "_k" if v == "true_k" else ""))
    out = pairs.groupby(["method", "dataset.name"]).agg(
        trials=("trial", "size"), shipped_s=("trial_cpu_time_shipped", "median"),
        here_s=("trial_cpu_time_here", "median"),
        same_ari=("ari_here", lambda s: bool((s == pairs.loc[s.index, "ari_shipped"]).all())))
    return out.assign(ratio=out["shipped_s"] / out["here_s"]).reset_index()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=Path, default=REPO / "sweeps" / "leaderboard_machine_check")
    parser.add_argument("--shipped", type=Path, default=REPO / "reports" / "leaderboard")
    opts = parser.parse_args(argv)
    from ccbench.running.results import gather

    shipped = opts.shipped / "rows.parquet"  # a shipped folder, else a sweep directory made on another machine
    try:
        pairs = paired(gather(opts.rows), pd.read_parquet(shipped) if shipped.is_file() else gather(opts.shipped))
    except (OSError, ValueError) as exc:  # no rows there, or a damaged file: its message says which
        parser.error(str(exc))
    if pairs.empty:
        print(f"no trial of {opts.rows} pairs with a shipped ok trial (same config_hash and trial)", file=sys.stderr)
        return 1
    out = table(pairs)
    print(out.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(f"\nmedian ratio over the {len(out)} cells: {out['ratio'].median():.2f} "
          f"(range {out['ratio'].min():.2f}-{out['ratio'].max():.2f})")
    print("here:    " + ", ".join(sorted(pairs["env.cpu_here"].astype(str).unique())))
    print("shipped: " + ", ".join(sorted(pairs["env.cpu_shipped"].astype(str).unique())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
