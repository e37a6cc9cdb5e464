"""Print the kill-rate table of finished runs: ``python tests/mutation/table.py [DIR] [--first N]``.

DIR holds the ``<family>.json`` files of ``run.py`` (default ``tests/mutation/results``);
``--first N`` counts only each run's first N draws (a run with ``--sample 60`` read as one with
``--sample N``, same seed: the draws are a prefix).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _runner():
    spec = importlib.util.spec_from_file_location("ccbench_mutation_run", HERE / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", nargs="?", type=Path, default=HERE / "results")
    parser.add_argument("--first", type=int, help="only the first N draws of each run")
    args = parser.parse_args(argv)
    run = _runner()
    files = sorted(args.dir.glob("*.json"))
    if not files:
        raise SystemExit(f"no <family>.json in {args.dir}")
    head, rule = run.TABLE_HEAD.splitlines()
    print(f"{head} seed | commit | without proven equivalents |\n{rule}---|---|---|")
    for f in files:
        data = json.loads(f.read_text())
        mutants = data["mutants"]
        if args.first:
            if any("draw" not in m for m in mutants):
                raise SystemExit(f"{f} records no draw order; --first needs a newer run")
            mutants = [m for m in mutants if m["draw"] <= args.first]
        s = run.summarise(mutants)
        adjusted = f"{100 * s['rate_without_equivalents']:.0f}% ({s['equivalent']} left out)"
        print(f"{run.table_row(data['family'], s)} {data['seed']} | {data['commit']} | {adjusted} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
