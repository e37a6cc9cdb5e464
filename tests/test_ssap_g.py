"""SSAP-G: meta-points for must-link groups, hard cannot-link factors between meta-points."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from ccbench import Constraints, make_method
from ccbench import constraints as cgen
from ccbench.similarity import median_preference, negative_sq_euclidean
from ccbench_plugins.affinity import core as ap_core
from ccbench_plugins.affinity.ssap_g import SSAPG, augmented_similarity, meta_points


def similarity_with_preference(X):
    """-||x_i - x_j||^2 with the median off-diagonal value on the diagonal (no tie noise)."""
    S = negative_sq_euclidean(X)
    pref = median_preference(S)
    np.fill_diagonal(S, pref)
    return S, pref


def _blobs(seed, n=90, std=1.0):
    return make_blobs(n_samples=n, centers=3, cluster_std=std, center_box=(-10, 10), random_state=seed)


def test_meta_points_are_chunklets_then_free_cannot_link_ends():
    cons = Constraints([[0, 1], [1, 2], [5, 6]], [[0, 5], [3, 7]], n_samples=9)
    groups, meta_of = meta_points(cons)
    assert [g.tolist() for g in groups] == [[0, 1, 2], [5, 6], [3], [7]]
    np.testing.assert_array_equal(meta_of, [0, 0, 0, 2, -1, 1, 1, 3, -1])


def test_augmented_similarity_follows_eq1():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 2))
    S, _ = similarity_with_preference(X)
    cons = Constraints([[0, 1], [1, 2]], [[0, 4]], n_samples=8)
    groups, meta_of = meta_points(cons)  # P_0 = {0, 1, 2}, P_1 = {4}
    aug = augmented_similarity(S, groups, meta_of)
    n = 8
    for m, g in enumerate(groups):
        for i in range(n):
            expected = 0.0 if i in g else max(S[i, j] for j in g)
            if meta_of[i] >= 0 and meta_of[i] != m:
                expected = -np.inf  # members choose only their own meta-point (or themselves)
            assert aug[i, n + m] == expected
            assert aug[n + m, i] == (0.0 if i in g else max(S[i, j] for j in g))
    assert np.all(aug[n:, n:] == -np.inf)  # meta-points never choose meta-points
    for i in (0, 1, 2, 4):  # members: only themselves and their meta-point
        allowed = {i, n + meta_of[i]}
        assert all((aug[i, j] > -np.inf) == (j in allowed) for j in range(n + len(groups)))
    np.testing.assert_array_equal(aug[3, :n], S[3])


@pytest.mark.parametrize("seed", range(6))
def test_constraints_always_met_when_consistent(seed):
    X, y = _blobs(seed, std=2.5)  # overlapping: the constraints have work to do
    cons = cgen.random_pairs(y, n_constraints=45, rng=np.random.default_rng(seed))
    assert cons.is_consistent()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_method("ssap_g", random_state=0).fit(X, constraints=cons)
    labels = est.labels_
    assert np.all(labels >= 0)
    cl = cons.cannot_link
    assert not np.any(labels[cl[:, 0]] == labels[cl[:, 1]])
    for group in cons.chunklets():
        assert np.unique(labels[group]).size == 1
    assert est.n_ignored_cannot_links_ == 0


def test_many_cannot_links_between_close_points():
    # Cannot-links inside one tight blob force it apart.
    X, _ = make_blobs(n_samples=40, centers=[[0.0, 0.0]], cluster_std=0.5, random_state=0)
    cons = Constraints(cannot_link=[[0, 1], [1, 2], [0, 2], [3, 4]], must_link=[[0, 5], [1, 6]], n_samples=40)
    for backend in ("numba", "numpy"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            labels = SSAPG(backend=backend, random_state=0).fit(X, constraints=cons).labels_
        assert cons.violations(labels) == (0, 0)


def test_backends_agree():
    X, y = _blobs(1, n=60, std=2.0)
    cons = cgen.random_pairs(y, n_constraints=30, rng=np.random.default_rng(1))
    a = SSAPG(backend="numba", random_state=2).fit(X, constraints=cons)
    b = SSAPG(backend="numpy", random_state=2).fit(X, constraints=cons)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.n_iter_ == b.n_iter_


def test_without_constraints_equals_ap():
    X, _ = _blobs(3, n=70, std=2.0)
    ap = make_method("ap", random_state=4).fit(X)
    g = make_method("ssap_g", random_state=4).fit(X)
    np.testing.assert_array_equal(g.labels_, ap.labels_)
    np.testing.assert_array_equal(g.cluster_centers_indices_, ap.cluster_centers_indices_)


def test_cannot_link_messages_are_hard_and_nonpositive():
    X, y = _blobs(2, n=50, std=2.0)
    cons = cgen.random_pairs(y, n_constraints=25, rng=np.random.default_rng(2))
    S, _ = similarity_with_preference(X)
    groups, meta_of = meta_points(cons)
    aug = augmented_similarity(S, groups, meta_of)
    a, b = meta_of[cons.cannot_link[:, 0]], meta_of[cons.cannot_link[:, 1]]
    pairs = np.unique(np.sort(np.c_[a, b], axis=1), axis=0)
    fac = ap_core.pair_factors(np.empty((0, 2), int), 50 + pairs, penalty_must=0.0, penalty_cannot=np.inf)
    res = ap_core.affinity_propagation(aug, max_iter=30, convergence_iter=None, factors=fac,
                                       n_exemplar_columns=50, warn=False)
    gamma = res.pair_messages
    assert np.all(gamma <= 0) and not np.isnan(gamma).any()
    # q = inf: gamma_ab^j = -max(0, alpha_bj + rho_bj - gamma_ba^j) for the final messages' inputs.
    assert np.all(res.availability[:, 50:] == 0)  # meta-point columns carry no self-selection factor


def test_inconsistent_cannot_links_are_ignored_and_counted():
    X, y = _blobs(0, n=40)
    cons = Constraints([[0, 1], [1, 2]], [[0, 2], [3, 4]], n_samples=40)
    assert not cons.is_consistent()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = SSAPG(random_state=0).fit(X, constraints=cons)
    assert est.n_ignored_cannot_links_ == 1
    assert est.labels_[0] == est.labels_[1] == est.labels_[2]
    assert est.labels_[3] != est.labels_[4]
