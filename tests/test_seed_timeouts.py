"""timeout_stops_seeds: one trial killed at trial_timeout speaks for the cell's other base seeds.

The harness's trial worker is a stand-in here (the real one costs seconds to start): ``limit_hit`` makes it
raise the worker's TrialTimeout, and it counts the fits it was asked for, so a test sees that a stopped
seed never fitted."""

from __future__ import annotations

import json
import os

import pytest

from ccbench.isolation import TrialTimeout
from ccbench.running import harness, protocol, seed_timeouts
from ccbench.running.harness import run_job


class _Worker:
    def __init__(self, limit_hit=False):
        self.limit_hit, self.calls = limit_hit, 0
        self.last_cpu = self.last_wall = None

    def call(self, func, *args, timeout):
        self.calls += 1
        self.last_cpu = self.last_wall = 0.1
        if self.limit_hit:
            raise TrialTimeout(f"{timeout:g} s of CPU time reached trial_timeout={timeout:g} s; the worker was killed")
        return func(*args)


def _cell(seed, **root):
    return {"dataset": {"name": "iris"}, "method": {"name": "kmeans", "n_clusters": 3},
            "constraints": {"name": "random_pairs", "n_constraints": 10}, "noise": {"name": "none"},
            "seed": seed, "n_trials": 2, "metrics": ["ari"], "trial_timeout": 5.0, "timeout_stops_cell": True,
            "timeout_stops_seeds": True, **root}


def _run(cell, sweep, worker, monkeypatch):
    monkeypatch.setattr(harness, "_worker", lambda: worker)
    return run_job(cell, sweep / f"seed{cell['seed']}", fits_dir=sweep / ".fits")


def test_a_timeout_at_one_base_seed_is_recorded_at_the_others_without_fitting(tmp_path, monkeypatch):
    sweep = tmp_path / "sweep"
    killed = _Worker(limit_hit=True)
    rows0 = _run(_cell(0), sweep, killed, monkeypatch)
    assert list(rows0["status"]) == ["timeout", "timeout"] and killed.calls == 1  # timeout_stops_cell within it
    markers = list((sweep / seed_timeouts.TIMEOUTS_DIR).iterdir())
    assert len(markers) == 1 and json.loads(markers[0].read_text())["seed"] == 0

    idle, loads = _Worker(), []
    setup = harness._setup
    monkeypatch.setattr(harness, "_setup", lambda cell: loads.append(cell["seed"]) or setup(cell))
    rows1 = _run(_cell(1), sweep, idle, monkeypatch)
    assert idle.calls == 0 and loads == []  # seed 1 neither fitted nor loaded its data
    assert list(rows1["status"]) == ["timeout", "timeout"]
    assert all("not fitted: base seed 0 of this cell timed out at trial 0" in e for e in rows1["error"])
    assert all("timeout_stops_seeds=true" in e for e in rows1["error"])


def test_without_the_option_or_in_another_family_each_seed_fits(tmp_path, monkeypatch):
    sweep = tmp_path / "sweep"
    _run(_cell(0), sweep, _Worker(limit_hit=True), monkeypatch)
    for other in (_cell(1, timeout_stops_seeds=False),  # the default: every seed measures its own
                  _cell(1, trial_timeout=30.0),  # another budget is another family
                  _cell(1, constraints={"name": "random_pairs", "n_constraints": 20})):  # another cell
        worker = _Worker()
        rows = _run(other, sweep, worker, monkeypatch)
        assert worker.calls == 2 and set(rows["status"]) == {"ok"}, other
        (sweep / f"seed{other['seed']}").rename(tmp_path / f"done{worker.calls}{id(other)}")


def test_the_seed_that_measured_it_runs_again_and_a_finished_rerun_takes_the_marker_back(tmp_path, monkeypatch):
    sweep = tmp_path / "sweep"
    _run(_cell(0), sweep, _Worker(limit_hit=True), monkeypatch)
    again = _Worker()
    rows = _run(_cell(0), sweep, again, monkeypatch)  # rerun_errors (the default) retries its own timeouts
    assert again.calls == 2 and set(rows["status"]) == {"ok"}
    assert not list((sweep / seed_timeouts.TIMEOUTS_DIR).iterdir())
    later = _Worker()
    assert set(_run(_cell(2), sweep, later, monkeypatch)["status"]) == {"ok"} and later.calls == 2


@pytest.mark.parametrize("bad", ["symlink", "garbage", "foreign_low", "foreign_high", "seed_text", "trial_text"])
def test_a_marker_that_is_not_a_plain_file_of_its_family_is_ignored(tmp_path, monkeypatch, bad):
    sweep = tmp_path / "sweep"
    _run(_cell(0), sweep, _Worker(limit_hit=True), monkeypatch)
    (marker,) = (sweep / seed_timeouts.TIMEOUTS_DIR).iterdir()
    content = json.loads(marker.read_text())
    if bad == "symlink":  # a results folder may come from a stranger: its links are never followed
        target = tmp_path / "elsewhere.json"
        target.write_text(json.dumps(content))
        marker.unlink()
        os.symlink(target, marker)
    elif bad == "garbage":
        marker.write_text("{not json")
    elif bad.startswith("foreign"):  # another family's content, sorting below and above this one's name
        marker.write_text(json.dumps({**content, "family": "0" * 24 if bad == "foreign_low" else "z" * 24}))
    else:
        key = bad.split("_")[0]
        marker.write_text(json.dumps({**content, key: str(content[key])}))
    worker = _Worker()
    assert set(_run(_cell(1), sweep, worker, monkeypatch)["status"]) == {"ok"} and worker.calls == 2


def test_the_option_is_checked_like_the_other_booleans():
    assert protocol.check_value("timeout_stops_seeds", "yes") is not None
    assert protocol.check_value("timeout_stops_seeds", True) is None
    with pytest.raises(ValueError, match="timeout_stops_seeds"):
        harness.validate_cell(harness.to_cell(_cell(0, timeout_stops_seeds="yes")))


def test_rows_shipped_before_the_option_keep_the_protocol_of_rows_made_without_it():
    import pandas as pd

    from ccbench.reporting import shipped

    old = pd.DataFrame({"seed": [0], "n_trials": [10], "trial_timeout": [10.0], "timeout_stops_cell": [True]})
    new = old.assign(timeout_stops_seeds=False)
    assert shipped.protocol_hashes(old).iloc[0] == shipped.protocol_hashes(new).iloc[0]  # --with still joins
    assert shipped.protocol_hashes(old).iloc[0] != shipped.protocol_hashes(new.assign(timeout_stops_seeds=True)).iloc[0]
    (values,) = shipped.protocol_values(old).values()
    assert values["timeout_stops_seeds"] is False


class _FirstCallKilled(_Worker):
    def call(self, func, *args, timeout):
        self.limit_hit = self.calls == 0
        return super().call(func, *args, timeout=timeout)


def test_a_later_trial_that_fits_does_not_take_back_another_trials_marker(tmp_path, monkeypatch):
    sweep = tmp_path / "sweep"
    rows = _run(_cell(0, timeout_stops_cell=False), sweep, _FirstCallKilled(), monkeypatch)
    assert list(rows["status"]) == ["timeout", "ok"]  # trial 1 fitted: the kill at trial 0 still stands
    (marker,) = (sweep / seed_timeouts.TIMEOUTS_DIR).iterdir()
    assert (json.loads(marker.read_text())["seed"], json.loads(marker.read_text())["trial"]) == (0, 0)


def test_each_killed_family_of_one_sweep_gets_its_marker(tmp_path, monkeypatch):
    sweep = tmp_path / "sweep"
    _run(_cell(0), sweep, _Worker(limit_hit=True), monkeypatch)
    (sweep / "seed0").rename(tmp_path / "first")
    _run(_cell(0, constraints={"name": "random_pairs", "n_constraints": 20}), sweep, _Worker(limit_hit=True),
         monkeypatch)
    assert len(list((sweep / seed_timeouts.TIMEOUTS_DIR).iterdir())) == 2


def test_a_marker_that_cannot_be_written_costs_speed_not_rows(tmp_path, monkeypatch):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / seed_timeouts.TIMEOUTS_DIR).write_text("a file where the folder would go")
    assert list(_run(_cell(0), sweep, _Worker(limit_hit=True), monkeypatch)["status"]) == ["timeout", "timeout"]
    worker = _Worker()
    assert set(_run(_cell(1), sweep, worker, monkeypatch)["status"]) == {"ok"} and worker.calls == 2


def test_the_family_is_the_cell_without_its_seed_and_with_its_budget_plugins_and_method_code():
    from ccbench.running import provenance
    from ccbench.running.config import to_cell

    code = {provenance.METHOD_HASH: "abc"}
    base = seed_timeouts.family_key(to_cell(_cell(0)), code)
    assert seed_timeouts.family_key(to_cell(_cell(7)), code) == base
    assert seed_timeouts.family_key(to_cell(_cell(0)), {provenance.METHOD_HASH: "abd"}) != base
    assert seed_timeouts.family_key(to_cell(_cell(0, trial_timeout=6.0)), code) != base
    assert seed_timeouts.family_key(to_cell(_cell(0, plugins=["a_plugin"])), code) != base
