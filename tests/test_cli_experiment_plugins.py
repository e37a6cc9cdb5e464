"""The precheck knows the methods an experiment's own plugins register (issue 53: `ccbench experiment=active
method.name=cobras` was refused as an unknown method unless `plugins=[ccbench_plugins.cobras]` was repeated on
the command line, although the experiment file lists it)."""

from __future__ import annotations

import os
import sys

from ccbench.running import cli
import _proc


def test_an_experiments_plugins_are_read_from_its_file_and_the_files_it_extends(tmp_path):
    assert cli._experiment_plugins(["experiment=active", "method.name=cobras"]) == ["ccbench_plugins.cobras"]
    assert cli._experiment_plugins(["experiment=leaderboard_smoke"]) == []  # extends leaderboard: none listed
    assert cli._experiment_plugins(["experiment=no_such_experiment"]) == []  # left to Hydra, which names it


def test_a_method_of_the_experiments_plugin_passes_the_precheck():
    """In a fresh process (the plugin must not be loaded already): the precheck's refusal is exit 2 before any job;
    a bad value beside it still stops the sweep, so the precheck ran."""
    env = {**os.environ, "MPLBACKEND": "Agg"}
    run = _proc.run([sys.executable, "-m", "ccbench.running.cli", "experiment=active", "method.name=cobras",
                     "n_trials=-1"], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 2, run.stderr[-2000:]
    assert "n_trials" in run.stderr and "cobras" not in run.stderr, run.stderr[-2000:]
