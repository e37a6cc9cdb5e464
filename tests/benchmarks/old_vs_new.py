"""Whole-trial CPU of a method on two versions of the code, and whether their labels agree.

A speed-up must not change answers (issue 51, deliverable 6). Given the Python of an environment that
has the OLD code installed (a worktree of an older commit, installed into its own virtual environment),
this runs one given-k fit per (method, data set) alternately under the old and the current code, each in
a fresh process on one thread, on the leaderboard's ``pairs_mid`` draw of trial 0 (standardised data),
and prints each run's fit CPU and a hash of its labels::

    git worktree add /tmp/old fa359c2 && python3 -m venv /tmp/old-venv && /tmp/old-venv/bin/pip install -e /tmp/old
    python tests/benchmarks/old_vs_new.py --old-python /tmp/old-venv/bin/python ssap_l:credit ap:ecoli --runs 2

The fit's CPU includes loading the compiled kernels from numba's cache (a few tenths of a second), as a
fresh process's first trial does; the first, warm-up run of each side is not counted. ``--warm`` fits once in
the child before the timed fit, so the kernels are loaded: what a sweep's trial costs, whose worker is kept from
job to job (``ccbench.running.harness._worker``) and loads them once in its life.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys

ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


def child(method: str, dataset: str, warm: bool = False) -> None:
    import time

    import numpy as np

    from ccbench import registry
    from ccbench.datasets import load_dataset
    from ccbench.running import protocol

    data = load_dataset(dataset, preprocess="standardize")
    rng, seed = protocol.trial_streams(0)
    cons, _ = protocol.draw_supervision(
        data.y, {"name": "random_pairs", "n_constraints": None, "per_point": 0.1}, {"name": "none"}, rng)
    spec = registry.get_method_spec(method)
    if warm:  # the same fit once, untimed: the kernels loaded, as in a sweep's long-lived worker
        protocol.build_estimator(spec, {}, seed, n_clusters=data.n_classes).fit(data.X, constraints=cons)
    est = protocol.build_estimator(spec, {}, seed, n_clusters=data.n_classes)
    start = time.process_time()
    est.fit(data.X, constraints=cons)
    cpu = time.process_time() - start
    labels = np.asarray(est.labels_, dtype=np.int64)
    print(json.dumps({"cpu": cpu, "labels": hashlib.sha1(labels.tobytes()).hexdigest()[:12]}))


def _run(python: str, method: str, dataset: str, warm: bool = False) -> dict:
    out = subprocess.run([python, os.path.abspath(__file__), "--child", method, dataset, *(["--warm"] if warm else [])],
                         capture_output=True,
                         text=True, env={**os.environ, **ONE_THREAD})
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"{method} on {dataset} failed under {python}: {last}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="METHOD:DATASET, e.g. ssap_l:credit")
    parser.add_argument("--old-python", help="the Python of an environment with the old code installed")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--warm", action="store_true", help="time a second fit in the process (kernels loaded)")
    parser.add_argument("--child", nargs=2, metavar=("METHOD", "DATASET"), help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.child:
        child(*opts.child, warm=opts.warm)
        return 0
    if not opts.old_python or not opts.cases:
        parser.error("give --old-python and at least one METHOD:DATASET")
    differ = False
    print("method      data set       old CPU s   new CPU s   old/new   same labels  (medians of the runs)")
    for case in opts.cases:
        method, _, dataset = case.partition(":")
        sides = {"old": opts.old_python, "new": sys.executable}
        for python in sides.values():
            _run(python, method, dataset)  # warm-up: numba's cache, the data files
        runs = {"old": [], "new": []}
        for _ in range(opts.runs):
            for side, python in sides.items():
                runs[side].append(_run(python, method, dataset, opts.warm))
        old = statistics.median(r["cpu"] for r in runs["old"])
        new = statistics.median(r["cpu"] for r in runs["new"])
        same = len({r["labels"] for r in runs["old"] + runs["new"]}) == 1
        differ |= not same
        print(f"{method:<11} {dataset:<14} {old:>9.2f}   {new:>9.2f}   {old / new:>7.2f}   "
              f"{'yes' if same else 'NO'}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
