"""The headline's pooling (issue 51, items 2, 3, 5): the area under the curve over budgets, every base seed
with the seed-to-seed spread in the interval, and the size classes (ccbench.reporting.leaderboard.pooling)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccbench.reporting import _format as rfmt
from ccbench.reporting import leaderboard as lb
from ccbench.reporting.leaderboard import effects as lb_effects
from ccbench.reporting.leaderboard import pooling
from ccbench.reporting.leaderboard.gains import bootstrap_ci
from ccbench.reporting.leaderboard.headline_text import size_class_table

N = "constraints.n_constraints"


def _rows(values: dict, n_samples: dict | None = None, statuses: dict | None = None) -> pd.DataFrame:
    """random_pairs rows: ``values[(dataset, method, budget, seed)]`` = per-trial ari; ``n_samples``:
    {dataset: n}; ``statuses[(dataset, method)]``: one status for every trial of the pair."""
    rows = []
    for (d, m, b, seed), vals in values.items():
        status = (statuses or {}).get((d, m), "ok")
        for t, v in enumerate(vals):
            rows.append({"dataset.name": d, "method.name": m, "constraints.name": "random_pairs", N: b,
                         "noise.name": "none", "trial": t, "seed": seed, "trial_seed": 1000 * seed + 10 * b + t,
                         "status": status, "ari": v if status == "ok" else np.nan, "fit_time": 0.01,
                         "n_samples": (n_samples or {}).get(d, 150)})
    data = pd.DataFrame(rows)
    data["method_label"] = rfmt.method_labels(data)
    return data


def _one(effects, method, reference="kmeans", convention="missing", subset="all"):
    row = effects[(effects["method"] == method) & (effects["reference"] == reference)
                  & (effects["convention"] == convention) & (effects["subset"] == subset)]
    assert len(row) == 1, row
    return row.iloc[0]


# --- the area under the curve ------------------------------------------------------------------------

def _scores(curve: dict, dataset="a", setting="", noise="none", seed=0) -> pd.DataFrame:
    index = pd.MultiIndex.from_tuples([(dataset, setting, b, noise, seed) for b in curve],
                                      names=["dataset", "setting", "budget", "noise", "seed"])
    return pd.DataFrame({"m": list(curve.values())}, index=index)


def test_the_area_is_the_trapezoid_over_log_budget_divided_by_its_range():
    # budgets 10, 20, 40 at 0.2, 0.4, 0.8, one doubling a step: (0.3 + 0.6) / 2 = 0.45 (linear axis: 0.5; the
    # mean of the cells: 0.467)
    area = pooling.curve_scores(_scores({20: 0.4, 10: 0.2, 40: 0.8}))
    assert area["m"].iloc[0] == pytest.approx(0.45)
    # uneven steps: 10 -> 20 -> 80 is one doubling then two: (log 2 * 0.3 + log 4 * 0.6) / log 8 = 0.5
    assert pooling.curve_scores(_scores({10: 0.2, 20: 0.4, 80: 0.8}))["m"].iloc[0] == pytest.approx(0.5)
    # a budget of 0 has no logarithm: that curve is read on the linear axis, (1 * 0.25 + 3 * 0.75) / 4
    assert pooling.curve_scores(_scores({0: 0.0, 1: 0.5, 4: 1.0}))["m"].iloc[0] == pytest.approx(0.625)
    assert area.index.names == ["dataset", "setting", "noise", "seed"]
    assert pooling.curve_scores(_scores({20: 0.7}))["m"].iloc[0] == pytest.approx(0.7)  # one budget: its cell
    assert np.isnan(pooling.curve_scores(_scores({10: 0.2, 20: np.nan, 40: 0.8}))["m"].iloc[0])  # a gap: missing


def test_curves_are_kept_apart_by_data_set_setting_noise_and_seed():
    both = pd.concat([_scores({10: 0.0, 30: 1.0}, seed=0), _scores({10: 1.0, 30: 1.0}, seed=1),
                      _scores({10: 0.5, 20: 0.5, 30: 0.5, 0: 0.5}, dataset="b")])
    area = pooling.curve_scores(both)["m"]
    assert area.loc[("a", "", "none", 0)] == pytest.approx(0.5)
    assert area.loc[("a", "", "none", 1)] == pytest.approx(1.0)
    assert area.loc[("b", "", "none", 0)] == pytest.approx(0.5)


def test_the_headline_compares_areas_not_the_mean_of_the_cells():
    # a - kmeans = +0.3, -0.2, -0.2, +0.3 at budgets 1, 2, 4, 8 (one doubling a step: weights 1/6, 1/3, 1/3,
    # 1/6): the cells' mean is +0.05, the area -1/30; eight data sets alike: a is behind on every one by its area
    values = {}
    for i in range(8):
        for b, diff in ((1, 0.3), (2, -0.2), (4, -0.2), (8, 0.3)):
            values[(f"s{i}", "kmeans", b, 0)] = [0.5, 0.5]
            values[(f"s{i}", "a", b, 0)] = [0.5 + diff, 0.5 + diff]
    frame = lb.long_frame(_rows(values), "ari")
    result = lb_effects.headline_effects(frame, "ari")
    row = _one(result["effects"], "a")
    assert result["unit"] == "curve"
    assert row["mean_diff"] == pytest.approx(-1 / 30) and row["losses"] == 8
    cells = lb_effects.headline_effects(frame, "ari", curves=False)
    assert cells["unit"] == "cell" and _one(cells["effects"], "a")["mean_diff"] == pytest.approx(0.05)
    # the per-budget view beside it: each budget's difference
    view = result["per_budget"].set_index(["budget", "method"])["mean_diff"]
    assert view.loc[(1, "a")] == pytest.approx(0.3) and view.loc[(4, "a")] == pytest.approx(-0.2)
    assert any("area under the `ari` curve" in s for s in result["text"])


# --- seeds -----------------------------------------------------------------------------------------------

def test_two_stage_ci_is_the_data_set_bootstrap_with_one_seed_and_wider_with_seed_spread():
    rng = np.random.default_rng(3)
    per_set = rng.normal(0.1, 0.05, 12)
    one = pd.Series(per_set, index=pd.MultiIndex.from_product([range(12), [0]], names=["dataset", "seed"]))
    assert pooling.two_stage_ci(one, n_boot=500, seed=4) == bootstrap_ci(per_set, n_boot=500, seed=4)
    # every data set's two seeds average to 0.1 exactly; the data-set bootstrap alone would give [0.1, 0.1]
    spread = pd.Series(np.r_[np.full(12, 0.1) + 0.2, np.full(12, 0.1) - 0.2],
                       index=pd.MultiIndex.from_product([[0, 1], range(12)], names=["seed", "dataset"])
                       ).reorder_levels(["dataset", "seed"])
    lo, hi = pooling.two_stage_ci(spread, n_boot=2000, seed=0)
    assert lo < 0.02 and hi > 0.18  # the seeds' +-0.2 is in the interval
    # a data set with one seed among others with three: its single value is always drawn
    uneven = pd.Series([0.5, 0.5, 0.5, 0.3], index=pd.MultiIndex.from_tuples(
        [(0, 0), (0, 1), (0, 2), (1, 0)], names=["dataset", "seed"]))
    assert pooling.two_stage_ci(uneven, n_boot=400, seed=1) == pytest.approx((0.3, 0.5))


def test_the_headline_pools_every_seed_and_its_interval_carries_their_spread():
    # on each of 10 data sets a beats kmeans by 0.3 under seed 0 and loses by 0.1 under seed 1
    values = {}
    for i in range(10):
        for seed, diff in ((0, 0.3), (1, -0.1)):
            values[(f"s{i}", "kmeans", 20, seed)] = [0.5, 0.5]
            values[(f"s{i}", "a", 20, seed)] = [0.5 + diff, 0.5 + diff]
    result = lb_effects.headline_effects(lb.long_frame(_rows(values), "ari"), "ari")
    row = _one(result["effects"], "a")
    assert row["mean_diff"] == pytest.approx(0.1)  # the base seed alone would say 0.3
    # every data set's mean is 0.1: the data sets alone would give [0.1, 0.1]; the seeds' spread (each data set
    # at 0.3, 0.1 or -0.1 as it draws its seeds) gives about 0.1 +- 0.09
    assert row["ci_low"] < 0.05 and row["ci_high"] > 0.15


# --- size classes ------------------------------------------------------------------------------------

def test_size_classes_follow_the_issues_bounds():
    n = pd.Series({"a": 150, "b": 999, "c": 1000, "d": 5000, "e": 5001, "f": np.nan})
    assert pooling.size_classes(n) == {"n < 1,000": ["a", "b"], "1,000 <= n <= 5,000": ["c", "d"],
                                       "n > 5,000": ["e"]}


def test_each_size_class_has_its_headline_and_a_method_that_cannot_run_one_is_not_ranked_there():
    # six small and six large sets; slow is refused (a prediction) on every large one, and ahead on the small
    values, sizes, statuses = {}, {}, {}
    for i in range(12):
        name = f"{'small' if i < 6 else 'large'}{i}"
        sizes[name] = 300 if i < 6 else 3000
        values[(name, "kmeans", 20, 0)] = [0.5, 0.5]
        values[(name, "slow", 20, 0)] = [0.8, 0.8]
        values[(name, "fast", 20, 0)] = [0.5 - 0.01 * (i + 1)] * 2
        if i >= 6:
            statuses[(name, "slow")] = "refused"
    result = lb_effects.headline_effects(lb.long_frame(_rows(values, sizes, statuses), "ari"), "ari")
    effects = result["effects"]
    assert {"n < 1,000", "1,000 <= n <= 5,000"} <= set(effects["subset"])
    small = _one(effects, "slow", subset="n < 1,000")
    large = _one(effects, "slow", subset="1,000 <= n <= 5,000")
    assert small["n_sets"] == 6 and small["mean_diff"] == pytest.approx(0.3)
    assert large["n_sets"] == 0 and large["verdict"] != "behind"
    assert _one(effects, "slow", convention="last", subset="1,000 <= n <= 5,000")["mean_diff"] == pytest.approx(-0.5)
    sentence = next(s for s in result["text"] if s.startswith("**Per size class ("))
    assert "not measured in this class" in sentence and "`slow`" in sentence.split("1,000 <= n <= 5,000")[1]
    assert result["subsets"]["n < 1,000"] == sorted(f"small{i}" for i in range(6))
    assert result["subsets"]["1,000 <= n <= 5,000"] == sorted(f"large{i}" for i in range(6, 12))
    table = size_class_table(effects)
    assert table.at["slow", "1,000 <= n <= 5,000"] == "not measured"
    assert table.at["slow", "n < 1,000"].startswith("+0.300")


def test_the_site_lists_a_size_class_as_the_headlines_compared_it():
    from ccbench.reporting.leaderboard._site_size_classes import size_class_members

    big, small = "1,000 <= n <= 5,000", "n < 1,000"
    results = {"pairs": {"subsets": {"all": ["a", "b", "c"], big: ["c"], small: ["a", "b"]}},
               "labels": {"subsets": {"all": ["b", "d"], big: ["d"], small: ["b"]}}}
    members = size_class_members(results)
    assert list(members) == [small, big]  # SIZE_CLASSES order, whatever order the kinds give
    assert members == {small: ["a", "b"], big: ["c", "d"]}


def test_one_size_class_adds_no_subset():
    values = {(f"s{i}", m, 20, 0): [0.5 + 0.1 * (m == "a")] * 2 for i in range(5) for m in ("kmeans", "a")}
    effects = lb_effects.headline_effects(lb.long_frame(_rows(values), "ari"), "ari")["effects"]
    assert set(effects["subset"]) == {"all"}


def test_the_page_and_the_site_pool_the_seeds_the_ranks_keep_the_base_seed(tmp_path):
    from ccbench.reporting.leaderboard.site import write_site

    values = {}
    for i in range(10):
        for seed, diff in ((0, 0.3), (1, -0.1)):
            for b in (10, 40):
                values[(f"s{i}", "kmeans", b, seed)] = [0.5, 0.5]
                values[(f"s{i}", "a", b, seed)] = [0.5 + diff, 0.5 + diff]
    data = _rows(values)
    page = lb.write_leaderboard(data, tmp_path / "pages", metric="ari")["pairs_md"].read_text()
    headline = page.split("## Headline")[1].split("\n## ")[0]
    assert "| +0.100 [" in headline and "area under the `ari` curve" in headline  # both seeds, as areas
    assert "at each budget" in headline
    write_site(data, tmp_path / "site", "ari")
    kind = (tmp_path / "site" / "kind-pairs.html").read_text()
    assert "0.1" in kind.split('id="effects-kmeans"')[1][:3000] and "At each budget" in kind


def test_the_site_has_a_page_per_size_class_linked_from_the_index(tmp_path):
    from ccbench.reporting.leaderboard._site_html import slug
    from ccbench.reporting.leaderboard.site import write_site

    values, sizes, statuses = {}, {}, {}
    for i in range(8):
        name = f"{'small' if i < 4 else 'large'}{i}"
        sizes[name] = 300 if i < 4 else 3000
        values[(name, "kmeans", 20, 0)] = [0.5, 0.5]
        values[(name, "slow", 20, 0)] = [0.8, 0.8]
        if i >= 4:
            statuses[(name, "slow")] = "refused"
    write_site(_rows(values, sizes, statuses), tmp_path / "site", "ari")
    index = (tmp_path / "site" / "index.html").read_text()
    small, large = slug("size", "n < 1,000"), slug("size", "1,000 <= n <= 5,000")
    assert small in index and large in index
    large_page = (tmp_path / "site" / large).read_text()
    assert "large4" in large_page and "small0" not in large_page
    table = large_page.split('id="size-pairs-kmeans"')[1].split("</table>")[0]
    slow_row = next(r for r in table.split("<tr") if ">slow<" in r)
    assert '<td class="n" data-v="0">0</td>' in slow_row and "<td>not measured</td>" in slow_row  # n_sets 0
    assert "behind" not in slow_row  # not ranked last in the class
    assert "small0" in (tmp_path / "site" / small).read_text()


def test_a_size_class_too_small_for_any_verdict_says_so():
    # four large sets: the smallest Wilcoxon p is 2 / 16 = 0.125 > 0.05 even for one method
    values, sizes = {}, {}
    for i in range(11):
        name = f"{'small' if i < 7 else 'large'}{i}"
        sizes[name] = 300 if i < 7 else 3000
        values[(name, "kmeans", 20, 0)] = [0.5, 0.5]
        values[(name, "a", 20, 0)] = [0.8, 0.8]
    text = lb_effects.headline_effects(lb.long_frame(_rows(values, sizes), "ari"), "ari")["text"]
    sentence = next(s for s in text if s.startswith("**Per size class ("))
    small, large = sentence.split("1,000 <= n <= 5,000")
    assert "ahead of `kmeans`: `a`" in small  # seven sets: p = 0.016, and 0.031 with any one dropped
    assert "too few data sets for any verdict" in large and "0.12" in large


# --- a kill recorded without fitting ------------------------------------------------------------------

def test_a_timeout_recorded_without_fitting_is_scored_nowhere_and_the_measured_kill_is_kept():
    """``timeout_stops_seeds``: seed 1's kill is recorded at seed 2 without fitting. That row is a prediction
    (on the reference board a seed fitted beside a kill finished in most such cells), so the headline scores each
    of a's data sets over seed 0 (0.8) and seed 1 (the measured kill, 0): a beats kmeans (0.5) by -0.1, not by
    the -0.233 that a third, predicted, failure would give. The cell stays a measured failure for the ranks."""
    values = {}
    for i in range(8):
        for seed in (0, 1, 2):
            values[(f"s{i}", "kmeans", 20, seed)] = [0.5]
            values[(f"s{i}", "a", 20, seed)] = [0.8]
    data = _rows(values)
    a = data["method.name"].eq("a")
    data.loc[a & data["seed"].eq(1), ["status", "ari"]] = ["timeout", np.nan]
    data.loc[a & data["seed"].eq(1), "error"] = "TrialTimeout: trial 0 reached trial_timeout=10 s"
    data.loc[a & data["seed"].eq(2), ["status", "ari"]] = ["timeout", np.nan]
    data.loc[a & data["seed"].eq(2), "error"] = ("TrialTimeout: not fitted: base seed 1 of this cell timed out at "
                                                 "trial 0 (trial_timeout=10 s; timeout_stops_seeds=true)")
    frame = lb.long_frame(data, "ari")
    assert not ((frame["method"] == "a") & (frame["seed"] == 2)).any()
    assert ((frame["method"] == "a") & (frame["seed"] == 1) & (frame["status"] == "timeout")).sum() == 8
    row = _one(lb_effects.headline_effects(frame, "ari")["effects"], "a")
    assert row["mean_diff"] == pytest.approx((0.3 - 0.5) / 2)
    assert not lb.completed(frame).loc[("s0", "", 20.0, "none"), "a"]  # the measured kill still fails the cell
    unfitted = lb._frame.not_fitted_frame(data, "ari")
    assert len(unfitted) == 8 and set(unfitted["status"]) == {"timeout (not fitted)"}


def test_the_page_counts_the_timeouts_recorded_without_fitting_apart(tmp_path):
    """Section 7 still counts every row: the not-fitted kills in a column of their own, said to be scored
    nowhere; the base seed's own measured kill stays under ``timeout``."""
    values = {}
    for i in range(3):
        for trial_values in ([0.5, 0.5, 0.5],):
            values[(f"s{i}", "kmeans", 20, 0)] = trial_values
            values[(f"s{i}", "a", 20, 0)] = [0.8, 0.8, 0.8]
    data = _rows(values)
    a = data["method.name"].eq("a") & data["dataset.name"].eq("s0")
    data.loc[a & data["trial"].eq(1), ["status", "ari", "error"]] = ["timeout", np.nan, "TrialTimeout: killed"]
    data.loc[a & data["trial"].eq(2), ["status", "ari", "error"]] = [
        "timeout", np.nan, "TrialTimeout: not fitted: trial 1 of this cell timed out (timeout_stops_cell=true)"]
    lb.write_leaderboard(data, tmp_path, metric="ari")
    status = pd.read_parquet(tmp_path / "leaderboard.parquet")
    status = status[status["table"] == "status"].set_index("method")
    assert int(status.loc["a", "timeout"]) == 1 and int(status.loc["a", "timeout_not_fitted"]) == 1
    assert int(status.loc["kmeans", "timeout_not_fitted"]) == 0
    assert "`timeout_not_fitted` (1 trial)" in (tmp_path / "pairs.md").read_text()
