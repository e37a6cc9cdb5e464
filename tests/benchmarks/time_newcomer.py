"""How long a user takes to rank a new method against the reference board (issue 51: under 15 minutes on the
2-core machine, measured idle).

Usage::

    python tests/benchmarks/time_newcomer.py --method kmeans [--board reports/leaderboard] [--dir runs/newcomer]
        [--plugin my_package] [--json newcomer.json] [--set dataset=iris_uci,wine_uci]   # --set: a smoke

It runs what ``sweeps/README.md`` tells a newcomer to run, each command in a fresh process as a user would:
one ``ccbench -m experiment=E method=M`` per experiment of the board's family (``board``, ``board_noise``,
``board_noise_large``, ``board_pccc``, and ``board_k_free_cvcp`` for a method that needs k or ``board_k_free``
for one that finds it), then ``ccbench report DIR --leaderboard --with BOARD``. Per command: wall seconds, the
CPU seconds of the command and its children, the exit status. The load average before the first command is
printed beside the total: a figure measured on a busy machine is not the idle figure the issue asks for. A
command that fails stops the timing (exit 1), named with the tail of its output.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

MAIN_EXPERIMENTS = ("board", "board_noise", "board_noise_large", "board_pccc")
#: What a newcomer must beat, on the 2-core machine (issue 51, "Done when").
LIMIT_SECONDS = 15 * 60


def k_free_experiment(method: str, plugins: list[str]) -> str:
    """``board_k_free_cvcp`` for a method that needs k (it chooses k by CVCP there), else ``board_k_free``."""
    from ccbench import registry

    registry.load_plugins(plugins)
    return "board_k_free_cvcp" if registry.get_method_spec(method).needs_n_clusters else "board_k_free"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], log: Path) -> dict:
    """Run ``cmd`` (output to ``log``): ``{"command", "wall_s", "cpu_s", "exit"}``."""
    cpu, tic = _children_cpu(), time.monotonic()
    with open(log, "a") as out:
        rc = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT)
    return {"command": " ".join(cmd), "wall_s": round(time.monotonic() - tic, 2),
            "cpu_s": round(_children_cpu() - cpu, 2), "exit": rc}


def _cpu_name() -> str:
    try:
        return next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", required=True, help="the newcomer's method (a registry name)")
    parser.add_argument("--board", type=Path, default=Path("reports/leaderboard"),
                        help="the reference board's folder (its shipped rows)")
    parser.add_argument("--dir", type=Path, default=Path("runs/newcomer"), help="where the newcomer's rows go")
    parser.add_argument("--plugin", action="append", default=[], help="a plugin module the method comes from")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an override added to every sweep (e.g. dataset=iris_uci for a smoke); repeatable")
    parser.add_argument("--ccbench", default=str(Path(sys.executable).with_name("ccbench")))
    parser.add_argument("--json", type=Path, help="write the timings here too")
    opts = parser.parse_args(argv)
    if not opts.board.is_dir():
        parser.error(f"--board {opts.board}: no such folder (the reference board, e.g. reports/leaderboard)")
    opts.dir.mkdir(parents=True, exist_ok=True)
    log = opts.dir / "newcomer.log"
    plugins = [f"plugins=[{','.join(opts.plugin)}]"] if opts.plugin else []
    experiments = [*MAIN_EXPERIMENTS, k_free_experiment(opts.method, opts.plugin)]
    load = os.getloadavg()
    print(f"machine: {_cpu_name()}, {os.cpu_count()} cores; load average before: "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; output in {log}", flush=True)
    steps = []
    commands = [[opts.ccbench, "-m", f"experiment={e}", f"method={opts.method}", *plugins, *opts.set,
                 f"hydra.sweep.dir={opts.dir}"] for e in experiments]
    commands.append([opts.ccbench, "report", str(opts.dir), "--leaderboard", "--with", str(opts.board),
                     "--out", str(opts.dir / "leaderboard"), "--site", str(opts.dir / "site")])
    for cmd in commands:
        step = timed(cmd, log)
        steps.append(step)
        print(f"{step['wall_s']:8.1f} s wall {step['cpu_s']:8.1f} s CPU  exit {step['exit']}  {step['command']}",
              flush=True)
        if step["exit"] != 0:
            tail = log.read_text()[-2000:]
            print(f"FAILED: {step['command']} exited {step['exit']}; the end of {log}:\n{tail}", file=sys.stderr)
            break
    total = sum(s["wall_s"] for s in steps)
    finished = all(s["exit"] == 0 for s in steps)
    verdict = "within" if total <= LIMIT_SECONDS else "over"
    print(f"total {total / 60:.1f} min of wall ({verdict} the {LIMIT_SECONDS // 60} minutes), "
          f"{sum(s['cpu_s'] for s in steps) / 60:.1f} min of CPU" + ("" if finished else "; NOT FINISHED"))
    if opts.json:
        opts.json.write_text(json.dumps({"method": opts.method, "board": str(opts.board), "cpu": _cpu_name(),
                                         "load_before": load, "steps": steps, "total_wall_s": total,
                                         "finished": finished}, indent=1))
    return 0 if finished else 1


if __name__ == "__main__":
    sys.exit(main())
