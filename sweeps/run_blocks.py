"""Run an experiment whose cells are not one grid: the ``ccbench`` commands listed in its config's header.

A config such as ``conf/experiment/leaderboard_budget6x.yaml`` lists, in comment lines of the form
``#   ccbench experiment=NAME hydra.sweep.dir=DIR ...``, the blocks (grids) that together make its cells (NAME
the config's own, or one of its family beside it: ``board.yaml`` lists ``board_noise``, ``board_pccc``, ...).
This runs them all into one sweep directory, ``--jobs`` blocks at a time (each block is one ``ccbench -m``
command; the harness runs its cells one after the other), and records a finished block in
``DIR/.blocks_done`` so that a later run skips it. Killed, the same command resumes: a block that did not
finish runs again and the harness skips its complete cells.

    python sweeps/run_blocks.py conf/experiment/leaderboard_budget6x.yaml --jobs 2 --dir sweeps/leaderboard_budget6x

Why a sweep folder here is committed: a long sweep outlives the machine it started on (a session's machine is
not kept), so its rows are committed under ``sweeps/`` between sessions (``sweeps/README.md``) and the next
machine resumes from them. Exit status: 0 when every block finished, 1 otherwise (the failed blocks named).
Before a block, ``ccbench fetch`` with its overrides checks its data sets are there (``--skip-data-check``
not): a board resumed once without ``CCBENCH_DATA_DIR`` turned 789 cells into error rows in five minutes.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

DONE_FILE = ".blocks_done"
#: Each block's end-of-sweep report would gather and draw the whole directory, every block's rows, not its own:
#: about 8 minutes of one core per block at 40,000 cells (the board, 2026-12-01), while the other slot runs
#: trials; without the report, the code of 2026-12-01 still gathered the whole directory to count its
#: failures (5-6.5 min a block at 42,000 cells, 2026-12-02). Now a block without its report reads only the
#: job directories it ran (:data:`ccbench.running.sweep_progress.RAN_FILE`): it prints the summary table
#: and problems of its own cells and exits non-zero on its own failed trials, not another block's.
#: The sweep's report is ``ccbench report DIR`` once, after the last block.
NO_BLOCK_REPORT = "hydra.callbacks.ccbench_summary.write_report=false"
#: Where the data files are read (``ccbench.data._files``); named when a block's data sets are not there.
DATA_DIR_ENV = "CCBENCH_DATA_DIR"


def _names_a_block(experiment: str, config: Path) -> bool:
    """A header line's experiment is a block of ``config``: the experiment itself, or one of its family
    (``board_noise`` in ``board.yaml``: an experiment file beside it whose name extends the config's), so
    that the header of an experiment made of several (the board's five, the leaderboard's three) runs all."""
    name = config.stem
    return experiment == name or (experiment.startswith(name + "_") and (config.parent / f"{experiment}.yaml").is_file())


def blocks(config: Path) -> list[list[str]]:
    """The commands in ``config``'s header, each as its ``ccbench`` arguments (the sweep dir removed)."""
    if not config.is_file():
        raise SystemExit(f"{config}: no such experiment file (the blocks are read from its header)")
    found = []
    for line in config.read_text().splitlines():
        text = line.lstrip("#").strip()
        if not text.startswith("ccbench experiment="):
            continue
        args = shlex.split(text)[1:]
        if _names_a_block(args[0].split("=", 1)[1], config):
            found.append([a for a in args if not a.startswith("hydra.sweep.dir=")])
    if not found:
        raise SystemExit(f"{config}: no '#   ccbench experiment={config.stem} ...' lines in its header")
    return found


def _key(args: list[str]) -> str:
    return " ".join(args)


def _one_job_per_block(ccbench: str, todo: list[list[str]], given: list[str]) -> dict[str, list[str]]:
    """{experiment: ["hydra.launcher.n_jobs=1"]} for each block experiment whose launcher runs jobs in
    parallel (the leaderboard family's ``local`` launcher, two at a time): ``--jobs`` blocks at once are
    ``--jobs`` cores, so each block runs its cells one at a time, not ``--jobs`` x n_jobs workers sharing the
    cores (each trial's wall time doubled, two large fits in memory at once). Asked of the ``ccbench`` that
    runs the blocks (``--cfg hydra``); none where ``--set`` names a launcher key itself."""
    if any(o.startswith(("hydra.launcher", "hydra/launcher")) for o in given):
        return {}
    import yaml

    extra = {}
    for experiment in dict.fromkeys(a[0] for a in todo):
        shown = subprocess.run([ccbench, experiment, "--cfg", "hydra", "--package", "hydra.launcher"],
                               capture_output=True, text=True)
        if shown.returncode != 0:
            print(f"warning: could not read the launcher of {experiment} ({ccbench} exited {shown.returncode}: "
                  f"{shown.stderr.strip()[-300:]}); its blocks run with their own launcher", file=sys.stderr)
            continue
        jobs = (yaml.safe_load(shown.stdout) or {}).get("n_jobs")
        if isinstance(jobs, int) and jobs > 1:
            extra[experiment] = ["hydra.launcher.n_jobs=1"]
            print(f"{experiment}: its launcher runs {jobs} jobs at a time; each block runs one "
                  f"(hydra.launcher.n_jobs=1), --jobs blocks at once", flush=True)
    return extra


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--dir", type=Path, required=True, help="the sweep directory every block writes into")
    parser.add_argument("--jobs", type=int, default=1,
                        help="blocks run at once, one core each (a block's own launcher then runs one job at a time)")
    parser.add_argument("--ccbench", default=str(Path(sys.executable).with_name("ccbench")))
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an override added to every block's command, not to its name in .blocks_done (e.g. "
                             "keep_stale=true to finish a sweep on code whose answers are tested equal); repeatable")
    parser.add_argument("--skip-data-check", action="store_true",
                        help="run a block without first checking its data sets with `ccbench fetch` (2-5 s a block)")
    parser.add_argument("--block-reports", action="store_true",
                        help="let each block write the end-of-sweep report of the whole directory (off: minutes per "
                             "block on a large folder; run `ccbench report DIR` after the last block instead)")
    opts = parser.parse_args(argv)
    for override in opts.set:
        if "=" not in override or override.startswith(("hydra.sweep.dir=", "experiment=")):
            parser.error(f"--set {override!r}: give KEY=VALUE, other than the sweep dir and the experiment")
    if opts.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {opts.jobs}")
    if not (Path(opts.ccbench).is_file() and os.access(opts.ccbench, os.X_OK)):
        parser.error(f"--ccbench {opts.ccbench}: not an executable file (the ccbench that runs the blocks, e.g. "
                     f"/path/to/venv/bin/ccbench)")
    todo = blocks(opts.config)
    opts.dir.mkdir(parents=True, exist_ok=True)
    done_path = opts.dir / DONE_FILE
    done = set(done_path.read_text().splitlines()) if done_path.exists() else set()
    queue = [b for b in todo if _key(b) not in done]
    print(f"{len(todo)} blocks, {len(todo) - len(queue)} done before, {len(queue)} to run", flush=True)
    per_block = _one_job_per_block(opts.ccbench, queue, opts.set) if opts.jobs > 1 else {}
    asked = opts.block_reports or any("ccbench_summary.write_report" in o for o in opts.set)
    report = [] if asked else [NO_BLOCK_REPORT]
    lock, failed = threading.Lock(), []

    def worker(slot: int) -> None:
        while True:
            with lock:
                if not queue:
                    return
                args = queue.pop(0)
            log = opts.dir / f".block_{slot}.log"
            start = time.monotonic()
            print(f"{time.strftime('%H:%M:%S')} [{slot}] {_key(args)}", flush=True)
            with open(log, "a") as out:
                # a block whose data is absent would record an error row in each of its cells within minutes
                rc = 0 if opts.skip_data_check else subprocess.call([opts.ccbench, "fetch", *args], stdout=out,
                                                                    stderr=subprocess.STDOUT)
                if rc != 0:
                    print(f"{time.strftime('%H:%M:%S')} [{slot}] data not there ({opts.ccbench} fetch exited {rc}: "
                          f"its FAILED lines in {log}); is {DATA_DIR_ENV} set? The block is not run", flush=True)
                else:
                    rc = subprocess.call([opts.ccbench, "-m", *args, *per_block.get(args[0], []), *report,
                                          *opts.set, f"hydra.sweep.dir={opts.dir}"],
                                         stdout=out, stderr=subprocess.STDOUT)
            took = time.monotonic() - start
            with lock:
                if rc == 0:
                    with open(done_path, "a") as f:
                        f.write(_key(args) + "\n")
                else:
                    failed.append(args)
                left = len(queue)
            print(f"{time.strftime('%H:%M:%S')} [{slot}] exit {rc} after {took:.0f} s; {left} blocks queued"
                  + ("" if rc == 0 else f" (see {log})"), flush=True)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(opts.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for args in failed:
        print(f"FAILED block: ccbench -m {_key(args)} hydra.sweep.dir={opts.dir}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
