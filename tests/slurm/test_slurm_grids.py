"""Two packed grids run into one sweep directory at once on the real one-node cluster (``slurm_cluster``,
tests/slurm/conftest.py), then resumed (issue 54, items 1 and 5). The logic behind it (pack map names,
state queries, the fallback without ``sacct``, the incomplete-cell filter) is tested without a cluster
in tests/test_slurm_logic.py."""

from __future__ import annotations

import subprocess
import sys

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
