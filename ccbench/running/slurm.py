"""SLURM checks for ``hydra/launcher=slurm`` (no Hydra, no submitit here).

:func:`request_problems` compares what each array task asks for (``mem_gb``,
``cpus_per_task``, ``timeout_min``, ``partition``) with what the partition's nodes
declare (``scontrol show partition`` / ``scontrol show node``), so a request no node
can ever satisfy stops the sweep before submission with one line per problem, instead
of being refused by ``sbatch`` with a terse message or, for a time limit above the
partition's ``MaxTime`` or a partition whose nodes are all down, left pending forever.
:func:`array_problems` does the same for an array longer than the cluster's ``MaxArraySize``
(``sbatch`` refuses it after the whole grid was pickled). :func:`failure_report` words the tasks that did not finish (killed, cancelled, out of
memory, timed out too often) with the cells they were running.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from typing import Iterable, Sequence

__all__ = ["request_problems", "array_problems", "failure_report", "parse_slurm_minutes", "default_mem_gb", "DEFAULT_MEM_GB"]

#: memory per task when ``mem_gb`` is null: this, or the largest node's when that is smaller
DEFAULT_MEM_GB = 4

_UNUSABLE = ("DOWN", "DRAIN", "FAIL", "NOT_RESPONDING", "INVAL", "FUTURE")


def _scontrol(*args: str) -> list[dict]:
    out = subprocess.run(["scontrol", *args, "-o"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip() or out.stdout.strip())
    return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in out.stdout.splitlines() if line.strip()]


def parse_slurm_minutes(text: str) -> float | None:
    """SLURM's time format (``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH[:MM[:SS]]``) in minutes;
    None for ``UNLIMITED``/``INFINITE``."""
    if not text or text.upper() in ("UNLIMITED", "INFINITE", "NONE"):
        return None
    days = 0
    if "-" in text:
        d, text = text.split("-", 1)
        days = int(d)
        parts = [int(p) for p in text.split(":")] + [0, 0]
        h, m, s = parts[:3]
    else:
        parts = [int(p) for p in text.split(":")]
        h, m, s = {1: (0, parts[0], 0), 2: (0, parts[0], parts[1])}.get(len(parts), tuple(parts[:3]))
    return days * 1440 + h * 60 + m + s / 60


def _hostnames(expr: str) -> list[str]:
    out = subprocess.run(["scontrol", "show", "hostnames", expr], capture_output=True, text=True, timeout=60)
    return out.stdout.split() if out.returncode == 0 else [expr]


def _partition(partition: str | None) -> dict | None:
    parts = _scontrol("show", "partition", *([partition] if partition else []))
    if not partition:
        parts = [p for p in parts if p.get("Default") == "YES"] or parts[:1]
    return parts[0] if parts else None


def _node_mem_mb(n: dict) -> int:
    """Memory a job may ask for on node ``n`` (RealMemory less MemSpecLimit), MB."""
    return int(n.get("RealMemory", 0) or 0) - int(n.get("MemSpecLimit", 0) or 0)


def default_mem_gb(partition: str | None = None) -> float:
    """``DEFAULT_MEM_GB``, or the memory of the partition's largest node when that is smaller
    (a small node that declares 2 GB still runs tasks); ``DEFAULT_MEM_GB`` when SLURM cannot be asked."""
    try:
        part = _partition(partition) if shutil.which("scontrol") else None
        if part is None:
            return DEFAULT_MEM_GB
        names = set(_hostnames(part.get("Nodes", ""))) if part.get("Nodes") else set()
        mems = [_node_mem_mb(n) for n in _scontrol("show", "node") if not names or n.get("NodeName") in names]
    except (RuntimeError, OSError, subprocess.SubprocessError):
        return DEFAULT_MEM_GB
    mems = [m for m in mems if m > 0]
    return min(DEFAULT_MEM_GB, max(mems) / 1024) if mems else DEFAULT_MEM_GB


def request_problems(params: dict) -> list[str]:
    """What in the launcher's ``params`` no node of the partition can satisfy (empty: fine, or no
    ``scontrol`` on this machine to ask)."""
    if shutil.which("scontrol") is None:
        return []
    partition = params.get("partition")
    try:
        parts = _scontrol("show", "partition", *([partition] if partition else []))
    except RuntimeError as exc:
        if partition:
            return [f"hydra.launcher.partition={partition}: SLURM does not know it ({exc})"]
        return []  # cannot ask: let sbatch decide
    if not partition:
        parts = [p for p in parts if p.get("Default") == "YES"] or parts[:1]
    if not parts:
        return []
    part = parts[0]
    name = part.get("PartitionName", partition)
    problems = []
    if part.get("State", "UP") != "UP":
        problems.append(f"partition {name} is {part['State']}: its jobs would wait until an administrator "
                        "brings it up")
    timeout = params.get("timeout_min")
    max_time = parse_slurm_minutes(part.get("MaxTime", ""))
    if timeout and max_time is not None and timeout > max_time:
        problems.append(f"hydra.launcher.timeout_min={timeout}: partition {name} allows at most "
                        f"{max_time:g} min (MaxTime={part['MaxTime']}); the tasks would stay pending forever")
    names = set(_hostnames(part.get("Nodes", ""))) if part.get("Nodes") else set()
    try:
        nodes = [n for n in _scontrol("show", "node") if not names or n.get("NodeName") in names]
    except RuntimeError:
        return problems
    usable = [n for n in nodes if not any(s in n.get("State", "") for s in _UNUSABLE)]
    if nodes and not usable:
        problems.append(f"every node of partition {name} is unusable ("
                        + ", ".join(f"{n.get('NodeName')}: {n.get('State')}" for n in nodes) + ")")
    mem_mb = int((params.get("mem_gb") or 0) * 1024)
    cpus = params.get("cpus_per_task") or 1
    pool = usable or nodes
    if pool and (mem_mb or cpus > 1):
        mem_of = _node_mem_mb
        fits = [n for n in pool if mem_of(n) >= mem_mb and int(n.get("CPUTot", 0) or 0) >= cpus]
        if not fits:
            best_mem = max(mem_of(n) for n in pool)
            best_cpu = max(int(n.get("CPUTot", 0) or 0) for n in pool)
            if mem_mb > best_mem:
                problems.append(f"hydra.launcher.mem_gb={params.get('mem_gb')}: the largest node of partition "
                                f"{name} declares {best_mem} MB ({best_mem / 1024:.1f} GB); ask for at most "
                                f"mem_gb={best_mem // 1024}, or leave it null")
            if cpus > best_cpu:
                problems.append(f"hydra.launcher.cpus_per_task={cpus}: the nodes of partition {name} have at "
                                f"most {best_cpu} CPUs")
            if mem_mb <= best_mem and cpus <= best_cpu:
                problems.append(f"no node of partition {name} has both {cpus} CPUs and {mem_mb} MB")
    max_mem = part.get("MaxMemPerNode", "UNLIMITED")
    if mem_mb and max_mem.isdigit() and mem_mb > int(max_mem):
        problems.append(f"hydra.launcher.mem_gb={params.get('mem_gb')}: partition {name} allows at most "
                        f"{max_mem} MB per node (MaxMemPerNode)")
    return problems


def _max_array_size() -> int | None:
    out = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True, timeout=60)
    found = re.search(r"^MaxArraySize\s*=\s*(\d+)", out.stdout, flags=re.M) if out.returncode == 0 else None
    return int(found.group(1)) if found else None


def array_problems(n_tasks: int) -> list[str]:
    """Whether one job array of ``n_tasks`` tasks (indices 0 to n_tasks - 1) exceeds the cluster's
    ``MaxArraySize`` (SLURM's default 1001: at most 1,001 tasks); empty when it fits or nothing can
    be asked."""
    if shutil.which("scontrol") is None:
        return []
    limit = _max_array_size()
    if limit is None or n_tasks <= limit:
        return []
    return [f"the sweep is {n_tasks:,} array tasks and this cluster's MaxArraySize is {limit} (at most {limit:,} "
            f"tasks, indices 0-{limit - 1}): pack several cells into each task with "
            f"hydra.sweeper.max_tasks={min(limit, 1000)}, or submit batches one after another with "
            f"hydra.sweeper.max_batch_size={min(limit, 1000)}"]


def failure_report(failed: Sequence[tuple[str, str, Iterable[str]]]) -> str:
    """One paragraph per task that did not finish: ``(slurm job id, what happened, cells)``."""
    lines = [f"ccbench: {len(failed)} SLURM task(s) did not finish; the other tasks' cells are saved:"]
    for job_id, what, cells in failed:
        cells = list(cells)
        lines.append(f"  task {job_id}: {what}")
        lines.extend(f"    cell: {c}" for c in cells)
    lines.append("Re-run the same command to resume: finished trials are kept, only the missing ones run.")
    return "\n".join(lines)
