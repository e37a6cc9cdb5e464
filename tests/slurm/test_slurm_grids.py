"""Two packed grids run into one sweep directory at once on the real one-node cluster (``slurm_cluster``,
tests/slurm/conftest.py), then resumed (issue 54, items 1 and 5). The logic behind it (pack map names,
state queries, the fallback without ``sacct``, the incomplete-cell filter) is tested without a cluster
in tests/test_slurm_logic.py."""

from __future__ import annotations

import subprocess
import sys
import time

import pandas as pd
import pytest

from ccbench.running.results import read_results

#: two grids of two cells each, each packed into one task: the tiniest grids that pack
GRIDS = {"a": "constraints.n_constraints=10,20", "b": "constraints.n_constraints=30,40"}


def _command(grid: str, sweep) -> list[str]:
    return [sys.executable, "-m", "ccbench.running.cli", "hydra/launcher=slurm", "method=kmeans", "n_trials=1",
            GRIDS[grid], "hydra.sweeper.cells_per_task=2", f"hydra.sweep.dir={sweep}"]


def _submitted(cluster) -> int:
    return len(cluster.run("sacct", "-n", "-X", "-o", "JobID", "--parsable2", check=False).stdout.split())


@pytest.mark.slow
def test_two_packed_grids_into_one_directory_at_once_run_every_cell_and_a_resume_submits_nothing(
        slurm_cluster, tmp_path):
    """Both commands' tasks run their own two cells (one shared pack map let the second command's
    map replace the first's: both exited 0 and two of the first grid's cells never ran); the first
    command run again finds its cells complete and submits no task."""
    sweep = tmp_path / "s"
    env = {**slurm_cluster.env, "MPLBACKEND": "Agg"}
    procs = [subprocess.Popen(_command(g, sweep), cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for g in GRIDS]
    try:
        errs = [p.communicate(timeout=600)[1] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, err in zip(procs, errs):
        assert p.returncode == 0, err[-3000:]
    assert len(list(sweep.glob(".ccbench_packs.*.json"))) == 2
    rows = pd.concat([read_results(f) for f in sweep.rglob("results.parquet")], ignore_index=True)
    assert sorted(rows["constraints.n_constraints"].astype(int)) == [10, 20, 30, 40]  # every cell, each once
    assert (rows["status"] == "ok").all()
    before = _submitted(slurm_cluster)
    again = subprocess.run(_command("a", sweep), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "2 of 2 cells are complete" in again.stderr and "submitting the other 0" in again.stderr
    assert _submitted(slurm_cluster) == before  # no task submitted


def _held_tasks(cluster) -> list[str]:
    out = cluster.run("squeue", "-h", "-r", "-o", "%i %r", check=False).stdout.splitlines()
    return sorted(line.split()[0] for line in out if line.endswith("JobHeldUser"))


@pytest.mark.slow
def test_without_sacct_a_cancelled_task_is_named_and_the_resume_submits_only_its_cell(slurm_cluster, tmp_path):
    """Accounting down for the command (a ``sacct`` that fails, first on its PATH): a cancelled task
    is named from squeue/scontrol, said once, with the command that resumes (submitit waited for
    ever, printing "Bypassing sacct error"); the other cell's row is saved, and the resume submits
    one task, for the cancelled task's cell only."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "sacct").write_text("#!/bin/sh\necho 'sacct: error: Problem talking to the database: "
                                "Connection refused' >&2\nexit 1\n")
    (fake / "sacct").chmod(0o755)
    env = {**slurm_cluster.env, "MPLBACKEND": "Agg", "PATH": f"{fake}:{slurm_cluster.env.get('PATH', '')}"}
    sweep = tmp_path / "s"
    args = [sys.executable, "-m", "ccbench.running.cli", "hydra/launcher=slurm", "method=kmeans", "n_trials=1",
            "constraints.n_constraints=10,20", f"hydra.sweep.dir={sweep}"]
    proc = subprocess.Popen([*args, "+hydra.launcher.additional_parameters={hold:true}"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        held: list[str] = []
        end = time.monotonic() + 300
        while len(held) < 2:  # both tasks submitted, held: cancel one before it runs, release the other
            assert proc.poll() is None and time.monotonic() < end, proc.communicate()[1][-3000:]
            time.sleep(0.5)
            held = _held_tasks(slurm_cluster)
        cancelled, kept = held
        slurm_cluster.run("scancel", cancelled)
        slurm_cluster.run("scontrol", "release", kept)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, err[-3000:]
    assert err.count("squeue and scontrol instead") == 1, err[-3000:]
    assert f"task {cancelled}: SLURM state CANCELLED" in err or f"task {cancelled}: SLURM state left the queue" in err
    assert "1 SLURM task(s) did not finish" in err and "ccbench hydra/launcher=slurm method=kmeans" in err
    assert len(list(sweep.rglob("results.parquet"))) == 1  # the released task's cell is saved
    before = _submitted(slurm_cluster)
    again = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "1 of 2 cells are complete" in again.stderr, again.stderr[-3000:]
    assert _submitted(slurm_cluster) == before + 1  # one task, the cancelled one's cell
    rows = pd.concat([read_results(f) for f in sweep.rglob("results.parquet")], ignore_index=True)
    assert sorted(rows["constraints.n_constraints"].astype(int)) == [10, 20] and (rows["status"] == "ok").all()
