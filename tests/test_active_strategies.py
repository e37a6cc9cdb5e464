"""The random baseline, Explore-Consolidate and min-max (issue 53, item 2): the pair each chooses on
hand-sized cases, worked out in the comments; reversing a rule or ignoring an answer changes it."""

from __future__ import annotations

import numpy as np
import pytest

from ccbench import registry
from ccbench_plugins.active.core import replay
from ccbench_plugins.active.strategies import ExploreConsolidate, MinMax, RandomPairs

# six points on a line
LINE = np.array([[0.0], [1.0], [2.0], [8.0], [11.0], [20.0]])


def _next(strategy, X, asked, answers, rng=0, labels=None):
    return strategy.next_pair(X, np.array(asked, dtype=np.int64).reshape(-1, 2), np.array(answers, dtype=bool),
                              labels, np.random.default_rng(rng))


def test_the_strategies_are_registered_with_their_papers():
    names = {s.name: s for s in registry.list_query_strategies()}
    assert {"random", "explore_consolidate", "min_max", "npu"} <= set(names)
    assert names["explore_consolidate"].needs_n_clusters and not names["npu"].needs_n_clusters
    assert isinstance(registry.make_query_strategy("min_max", n_clusters=4), MinMax)
    with pytest.raises(registry.UnknownNameError, match="unknown query strategy 'nope'; known query strategies"):
        registry.get_query_strategy_spec("nope")
    with pytest.raises(TypeError, match="its parameters are \\['n_clusters'\\]"):
        registry.make_query_strategy("explore_consolidate", k=3)
    with pytest.raises(ValueError, match="n_clusters must be an int >= 1"):
        ExploreConsolidate(n_clusters=0)


@pytest.mark.parametrize("cls", [ExploreConsolidate, MinMax])
def test_the_first_pair_is_a_random_point_against_the_point_farthest_from_it(cls):
    firsts = set()
    for seed in range(8):
        first, cand = _next(cls(n_clusters=3), LINE, [], [], rng=seed)
        far = np.abs(LINE[:, 0] - LINE[first, 0])
        assert cand == int(np.argmax(far)), (first, cand)
        firsts.add(first)
    assert len(firsts) > 1  # the first point is drawn


@pytest.mark.parametrize("cls", [ExploreConsolidate, MinMax])
def test_explore_asks_the_farthest_first_point_and_the_answer_decides_what_comes_next(cls):
    # 0 and 5 (x = 0, 20) were told apart: two neighbourhoods, k = 3 so Explore goes on. Distances
    # of the free points to {0, 20}: x=1 -> 1, x=2 -> 2, x=8 -> 8, x=11 -> 9: the candidate is point
    # 4 (x = 11), asked first against the nearer neighbourhood {20} (centroid and member alike).
    strategy = cls(n_clusters=3)
    assert _next(strategy, LINE, [(0, 5)], [False]) == (5, 4)
    # a must-link puts 4 with 5: distances to {0, 20, 11} make point 3 (x = 8) the next candidate;
    # nearest neighbourhood {20, 11} (centroid 15.5 at 7.5 against 8; member 11 at 3), asked through 11
    assert _next(strategy, LINE, [(0, 5), (5, 4)], [False, True]) == (4, 3)
    # a cannot-link keeps point 4 pending: it is asked against the other neighbourhood, {0}
    assert _next(strategy, LINE, [(0, 5), (5, 4)], [False, False]) == (0, 4)


def test_consolidate_asks_a_random_point_against_the_nearest_centroid_first():
    # three neighbourhoods {0}, {5}, {4} (k = 3 reached): a random free point of 1, 2, 3 (x = 1, 2, 8)
    # is asked against the neighbourhood of the nearest centroid: 0 for x = 1, 2; 4 (x = 11) for x = 8
    history = [(0, 5), (5, 4), (0, 4)], [False, False, False]
    nb = replay(len(LINE), np.array(history[0]), np.array(history[1]), max_groups=3)
    assert nb.groups == [[0], [5], [4]]
    pairs = {_next(ExploreConsolidate(3), LINE, *history, rng=seed) for seed in range(12)}
    assert pairs == {(0, 1), (0, 2), (4, 3)}


# two points per side: the neighbourhood {0, 1} has its centroid (x = 3) far from its member at x = 6
SPREAD = np.array([[0.0], [6.0], [10.0], [7.5], [0.5]])
SPREAD_HISTORY = [(0, 2), (0, 1)], [False, True]  # k = 2: {0}, {2} apart, then 1 joins 0: {0, 1}, {2}


def test_min_max_consolidates_the_point_least_similar_to_the_skeleton_through_its_nearest_member():
    # free points 3 (x = 7.5) and 4 (x = 0.5); nearest skeleton point: 1.5 and 0.5 away, so min-max
    # takes point 3; its nearest members: 6 (point 1, 1.5 away) in {0, 1}, 10 (point 2, 2.5) in {2}
    for seed in range(5):
        assert _next(MinMax(n_clusters=2), SPREAD, *SPREAD_HISTORY, rng=seed) == (1, 3)


def test_explore_consolidate_orders_by_centroid_where_min_max_orders_by_member():
    # the random candidate 3 (x = 7.5) is nearer the centroid of {2} (2.5) than of {0, 1} (4.5): EC asks
    # point 2 first; candidate 4 (x = 0.5) is nearest {0, 1}'s centroid and asks through member 0
    pairs = {_next(ExploreConsolidate(n_clusters=2), SPREAD, *SPREAD_HISTORY, rng=seed) for seed in range(12)}
    assert pairs == {(2, 3), (0, 4)}


def test_a_candidate_cannot_linked_to_all_k_neighbourhoods_is_set_aside():
    # k = 2 neighbourhoods {0}, {5}; point 4 answered cannot-link to both (a noisy oracle): it opens no
    # third neighbourhood and is never proposed again
    asked, answers = [(0, 5), (5, 4), (0, 4)], [False, False, False]
    nb = replay(len(LINE), np.array(asked), np.array(answers), max_groups=2)
    assert nb.groups == [[0], [5]] and nb.set_aside == {4} and nb.pending is None
    for seed in range(10):
        assert 4 not in _next(ExploreConsolidate(2), LINE, asked, answers, rng=seed)


def test_when_no_candidate_is_left_the_pairs_are_the_unasked_ones():
    X = LINE[:3]
    asked, answers = [(0, 1), (0, 2)], [True, True]  # every point in one neighbourhood
    for seed in range(5):
        assert _next(ExploreConsolidate(2), X, asked, answers, rng=seed) in {(1, 2), (2, 1)}


def test_random_pairs_are_uniform_over_the_pairs_not_asked():
    X = np.zeros((4, 1))
    asked = [(0, 1), (2, 0), (1, 3)]  # three of the six pairs
    drawn = [tuple(sorted(_next(RandomPairs(), X, asked, [True] * 3, rng=seed))) for seed in range(600)]
    values, counts = np.unique(np.array(drawn), axis=0, return_counts=True)
    assert [tuple(v) for v in values] == [(0, 3), (1, 2), (2, 3)]
    assert (np.abs(counts - 200) < 5 * np.sqrt(600 * 2 / 9)).all(), counts
    # five of six asked: the one left, by the listing route
    assert sorted(_next(RandomPairs(), X, [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3)], [True] * 5)) == [2, 3]
    with pytest.raises(ValueError, match="every one of the 6 pairs of the 4 points has been asked"):
        _next(RandomPairs(), X, [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)], [True] * 6)


def test_a_bad_history_is_named():
    with pytest.raises(ValueError, match=r"answers must be a \(1,\) bool array"):
        _next(MinMax(2), LINE, [(0, 1)], [])
    with pytest.raises(ValueError, match="outside the 6 points"):
        _next(RandomPairs(), LINE, [(0, 6)], [True])


def test_a_spec_names_a_strategy_it_cannot_import():
    with pytest.raises(ValueError, match="must be a class or a 'package.module:ClassName' string"):
        registry.QueryStrategySpec("bad", "no_colon")
    with pytest.raises(ImportError, match="query strategy 'ghost': cannot import 'ccbench_plugins.active:Ghost'"):
        registry.QueryStrategySpec("ghost", "ccbench_plugins.active:Ghost").loaded()
