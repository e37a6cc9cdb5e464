"""The active track's report (issue 53): the ranking of the areas (the leaderboard's statistics on known
answers), the page (strangers' text escaped), ``--with`` and ``--compare-sweeps`` on anytime rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccbench.reporting import active as act
from ccbench.reporting import compare_sweeps, merge_with
from ccbench.reporting.active_page import estimate_core_hours, write_active_report
from ccbench.running.cli import main
from ccbench.running.harness import run_job


def _rows(values: dict, datasets=("a", "b", "c", "d", "e", "f"), trials=3, noise=0.0, budget=20) -> pd.DataFrame:
    """Hand-made anytime rows: ``values[(strategy, method)][dataset index]`` is every trial's area."""
    out = []
    for (strategy, method), per_set in values.items():
        for d, dataset in enumerate(datasets):
            for t in range(trials):
                area = per_set[d] if np.ndim(per_set) else per_set
                out.append({"dataset.name": dataset, "method.name": method, "constraints.name": "active_queries",
                            "constraints.strategy": strategy, "constraints.budget": budget, "noise.name":
                            "constraint_flip", "noise.rate": noise, "trial": t, "status": "ok", "error": None,
                            "auc_ari": area, "ari_all_q0": 0.0, "ari_all_q20": 2 * area,
                            "ari_unqueried_q0": 0.0, "ari_unqueried_q20": area, "n_samples": 100,
                            "strategy_cpu_per_query": 0.01, "refit_cpu_mean": 0.1, "curve_cpu_time": 1.0})
    return pd.DataFrame(out)


def test_an_entry_ahead_of_random_on_every_data_set_is_ahead_with_the_exact_wilcoxon_p():
    base = np.array([0.3, 0.4, 0.5, 0.6, 0.2, 0.45])
    rows = _rows({("random", "pck_means"): base, ("npu", "pck_means"): base + np.arange(1, 7) / 100,
                  ("min_max", "pck_means"): base + np.array([0.01, -0.02, 0.03, -0.04, 0.05, -0.06])})
    ranking = act.effects(act.active_frame(rows))
    table = ranking["effects"].set_index(["reference_name", "method"])
    npu = table.loc[("random/pck_means", "npu/pck_means")]
    assert npu["mean_diff"] == pytest.approx(0.035) and npu["wins"] == 6 and npu["losses"] == 0
    # six positive differences: the exact two-sided signed-rank p is 2 / 2**6; Holm over the family of two
    assert npu["p_wilcoxon"] == pytest.approx(2 / 64) and npu["p_holm"] == pytest.approx(2 / 32)
    assert npu["ci_low"] > 0
    mixed = table.loc[("random/pck_means", "min_max/pck_means")]
    assert mixed["verdict"] == "tied" and mixed["wins"] == 3 and mixed["losses"] == 3
    assert ranking["best"] == "npu/pck_means"


def test_a_failed_curve_scores_zero_and_a_skipped_only_pair_is_no_entry():
    rows = _rows({("random", "pck_means"): 0.5, ("npu", "pck_means"): 0.6, ("random", "cobras"): 0.0})
    rows.loc[rows["method.name"] == "cobras", "status"] = "skipped"
    failed = (rows["constraints.strategy"] == "npu") & (rows["trial"] == 0)
    rows.loc[failed, ["status", "auc_ari"]] = ["error", np.nan]
    frame = act.active_frame(rows)
    assert "random/cobras" not in set(frame["entry"])
    ranking = act.effects(frame)
    diffs = ranking["effects"].set_index(["reference", "reference_name", "method"])
    # per cell: (0 + 0.6 + 0.6) / 3 - 0.5; random is then the best entry too, the same family under both names
    assert diffs.loc[("random", "random/pck_means", "npu/pck_means"), "mean_diff"] == pytest.approx(0.4 - 0.5)
    assert ranking["best"] == "random/pck_means"
    assert diffs.loc[("best", "random/pck_means", "npu/pck_means"), "mean_diff"] == pytest.approx(-0.1)


def test_a_reference_implementation_is_read_against_the_entry_it_implements_and_never_ranked():
    """``peer_cobras`` (the authors' package) is ahead of every entry on every set, yet it is not the best, not
    in P(best) nor in a random family: its one comparison is ``cobras`` against it, with the same statistics."""
    base = np.array([0.3, 0.4, 0.5, 0.6, 0.2, 0.45])
    rows = _rows({("random", "pck_means"): base, ("cobras", "cobras"): base + 0.05,
                  ("cobras", "peer_cobras"): base + 0.05 + np.arange(1, 7) / 100})
    frame = act.active_frame(rows)
    assert set(frame["entry"]) == {"random/pck_means", "cobras", "peer_cobras"}
    ranking = act.effects(frame)
    assert ranking["best"] == "cobras" and ranking["reference_pairs"] == {"peer_cobras": "cobras"}
    assert "peer_cobras" not in set(ranking["p_best"]["method"])
    table = ranking["effects"]
    assert "peer_cobras" not in set(table.loc[table["reference"] != "reference implementation", "method"])
    ours = table[table["reference"] == "reference implementation"].set_index(["reference_name", "method"])
    row = ours.loc[("peer_cobras", "cobras")]
    assert row["mean_diff"] == pytest.approx(-0.035) and row["losses"] == 6 and row["p_wilcoxon"] == pytest.approx(2 / 64)
    # where only the reference has a score (a set too small to leave points unasked by ours), no block is made
    rows.loc[(rows["method.name"] != "peer_cobras") & (rows["dataset.name"] == "a"), "auc_ari"] = np.nan
    assert act.effects(act.active_frame(rows))["unscored"] == ["a"]
    assert act.reference_pairs(["random/peer_pck_means", "random/pck_means", "peer_x"]) == {
        "random/peer_pck_means": "random/pck_means"}


def test_the_page_escapes_a_strangers_text_and_names_its_figures_itself(tmp_path):
    rows = _rows({("random", "pck_means"): 0.5, ("<script>alert(1)</script>", "pck_means"): 0.6},
                 datasets=("../../etc/<b>x</b>|y",))  # one figure: matplotlib is this test's cost
    rows.loc[0, ["status", "error"]] = ["error", "<img src=x onerror=alert(1)>"]
    paths = write_active_report(rows, tmp_path / "page", figures=True)
    page, md = paths["html"].read_text(), paths["md"].read_text()
    assert "<script>" not in page and "&lt;script&gt;" in page and "<img src=x" not in page
    assert "<script>" not in md and "<b>x</b>" not in md
    assert sorted(p.name for p in (tmp_path / "page").glob("*.png")) == ["curves_00.png"]
    assert not (tmp_path / "etc").exists()


def test_the_estimate_scales_the_measured_rate_to_the_full_grid():
    rows = _rows({("random", "pck_means"): 0.5}, datasets=("a",), trials=1)  # 1 CPU s for 100 points, 2 budgets
    total, per_entry = estimate_core_hours(act.active_frame(rows), {"points": {"x": 300, "y": 100}, "budgets": 3,
                                                                      "noise_rates": 2, "trials": 10})
    assert total == pytest.approx(1.0 / 200 * 400 * 3 * 2 * 10 / 3600)


def test_the_page_estimates_the_full_track_only_when_its_rows_are_not_it(tmp_path, monkeypatch):
    from ccbench.reporting import active_page

    # a two-set, two-rate, two-budget, three-trial "full track": the rows below are all of it
    monkeypatch.setattr(active_page, "FULL_TRACK", {"points": {"a": 100, "b": 100}, "noise_rates": 2, "budgets": 2,
                                                    "trials": 3})
    entries = {("random", "pck_means"): 0.5, ("npu", "pck_means"): 0.6}
    full = pd.concat([_rows(entries, datasets=("a", "b"), noise=r) for r in (0.0, 0.1)], ignore_index=True)
    md = write_active_report(full, tmp_path / "full", figures=False)["md"].read_text()
    assert "These rows are the full track" in md and "Estimate, not a measurement" not in md
    part = full[full["dataset.name"] == "a"]  # a data set short of the grid: the cost of the rest is estimated
    md = write_active_report(part, tmp_path / "part", figures=False)["md"].read_text()
    assert "These rows are the full track" not in md and "Estimate, not a measurement" in md
    # every set, rate, budget and trial named, but one entry's cell stopped part-way: not the full track
    short = full.drop(full.index[(full["dataset.name"] == "b") & (full["noise.rate"] == 0.1)
                                 & (full["constraints.strategy"] == "npu")][:1])
    md = write_active_report(short, tmp_path / "short", figures=False)["md"].read_text()
    assert "These rows are the full track" not in md and "1 (entry, data set, noise rate) cell(s)" in md


def test_the_page_names_a_method_s_code_versions_where_its_rows_come_from_more_than_one(tmp_path):
    rows = _rows({("random", "pck_means"): 0.5, ("random", "mpck_means"): 0.4}, datasets=("a", "b"))
    rows["code.method_hash"] = "1" * 40
    one = write_active_report(rows, tmp_path / "one", figures=False)["md"].read_text()
    assert "Code versions" not in one  # one version: nothing to say
    new = (rows["method.name"] == "mpck_means") & ((rows["dataset.name"] == "b") | (rows["trial"] == 2))
    rows.loc[new, "code.method_hash"] = "2" * 40
    md = write_active_report(rows, tmp_path / "two", figures=False)["md"].read_text()
    # mpck_means: set a's cell mixes (trial 2 new), set b's is all new; pck_means is one version
    assert "`mpck_means` from 2 code versions (`222222222222` 4 rows, `111111111111` 2 rows; 1 cell holds more" in md
    assert "`pck_means` from" not in md


# -- joinable: --with and --compare-sweeps on real rows ----------------------------------------------


def _cell(strategy, budget=10, plugins=()):
    return {"dataset": {"name": "iris", "preprocess": "standardize"}, "method": {"name": "pck_means", "n_clusters": "true_k"},
            "constraints": {"name": "active_queries", "strategy": strategy, "budget": budget, "step": 10},
            "noise": {"name": "constraint_flip", "rate": 0.1}, "n_trials": 2, "metrics": ["ari"], "plugins": list(plugins)}


_NEW_STRATEGY = '''
from ccbench.hookspecs import hookimpl
from ccbench.registry import QueryStrategySpec


class FirstPoint:
    """Asks point 0 against 1, 2, 3, ...: a stranger's strategy."""

    def next_pair(self, X, asked, answers, labels=None, rng=None):
        return 0, len(asked) + 1


@hookimpl
def ccbench_query_strategies():
    return [QueryStrategySpec("test_first_point", FirstPoint)]
'''


@pytest.fixture
def shipped(tmp_path):
    """A shipped folder of random-strategy rows, written by `ccbench report` (its rows.parquet)."""
    run_job(_cell("random"), tmp_path / "base" / "random")
    run_job(_cell("min_max"), tmp_path / "base" / "min_max")
    assert main(["report", str(tmp_path / "base"), "--out", str(tmp_path / "shipped"), "--no-figures"]) == 0
    return tmp_path / "shipped"


def test_a_new_strategys_rows_are_ranked_against_the_shipped_rows_with_with(tmp_path, shipped, throwaway_plugin):
    module = throwaway_plugin(_NEW_STRATEGY)
    run_job(_cell("test_first_point", plugins=[module.__name__]), tmp_path / "new" / "job")
    out = tmp_path / "joined"
    assert main(["report", str(tmp_path / "new"), "--with", str(shipped), "--out", str(out), "--no-figures",
                 "--site", str(tmp_path / "site")]) == 0
    page = (out / "index.md").read_text()
    assert "`test_first_point/pck_means` vs `random/pck_means` (random)" in page
    # --site on anytime rows: the active track's site, the new entry with a page of its own
    assert "--site" in page and (tmp_path / "site" / "index.html").is_file()
    assert any(p.name.startswith("entry-test_first_point") for p in (tmp_path / "site").glob("*.html"))
    assert "`min_max/pck_means` vs `random/pck_means` (random)" in page  # the shipped entries are on the board
    # the leaderboard's merge alone refuses: the strategy is in the cell's columns
    from ccbench import reporting

    new, old = reporting.load(tmp_path / "new"), reporting.load(shipped)
    with pytest.raises(ValueError, match="not in the shipped grid"):
        merge_with(new, old)
    merged, _ = act.merge_active_with(new, old)
    assert set(act.entry_labels(merged)) == {"random/pck_means", "min_max/pck_means", "test_first_point/pck_means"}


def test_with_refuses_new_rows_made_at_another_budget(tmp_path, shipped, capsys):
    run_job(_cell("random", budget=20), tmp_path / "new" / "job")
    code = main(["report", str(tmp_path / "new"), "--with", str(shipped), "--out", str(tmp_path / "x"), "--no-figures"])
    err = capsys.readouterr().err
    assert code != 0 and "not in the shipped grid" in err and "experiment=active" in err, err
    assert not (tmp_path / "x").exists()


def test_compare_sweeps_pairs_the_curves_of_two_runs(tmp_path, shipped):
    run_job(_cell("random"), tmp_path / "again" / "random")
    text, _ = compare_sweeps(shipped, tmp_path / "again", metric="auc_ari")
    assert "1 identical" in text or "identical: 1" in text or "| identical | 1 |" in text, text
    rows = pd.read_parquet(next((tmp_path / "again").glob("*/results.parquet")))
    rows["auc_ari"] += 0.2  # another run's areas, far outside the trial spread
    rows.to_parquet(next((tmp_path / "again").glob("*/results.parquet")))
    text, _ = compare_sweeps(shipped, tmp_path / "again", metric="auc_ari")
    assert "disagree" in text


def test_the_lead_over_random_is_read_at_each_noise_rate_alone(tmp_path):
    # npu ahead of random on all 8 sets with exact answers, behind on all 8 at 20 % wrong answers:
    # pooled over the rates the two cancel, per rate each is a verdict
    sets = tuple("abcdefgh")
    base = np.linspace(0.3, 0.6, 8)
    step = np.arange(1, 9) / 100
    rows = pd.concat([_rows({("random", "pck_means"): base, ("npu", "pck_means"): base + step}, sets, noise=0.0),
                      _rows({("random", "pck_means"): base, ("npu", "pck_means"): base - step}, sets, noise=0.2)],
                     ignore_index=True)
    frame = act.active_frame(rows)
    by = act.effects_by_noise(frame).set_index("noise")
    assert list(by["method"]) == ["npu/pck_means"] * 2 and set(by["reference_name"]) == {"random/pck_means"}
    assert by.loc[0.0, "mean_diff"] == pytest.approx(step.mean()) and by.loc[0.0, "verdict"] == "ahead"
    assert by.loc[0.2, "mean_diff"] == pytest.approx(-step.mean()) and by.loc[0.2, "verdict"] == "behind"
    pooled = act.effects(frame)["effects"].set_index(["reference", "method"]).loc[("random", "npu/pck_means")]
    assert pooled["mean_diff"] == pytest.approx(0.0, abs=1e-12)
    md = write_active_report(rows, tmp_path / "page", figures=False)["md"].read_text()
    assert "AUC against random at each oracle noise rate" in md
    assert "+0.045 [" in md and "-0.045 [" in md
    table = pd.read_parquet(tmp_path / "page" / "active.parquet")
    assert set(table.loc[table["table"] == "effects_by_noise", "noise"]) == {0.0, 0.2}


def test_the_noise_section_gives_each_entry_s_mean_area_per_rate_over_its_data_sets(tmp_path):
    sets = tuple("abcdefgh")
    base = np.linspace(0.3, 0.6, 8)
    rows = pd.concat([_rows({("random", "pck_means"): base, ("npu", "pck_means"): base + 0.1}, sets, noise=0.0),
                      _rows({("random", "pck_means"): base - 0.2, ("npu", "pck_means"): base}, sets, noise=0.2)],
                     ignore_index=True)
    md = write_active_report(rows, tmp_path / "page", figures=False)["md"].read_text()
    assert "| npu/pck_means | 0.550 (8) | 0.450 (8) |" in md
    assert "| random/pck_means | 0.450 (8) | 0.250 (8) |" in md
