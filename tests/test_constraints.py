import numpy as np
import pytest

from ccbench import Constraints
from ccbench import constraints as cgen


def test_pairs_are_normalised_and_merged():
    c = Constraints([[3, 1], [1, 3], [0, 2]], [[4, 0]], n_samples=5,
                    must_link_weight=[0.2, 0.7, 1.0])
    np.testing.assert_array_equal(c.must_link, [[0, 2], [1, 3]])
    np.testing.assert_array_equal(c.cannot_link, [[0, 4]])
    # the duplicate (1, 3) keeps its highest confidence
    np.testing.assert_allclose(c.must_link_weight, [1.0, 0.7])
    assert len(c) == 3


@pytest.mark.parametrize(
    "ml, cl, message",
    [
        ([[0, 5]], None, "out of range"),
        ([[-1, 2]], None, "out of range"),
        ([[2, 2]], None, "self-pair"),
        ([[0, 1]], [[1, 0]], "both must-link and cannot-link"),
        ([[0, 1, 2]], None, "shape"),
    ],
)
def test_bad_pairs_are_refused_by_name(ml, cl, message):
    with pytest.raises(ValueError, match=message):
        Constraints(ml, cl, n_samples=5)


def test_bad_weight_is_refused():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Constraints([[0, 1]], n_samples=3, must_link_weight=[1.5])
    with pytest.raises(ValueError, match="1 pairs"):
        Constraints([[0, 1]], n_samples=3, must_link_weight=[0.5, 0.5])


def test_chunklets_on_small_graph():
    # 0-1-2 chain, 4-5 pair, 3 and 6 alone
    c = Constraints([[0, 1], [2, 1], [5, 4]], [[0, 3]], n_samples=7)
    groups = [g.tolist() for g in c.chunklets()]
    assert groups == [[0, 1, 2], [4, 5]]
    comp = c.chunklet_labels()
    assert comp[0] == comp[1] == comp[2] != comp[4] == comp[5]
    assert len({comp[3], comp[6], comp[0], comp[4]}) == 4


def test_consistency_detects_transitive_contradiction():
    c = Constraints([[0, 1], [1, 2]], [[0, 3]], n_samples=4)
    assert c.is_consistent()
    bad = Constraints([[0, 1], [1, 2]], [[0, 2]], n_samples=4)
    assert not bad.is_consistent()


def test_from_labels_builds_all_implied_pairs():
    partial = np.array([0, 0, -1, 1, 1, 1])
    c = Constraints.from_labels(partial)
    # classes of size 2 and 3: 1 + 3 must-links, 2 * 3 cannot-links
    assert c.n_must_link == 4 and c.n_cannot_link == 6
    assert c.is_consistent()
    np.testing.assert_array_equal(c.labels, partial)


def test_violations_counts_split_and_joined_pairs():
    c = Constraints([[0, 1], [2, 3]], [[0, 2], [1, 3]], n_samples=4)
    assert c.violations([0, 0, 1, 1]) == (0, 0)
    assert c.violations([0, 1, 0, 1]) == (2, 2)


@pytest.mark.parametrize("n_constraints", [0, 1, 37, 200])
def test_random_pairs_counts_and_label_consistency(n_constraints):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=60)
    c = cgen.random_pairs(y, n_constraints, rng=rng)
    assert len(c) == n_constraints  # distinct pairs, none merged away
    assert np.all(y[c.must_link[:, 0]] == y[c.must_link[:, 1]])
    assert np.all(y[c.cannot_link[:, 0]] != y[c.cannot_link[:, 1]])
    assert c.is_consistent()


def test_random_pairs_can_take_every_pair():
    y = np.array([0, 0, 1, 1, 2])
    c = cgen.random_pairs(y, 10, rng=np.random.default_rng(1))
    assert len(c) == 10
    with pytest.raises(ValueError, match="at most 10"):
        cgen.random_pairs(y, 11, rng=np.random.default_rng(1))


def test_random_pairs_is_reproducible_from_the_seed():
    y = np.repeat([0, 1, 2], 30)
    a = cgen.random_pairs(y, 50, rng=np.random.default_rng(7))
    b = cgen.random_pairs(y, 50, rng=np.random.default_rng(7))
    assert a == b


def test_labeled_subsets_reveals_per_class_points():
    y = np.repeat([0, 1, 2], [10, 20, 30])
    c = cgen.labeled_subsets(y, 4, rng=np.random.default_rng(0))
    revealed = c.labels >= 0
    assert revealed.sum() == 12
    for k in range(3):
        assert np.sum(c.labels == k) == 4
    np.testing.assert_array_equal(c.labels[revealed], y[revealed])
    # 3 classes of 4 labeled points: 3*6 must-links, 3*16 cannot-links
    assert (c.n_must_link, c.n_cannot_link) == (18, 48)
    with pytest.raises(ValueError, match="only 10 points"):
        cgen.labeled_subsets(y, 11, rng=np.random.default_rng(0))


def test_labeled_subsets_accepts_a_fraction():
    y = np.repeat([0, 1], [10, 30])
    c = cgen.labeled_subsets(y, 0.1, rng=np.random.default_rng(0))
    assert np.sum(c.labels == 0) == 1 and np.sum(c.labels == 1) == 3


def test_per_class_pairs_counts():
    y = np.repeat([0, 1, 2, 3], 8)
    c = cgen.per_class_pairs(y, 3, rng=np.random.default_rng(0))
    assert c.n_must_link == 3 * 4
    assert c.n_cannot_link == 3 * 6
    assert np.all(y[c.must_link[:, 0]] == y[c.must_link[:, 1]])
    assert np.all(y[c.cannot_link[:, 0]] != y[c.cannot_link[:, 1]])
    # every class contributes exactly j must-links
    np.testing.assert_array_equal(np.bincount(y[c.must_link[:, 0]]), [3, 3, 3, 3])


def test_scheme_needs_two_samples():
    with pytest.raises(ValueError, match="at least 2"):
        cgen.random_pairs([0], 0, rng=np.random.default_rng(0))


def test_per_class_pairs_refuses_more_pairs_than_exist():
    # the must-link check also guards the cannot-links: j <= C(a, 2), C(b, 2) implies j <= a * b
    with pytest.raises(ValueError, match="at most 1 must-link"):
        cgen.per_class_pairs(np.array([0, 0, 1, 1, 1]), 2, rng=np.random.default_rng(0))


@pytest.mark.parametrize("n", [2, 3, 7, 101])
def test_pair_index_decoding_is_row_major_upper_triangle(n):
    from ccbench.constraints import _decode_pair_index

    i, j = _decode_pair_index(np.arange(n * (n - 1) // 2), n)
    I, J = np.triu_indices(n, k=1)
    np.testing.assert_array_equal(i, I)
    np.testing.assert_array_equal(j, J)


def test_confidence_is_a_deprecated_name_of_weight():
    with pytest.warns(FutureWarning, match="must_link_weight"):
        c = Constraints([[0, 1]], n_samples=3, must_link_confidence=[0.25])
    np.testing.assert_allclose(c.must_link_weight, [0.25])
    with pytest.warns(FutureWarning, match="cannot_link_weight"):
        assert len(c.cannot_link_confidence) == 0
    with pytest.raises(TypeError, match="not both"):
        Constraints([[0, 1]], n_samples=3, must_link_weight=[1.0], must_link_confidence=[1.0])


def test_random_pairs_per_point_scales_the_budget_with_n():
    """per_point draws round(per_point * n) pairs: the same density on every data set, and the
    same pairs as the equal count (one random stream)."""
    for n, per_point in [(150, 0.1), (3190, 0.05), (101, 0.25)]:
        y = np.arange(n) % 3
        by_density = cgen.random_pairs(y, per_point=per_point, rng=np.random.default_rng(4))
        count = round(per_point * n)
        assert by_density.n_must_link + by_density.n_cannot_link == count
        by_count = cgen.random_pairs(y, count, rng=np.random.default_rng(4))
        np.testing.assert_array_equal(by_density.must_link, by_count.must_link)
        np.testing.assert_array_equal(by_density.cannot_link, by_count.cannot_link)
    assert cgen.random_pairs(np.arange(10) % 2, per_point=0.0, rng=np.random.default_rng(0)).n_must_link == 0


def test_random_pairs_needs_exactly_one_budget():
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match="exactly one of n_constraints"):
        cgen.random_pairs(y, 5, per_point=0.1, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_constraints=null"):
        cgen.random_pairs(y, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="per_point must be >= 0"):
        cgen.random_pairs(y, per_point=-0.1, rng=np.random.default_rng(0))


def test_labeled_subsets_small_classes_all_reveals_a_smaller_class_whole():
    y = np.array([0] * 10 + [1] * 2 + [2] * 6)
    with pytest.raises(ValueError, match="small_classes=all"):
        cgen.labeled_subsets(y, 5, rng=np.random.default_rng(0))
    cons = cgen.labeled_subsets(y, 5, small_classes="all", rng=np.random.default_rng(0))
    revealed = np.bincount(y[cons.labels >= 0], minlength=3)
    np.testing.assert_array_equal(revealed, [5, 2, 5])
    with pytest.raises(ValueError, match="small_classes must be"):
        cgen.labeled_subsets(y, 5, small_classes="some", rng=np.random.default_rng(0))


# -- issue 42, item 14: labels against pairs, pair types, fractional counts ---------------


def test_cannot_link_inside_one_revealed_class_is_inconsistent():
    c = Constraints(cannot_link=[(0, 1)], n_samples=12, labels=[0] * 12)
    assert not c.is_consistent()
    assert c.n_conflicts() == 1
    # a must-link chain across two revealed classes is a contradiction too
    lab = [0, 0, 1, 1] + [-1] * 4
    assert not Constraints([(1, 4), (4, 2)], n_samples=8, labels=lab).is_consistent()
    # labels that agree with the pairs stay consistent
    assert Constraints([(0, 1)], [(1, 2)], n_samples=8, labels=lab).is_consistent()
    assert cgen.labeled_subsets(np.repeat([0, 1, 2], 5), 3, rng=np.random.default_rng(0)).is_consistent()


def test_hard_cop_kmeans_warns_before_splitting_a_revealed_class():
    from ccbench import make_method
    from ccbench.base import InconsistentConstraintsWarning

    X = np.r_[np.random.default_rng(0).normal(0, 0.1, (6, 2)), np.random.default_rng(1).normal(5, 0.1, (6, 2))]
    cons = Constraints(cannot_link=[(0, 1)], n_samples=12, labels=[0] * 12)
    with pytest.warns(InconsistentConstraintsWarning, match="revealed"):
        make_method("cop_kmeans", n_clusters=2, random_state=0).fit(X, constraints=cons)


@pytest.mark.parametrize("pairs, message", [
    ([(True, False)], "True/False are not indices"),
    ([("0", "1")], "integer sample indices"),
    ([(None, 1)], "integer sample indices"),
])
def test_pairs_that_are_not_indices_are_refused_by_name(pairs, message):
    with pytest.raises(TypeError, match=message):
        Constraints(pairs, n_samples=4)
    with pytest.raises(TypeError, match=message):
        Constraints(cannot_link=pairs, n_samples=4)


def test_fractional_counts_are_refused_with_the_reason():
    y = np.repeat([0, 1], 10)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="30.7 is not a whole number"):
        cgen.random_pairs(y, 30.7, rng=rng)
    with pytest.raises(ValueError, match="not a whole number"):
        cgen.per_class_pairs(y, 2.5, rng=rng)
    with pytest.raises(ValueError, match="not a whole number"):
        cgen.labeled_subsets(y, 2.5, rng=rng)
    assert len(cgen.random_pairs(y, 30.0, rng=rng)) == 30  # a whole float is a count


def test_fractional_count_is_refused_before_the_sweep():
    from ccbench.running.protocol import check_value

    assert "whole number" in check_value("constraints.n_constraints", 30.7)
    assert "whole number" in check_value("constraints.n_pairs", 2.5)
    assert check_value("constraints.n_constraints", 30) is None
    assert check_value("constraints.per_class", 0.2) is None  # a fraction of every class
    assert "whole number" in check_value("constraints.per_class", 2.5)
