"""COBRA's query side as a strategy (issue 53, item 2): the pair it asks on hand-sized cases worked out
in the comments; closest centroids first (reversed, the first pair changes); pairs the answers imply are
not asked (ignoring the answers, an implied pair is asked)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import sklearn.cluster  # noqa: F401 - the k-means: imported at collection, not charged to the first test

from ccbench import registry
from ccbench_plugins.active.cobra import COBRA, implied, super_instances
from ccbench_plugins.active.loop import run_queries
from ccbench_plugins.active.oracle import Oracle

# four groups of three points on a line, centroids 0.1667, 3, 10, 30: k-means with K = 4 finds them
# whatever its seed. Group 0's mean is 0.1667, so its representative is 0.2 (index 1), not its first
# member; the others' is their middle point (4, 7, 10).
GROUPS = np.array([[0.0], [0.2], [0.3], [2.9], [3.0], [3.1], [9.9], [10.0], [10.1], [29.9], [30.0], [30.1]])
REPS = [1, 4, 7, 10]
# centroid distances: (0,1) 2.83, (1,2) 7, (0,2) 9.83, (2,3) 20, (1,3) 27, (0,3) 29.83


def _ask(y, n_questions, k=4, seed=0):
    return run_queries(COBRA(n_super_instances=k), GROUPS, Oracle(np.repeat(y, 3)), n_questions, rng=seed)


def test_it_is_registered_with_its_paper_and_refuses_a_bad_k():
    spec = registry.get_query_strategy_spec("cobra")
    assert spec.paper == "Van Craenendonck, Dumancic & Blockeel, IJCAI 2017" and not spec.needs_n_clusters
    assert registry.make_query_strategy("cobra").n_super_instances == 25
    with pytest.raises(ValueError, match="n_super_instances must be an int >= 2"):
        COBRA(n_super_instances=1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_representatives_are_the_members_closest_to_the_centroids(seed):
    assign, reps = super_instances(GROUPS, 4, seed)
    np.testing.assert_array_equal(np.sort(reps), REPS)
    assert len(np.unique(assign)) == 4 and all(len(set(assign[3 * g: 3 * g + 3])) == 1 for g in range(4))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_first_pair_is_the_closest_pair_of_super_instances(seed):
    # closest centroids: groups 0 and 1 (2.83 apart); farthest first would ask (1, 10)
    i, j = COBRA(n_super_instances=4).next_pair(GROUPS, None, None, None, np.random.default_rng(seed))
    assert {i, j} == {1, 4}


def test_an_entailed_cannot_link_is_not_asked():
    # classes: groups 0 and 1 together, 2 and 3 alone. (1,4) must-link; (4,7) cannot-link, so (1,7), next
    # in the order, is implied (cannot-link between {1,4} and {7}) and skipped; (7,10) cannot-link; (4,10)
    # is not implied (no cannot-link between {1,4} and {10} yet): asked, cannot-link; (1,10) implied.
    asked, answers = _ask([0, 0, 1, 2], 5)
    pairs = [tuple(sorted(p)) for p in asked.tolist()]
    assert pairs[:4] == [(1, 4), (4, 7), (7, 10), (4, 10)]
    np.testing.assert_array_equal(answers[:4], [True, False, False, False])
    # every pair of representatives is implied now: the next pair is drawn among the pairs not asked
    nexts = {COBRA(n_super_instances=4).next_pair(GROUPS, asked[:4], answers[:4], None, np.random.default_rng(s))
             for s in range(6)}
    assert len(nexts) > 1 and not {tuple(sorted(p)) for p in nexts} & set(pairs[:4])


def test_an_implied_must_link_is_not_asked():
    # groups 0, 1, 2 one class: (1,4) and (4,7) must-link, so (1,7) is implied (transitivity) and skipped;
    # (7,10) cannot-link, after which (4,10) and (1,10) are implied too
    asked, answers = _ask([0, 0, 0, 1], 3)
    assert [tuple(sorted(p)) for p in asked.tolist()] == [(1, 4), (4, 7), (7, 10)]
    assert implied(np.array([[1, 7], [4, 10], [1, 10]]), len(GROUPS), asked, answers).all()


def test_implied_by_hand_and_by_brute_force():
    # by hand: must-links 0-1, 1-2, 4-5, cannot-link 2-3
    asked = np.array([[0, 1], [1, 2], [2, 3], [4, 5]])
    answers = np.array([True, True, False, True])
    got = implied(np.array([[0, 2], [0, 3], [3, 4], [0, 5], [4, 5], [5, 4]]), 6, asked, answers)
    np.testing.assert_array_equal(got, [True, True, False, False, True, True])
    # brute force on random histories: merge components pair by pair, then read the cannot-links
    rng = np.random.default_rng(0)
    n = 9
    for _ in range(20):
        asked = np.array([p for p in itertools.combinations(range(n), 2)])[rng.choice(36, 10, replace=False)]
        answers = rng.random(10) < 0.5
        comp = list(range(n))
        for (a, b), same in zip(asked.tolist(), answers.tolist()):
            if same:
                old, new = comp[b], comp[a]
                comp = [new if c == old else c for c in comp]
        cannot = {frozenset((comp[a], comp[b])) for (a, b), s in zip(asked.tolist(), answers.tolist()) if not s}
        every = np.array(list(itertools.combinations(range(n), 2)))
        expected = [comp[a] == comp[b] or frozenset((comp[a], comp[b])) in cannot for a, b in every.tolist()]
        np.testing.assert_array_equal(implied(every, n, asked, answers), expected)


def test_duplicates_give_fewer_super_instances_and_a_run_is_reproducible():
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 0.0], [5.0, 5.0]]), 4, axis=0)
    assign, reps = super_instances(X, 25, 0)
    assert len(reps) == 3 and len(np.unique(assign)) == 3
    y = np.repeat([0, 0, 1], 4)
    a = run_queries(COBRA(), X, Oracle(y, noise_rate=0.2, seed=3), 30, rng=5)[0]
    b = run_queries(COBRA(), X, Oracle(y, noise_rate=0.2, seed=3), 30, rng=5)[0]
    np.testing.assert_array_equal(a, b)
