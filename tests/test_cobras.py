"""COBRAS (plugins/cobras): clustering by asking, on hand-sized blobs with known answers."""

import numpy as np
import pytest

from ccbench.base import InsufficientSupervisionError
from ccbench.constraints import Constraints, labeled_subsets
from ccbench.metrics import adjusted_rand
from ccbench_plugins.cobras import core
from ccbench_plugins.cobras.cobras import COBRAS


def _blobs(sizes, centres, seed=0, spread=0.3):
    """Gaussian blobs of ``sizes`` points around ``centres`` (far apart: no point nearer another centre)."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(sizes)), sizes)
    return np.asarray(centres, dtype=float)[y] + rng.normal(0.0, spread, (len(y), 2)), y


THREE = _blobs([12, 10, 8], [[0, 0], [10, 0], [0, 10]])


class CountingOracle:
    """The exact oracle of ``y`` (or a fixed answer), recording every call."""

    def __init__(self, y, answer=None):
        self.y, self.answer, self.calls = y, answer, []

    def __call__(self, i, j):
        self.calls.append((i, j))
        return bool(self.y[i] == self.y[j]) if self.answer is None else self.answer


def test_exact_oracle_recovers_well_separated_blobs_within_a_small_budget():
    X, y = THREE
    model = COBRAS(max_questions=15, random_state=0).fit(X, oracle=CountingOracle(y))
    assert adjusted_rand(y, model.labels_) == pytest.approx(1.0)
    # reached early: the anytime curve is at 1 well before the budget is spent
    reached = np.flatnonzero([adjusted_rand(y, row) > 1 - 1e-12 for row in model.labels_history_])
    assert reached.size and reached[0] <= 10


@pytest.mark.parametrize("answer", [False, True])
def test_answers_that_ignore_the_truth_give_a_worse_clustering(answer):
    """A COBRAS that ignored its answers would cluster alike under every oracle."""
    X, y = THREE
    exact = COBRAS(max_questions=15, random_state=0).fit(X, oracle=CountingOracle(y))
    blind = COBRAS(max_questions=15, random_state=0).fit(X, oracle=CountingOracle(y, answer=answer))
    assert adjusted_rand(y, exact.labels_) - adjusted_rand(y, blind.labels_) > 0.5
    if answer:  # every pair must-linked: whatever was split is merged back into one cluster
        assert len(np.unique(blind.labels_)) == 1


def test_the_largest_super_instance_is_split_first():
    assert core.super_instance_to_split(np.array([3, 10, 7, 12]), np.array([True, True, True, False])) == 1
    assert core.super_instance_to_split(np.array([5, 5]), np.array([True, True])) == 0  # ties: lowest index
    assert core.super_instance_to_split(np.array([1, 1]), np.array([False, False])) == -1


def test_after_the_first_iteration_the_questions_are_about_the_larger_blob():
    """Blobs of 40 and 10 points: the first iteration asks whether the blobs' representatives belong
    together (no), then about two halves of the 40 (yes), and ends on the two blobs. From then on the
    largest super-instance is split first, so the questions are mostly about the 40-point blob (smallest
    first, they are about the 10-point one: an eighth of the points asked about are in the 40)."""
    X, y = _blobs([40, 10], [[0, 0], [10, 0]])
    model = COBRAS(max_questions=10, random_state=0).fit(X, oracle=CountingOracle(y))
    assert list(model.answers_[:2]) == [False, True]
    assert adjusted_rand(y, model.labels_history_[2]) == pytest.approx(1.0)
    assert np.mean(y[model.queried_pairs_[2:]] == 0) >= 0.75
    # the second answer completes the first iteration: a budget of 2 ends on the two blobs
    assert adjusted_rand(y, COBRAS(max_questions=2, random_state=0).fit(X, oracle=CountingOracle(y)).labels_) == 1.0


def test_split_level_counts_the_cannot_links_down_the_larger_half_when_asked():
    """Blobs A, B (20 points each, 10 apart) and C (6 points, 40 away). The whole set splits into
    A+B and C (cannot-link: level 1), the larger half A+B into A and B (cannot-link: level 2), A into
    two halves (must-link): 2**2 = 4 parts, so the first iteration already separates the three blobs.
    Going on with the smaller half (C, the default: next test) would stop at level 1: two parts, A and B
    together."""
    X, y = _blobs([20, 20, 6], [[0, 0], [0, 10], [40, 0]])
    model = COBRAS(max_questions=12, random_state=0, split_search="larger").fit(X, oracle=CountingOracle(y))
    assert list(model.answers_[:3]) == [False, False, True]
    first = np.flatnonzero(model.labels_history_.any(axis=1))[0]  # the first iteration's end
    assert adjusted_rand(y, model.labels_history_[first]) == pytest.approx(1.0)


def test_split_level_goes_on_with_the_smaller_half_as_the_authors_package_does():
    """The blobs of the test above, under the default ``split_search="smaller"`` (``cobras_ts`` 0.1.3's
    ``determine_split_level``): after the cannot-link between A+B and C the search goes on with C, whose
    halves must-link: level 1, two parts, so the first iteration ends on A+B and C (A and B together)."""
    X, y = _blobs([20, 20, 6], [[0, 0], [0, 10], [40, 0]])
    model = COBRAS(max_questions=12, random_state=0).fit(X, oracle=CountingOracle(y))
    assert list(model.answers_[:2]) == [False, True]
    assert set(y[model.queried_pairs_[1]]) == {2}  # the second question is inside C
    first = np.flatnonzero(model.labels_history_.any(axis=1))[0]
    assert adjusted_rand(np.where(y == 2, 1, 0), model.labels_history_[first]) == pytest.approx(1.0)


def test_split_search_is_checked():
    with pytest.raises(ValueError, match="split_search"):
        COBRAS(split_search="middle").fit(np.zeros((4, 1)) + np.arange(4)[:, None], oracle=lambda i, j: True)


def test_the_representative_is_the_member_closest_to_the_mean():
    X = np.array([[0.0], [1.0], [2.0], [10.0], [2.5]])
    assert core.representative(X, np.array([0, 1, 2, 3])) == 2  # mean 3.25
    assert core.representative(X, np.array([0, 1, 4])) == 1  # mean 7/6


def _state(X, cluster_of_si, answers=None, oracle=None):
    """A run whose super-instances are the single points of ``X``, in the clusters given."""
    run = core._Run(X, oracle, 10, np.random.default_rng(0))
    run.si_of_point = np.arange(len(X))
    run.reps, run.cluster_of_si = list(range(len(X))), list(cluster_of_si)
    run.answers.update(answers or {})
    return run


def test_parts_of_two_points_can_still_be_split():
    """Two pairs of points, far apart: split into the two pairs, each a super-instance that can be split again."""
    X = np.array([[0.0], [0.1], [10.0], [10.1]])
    run = core._Run(X, CountingOracle(np.array([0, 0, 1, 1])), 10, np.random.default_rng(0))
    assert len(run.split(0)) == 2
    assert run.splittable == [True, True]


def test_merging_asks_the_closest_clusters_first():
    """Four single-point clusters at 10, 11, 15, 30, every answer cannot-link: the six pairs in order of
    distance (away from the origin, where |a|^2 + |b|^2 - a.b would order them otherwise)."""
    X = np.array([[10.0], [11.0], [15.0], [30.0]])
    oracle = CountingOracle(np.arange(4))
    _state(X, [0, 1, 2, 3], oracle=oracle).merge()
    assert oracle.calls == [(0, 1), (1, 2), (0, 2), (2, 3), (1, 3), (0, 3)]


def test_merging_skips_clusters_with_a_cannot_link_between_any_representatives():
    """Points 0 and 1 form one cluster; a cannot-link is known between 0 and 2. Cluster {0, 1} and
    cluster {2} are not asked about again, though their closest representatives (1, 2) never were."""
    X = np.array([[0.0], [1.0], [5.0], [20.0]])
    oracle = CountingOracle(np.arange(4))
    _state(X, [0, 0, 1, 2], answers={(0, 2): False}, oracle=oracle).merge()
    assert oracle.calls == [(2, 3), (1, 3)]


def test_a_must_link_merges_and_the_visit_restarts():
    """Clusters at 0, 1, 5: (0, 1) must-link merges them; then {0, 1} against {5}, closest pair (1, 2)."""
    X = np.array([[0.0], [1.0], [5.0]])
    oracle = CountingOracle(np.array([0, 0, 1]))
    run = _state(X, [0, 1, 2], oracle=oracle)
    run.merge()
    assert oracle.calls == [(0, 1), (1, 2)]
    assert list(run.labels()) == [0, 0, 1]


@pytest.mark.parametrize("budget", [1, 2, 7, 13])
def test_budget_is_spent_exactly_and_no_pair_is_asked_twice(budget):
    X, y = THREE
    oracle = CountingOracle(y)
    model = COBRAS(max_questions=budget, random_state=1).fit(X, oracle=oracle)
    assert model.n_questions_ == budget == len(oracle.calls)
    assert model.labels_history_.shape == (budget + 1, len(y))
    keys = {(min(i, j), max(i, j)) for i, j in oracle.calls}
    assert len(keys) == budget, "a pair was asked twice"
    assert [tuple(p) for p in model.queried_pairs_] == [(min(i, j), max(i, j)) for i, j in oracle.calls]
    assert np.array_equal(model.answers_, y[model.queried_pairs_[:, 0]] == y[model.queried_pairs_[:, 1]])


def test_history_starts_from_one_cluster_and_ends_on_labels():
    X, y = THREE
    model = COBRAS(max_questions=25, random_state=0).fit(X, oracle=CountingOracle(y))
    assert model.labels_history_.shape == (model.n_questions_ + 1, len(y))
    assert not model.labels_history_[0].any()
    assert np.array_equal(model.labels_history_[-1], model.labels_)


def test_in_the_middle_of_an_iteration_the_partition_is_the_last_complete_one():
    """Blobs of 40 and 10 points: from the end of the first iteration (2 answers) the complete partition
    is the two blobs. Later iterations split a blob's super-instance and merge its parts back; until a
    merging phase ends its parts are separate clusters, which the anytime partition never shows."""
    X, y = _blobs([40, 10], [[0, 0], [10, 0]])
    model = COBRAS(max_questions=10, random_state=0).fit(X, oracle=CountingOracle(y))
    assert all(adjusted_rand(y, row) == pytest.approx(1.0) for row in model.labels_history_[2:])


def test_nothing_left_to_split_stops_before_the_budget():
    """Four points: at most three splits into single points, every pair of representatives then known."""
    X = np.array([[0.0, 0.0], [0.0, 1.0], [5.0, 0.0], [5.0, 1.0]])
    y = np.array([0, 0, 1, 1])
    model = COBRAS(max_questions=50, random_state=0).fit(X, oracle=CountingOracle(y))
    assert model.n_questions_ <= 6  # the pairs of four points
    assert adjusted_rand(y, model.labels_) == pytest.approx(1.0)


@pytest.mark.parametrize("budget", [0, -3, True, 2.5])
def test_a_budget_that_is_not_a_positive_int_is_refused(budget):
    X, y = THREE
    with pytest.raises(ValueError, match="max_questions must be an int >= 1"):
        COBRAS(max_questions=budget).fit(X, oracle=CountingOracle(y))


@pytest.mark.parametrize("answer", ["yes", 2, 0.5])
def test_an_oracle_answering_other_than_a_bool_is_named(answer):
    X, _ = THREE
    with pytest.raises(TypeError, match=f"the oracle answered {answer!r}"):
        COBRAS(max_questions=5).fit(X, oracle=lambda i, j: answer)


def test_labels_revealed_in_full_are_the_exact_oracle():
    """The provisional harness route (scheme ``oracle_labels``) and an explicit exact oracle ask the
    same questions and reach the same clustering."""
    X, y = THREE
    cons = core.oracle_labels(y + 5)
    assert cons.n_must_link == cons.n_cannot_link == 0 and cons.n_labeled == len(y)
    routed = COBRAS(max_questions=12, random_state=3).fit(X, constraints=cons)
    direct = COBRAS(max_questions=12, random_state=3).fit(X, oracle=CountingOracle(y))
    assert np.array_equal(routed.queried_pairs_, direct.queried_pairs_)
    assert np.array_equal(routed.labels_history_, direct.labels_history_)


def test_supervision_that_is_no_oracle_is_refused_naming_the_fix():
    X, y = THREE
    with pytest.raises(InsufficientSupervisionError, match="oracle_labels"):
        COBRAS().fit(X)
    partial = labeled_subsets(y, 2, rng=np.random.default_rng(0))
    with pytest.raises(InsufficientSupervisionError, match=f"got 6 of {len(y)} labels"):
        COBRAS().fit(X, constraints=partial)
    with pytest.raises(ValueError, match="not both"):
        COBRAS().fit(X, oracle=CountingOracle(y), constraints=Constraints.empty(len(y)))


def test_the_harness_fits_it_from_the_oracle_labels_scheme():
    """Registered on request: the harness's own fit path, supervision drawn by the scheme."""
    from ccbench import registry
    from ccbench.running import harness, protocol

    X, y = THREE
    registry.load_plugins(["ccbench_plugins.cobras"])
    cons, _ = protocol.draw_supervision(y, {"name": "oracle_labels"}, {"name": "none", "rate": 0.0},
                                        np.random.default_rng(0))
    fit = harness.fit_labels(["ccbench_plugins.cobras"], "cobras", {"max_questions": 15}, 0, None, X, cons, "warn")
    assert adjusted_rand(y, fit["labels"]) == pytest.approx(1.0)
