"""The leaderboard's headline (issue 50): paired effect sizes over data sets against k-means and the best,
Holm over the family, leave-one-data-set-out stability, P(best), the failure conventions (a refusal or a
skipped draw is missing, not a failure) and the flagged data sets; each checked on hand-sized frames
against scipy, numpy, baycomp and statsmodels computed independently, and on the shipped rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats as ss

from ccbench.reporting import _format as rfmt
from ccbench.reporting import leaderboard as lb
from ccbench.reporting.leaderboard import _effect_stats as es
from ccbench.reporting.leaderboard import effects as lb_effects
from ccbench.reporting.leaderboard._frame import _of_kind, unmeasured_cells

N = "constraints.n_constraints"
SHIPPED = Path(__file__).resolve().parents[1] / "reports" / "leaderboard" / "rows.parquet"


def _rows(values: dict, statuses: dict | None = None, budgets=(20,)) -> pd.DataFrame:
    """Harness-like random_pairs rows: ``values[(dataset, method)]`` = per-trial ari, the same in every
    budget of ``budgets``; ``statuses[(dataset, method)]`` = one status for every trial, or a list (one
    per trial)."""
    statuses = statuses or {}
    rows = []
    for (d, m), vals in values.items():
        for b in budgets:
            status = statuses.get((d, m), "ok")
            for t, v in enumerate(vals):
                s = status[t] if isinstance(status, list) else status
                rows.append({"dataset.name": d, "method.name": m, "constraints.name": "random_pairs", N: b,
                             "noise.name": "none", "trial": t, "trial_seed": 100 * b + t, "status": s,
                             "ari": v if s == "ok" else np.nan, "fit_time": 0.01})
    data = pd.DataFrame(rows)
    data["method_label"] = rfmt.method_labels(data)
    return data


def _frame(values: dict, statuses: dict | None = None, **kw) -> pd.DataFrame:
    return lb.long_frame(_rows(values, statuses, **kw), "ari")


def _one(effects, method, reference="kmeans", convention="missing", subset="all"):
    row = effects[(effects["method"] == method) & (effects["reference"] == reference)
                  & (effects["convention"] == convention) & (effects["subset"] == subset)]
    assert len(row) == 1, row
    return row.iloc[0]


def _paired(diffs: dict, base: float = 0.5) -> dict:
    """{(dataset, method): trials} with kmeans at ``base`` and each method at base + its per-set difference
    (two equal trials per cell, so the cell mean is exact)."""
    values = {}
    for method, d in diffs.items():
        for i, x in enumerate(d):
            values[(f"set{i}", "kmeans")] = [base, base]
            values[(f"set{i}", method)] = [base + x, base + x]
    return values


# --- the statistics, against the libraries they stand for --------------------------------------------

def test_the_signed_rank_p_is_scipys_on_every_route():
    """Exact (no ties or zeros), permutation (n <= 13 with ties or zeros), normal approximation (ties or
    zeros above 13, or n > 50): the same p as scipy.stats.wilcoxon with its defaults."""
    rng = np.random.default_rng(7)
    routes = set()
    # scipy's permutation route takes ~0.2 s a call: a few small samples, more large ones
    for n in [5, 8, 11, 13] + list(range(14, 60, 3)) * 3:
        d = np.round(rng.normal(0.05, 0.1, n), int(rng.integers(1, 4)))
        if rng.random() < 0.4:
            d[: rng.integers(1, 4)] = 0.0
        ties = np.unique(np.abs(d[d != 0])).size < (d != 0).sum() or (d == 0).any()
        routes.add("permutation" if n <= 13 and ties else "exact" if n <= 50 and not ties else "normal")
        assert es.signed_rank(d)[1] == pytest.approx(ss.wilcoxon(d).pvalue, rel=1e-9, abs=1e-12)
    assert routes == {"permutation", "exact", "normal"}
    assert es.signed_rank(np.zeros(8)) == (0.0, 1.0) and es.signed_rank([1.0, -2.0, 3.0])[0] == 1.0


@pytest.mark.parametrize("rope", [0.03, 0.0])
def test_the_bayesian_signed_rank_is_baycomps(rope):
    from baycomp import SignedRankTest

    rng = np.random.default_rng(3)
    for seed in range(4):
        d = rng.normal(0.02, 0.05, int(rng.integers(5, 25)))
        d[0] = 0.0
        ours = es.bayes_signed_rank(d, rope, nsamples=3000, seed=seed)
        theirs = SignedRankTest.probs(d, np.zeros_like(d), rope=rope, nsamples=3000, random_state=seed)
        if rope == 0:  # baycomp gives (left, right) without a rope
            theirs = (theirs[0], 0.0, theirs[1])
        assert ours == pytest.approx(tuple(theirs), abs=1e-12)
    assert es.bayes_signed_rank(np.full(10, 0.2), 0.03)[0] == 1.0  # ahead: left is "x better"


# --- a hand-sized board --------------------------------------------------------------------------------

D_A = np.array([0.10, 0.20, 0.05, 0.15, 0.12, 0.08, 0.30, -0.04])  # A beats kmeans on 7 of 8 data sets


def test_eight_data_sets_a_beats_kmeans_on_seven():
    result = lb_effects.headline_effects(_frame(_paired({"pck_means": D_A})), "ari", seed=0, n_boot=2000)
    row = _one(result["effects"], "pck_means")
    assert row["n_sets"] == 8 and (row["wins"], row["losses"], row["ties"]) == (7, 1, 0)
    assert row["mean_diff"] == pytest.approx(D_A.mean())
    assert row["p_wilcoxon"] == pytest.approx(ss.wilcoxon(D_A).pvalue) and row["p_wilcoxon"] == pytest.approx(4 / 256)
    boot = D_A[np.random.default_rng(0).integers(0, 8, size=(2000, 8))].mean(axis=1)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(tuple(np.percentile(boot, [2.5, 97.5])))
    assert row["p_holm"] == pytest.approx(row["p_wilcoxon"])  # a family of one
    assert row["verdict"] == "ahead" and row["loo_flips"] == 0 and row["loo_n"] == 8
    assert row["p_ahead"] > 0.9 and row["p_ahead"] + row["p_rope"] + row["p_behind"] == pytest.approx(1.0)
    # the best is pck_means: kmeans against it is the same comparison, from the other side
    back = _one(result["effects"], "kmeans", reference="best")
    assert back["reference_name"] == "pck_means" and back["verdict"] == "behind"
    assert back["mean_diff"] == pytest.approx(-D_A.mean()) and (back["wins"], back["losses"]) == (1, 7)
    text = " ".join(result["text"])
    assert f"Ahead of it: `pck_means` {D_A.mean():+.3f} [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]" in text


def test_holm_is_applied_over_the_methods_compared_with_one_reference():
    """Against kmeans: A (p = 2/256), C (p = 10/256 = 0.039: significant alone) and D (no effect): Holm
    over the three multiplies C's p by 2 (0.078 > 0.05): tied, not ahead."""
    d_c = np.array([0.2, 0.25, 0.3, 0.35, 0.4, 0.45, -0.01, -0.02])
    d_d = np.array([0.1, -0.1, 0.2, -0.2, 0.05, -0.06, 0.01, -0.02])
    diffs = {"pck_means": np.abs(D_A), "cop_kmeans": d_c, "mpck_means": d_d}
    effects = lb_effects.headline_effects(_frame(_paired(diffs)), "ari")["effects"]
    from statsmodels.stats.multitest import multipletests

    raw = [ss.wilcoxon(diffs[m]).pvalue for m in diffs]
    expected = multipletests(raw, method="holm")[1]
    for m, p_raw, p_adj in zip(diffs, raw, expected):
        row = _one(effects, m)
        assert row["p_wilcoxon"] == pytest.approx(p_raw) and row["p_holm"] == pytest.approx(p_adj)
    assert raw[1] == pytest.approx(10 / 256) and raw[1] < 0.05
    assert _one(effects, "cop_kmeans")["verdict"] == "tied"
    assert _one(effects, "pck_means")["verdict"] == "ahead"
    assert "Holm over the 3 methods compared with `kmeans`" in " ".join(
        lb_effects.headline_effects(_frame(_paired(diffs)), "ari")["text"])


def test_a_verdict_one_dropped_data_set_flips_is_undetermined():
    """7 data sets, one loss of the smallest size: p = 4/128 = 0.031 (ahead); dropping a win leaves 6 with
    that loss, p = 4/64 = 0.0625 (tied): 6 of the 7 drops flip it; dropping the loss does not."""
    d = np.array([0.10, 0.20, 0.30, 0.40, 0.50, 0.60, -0.05])
    row = _one(lb_effects.headline_effects(_frame(_paired({"pck_means": d})), "ari")["effects"], "pck_means")
    assert row["p_holm"] == pytest.approx(4 / 128) and row["p_holm"] <= 0.05
    drops = [ss.wilcoxon(np.delete(d, i)).pvalue <= 0.05 for i in range(7)]  # still ahead without set i
    assert row["loo_flips"] == drops.count(False) == 6 and row["loo_n"] == 7
    assert row["verdict"] == "undetermined"


def test_the_best_is_the_highest_mean_among_methods_on_every_data_set_and_p_best_resamples_them():
    values = _paired({"pck_means": [0.3, 0.2, 0.25, 0.1], "cop_kmeans": [0.35, 0.1, 0.2, 0.3],
                      "mpck_means": [0.9, 0.9, 0.9, 0.9]}, base=0.05)
    del values[("set3", "mpck_means")]  # the highest, but on 3 of the 4 data sets only: never the best
    result = lb_effects.headline_effects(_frame(values), "ari", seed=0, n_boot=500)
    means = pd.DataFrame({m: [values[(f"set{i}", m)][0] for i in range(4)]
                          for m in ("kmeans", "pck_means", "cop_kmeans")})
    assert _one(result["effects"], "kmeans", reference="best")["reference_name"] == means.mean().idxmax() == "cop_kmeans"
    idx = np.random.default_rng(0).integers(0, 4, size=(500, 4))
    boot = means.to_numpy()[idx].mean(axis=1)
    top = np.isclose(boot, boot.max(axis=1, keepdims=True), rtol=0, atol=1e-12)
    expected = (top / top.sum(axis=1, keepdims=True)).mean(axis=0)  # a tie shares the credit
    pb = result["p_best"][(result["p_best"]["convention"] == "missing") & (result["p_best"]["subset"] == "all")]
    pb = pb.set_index("method")
    assert pb.loc[list(means.columns), "p_best"].to_numpy() == pytest.approx(expected)
    assert np.isnan(pb.at["mpck_means", "p_best"]) and pb.at["mpck_means", "n_sets"] == 3


# --- failure conventions -----------------------------------------------------------------------------

def test_a_refused_cell_is_missing_by_default_and_a_failure_under_last():
    values = _paired({"pck_means": [0.1, 0.2, 0.3, 0.15, 0.05, 0.25]})
    statuses = {("set5", "pck_means"): "refused", ("set4", "pck_means"): "timeout"}
    result = lb_effects.headline_effects(_frame(values, statuses), "ari")
    missing, last = _one(result["effects"], "pck_means"), _one(result["effects"], "pck_means", convention="last")
    # set4's timeout is measured: it scores 0 (the one-cluster partition) under both; set5's refusal is missing
    assert missing["n_sets"] == 5 and missing["mean_diff"] == pytest.approx((0.1 + 0.2 + 0.3 + 0.15 - 0.5) / 5)
    assert last["n_sets"] == 6 and last["mean_diff"] == pytest.approx((0.1 + 0.2 + 0.3 + 0.15 - 0.5 - 0.5) / 6)


def test_a_refused_cell_is_not_ranked_last_only_a_measured_failure_is(tmp_path):
    """Three methods on three data sets; cop_kmeans, the best on set0 and set1, is refused on set2 (a time
    model's prediction): it ranks 1 and 1, and set2 is missing for it (before issue 50 it ranked last
    there: (1 + 1 + 3) / 3). A timeout on the same cell ranks last."""
    values = {(d, m): v for d in ("set0", "set1", "set2")
              for m, v in (("cop_kmeans", [0.9, 0.9]), ("pck_means", [0.6, 0.6]), ("kmeans", [0.5, 0.5]))}
    for status, rank in (("refused", 1.0), ("timeout", (1 + 1 + 3) / 3)):
        lb.write_leaderboard(_rows(values, {("set2", "cop_kmeans"): status}), tmp_path / status, metric="ari")
        tables = pd.read_parquet(tmp_path / status / "leaderboard.parquet")
        ranks = tables[(tables["table"] == "ranks")].set_index("method")
        assert ranks.at["cop_kmeans", "rank_failed_last"] == pytest.approx(rank)
        assert ranks.at["cop_kmeans", "rank_all_failures_last"] == pytest.approx((1 + 1 + 3) / 3)
        assert ranks.at["cop_kmeans", "cells"] == (2 if status == "refused" else 3)


def test_a_skipped_draw_makes_the_cell_missing():
    """cop_kmeans_xing skips one draw of set0 (no cannot-link): the cell is missing under the default
    convention (neither ranked nor scored), its other draws' mean under neither; under last the skipped
    draw scores 0."""
    values = _paired({"cop_kmeans": [0.2, 0.1, 0.3]})
    statuses = {("set0", "cop_kmeans"): ["ok", "skipped"]}
    frame = _frame(values, statuses)
    assert bool(unmeasured_cells(frame).xs("set0", level="dataset")["cop_kmeans"].all())
    scores = lb_effects.cell_scores(frame, "ari", "missing")
    assert scores.xs("set0", level="dataset")["cop_kmeans"].isna().all()
    last = lb_effects.cell_scores(frame, "ari", "last")
    assert last.xs("set0", level="dataset")["cop_kmeans"].iloc[0] == pytest.approx((0.7 + 0.0) / 2)
    row = _one(lb_effects.headline_effects(frame, "ari")["effects"], "cop_kmeans")
    assert row["n_sets"] == 2
    ranks = lb.rank_table(lb.cell_means(frame), "ari", unmeasured=unmeasured_cells(frame))
    assert ranks.at["cop_kmeans", "cells"] == 2 and ranks.at["cop_kmeans", "cells_all"] == 3


def test_a_method_refused_everywhere_has_no_verdict_and_is_no_member_of_the_family():
    """cop_kmeans is refused on all 7 data sets: missing, so no pair with kmeans (undetermined, not tied) and
    no test in Holm's family (pck_means keeps its unadjusted p); under last it scores 0 everywhere."""
    values = _paired({"pck_means": [0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1], "cop_kmeans": [0.1] * 7})
    statuses = {(f"set{i}", "cop_kmeans"): "refused" for i in range(7)}
    result = lb_effects.headline_effects(_frame(values, statuses), "ari")
    gone, kept = _one(result["effects"], "cop_kmeans"), _one(result["effects"], "pck_means")
    assert gone["n_sets"] == 0 and gone["verdict"] == "undetermined" and np.isnan(gone["p_holm"])
    assert kept["p_holm"] == pytest.approx(ss.wilcoxon([0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1]).pvalue)
    assert "Holm over the 1 method compared with `kmeans`" in result["text"][0]
    assert "`cop_kmeans` no data set in common" in result["text"][0]
    assert _one(result["effects"], "cop_kmeans", convention="last")["mean_diff"] == pytest.approx(-0.5)


def test_a_metric_without_a_known_failure_score_is_refused_naming_the_fix():
    frame = lb.long_frame(_rows(_paired({"pck_means": D_A})).rename(columns={"ari": "constraint_violations"}),
                          "constraint_violations")
    with pytest.raises(ValueError, match="failure_score="):
        lb_effects.headline_effects(frame, "constraint_violations")
    result = lb_effects.headline_effects(frame, "constraint_violations", failure_score=1e9)
    assert _one(result["effects"], "pck_means")["mean_diff"] == pytest.approx(-D_A.mean())  # lower is better


def test_the_page_table_shows_failures_last_beside_only_where_it_differs():
    from ccbench.reporting.leaderboard.headline_text import headline_tables

    values = _paired({"pck_means": D_A, "cop_kmeans": np.abs(D_A) / 2})
    plain = lb_effects.headline_effects(_frame(values), "ari")["effects"]
    assert all("failures last" not in t.columns for _, t in headline_tables(plain, "ari"))
    refused = lb_effects.headline_effects(_frame(values, {("set7", "cop_kmeans"): "refused"}), "ari")["effects"]
    (caption, table), _ = headline_tables(refused, "ari")
    assert "minus `kmeans`" in caption
    assert table.at["pck_means", "failures last"] == "same"
    last = _one(refused, "cop_kmeans", convention="last")
    assert table.at["cop_kmeans", "failures last"] == f"{last['mean_diff']:+.3f}, {last['verdict']}"
    assert table.at["cop_kmeans", "sets"] == 7 and last["n_sets"] == 8


# --- flagged data sets ----------------------------------------------------------------------------------

def test_uninformative_and_saturated_data_sets_are_flagged_and_left_out_of_the_informative_subset():
    methods = ["kmeans", "pck_means", "cop_kmeans", "mpck_means", "ap"]
    values = {}
    for i in range(8):
        for j, m in enumerate(methods):
            values[(f"set{i}", m)] = [0.3 + 0.05 * j + 0.01 * i] * 2
    for j, m in enumerate(methods):
        values[("flat", m)] = [0.05, 0.07 + 0.005 * j]  # the best mean is below 0.1: nobody recovers the classes
        values[("easy", m)] = [1.0, 1.0]  # five methods share the top in every cell: saturated
        values[("four", m)] = [1.0, 1.0] if m != "ap" else [0.9, 0.9]  # four at the top: not saturated
    result = lb_effects.headline_effects(_frame(values, budgets=(20, 60)), "ari")
    flags = result["flags"].set_index("dataset")["flag"].to_dict()
    assert flags == {"flat": "no method recovers the classes", "easy": "saturated"}
    effects = result["effects"]
    assert _one(effects, "ap")["n_sets"] == 11 and _one(effects, "ap", subset="informative")["n_sets"] == 9
    assert "**Flagged data sets (`ari`):** `easy` (saturated" in " ".join(result["text"])


# --- the page ----------------------------------------------------------------------------------------------

def test_the_page_leads_with_the_headline_and_the_index_quotes_it(tmp_path):
    data = _rows(_paired({"pck_means": D_A, "cop_kmeans": -np.abs(D_A)}))
    data["ari_unconstrained"] = data["ari"] - 0.01
    paths = lb.write_leaderboard(data, tmp_path, metric="ari")
    text = paths["pairs_md"].read_text()
    assert text.index("## Headline: paired effect sizes over data sets") < text.index("## 1. Average ranks")
    assert "**Secondary view, average ranks (what they support):**" in text and "What these ranks support" not in text
    for metric in ("ari", "ari_unconstrained"):
        assert f"**Headline (`{metric}`) against `kmeans`:**" in text
    index = paths["index"].read_text()
    assert "**Headline (`ari`) against `kmeans`:**" in index and "**P(best) (`ari_unconstrained`):**" in index
    tables = pd.read_parquet(paths["parquet"])
    effects = tables[tables["table"] == "effects"]
    assert set(effects["metric"]) == {"ari", "ari_unconstrained"} and {"p_best", "flags"} <= set(tables["table"]) | {"flags"}
    row = effects[(effects["metric"] == "ari") & (effects["method"] == "pck_means") & (effects["reference"] == "kmeans")
                  & (effects["convention"] == "missing")]
    assert row["verdict"].tolist() == ["ahead"]


# --- the shipped rows ----------------------------------------------------------------------------------------

@pytest.mark.skipif(not SHIPPED.exists(), reason="the shipped rows are not in this checkout")
def test_on_the_shipped_pairs_kmeans_is_behind_the_best():
    """Nemenyi over 22 methods called plain kmeans tied with the best (cop_kmeans) on every kind; paired
    over the 24 data sets the best beats it on 20: behind, not tied."""
    frame = _of_kind(lb.long_frame(pd.read_parquet(SHIPPED), "ari"), "pairs")
    effects = lb_effects.headline_effects(frame, "ari", n_boot=500)["effects"]
    row = _one(effects, "kmeans", reference="best")
    assert row["reference_name"] == "cop_kmeans" and row["n_sets"] == 24
    assert row["verdict"] == "behind" and row["losses"] >= 18 and row["ci_low"] < 0
    # not the mean's interval: since its rewrite (issue 52) cop_kmeans is killed at 10 s on mfeat_pix's larger
    # cells, a loss of that one data set large enough to carry the bootstrap interval of the mean across 0


def test_a_board_of_the_reference_alone_has_an_empty_headline_not_a_crash():
    """One method (the reference) on the board: nothing to compare, an empty table with every column (a
    stranger's folder with one method crashed the report with a KeyError)."""
    values = {(d, "kmeans"): [0.4 + 0.1 * i, 0.4 + 0.1 * i] for i, d in enumerate("abc")}
    result = lb_effects.headline_effects(_frame(values), "ari", n_boot=200)
    assert result["effects"].empty and list(result["effects"].columns) == lb_effects.EFFECT_COLUMNS
    assert set(result["p_best"]["method"]) == {"kmeans"} and (result["p_best"]["p_best"] == 1.0).all()
