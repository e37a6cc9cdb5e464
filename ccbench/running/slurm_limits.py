"""SLURM's accounting limits, checked before a sweep is submitted (issue 54, item 8).

:func:`limit_problems` reads what the user's association and the job's QOS allow
(``sacctmgr -n -P show assoc`` / ``show qos``; which of them SLURM enforces from
``AccountingStorageEnforce`` in ``scontrol show config``) and names, one line each, what the
sweep's array would break:

- ``MaxSubmitJobs`` of the association, ``MaxSubmitJobsPerUser`` (``MaxSubmitPU``) and
  ``MaxSubmitJobsPerAccount`` (``MaxSubmitPA``) of the QOS: every array task counts as one job,
  with the user's jobs already queued; ``sbatch`` refuses the whole array after the grid was
  pickled. The fix named: fewer tasks (``hydra.sweeper.max_tasks``, cells packed per task).
- ``MaxWall`` and ``MaxTRES`` (per job: ``cpu``, ``mem``) of the association and of the QOS:
  a task asking for more is left pending for ever (``QOSMaxWallDurationPerJobLimit``, ...)
  unless the QOS denies it at once. The fix named: a shorter ``timeout_min`` (a task's finished
  trials are kept and the same command resumes the rest), fewer CPUs or less memory, another QOS.
- the account (``hydra.launcher.account``, else the user's default account) and the QOS
  (``hydra.launcher.qos``, else the association's default): ``sbatch`` refuses a job of an
  account the user has no association with, or of a QOS the association may not use.

Limits are checked only where SLURM enforces them: associations (account, QOS) with
``associations``/``limits``/``qos``/``safe``/``all``, the limits with ``limits``/``safe``/``all``.
Nothing is checked where ``sacctmgr`` is missing; where it cannot answer (``slurmdbd`` down) a
warning says so and ``sbatch`` decides.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from typing import Callable

from .slurm import parse_slurm_minutes

__all__ = ["limit_problems", "parse_tres", "parse_mem_mb", "enforcement"]

log = logging.getLogger("ccbench")

_ASSOC_FORMAT = "Account,Partition,QOS,DefaultQOS,MaxSubmit,MaxWall,MaxTRES"
_QOS_FORMAT = "Name,MaxWall,MaxTRES,MaxSubmitPU,MaxSubmitPA"
_MEM_UNITS = {"K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0 ** 2, "P": 1024.0 ** 3}


def parse_mem_mb(text: str) -> float:
    """SLURM's memory amount (``2G``, ``500M``, ``1.5T``; no unit: MB) in MB (1 G = 1024 M)."""
    m = re.fullmatch(r"([\d.]+)([KMGTP]?)B?", text.strip().upper())
    if m is None:
        raise ValueError(f"not a SLURM memory amount: {text!r}")
    return float(m.group(1)) * _MEM_UNITS[m.group(2) or "M"]


def parse_tres(text: str) -> dict[str, float]:
    """A TRES list (``cpu=4,mem=8G,node=1,gres/gpu=2``) as ``{name: amount}``, memory in MB;
    names whose amount is not a number are left out."""
    out = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        name, _, value = part.partition("=")
        try:
            out[name] = parse_mem_mb(value) if name == "mem" else float(value)
        except ValueError:
            continue
    return out


def enforcement(config_text: str) -> tuple[bool, bool]:
    """``(associations, limits)``: whether SLURM enforces associations (account, QOS) and limits,
    from ``AccountingStorageEnforce`` in ``scontrol show config`` (slurm.conf(5): ``limits``,
    ``qos``, ``wckeys`` and ``safe`` imply ``associations``; ``safe`` implies ``limits``)."""
    m = re.search(r"^AccountingStorageEnforce\s*=\s*(\S*)", config_text, flags=re.M)
    words = set((m.group(1) if m else "").lower().split(","))
    limits = bool(words & {"limits", "safe", "all"})
    return limits or bool(words & {"associations", "qos", "wckeys", "all"}), limits


def _config_value(config_text: str, key: str) -> str | None:
    m = re.search(rf"^{key}\s*=\s*(\S*)", config_text, flags=re.M)
    return m.group(1) if m else None


def _run(args: list[str]) -> str:
    out = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        said = (out.stderr.strip() or out.stdout.strip()).splitlines()
        raise RuntimeError(f"{args[0]}: " + (said[-1] if said else f"exit status {out.returncode}"))
    return out.stdout


def _rows(text: str, fields: str) -> list[dict]:
    names = fields.split(",")
    return [dict(zip(names, line.split("|"))) for line in text.splitlines() if line.strip()]


def _user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def limit_problems(params: dict, n_tasks: int, *, run: Callable[[list[str]], str] = _run,
                   user: str | None = None) -> list[str]:
    """What the sweep's ``n_tasks`` array tasks, each asking for ``params`` (the launcher's
    ``timeout_min``, ``cpus_per_task``, ``mem_gb``, ``account``, ``qos``, ``partition``), would
    break among the limits SLURM enforces (see the module docstring); empty when nothing, or
    nothing can be asked. ``run`` runs a command and returns its output (raises when it fails)."""
    if shutil.which("sacctmgr") is None and run is _run:
        return []
    user = user or _user()
    try:
        config = run(["scontrol", "show", "config"])
        check_assoc, check_limits = enforcement(config)
        if not check_assoc:
            return []
        cluster = _config_value(config, "ClusterName") or ""
        assocs = _rows(run(["sacctmgr", "-n", "-P", "show", "assoc", "where", f"user={user}", f"cluster={cluster}",
                            f"format={_ASSOC_FORMAT}"]), _ASSOC_FORMAT)
        account = _param(params, "account") or _default_account(run, user)
        qos_name = _param(params, "qos")
        assoc, problems = _association(assocs, user, cluster, account, params.get("partition"))
        if assoc is None:
            return problems
        qos_name = qos_name or assoc.get("DefaultQOS") or "normal"
        allowed = [q for q in assoc.get("QOS", "").split(",") if q]
        if allowed and qos_name not in allowed:
            where = "hydra.launcher.qos" if _param(params, "qos") else "its default QOS"
            return [f"{where}={qos_name}: account {assoc['Account']} may not use QOS {qos_name} "
                    f"(allowed: {', '.join(allowed)}); set hydra.launcher.qos to one of them"]
        qos = _rows(run(["sacctmgr", "-n", "-P", "show", "qos", "where", f"name={qos_name}", f"format={_QOS_FORMAT}"]),
                    _QOS_FORMAT)
        if not qos:
            return [f"hydra.launcher.qos={qos_name}: SLURM does not know this QOS (sacctmgr show qos)"]
        if not check_limits:
            return []
        queued = len(run(["squeue", "-h", "-r", "-u", user, "-o", "%i"]).split())
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        log.warning("could not read SLURM's accounting limits (%s); submitting without checking them", exc)
        return []
    who = f"the association of user {user} with account {assoc['Account']}"
    return (_job_limits(params, assoc, who, qos_name)
            + _job_limits(params, qos[0], f"QOS {qos_name}", qos_name)
            + _submit_limits(n_tasks, queued, user, [
                (assoc.get("MaxSubmit"), f"{who} (MaxSubmitJobs"),
                (qos[0].get("MaxSubmitPU"), f"QOS {qos_name} (MaxSubmitJobsPerUser"),
                (qos[0].get("MaxSubmitPA"), f"QOS {qos_name} for account {assoc['Account']} "
                                            f"(MaxSubmitJobsPerAccount")]))


def _param(params: dict, key: str) -> str | None:
    return params.get(key) or (params.get("additional_parameters") or {}).get(key)


def _default_account(run, user: str) -> str | None:
    rows = run(["sacctmgr", "-n", "-P", "show", "user", user, "format=DefaultAccount"]).split()
    return rows[0] if rows else None


def _association(assocs: list[dict], user: str, cluster: str, account: str | None,
                 partition: str | None) -> tuple[dict | None, list[str]]:
    """The association a job of ``account`` on ``partition`` runs under (one for that partition
    before one for every partition), or None and why sbatch would refuse the job."""
    if not assocs:
        return None, [f"user {user} has no SLURM association on cluster {cluster} (no account to charge): sbatch "
                      "would refuse every task; ask the cluster's administrators to add you (sacctmgr add user)"]
    mine = [a for a in assocs if a.get("Account") == account and a.get("Partition") in ("", partition)]
    if not mine:
        accounts = sorted({a["Account"] for a in assocs})
        said = f"hydra.launcher.account={account}" if account else "no hydra.launcher.account and no default account"
        return None, [f"{said}: user {user} has no association with {'it' if account else 'an account'} on "
                      f"cluster {cluster}{' for partition ' + partition if partition else ''} (their accounts: "
                      f"{', '.join(accounts)}); set hydra.launcher.account to one of them"]
    return sorted(mine, key=lambda a: a.get("Partition") == "")[0], []


def _job_limits(params: dict, limits: dict, where: str, qos_name: str) -> list[str]:
    """``MaxWall`` and ``MaxTRES`` (cpu, mem) of an association or a QOS against one task's request."""
    problems = []
    other_qos = f"or a QOS with a higher limit (hydra.launcher.qos; this is {qos_name})"
    wall = parse_slurm_minutes(limits.get("MaxWall", ""))
    timeout = params.get("timeout_min")
    if timeout and wall is not None and timeout > wall:
        problems.append(f"hydra.launcher.timeout_min={timeout}: {where} allows at most {wall:g} min per job "
                        f"(MaxWall={limits['MaxWall']}): SLURM would refuse the tasks or leave them pending for ever. Ask for at most "
                        f"timeout_min={int(wall)} (a task's finished trials are kept and the same command "
                        f"resumes the rest), {other_qos}")
    tres = parse_tres(limits.get("MaxTRES", ""))
    cpus = params.get("cpus_per_task") or 1
    if "cpu" in tres and cpus > tres["cpu"]:
        problems.append(f"hydra.launcher.cpus_per_task={cpus}: {where} allows at most {tres['cpu']:g} CPUs per job "
                        f"(MaxTRESPerJob cpu={tres['cpu']:g}); ask for fewer, {other_qos}")
    mem_mb = (params.get("mem_gb") or 0) * 1024
    if "mem" in tres and mem_mb > tres["mem"]:
        problems.append(f"hydra.launcher.mem_gb={params.get('mem_gb')}: {where} allows at most {tres['mem']:g} MB "
                        f"per job (MaxTRESPerJob mem); ask for at most mem_gb={tres['mem'] / 1024:g}, {other_qos}")
    return problems


def _submit_limits(n_tasks: int, queued: int, user: str, limits: list[tuple[str | None, str]]) -> list[str]:
    """The job-count limits (each array task is one job) against ``n_tasks`` plus the ``queued`` jobs."""
    problems = []
    for value, where in limits:
        if not value or not value.isdigit() or n_tasks + queued <= int(value):
            continue
        limit, room = int(value), int(value) - queued
        fix = (f"pack the cells into at most {room:,} tasks with hydra.sweeper.max_tasks={room}" if room > 0 else
               f"wait for your queued jobs to end (squeue -u {user})")
        problems.append(f"the sweep is {n_tasks:,} array tasks{f' and user {user} has {queued:,} jobs queued' if queued else ''}"
                        f": {where}={limit}) allows at most {limit:,} jobs submitted at once, so sbatch would "
                        f"refuse the array; {fix}, or use another QOS (hydra.launcher.qos)")
    return problems
