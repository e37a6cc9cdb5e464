"""The simulated oracle of active query selection (issue 53, item 1): exact, flips at a rate
(persistent or not), calibrated confidences, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from ccbench_plugins.active.oracle import Oracle, confidence_interval

Y = np.repeat([0, 1, 2], 20)  # 60 points, 1770 pairs
PAIRS = np.c_[np.triu_indices(len(Y), 1)]


def _answers(oracle, pairs=PAIRS):
    return np.array([oracle(i, j) for i, j in pairs])


def _wrong(oracle, pairs=PAIRS):
    return _answers(oracle, pairs) != (Y[pairs[:, 0]] == Y[pairs[:, 1]])


def test_an_exact_oracle_says_whether_two_points_share_a_label_and_counts_its_questions():
    oracle = Oracle([0, 0, 1, 2, 1])
    assert [oracle(0, 1), oracle(1, 0), oracle(0, 2), oracle(2, 4), oracle(3, 4)] == [True, True, False, True, False]
    assert oracle.n_queries == 5
    assert oracle.ask(2, 4) == (True, 1.0)


@pytest.mark.parametrize("rate", [-0.01, 0.51, 1.0, float("nan"), True, "0.1"])
def test_a_rate_outside_zero_to_one_half_is_a_clear_error(rate):
    with pytest.raises(ValueError, match=r"noise_rate must be a number in \[0, 0.5\]"):
        Oracle(Y, noise_rate=rate)


def test_other_bad_settings_and_pairs_are_named():
    with pytest.raises(ValueError, match="confidence must be one of"):
        Oracle(Y, confidence="beta")
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        Oracle(Y, seed=-1)
    with pytest.raises(TypeError, match="persistent must be True or False"):
        Oracle(Y, persistent="yes")
    oracle = Oracle([0, 1, 1])
    for pair in [(1, 1), (0, 3), (-1, 0)]:
        with pytest.raises(ValueError, match="not a pair of two distinct points among the 3"):
            oracle(*pair)
    assert oracle.n_queries == 0


def test_persistent_flips_hit_the_rate_repeat_on_asking_again_and_nest_across_rates():
    wrong = {r: _wrong(Oracle(Y, noise_rate=r, seed=3)) for r in (0.05, 0.2)}
    # binomial(1770, r): 5 standard deviations either side
    for r, w in wrong.items():
        assert abs(w.sum() - r * len(PAIRS)) < 5 * np.sqrt(len(PAIRS) * r * (1 - r)), (r, w.sum())
    # the same pair, asked again in either order by a new oracle of the same seed: the same wrong answers
    again = Oracle(Y, noise_rate=0.2, seed=3)
    np.testing.assert_array_equal(_wrong(again, PAIRS[:, ::-1]), wrong[0.2])
    # under one seed the pairs flipped at 5 % are among those flipped at 20 % (paired noise levels)
    assert wrong[0.05].sum() > 0 and not (wrong[0.05] & ~wrong[0.2]).any()
    # another seed, other pairs
    assert (_wrong(Oracle(Y, noise_rate=0.2, seed=4)) != wrong[0.2]).any()


def test_non_persistent_flips_are_fresh_draws_at_the_rate():
    oracle = Oracle(Y, noise_rate=0.3, persistent=False, seed=0)
    answers = np.array([oracle(0, 1) for _ in range(2000)])  # a must-link pair asked 2000 times
    assert abs((~answers).mean() - 0.3) < 5 * np.sqrt(0.3 * 0.7 / 2000)
    persistent = Oracle(Y, noise_rate=0.3, persistent=True, seed=0)
    assert len({persistent(0, 1) for _ in range(50)}) == 1


@pytest.mark.parametrize("rate", [0.0, 0.1, 0.25, 0.4, 0.5])
def test_uniform_confidences_are_calibrated_and_keep_the_rate(rate):
    oracle = Oracle(Y, noise_rate=rate, confidence="uniform", seed=1)
    asked = [oracle.ask(i, j) for i, j in PAIRS]
    answers = np.array([a for a, _ in asked])
    conf = np.array([c for _, c in asked])
    right = answers == (Y[PAIRS[:, 0]] == Y[PAIRS[:, 1]])
    lo, hi = confidence_interval(rate)
    assert 0.5 <= lo <= conf.min() and conf.max() <= hi <= 1.0 and np.isclose((lo + hi) / 2, 1 - rate)
    sd = np.sqrt(len(PAIRS) * max(rate * (1 - rate), 1e-12))
    assert abs((~right).sum() - rate * len(PAIRS)) < 5 * sd + 1e-9
    if rate == 0.0:
        assert right.all() and (conf == 1.0).all()
    # calibrated: within each confidence band, the share of right answers is the band's mean confidence
    for band in np.array_split(np.argsort(conf), 3):
        expected = conf[band].mean()
        assert abs(right[band].mean() - expected) < 5 * np.sqrt(expected * (1 - expected) / len(band)) + 1e-9


def test_confidences_tell_the_right_answers_apart():
    """The model's point: a high-confidence answer is right more often than a low one (at rate 0.25,
    confidences span [0.5, 1])."""
    oracle = Oracle(Y, noise_rate=0.25, confidence="uniform", seed=2)
    asked = [oracle.ask(i, j) for i, j in PAIRS]
    conf = np.array([c for _, c in asked])
    right = np.array([a for a, _ in asked]) == (Y[PAIRS[:, 0]] == Y[PAIRS[:, 1]])
    assert right[conf > 0.9].mean() > 0.9 > 0.6 > right[conf < 0.6].mean()
    # without a confidence model every answer reports the same one, 1 - rate
    assert {Oracle(Y, noise_rate=0.25).ask(0, k)[1] for k in range(1, 10)} == {0.75}
