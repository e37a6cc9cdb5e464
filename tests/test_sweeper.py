"""``hydra/sweeper=ccbench``: Hydra's basic sweeper, composing each job's config once."""

from __future__ import annotations

import pickle
import sys

import pandas as pd
import pytest
from hydra import compose, initialize_config_module

from ccbench.running.results import MEASURED_COLUMNS, read_results
from hydra_plugins.ccbench_sweeper import ccbench_sweeper
import _proc  # on time-out, the command's whole process group is killed (issue 54)


def ComposeOnceLoader(loader):  # noqa: N802
    """The module's class as it is now: Hydra's plugin scan may re-execute the module
    (when the repository's ``hydra_plugins`` folder is on the path), and pickle looks
    the class up by name."""
    return ccbench_sweeper.ComposeOnceLoader(loader)


class _CountingLoader:
    """Stands in for Hydra's config loader: a fresh object per composition."""

    def __init__(self):
        self.calls = []
        self.searchpath = "kept"

    def load_sweep_config(self, master_config, sweep_overrides):
        self.calls.append(list(sweep_overrides))
        return {"overrides": list(sweep_overrides), "n": len(self.calls)}


def test_validated_config_is_handed_to_the_launcher_once():
    inner = _CountingLoader()
    loader = ComposeOnceLoader(inner)
    master = object()
    jobs = [["method=ap", "n_trials=1"], ["method=kmeans", "n_trials=1"]]
    validated = [loader.load_sweep_config(master, job) for job in jobs]  # the sweeper's check
    launched = [loader.load_sweep_config(master, job) for job in jobs]  # the launcher
    assert [c is v for c, v in zip(launched, validated)] == [True, True]
    assert len(inner.calls) == 2
    # a third request for the same job (e.g. a launcher composing again) composes anew
    again = loader.load_sweep_config(master, jobs[0])
    assert again is not validated[0] and len(inner.calls) == 3
    # another master config is another sweep: nothing is shared with it
    loader.load_sweep_config(object(), jobs[1])
    assert len(inner.calls) == 4
    assert loader.searchpath == "kept"  # everything else is the wrapped loader's


def test_pickled_loader_ships_no_configs():
    """Launchers that pickle themselves (submitit) must not carry every job's config."""
    loader = ComposeOnceLoader(_CountingLoader())
    loader.load_sweep_config("master", ["method=ap"])
    clone = pickle.loads(pickle.dumps(loader))
    assert clone._composed == {} and loader._composed


def test_ccbench_sweeper_is_the_default():
    with initialize_config_module("ccbench_conf", version_base="1.3"):
        default = compose("config", return_hydra_config=True)
        basic = compose("config", overrides=["hydra/sweeper=basic"], return_hydra_config=True)
    assert default.hydra.sweeper._target_ == "hydra_plugins.ccbench_sweeper.ccbench_sweeper.CCBenchSweeper"
    assert basic.hydra.sweeper._target_.endswith("BasicSweeper")


_COUNTING_MAIN = """
import sys
import hydra._internal.config_loader_impl as loader_impl
calls = []
compose_job = loader_impl.ConfigLoaderImpl.load_sweep_config
def counted(self, *args, **kwargs):
    calls.append(1)
    return compose_job(self, *args, **kwargs)
loader_impl.ConfigLoaderImpl.load_sweep_config = counted
from ccbench.running.cli import main
code = main(sys.argv[1:])
print("COMPOSED", len(calls))
sys.exit(code)
"""


def _sweep(tmp_path, sweeper):
    sweep_dir = tmp_path / f"sweep-{sweeper}"  # a folder named ccbench in the cwd would shadow the package
    args = ["method=kmeans", "method.n_init=1", "n_trials=2", "constraints.n_constraints=10,20,40",
            f"hydra/sweeper={sweeper}", f"hydra.sweep.dir={sweep_dir}"]
    proc = _proc.run([sys.executable, "-c", _COUNTING_MAIN, *args], cwd=tmp_path,
                     capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    composed = int(proc.stdout.rsplit("COMPOSED", 1)[1].split()[0])
    rows = pd.concat([read_results(f) for f in sorted(sweep_dir.rglob("results.parquet"))])
    rows = rows.drop(columns=list(MEASURED_COLUMNS), errors="ignore").sort_values(["config_hash", "trial"])
    rows = rows.drop(columns=[c for c in rows if c.startswith("env.")])  # the process, not the result
    return composed, rows.reset_index(drop=True)


@pytest.mark.slow
def test_sweep_composes_each_job_once_with_the_basic_sweepers_results(tmp_path):
    composed, rows = _sweep(tmp_path, "ccbench")
    composed_basic, rows_basic = _sweep(tmp_path, "basic")
    # 3 jobs with one set of group choices: Hydra composes it once (ComposeOnceLoader.compose copies
    # it per job); the basic sweeper composes each job twice
    assert composed == 1 and composed_basic == 6
    pd.testing.assert_frame_equal(rows, rows_basic)
