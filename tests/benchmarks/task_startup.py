"""The CPU a SLURM array task of ``hydra/launcher=slurm`` spends before its first trial, measured locally.

    python tests/benchmarks/task_startup.py [--repeats 5] [--cells 7] [--full] [OVERRIDES...]

A real task's pickle, made by the real launcher: ``ccbench experiment=leaderboard
hydra/launcher=slurm hydra.launcher.detach=true`` on a few cells of the leaderboard's grid
(``dataset=soybean_small supervision=pairs_mid`` and the first ``--cells`` methods, packed into one
task), submitted to a stand-in ``sbatch`` (a script that only answers ``Submitted batch job N``;
``scontrol`` and ``sacctmgr`` stand-ins that fail, so nothing asks a cluster). submitit writes the
task's pickle as it would for SLURM. Then, ``--repeats`` times, a fresh interpreter runs that task
as a SLURM node would (``_task_start.py -u -m submitit.core._submit FOLDER`` with the ``SLURM_*``
variables of array task 0) and stops at its first trial: the figure is the CPU seconds (user +
system) of the task's process and of its ``trial_timeout`` worker (forked or spawned, ready) at the moment the
first trial is handed to the worker; what SLURM itself costs (scheduling, the step daemon) is not in
it. ``--full`` runs the task to its end instead and prints, per cell, its wall and CPU seconds beside
the sum of its trials' ``trial_wall_time`` (the harness's per-cell cost is the difference): the
constants of ``project_cores.py``.

The figures go to the report (docs/harness.md, "Several cells per task"), never into a test;
``bench_task.TaskStartup.track_task_startup_cpu`` is the asv form.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TASK_START = REPO / "hydra_plugins" / "ccbench_sweeper" / "_task_start.py"
#: the leaderboard's methods in its grid's order (conf/experiment/leaderboard.yaml)
METHODS = ("ap_k", "kmeans", "kmedoids", "ncuts", "scap_k", "cobs_k", "cop_kmeans", "cop_kmeans_xing", "pck_means")

_SBATCH = """#!/bin/sh
# a stand-in for sbatch: every submission gets the next job id, nothing runs
n=$(cat "{counter}" 2>/dev/null || echo 1000); n=$((n + 1)); echo "$n" > "{counter}"
echo "Submitted batch job $n"
"""


def fake_slurm(bin_dir: Path) -> dict:
    """An environment whose ``sbatch`` only answers (and whose ``scontrol``, ``sacctmgr``, ``sacct``,
    ``squeue`` fail): the launcher checks nothing against a cluster and submits to no one."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / "sbatch").write_text(_SBATCH.format(counter=bin_dir / "counter"))
    for name in ("scontrol", "sacctmgr", "sacct", "squeue", "sinfo"):
        (bin_dir / name).write_text("#!/bin/sh\necho 'no cluster here' >&2\nexit 1\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def make_task(root: Path, cells: int = 7, overrides: tuple = ()) -> tuple[Path, str]:
    """Submit one packed leaderboard task to the stand-in ``sbatch``: ``(submitit folder, its job id)``."""
    env = fake_slurm(root / "bin")
    env.setdefault("CCBENCH_DATA_DIR", str(REPO.parent / "shared" / "datasets"))
    folder = root / "submitit"
    cmd = [sys.executable, "-m", "ccbench.running.cli", "experiment=leaderboard", "hydra/launcher=slurm",
           "hydra.launcher.detach=true", f"hydra.launcher.submitit_folder={folder}/%j",
           f"hydra.sweeper.cells_per_task={cells}", "hydra.launcher.mem_gb_by_method=null",
           "dataset=soybean_small", "supervision=pairs_mid", "method=" + ",".join(METHODS[:cells]),
           f"hydra.sweep.dir={root / 'sweep'}", *overrides]
    out = subprocess.run(cmd, env=env, cwd=root, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"submitting failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
    pickles = sorted(folder.glob("*/*_submitted.pkl"))
    if len(pickles) < 1:
        raise RuntimeError(f"no task pickle under {folder}:\n{out.stdout}\n{out.stderr}")
    task = pickles[0]  # the array's task 0 (the report job's pickle has no _<task>)
    task = next((p for p in pickles if p.name.count("_") == 2), task)
    return task.parent, task.name[: -len("_submitted.pkl")]


_RUNNER = r"""
import importlib.abc, importlib.util, json, os, resource, runpy, sys, time

REPORT, MODE, TASK_START = sys.argv[1], sys.argv[2], sys.argv[3]

def cpu_self():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

def report(**kw):
    with open(REPORT, "a") as f:
        f.write(json.dumps(kw) + "\n")

def patch_isolation(module):
    call = module.IsolatedRunner.call
    def first_call(self, *args, **kwargs):
        if self._proc is None or not self._proc.is_alive():
            self._start()
        if not getattr(first_call, "done", False):
            first_call.done = True
            worker = module.process_cpu_seconds(self._proc.pid) or 0.0
            report(event="first_trial", main_cpu=cpu_self(), worker_cpu=worker, wall=time.perf_counter() - T0,
                   modules=len(sys.modules), heavy=sorted(m for m in ("cvxpy", "matplotlib", "torch", "numba",
                   "sklearn", "pandas", "pyarrow") if m in sys.modules))
            if MODE == "startup":
                os._exit(0)
        return call(self, *args, **kwargs)
    module.IsolatedRunner.call = first_call

def patch_harness(module):
    run_job = module.run_job
    def timed(cell, out_dir, *args, **kwargs):
        c0, w0 = cpu_self(), time.perf_counter()
        try:
            return run_job(cell, out_dir, *args, **kwargs)
        finally:
            report(event="cell", out=str(out_dir), main_cpu=cpu_self() - c0, wall=time.perf_counter() - w0)
    module.run_job = timed

PATCHES = {"ccbench.isolation": patch_isolation, "ccbench.running.harness": patch_harness}

class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in PATCHES:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        exec_module = spec.loader.exec_module
        def exec_and_patch(module):
            exec_module(module)
            PATCHES[name](module)
        spec.loader.exec_module = exec_and_patch
        return spec

T0 = time.perf_counter()
sys.meta_path.insert(0, Hook())
sys.argv = [TASK_START, *sys.argv[4:]]
runpy.run_path(TASK_START, run_name="__main__")
r = resource.getrusage(resource.RUSAGE_CHILDREN)
report(event="end", main_cpu=cpu_self(), children_cpu=r.ru_utime + r.ru_stime, wall=time.perf_counter() - T0)
"""


def task_env(folder: Path, job_id: str) -> dict:
    """The variables submitit reads in a SLURM array task (array job ``A``, task ``i`` of ``A_i``)."""
    array, _, index = job_id.partition("_")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update({"SUBMITIT_EXECUTOR": "slurm", "SLURM_JOB_ID": array, "SLURM_PROCID": "0", "SLURM_LOCALID": "0",
                "SLURM_NODEID": "0", "SLURM_NTASKS": "1", "SLURM_JOB_NUM_NODES": "1",
                "SLURM_JOB_NODELIST": "localhost"})
    if index:  # a task of an array (one task alone is no array)
        env.update({"SLURM_JOB_ID": str(int(array) + int(index) + 1), "SLURM_ARRAY_JOB_ID": array,
                    "SLURM_ARRAY_TASK_ID": index})
    return env


def run_task(folder: Path, job_id: str, full: bool = False) -> list[dict]:
    """Run the task in a fresh interpreter; its events (``first_trial``, each ``cell``, ``end``)."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        events = Path(f.name)
    runner = events.with_suffix(".py")
    runner.write_text(_RUNNER)
    env = task_env(folder, job_id)
    env.pop("CCBENCH_MAIN_PID", None)
    subprocess.run([sys.executable, "-u", str(runner), str(events), "full" if full else "startup", str(TASK_START),
                    "-u", "-m", "submitit.core._submit", str(folder)], env=env, cwd=folder,
                   capture_output=True, check=False)
    lines = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    events.unlink()
    runner.unlink()
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cells", type=int, default=7)
    parser.add_argument("--full", action="store_true", help="run the task to its end: per-cell costs")
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="ccbench-task-"))
    folder, job_id = make_task(root, args.cells, tuple(args.overrides))
    print(f"task {job_id} in {folder} ({os.getloadavg()[0]:.1f} load average)")
    run_task(folder, job_id)  # warm: the OS file cache, numba's cache
    starts = []
    for _ in range(args.repeats):
        first = next((e for e in run_task(folder, job_id) if e["event"] == "first_trial"), None)
        if first is None:
            raise SystemExit("the task ended without a trial (see its log in " + str(folder) + ")")
        starts.append(first)
        print(f"  to the first trial: {first['main_cpu']:.2f} s CPU (task) + {first['worker_cpu']:.2f} s (worker), "
              f"{first['wall']:.2f} s wall; {first['modules']} modules; {', '.join(first['heavy'])}")
    total = [s["main_cpu"] + s["worker_cpu"] for s in starts]
    print(f"median start-up CPU {statistics.median(total):.2f} s (min {min(total):.2f}, max {max(total):.2f}), "
          f"load average now {os.getloadavg()[0]:.1f}")
    if args.full:
        events = run_task(folder, job_id, full=True)
        for e in events:
            print("  ", json.dumps(e))


if __name__ == "__main__":
    main()
