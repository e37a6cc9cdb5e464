"""COBS (Van Craenendonck & Blockeel 2017): selection of the pool member satisfying the most constraints."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from ccbench_plugins.cobs.core import (
    k_grid,
    knn_scale,
    preference_grid,
    satisfied,
    select,
)

from ccbench import Constraints, make_method
from ccbench.registry import get_method_spec


def _blobs(n_per=15, seed=0):
    """Three tight, well-separated blobs in 2-D."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([c + rng.normal(0, 0.3, (n_per, 2)) for c in ([0, 0], [6, 0], [0, 6])])
    return X, np.repeat(np.arange(3), n_per)


def _chain_constraints(y):
    """Must-links chaining every blob's points (any split of a blob breaks one), cannot-links
    between the blobs' first points (any merge of two blobs breaks one)."""
    ml = [(i, i + 1) for i in range(len(y) - 1) if y[i] == y[i + 1]]
    firsts = [int(np.flatnonzero(y == c)[0]) for c in np.unique(y)]
    cl = [(a, b) for i, a in enumerate(firsts) for b in firsts[i + 1:]]
    return Constraints(ml, cl, n_samples=len(y))


def _fit(X, cons, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_method("cobs", random_state=0, **params).fit(X, constraints=cons)


def _same_partition(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return bool(np.all((a[:, None] == a[None, :]) == (b[:, None] == b[None, :])))


# -- selection -------------------------------------------------------------------


def test_returns_the_only_member_satisfying_every_constraint():
    X, y = _blobs()
    cons = _chain_constraints(y)
    est = _fit(X, cons, members=("kmeans",))
    # only k = 3 can keep every chain whole and every blob apart
    by_k = {e["grid"]["k"]: e["n_satisfied"] for e in est.pool_}
    assert by_k[3] == len(cons) and all(v < len(cons) for k, v in by_k.items() if k != 3)
    assert est.selected_["method"] == "kmeans" and est.selected_["grid"] == {"k": 3}
    assert est.n_satisfied_ == est.n_constraints_ == len(cons)
    assert _same_partition(est.labels_, y)


def test_full_pool_finds_a_clustering_satisfying_every_constraint():
    X, y = _blobs()
    cons = _chain_constraints(y)
    est = _fit(X, cons, k_max=4, sigma_factors=(0.5, 2.0))
    assert {e["method"] for e in est.pool_} == {"kmeans", "ap", "ncuts"}
    assert est.n_fits_ == len(est.pool_) == 3 + 3 + 3 * 2
    default = make_method("cobs")._grid(len(y))
    assert len(default) == 9 + 3 + 9 * 2  # the default pool
    # NCuts's own width (factor 1) and a wider one, for every k
    assert {c["sigma_factor"] for m, c in default if m == "ncuts"} == {1.0, 2.0}
    assert est.n_satisfied_ == len(cons) and _same_partition(est.labels_, y)
    assert est.n_satisfied_ == max(e["n_satisfied"] for e in est.pool_)


def test_selected_params_reproduce_the_labels():
    """selected_ is enough to rebuild the winner through the registry (provenance)."""
    X, y = _blobs()
    cons = _chain_constraints(y)
    est = _fit(X, cons, k_max=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = make_method(est.selected_["method"], **est.selected_["params"]).fit(X).labels_
    np.testing.assert_array_equal(again, est.labels_)


def test_count_of_satisfied_constraints_equals_a_direct_count():
    X, y = _blobs()
    rng = np.random.default_rng(3)
    pairs = rng.choice(len(y), size=(40, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    same = y[pairs[:, 0]] == y[pairs[:, 1]]
    # flip a few so that no member can satisfy all of them
    same[:5] = ~same[:5]
    cons = Constraints(pairs[same], pairs[~same], n_samples=len(y))
    est = _fit(X, cons, k_max=6)
    for e in est.pool_:
        lab = e["labels"]
        direct = sum(lab[i] == lab[j] for i, j in cons.must_link) + sum(lab[i] != lab[j] for i, j in cons.cannot_link)
        assert e["n_satisfied"] == direct == len(cons) - sum(cons.violations(lab))
        assert e["score"] == direct  # unit weights: the weighted count is the count
    assert est.n_satisfied_ == max(e["n_satisfied"] for e in est.pool_) < len(cons)


def test_weights_scale_the_count_and_zero_weight_pairs_do_not_count():
    lab = np.array([0, 0, 1, 1])
    cons = Constraints([(0, 1), (0, 2)], [(0, 3), (2, 3)], n_samples=4,
                       must_link_weight=[0.5, 1.0], cannot_link_weight=[0.25, 0.0])
    # satisfied: ML (0,1) w 0.5, CL (0,3) w 0.25; violated: ML (0,2), CL (2,3)
    assert satisfied(lab, cons) == (2, 0.75)


# -- tie-break -------------------------------------------------------------------


def test_tie_break_fewer_clusters_then_pool_order():
    assert select([3, 5, 5, 5], [2, 4, 3, 3]) == 2  # most satisfied; then fewer clusters; then first
    assert select([5, 5], [3, 3]) == 0
    assert select([-np.inf, 0], [0, 7]) == 1  # a failed member never wins


def test_without_constraints_fewer_clusters_rule_returns_the_smallest_k():
    X, _ = _blobs()
    est = _fit(X, None, k_max=4, tie_break="fewer_clusters")
    assert est.n_constraints_ == 0 and all(e["score"] == 0 for e in est.pool_)
    # k = 2 is found by kmeans and by ncuts: kmeans comes first in pool order
    assert est.selected_["method"] == "kmeans" and est.selected_["grid"] == {"k": 2}
    assert all(e["silhouette"] is None for e in est.pool_)


def test_ties_go_to_the_higher_silhouette_by_default():
    # issue 38: every member ties without constraints; the old rule (fewer clusters) took
    # k = 2 on three blobs, the silhouette takes the three blobs
    X, y = _blobs()
    est = _fit(X, None, k_max=4)
    assert est.n_clusters_ == 3
    assert len(np.unique(np.c_[est.labels_, y], axis=0)) == 3  # the blobs themselves
    tied = [e for e in est.pool_ if e["silhouette"] is not None]
    assert len(tied) == len(est.pool_)  # all tied, all scored
    best = max(e["silhouette"] for e in tied)
    assert est.pool_[[e["silhouette"] for e in est.pool_].index(best)]["labels"] is not None
    assert est.selected_["n_clusters"] == 3


def test_ties_with_constraints_only_tied_members_get_a_silhouette():
    X, y = _blobs()
    cons = Constraints([(0, 1)], [], n_samples=len(y))  # met by almost every member
    est = _fit(X, cons, k_max=4)
    best = max(e["score"] for e in est.pool_)
    for e in est.pool_:
        assert (e["silhouette"] is not None) == (e["score"] == best)


def test_select_orders_by_score_then_silhouette_then_fewer_clusters_then_pool_order():
    assert select([5, 5, 5], [2, 3, 4], [0.1, 0.7, 0.7]) == 1
    assert select([5, 6], [3, 2], [0.9, 0.1]) == 1  # the score comes first
    assert select([5, 5], [3, 2], [np.nan, -0.5]) == 1  # undefined silhouette ranks last


def test_silhouette_on_a_subsample_above_the_limit():
    X, y = _blobs()
    full = _fit(X, None, k_max=4)
    sub = _fit(X, None, k_max=4, silhouette_max_samples=20)
    assert sub.n_clusters_ == full.n_clusters_ == 3
    assert [e["silhouette"] for e in sub.pool_] != [e["silhouette"] for e in full.pool_]


# -- k restricted (k_mode="fixed") -------------------------------------------------------


def test_fixed_k_restricts_every_member():
    X, y = _blobs()
    cons = _chain_constraints(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_method("cobs", n_clusters=3, k_mode="fixed", random_state=0).fit(X, constraints=cons)
    methods = [e["method"] for e in est.pool_]
    assert methods.count("kmeans") == 1 and methods.count("ap") == 1 and methods.count("ncuts") == 2
    assert all(e["n_clusters"] == 3 for e in est.pool_)
    ap = est.pool_[methods.index("ap")]
    assert ap["grid"] == {"n_clusters": 3} and ap["params"]["n_clusters"] == 3
    assert est.n_clusters_ == 3


def test_fixed_k_needs_n_clusters_and_bad_options_are_refused():
    X, _ = _blobs()
    with pytest.raises(ValueError, match="k_mode='fixed'"):
        make_method("cobs", k_mode="fixed").fit(X)
    for bad in ({"k_mode": "exact"}, {"tie_break": "random"}, {"silhouette_max_samples": 1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            make_method("cobs", **bad).fit(X)


# -- supervision -----------------------------------------------------------------


def test_labels_count_as_the_pairs_they_imply():
    X, y = _blobs()
    partial = np.full(len(y), -1)
    for c in range(3):
        partial[np.flatnonzero(y == c)[:3]] = c
    only_labels = Constraints(n_samples=len(y), labels=partial)  # no pairs given
    as_pairs = Constraints.from_labels(partial)
    a = _fit(X, only_labels, members=("kmeans",))
    b = _fit(X, as_pairs, members=("kmeans",))
    assert a.n_constraints_ == b.n_constraints_ == len(as_pairs) == 3 * 3 + 27
    assert [e["n_satisfied"] for e in a.pool_] == [e["n_satisfied"] for e in b.pool_]
    assert a.selected_ == b.selected_ and a.selected_["grid"] == {"k": 3}


# -- grids -------------------------------------------------------------------------


def test_k_grid_default_and_centred_on_a_hint():
    assert k_grid(10, 1000) == list(range(2, 11))
    assert k_grid(10, 1000, 20) == list(range(16, 25))  # as many values, centred on the hint
    assert k_grid(10, 1000, 3) == list(range(2, 11))  # shifted up to start at 2
    assert k_grid(10, 5) == [2, 3, 4, 5]  # k <= n
    X, y = _blobs()
    est = _fit(X, _chain_constraints(y), members=("kmeans",), n_clusters=12, k_max=4, k_mode="hint")
    assert [e["grid"]["k"] for e in est.pool_] == [11, 12, 13]


def test_a_hint_of_one_cluster_is_valid_and_the_grid_starts_at_two():
    # n_clusters=1 is a legitimate hint (a data set of one class); the grid is shifted up to 2..k_max
    X, y = _blobs()
    est = _fit(X, _chain_constraints(y), members=("kmeans",), n_clusters=1, k_max=4, k_mode="hint")
    assert [e["grid"]["k"] for e in est.pool_] == [2, 3, 4]


def test_median_quantile_is_aps_default_preference():
    X, _ = _blobs()
    ap = make_method("ap", random_state=0).fit(X)
    np.testing.assert_allclose(preference_grid(X, [0.5])[0], ap.preference_, rtol=1e-12)
    d2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    off = -d2[~np.eye(len(X), dtype=bool)]
    np.testing.assert_allclose(preference_grid(X, [0.0, 0.1]), np.quantile(off, [0.0, 0.1]), rtol=1e-9)


def test_sigma_factor_one_is_ncuts_default_width():
    X, _ = _blobs()
    # the mean distance to the 5th other point, computed directly
    d = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    np.testing.assert_allclose(knn_scale(X, 5), np.mean(np.sort(d, axis=1)[:, 4]), rtol=1e-12)
    est = _fit(X, None, members=("ncuts",), k_max=3, sigma_factors=(1.0,))
    for e in est.pool_:
        params = {**e["params"], "sigma": None}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = make_method("ncuts", **params).fit(X).labels_
        np.testing.assert_array_equal(ref, e["labels"])


def test_ap_is_skipped_above_ap_max_samples_with_a_note():
    X, y = _blobs()
    cons = _chain_constraints(y)
    with pytest.warns(UserWarning, match="ap_max_samples"):
        est = make_method("cobs", ap_max_samples=20, members=("kmeans", "ap"), random_state=0).fit(X, constraints=cons)
    assert "ap" not in {e["method"] for e in est.pool_} and len(est.skipped_) == 1
    full = _fit(X, cons, ap_max_samples=None, members=("kmeans", "ap"))
    assert full.skipped_ == [] and sum(e["method"] == "ap" for e in full.pool_) == 3
    # the k-means members' seeds do not depend on whether AP was skipped
    assert [e["params"] for e in est.pool_] == [e["params"] for e in full.pool_ if e["method"] == "kmeans"]


# -- determinism and errors ------------------------------------------------------


def test_same_random_state_same_result():
    X, y = _blobs()
    cons = _chain_constraints(y)
    a, b = _fit(X, cons, k_max=5), _fit(X, cons, k_max=5)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.selected_ == b.selected_
    assert [e["params"] for e in a.pool_] == [e["params"] for e in b.pool_]


@pytest.mark.parametrize("params, match", [
    ({"k_max": 1}, "k_max"),
    ({"ap_quantiles": [1.5]}, "ap_quantiles"),
    ({"ap_quantiles": []}, "ap_quantiles"),
    ({"sigma_factors": [0.0]}, "sigma_factors"),
    ({"members": ("kmeans", "dbscan")}, "members"),
    ({"members": "kmeans"}, "members"),
    ({"ap_max_samples": -1}, "ap_max_samples"),
    ({"n_clusters": 0}, "n_clusters"),
    ({"n_neighbors": 0}, "n_neighbors"),
    ({"ncuts_n_init": 0}, "ncuts_n_init"),
    ({"n_threads": 0}, "n_threads"),
])
def test_bad_parameters_name_the_parameter(params, match):
    X, _ = _blobs()
    with pytest.raises(ValueError, match=match):
        make_method("cobs", **params).fit(X)


def test_bad_constraints_and_hint_beyond_n():
    X, _ = _blobs()
    with pytest.raises(TypeError, match="Constraints"):
        make_method("cobs").fit(X, constraints=[(0, 1)])
    with pytest.raises(ValueError, match="refer to 10 samples"):
        make_method("cobs").fit(X, constraints=Constraints([(0, 1)], n_samples=10))
    with pytest.raises(ValueError, match="exceeds the number of samples"):
        make_method("cobs", n_clusters=100).fit(X)


def test_spec_declares_supervision_and_the_methods_it_uses():
    spec = get_method_spec("cobs")
    assert set(spec.supervision) == {"must_link", "cannot_link", "labels"}
    assert not spec.needs_n_clusters and spec.constraint_kind == "soft"
    assert set(spec.uses) == {"kmeans", "ap", "ncuts"}
    assert spec.memory is not None and spec.memory.dense >= get_method_spec("ap").memory.dense


def test_peak_memory_stays_within_the_declared_model():
    """The MemoryModel (5 n^2 float64, AP's messages) bounds a whole fit: members run one at a
    time and the preference grid's similarity matrix is freed before AP allocates its own."""
    import tracemalloc

    rng = np.random.default_rng(0)
    n = 400
    X = np.r_[rng.normal(0, 1, (n // 2, 3)), rng.normal(5, 1, (n // 2, 3))]
    cons = Constraints([(0, 1)], [(0, n - 1)], n_samples=n)
    _fit(X[:50], Constraints([(0, 1)], n_samples=50), k_max=3)  # numba compiles outside the measurement
    tracemalloc.start()
    try:
        _fit(X, cons, k_max=4, ap_max_samples=None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= get_method_spec("cobs").memory.bytes(n, X.shape[1]), peak


def test_contradictory_constraints_warn_once_and_members_get_no_constraints():
    from ccbench.base import InconsistentConstraintsWarning

    X, _ = _blobs()
    cons = Constraints([(0, 1), (1, 2)], [(0, 2)], n_samples=len(X))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = make_method("cobs", members=("kmeans",), k_max=3, random_state=0).fit(X, constraints=cons)
    assert sum(issubclass(w.category, InconsistentConstraintsWarning) for w in caught) == 1
    assert all(not e["warnings"] for e in est.pool_)
    assert est.n_satisfied_ == 2  # at most two of the three can hold
    # the winner converged: no "did not converge" warning of COBS's own
    assert not any("did not converge" in str(w.message) for w in caught) and est.converged_


def test_the_winners_warnings_are_issued_again_and_every_members_are_recorded():
    X, _ = _blobs(n_per=40)  # three separate blobs: the 20-NN graph has 3 components, more than k = 2
    with pytest.warns(UserWarning, match=r"COBS selected ncuts \{'k': 2, 'sigma_factor': 1.0\}, which warned"):
        est = make_method("cobs", members=("ncuts",), k_max=3, sigma_factors=(1.0,), tie_break="fewer_clusters",
                          random_state=0).fit(X)
    assert est.selected_["grid"] == {"k": 2, "sigma_factor": 1.0}
    assert any("degenerate" in message for _, message in est.pool_[0]["warnings"])


def test_knn_scale_on_fewer_points_than_neighbours_uses_every_other_point():
    X, _ = _blobs()
    X = X[:6]
    d = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    np.testing.assert_allclose(knn_scale(X, 20), d.max(axis=1).mean(), rtol=1e-12)  # k = n - 1 = 5


def test_given_pairs_keep_their_weight_and_are_not_duplicated_by_the_labels():
    from ccbench_plugins.cobs.core import pairs_with_labels

    labels = np.array([0, 0, 1, 1, -1])
    # (0, 1) is also implied by the labels; (2, 4) is not
    cons = Constraints([(0, 1), (2, 4)], None, n_samples=5, must_link_weight=[0.5, 1.0], labels=labels)
    merged = pairs_with_labels(cons)
    keys = merged.must_link[:, 0] * 5 + merged.must_link[:, 1]
    assert sorted(keys.tolist()) == sorted([0 * 5 + 1, 2 * 5 + 4, 2 * 5 + 3])
    assert merged.must_link_weight[keys == 1].tolist() == [0.5]
    assert len(merged.cannot_link) == 4  # {0, 1} x {2, 3}


@pytest.mark.parametrize("params, match", [
    ({"members": ()}, "parameter 'members' must be a non-empty list"),
    ({"ap_quantiles": "0.5"}, "parameter 'ap_quantiles' must be a non-empty list"),
    ({"sigma_factors": "1"}, "parameter 'sigma_factors' must be a non-empty list"),
])
def test_empty_or_string_lists_are_refused_by_validation_not_by_an_empty_pool(params, match):
    X, _ = _blobs()
    with pytest.raises(ValueError, match=match):
        make_method("cobs", **params).fit(X)


def test_skipping_ap_keeps_the_members_after_it():
    X, y = _blobs()
    est = _fit(X, _chain_constraints(y), k_max=3, ap_max_samples=10)
    assert {e["method"] for e in est.pool_} == {"kmeans", "ncuts"}
    assert sum(e["method"] == "ncuts" for e in est.pool_) == 2 * len(est.sigma_factors)


def test_a_failing_member_is_a_pool_entry_and_a_failing_pool_is_an_error(monkeypatch):
    import time

    from ccbench_plugins.cobs import cobs as cobs_module

    real = cobs_module.make_method

    def broken_ncuts(name, **params):
        if name == "ncuts":
            raise ValueError("ncuts exploded")
        return real(name, **params)

    X, y = _blobs()
    cons = _chain_constraints(y)
    monkeypatch.setattr(cobs_module, "make_method", broken_ncuts)
    started = time.perf_counter()
    est = _fit(X, cons, k_max=3, members=("kmeans", "ncuts"))
    wall = time.perf_counter() - started
    failed = [e for e in est.pool_ if e["method"] == "ncuts"]
    assert failed and all(e["error"] == "ValueError: ncuts exploded" for e in failed)
    assert all(e["n_satisfied"] == 0 and e["n_clusters"] == 0 and e["score"] == -np.inf and e["labels"] is None
               for e in failed)
    assert est.selected_["method"] == "kmeans"
    assert all(0 <= e["seconds"] <= wall for e in est.pool_)
    with pytest.raises(ValueError, match="no pool member produced a clustering.*ncuts exploded"):
        _fit(X, cons, k_max=3, members=("ncuts",))



def test_auto_k_mode_restricts_the_pool_to_a_given_k_and_searches_k_without_one():
    """k_mode='auto' (the default): given k, every member has k clusters (the leaderboard gives COBS the
    true k on the same terms as k-means); without k, the pool spans several k (the k-free track)."""
    X, y = _blobs()
    cons = _chain_constraints(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        given = make_method("cobs", n_clusters=4, random_state=0).fit(X, constraints=cons)
        free = make_method("cobs", random_state=0).fit(X, constraints=cons)
    assert {e["n_clusters"] for e in given.pool_} == {4}
    assert len({e["grid"].get("k") for e in free.pool_ if "k" in e["grid"]}) > 2
