"""NPU (Xiong, Azimi & Fern 2014; issue 53, item 2): the entropy-per-expected-query score by hand,
the point it picks on a hand-sized case, the forest similarity by a second route."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier  # at collection: its import is not a test's cost

from ccbench_plugins.active.core import replay
from ccbench_plugins.active.npu import NPU, membership, npu_scores

# x = 0 and 10 are two neighbourhoods (told apart); 4.9 is nearly halfway, 1 and 9 sit by one side
LINE = np.array([[0.0], [10.0], [4.9], [1.0], [9.0]])


def _next(strategy, X, asked, answers, rng=0, labels=None):
    return strategy.next_pair(X, np.array(asked, dtype=np.int64).reshape(-1, 2), np.array(answers, dtype=bool),
                              labels, np.random.default_rng(rng))


def test_the_score_is_entropy_over_expected_questions_by_hand():
    two = np.array([[0.5, 0.5], [1.0, 0.0], [0.2, 0.8]])
    # H = ln 2, E[q] = 1(0.5) + 2(0.5) = 1.5;  H = 0, E[q] = 1;  E[q] = 1(0.8) + 2(0.2) = 1.2 (larger p asked first)
    np.testing.assert_allclose(npu_scores(two), [np.log(2) / 1.5, 0.0,
                                                 -(0.2 * np.log(0.2) + 0.8 * np.log(0.8)) / 1.2])
    # three neighbourhoods: E[q] = 1(0.5) + 2(0.25) + 3(0.25) = 1.75
    np.testing.assert_allclose(npu_scores(np.array([[0.25, 0.25, 0.5]])),
                               [-(0.5 * np.log(0.25) + 0.5 * np.log(0.5)) / 1.75])
    # p_i = s_i / sum s; a point similar to nothing is uniform over the neighbourhoods
    np.testing.assert_allclose(membership(np.array([[0.2, 0.6], [0.0, 0.0]])), [[0.25, 0.75], [0.5, 0.5]])


def test_npu_asks_the_most_uncertain_point_against_its_likeliest_neighbourhood():
    # neighbourhoods {0}, {1}: point 2 (x = 4.9) is nearly as similar to both (most entropy, and
    # E[q] about 1.5 like the others at most 2), leaning to x = 0: asked against point 0 first
    strategy = NPU(similarity="rbf")
    for seed in range(4):
        assert _next(strategy, LINE, [(0, 1)], [False], rng=seed) == (0, 2)
    # with a cannot-link from 0, point 2 is asked against the other neighbourhood
    assert _next(strategy, LINE, [(0, 1), (0, 2)], [False, False]) == (1, 2)
    # after a must-link, {0, 2} (x = 0, 4.9) and {1} (x = 10); sigma^2 = 24.01 (median squared distance
    # to the skeleton): x = 1 belongs to {0, 2} with p = 0.82, x = 9 to {1} with p = 0.69 only (4.9 pulls
    # it), so 9 is the more uncertain, asked first against {1}
    assert _next(strategy, LINE, [(0, 1), (0, 2)], [False, True]) == (1, 4)


def test_the_answer_changes_the_next_pair():
    # a must-link between 0 and 1 leaves one neighbourhood: every point has H = 0, the candidate is drawn
    strategy = NPU(similarity="rbf")
    told_apart = _next(strategy, LINE, [(0, 1)], [False])
    together = {_next(strategy, LINE, [(0, 1)], [True], rng=seed) for seed in range(10)}
    assert told_apart == (0, 2) and len({c for _, c in together}) > 1
    nb = replay(len(LINE), np.array([(0, 1)]), np.array([True]))
    assert nb.groups == [[0, 1]]


def test_the_forest_similarity_is_the_share_of_trees_sharing_a_leaf():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, (10, 2)), rng.normal(5, 1, (10, 2))]
    labels = np.repeat([0, 1], 10)
    asked, answers = np.array([(0, 10), (0, 1)]), np.array([False, True])
    nb = replay(len(X), asked, answers)  # {0, 1}, {10}
    strategy = NPU(similarity="forest", n_trees=7)
    s, member_similarity = strategy._group_similarity(X, nb, labels, np.random.default_rng(3))
    # second route: the same forest's leaves, every pair compared directly
    seed = int(np.random.default_rng(3).integers(2**31))
    leaves = RandomForestClassifier(n_estimators=7, random_state=seed).fit(X, labels).apply(X)
    proximity = (leaves[:, None, :] == leaves[None, :, :]).mean(2)
    np.testing.assert_allclose(s, np.c_[proximity[:, [0, 1]].mean(1), proximity[:, 10]])
    assert member_similarity(5) == {0: proximity[5, 0], 1: proximity[5, 1], 10: proximity[5, 10]}
    # before any fit (no labels) or with one cluster, the RBF similarity stands in
    s_none, _ = strategy._group_similarity(X, nb, None, np.random.default_rng(3))
    s_rbf, _ = NPU(similarity="rbf")._group_similarity(X, nb, labels, np.random.default_rng(3))
    np.testing.assert_allclose(s_none, s_rbf)


def test_npu_with_the_forest_picks_a_point_between_the_clusters():
    # two labelled blobs and one point halfway: with {0..} and {10..} neighbourhoods, the forest's
    # leaves split at the boundary, so the halfway point shares leaves with both sides
    rng = np.random.default_rng(1)
    X = np.r_[rng.normal(0, 0.5, (10, 2)), rng.normal(6, 0.5, (10, 2)), [[3.0, 3.0]]]
    labels = np.r_[np.repeat([0, 1], 10), 0]
    asked, answers = [(0, 10), (0, 1), (10, 11)], [False, True, True]
    picks = {_next(NPU(n_trees=30), X, asked, answers, rng=seed, labels=labels)[1] for seed in range(3)}
    assert picks == {20}


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="similarity must be one of"):
        NPU(similarity="cosine")
    with pytest.raises(ValueError, match="n_trees must be an int >= 1"):
        NPU(n_trees=0)


def test_a_run_does_not_reuse_the_forest_of_another_runs_seed():
    # a run from seed 5 asks the same pairs on a fresh instance and on one that ran seed 6 before
    rng = np.random.default_rng(2)
    X = np.r_[rng.normal(0, 1, (8, 2)), rng.normal(2, 1, (8, 2))]
    y = np.repeat([0, 1], 8)

    def run(strategy, seed):
        gen, asked, answers = np.random.default_rng(seed), np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=bool)
        for _ in range(10):
            i, j = strategy.next_pair(X, asked, answers, y, gen)
            asked, answers = np.r_[asked, [[i, j]]], np.r_[answers, y[i] == y[j]]
        return asked

    used = NPU(n_trees=3)
    run(used, 6)
    np.testing.assert_array_equal(run(used, 5), run(NPU(n_trees=3), 5))
