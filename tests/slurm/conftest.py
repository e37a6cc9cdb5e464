"""The ``slurm_cluster`` fixture: one real one-node SLURM cluster per test session
(:mod:`tests/slurm/cluster.py`), started when Debian's slurm and munge binaries are installed
(``.ci/run`` installs them as root), else every test that uses it skips and says why.

``CCBENCH_TEST_SLURM_DIR=<dir>`` reuses a cluster already started with
``python tests/slurm/cluster.py start <dir>`` (left running afterwards)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("ccbench_test_slurm_cluster", Path(__file__).with_name("cluster.py"))
cluster_mod = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = cluster_mod
_spec.loader.exec_module(cluster_mod)


_REPORT: list[str] = []


def pytest_terminal_summary(terminalreporter):
    """The test cluster's bring-up in the run's summary (CI's log shows it; captured output does not)."""
    for line in _REPORT:
        terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory):
    reuse = os.environ.get("CCBENCH_TEST_SLURM_DIR")
    if reuse and Path(reuse, "cluster.json").exists():
        yield cluster_mod.Cluster.load(reuse)
        return
    missing = cluster_mod.missing_binaries()
    if missing:
        pytest.skip(f"no SLURM cluster: not installed: {', '.join(missing)} (as root: apt-get install "
                    "slurmctld slurmd slurm-client munge slurmdbd mariadb-server; .ci/run does it)")
    if os.geteuid() != 0:
        pytest.skip("no SLURM cluster: the test cluster's slurmd runs as root (jobs as any user); not root")
    cluster = cluster_mod.start(tmp_path_factory.mktemp("slurm"))
    _REPORT.append(f"SLURM cluster up in {cluster.bring_up_s} s: node {cluster.node}, {cluster.cpus} CPUs, "
                   f"{cluster.memory_mb} MB ({cluster.root})")
    print(f"\n{_REPORT[-1]}", file=sys.stderr)
    try:
        yield cluster
    finally:
        cluster.stop()
