"""The scale table: fit time and peak memory of every registered method against n.

    python tests/benchmarks/scale_table.py [--sizes 500,1000,2000,5000] [--limit 60] [--out FILE]

Synthetic Gaussian blobs, d = 10, 5 centres, standardised; pair supervision of 0.01 n random
pairs (as ``random_pairs`` draws them), or 3 labeled points per class for the methods whose
first supervision is labels (NNC and its Xing baselines: random pairs would make more
chunklets than clusters); true k where a method needs it; default parameters.
Each (method, n) is fitted in a fresh process with a wall-clock limit (``--limit`` seconds);
once a method times out, its larger sizes are not tried. A method whose declared
:class:`~ccbench.registry.MemoryModel` refuses the size on this machine is shown as
``refused``. Peak memory is the process's peak resident set size during the fit minus its
size before it (data, imports and numba's compiled kernels excluded).

Prints a markdown table (the one in docs/benchmarks.md) and, with ``--out``, writes it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

_CHILD = r"""
import json, resource, sys, time, warnings
import numpy as np
from sklearn.datasets import make_blobs
from ccbench import constraints as cgen, registry
from ccbench.running import protocol

name, n = sys.argv[1], int(sys.argv[2])
warnings.simplefilter("ignore")
X, y = make_blobs(n_samples=n, n_features=10, centers=5, random_state=0)
X = (X - X.mean(0)) / X.std(0)
rng = np.random.default_rng(0)
spec = registry.get_method_spec(name)
if spec.supervision and spec.supervision[0] == "labels":  # label-first methods (NNC and its baselines)
    cons = cgen.labeled_subsets(y, per_class=3, rng=rng)
else:
    cons = cgen.random_pairs(y, n_constraints=max(1, n // 100), rng=rng)
refusal = protocol.size_refusal(spec, {}, n, X.shape[1])
if refusal:
    print(json.dumps({"status": "refused", "error": refusal}))
    sys.exit(0)
kw = {"n_clusters": 5} if spec.needs_n_clusters else {}
warm = registry.make_method(name, **kw)  # compile numba kernels outside the measurement
try:
    warm.fit(X[:60], constraints=cgen.random_pairs(y[:60], n_constraints=3, rng=np.random.default_rng(1)))
except Exception:
    pass
est = registry.make_method(name, **kw)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tic = time.perf_counter()
est.fit(X, constraints=cons)
seconds = time.perf_counter() - tic
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"status": "ok", "seconds": seconds, "peak_mb": max(0.0, (peak - before) / 1024)}))
"""


def measure(name: str, n: int, limit: float) -> dict:
    tic = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD, name, str(n)], capture_output=True, text=True,
                              timeout=limit + 120)  # imports and data are not part of the limit
    except subprocess.TimeoutExpired:
        return {"status": "timeout"}
    if proc.returncode != 0:
        return {"status": "error", "error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "?"}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out["status"] == "ok" and out["seconds"] > limit:
        out["status"] = "over"
    out["wall"] = time.perf_counter() - tic
    return out


def _cell(result: dict | None) -> str:
    if result is None:
        return "not tried"
    if result["status"] in ("ok", "over"):
        text = f"{result['seconds']:.2g} s, {result['peak_mb']:.0f} MB"
        return text + (" (over the limit)" if result["status"] == "over" else "")
    return result["status"]


def _declared(spec) -> str:
    parts = []
    if spec.memory is not None:
        parts.append(f"memory {spec.memory.describe()}")
    if spec.time is not None:
        parts.append(f"time {spec.time.describe()}")
    return "; ".join(parts) or "O(n d) memory"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="500,1000,2000,5000")
    parser.add_argument("--limit", type=float, default=60.0)
    parser.add_argument("--methods", default=None, help="comma-separated (default: every registered method)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    from ccbench import registry

    sizes = [int(s) for s in args.sizes.split(",")]
    names = args.methods.split(",") if args.methods else [
        s.name for s in registry.list_methods(load=False) if not s.name.startswith("peer_")]
    lines = ["| method | " + " | ".join(f"n = {n:,}" for n in sizes) + " | declared limits |",
             "|---|" + "---|" * (len(sizes) + 1)]
    for name in names:
        results: dict[int, dict] = {}
        for n in sizes:
            results[n] = measure(name, n, args.limit)
            print(f"{name} n={n}: {results[n]}", file=sys.stderr, flush=True)
            if results[n]["status"] in ("timeout", "over", "refused", "error"):
                break
        spec = registry.get_method_spec(name)
        lines.append(f"| `{name}` | " + " | ".join(_cell(results.get(n)) for n in sizes)
                     + f" | {_declared(spec)} |")
    table = "\n".join(lines)
    print(table)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
