"""How many relational-neighbour bounds each reading of eq. (6) keeps, finds redundant, or
drops as contradicted by the must-link closure, on the paper's four data sets.

    CCBENCH_DATA_DIR=... python -m ccbench_plugins.sdp.feasibility [--trials 20]

No SDP is solved: the counts come from :func:`.core.build_problem`. Constraint sets are
drawn as the harness does for ``constraints=per_class_pairs`` (not the same seeds).
"""

from __future__ import annotations

import argparse

import numpy as np

from ccbench import load_dataset
from ccbench.constraints import per_class_pairs

from .core import READINGS, build_problem

#: (data set, preprocessing, sigma) of the paper's Table 1
PAPER_SETS = (
    ("iris", "none", 0.271),
    ("soybean_small", "none", 0.5),
    ("wine", "standardize", 0.055),
    ("glass", "none", 0.473),
)


def count_table(trials: int = 20, js=(1, 5, 10), ts=(1, 3, 5), seed: int = 0) -> list[dict]:
    rows = []
    for name, pre, sigma in PAPER_SETS:
        ds = load_dataset(name, preprocess=pre)
        for j in js:
            sets = [per_class_pairs(ds.y, j, rng=np.random.default_rng([seed, j, k])) for k in range(trials)]
            for t in ts:
                for reading in READINGS:
                    tot = {"bounds": 0, "redundant": 0, "conflicting": 0, "kept": 0}
                    infeasible = 0
                    for cons in sets:
                        c = build_problem(ds.X, cons, sigma=sigma, n_neighbors=t, reading=reading).counts
                        for key in tot:
                            tot[key] += c[key]
                        infeasible += c["conflicting"] > 0
                    rows.append({"dataset": name, "j": j, "t": t, "reading": reading,
                                 **{k: v / trials for k, v in tot.items()},
                                 "infeasible_sets": f"{infeasible}/{trials}"})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    args = ap.parse_args(argv)
    rows = count_table(args.trials)
    print("| data set | j | t | reading | bounds | redundant | dropped (conflicting) | kept | sets with a conflict |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['dataset']} | {r['j']} | {r['t']} | {r['reading']} | {r['bounds']:.1f} | "
              f"{r['redundant']:.1f} | {r['conflicting']:.1f} | {r['kept']:.1f} | {r['infeasible_sets']} |")


if __name__ == "__main__":
    main()
