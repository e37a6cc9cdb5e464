"""Issue 38, item 7: the dense pair scheme (all pairs among a random fraction of the points; not the
scheme of PCCC's files, issue 50 item 11), its configs, and the leaderboard's dense track beside the
sparse one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from ccbench import registry
from ccbench.constraints import random_pairs

ROOT = Path(__file__).resolve().parents[1]


def _fraction_pairs():
    return registry.get_scheme_spec("fraction_pairs").func


def test_fraction_pairs_draws_every_pair_among_a_fraction_of_the_points():
    y = np.repeat([0, 1, 2], 50)  # iris' shape
    cons = _fraction_pairs()(y, fraction=0.1, rng=np.random.default_rng(0))
    pairs = np.vstack([cons.must_link, cons.cannot_link])
    points = np.unique(pairs)
    assert len(points) == 15 and len(pairs) == 15 * 14 // 2 == 105
    assert {tuple(p) for p in pairs} == {(a, b) for a in points for b in points if a < b}
    assert (y[cons.must_link[:, 0]] == y[cons.must_link[:, 1]]).all()
    assert (y[cons.cannot_link[:, 0]] != y[cons.cannot_link[:, 1]]).all()
    # 7x the sparse middle budget (round(0.1 n) random pairs) on iris, 159x on splice's n
    assert len(pairs) == 7 * len(np.vstack(random_pairs(y, per_point=0.1, rng=np.random.default_rng(0)).must_link.tolist()
                                           + random_pairs(y, per_point=0.1, rng=np.random.default_rng(0)).cannot_link.tolist()))
    splice = _fraction_pairs()(np.arange(3190) % 3, fraction=0.1, rng=np.random.default_rng(0))
    assert len(splice) == 319 * 318 // 2 == 50721


def test_fraction_pairs_is_seeded_by_the_generator_and_checks_its_fraction():
    y = np.arange(40) % 4
    a = _fraction_pairs()(y, fraction=0.2, rng=np.random.default_rng(3))
    b = _fraction_pairs()(y, fraction=0.2, rng=np.random.default_rng(3))
    assert a == b
    assert len(_fraction_pairs()(y, fraction=0.0, rng=np.random.default_rng(0))) == 0
    with pytest.raises(ValueError, match="fraction"):
        _fraction_pairs()(y, fraction=1.5, rng=np.random.default_rng(0))


def test_configs_and_the_leaderboard_dense_track():
    conf = yaml.safe_load((ROOT / "conf/constraints/fraction_pairs.yaml").read_text())
    assert conf["name"] == "fraction_pairs"
    for level, f in (("low", 0.05), ("mid", 0.1), ("high", 0.2)):
        bundle = yaml.safe_load((ROOT / f"conf/supervision/pairs_dense_{level}.yaml").read_text())
        assert {"override /constraints": "fraction_pairs"} in bundle["defaults"]
        assert bundle["constraints"]["fraction"] == f
    exp = yaml.safe_load((ROOT / "conf/experiment/leaderboard.yaml").read_text())
    swept = exp["hydra"]["sweeper"]["params"]["supervision"].split(",")
    assert {"pairs_low", "pairs_mid", "pairs_high", "pairs_dense_low", "pairs_dense_mid",
            "pairs_dense_high"} <= set(swept)
    doc = (ROOT / "docs/leaderboard.md").read_text()
    assert "fraction_pairs" in doc and "sparse" in doc and "dense" in doc


def test_composed_leaderboard_cell_draws_dense_pairs(tmp_path):
    from hydra import compose, initialize_config_module

    from ccbench.running.harness import run_job

    with initialize_config_module("ccbench_conf", version_base="1.3"):
        cfg = compose("config", overrides=["supervision=pairs_dense_mid", "dataset=iris", "method=kmeans",
                                           "n_trials=1"])
    rows = run_job(cfg, out_dir=tmp_path)
    assert rows["constraints.name"].tolist() == ["fraction_pairs"]
    assert int(rows["n_must_link"].iloc[0] + rows["n_cannot_link"].iloc[0]) == 105


def test_leaderboard_frame_puts_the_dense_scheme_on_its_own_track():
    from ccbench.reporting import _format as rfmt
    from ccbench.reporting.leaderboard import _frame

    rows = []
    for scheme, key, budget in (("random_pairs", "constraints.per_point", 0.1),
                                ("fraction_pairs", "constraints.fraction", 0.1),
                                ("pccc_random_pairs", "constraints.fraction", 0.1)):
        for t in range(2):
            rows.append({"dataset.name": "iris", "method.name": "kmeans", "constraints.name": scheme,
                         key: budget, "noise.name": "none", "trial": t, "status": "ok", "ari": 0.5})
    data = pd.DataFrame(rows)
    data["method_label"] = rfmt.method_labels(data)
    frame = _frame.long_frame(data, "ari")
    # PCCC's scheme (the reference board's track) is a kind of its own, not a row nobody ranks
    assert sorted(frame["kind"]) == ["dense_pairs", "dense_pairs", "pairs", "pairs", "pccc_pairs", "pccc_pairs"]
    assert (frame["budget"] == 0.1).all()
