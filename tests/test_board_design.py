"""The reference board's design as data (issue 51): its experiments compose and pass the check, its curves have
at least 5 budgets per kind, its per-size-class budget follows n, and the cost projection's rules
(tests/benchmarks/board_cost.py) give hand-computed totals. The full check of every job of every board
experiment is test_validate.py::test_every_committed_experiment_passes_the_check (slow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from benchmarks import board_cost

CONF = Path(__file__).resolve().parents[1] / "conf"
BOARD = ("board", "board_noise", "board_noise_large", "board_pccc", "board_k_free", "board_k_free_cvcp")


def _params(experiment: str) -> dict:
    """The experiment's own sweeper params, with those it inherits from board.yaml."""
    own = OmegaConf.load(CONF / "experiment" / f"{experiment}.yaml").hydra.sweeper.params
    base = OmegaConf.load(CONF / "experiment" / "board.yaml").hydra.sweeper.params
    return {k: str(v).split(",") for k, v in {**base, **own}.items()}


def _supervision_file(name: str) -> tuple[dict, dict]:
    """(group -> option chosen, the file's keys) of a conf/supervision file, a default naming another supervision
    file (``pairs_mid_cvcp``: ``- pairs_mid``, then ``tune: cvcp``) merged under it as Hydra composes it."""
    conf = OmegaConf.load(CONF / "supervision" / f"{name}.yaml")
    chosen, keys = {}, OmegaConf.create({})
    for d in conf.get("defaults", []):
        if isinstance(d, str):
            parent_chosen, parent_keys = _supervision_file(d)
            chosen.update(parent_chosen)
            keys = OmegaConf.merge(keys, parent_keys)
        else:
            chosen.update({k.split("/")[-1]: v for k, v in d.items()})
    own = OmegaConf.create({k: v for k, v in conf.items() if k != "defaults"})
    return chosen, OmegaConf.merge(keys, own)


def _supervision(name: str) -> dict:
    """(scheme, noise, the scheme's and noise's options) of a conf/supervision file, from its defaults and keys."""
    chosen, conf = _supervision_file(name)
    conf = OmegaConf.to_container(conf)
    return {"scheme": chosen["constraints"], "noise": chosen["noise"], **conf.get("constraints", {}),
            **{f"noise_{k}": v for k, v in conf.get("noise", {}).items()}, "tune": conf.get("tune", "none")}


@pytest.fixture(scope="module")
def compose_board():
    from hydra import compose, initialize_config_module

    from ccbench.running import app  # noqa: F401 - registers the schema and the sweeper
    from ccbench.running.config import to_cell

    with initialize_config_module("ccbench_conf", version_base="1.3"):
        yield lambda *overrides: to_cell(compose("config", overrides=list(overrides)))


@pytest.mark.parametrize("experiment", BOARD)
def test_each_board_experiment_composes_and_every_supervision_passes_the_check(experiment, compose_board):
    """One Hydra compose per experiment (its last method and supervision); each supervision option's constraints
    and noise groups are then that option's conf/constraints and conf/noise files with its own keys on top, as
    Hydra merges them (``# @package _global_`` files overriding the two groups), checked key by key."""
    import copy

    from ccbench.running import validate

    params = _params(experiment)
    base = compose_board(f"experiment={experiment}", "dataset=keel_iris", f"method={params['method'][-1]}",
                         f"supervision={params['supervision'][-1]}")
    assert base["n_trials"] == 1 and base["evaluate_on"] == "both" and base["timeout_stops_cell"]
    # one killed trial per cell across its base seeds; a resume keeps measured kills (rerun_errors=false)
    assert base["timeout_stops_seeds"] and not base["rerun_errors"]
    cells = []
    for name in params["supervision"]:
        chosen, conf = _supervision_file(name)
        cell = copy.deepcopy(base)
        for group in ("constraints", "noise"):
            merged = OmegaConf.merge(OmegaConf.load(CONF / group / f"{chosen[group]}.yaml"), conf.get(group, {}))
            cell[group] = OmegaConf.to_container(merged)
        cells.append(cell)
    assert validate.check_cells(cells) == []


@pytest.mark.parametrize("dataset, budget", [("keel_iris", 10), ("yeast", 20), ("keel_letter", 30)])
def test_the_budget_is_the_data_sets_size_class(dataset, budget, compose_board):
    cell = compose_board("experiment=board", f"dataset={dataset}")
    assert cell["trial_timeout"] == budget
    # issue 50's rule: refused only far beyond the budget, at TIME_REFUSAL_FACTOR (3) x trial_timeout
    from ccbench.running.protocol import TIME_REFUSAL_FACTOR

    assert cell["time_budget"] == cell["trial_timeout"] and TIME_REFUSAL_FACTOR >= 3


def test_the_size_class_table_follows_the_registrys_n():
    from ccbench import registry
    from ccbench.datasets import suites

    table = OmegaConf.load(CONF / "experiment" / "board.yaml").paper.board.size_class
    named = {"n < 1,000": "small", "1,000-5,000": "medium", "n > 5,000": "large"}
    for name in suites()["board_all"]:
        expected = named[board_cost.size_class(registry.get_dataset_spec(name).n_samples)]
        assert table.get(name, "small") == expected, name
    assert set(table) <= set(suites()["board_all"])


def test_every_board_data_set_is_in_every_track():
    from ccbench.datasets import suites

    board = set(suites()["board_all"])
    assert set(_params("board")["dataset"]) == {"board_all"} and set(_params("board_k_free")["dataset"]) == {"board_all"}
    assert set(_params("board_k_free_cvcp")["dataset"]) == set(_params("board_pccc")["dataset"])  # the n <= 5,000 sets
    noise = set(_params("board_noise")["dataset"]) | set(_params("board_noise_large")["dataset"])
    assert noise == board and not set(_params("board_noise")["dataset"]) & set(_params("board_noise_large")["dataset"])
    assert set(_params("board_pccc")["dataset"]) <= board


def test_the_supervision_files_give_five_budgets_per_kind_and_three_noise_levels():
    cells = [_supervision(s) for e in BOARD for s in _params(e)["supervision"]]
    clean = [c for c in cells if c["noise"] == "none"]
    assert len({c["per_point"] for c in clean if c["scheme"] == "random_pairs"}) >= 5
    assert len({c["per_class"] for c in clean if c["scheme"] == "labeled_subsets"}) >= 5
    assert {c["fraction"] for c in clean if c["scheme"] == "pccc_random_pairs"} == {0.05, 0.1, 0.15, 0.2}
    assert {c["noise_rate"] for c in cells if c["noise"] == "constraint_flip"} == {0.05, 0.1, 0.2}
    assert {c["noise_rate"] for c in cells if c["noise"] == "label_noise"} == {0.05, 0.1, 0.2}
    assert {c["noise_low"] for c in cells if c["noise"] == "pccc_confidence"} == {0.6, 0.8}


def test_supervision_pairs_on_iris():
    # iris: n = 150, k = 3; round(0.1 n) = 15 pairs; PCCC's iris set at f = 5 %: ceil(7.5) = 8 points, 28 pairs;
    # 5 labels per class: 15 points, C(15, 2) = 105 pairs (the shipped rows: 30 must-links + 75 cannot-links)
    assert board_cost.supervision_pairs({"name": "random_pairs", "per_point": 0.1}, 150, 3) == 15
    assert board_cost.supervision_pairs({"name": "pccc_random_pairs", "fraction": 0.05}, 150, 3) == 28
    assert board_cost.supervision_pairs({"name": "labeled_subsets", "per_class": 5}, 150, 3) == 105
    assert board_cost.supervision_pairs({"name": "labeled_subsets", "per_class": 20}, 300, 50) == 300 * 299 // 2
    assert board_cost.supervision_pairs({"name": "none"}, 150, 3) == 0


def test_cell_costs_on_a_hand_sized_grid():
    nan = np.nan
    rows = [  # method, dataset, seed, predicted s per trial, refused, shared fit; T = 3 trials, B = 10 s
        ("A", "d1", 0, 2.0, False, False),   # fits: 3 x 2 = 6
        ("A", "d1", 0, 50.0, False, False),  # over the budget: one killed trial, 10
        ("A", "d1", 0, 50.0, True, False),   # refused: 0
        ("U", "d1", 0, 1.0, False, True),    # shared fit, first cell of its group: 3
        ("U", "d1", 0, 1.0, False, True),    # the same fit reused: 0
        ("U", "d1", 1, 1.0, False, True),    # another seed, another fit: 3
        ("P", "d1", 0, nan, False, False),   # no model: T x B = 30, an upper bound
        ("V", "d1", 0, 20.0, False, True),   # a shared fit over the budget is not stored: killed in each cell, 10
        ("V", "d1", 0, 20.0, False, True),   # 10
        ("W", "d1", 0, 2.0, True, True),     # refused, though shared: 0, and the group's fit is paid ...
        ("W", "d1", 0, 2.0, False, True),    # ... by its first cell that runs: 6
    ]
    cells = pd.DataFrame(rows, columns=["method", "dataset", "seed", "predicted", "refused", "shared"]).assign(
        trials=3, budget=10.0)
    costs = board_cost.cell_costs(cells)
    assert costs.tolist() == [6, 10, 0, 3, 0, 3, 30, 10, 10, 0, 6]
    assert costs.sum() == 78


def test_under_timeout_stops_seeds_a_predicted_timeout_is_charged_at_its_first_seed_only():
    rows = [  # method, dataset, supervision, seed, predicted s per trial, budget; T = 2
        ("A", "d1", "pairs", 0, 50.0, 10.0),  # killed: 10
        ("A", "d1", "pairs", 1, 50.0, 10.0),  # the same family at another seed: 0
        ("A", "d1", "pairs", 2, 50.0, 10.0),  # 0
        ("A", "d1", "labels", 1, 50.0, 10.0),  # another supervision, its first seed: 10
        ("A", "d2", "pairs", 1, 50.0, 10.0),  # another data set: 10
        ("A", "d1", "pairs", 1, 50.0, 20.0),  # another budget is another family: 20
        ("A", "d1", "pairs", 1, 2.0, 10.0),   # fits: 2 x 2 at every seed
        ("A", "d1", "pairs", 2, 2.0, 10.0),   # 4
    ]
    cells = pd.DataFrame(rows, columns=["method", "dataset", "supervision", "seed", "predicted", "budget"]).assign(
        trials=2, refused=False, shared=False)
    assert board_cost.cell_costs(cells.assign(stops_seeds=True)).tolist() == [10, 0, 0, 10, 10, 20, 4, 4]
    assert board_cost.cell_costs(cells.assign(stops_seeds=False)).tolist() == [10, 10, 10, 10, 10, 20, 4, 4]


def test_a_speedup_is_method_equals_a_positive_factor():
    import argparse

    assert board_cost._speedup("srcp=3") == ("srcp", 3.0)
    for bad in ("srcp", "srcp=0", "srcp=-2", "=2", "srcp=fast"):
        with pytest.raises(argparse.ArgumentTypeError, match="METHOD=FACTOR"):
            board_cost._speedup(bad)


@pytest.mark.parametrize("method", ["kmeans", "pccc", "rn_sdp"])
def test_the_k_free_cvcp_track_runs_every_method_that_needs_k_without_it(method, compose_board):
    """The board's k-free board has both halves: its CVCP half gives no k (method.n_clusters=free) and tunes it
    (tune=cvcp, over protocol.k_free_range), and the check every job passes accepts it."""
    from ccbench import registry
    from ccbench.running import validate

    params = _params("board_k_free_cvcp")
    assert params["method.n_clusters"] == ["free"] and {_supervision(s)["tune"] for s in params["supervision"]} == {"cvcp"}
    needs_k = {m for m in _params("board")["method"] if registry.get_method_spec(
        OmegaConf.load(CONF / "method" / f"{m}.yaml").get("name", m)).needs_n_clusters}
    assert set(params["method"]) == needs_k  # every method that needs k, and only those (the rest: board_k_free)
    cell = compose_board("experiment=board_k_free_cvcp", "dataset=keel_iris", f"method={method}",
                         "supervision=pairs_mid_cvcp", "method.n_clusters=free")
    assert cell["tune"] == "cvcp" and cell["method"]["n_clusters"] == "free"
    assert validate.check_cells([cell]) == []


def test_a_k_free_cvcp_cell_is_priced_by_its_fits_over_the_k_range():
    """board_cost priced every cell as one fit given k; a k-free CVCP trial is 1 + 3 folds x |2..sqrt(n)| fits,
    each predicted by the method's k_free part (as the harness charges and refuses it)."""
    from ccbench import registry
    from ccbench.running import protocol
    from ccbench.specs import TimeModel

    registry.load_plugins([])
    model = TimeModel(n=1000, seconds=1.0, exponent=1.0, k_free=TimeModel(n=1000, seconds=0.1, exponent=1.0))
    base = {"experiment": "board", "seed": 0, "dataset": "d", "n": 400, "d": 4, "classes": 3, "supervision": "pairs_mid",
            "constraints": {"name": "random_pairs", "per_point": 0.1}, "noise": "none", "method": "kmeans",
            "method_name": "kmeans", "method_params": {}, "trials": 1, "stops_seeds": True, "budget": 1000.0,
            "time_budget": 1000.0, "tune_folds": 3}
    grid = pd.DataFrame([{**base, "n_clusters": "true_k", "tune": "none"},
                         {**base, "experiment": "board_k_free_cvcp", "supervision": "pairs_mid_cvcp",
                          "n_clusters": "free", "tune": "cvcp"}])
    g = board_cost.project(grid, {"kmeans": model}, available_bytes=2**34)
    fits = 1 + 3 * len(protocol.k_free_range(400))
    assert g["fits"].tolist() == [1, fits] and fits == 1 + 3 * 19
    assert g["predicted"].tolist() == pytest.approx([0.4, 0.1 * 0.4 * fits])
    assert g["track"].tolist() == ["curves pairs", "k-free CVCP"] and g["cpu_s"].iloc[1] == pytest.approx(0.04 * fits)
