"""Issue 38, items 4 and 11: the k-free track beside the k-given ranking, and the seed-to-seed spread."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccbench.reporting import _format as rfmt
from ccbench.reporting import leaderboard as lb
from ccbench.reporting.leaderboard import seeds as lb_seeds

N = "constraints.n_constraints"


def _rows(values: dict, seed: int = 0) -> pd.DataFrame:
    """``values[(dataset, budget, method)]`` = per-trial ari; a method ``ap~free`` is ``ap`` without k
    (no ``method.n_clusters``), every other row carries ``method.n_clusters: true_k``."""
    rows = []
    for (d, b, m), vals in values.items():
        name, free = m.removesuffix("~free"), m.endswith("~free")
        for t, v in enumerate(vals):
            rows.append({"dataset.name": d, "method.name": name, "method.n_clusters": None if free else "true_k",
                         "constraints.name": "random_pairs", N: b, "noise.name": "none", "trial": t, "seed": seed,
                         "trial_seed": 1000 * seed + 100 * b + t, "status": "ok", "ari": v, "fit_time": 0.01})
    return pd.DataFrame(rows)


def _sweep(seed: int = 0, shift: dict | None = None, n_trials: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    shift = shift or {"pck_means": 0.3, "ap": 0.2, "kmeans": 0.1, "ap~free": -0.2}
    values = {}
    for d in ("iris", "wine", "glass", "zoo"):
        for b in (10, 20):
            base = rng.uniform(0.2, 0.4, n_trials)
            for m, s in shift.items():
                values[(d, b, m)] = list(base + s + rng.normal(0, 0.01, n_trials))
    return _rows(values, seed)


def test_a_k_free_run_is_labelled_and_compared_with_its_k_given_run_not_ranked(tmp_path):
    data = _sweep()
    labels = set(rfmt.method_labels(data))
    assert labels == {"pck_means", "ap", "kmeans", "ap[k-free]"}
    paths = lb.write_leaderboard(data, tmp_path, metric="ari")
    tables = pd.read_parquet(paths["parquet"])
    ranks = tables[tables["table"] == "ranks"].set_index("method")
    assert set(ranks.index) == {"pck_means", "ap", "kmeans"}  # the k-given AP is ranked; the k-free run is not
    assert ranks.loc["ap", "rank_failed_last"] == pytest.approx(2.0)
    versus = tables[tables["table"] == "k_free_vs_given"].set_index("variant")
    row = versus.loc["ap[k-free]"]
    assert row["default"] == "ap" and row["cells"] == 8
    assert row["mean_diff"] == pytest.approx(-0.4, abs=0.02)  # k-free minus given k
    assert row["losses"] == 8
    text = paths["pairs_md"].read_text()
    assert "1c. The k-free track" in text and "ap[k-free]" in text


def test_a_method_run_only_k_free_is_ranked_under_its_own_name():
    data = _sweep(shift={"pck_means": 0.3, "ap~free": -0.2})
    assert set(rfmt.method_labels(data)) == {"pck_means", "ap"}
    frame = lb.long_frame(data.assign(method_label=rfmt.method_labels(data)), "ari")
    assert lb.main_methods(frame) == ["ap", "pck_means"]


def test_the_pages_rank_the_base_seed_and_measure_the_spread_to_the_second():
    one = _sweep(0)
    # seed 1: kmeans and ap swap places (0.2 vs 0.1 -> 0.1 vs 0.2): every cell's 2nd and 3rd swap
    two = _sweep(1, shift={"pck_means": 0.3, "ap": 0.1, "kmeans": 0.2, "ap~free": -0.2})
    data = pd.concat([one, two], ignore_index=True)
    frame = lb.long_frame(data.assign(method_label=rfmt.method_labels(data)), "ari")
    assert len(frame) == len(data)  # trials of two seeds are not duplicates of each other
    table, summary = lb_seeds.seed_spread(lb._frame._cells(frame), ["ap", "kmeans", "pck_means"], "ari")
    table = table.set_index("method")
    assert summary["cells"] == 8 and summary["seeds"] == [0, 1] and summary["winner_changes"] == 0
    assert table.loc["pck_means", "avg_rank_shift"] == 0 and table.loc["pck_means", "rank_seed0"] == 1
    assert table.loc["ap", "rank_seed0"] == 2 and table.loc["ap", "rank_seed1"] == 3
    assert table.loc["ap", "avg_rank_shift"] == pytest.approx(1.0) and summary["avg_rank_shift"] == pytest.approx(1.0)
    assert table.loc["ap", "cell_rank_sd"] == pytest.approx(np.std([2, 3], ddof=1))


def test_the_page_ranks_only_the_base_seed_and_states_the_tie_rule(tmp_path):
    one = _sweep(0)
    two = _sweep(1, shift={"pck_means": 0.3, "ap": 0.1, "kmeans": 0.2, "ap~free": -0.2})
    both = pd.concat([one, two], ignore_index=True)
    tables = pd.read_parquet(lb.write_leaderboard(both, tmp_path / "both", metric="ari")["parquet"])
    alone = pd.read_parquet(lb.write_leaderboard(one, tmp_path / "one", metric="ari")["parquet"])
    r_both = tables[tables["table"] == "ranks"].set_index("method")["rank_failed_last"]
    r_one = alone[alone["table"] == "ranks"].set_index("method")["rank_failed_last"]
    pd.testing.assert_series_equal(r_both.sort_index(), r_one.sort_index())  # seed 1 does not enter the ranks
    text = (tmp_path / "both" / "pairs.md").read_text()
    assert "1d. Seed to seed" in text and "are a tie" in text
    assert "One base seed in these rows" in (tmp_path / "one" / "pairs.md").read_text()


def test_the_split_at_the_best_is_by_the_gap_to_the_best_only():
    ranks = pd.Series({"c": 2.1, "a": 1.0, "b": 1.9, "d": 4.0, "e": 4.5})
    assert lb_seeds.split_at_best(ranks, 1.0) == (["a", "b"], ["c", "d", "e"])
    assert lb_seeds.split_at_best(ranks, 10.0) == (["a", "b", "c", "d", "e"], [])
    assert lb_seeds.split_at_best(ranks, 0.1) == (["a"], ["b", "c", "d", "e"])
    assert lb_seeds.split_at_best(pd.Series({"a": 1.0, "b": 2.0}), 1.0) == (["a"], ["b"])  # "at least": behind


def test_the_page_headline_orders_only_what_the_cd_and_the_seeds_separate(tmp_path):
    """Four data sets, ranks 1, 2, 3 in every one (Friedman chi2 = 8, p = 0.018; Nemenyi CD for 3 methods
    over 4 blocks = 2.343 sqrt(12 / 24) = 1.66): pck_means and ap (1 apart) are a tie, kmeans (2 behind
    pck_means) is separated from it, but not from ap (1 apart)."""
    one = _sweep(0)
    two = _sweep(1, shift={"pck_means": 0.3, "ap": 0.1, "kmeans": 0.2, "ap~free": -0.2})
    lb.write_leaderboard(pd.concat([one, two], ignore_index=True), tmp_path, metric="ari")
    text = (tmp_path / "pairs.md").read_text()
    assert "The best, `pck_means` (1.00), is tied with `ap` (2.00). Behind it by at least 1.66: `kmeans` (3.00)." in text
    assert "less than 1.66 (the Nemenyi CD over 4 data sets; the largest seed-to-seed move of an average rank is" in text
    # ap (2) and kmeans (3) are 1 apart, under the CD: no sentence may order them (a chain "= ... >" did)
    assert "> `kmeans`" not in text and "`ap` (2.00) >" not in text


def test_a_method_missing_under_one_seed_has_no_rank_sd_there_and_no_warning():
    """A cell where a method has no rank under one seed (its rows there recorded without fitting) is left out of
    its ``cell_rank_sd``, quietly (numpy's nanstd warned "Degrees of freedom <= 0" on every report)."""
    import warnings

    one, two = _sweep(0), _sweep(1, shift={"pck_means": 0.3, "ap": 0.1, "kmeans": 0.2, "ap~free": -0.2})
    two = two[~((two["method.name"] == "ap") & (two["dataset.name"] == "iris"))]
    data = pd.concat([one, two], ignore_index=True)
    frame = lb.long_frame(data.assign(method_label=rfmt.method_labels(data)), "ari")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table, _ = lb_seeds.seed_spread(lb._frame._cells(frame), ["ap", "kmeans", "pck_means"], "ari")
    table = table.set_index("method")
    assert table.loc["ap", "cells"] == 6  # the 8 cells less iris's two
    assert table.loc["ap", "cell_rank_sd"] == pytest.approx(np.std([2, 3], ddof=1))
