"""The leaderboard (ccbench.reporting.leaderboard): ranks both ways, win/tie/loss, gains with bootstrap
intervals, the share hurt by supervision, status counts; pages built from a real harness sweep."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from ccbench.reporting import _format as rfmt
from ccbench.reporting import leaderboard as lb
from ccbench import registry
from ccbench.reporting.leaderboard import _frame as lb_frame
from ccbench.reporting.leaderboard import pages as lb_pages
from ccbench.reporting.leaderboard import ranks as lb_ranks
from ccbench.reporting import summary as rsummary
from ccbench.running.cli import main

N = "constraints.n_constraints"


def _rows(values: dict, statuses: dict | None = None, budget0: dict | None = None) -> pd.DataFrame:
    """Harness-like rows: ``values[(dataset, budget, method)]`` = per-trial ari list (random_pairs, no
    noise); ``statuses`` overrides the status of a (dataset, budget, method) cell; ``budget0`` adds
    each method's unconstrained run ({(dataset, method): per-trial list})."""
    statuses = statuses or {}
    rows = []
    cells = [((d, b, m), v) for (d, b, m), v in values.items()]
    cells += [((d, 0, m), v) for (d, m), v in (budget0 or {}).items()]
    for (d, b, m), vals in cells:
        for t, v in enumerate(vals):
            status = statuses.get((d, b, m), "ok")
            rows.append({"dataset.name": d, "method.name": m, "constraints.name": "random_pairs", N: b,
                         "noise.name": "none", "trial": t, "trial_seed": 100 * b + t, "status": status,
                         "ari": v if status == "ok" else np.nan, "fit_time": 0.01 * (1 + t)})
    data = pd.DataFrame(rows)
    data["method_label"] = rfmt.method_labels(data)
    return data


def test_ranks_equal_a_hand_computation():
    # two cells; cop_kmeans, the worst on iris, times out on the second one
    values = {("iris", 20, "pck_means"): [0.9, 0.9], ("iris", 20, "cop_kmeans"): [0.7, 0.7],
              ("iris", 20, "kmeans"): [0.8, 0.8],
              ("wine", 20, "pck_means"): [0.5, 0.5], ("wine", 20, "cop_kmeans"): [0.0, 0.0],
              ("wine", 20, "kmeans"): [0.6, 0.6]}
    frame = lb.long_frame(_rows(values, statuses={("wine", 20, "cop_kmeans"): "timeout"}), "ari")
    ranks = lb.rank_table(lb.cell_means(frame), "ari")
    # (a) iris: pck 1, km 2, cop 3; wine (cop absent): km 1, pck 2
    assert ranks.loc["pck_means", "rank_completed"] == pytest.approx(1.5)
    assert ranks.loc["kmeans", "rank_completed"] == pytest.approx(1.5)
    assert ranks.loc["cop_kmeans", "rank_completed"] == pytest.approx(3.0)
    assert ranks.loc["cop_kmeans", "cells_completed"] == 1
    # (b) wine: cop last (3) although ranked on iris too: 3 and 3
    assert ranks.loc["cop_kmeans", "rank_failed_last"] == pytest.approx(3.0)
    assert ranks.loc["kmeans", "rank_failed_last"] == pytest.approx(1.5)
    means = lb.cell_means(frame)
    by = lb.ranks_by_condition(means, "ari")  # one budget / noise: the same numbers
    assert list(by.columns) == ["20 / none"]
    assert by["20 / none"].to_dict() == pytest.approx(ranks["rank_failed_last"].to_dict())
    # the best method on iris fails on wine: (a) keeps its rank 1, (b) averages 1 and last
    best = {**values, ("iris", 20, "cop_kmeans"): [0.95, 0.95]}
    ranks = lb.rank_table(lb.cell_means(lb.long_frame(_rows(best, statuses={("wine", 20, "cop_kmeans"): "refused"}),
                                                      "ari")), "ari")
    assert ranks.loc["cop_kmeans", "rank_completed"] == pytest.approx(1.0)
    assert ranks.loc["cop_kmeans", "rank_failed_last"] == pytest.approx(2.0)
    assert ranks.loc["pck_means", "rank_completed"] == pytest.approx((2 + 2) / 2)
    # one failed trial of two makes the cell not completed (a mean over survivors is not comparable)
    part = _rows(values)
    part.loc[(part["dataset.name"] == "iris") & (part["method.name"] == "pck_means") & (part["trial"] == 1),
             ["status", "ari"]] = ["error", np.nan]
    ranks = lb.rank_table(lb.cell_means(lb.long_frame(part, "ari")), "ari")
    assert ranks.loc["pck_means", "cells_completed"] == 1
    assert ranks.loc["pck_means", "rank_failed_last"] == pytest.approx((3 + 2) / 2)


def test_ranks_follow_the_metric_direction():
    values = {("iris", 20, "pck_means"): [0.1], ("iris", 20, "kmeans"): [0.3], ("iris", 20, "ap"): [0.2]}
    data = _rows(values).rename(columns={"ari": "constraint_violations"})
    ranks = lb.rank_table(lb.cell_means(lb.long_frame(data, "constraint_violations")), "constraint_violations")
    assert list(ranks.index) == ["pck_means", "ap", "kmeans"]  # lower is better


def _random_sweep(n_trials: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    values = {}
    for d in ("iris", "wine", "glass"):
        for b in (10, 40):
            base = rng.uniform(0.3, 0.6, n_trials)
            for shift, m in ((0.1, "pck_means"), (0.04, "cop_kmeans"), (0.0, "kmeans"), (-0.2, "ap")):
                values[(d, b, m)] = list(base + shift + rng.normal(0, 0.05, n_trials))
    budget0 = {(d, m): list(rng.uniform(0.3, 0.6, n_trials)) for d in ("iris", "wine", "glass")
               for m in ("pck_means", "cop_kmeans", "kmeans", "ap")}
    return _rows(values, statuses={("glass", 40, "cop_kmeans"): "refused"}, budget0=budget0)


def test_win_tie_loss_is_antisymmetric_and_counts_shared_cells():
    frame = lb.long_frame(_random_sweep(10), "ari")
    wtl = lb.win_tie_loss_cells(lb_frame._cells(frame), "ari", margin=0.03)
    w, t, lo = wtl["wins"], wtl["ties"], wtl["losses"]
    assert (w.to_numpy() == lo.T.to_numpy()).all() and (t.to_numpy() == t.T.to_numpy()).all()
    done = lb.completed(lb_frame._cells(frame))
    for a in w.index:
        for b in w.columns:
            if a != b:
                assert w.loc[a, b] + t.loc[a, b] + lo.loc[a, b] == int((done[a] & done[b]).sum())
    # pck_means is 0.1 ahead of kmeans on every trial: a significant win in all 6 cells
    assert w.loc["pck_means", "kmeans"] == 6 and wtl["table"].loc["kmeans", "pck_means"] == "0/0/6"
    assert w.loc["kmeans", "ap"] == 6
    # with a margin above every gap, everything ties
    wide = lb.win_tie_loss_cells(lb_frame._cells(frame), "ari", margin=1.0)
    assert wide["wins"].to_numpy().sum() == 0


def test_win_needs_a_significant_test_where_the_trials_allow_one():
    # 8 trials: A ahead by 0.05 on average but with alternating signs -> Wilcoxon says no: a tie
    a = [0.9, 0.3, 0.9, 0.3, 0.9, 0.3, 0.9, 0.3]
    b = [0.5, 0.6, 0.5, 0.6, 0.5, 0.6, 0.5, 0.6]
    frame = lb.long_frame(_rows({("iris", 20, "pck_means"): a, ("iris", 20, "kmeans"): b}), "ari")
    wtl = lb.win_tie_loss_cells(frame, "ari", margin=0.03)
    assert np.mean(a) - np.mean(b) >= 0.03 and wtl["ties"].loc["pck_means", "kmeans"] == 1


def test_bootstrap_ci_contains_the_mean_and_shrinks_with_more_trials():
    rng = np.random.default_rng(1)
    widths = []
    for n in (10, 40, 160):
        d = rng.normal(0.05, 0.1, n)
        lo, hi = lb.bootstrap_ci(d)
        assert lo <= d.mean() <= hi
        widths.append(hi - lo)
        if n >= 40:  # the normal approximation of the mean: 2 z s / sqrt(n), a second route
            assert hi - lo == pytest.approx(2 * 1.96 * d.std() / np.sqrt(n), rel=0.12)
    assert widths[0] > widths[1] > widths[2]


def test_gains_are_paired_differences_from_the_best_unsupervised_baseline():
    frame = lb.long_frame(_random_sweep(10), "ari")
    best = lb.best_baseline(frame, "ari")
    assert set(best) == {"kmeans"}  # ap is 0.2 worse everywhere
    g = lb.gains(frame, "ari").set_index(["dataset", "budget", "method"])
    cells = lb_frame._cells(frame).set_index(["dataset", "budget", "method", "trial"])["value"].sort_index()
    direct = cells.loc[("wine", 40, "pck_means")] - cells.loc[("wine", 40, "kmeans")]  # paired by trial
    assert g.loc[("wine", 40, "pck_means"), "gain"] == pytest.approx(direct.mean())
    assert (g.loc[("wine", 40, "pck_means"), ["ci_low", "ci_high"]].to_numpy(float)
            == pytest.approx(lb.bootstrap_ci(direct.to_numpy())))
    assert (g["ci_low"] <= g["gain"]).all() and (g["gain"] <= g["ci_high"]).all()
    assert "kmeans" not in g.index.get_level_values("method")  # no gain of an unsupervised method
    assert ("glass", 40, "cop_kmeans") not in g.index  # refused: no trial to compare
    more = lb.gains(lb.long_frame(_random_sweep(60), "ari"), "ari")
    width = lambda t: (t["ci_high"] - t["ci_low"]).mean()  # noqa: E731
    assert width(more) < width(g.reset_index())


def test_a_tuned_unsupervised_variant_is_no_baseline():
    # kmeans+cvcp chose k from the constraints: supervised, however much better it is than kmeans
    values = {("iris", 20, "kmeans+cvcp"): [0.9] * 6, ("iris", 20, "kmeans"): [0.5] * 6,
              ("iris", 20, "pck_means"): [0.7] * 6}
    data = _rows(values)
    data["tune"] = [m.split("+")[1] if "+" in m else "none" for m in data["method.name"]]
    data["method.name"] = data["method.name"].str.split("+").str[0]
    data["method_label"] = rfmt.method_labels(data)
    frame = lb.long_frame(data, "ari")
    assert lb.best_baseline(frame, "ari").to_dict() == {"iris": "kmeans"}
    g = lb.gains(frame, "ari").set_index("method")
    assert g.loc["pck_means", "gain"] == pytest.approx(0.2)


def test_gains_fall_back_to_the_baselines_run_of_another_cell_by_trial():
    # kmeans fitted once per data set (its unconstrained cell only): pck_means' cell pairs each trial with
    # kmeans' same trial there (pandas 3's to_numpy views are read-only: the fallback must copy)
    kmeans = [0.5, 0.6, 0.4, 0.5, 0.7, 0.3]
    values = {("iris", 20, "pck_means"): [0.9] * 6}
    frame = lb.long_frame(_rows(values, budget0={("iris", "kmeans"): kmeans}), "ari")
    g = lb.gains(frame, "ari").set_index(["dataset", "budget", "method"])
    assert g.loc[("iris", 20, "pck_means"), "n_pairs"] == 6
    assert g.loc[("iris", 20, "pck_means"), "gain"] == pytest.approx(0.9 - np.mean(kmeans))


def test_hurt_share_equals_a_direct_count():
    data = _random_sweep(10)
    frame = lb.long_frame(data, "ari")
    hurt = lb.hurt_share(frame, "ari").set_index("method")
    ok = data[data["status"] == "ok"]
    for m in ("pck_means", "cop_kmeans", "kmeans", "ap"):
        own = ok[(ok["method.name"] == m)]
        ref = own[own[N] == 0].set_index(["dataset.name", "trial"])["ari"]
        sup = own[own[N] > 0]
        worse = sum(v < ref[(d, t)] for d, t, v in zip(sup["dataset.name"], sup["trial"], sup["ari"]))
        assert hurt.loc[m, "n_trials"] == len(sup)
        assert hurt.loc[m, "n_worse"] == worse
        assert hurt.loc[m, "share_worse"] == pytest.approx(worse / len(sup))


def test_status_counts_account_for_every_trial_and_cell():
    data = _random_sweep(3)
    data = data[~((data["dataset.name"] == "iris") & (data[N] == 10) & (data["method.name"] == "ap"))]  # never run
    frame = lb.long_frame(data, "ari")
    counts = lb.status_counts(frame)
    assert set(counts.index) == set(data["method_label"])
    statuses = [c for c in counts.columns if c != "cells_missing"]
    per_method = data.groupby("method_label").size()
    assert (counts[statuses].sum(axis=1) == per_method.reindex(counts.index)).all()
    assert counts.loc["cop_kmeans", "refused"] == 3 and counts.loc["ap", "cells_missing"] == 1
    assert counts["cells_missing"].drop("ap").eq(0).all()


def test_tuned_rows_are_their_own_method_label():
    data = _rows({("iris", 20, "pck_means"): [0.5, 0.6]})
    tuned = data.assign(tune="cvcp", ari=data["ari"] + 0.1)
    both = pd.concat([data.assign(tune="none"), tuned], ignore_index=True)
    labels = rfmt.method_labels(both)
    assert sorted(labels.unique()) == ["pck_means", "pck_means+cvcp"]
    assert "kmeans" == rfmt.method_labels(_rows({("iris", 20, "kmeans"): [0.5]})).iloc[0]  # no tune column


def test_peak_rss_measures_the_fit_not_the_process_lifetime():
    from ccbench.running import harness

    big = bytearray(150_000_000)  # a peak before the fit must not count
    del big
    before = harness._reset_peak_rss()
    if np.isnan(before):
        pytest.skip("no /proc/self/clear_refs here")
    block = np.ones(100_000_000 // 8)  # 100 MB touched during the "fit"
    out = harness._peak_rss(before)
    del block
    assert 90 <= out["fit_rss_mb"] < 140
    assert out["peak_rss_mb"] >= out["fit_rss_mb"]


def test_an_unranked_metric_or_a_sweep_without_budgets_is_refused():
    data = _rows({("iris", 20, "kmeans"): [0.5]}).assign(n_clusters_found=3)
    with pytest.raises(ValueError, match="not ranked"):
        lb.long_frame(data, "n_clusters_found")
    with pytest.raises(ValueError, match="no leaderboard cells"):
        lb.write_leaderboard(_rows({}, budget0={("iris", "kmeans"): [0.5]}), "/tmp/unused-lb", metric="ari")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    from leaderboard_fixture import make_results

    return make_results(tmp_path_factory.mktemp("lbsweep"))


@pytest.mark.slow
def test_pages_from_a_real_sweep(sweep, tmp_path, capsys):
    out = tmp_path / "lb"
    assert main(["report", str(sweep), "--leaderboard", "--metric", "ari", "--out", str(out)]) == 0
    # the cells' paper block asks for the leaderboard on nmi: plain `ccbench report` writes it
    assert main(["report", str(sweep), "--out", str(tmp_path / "by_config")]) == 0
    assert "`nmi`" in (tmp_path / "by_config" / "pairs.md").read_text()
    assert "`ari`" in (out / "pairs.md").read_text()
    data = rsummary.load(sweep)
    assert {"peak_rss_mb", "fit_rss_mb"} <= set(data.columns)
    assert (data.loc[data["status"] == "ok", "peak_rss_mb"] > 0).all()
    for kind in ("pairs", "labels"):
        md = (out / f"{kind}.md").read_text()
        page = (out / f"{kind}.html").read_text(encoding="utf-8")
        for section in ("1. Average ranks", "2. Win/tie/loss", "3. Gain over the best", "4. Did the supervision",
                        "5. What noise does", "6. Cost beside quality", "7. Scale honesty"):
            assert section in md and section in page
        assert "http://" not in page and "https://" not in page and "<script" not in page
        images = re.findall(r'src="data:image/png;base64,', page)
        # gains, noise, quality vs time; no CD diagram: 2 data sets as Friedman blocks cannot reach alpha
        assert len(images) == 3 and "No CD diagram: with 2 data sets" in md
        for name in re.findall(r"!\[[^]]*\]\(([^)]+)\)", md):
            assert (out / name).exists()
    tables = pd.read_parquet(out / "leaderboard.parquet")
    status = tables[(tables["table"] == "status") & (tables["kind"] == "pairs")].set_index("method")
    assert status.loc["ap", "refused"] > 0 and status.loc["cop_kmeans", "timeout"] == 2
    ranks = tables[(tables["table"] == "ranks") & (tables["kind"] == "pairs")].set_index("method")
    # refused on wine (a prediction): missing there, not ranked last; ranked last only under "all failures last"
    assert ranks.loc["ap", "cells_completed"] == 4 and ranks.loc["ap", "cells"] == 4
    assert ranks.loc["ap", "cells_all"] == 8
    assert ranks.loc["cop_kmeans", "cells_completed"] == 7
    assert "pck_means" in set(tables.loc[tables["table"] == "gains", "method"])


def test_a_page_without_a_cd_diagram_says_why(tmp_path):
    # two methods only: ranks and win/tie/loss, but no Friedman test or CD diagram
    data = _rows({("iris", 20, "pck_means"): [0.9, 0.8], ("iris", 20, "kmeans"): [0.5, 0.6],
                  ("wine", 20, "pck_means"): [0.9, 0.8], ("wine", 20, "kmeans"): [0.5, 0.6]},
                 statuses={("wine", 20, "kmeans"): "error"})
    paths = lb.write_leaderboard(data, tmp_path, metric="ari")
    text = paths["pairs_md"].read_text()
    assert "No CD diagram: it needs at least 3 methods and 2 data sets." in text
    # kmeans completed iris only, 0.3 behind there, but over 2 trials no test can reach alpha: a tie (the
    # one verdict rule: no win without a significant test); wine is no shared cell
    assert "| kmeans |  | 0/1/0 |" in text and "| pck_means | 0/1/0 |  |" in text
    assert "labels_md" not in paths  # no labeled_subsets rows: no labels page


def test_a_variant_run_on_some_cells_is_ranked_there_only():
    """A variant the experiment runs on one cell of two (a tuned one) is not ranked last on the
    cell it was never asked for; a failure on a cell it was run on still ranks last."""
    values = {("iris", 20, "pck_means"): [0.9, 0.9], ("iris", 20, "kmeans"): [0.8, 0.8],
              ("iris", 20, "cop_kmeans"): [0.95, 0.95],
              ("wine", 20, "pck_means"): [0.5, 0.5], ("wine", 20, "kmeans"): [0.6, 0.6]}
    frame = lb.long_frame(_rows(values), "ari")
    means = lb.cell_means(frame)
    attempted = lb.attempted_cells(frame).reindex_like(means).fillna(False).astype(bool)
    ranks = lb.rank_table(means, "ari", attempted)
    assert ranks.loc["cop_kmeans", "rank_failed_last"] == pytest.approx(1.0)
    assert ranks.loc["cop_kmeans", "cells"] == 1 and ranks.loc["kmeans", "cells"] == 2
    assert ranks.loc["kmeans", "rank_failed_last"] == pytest.approx((3 + 1) / 2)
    # without the attempted mask the missing wine cell counts as a failure (ranked last there)
    assert lb.rank_table(means, "ari").loc["cop_kmeans", "rank_failed_last"] == pytest.approx((1 + 3) / 2)
    timed_out = lb.long_frame(_rows(values, statuses={("iris", 20, "cop_kmeans"): "timeout"}), "ari")
    means = lb.cell_means(timed_out)
    attempted = lb.attempted_cells(timed_out).reindex_like(means).fillna(False).astype(bool)
    assert lb.rank_table(means, "ari", attempted).loc["cop_kmeans", "rank_failed_last"] == pytest.approx(3.0)


def test_a_variant_skipped_in_every_trial_is_no_entry():
    """``kmeans+cvcp`` (nothing to tune: every trial skipped) is not ranked, not even last."""
    values = {("iris", 20, "pck_means"): [0.9, 0.9], ("iris", 20, "kmeans"): [0.8, 0.8],
              ("iris", 20, "cop_kmeans"): [0.7, 0.7]}
    data = _rows(values, statuses={("iris", 20, "cop_kmeans"): "skipped"})
    cells = lb_frame._cells(lb.long_frame(data, "ari"))
    assert set(cells["method"]) == {"pck_means", "kmeans"}
    data = _rows(values, statuses={("iris", 20, "cop_kmeans"): "timeout"})  # a failure still ranks last
    assert "cop_kmeans" in set(lb_frame._cells(lb.long_frame(data, "ari"))["method"])


def test_sweep_coverage_counts_the_grid_against_complete_jobs(tmp_path):
    """A partial sweep says how much of its grid is done (suites expanded, command-line sweeps counted)."""
    import yaml

    conf = {"hydra": {"sweeper": {"params": {"dataset": "iris,wine", "method": "kmeans"}},
                      "overrides": {"task": ["method=kmeans,ap", "n_trials=2"], "hydra": []}}}
    (tmp_path / "multirun.yaml").write_text(yaml.safe_dump(conf))
    rows = pd.DataFrame({"config_hash": ["a", "a", "b", "b", "c"], "trial": [0, 1, 0, 1, 0], "n_trials": 2,
                         "dataset.name": ["iris", "iris", "iris", "iris", "wine"]})
    text = lb.sweep_coverage([tmp_path], rows)
    assert "2 of the 4 jobs of the experiment's grid" in text and "incomplete" in text
    assert "Data sets complete: 1 of 2; not started: wine." in text  # c has one trial of two: not done
    partial = pd.concat([rows, pd.DataFrame({"config_hash": ["c"], "trial": [1], "n_trials": 2,
                                             "dataset.name": ["wine"]})])
    assert "partly done: wine (1 of 2 jobs)" in lb.sweep_coverage([tmp_path], partial)
    # two partial sets are named in one order whatever the set of jobs iterates in (it follows the hash seed)
    both = pd.concat([partial.assign(trial=partial["trial"].where(partial["config_hash"] != "b", 0)).drop_duplicates()])
    assert "partly done: iris (1 of 2 jobs), wine (1 of 2 jobs)" in lb.sweep_coverage([tmp_path], both)
    done = pd.concat([rows, pd.DataFrame({"config_hash": ["c", "d", "d"], "trial": [1, 0, 1], "n_trials": 2,
                                          "dataset.name": "wine"})])
    assert "4 of the 4 jobs" in lb.sweep_coverage([tmp_path], done)
    conf["hydra"]["sweeper"]["params"]["dataset"] = "uci_all"
    (tmp_path / "multirun.yaml").write_text(yaml.safe_dump(conf))
    # 48 jobs of uci_all's grid, plus the 4 iris/wine jobs found in the rows outside it
    assert "of the 52 jobs" in lb.sweep_coverage([tmp_path], done)
    assert lb.sweep_coverage([tmp_path / "nowhere"], done) is None
    # the last command resumed wine alone: iris's jobs, outside its grid, are still jobs of the experiment
    # (issue 38, item 12: the experiment's grid, not the last command's)
    conf["hydra"]["sweeper"]["params"]["dataset"] = "iris,wine"
    conf["hydra"]["overrides"]["task"] += ["dataset=wine"]
    (tmp_path / "multirun.yaml").write_text(yaml.safe_dump(conf))
    text = lb.sweep_coverage([tmp_path], done)
    assert "4 of the 4 jobs of the experiment's grid have every trial recorded (100%)." in text
    assert "and 2 job(s) found in the rows outside them" in text
    # a resume that overrides a key naming no job (rerun_errors, n_trials) adds no job: the union of the
    # two commands' grids was twice the experiment's (12,672 of a 6,336-job leaderboard)
    resumed = {**conf, "hydra": {**conf["hydra"], "overrides": {
        "task": ["method=kmeans,ap", "n_trials=3", "rerun_errors=false"], "hydra": []}}}
    (tmp_path / ".ccbench_grids").mkdir()
    (tmp_path / ".ccbench_grids" / "resume.yaml").write_text(yaml.safe_dump(resumed))
    assert "4 of the 4 jobs of the experiment's grid" in lb.sweep_coverage([tmp_path], done)
    (tmp_path / ".ccbench_grids" / "resume.yaml").unlink()
    # a grid file that is no Hydra multirun.yaml (its sweeper not a mapping) is left out with a warning
    (tmp_path / "multirun.yaml").write_text(yaml.safe_dump({"hydra": {"sweeper": "basic", "overrides": {}}}))
    with pytest.warns(UserWarning, match=r"not a Hydra multirun.yaml \(AttributeError"):
        assert lb.sweep_coverage([tmp_path], done) is None


def test_sweep_coverage_knows_a_method_config_by_the_method_it_runs(tmp_path):
    # method=ap_k runs ap (given k): its rows say method.name=ap and are the grid's, not "outside" it
    import yaml

    conf = {"hydra": {"sweeper": {"params": {"dataset": "iris", "method": "ap_k,kmeans,../../x"}},
                      "overrides": {"task": [], "hydra": []}}}
    (tmp_path / "multirun.yaml").write_text(yaml.safe_dump(conf))
    rows = pd.DataFrame({"config_hash": ["a", "a", "b", "b"], "trial": [0, 1, 0, 1], "n_trials": 2,
                         "dataset.name": "iris", "method.name": ["ap", "ap", "kmeans", "kmeans"]})
    text = lb.sweep_coverage([tmp_path], rows)
    assert "2 of the 3 jobs of the experiment's grid" in text and "outside" not in text


def test_sweep_coverage_counts_a_re_run_of_another_grids_cells_once(tmp_path):
    # leaderboard_budget6x runs the board's failed cells again at 6x the budget: the same jobs (one config_hash),
    # so beside the board's grid it adds none (the regeneration read 7,632 of 9,242 jobs: "incomplete")
    import yaml

    board, rerun = tmp_path / "board", tmp_path / "rerun"
    for folder, experiment, extra in ((board, "leaderboard", {}), (rerun, "leaderboard_budget6x", {"seed": "0"})):
        folder.mkdir()
        conf = {"hydra": {"sweeper": {"params": {"dataset": "iris,wine", "method": "kmeans", **extra}},
                          "overrides": {"task": [f"experiment={experiment}"], "hydra": []}}}
        (folder / "multirun.yaml").write_text(yaml.safe_dump(conf))
    rows = pd.DataFrame({"config_hash": ["a", "a", "b", "b"], "trial": [0, 1, 0, 1], "n_trials": 2,
                         "dataset.name": ["iris", "iris", "wine", "wine"]})
    assert "2 of the 2 jobs of the experiment's grid" in lb.sweep_coverage([board, rerun], rows)
    # the re-run's own folder alone: its grid is what was asked
    assert "2 of the 2 jobs" in lb.sweep_coverage([rerun], rows)
    # a config's rerun_of names the experiment itself (grids written once the key existed)
    conf = yaml.safe_load((rerun / "multirun.yaml").read_text())
    conf["hydra"]["overrides"]["task"] = ["experiment=mine"]
    (rerun / "multirun.yaml").write_text(yaml.safe_dump(conf))
    assert "2 of the 4 jobs" in lb.sweep_coverage([board, rerun], rows)
    conf["rerun_of"] = "leaderboard"
    (rerun / "multirun.yaml").write_text(yaml.safe_dump(conf))
    assert "2 of the 2 jobs" in lb.sweep_coverage([board, rerun], rows)


def test_unbeaten_cells_and_sets_by_hand():
    # 6 trials so the Wilcoxon test can decide; pck beats cobs on iris (every trial by 0.2), nothing beats
    # cobs on wine (kmeans ties it within the margin), cop_kmeans loses everywhere
    up = [0.0, 0.01, 0.02, 0.03, 0.04, 0.05]
    values = {("iris", 20, "pck_means"): [0.9 + u for u in up], ("iris", 20, "cobs"): [0.7 + u for u in up],
              ("iris", 20, "cop_kmeans"): [0.1 + u for u in up],
              ("wine", 20, "pck_means"): [0.5 + u for u in up], ("wine", 20, "cobs"): [0.6 + u for u in up],
              ("wine", 20, "cop_kmeans"): [0.59 + u for u in up]}
    wtl = lb.win_tie_loss_cells(lb_frame._cells(lb.long_frame(_rows(values), "ari")), "ari")
    beaten = wtl["beaten_by"]
    assert beaten.loc[("iris", "", 20.0, "none")].to_dict() == {"cobs": 1, "cop_kmeans": 2, "pck_means": 0}
    assert beaten.loc[("wine", "", 20.0, "none")].to_dict() == {"cobs": 0, "cop_kmeans": 0, "pck_means": 2}
    table = lb.unbeaten(beaten)
    assert table.loc["cobs"].to_dict() == {"cells": 2, "unbeaten": 1, "share_unbeaten": 0.5, "unbeaten_sets": "wine"}
    assert table.loc["pck_means", "unbeaten_sets"] == "iris"
    assert table.loc["cop_kmeans", "unbeaten"] == 1  # ties cobs on wine: within the margin


def test_noise_effect_pairs_each_noisy_trial_with_its_noiseless_twin():
    values = {("iris", 20, "pck_means"): [0.9, 0.8, 0.7], ("iris", 20, "cop_kmeans"): [0.6, 0.6, 0.6]}
    data = _rows(values)
    noisy = data.copy()
    noisy["noise.name"], noisy["noise.rate"] = "constraint_flip", 0.1
    noisy["ari"] = noisy["ari"] - np.where(noisy["method.name"] == "pck_means", [0.3, 0.1, 0.2] * 2, 0.0)[: len(noisy)]
    effect = lb.noise_effect(lb.long_frame(pd.concat([data, noisy], ignore_index=True), "ari"), "ari")
    pck = effect.set_index("method").loc["pck_means"]
    assert pck["change"] == pytest.approx(-0.2) and pck["n_pairs"] == 3 and pck["noise"] == "constraint_flip=0.1"
    assert pck["ci_low"] <= -0.2 <= pck["ci_high"] and pck["ci_high"] < 0
    assert pck["family"] == "kmeans"
    cop = effect.set_index("method").loc["cop_kmeans"]
    assert cop["change"] == pytest.approx(0.0) and cop["ci_low"] == pytest.approx(0.0)
    # lower-is-better metrics flip the sign: more violations under noise is a negative change
    flipped = lb.noise_effect(lb.long_frame(pd.concat([data, noisy], ignore_index=True).rename(
        columns={"ari": "constraint_violations"}), "constraint_violations"), "constraint_violations")
    assert flipped.set_index("method").loc["pck_means", "change"] == pytest.approx(0.2)


def test_noise_effect_leaves_out_the_unsupervised_baselines():
    values = {("iris", 20, "pck_means"): [0.9, 0.8], ("iris", 20, "kmeans"): [0.6, 0.6]}
    data = _rows(values)
    noisy = data.assign(**{"noise.name": "constraint_flip", "noise.rate": 0.1})
    effect = lb.noise_effect(lb.long_frame(pd.concat([data, noisy], ignore_index=True), "ari"), "ari")
    assert effect["method"].tolist() == ["pck_means"]


def _labels_rows(values: dict) -> pd.DataFrame:
    data = _rows(values).drop(columns=[N])
    data["constraints.name"], data["constraints.per_class"] = "labeled_subsets", 5
    data["method_label"] = rfmt.method_labels(data)
    return data


def test_a_labels_only_sweep_gets_its_labels_page(tmp_path):
    data = _labels_rows({("iris", 5, "pck_means"): [0.9], ("iris", 5, "kmeans"): [0.5]})
    paths = lb.write_leaderboard(data, tmp_path, metric="ari")
    assert "labels_md" in paths and "pairs_md" not in paths


def test_a_failure_ranks_last_on_a_lower_is_better_metric_above_one():
    values = {("iris", 20, "pck_means"): [4.0], ("iris", 20, "kmeans"): [7.0], ("iris", 20, "cop_kmeans"): [0.0],
              ("wine", 20, "pck_means"): [3.0], ("wine", 20, "kmeans"): [9.0], ("wine", 20, "cop_kmeans"): [0.0]}
    data = _rows(values, statuses={("wine", 20, "cop_kmeans"): "timeout"}).rename(
        columns={"ari": "constraint_violations"})
    ranks = lb.rank_table(lb.cell_means(lb.long_frame(data, "constraint_violations")), "constraint_violations")
    assert ranks.loc["cop_kmeans", "rank_failed_last"] == pytest.approx((1 + 3) / 2)
    assert ranks.loc["kmeans", "rank_failed_last"] == pytest.approx((3 + 2) / 2)


def test_with_too_few_trials_the_margin_alone_gives_no_win():
    values = {("iris", 20, "pck_means"): [0.90], ("iris", 20, "kmeans"): [0.86], ("iris", 20, "ap"): [0.88]}
    wtl = lb.win_tie_loss_cells(lb.long_frame(_rows(values), "ari"), "ari", margin=0.03)
    # 0.04 >= margin, but no test can reach alpha with one pair: no verdict, a tie (issue 38, item 14)
    assert wtl["wins"].loc["pck_means", "kmeans"] == 0 and wtl["ties"].loc["pck_means", "kmeans"] == 1
    assert wtl["ties"].loc["pck_means", "ap"] == 1 and wtl["ties"].loc["ap", "kmeans"] == 1  # 0.02 < margin


def test_bootstrap_interval_narrows_with_the_level_and_holds_the_mean():
    d = np.random.default_rng(0).normal(0.1, 0.2, size=40)
    wide, narrow = lb.bootstrap_ci(d, level=0.95), lb.bootstrap_ci(d, level=0.5)
    assert wide[0] < narrow[0] < d.mean() < narrow[1] < wide[1]
    assert lb.bootstrap_ci([0.2, 0.2, 0.2]) == pytest.approx((0.2, 0.2))
    assert np.isnan(lb.bootstrap_ci([np.nan])).all()


def test_page_text_names_the_direction_the_failures_and_the_partial_variants(tmp_path):
    values = {("iris", 20, m): v for m, v in (("pck_means", [1.0, 2.0]), ("kmeans", [3.0, 3.0]), ("ap", [2.0, 2.0]))}
    values |= {("wine", 20, m): v for m, v in (("pck_means", [1.0, 1.0]), ("kmeans", [2.0, 2.0]), ("ap", [0.0, 1.0]))}
    values[("iris", 20, "cop_kmeans")] = [5.0, 5.0]  # on one cell only: left out of the CD diagram
    values |= {(d, 20, "rn_sdp"): [4.0, 4.0] for d in ("iris", "wine")}  # no unconstrained reference: named
    data = _rows(values, statuses={("wine", 20, "ap"): "error"}).rename(columns={"ari": "constraint_violations"})
    data.loc[data["status"] == "error", "error"] = "RuntimeError: the solver exploded"
    text = lb.write_leaderboard(data, tmp_path, metric="constraint_violations")["pairs_md"].read_text()
    assert "(lower is better)" in text
    assert "the solver exploded" in text and "No failed trial." not in text
    assert "left out (run on some cells only, ranked in the table above on those): `cop_kmeans`." in text
    assert "Left out, as their run without supervision is not the method: `rn_sdp`: with no constraints" in text
    assert re.search(r"\| method +\| quality +\| coverage +\| rank_failed_last +\|", text)  # section 6's columns
    plain = lb.write_leaderboard(data[data["method.name"] != "rn_sdp"], tmp_path / "plain",
                                 metric="constraint_violations", command="ccbench report runs")
    assert "Left out, as their run" not in plain["pairs_md"].read_text()
    assert "Generated by `ccbench report runs`." in plain["index"].read_text()  # and only with a command:
    assert "Generated by" not in (tmp_path / "index.md").read_text()


def test_bootstrap_interval_has_the_normal_width_on_a_large_sample():
    d = np.random.default_rng(1).normal(0.0, 1.0, size=400)
    low, high = lb.bootstrap_ci(d, level=0.95)
    half_width = (high - low) / 2 / (d.std() / np.sqrt(d.size))  # in standard errors of the mean
    assert half_width == pytest.approx(1.96, rel=0.05)  # seed 1: 1.93; z = 2.13 (a 96.7 % level) fails


def test_ranks_by_condition_follow_the_metric_direction():
    values = {("iris", 20, "pck_means"): [1.0], ("iris", 20, "kmeans"): [3.0], ("iris", 20, "ap"): [2.0]}
    data = _rows(values).rename(columns={"ari": "constraint_violations"})
    by = lb.ranks_by_condition(lb.cell_means(lb.long_frame(data, "constraint_violations")), "constraint_violations")
    assert by["20 / none"].to_dict() == {"ap": 2.0, "kmeans": 3.0, "pck_means": 1.0}


def test_the_page_ranks_a_partial_variant_on_its_own_cells_only(tmp_path):
    values = {("iris", 20, m): v for m, v in (("pck_means", [0.9]), ("kmeans", [0.5]), ("ap", [0.7]))}
    values |= {("wine", 20, m): v for m, v in (("pck_means", [0.6]), ("kmeans", [0.8]), ("ap", [0.7]))}
    values[("iris", 20, "cop_kmeans")] = [0.2]
    lb.write_leaderboard(_rows(values), tmp_path, metric="ari")
    tables = pd.read_parquet(tmp_path / "leaderboard.parquet")
    ranks = tables[tables["table"] == "ranks"].set_index("method")
    assert ranks.loc["cop_kmeans", "cells"] == 1 and ranks.loc["cop_kmeans", "rank_failed_last"] == 4.0
    assert ranks.loc["kmeans", "rank_failed_last"] == pytest.approx((3 + 1) / 2)


def test_the_cd_diagram_keeps_the_main_methods_and_leaves_out_an_unfinished_data_set(tmp_path):
    values = {(d, 20, m): [v + 0.1 * i] for i, d in enumerate(("iris", "wine", "glass"))
              for m, v in (("pck_means", 0.8), ("kmeans", 0.6), ("ap", 0.4), ("cop_kmeans", 0.7))}
    values[("iris", 20, "srcp")] = [0.9]  # a variant run on one cell only
    values = {k: v for k, v in values.items() if not (k[0] == "glass" and k[2] in ("ap", "cop_kmeans"))}  # unfinished
    frame = lb.long_frame(_rows(values), "ari")
    cells = lb_frame._cells(frame)
    means = lb.cell_means(cells)
    attempted = lb.attempted_cells(cells).reindex_like(means).fillna(False).astype(bool)
    core, cd_cells = lb_ranks._cd_selection(attempted)
    assert sorted(core.index[core]) == ["ap", "cop_kmeans", "kmeans", "pck_means"]
    assert sorted(cd_cells.index[cd_cells].get_level_values("dataset")) == ["iris", "wine"]
    text = lb.write_leaderboard(_rows(values), tmp_path, metric="ari")["pairs_md"].read_text()
    assert "leaves out 1 cell(s) where not every one of those methods was run (an unfinished data set: glass)" in text
    tables = pd.read_parquet(tmp_path / "leaderboard.parquet")  # iris and wine rank the four methods alike
    ranks = tables[tables["table"] == "cd_blocks"].set_index("method")["rank_over_data_sets"]
    assert ranks.to_dict() == {"pck_means": 1.0, "cop_kmeans": 2.0, "kmeans": 3.0, "ap": 4.0}
    # 2 data sets as blocks: Friedman cannot reach alpha with 4 methods, so no CD diagram, and the page says why
    assert ("No CD diagram: with 2 data sets and 4 methods the smallest p Friedman's test can give is 0.112, "
            "above alpha = 0.05.") in text


def test_dataset_blocks_are_ranks_oriented_as_the_metric():
    # The Friedman blocks of the CD diagram: a data set's average rank per method, negated for a
    # higher-is-better metric so that a larger block value is better on both kinds of metric.
    values = {(d, b, m): [v + 0.01 * b] for d in ("iris", "wine") for b in (10, 20)
              for m, v in (("pck_means", 0.8), ("ap", 0.6), ("kmeans", 0.4))}
    means = lb.cell_means(lb.long_frame(_rows(values), "ari"))
    blocks = lb_ranks.dataset_blocks(means, "ari")
    assert blocks.loc["iris"].to_dict() == {"ap": -2.0, "kmeans": -3.0, "pck_means": -1.0}
    low = _rows(values).rename(columns={"ari": "constraint_violations"})
    blocks = lb_ranks.dataset_blocks(lb.cell_means(lb.long_frame(low, "constraint_violations")),
                                     "constraint_violations")
    assert blocks.loc["wine"].to_dict() == {"ap": 2.0, "kmeans": 1.0, "pck_means": 3.0}


def test_a_grid_files_value_is_its_choice_or_the_config_value_at_the_dotted_path():
    # sweep coverage identifies a job by the values a grid file's config had for the keys another grid
    # sweeps: a group's choice (hydra.runtime.choices) or the scalar at the dotted path
    from ccbench.reporting.leaderboard import coverage as pages

    conf = {"hydra": {"runtime": {"choices": {"dataset": "wine"}}},
            "constraints": {"name": "random_pairs", "n_constraints": 40}, "seed": 3}
    assert pages._value_in(conf, "dataset") == "wine"
    assert pages._value_in(conf, "constraints.n_constraints") == "40"
    assert pages._value_in(conf, "seed") == "3"
    assert pages._value_in(conf, "constraints") is None  # a group, not a value
    assert pages._value_in(conf, "constraints.n_constraints.x") is None
    assert pages._value_in(conf, "noise.rate") is None


def test_the_gains_table_is_shown_at_the_largest_noiseless_budget(tmp_path):
    # pck_means gains 0.1 over kmeans at budget 10 and 0.4 at budget 40: the page's table is the headline
    # (budget 40), every cell's gain is in the parquet
    values = {("iris", 10, "pck_means"): [0.6, 0.6], ("iris", 40, "pck_means"): [0.9, 0.9],
              ("iris", 10, "kmeans"): [0.5, 0.5], ("iris", 40, "kmeans"): [0.5, 0.5]}
    text = lb.write_leaderboard(_rows(values), tmp_path, metric="ari")["pairs_md"].read_text()
    assert "Shown at budget 40, noise none" in text
    gains = text.split("Shown at budget 40, noise none")[1].split("\n## ")[0]  # the gains section's table
    assert "+0.400 [+0.400, +0.400]" in gains and "+0.100 [" not in gains
    # one title (level 1); the numbered sections and the closing ones are its level-2 sections
    headings = re.findall(r"^(#+) (.*)$", text, flags=re.M)
    assert [h for h, _ in headings].count("#") == 1 and headings[0][0] == "#"
    numbered = [h for h, t in headings if re.match(r"\d+b?\. ", t)]
    assert len(numbered) >= 7 and set(numbered) == {"##"}


def test_kept_default_compares_the_tuned_values_with_the_estimators_defaults():
    import json

    from ccbench import registry
    from ccbench.running import protocol

    default = protocol.estimator_defaults(registry.get_method_spec("pck_means"))["penalty"]
    frame = pd.DataFrame({"method_name": ["pck_means"] * 5 + ["not_installed"],
                          "tuned_params": [json.dumps({"penalty": default}), json.dumps({"penalty": default + 1.5}),
                                           "{}", "", None, json.dumps({"penalty": default})]},
                         index=[10, 11, 12, 13, 14, 15])
    kept = lb_ranks.kept_default(frame)
    assert kept.loc[[10, 11, 12]].tolist() == [True, False, True]  # {}: nothing tuned, the defaults kept
    assert kept.loc[[13, 14, 15]].isna().all()  # no tuned_params, or a method not installed here


def test_tuned_vs_default_goes_on_past_a_variant_whose_default_did_not_run():
    # ap+cvcp has no untuned ap to meet (skipped); pck_means+cvcp after it is still compared with pck_means
    values = {("iris", 20, "ap+cvcp"): [0.5] * 6, ("iris", 20, "pck_means+cvcp"): [0.9] * 6,
              ("iris", 20, "pck_means"): [0.8] * 6, ("iris", 20, "kmeans"): [0.4] * 6}
    data = _rows(values)
    data["tune"] = [m.split("+")[1] if "+" in m else "none" for m in data["method.name"]]
    data["method.name"] = data["method.name"].str.split("+").str[0]
    data["method_label"] = rfmt.method_labels(data)
    versus = lb_ranks.tuned_vs_default(lb.long_frame(data, "ari"), "ari")
    assert versus["variant"].tolist() == ["pck_means+cvcp"] and versus["default"].tolist() == ["pck_means"]
    assert versus["mean_diff"].iloc[0] == pytest.approx(0.1)


def test_tuned_vs_default_reports_a_variant_refused_everywhere_as_no_cells():
    # scssap_ml+cvcp predicted over the time budget on every set (the regenerated leaderboard's small sets):
    # a row with 0 cells, not a crash of the whole report
    values = {("iris", 20, "pck_means+cvcp"): [0.5] * 6, ("iris", 20, "pck_means"): [0.8] * 6,
              ("iris", 20, "kmeans"): [0.4] * 6}
    data = _rows(values, statuses={("iris", 20, "pck_means+cvcp"): "refused"})
    data["tune"] = [m.split("+")[1] if "+" in m else "none" for m in data["method.name"]]
    data["method.name"] = data["method.name"].str.split("+").str[0]
    data["method_label"] = rfmt.method_labels(data)
    versus = lb_ranks.tuned_vs_default(lb.long_frame(data, "ari"), "ari").set_index("variant")
    row = versus.loc["pck_means+cvcp"]
    assert (row["cells"], row["wins"], row["ties"], row["losses"], row["tuned_trials"]) == (0, 0, 0, 0, 0)


def test_differences_of_exactly_one_count_as_non_zero_pairs():
    # ari 1.0 against 0.0 in 6 trials, either method ahead: six differences of +-1 reach alpha, a win each way
    one, zero = [1.0] * 6, [0.0] * 6
    values = {("iris", 20, "pck_means"): one, ("iris", 20, "kmeans"): zero,
              ("wine", 20, "pck_means"): zero, ("wine", 20, "kmeans"): one}
    wtl = lb.win_tie_loss_cells(lb.long_frame(_rows(values), "ari"), "ari")
    assert wtl["table"].loc["pck_means", "kmeans"] == "1/0/1"


@pytest.mark.parametrize("metric", ["ari", "constraint_violations"])
def test_a_failure_ranks_last_when_every_completed_method_has_one_value(metric):
    # 0 violations (or ari 0) for both methods that completed: the failure must still rank below them
    values = {("iris", 20, m): [0.0] for m in ("pck_means", "kmeans", "cop_kmeans")}
    data = _rows(values, statuses={("iris", 20, "cop_kmeans"): "timeout"}).rename(columns={"ari": metric})
    ranks = lb.rank_table(lb.cell_means(lb.long_frame(data, metric)), metric)
    assert ranks["rank_failed_last"].to_dict() == {"kmeans": 1.5, "pck_means": 1.5, "cop_kmeans": 3.0}


def test_a_run_without_constraints_has_budget_zero_and_a_third_party_family_its_package(monkeypatch):
    data = _rows({("iris", 20, "kmeans"): [0.5]}, budget0={("iris", "kmeans"): [0.4]})
    data.loc[data[N] == 0, "constraints.name"] = "none"  # constraints=none: no budget column applies
    assert lb.long_frame(data, "ari").set_index("kind")["budget"].to_dict() == {"pairs": 20.0, "both": 0.0}
    est = type("Est", (), {"__module__": "acme_clustering.models.spectral"})  # a third-party package's
    monkeypatch.setattr(registry, "get_method_spec", lambda name: type("Spec", (), {"estimator": est}))
    assert lb_frame._families(pd.Series(["acme"])) == {"acme": "acme_clustering"}


def test_tie_rules_and_main_methods_by_name_and_k_free_decided_at_the_default_alpha():
    rows = pd.DataFrame({"method.name": ["zz_method", "cobs", "zz_method"], "pool_tie_rule": ["b", "a", "c"]})
    assert [line.split("`")[1] for line in lb_pages._tie_rules(rows)] == ["cobs", "zz_method"]
    assert lb_frame.main_methods(pd.DataFrame({"method": ["b", "a", "b"]})) == ["a", "b"]  # no tuned column
    # ap[k-free] 0.3 below ap in 6 trials: p = 2/2**6 <= alpha = 0.05 (the default), a loss
    data = _rows({("iris", 20, "ap"): [0.8] * 6, ("iris", 20, "ap[k-free]"): [0.5] * 6})
    data["method_label"], data["method.name"] = data["method.name"], "ap"
    versus = lb_ranks.k_free_vs_given(lb.long_frame(data, "ari"), "ari")
    assert versus[["variant", "default", "losses"]].to_numpy().tolist() == [["ap[k-free]", "ap", 1]]
    # nothing is tuned in the k-free track: its trials are ok_trials, and there is no kept_default
    assert versus["ok_trials"].tolist() == [6] and not {"tuned_trials", "kept_default"} & set(versus)


def test_the_index_states_only_variant_differences_with_a_holm_corrected_verdict():
    from ccbench.reporting.leaderboard.claims import MIN_VERDICT_CELLS, variant_verdicts

    # issue 50, item 10: the verdict column (Holm over the table's variants), not the uncorrected interval
    versus = pd.DataFrame({"variant": ["a+cvcp", "b+cvcp", "c+cvcp", "d+cvcp"], "cells": [13, 13, 13, 1],
                           "mean_diff": [0.06, -0.03, 0.04, 0.07], "ci_low": [0.015, -0.05, 0.01, 0.07],
                           "ci_high": [0.12, -0.007, 0.08, 0.07], "p_holm": [0.004, 0.03, 0.09, 1.0],
                           "verdict": ["helped", "hurt", "no supported difference", "helped"]})
    text = variant_verdicts(versus, "Tuning helped", "It hurt")
    assert "Tuning helped: `a+cvcp` +0.060 [+0.015, +0.120] over 13 cells, Holm p = 0.004." in text
    assert "It hurt: `b+cvcp` -0.030 [-0.050, -0.007] over 13 cells, Holm p = 0.03." in text
    assert "c+cvcp" not in text  # its interval excludes 0, but not after Holm's correction
    assert "d+cvcp" not in text and MIN_VERDICT_CELLS > 1  # an interval over one cell is [x, x]: no claim
    assert "2 other(s) of 4" in text
