"""Issue 38 (the leaderboard made right): what the hurt share joins on, completed cells in the gains,
main methods against tuned variants, data sets as Friedman blocks, coverage, per-cell means."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ccbench.reporting import _format as rfmt
from ccbench.reporting import leaderboard as lb
from ccbench.reporting.leaderboard import _frame as lb_frame

N = "constraints.n_constraints"
PER = "constraints.per_class"


def _labels_sweep(n_trials: int = 6, seed: int = 0) -> pd.DataFrame:
    """Labeled rows carry ``constraints.small_classes=all`` (the leaderboard's label scheme); the
    unconstrained rows (``constraints=none``) carry no scheme option at all."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in ("iris", "wine"):
        for m in ("pck_means", "kmeans", "cop_kmeans"):
            for t in range(n_trials):
                rows.append({"dataset.name": d, "dataset.preprocess": "standardize", "method.name": m,
                             "constraints.name": "none", "noise.name": "none", "trial": t, "trial_seed": t,
                             "status": "ok", "ari": rng.uniform(0.3, 0.6)})
                rows.append({"dataset.name": d, "dataset.preprocess": "standardize", "method.name": m,
                             "constraints.name": "labeled_subsets", PER: 5, "constraints.small_classes": "all",
                             "noise.name": "none", "trial": t, "trial_seed": 1000 + t, "status": "ok",
                             "ari": rng.uniform(0.3, 0.7)})
    data = pd.DataFrame(rows)
    data["method_label"] = rfmt.method_labels(data)
    return data


def test_hurt_share_joins_labels_with_the_unconstrained_run_despite_scheme_options(tmp_path):
    data = _labels_sweep()
    frame = lb.long_frame(data, "ari")
    hurt = lb.hurt_share(frame, "ari").set_index("method")
    assert set(hurt.index) == {"pck_means", "kmeans", "cop_kmeans"}
    ok = data[data["status"] == "ok"]
    for m in hurt.index:
        own = ok[ok["method.name"] == m]
        ref = own[own["constraints.name"] == "none"].set_index(["dataset.name", "trial"])["ari"]
        sup = own[own["constraints.name"] != "none"]
        worse = sum(v < ref[(d, t)] for d, t, v in zip(sup["dataset.name"], sup["trial"], sup["ari"]))
        assert hurt.loc[m, "n_trials"] == len(sup) and hurt.loc[m, "n_worse"] == worse
    text = lb.write_leaderboard(data, tmp_path, metric="ari")["labels_md"].read_text()
    assert "No method has an unconstrained run" not in text


def test_hurt_share_still_separates_data_options_and_evaluate_on():
    data = _labels_sweep()
    other = data.assign(**{"dataset.preprocess": "none", "ari": data["ari"] + 0.5})
    frame = lb.long_frame(pd.concat([data, other], ignore_index=True), "ari")
    hurt = lb.hurt_share(frame, "ari").set_index("method")
    alone = lb.hurt_share(lb.long_frame(data, "ari"), "ari").set_index("method")
    # each preprocessing is joined with its own unconstrained run: twice the trials, the same changes
    assert (hurt["n_trials"] == 2 * alone["n_trials"].reindex(hurt.index)).all()
    assert hurt["mean_change"].to_numpy() == pytest.approx(alone["mean_change"].reindex(hurt.index).to_numpy())


def _rows(values: dict, statuses: dict | None = None, budget0: dict | None = None) -> pd.DataFrame:
    """``values[(dataset, budget, method)]`` = per-trial ari; ``statuses[(dataset, budget, method)]`` = a
    status per trial (list) or one for all."""
    statuses = statuses or {}
    rows = []
    cells = list(values.items()) + [((d, 0, m), v) for (d, m), v in (budget0 or {}).items()]
    for (d, b, m), vals in cells:
        st = statuses.get((d, b, m), "ok")
        st = st if isinstance(st, list) else [st] * len(vals)
        for t, (v, s) in enumerate(zip(vals, st)):
            rows.append({"dataset.name": d, "method.name": m.split("+")[0], "tune": m.split("+")[1] if "+" in m else "none",
                         "constraints.name": "random_pairs", N: b, "noise.name": "none", "trial": t,
                         "trial_seed": 100 * b + t, "status": s, "ari": v if s == "ok" else np.nan,
                         "fit_time": 0.01 * (1 + t)})
    data = pd.DataFrame(rows)
    data["method_label"] = rfmt.method_labels(data)
    return data


def test_gains_use_completed_cells_only(tmp_path):
    up = [0.0, 0.01, 0.02, 0.03, 0.04, 0.05]
    values = {("iris", 20, "pck_means"): [0.9 + u for u in up], ("iris", 20, "kmeans"): [0.5 + u for u in up],
              ("iris", 20, "cop_kmeans"): [0.95 + u for u in up]}
    # cop_kmeans: one ok trial of six (the easy draw that survived the time limit)
    data = _rows(values, statuses={("iris", 20, "cop_kmeans"): ["ok"] + ["timeout"] * 5})
    g = lb.gains(lb.long_frame(data, "ari"), "ari")
    assert g["method"].tolist() == ["pck_means"]
    text = lb.write_leaderboard(data, tmp_path, metric="ari")["pairs_md"].read_text()
    assert "Completed cells only, as the ranks" in text


def test_rn_sdp_is_left_out_of_the_hurt_share_with_a_reason_and_cobs_is_in(tmp_path):
    # issue 50, item 9: COBS given k selects by silhouette from a pool restricted to k without constraints
    values = {("iris", 20, m): [0.9, 0.8, 0.7] for m in ("pck_means", "cobs", "rn_sdp", "kmeans")}
    budget0 = {("iris", m): [0.5, 0.5, 0.5] for m in ("pck_means", "cobs", "rn_sdp", "kmeans")}
    data = _rows(values, budget0=budget0)
    hurt = lb.hurt_share(lb.long_frame(data, "ari"), "ari")
    assert set(hurt["method"]) == {"pck_means", "kmeans", "cobs"}
    text = lb.write_leaderboard(data, tmp_path, metric="ari")["pairs_md"].read_text()
    assert "`rn_sdp`: with no constraints RN-SDP" in text and "`cobs`: with no constraints COBS" not in text


def _tuned_sweep(n_trials: int = 6, seed: int = 0) -> pd.DataFrame:
    """4 data sets x 2 budgets; pck_means, cop_kmeans, kmeans, ap everywhere; pck_means+cvcp on budget 20
    only (a tuned variant run on some cells), 0.1 ahead of its default on every trial."""
    rng = np.random.default_rng(seed)
    values = {}
    for d in ("iris", "wine", "glass", "ecoli"):
        for b in (10, 20):
            base = rng.uniform(0.3, 0.6, n_trials)
            for shift, m in ((0.1, "pck_means"), (0.04, "cop_kmeans"), (0.0, "kmeans"), (-0.2, "ap")):
                values[(d, b, m)] = list(base + shift + rng.normal(0, 0.02, n_trials))
            if b == 20:
                values[(d, b, "pck_means+cvcp")] = [v + 0.1 + 0.01 * i for i, v in enumerate(values[(d, b, "pck_means")])]
    return _rows(values)


def test_ranks_hold_one_fixed_set_of_methods_and_tuned_variants_meet_their_defaults(tmp_path):
    data = _tuned_sweep()
    from ccbench.running import protocol
    from ccbench import registry

    spec_defaults = protocol.estimator_defaults(registry.get_method_spec("pck_means"))
    grid_key = next(iter(registry.get_method_spec("pck_means").grid))
    tuned = data["tune"] == "cvcp"
    # the tuner kept the default on the first half of the tuned trials, chose another value on the rest
    other = {grid_key: "__another__"}
    data.loc[tuned, "tuned_params"] = [json.dumps({grid_key: spec_defaults[grid_key]}) if t < 3 else json.dumps(other)
                                       for t in data.loc[tuned, "trial"]]
    paths = lb.write_leaderboard(data, tmp_path, metric="ari")
    tables = pd.read_parquet(paths["parquet"])
    ranks = tables[(tables["table"] == "ranks")].set_index("method")
    assert set(ranks.index) == {"pck_means", "cop_kmeans", "kmeans", "ap"}  # no tuned variant in the ranks
    assert (ranks["cells"] == 8).all()  # every ranked method on every cell: one fixed set of 4 entries
    versus = tables[tables["table"] == "tuned_vs_default"].set_index("variant")
    row = versus.loc["pck_means+cvcp"]
    assert row["default"] == "pck_means" and row["cells"] == 4
    assert row["mean_diff"] == pytest.approx(0.1 + 0.01 * np.mean(range(6)))
    assert row["ci_low"] <= row["mean_diff"] <= row["ci_high"]
    assert (row["wins"], row["ties"], row["losses"]) == (4, 0, 0)  # significant and above the margin in each cell
    assert row["kept_default"] == pytest.approx(0.5)
    text = paths["pairs_md"].read_text()
    assert "1b. Tuned variants against their defaults" in text


def test_the_cd_diagram_uses_data_sets_as_blocks(tmp_path):
    data = _tuned_sweep()
    frame = lb.long_frame(data, "ari")
    cells = lb_frame._cells(frame)
    main = lb_frame.main_methods(cells)
    means = lb.cell_means(cells)[main]
    blocks = lb.dataset_blocks(means, "ari")
    assert list(blocks.index) == ["ecoli", "glass", "iris", "wine"]  # one block per data set, not per cell
    by_hand = means.rank(axis=1, ascending=False).groupby(level="dataset").mean()
    assert blocks.to_numpy() == pytest.approx(-by_hand.to_numpy())
    text = lb.write_leaderboard(data, tmp_path, metric="ari")["pairs_md"].read_text()
    assert "over 4 data sets and 4 methods" in text and "data sets as Friedman blocks" in text
    assert "Secondary, per-cell view (cells as blocks" in text and "over 8 cells" in text


def test_cell_means_recompute_the_page_ranks(tmp_path):
    data = _tuned_sweep()
    data.loc[(data["dataset.name"] == "glass") & (data["method.name"] == "ap") & (data["trial"] == 2),
             ["status", "ari"]] = ["timeout", np.nan]
    paths = lb.write_leaderboard(data, tmp_path, metric="ari")
    tables = pd.read_parquet(paths["parquet"])
    cm = tables[(tables["table"] == "cell_means") & (tables["kind"] == "pairs")]
    assert {"dataset", "setting", "budget", "noise", "method", "mean", "n_trials", "n_ok", "status"} <= set(cm.columns)
    glass_ap = cm[(cm["dataset"] == "glass") & (cm["method"] == "ap")]
    assert set(glass_ap["status"]) == {"timeout"} and glass_ap["mean"].isna().all() and (glass_ap["n_ok"] == 5).all()
    main = cm[cm["main"].astype(bool)]
    wide = main.pivot_table(index=["dataset", "setting", "budget", "noise"], columns="method", values="mean",
                            aggfunc="first", dropna=False)
    worst = wide.min().min() - 10  # a failure ranks last
    recomputed = wide.fillna(worst).rank(axis=1, ascending=False).mean()
    ranks = tables[tables["table"] == "ranks"].set_index("method")["rank_failed_last"]
    assert recomputed.reindex(ranks.index).to_numpy() == pytest.approx(ranks.to_numpy())


def test_the_quality_time_scatter_shows_coverage_and_leaves_low_coverage_hollow():
    from ccbench.reporting.leaderboard import figures

    cost = pd.DataFrame({"quality": [0.5, 0.6], "fit_time_median_s": [0.1, 1.0], "coverage": [1.0, 0.4]},
                        index=pd.Index(["kmeans", "nnc"], name="method"))
    fig = figures.quality_time_scatter(cost, "ari", {"kmeans": "C0", "nnc": "C1"})
    ax = fig.axes[0]
    faces = [c.get_facecolors() for c in ax.collections]
    assert faces[0][0][3] > 0 and (len(faces[1]) == 0 or faces[1][0][3] == 0)  # nnc (40 %) is hollow
    texts = [t.get_text() for t in ax.texts]
    assert "nnc (40%)" in texts and "kmeans (100%)" in texts
    assert f"hollow below {figures.COVERAGE_MIN:.0%}" in ax.get_title()


def test_coverage_is_over_the_union_of_every_grid_not_the_last_command(tmp_path):
    """Two commands into one experiment (a first on iris, a later resume of wine with its own file): the
    coverage counts the union of both grids, and an unfinished iris job of the first command is missing."""
    import yaml

    def conf(datasets):
        return {"hydra": {"sweeper": {"params": {"dataset": datasets, "method": "kmeans,ap"}},
                          "overrides": {"task": ["n_trials=2"], "hydra": []}}}

    (tmp_path / "multirun.yaml").write_text(yaml.safe_dump(conf("wine")))
    (tmp_path / "first").mkdir()
    (tmp_path / "first" / "multirun.yaml").write_text(yaml.safe_dump(conf("iris")))
    rows = pd.DataFrame({"config_hash": ["w1", "w1", "w2", "w2", "i1", "i1", "i2"], "trial": [0, 1, 0, 1, 0, 1, 0],
                         "n_trials": 2, "dataset.name": ["wine"] * 4 + ["iris"] * 3})
    text = lb.sweep_coverage([tmp_path], rows)
    assert "3 of the 4 jobs of the experiment's grid" in text and "incomplete" in text
    assert "partly done: iris (1 of 2 jobs)" in text


def test_the_page_states_the_cobs_tie_rule_when_the_rows_carry_it(tmp_path):
    values = {("iris", 20, m): [0.9, 0.8] for m in ("pck_means", "cobs", "kmeans")}
    data = _rows(values)
    rule = "most constraints satisfied; ties: highest silhouette, then pool order"
    data["pool_tie_rule"] = np.where(data["method.name"] == "cobs", rule, None)
    text = lb.write_leaderboard(data, tmp_path, metric="ari")["pairs_md"].read_text()
    assert f"`cobs` tie rule (from its rows' `pool_tie_rule`): {rule}" in text
    plain = lb.write_leaderboard(_rows(values), tmp_path / "plain", metric="ari")["pairs_md"].read_text()
    assert "tie rule" not in plain


def test_the_per_data_set_baseline_is_chosen_on_completed_cells_only():
    up = [0.0, 0.01, 0.02, 0.03, 0.04, 0.05]
    values = {("iris", 20, "pck_means"): [0.9 + u for u in up], ("iris", 20, "kmeans"): [0.5 + u for u in up],
              ("iris", 20, "ap"): [0.95 + u for u in up]}
    # ap: one ok trial of six, the best value of all; kmeans completed its cell
    data = _rows(values, statuses={("iris", 20, "ap"): ["ok"] + ["timeout"] * 5})
    frame = lb.long_frame(data, "ari")
    assert lb.best_baseline(frame, "ari").to_dict() == {"iris": "kmeans"}
    assert set(lb.gains(frame, "ari")["baseline"]) == {"kmeans"}


def test_noise_settings_that_differ_in_any_option_are_two_cells():
    """PCCC's confidence noise at two lower bounds (``noise.low``), no ``noise.rate``: two cells, each named by
    its option; a constraint flip keeps its ``name=rate`` label."""
    data = pd.DataFrame({"noise.name": ["pccc_confidence", "pccc_confidence", "constraint_flip", "none"],
                         "noise.rate": [np.nan, np.nan, 0.1, np.nan], "noise.low": [0.8, 0.6, np.nan, np.nan]})
    assert list(lb_frame._noise_text(data)) == ["pccc_confidence(low=0.8)", "pccc_confidence(low=0.6)",
                                                 "constraint_flip=0.1", "none"]
