"""tests/benchmarks.leaderboard_costs.py: the per-track costs reports/README.md quotes, checked by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/benchmarks as a package

from benchmarks.leaderboard_costs import board_costs, costs  # noqa: E402


def test_each_trial_costs_its_own_call_once_in_its_track():
    rows = pd.DataFrame({
        "config_hash": ["a", "a", "b", "c", "d", "e"],
        "method_label": ["kmeans", "kmeans", "ap[k-free]", "pck_means", "pck_means", "cop_kmeans"],
        "constraints.name": ["random_pairs", "random_pairs", "random_pairs", "fraction_pairs", "random_pairs",
                             "random_pairs"],
        "seed": [0, 0, 0, 0, 1, 0],
        "trial_cpu_time": [3600.0, None, 1800.0, 720.0, 360.0, 7200.0],
        "fit_cpu_time": [1.0, 1800.0, 1.0, 1.0, 1.0, 1.0],
        "tune_time": [None, 1800.0, None, None, None, None],
        "trial_wall_time": [7200.0, None, 1800.0, 720.0, 360.0, 7200.0],
        "fit_time": [1.0, 3600.0, 1.0, 1.0, 1.0, 1.0],
        "fit_reused": [False, False, False, False, False, True],  # e: paid in the cell that made the fit
    })
    table = costs(rows, cores=2)
    assert table.loc["main", "cpu_h"] == pytest.approx(1 + 1)  # a's second trial: fit CPU + tuning
    assert table.loc["main", "wall_h"] == pytest.approx(2 + 1.5)
    assert table.loc["main", "cells"] == 2 and table.loc["main", "trials"] == 3
    assert table.loc["k-free", "cpu_h"] == pytest.approx(0.5)
    assert table.loc["dense pairs", "cpu_h"] == pytest.approx(0.2)
    assert table.loc["second seed", "cpu_h"] == pytest.approx(0.1)
    assert table.loc["all", "cpu_h"] == pytest.approx(2.8)
    assert table.loc["all", "wall_on_2_cores_h"] == pytest.approx((3.5 + 0.5 + 0.2 + 0.1) / 2)


def test_a_larger_budget_re_run_is_its_own_track_not_the_board_s():
    # leaderboard_budget6x: the same config_hash and trial at 60 s beside the board's row at 10 s
    base = {"config_hash": "a", "method_label": "ap", "constraints.name": "random_pairs", "seed": 0,
            "fit_reused": False, "time_budget": 10.0}
    rows = pd.DataFrame([{**base, "trial": 0, "trial_cpu_time": 360.0, "trial_timeout": 10.0},
                         {**base, "trial": 0, "trial_cpu_time": 3600.0, "trial_timeout": 60.0, "time_budget": 60.0}])
    table = costs(rows)
    assert table.loc["main", "cpu_h"] == pytest.approx(0.1) and table.loc["budget re-run", "cpu_h"] == pytest.approx(1.0)


def test_a_method_choosing_k_by_cvcp_is_the_k_free_cvcp_track_not_the_main_or_the_own_rule_one():
    base = {"constraints.name": "random_pairs", "seed": 0, "fit_reused": False}
    rows = pd.DataFrame([{**base, "config_hash": "a", "method_label": "kmeans[k-free]+cvcp", "trial_cpu_time": 720.0},
                         {**base, "config_hash": "b", "method_label": "ap[k-free]", "trial_cpu_time": 360.0},
                         {**base, "config_hash": "c", "method_label": "kmeans+cvcp", "trial_cpu_time": 36.0}])
    table = costs(rows)
    assert table.loc["k-free CVCP", "cpu_h"] == pytest.approx(0.2) and table.loc["k-free", "cpu_h"] == pytest.approx(0.1)
    assert table.loc["main", "cpu_h"] == pytest.approx(0.01)


def test_the_board_tracks_and_size_classes_are_the_projections():
    """``--board``: each row in the track ``board_cost.py`` projects for its supervision, per size class by n."""
    base = {"seed": 0, "fit_reused": False, "noise.name": "none"}
    rows = pd.DataFrame([
        {**base, "config_hash": "a", "method_label": "kmeans", "constraints.name": "random_pairs", "n_samples": 150,
         "trial_cpu_time": 360.0},
        {**base, "config_hash": "b", "method_label": "kmeans", "constraints.name": "labeled_subsets",
         "n_samples": 2000, "trial_cpu_time": 720.0},
        {**base, "config_hash": "c", "method_label": "kmeans", "constraints.name": "none", "n_samples": 20000,
         "trial_cpu_time": 36.0},
        {**base, "config_hash": "d", "method_label": "kmeans", "constraints.name": "random_pairs", "n_samples": 150,
         "noise.name": "pccc_confidence", "trial_cpu_time": 72.0},
        {**base, "config_hash": "e", "method_label": "pccc", "constraints.name": "pccc_random_pairs",
         "n_samples": 1000, "trial_cpu_time": 3600.0},
        {**base, "config_hash": "f", "method_label": "ap[k-free]", "constraints.name": "random_pairs",
         "n_samples": 5001, "trial_cpu_time": 1800.0},
        {**base, "config_hash": "g", "method_label": "kmeans[k-free]+cvcp", "constraints.name": "random_pairs",
         "n_samples": 999, "trial_cpu_time": 180.0},
    ])
    table = board_costs(rows)
    assert table.loc["curves pairs", "n < 1,000"] == pytest.approx(0.1)
    assert table.loc["curves labels", "1,000-5,000"] == pytest.approx(0.2)
    assert table.loc["unconstrained", "n > 5,000"] == pytest.approx(0.01)
    assert table.loc["noise", "n < 1,000"] == pytest.approx(0.02)
    assert table.loc["PCCC scheme", "1,000-5,000"] == pytest.approx(1.0)  # n = 1,000 is the middle class
    assert table.loc["k-free", "n > 5,000"] == pytest.approx(0.5)
    assert table.loc["k-free CVCP", "n < 1,000"] == pytest.approx(0.05)
    assert table.loc["all", "all"] == pytest.approx(1.88)


def test_a_kill_followed_by_a_finished_larger_budget_is_counted_against_stopping_the_curve():
    """``--kills-along-curves``: the first *fitted* kill of a curve, then what its larger budgets did."""
    from benchmarks.leaderboard_costs import kills_along_curves

    base = {"method_label": "ssap_l", "dataset.name": "yeast", "constraints.name": "labeled_subsets", "seed": 0,
            "noise.name": "none", "fit_reused": False, "error": None}
    rows = pd.DataFrame([
        {**base, "constraints.per_class": 1.0, "status": "ok", "trial_cpu_time": 5.0},
        {**base, "constraints.per_class": 2.0, "status": "timeout", "trial_cpu_time": 20.0},
        {**base, "constraints.per_class": 5.0, "status": "ok", "trial_cpu_time": 3600.0},
        {**base, "constraints.per_class": 10.0, "status": "timeout", "trial_cpu_time": 1800.0},
        # another seed whose kill was recorded without fitting measures nothing
        {**base, "seed": 1, "constraints.per_class": 1.0, "status": "timeout", "trial_cpu_time": 0.0,
         "error": "TrialTimeout: not fitted: base seed 0 of this cell timed out at trial 0"},
        {**base, "seed": 1, "constraints.per_class": 2.0, "status": "ok", "trial_cpu_time": 1.0},
        {**base, "method_label": "kmeans", "constraints.per_class": 1.0, "status": "ok", "trial_cpu_time": 1.0},
    ])
    curves = kills_along_curves(rows)
    assert len(curves) == 1
    curve = curves.iloc[0]
    assert curve["method_label"] == "ssap_l" and curve["seed"] == "0" and curve["first_kill"] == 2.0
    assert (curve["larger"], curve["larger_finished"], curve["larger_killed"]) == (2, 1, 1)
    assert curve["larger_cpu_h"] == pytest.approx(1.5)


def test_a_seed_fitted_beside_a_kill_is_counted_once_per_cell():
    from benchmarks.leaderboard_costs import kills_across_seeds

    base = {"method_label": "scap", "dataset.name": "splice", "constraints.name": "random_pairs",
            "noise.name": "none", "constraints.per_point": 0.1, "error": None}
    rows = pd.DataFrame([
        {**base, "seed": 0, "status": "ok"},
        {**base, "seed": 1, "status": "timeout"},
        {**base, "seed": 2, "status": "timeout", "error": "TrialTimeout: not fitted: base seed 1 of this cell"},
        # a cell whose only fitted seed was killed tells nothing about the others
        {**base, "constraints.per_point": 0.2, "seed": 0, "status": "timeout"},
        {**base, "constraints.per_point": 0.2, "seed": 1, "status": "timeout",
         "error": "TrialTimeout: not fitted: base seed 0 of this cell"},
    ])
    cells = kills_across_seeds(rows)
    assert len(cells) == 1
    assert (cells.iloc[0]["budget"], cells.iloc[0]["killed"], cells.iloc[0]["finished"]) == (0.1, 1, 1)


def test_each_board_row_is_set_beside_its_experiments_projection():
    from benchmarks.leaderboard_costs import measured_vs_projected

    base = {"fit_reused": False, "noise.name": "none", "constraints.name": "random_pairs", "method_label": "kmeans"}
    rows = pd.DataFrame([
        {**base, "config_hash": "a", "dataset.name": "iris", "n_samples": 150, "trial_cpu_time": 360.0},
        {**base, "config_hash": "b", "dataset.name": "iris", "n_samples": 150, "trial_cpu_time": 360.0},
        {**base, "config_hash": "c", "dataset.name": "iris", "n_samples": 150, "trial_cpu_time": 36.0,
         "noise.name": "constraint_flip"},
        {**base, "config_hash": "d", "dataset.name": "letter", "n_samples": 20000, "trial_cpu_time": 72.0,
         "noise.name": "constraint_flip"},
        {**base, "config_hash": "e", "dataset.name": "iris", "n_samples": 150, "trial_cpu_time": 3600.0,
         "method_label": "kmeans[k-free]+cvcp"},
    ])
    projection = pd.DataFrame({"experiment": ["board", "board_noise", "board_noise_large", "board_k_free_cvcp"],
                               "dataset": ["iris", "iris", "letter", "iris"], "cpu_h": [0.4, 0.01, 0.02, 2.0],
                               "cells": [2, 1, 3, 1]})
    table = measured_vs_projected(rows, projection)
    assert table.loc[("board", "iris"), "measured_h"] == pytest.approx(0.2) and table.loc[("board", "iris"), "complete"]
    assert table.loc[("board_noise", "iris"), "measured_h"] == pytest.approx(0.01)
    assert table.loc[("board_noise_large", "letter"), "measured_h"] == pytest.approx(0.02)
    assert not table.loc[("board_noise_large", "letter"), "complete"]  # 1 of its 3 cells
    assert table.loc[("board_k_free_cvcp", "iris"), "projected_h"] == 2.0


def test_the_complete_sets_are_summed_per_machine_that_made_all_their_rows():
    from benchmarks.leaderboard_costs import measured_vs_projected, per_machine

    base = {"fit_reused": False, "noise.name": "none", "constraints.name": "random_pairs", "method_label": "kmeans",
            "n_samples": 150}
    rows = pd.DataFrame([
        {**base, "config_hash": "a", "dataset.name": "iris", "trial_cpu_time": 3600.0, "env.cpu": "AMD EPYC"},
        {**base, "config_hash": "b", "dataset.name": "iris", "trial_cpu_time": 3600.0, "env.cpu": "AMD EPYC"},
        {**base, "config_hash": "c", "dataset.name": "wine", "trial_cpu_time": 7200.0, "env.cpu": "Intel Xeon"},
        {**base, "config_hash": "d", "dataset.name": "glass", "trial_cpu_time": 3600.0, "env.cpu": "AMD EPYC"},
        {**base, "config_hash": "e", "dataset.name": "glass", "trial_cpu_time": 3600.0, "env.cpu": "Intel Xeon"},
        {**base, "config_hash": "f", "dataset.name": "zoo", "trial_cpu_time": 3600.0, "env.cpu": "Intel Xeon"},
    ])
    projection = pd.DataFrame({"experiment": "board", "dataset": ["iris", "wine", "glass", "zoo"],
                               "cpu_h": [1.0, 1.0, 2.0, 1.0], "cells": [2, 1, 2, 2]})
    table = measured_vs_projected(rows, projection)
    assert table.loc[("board", "glass"), "machine"] == "mixed" and table.loc[("board", "iris"), "machine"] == "AMD EPYC"
    machines = per_machine(table)
    assert machines.loc["AMD EPYC", "ratio"] == pytest.approx(2.0)  # iris: 2 h measured, 1 projected
    assert machines.loc["Intel Xeon", "ratio"] == pytest.approx(2.0) and machines.loc["Intel Xeon", "sets"] == 1
    assert machines.loc["mixed", "measured_h"] == pytest.approx(2.0)  # zoo is not complete: 1 of its 2 cells


def test_a_projection_that_cannot_be_read_is_named_before_the_rows_are_read(tmp_path, capsys):
    from benchmarks.leaderboard_costs import main

    bad = tmp_path / "projection.csv"
    bad.write_text("experiment,dataset\nboard,iris\n")
    for argv, said in ((["nowhere", "--projection", str(bad)], "add --board"),
                       (["nowhere", "--board", "--projection", str(tmp_path / "none.csv")], "No such file"),
                       (["nowhere", "--board", "--projection", str(bad)], "no column ['cells', 'cpu_h']")):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2 and said in capsys.readouterr().err
