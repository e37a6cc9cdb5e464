"""Paired statistics on hand-built result tables: each number against scipy or a hand computation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from ccbench.reporting import _format as rfmt
from ccbench.reporting import verdict as rcompare
from ccbench.reporting import stats
from ccbench.reporting import constraint_utility as rutility
from ccbench.running.cli import main
from ccbench.running.results import write_results

X = "constraints.n_constraints"


def _frame(values: dict, metric: str = "ari", n_constraints=(20,)) -> pd.DataFrame:
    """Rows for ``values[(dataset, method)] = per-trial scores`` (one cell per data set and x)."""
    rows = []
    for (dataset, method), scores in values.items():
        for n in n_constraints:
            for t, score in enumerate(scores):
                rows.append({
                    "dataset.name": dataset, "method.name": method, "constraints.name": "random_pairs",
                    X: n, "noise.name": "none", "x_axis": X, "trial": t,
                    # the pairing key: same for every method of a (data set, x, trial)
                    "trial_seed": hash((dataset, n, t)) & 0xFFFFFFFF,
                    "config_hash": f"{dataset}-{method}-{n}", "status": "ok", "error": None,
                    metric: float(score),
                })
    return pd.DataFrame(rows)


A = np.array([0.81, 0.74, 0.90, 0.66, 0.79, 0.85, 0.71, 0.93, 0.77, 0.80])
B = np.array([0.78, 0.75, 0.83, 0.60, 0.70, 0.86, 0.65, 0.91, 0.69, 0.72])
C = np.array([0.50, 0.92, 0.40, 0.88, 0.55, 0.61, 0.97, 0.45, 0.59, 0.83])


def test_holm_against_a_hand_computation():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06
    np.testing.assert_allclose(stats.holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    # 0.4*2 = 0.8, 0.5*1 = 0.5 -> running max 0.8; NaN is no test (m = 2)
    np.testing.assert_allclose(stats.holm([0.5, np.nan, 0.4]), [0.8, np.nan, 0.8])
    assert stats.holm([0.9, 0.8])[0] == 1.0  # clipped


def test_wilcoxon_p_values_match_scipy_and_holm_runs_over_the_pairs_of_a_cell():
    data = _frame({("iris", "a"): A, ("iris", "b"): B, ("iris", "c"): C})
    data = data.sample(frac=1.0, random_state=0)  # pairing is by trial_seed, never by row order
    tests = stats.paired_tests(data, "ari").set_index(["A", "B"])
    raw = {}
    for a, b, va, vb in (("a", "b", A, B), ("a", "c", A, C), ("b", "c", B, C)):
        ref = scipy.stats.wilcoxon(va, vb)
        raw[(a, b)] = ref.pvalue
        assert tests.loc[(a, b), "p"] == pytest.approx(ref.pvalue)
        assert tests.loc[(a, b), "statistic"] == pytest.approx(ref.statistic)
        assert tests.loc[(a, b), "mean_diff"] == pytest.approx(np.mean(va - vb))
    np.testing.assert_allclose(tests.loc[list(raw), "p_holm"], stats.holm(list(raw.values())))


def test_per_trial_win_tie_loss_with_a_margin():
    # binary fractions, so "at least the margin" is exact: a - b = +0.25 (win), +0.125 (tie), -0.25, -0.5
    data = _frame({("iris", "a"): [0.5, 0.5, 0.5, 0.5], ("iris", "b"): [0.25, 0.375, 0.75, 1.0]})
    rec = stats.paired_tests(data, "ari", margin=0.25).iloc[0]
    assert (rec["wins"], rec["ties"], rec["losses"]) == (1, 1, 2)


def test_win_tie_loss_over_data_sets_follows_the_metric_direction():
    means = pd.DataFrame({"a": [0.80, 0.50, 0.61], "b": [0.70, 0.51, 0.70]}, index=["d1", "d2", "d3"])
    table = stats.win_tie_loss(means, "ari", margin=0.03)
    assert table.loc["a", "b"] == "1/1/1" and table.loc["b", "a"] == "1/1/1"
    means = pd.DataFrame({"a": [1.0, 5.0, 5.0], "b": [3.0, 5.0, 9.0]})  # errors: lower is better
    assert stats.win_tie_loss(means, "errors", margin=0.5).loc["a", "b"] == "2/1/0"


def test_friedman_statistic_matches_scipy_and_the_rank_formula():
    rng = np.random.default_rng(3)
    means = pd.DataFrame(rng.random((6, 4)), columns=list("abcd"))
    res = stats.friedman(means)
    ref = scipy.stats.friedmanchisquare(*(means[c] for c in means))
    assert res["statistic"] == pytest.approx(ref.statistic) and res["pvalue"] == pytest.approx(ref.pvalue)
    n, k = means.shape
    r = stats.average_ranks(means, "ari").to_numpy()
    hand = 12 * n / (k * (k + 1)) * (np.sum(r**2) - k * (k + 1) ** 2 / 4)  # Demšar eq. 3 (no ties)
    assert res["statistic"] == pytest.approx(hand)
    with pytest.raises(ValueError, match="at least 3 methods"):
        stats.friedman(means[["a", "b"]])


def test_critical_difference_matches_demsar_table():
    # Demšar 2006, Table 5(a): q_0.05 = 2.569 for k = 4 and 2.728 for k = 5
    assert stats.critical_difference(4, 10) == pytest.approx(2.569 * np.sqrt(4 * 5 / 60), abs=2e-3)
    assert stats.critical_difference(5, 14) == pytest.approx(2.728 * np.sqrt(5 * 6 / 84), abs=2e-3)


def _better_by_construction(seed=0, n_sets=8, n_trials=10):
    rng = np.random.default_rng(seed)
    values = {}
    for d in range(n_sets):
        base = rng.uniform(0.3, 0.8, n_trials)  # paired: the same constraint sets help or hurt all methods
        values[(f"d{d}", "best")] = base + 0.10 + rng.normal(0, 0.01, n_trials)
        values[(f"d{d}", "mid")] = base + 0.05 + rng.normal(0, 0.01, n_trials)
        values[(f"d{d}", "worst")] = base + rng.normal(0, 0.01, n_trials)
    return _frame(values)


def test_a_method_better_by_construction_is_found_and_ranked_first():
    data = _better_by_construction()
    tests = stats.paired_tests(data, "ari")
    assert (tests["verdict"] == tests["A"] + " better").all()  # sorted names: best < mid < worst
    means = stats.block_means(data, "ari")
    assert list(stats.average_ranks(means, "ari").index) == ["best", "mid", "worst"]
    assert stats.friedman(means)["pvalue"] < 0.01
    fig = stats.cd_diagram(means, "ari")
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "best" in texts and "worst" in texts
    bay = stats.bayesian_signed_rank(means["best"], means["worst"], rope=0.01)
    assert bay["verdict"] == "A better" and bay["p_a_better"] > 0.95


def test_identical_methods_are_rejected_about_alpha_of_the_time():
    rng = np.random.default_rng(1)
    n_cells, n_trials = 300, 15
    values = {}
    for d in range(n_cells):
        base = rng.uniform(0.3, 0.8, n_trials)
        values[(f"d{d}", "a")] = base + rng.normal(0, 0.02, n_trials)
        values[(f"d{d}", "b")] = base + rng.normal(0, 0.02, n_trials)
    tests = stats.paired_tests(_frame(values), "ari")
    rate = float((tests["p"] <= 0.05).mean())
    # binomial(300, 0.05): sd 0.0126; the exact test is slightly conservative
    assert 0.01 <= rate <= 0.09, rate


def test_bayesian_signed_rank_rope_and_direction():
    rng = np.random.default_rng(2)
    a = rng.uniform(0.5, 0.9, 12)
    same = stats.bayesian_signed_rank(a, a + rng.normal(0, 0.001, 12), rope=0.01)
    assert same["verdict"] == "equivalent" and same["p_rope"] > 0.95
    probs = same["p_a_better"] + same["p_rope"] + same["p_b_better"]
    assert probs == pytest.approx(1.0)
    # errors: lower is better, so the smaller values win
    low = stats.bayesian_signed_rank(a, a + 0.2, rope=0.01, greater=False)
    assert low["verdict"] == "A better"
    high = stats.bayesian_signed_rank(a, a + 0.2, rope=0.01, greater=True)
    assert high["verdict"] == "B better"


def test_greater_is_better_reads_the_registry():
    assert stats.greater_is_better("ari") and not stats.greater_is_better("errors")
    assert not stats.greater_is_better("fit_time")


def test_compare_prints_the_verdict_and_refuses_unknown_labels(tmp_path, capsys):
    data = _better_by_construction(n_sets=6)
    text = rcompare.compare(data, "best", "worst", "ari", rope=0.01)
    assert "Across 6 data sets" in text and "Verdict: best better" in text
    with pytest.raises(ValueError, match="no method labelled"):
        rcompare.compare(data, "best", "nope", "ari")
    for i, (_, part) in enumerate(data.groupby("config_hash")):
        write_results(part, tmp_path / "sweep" / str(i) / "results.parquet")
    assert main(["report", str(tmp_path / "sweep"), "--compare", "best", "mid", "--metric", "ari",
                 "--rope", "0.01"]) == 0
    out = capsys.readouterr().out
    assert "best (A) vs mid (B) on ari" in out and "Verdict: best better" in out
    assert not (tmp_path / "sweep" / "report").exists()  # --compare prints, writes nothing
    assert main(["report", str(tmp_path / "sweep"), "--compare", "best", "nope", "--metric", "ari"]) == 2


def test_duplicated_pairs_ask_for_pool():
    data = _frame({("iris", "a"): A, ("iris", "b"): B})
    data = pd.concat([data, data.assign(**{"dataset.seed": 1})]).assign(trial_seed=np.nan)
    with pytest.raises(ValueError, match="pool"):
        stats.paired_frame(data.drop(columns="dataset.seed"), "ari")
    wide = stats.paired_frame(data.fillna({"dataset.seed": 0}), "ari", pool=("dataset.seed",))
    assert wide.shape == (20, 2)


# -- issue 30 item 4: statistics that mislead -----------------------------------------


def test_every_metric_declares_its_direction_and_a_count_is_not_ranked():
    from ccbench import registry

    for spec in registry.list_metrics():
        assert spec.direction in registry.DIRECTIONS, spec.name
        assert spec.bounds[0] < spec.bounds[1], spec.name
    # fewer clusters is not better: SSAP-G "won" scssap_fig3 by finding one cluster
    assert rfmt.direction("n_clusters_found") == "none" and not rfmt.is_ranked("n_clusters_found")
    assert rfmt.direction("n_clusters_error") == "lower"  # the rankable version, |found - classes|
    assert rfmt.direction("modified_rand") == "higher" and rfmt.direction("fit_time") == "lower"
    assert rfmt.direction("n_iter") == "none"  # a column that declares nothing is not ranked
    means = pd.DataFrame({"a": [1.0, 1.0, 2.0], "b": [3.0, 4.0, 3.0], "c": [9.0, 7.0, 8.0]})
    for ranked_only in (stats.average_ranks, stats.win_tie_loss, stats.cd_diagram):
        with pytest.raises(ValueError, match="not ranked"):
            ranked_only(means, "n_clusters_found")
    # a spec must say which way is up: neither spelling warns, contradicting spellings raise
    with pytest.warns(UserWarning, match="declares no direction"):
        assert registry.MetricSpec("m", len).direction == "higher"
    assert registry.MetricSpec("m", len, greater_is_better=False).direction == "lower"
    with pytest.raises(ValueError, match="contradicts"):
        registry.MetricSpec("m", len, greater_is_better=True, direction="lower")
    with pytest.raises(ValueError, match="direction must be one of"):
        registry.MetricSpec("m", len, direction="smaller")


def test_n_clusters_error_is_the_distance_to_the_number_of_classes():
    from ccbench import metrics

    y = [0, 0, 1, 1, 2, 2]
    assert metrics.n_clusters_error(y, [0, 0, 0, 0, 0, 0]) == 2.0  # one cluster for three classes
    assert metrics.n_clusters_error(y, [5, 5, 6, 6, 7, 7]) == 0.0
    assert metrics.n_clusters_error(y, [0, 1, 2, 3, 4, 5]) == 3.0


def test_a_count_gets_per_cell_difference_tests_but_no_better_verdict_and_no_ranks():
    from ccbench.reporting import html as report_html

    rng = np.random.default_rng(0)
    values = {}
    for d in ("iris", "wine", "glass"):
        values[(d, "few")] = np.ones(6)  # one cluster every time
        values[(d, "many")] = rng.integers(3, 6, 6).astype(float)
    data = _frame(values, metric="n_clusters_found")
    tests = stats.paired_tests(data, "n_clusters_found")
    assert set(tests["verdict"]) == {"many higher"} and tests[["wins", "ties", "losses"]].isna().all().all()
    page = report_html.html_page(data, metrics=["n_clusters_found"], x=X)
    assert "is not ranked" in page and "average rank" not in page and "Friedman chi" not in page
    text = rcompare.compare(data[data["trial"] < 5], "few", "many", "n_clusters_found")  # 5: no posterior drawn
    assert "not ranked: differences only" in text and "better" not in text.split("\n", 1)[1]


def test_the_smallest_attainable_p_two_routes():
    # Wilcoxon: the exact null puts 2 / 2**n on the two extreme sign patterns (all +, all -)
    for n in range(1, 16):
        assert stats.wilcoxon_min_p(n) == pytest.approx(2.0 / 2**n)
    assert stats.min_pairs(0.05) == 6  # 2/2**5 = 0.0625 > 0.05 >= 2/2**6
    assert stats.min_pairs(0.05, n_tests=3) == 7  # Holm over 3: 3 * 2/2**6 = 0.094 > 0.05
    assert stats.min_pairs(1.0) == 1  # at a level every p meets, still one pair: a test of none is no test
    # Friedman: every block ranks the methods alike; scipy's p on such blocks is the floor
    for n_blocks, k in ((2, 3), (3, 3), (8, 8)):
        concordant = np.tile(np.arange(k, dtype=float), (n_blocks, 1))
        p = scipy.stats.friedmanchisquare(*concordant.T).pvalue
        assert stats.friedman_min_p(n_blocks, k) == pytest.approx(p)
    assert stats.friedman_min_p(2, 3) > 0.05 > stats.friedman_min_p(3, 3)


def test_too_few_trials_give_no_verdict_and_say_what_p_they_could_reach():
    # 2 paired trials: baycomp alone says P(B better) = 0.97; that is no verdict
    text = rcompare.compare(_frame({("iris", "a"): [0.5, 0.6], ("iris", "b"): [0.7, 0.8]}), "a", "b", "ari")
    assert "Verdict: b better" not in text and not any(line.endswith("B better") for line in text.splitlines())
    row = next(line for line in text.splitlines() if line.startswith("iris"))
    assert row.endswith("too few trials (n = 2 < 6)") and "Verdict: too few trials (n = 2 < 6)" in text
    assert "0.5" in row.split()  # Wilcoxon's smallest p with 2 pairs is 2 / 2**2, printed as 'min p'
    two_trials = stats.bayesian_signed_rank([0.5, 0.6], [0.7, 0.8])
    assert two_trials["p_b_better"] > 0.95 and two_trials["verdict"] == "too few trials"
    # 3 trials: a per-cell Wilcoxon cannot go below 0.25, so no "no difference" either
    rec = stats.paired_tests(_frame({("iris", "a"): [0.5, 0.6, 0.55], ("iris", "b"): [0.7, 0.8, 0.75]}),
                             "ari").iloc[0]
    assert rec["p_min"] == pytest.approx(0.25) and rec["verdict"].startswith("too few trials")
    # Holm over the 3 pairs of a cell: 6 trials are enough for one test (0.031) but not for 3 (0.094)
    shift = np.arange(6) / 100
    three = stats.paired_tests(_frame({("iris", "a"): 0.9 + shift, ("iris", "b"): 0.5 + shift,
                                       ("iris", "c"): 0.1 + shift}), "ari")
    assert three["p_min"].tolist() == [pytest.approx(3 / 32)] * 3 and three["verdict"].str.startswith("too few").all()
    two = stats.paired_tests(_frame({("iris", "a"): 0.9 + shift, ("iris", "b"): 0.5 + shift}), "ari")
    assert two["verdict"].tolist() == ["a better"] and two["p_min"].tolist() == [pytest.approx(1 / 32)]
    # enough trials and data sets: the verdict is given
    # (5 trials per cell: no per-cell verdict, but 6 data sets give one across them)
    text = rcompare.compare(_better_by_construction(n_sets=6, n_trials=5), "best", "worst", "ari")
    # Holm over the 6 cells: 5 trials per cell cannot reach alpha (the need is stated, not the single test's 6)
    assert "Verdict: best better" in text and f"too few trials (n = 5 < {stats.min_pairs(0.05, 6)})" in text
    assert "too few data sets (n = 3 < 6)" in rcompare.compare(_better_by_construction(n_sets=3, n_trials=5),
                                                            "best", "worst", "ari")


def _budget_frame():
    """At x = 0 (no supervision) "a" is far ahead; at every supervised x "b" is ahead."""
    values = {}
    for d in ("d1", "d2", "d3", "d4"):
        for x, (va, vb) in {0: (0.9, 0.1), 50: (0.5, 0.6), 200: (0.5, 0.6)}.items():
            values[(d, "a", x)], values[(d, "b", x)] = va, vb
    rows = []
    for (d, m, x), v in values.items():
        rows.append(_frame({(d, m): [v, v + 0.01, v - 0.01]}, n_constraints=(x,)))
    return pd.concat(rows, ignore_index=True)


def test_ranks_across_data_sets_are_per_x_defaulting_to_the_largest_never_pooling_x0():
    data = _budget_frame()
    means = stats.block_means(data, "ari")
    assert means.attrs["at"] == 200 and means["b"].gt(means["a"]).all()
    assert list(stats.average_ranks(means, "ari").index) == ["b", "a"]  # averaging over x said "a"
    at0 = stats.block_means(data, "ari", at="0")
    assert list(stats.average_ranks(at0, "ari").index) == ["a", "b"]
    assert "Across 4 data sets at x = 200 (the largest x" in rcompare.compare(data, "a", "b", "ari")
    with pytest.raises(ValueError, match="no ok trial at x = 7"):
        stats.block_means(data, "ari", at=7)
    schemes = data.assign(**{X: data[X].map({0: "none", 50: "pairs", 200: "labels"})})
    with pytest.raises(ValueError, match="choose one with --at"):
        stats.block_means(schemes, "ari")
    assert stats.block_means(schemes, "ari", at="pairs").attrs["at"] == "pairs"
    assert stats.block_means(schemes[schemes[X] == "pairs"], "ari").attrs["at"] == "pairs"  # one non-numeric x
    # a budget per data set (NNC: 5 labeled points per class, 2 on ecoli): each at its own largest x
    per_set = data[~((data["dataset.name"] == "d4") & (data[X] == 200))]
    means = stats.block_means(per_set, "ari")
    assert means.attrs["at"] is None and len(means) == 4 and means["b"].gt(means["a"]).all()
    assert "at each data set's largest x" in rcompare.compare(per_set, "a", "b", "ari")


# -- held-out evaluation (evaluate_on) ------------------------------------------------


def test_evaluation_mask_on_a_hand_sized_constraint_set():
    from ccbench import Constraints
    from ccbench.running.harness import evaluation_mask

    labels = np.array([-1, -1, -1, -1, -1, -1, -1, 2])
    cons = Constraints([[0, 1]], [[1, 2], [5, 6]], n_samples=8, labels=labels)
    assert evaluation_mask(cons, 8, "unconstrained").tolist() == [False, False, False, True, True, False, False, False]
    assert evaluation_mask(cons, 8, "all").all()
    with pytest.raises(ValueError, match="evaluate_on must be one of"):
        evaluation_mask(cons, 8, "held_out")
    full = Constraints([[0, 1]], [[2, 3]], n_samples=4)
    with pytest.raises(ValueError, match="left no point to score"):
        evaluation_mask(full, 4, "unconstrained")
    one_free = Constraints([[0, 1]], [[2, 3]], n_samples=5)  # ARI is undefined on one point: said here
    with pytest.raises(ValueError, match="left one point to score"):
        evaluation_mask(one_free, 5, "unconstrained")


def test_evaluate_on_all_keeps_every_existing_cell_hash():
    from ccbench.running.config import cell_hash, stable_hash

    cell = {"dataset": {"name": "iris"}, "method": {"name": "kmeans"}, "constraints": {"name": "none"},
            "noise": {"name": "none"}, "seed": 0}
    old = stable_hash({k: cell[k] for k in ("dataset", "method", "constraints", "noise", "seed")})
    assert cell_hash(cell) == old == cell_hash({**cell, "evaluate_on": "all"})
    assert cell_hash({**cell, "evaluate_on": "unconstrained"}) != old


def test_run_job_scores_only_the_held_out_points(tmp_path):
    from sklearn.metrics import adjusted_rand_score

    from ccbench import registry
    from ccbench.datasets import load_dataset
    from ccbench.running import protocol
    from ccbench.running.harness import run_job

    cell = {"dataset": {"name": "iris"}, "method": {"name": "kmeans", "n_clusters": 3, "n_init": 1},
            "constraints": {"name": "random_pairs", "n_constraints": 30}, "noise": {"name": "none"},
            "n_trials": 2, "metrics": ["ari", "constraint_violations"]}
    every = run_job(cell, out_dir=tmp_path / "all")
    held = run_job({**cell, "evaluate_on": "unconstrained"}, out_dir=tmp_path / "held")
    assert (every["status"] == "ok").all() and (held["status"] == "ok").all()
    assert (every["evaluate_on"] == "all").all() and (every["n_evaluated"] == 150).all()
    assert (held["evaluate_on"] == "unconstrained").all()
    ds = load_dataset("iris")
    for t in range(2):
        rng, _ = protocol.trial_streams(protocol.trial_seed({**cell, "seed": 0}, t))
        cons, _ = protocol.draw_supervision(ds.y, cell["constraints"], cell["noise"], rng)
        touched = np.unique(np.concatenate([cons.must_link.ravel(), cons.cannot_link.ravel()]))
        row_all, row_held = every.loc[t], held.loc[t]
        assert row_held["n_evaluated"] == 150 - len(touched)
        assert row_held["trial_seed"] == row_all["trial_seed"]  # same constraint sets: still paired
        # refit the same clustering (same seeds) and score it by hand both ways
        spec = registry.get_method_spec("kmeans")
        est = protocol.build_estimator(spec, {"n_init": 1}, int(row_all["method_seed"]), n_clusters=3)
        pred = est.fit(ds.X, constraints=cons).labels_
        keep = np.setdiff1d(np.arange(150), touched)
        assert row_all["ari"] == pytest.approx(adjusted_rand_score(ds.y, pred))
        assert row_held["ari"] == pytest.approx(adjusted_rand_score(ds.y[keep], pred[keep]))
        assert row_held["ari"] != row_all["ari"]
        # a constraint metric is about the given pairs: the same either way
        assert row_held["constraint_violations"] == row_all["constraint_violations"]


# -- constraint-set utility ----------------------------------------------------------


def test_coherence_of_hand_placed_segments():
    X = np.array([[0, 0], [1, 0],            # must-link a along the x axis
                  [2, 0], [3, 0],            # cannot-link on a's line, beyond it: no overlap
                  [0.5, -1], [0.5, 1],       # across a: each projects onto the other as one point
                  [0.5, 0.1], [1.5, 0.1]])   # along a, half on it: overlap 0.5 -> incoherent
    ml = [[0, 1]]
    assert rutility.coherence(X, ml, [[2, 3]]) == 1.0
    assert rutility.coherence(X, ml, [[4, 5]]) == 1.0
    assert rutility.coherence(X, ml, [[6, 7]]) == 0.0
    assert rutility.coherence(X, ml, [[2, 3], [4, 5], [6, 7]]) == pytest.approx(2 / 3)
    assert np.isnan(rutility.coherence(X, ml, np.empty((0, 2))))


def test_utility_informativeness_gain_and_share_worse():
    frame = _frame({("iris", "base"): [0.5, 0.5, 0.5, 0.5], ("iris", "cons"): [0.6, 0.4, 0.7, 0.5]})
    # the baseline satisfied every constraint on trials 0 and 1, half of them on trials 2 and 3
    frame["constraint_violations"] = np.where(frame["method.name"] == "base", [0, 0, 0.5, 0.5] * 2, 0.0)
    u = rutility.utility(frame, "base", "ari").iloc[0]
    assert u["method"] == "cons" and u["n_pairs"] == 4
    assert u["informativeness"] == pytest.approx(0.25)
    assert u["gain"] == pytest.approx(0.05) and u["share_worse"] == pytest.approx(0.25)
    uninformative = frame.assign(constraint_violations=0.0)
    assert rutility.utility(uninformative, "base", "ari").iloc[0]["informativeness"] == 0.0
    with pytest.raises(ValueError, match="no method labelled"):
        rutility.utility(frame, "nope", "ari")


def test_utility_end_to_end_informativeness_from_the_baseline_and_coherence_redrawn(tmp_path):
    from ccbench.datasets import load_dataset
    from ccbench.reporting.summary import load
    from ccbench.running import protocol
    from ccbench.running.harness import run_job

    # kmeans ignores the constraints it is given, so its violations are the set's informativeness
    base = {"dataset": {"name": "iris"}, "constraints": {"name": "random_pairs", "n_constraints": 10},
            "noise": {"name": "none"}, "n_trials": 2, "metrics": ["ari", "constraint_violations"]}
    run_job({**base, "method": {"name": "kmeans", "n_clusters": 3, "n_init": 1}}, out_dir=tmp_path / "a")
    run_job({**base, "method": {"name": "cop_kmeans", "n_clusters": 3}}, out_dir=tmp_path / "b")
    data = load(tmp_path)
    u = rutility.utility(data, "kmeans", "ari", with_coherence=True).iloc[0]
    violations = data.loc[data["method.name"] == "kmeans", "constraint_violations"]
    assert u["informativeness"] == pytest.approx(violations.mean())
    ds = load_dataset("iris")
    rng, _ = protocol.trial_streams(protocol.trial_seed({**base, "seed": 0}, 0))
    cons, _ = protocol.draw_supervision(ds.y, base["constraints"], base["noise"], rng)
    coh = rutility.trial_coherence(data[(data["method.name"] == "kmeans") & (data["trial"] == 0)]).iloc[0]
    assert coh == pytest.approx(rutility.coherence(ds.X, cons.must_link, cons.cannot_link))
    out = tmp_path / "report"
    assert main(["report", str(tmp_path / "a"), str(tmp_path / "b"), "--metric", "ari", "--utility", "kmeans",
                 "--out", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "Constraint-set utility against kmeans" in page and "cop_kmeans" in page


def _signed_rank_cases(seed, sizes, decimals_options=(1, 6)):
    rng = np.random.default_rng(seed)
    for n in sizes:
        for decimals in decimals_options:  # coarse values tie, fine ones do not
            a, b = np.round(rng.normal(size=n), decimals), np.round(rng.normal(size=n), decimals)
            b[: n // 3] = a[: n // 3]  # zero differences
            if not np.all(a == b):
                yield a, b


# scipy's permutation route costs 2-15 s a call at n = 11..13 (issue 56: six seeds of it were 85 s of CI), so
# the six seeds cover n <= 10 and one seed two of the largest enumerated sizes, with ties and zeros (the permutation route)
@pytest.mark.parametrize(("seed", "sizes", "decimals_options"),
                         [(s, range(1, 11), (1, 6)) for s in range(6)] + [(6, (11, 13), (1,))])
def test_fast_signed_rank_test_gives_scipys_answer_with_ties_zeros_and_without(seed, sizes, decimals_options):
    """Our enumeration of the 2**n sign patterns (n <= 13) against scipy.stats.wilcoxon, which takes its
    permutation route when there are ties or zeros and its exact distribution otherwise."""
    for a, b in _signed_rank_cases(seed, sizes, decimals_options):
        ours, theirs = stats._wilcoxon(a, b), scipy.stats.wilcoxon(a, b)
        assert ours[0] == pytest.approx(float(theirs.statistic))
        assert ours[1] == pytest.approx(float(theirs.pvalue), rel=1e-12, abs=1e-15), (a - b)
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=60), rng.normal(size=60)  # above 13 pairs: scipy's answer (2**60 patterns are no option)
    assert stats._wilcoxon(a, b) == pytest.approx(tuple(map(float, scipy.stats.wilcoxon(a, b))))


def test_signed_rank_p_value_known_answer():
    # 6 positive differences, no ties: only the all-positive and all-negative of 64 patterns are as extreme
    assert stats._wilcoxon(np.arange(1.0, 7.0), np.zeros(6))[1] == pytest.approx(2 / 64)


def test_one_verdict_rule_never_says_better_above_the_level():
    """Issue 38, item 14: ``--compare`` printed "A better" at a Holm-corrected p = 0.109 (the Bayesian
    posterior decided). A verdict needs p <= alpha AND a mean difference of at least the margin."""
    assert stats.decide(0.2, 0.109, 0.01, 0.03, 0.05) == "tie"
    assert stats.decide(0.2, 0.01, 0.01, 0.03, 0.05) == "A" and stats.decide(-0.2, 0.01, 0.01, 0.03, 0.05) == "B"
    assert stats.decide(0.01, 0.001, 0.001, 0.03, 0.05) == "tie"  # significant but under the margin
    assert stats.decide(0.2, 0.01, 0.0625, 0.03, 0.05) == "too few"
    # 7 paired trials, A ahead on 6 of them: the Bayesian posterior is sure, Wilcoxon is not (p = 0.11)
    rows = []
    for t, (va, vb) in enumerate(zip([0.9, 0.8, 0.85, 0.9, 0.7, 0.8, 0.2], [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.6])):
        for m, v in (("a", va), ("b", vb)):
            rows.append({"dataset.name": "iris", "method.name": m, "constraints.name": "random_pairs",
                         "constraints.n_constraints": 20, "trial": t, "status": "ok", "ari": v})
    data = pd.DataFrame(rows)
    data["method_label"] = data["method.name"]
    text = rcompare.compare(data, "a", "b", "ari", x="constraints.n_constraints")
    from scipy.stats import wilcoxon

    p = wilcoxon(np.array([0.9, 0.8, 0.85, 0.9, 0.7, 0.8, 0.2]) - np.array([0.5] * 6 + [0.6])).pvalue
    assert p > 0.05
    verdicts = [line for line in text.splitlines() if "Verdict:" in line or line.startswith("iris")]
    assert verdicts and not any(line.rstrip(".").endswith(("a better", "A better")) or "Verdict: a better" in line
                                for line in verdicts)
    assert "Verdict: no difference" in text
    tests = stats.paired_tests(data, "ari", x="constraints.n_constraints")
    assert tests["verdict"].tolist() == ["no difference"]
    # significant but under the margin: no verdict either
    small = data.assign(ari=np.where(data["method.name"] == "a", 0.5 + 0.001 * (data["trial"] + 1), 0.5))
    assert stats.paired_tests(small, "ari", x="constraints.n_constraints")["verdict"].tolist() == ["no difference"]


def test_across_data_set_statistics_only_where_the_test_can_reach_its_level():
    """Issue 38, item 14: the per-sweep page drew a CD diagram and ranks "across data sets" for 2 data sets,
    or for 2 noise settings of one data set."""
    from ccbench.reporting import html as report_html

    two = _better_by_construction(n_sets=2)
    page = report_html.html_page(two.assign(method_label=two["method.name"]), metrics=["ari"], x=X)
    assert "Friedman chi²" not in page and "average rank" not in page and "<img" in page  # only the metric plot
    assert page.count("data:image/png") == 1
    assert "with 2 data set(s) and 3 methods the smallest p Friedman" in page
    one = _better_by_construction(n_sets=1)
    noisy = one.assign(**{"noise.name": "constraint_flip", "noise.rate": 0.1})
    both = pd.concat([one.assign(**{"noise.rate": np.nan}), noisy], ignore_index=True)
    page = report_html.html_page(both.assign(method_label=both["method.name"]), metrics=["ari"], x=X)
    assert "Friedman chi²" not in page and page.count("data:image/png") == 1
    assert "1 complete data set(s) from 2 (data set, setting) blocks" in page
    eight = _better_by_construction(n_sets=8)
    page = report_html.html_page(eight.assign(method_label=eight["method.name"]), metrics=["ari"], x=X)
    assert "Friedman chi²" in page and page.count("data:image/png") == 2


def test_block_means_complete_keeps_the_blocks_every_method_ran():
    # rank tests need every method on every block: complete=True drops wine, where b has no trial
    data = _frame({("iris", "a"): A, ("iris", "b"): B, ("wine", "a"): C})
    full = stats.block_means(data, "ari")
    assert list(full.index.get_level_values(0)) == ["iris"] and list(full.columns) == ["a", "b"]
    assert full.loc[full.index[0], "a"] == pytest.approx(A.mean())
    some = stats.block_means(data, "ari", complete=False)
    assert list(some.index.get_level_values(0)) == ["iris", "wine"] and np.isnan(some.iloc[1]["b"])


def test_a_cell_with_one_method_is_skipped_and_the_later_cells_are_still_tested():
    # cells are visited in sorted order: "glass" (one method, no pair to test) comes before "iris"
    data = _frame({("glass", "a"): A, ("iris", "a"): A, ("iris", "b"): B})
    tests = stats.paired_tests(data, "ari")
    assert tests["dataset"].tolist() == ["iris"] and (tests["A"].tolist(), tests["B"].tolist()) == (["a"], ["b"])
    assert tests["p"].iloc[0] == pytest.approx(scipy.stats.wilcoxon(A, B).pvalue)


def test_a_cd_diagram_with_a_very_long_method_label_still_draws_with_capped_margins():
    # a tuned variant's label can be long; its margin is capped at 0.42 a side (else left >= right and
    # matplotlib refuses the layout)
    rng = np.random.default_rng(0)
    long_name = "pck_means+cvcp(folds=3, grid=penalty:0.1,1,10, metric=ari)"
    means = pd.DataFrame(rng.uniform(size=(6, 3)), columns=["kmeans", "ap", long_name])
    fig = stats.cd_diagram(means, "ari")
    assert fig.subplotpars.left == pytest.approx(0.42) and fig.subplotpars.right == pytest.approx(0.58)
    assert long_name in " ".join(t.get_text() for t in fig.axes[0].texts)


def test_a_difference_of_exactly_one_on_every_trial_is_tested_not_taken_for_zero():
    # an integer metric (n_clusters_error) can differ by exactly 1 on every trial: a real, significant
    # difference (scipy's p = 2 / 2^8); only an all-zero difference is "no evidence" (p = 1), at any n
    assert stats._wilcoxon(np.ones(8), np.zeros(8)) == (0.0, pytest.approx(scipy.stats.wilcoxon(np.ones(8)).pvalue))
    assert stats._wilcoxon(np.ones(8), np.zeros(8))[1] == pytest.approx(2 / 2**8)
    assert stats._wilcoxon(np.zeros(20), np.zeros(20)) == (0.0, 1.0)


def test_iman_davenport_by_hand_and_infinite_on_blocks_that_all_agree():
    # Demsar eq. 4: F_F = (n - 1) chi2 / (n (k - 1) - chi2), F-distributed with k - 1, (k - 1)(n - 1) df
    means = pd.DataFrame(np.random.default_rng(3).random((6, 4)), columns=list("abcd"))
    res, chi2 = stats.friedman(means), scipy.stats.friedmanchisquare(*(means[c] for c in means)).statistic
    ff = 5 * chi2 / (6 * 3 - chi2)
    assert res["iman_davenport"] == pytest.approx(ff)
    assert res["pvalue_iman_davenport"] == pytest.approx(scipy.stats.f.sf(ff, 3, 15))
    # two data sets (the fewest) ranking three methods alike: chi2 = n (k - 1), F_F infinite, p 0
    agree = stats.friedman(pd.DataFrame([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], columns=list("abc")))
    assert agree["iman_davenport"] == np.inf and agree["pvalue_iman_davenport"] == 0.0


def test_the_cd_diagram_is_the_same_picture_whatever_the_hash_seed():
    """scikit-posthocs joins a crossbar's points in a set's order, which follows Python's hash seed: the
    same ranks drew other PNG bytes run to run (the leaderboard's three CD figures changed on every
    regeneration). Four processes, four seeds, one picture."""
    import os
    import subprocess
    import sys

    code = ("import hashlib, io, numpy as np, pandas as pd\n"
            "from ccbench.reporting.stats import cd_diagram\n"
            "means = pd.DataFrame(np.random.default_rng(0).random((24, 22)), columns=[f'm_{i:02d}' for i in range(22)])\n"
            "buf = io.BytesIO()\n"
            "cd_diagram(means, 'ari').savefig(buf, format='png', metadata={'Software': None})\n"
            "print(hashlib.md5(buf.getvalue()).hexdigest())\n")
    digests = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": str(seed), "MPLBACKEND": "Agg"}).stdout
               for seed in (1, 2, 3, 4)}
    assert len(digests) == 1, digests
