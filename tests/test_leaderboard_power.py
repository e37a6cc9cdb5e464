"""The power analysis of the reference board (issue 51, deliverable 4): the variance components of a paired
difference, the vectorised headline test, and the simulated power (``ccbench.reporting.leaderboard.power``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccbench.reporting.leaderboard import power
from ccbench.reporting.leaderboard._effect_stats import signed_rank
from ccbench.reporting.leaderboard.effects import cell_scores

KNOWN = {"sd_set": 0.05, "sd_cell": 0.08, "sd_seed": 0.06, "sd_trial": 0.2}


def _synthetic_differences(n_sets=400, cells=4, seeds=2, trials=10, mu=0.03, sd=KNOWN, seed=0) -> pd.Series:
    """Paired trial differences drawn from the model with known components, indexed as the rows are."""
    rng = np.random.default_rng(seed)
    a = rng.normal(0, sd["sd_set"], (n_sets, 1, 1, 1))
    b = rng.normal(0, sd["sd_cell"], (n_sets, cells, 1, 1))
    g = rng.normal(0, sd["sd_seed"], (n_sets, cells, seeds, 1))
    e = rng.normal(0, sd["sd_trial"], (n_sets, cells, seeds, trials))
    d = (mu + a + b + g + e).ravel()
    index = pd.MultiIndex.from_product([[f"set{i:03d}" for i in range(n_sets)], [""], np.arange(cells) / 10.0,
                                        ["none"], range(seeds), range(trials)],
                                       names=["dataset", "setting", "budget", "noise", "seed", "trial"])
    return pd.Series(d, index=index)


def test_variance_components_recover_known_components():
    comp = power.variance_components(_synthetic_differences())
    for name, value in KNOWN.items():
        assert comp[name] == pytest.approx(value, rel=0.2), name
    assert comp["mean"] == pytest.approx(0.03, abs=0.01)
    assert (comp["n_sets"], comp["cells"], comp["trials"]) == (400, 4.0, 10.0)


def test_variance_components_one_seed_has_no_seed_spread():
    """With one seed the seed effect is confounded with the cell's: none is estimated, the cell holds both."""
    comp = power.variance_components(_synthetic_differences(seeds=1))
    assert comp["sd_seed"] == 0.0
    assert comp["sd_cell"] == pytest.approx(np.hypot(KNOWN["sd_cell"], KNOWN["sd_seed"]), rel=0.2)


def test_trial_scores_are_the_headlines_cell_scores():
    """Two routes: the trial scores' cell means are :func:`cell_scores`' (missing convention): a refusal makes
    the cell missing, a timeout scores 0."""
    rows = pd.DataFrame({"dataset": "iris", "setting": "", "budget": 0.1, "noise": "none", "seed": 0,
                         "method": np.repeat(["a", "b", "c"], 3), "trial": np.tile(range(3), 3),
                         "status": ["ok", "ok", "ok", "ok", "timeout", "ok", "ok", "refused", "ok"],
                         "value": [0.2, 0.4, 0.6, 0.5, np.nan, 0.7, 0.1, np.nan, 0.3]})
    by_trial = power.trial_scores(rows)
    means = by_trial.groupby(level=["dataset", "setting", "budget", "noise"]).agg(
        lambda s: s.mean() if s.notna().all() else np.nan)
    expected = cell_scores(rows, "ari", "missing")
    pd.testing.assert_frame_equal(means, expected, check_names=False)
    assert means.loc[("iris", "", 0.1, "none"), "b"] == pytest.approx(0.4)  # (0.5 + 0 + 0.7) / 3
    assert np.isnan(means.loc[("iris", "", 0.1, "none"), "c"])


@pytest.mark.parametrize("n", [10, 24, 60])
def test_signed_rank_p_is_the_boards(n):
    rng = np.random.default_rng(n)
    D = rng.normal(0.3, 1.0, (20, n))
    expected = [signed_rank(row)[1] for row in D]
    np.testing.assert_allclose(power.signed_rank_p(D), expected, rtol=1e-10)


def test_simulated_power_matches_the_closed_form():
    """Large N, normal D[s]: the simulated signed-rank power is the paired z-test's at efficiency 3/pi, and
    the simulated spread of D[s] is the model's."""
    comp = {"sd_set": 0.1, "sd_cell": 0.05, "sd_seed": 0.02, "sd_trial": 0.1}
    sd_D = np.sqrt(power.set_variance(**comp, cells=3, seeds=2, trials=5))
    res = power.simulate_power(comp, n_sets=150, seeds=2, trials=5, effect=0.02, cells=3, reps=2000, n_boot=400)
    assert res["sd_D"] == pytest.approx(sd_D, rel=0.02)
    closed = power.wilcoxon_power(sd_D, 0.02, 150)
    assert 0.3 < closed < 0.8  # a power where the comparison can tell
    assert res["p<=0.05"] == pytest.approx(closed, abs=0.04)
    # the bootstrap interval: a z-interval's power at large N, without the efficiency loss
    z_power = power.wilcoxon_power(sd_D * np.sqrt(3 / np.pi), 0.02, 150)
    assert res["ci_excludes_0"] == pytest.approx(z_power, abs=0.05)
    n80 = power.sets_for_power(sd_D, 0.02)
    assert power.wilcoxon_power(sd_D, 0.02, int(np.ceil(n80))) == pytest.approx(0.8, abs=0.01)


@pytest.mark.parametrize("residuals", [None, np.r_[np.zeros(10), 1.0, 3.0, 9.0, -1.0, -3.0, -9.0]])
def test_no_effect_rejects_at_alpha(residuals):
    """At zero effect both tests reject at about alpha, normal or heavy-tailed (symmetric) data sets."""
    comp = {"sd_set": 0.1, "sd_cell": 0.05, "sd_seed": 0.0, "sd_trial": 0.1}
    res = power.simulate_power(comp, n_sets=40, seeds=1, trials=5, effect=0.0, cells=3, reps=3000, n_boot=400,
                               alphas=(0.05,), residuals=residuals)
    assert res["p<=0.05"] == pytest.approx(0.05, abs=0.015)
    assert 0.04 < res["ci_excludes_0"] < 0.09  # percentile intervals run a little narrow


def test_more_seeds_and_trials_never_lower_power():
    """Where the trials' noise matters (a small spread over data sets), power grows with S and with T."""
    comp = {"sd_set": 0.01, "sd_cell": 0.01, "sd_seed": 0.03, "sd_trial": 0.25}
    grid = power.power_grid(comp, cells=2, n_sets=(24,), seeds=(1, 3), trials=(2, 10), effects=(0.02,), reps=1500,
                            n_boot=200).set_index(["S", "T"])["p<=0.05"]
    assert grid[(3, 2)] > grid[(1, 2)] + 0.05 and grid[(1, 10)] > grid[(1, 2)] + 0.05
    assert grid[(3, 10)] >= max(grid[(3, 2)], grid[(1, 10)]) - 0.02
    assert grid[(3, 10)] > grid[(1, 2)] + 0.2


def test_skewed_data_sets_move_the_signed_rank_test_at_zero_mean():
    """The signed-rank test's null is symmetry about 0, not a zero mean: resampled skewed differences with
    mean 0 reject well above alpha (why the docs report the resampled model at zero effect too)."""
    comp = {"sd_set": 0.1, "sd_cell": 0.0, "sd_seed": 0.0, "sd_trial": 0.01}
    skewed = np.r_[np.zeros(20), 1.0, -3.0, 5.0]
    res = power.simulate_power(comp, n_sets=40, seeds=1, trials=5, effect=0.0, cells=3, reps=2000, n_boot=200,
                               residuals=skewed)
    assert res["p<=0.05"] > 0.3


@pytest.mark.parametrize("residuals", [None, 10.0 * np.r_[np.zeros(10), 1.0, 3.0, 9.0, -1.0, -3.0, -9.0]])
@pytest.mark.parametrize("comp", [{"sd_set": 0.0, "sd_cell": 0.0, "sd_seed": 0.0, "sd_trial": 0.3},
                                  {"sd_set": 0.1, "sd_cell": 0.0, "sd_seed": 0.05, "sd_trial": 0.0}])
def test_simulated_spread_is_the_models(comp, residuals):
    """Each level of the simulation carries its component divided by what the board averages it over
    (trials by T x S x C, seeds by S x C), and resampled data sets are rescaled to ``sd_set``."""
    res = power.simulate_power(comp, n_sets=60, seeds=2, trials=5, effect=0.0, cells=3, reps=500, n_boot=50,
                               residuals=residuals)
    assert res["sd_D"] == pytest.approx(np.sqrt(power.set_variance(**comp, cells=3, seeds=2, trials=5)), rel=0.05)
