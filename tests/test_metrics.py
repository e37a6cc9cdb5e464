import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccbench import Constraints, metrics


def _pairs_by_loop(true, pred):
    """Direct O(n^2) evaluation of eqs. (26) and (27)."""
    ss = sd = ds = dd = 0
    for i, j in itertools.combinations(range(len(true)), 2):
        same_t, same_p = true[i] == true[j], pred[i] == pred[j]
        ss += same_t and same_p
        sd += same_t and not same_p
        ds += (not same_t) and same_p
        dd += (not same_t) and (not same_p)
    return ss, sd, ds, dd


def test_hand_computed_case_where_modified_rand_differs_from_rand():
    true = [0, 0, 0, 1, 1, 2]
    pred = [0, 0, 1, 1, 1, 1]
    # 15 pairs. same/same: (0,1),(3,4) = 2; same/diff: (0,2),(1,2) = 2;
    # diff/same: (2,3),(2,4),(2,5),(3,5),(4,5) = 5; diff/diff: 6.
    assert metrics.rand(true, pred) == pytest.approx(8 / 15)
    # eq. 27: 2 / (2 * 7) + 6 / (2 * 8)
    assert metrics.modified_rand(true, pred) == pytest.approx(2 / 14 + 6 / 16)
    assert metrics.modified_rand(true, pred) != pytest.approx(metrics.rand(true, pred))


def test_perfect_clustering_scores_one():
    y = [0, 0, 1, 1, 2]
    relabelled = [5, 5, 3, 3, 9]
    for f in (metrics.rand, metrics.modified_rand, metrics.adjusted_rand, metrics.nmi):
        assert f(y, relabelled) == pytest.approx(1.0)


def test_single_cluster_gets_half_credit_at_most():
    y = [0, 0, 1, 1]
    # same/same 2 of 6 predicted-same pairs; the "different" half is 0/0 -> 0
    assert metrics.modified_rand(y, [0, 0, 0, 0]) == pytest.approx(2 / 12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), min_size=2, max_size=25))
def test_contingency_counts_match_the_pair_loop(pairs):
    true = [p[0] for p in pairs]
    pred = [p[1] for p in pairs]
    ss, sd, ds, dd = _pairs_by_loop(true, pred)
    assert metrics.rand(true, pred) == pytest.approx((ss + dd) / (ss + sd + ds + dd))
    expected = (ss / (2 * (ss + ds)) if ss + ds else 0) + (dd / (2 * (sd + dd)) if sd + dd else 0)
    assert metrics.modified_rand(true, pred) == pytest.approx(expected)


def test_nmi_geometric_matches_hand_value_and_sklearn():
    from sklearn.metrics import normalized_mutual_info_score

    true = [0, 0, 1, 1]
    pred = [0, 0, 0, 1]
    # I = H(T) + H(C) - H(T,C) with natural logs
    h_t = np.log(2)
    h_c = -(0.75 * np.log(0.75) + 0.25 * np.log(0.25))
    h_tc = -(0.5 * np.log(0.5) + 2 * 0.25 * np.log(0.25))
    expected = (h_t + h_c - h_tc) / np.sqrt(h_t * h_c)
    assert metrics.nmi(true, pred) == pytest.approx(expected)
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 4, 80), rng.integers(0, 3, 80)
    assert metrics.nmi(a, b) == pytest.approx(normalized_mutual_info_score(a, b, average_method="geometric"))


def test_constraint_violations_fraction():
    c = Constraints([[0, 1], [2, 3]], [[0, 2], [1, 3]], n_samples=4)
    assert metrics.constraint_violations(None, [0, 0, 1, 1], constraints=c) == 0.0
    assert metrics.constraint_violations(None, [0, 1, 0, 1], constraints=c) == 1.0
    assert metrics.constraint_violations(None, [0, 0, 0, 1], constraints=c) == pytest.approx(0.5)
    assert metrics.constraint_violations(None, [0, 1, 0, 1]) == 0.0


def test_mismatched_labelings_are_refused():
    with pytest.raises(ValueError, match="equal length"):
        metrics.rand([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="at least 2"):
        metrics.modified_rand([0], [0])


def test_majority_errors_counts_minority_members():
    true = [0, 0, 0, 1, 1, 2, 2, 2]
    pred = [5, 5, 7, 7, 7, 9, 9, 9]
    # cluster 5: {0,0} -> 0 errors; cluster 7: {0,1,1} -> 1; cluster 9: {2,2,2} -> 0
    assert metrics.majority_errors(true, pred) == 1.0
    assert metrics.majority_errors(true, [0] * 8) == 5.0



@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 4), st.integers(0, 6)), min_size=2, max_size=40))
def test_numpy_contingency_and_ari_equal_scikit_learns(pairs):
    """Our table is scikit-learn's, and our ARI its value to the last bit (reports regenerate)."""
    from sklearn.metrics import adjusted_rand_score
    from sklearn.metrics.cluster import contingency_matrix

    true = np.array([p[0] for p in pairs])
    pred = np.array([p[1] for p in pairs]) * 7 - 3  # arbitrary cluster ids
    np.testing.assert_array_equal(metrics.contingency(true, pred), contingency_matrix(true, pred))
    assert metrics.adjusted_rand(true, pred) == adjusted_rand_score(true, pred)


def test_adjusted_rand_on_a_large_labelling_equals_scikit_learns():
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(0)
    true = rng.integers(0, 10, 200_000)
    pred = np.where(rng.random(200_000) < 0.7, true, rng.integers(0, 12, 200_000))
    assert metrics.adjusted_rand(true, pred) == adjusted_rand_score(true, pred)
