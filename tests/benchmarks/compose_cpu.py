"""CPU time per job of the ccbench sweeper's composition, on the leaderboard's grid.

    python tests/benchmarks/compose_cpu.py 1000          # two passes over the grid's first 1,000 jobs
    python tests/benchmarks/compose_cpu.py 1000 profile  # the second pass under cProfile

The first pass includes composing the templates (Hydra, once per group option); the second is
the per-job copy alone. CPU time (``time.process_time``), not wall: the reference machine is
shared. docs/harness.md ("Start-up that does not grow with the sweep") quotes it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for benchmarks.bench_compose


def main(argv: list[str]) -> None:
    from benchmarks.bench_compose import _grid, _loader_and_master

    from hydra_plugins.ccbench_sweeper.ccbench_sweeper import ComposeOnceLoader

    n = int(argv[0]) if argv else 1000
    loader, master = _loader_and_master()
    grid = _grid(n)
    fast = ComposeOnceLoader(loader)
    start = time.process_time()
    for overrides in grid:
        fast.compose(master, overrides)
    print(f"first pass, templates included: {(time.process_time() - start) * 1000 / n:.2f} ms/job")
    start = time.process_time()
    if len(argv) > 1:
        import cProfile
        import pstats

        profile = cProfile.Profile()
        profile.runcall(lambda: [fast.compose(master, o) for o in grid])
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
    else:
        for overrides in grid:
            fast.compose(master, overrides)
    print(f"second pass, templates composed: {(time.process_time() - start) * 1000 / n:.2f} ms/job")


if __name__ == "__main__":
    main(sys.argv[1:])
