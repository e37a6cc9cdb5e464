"""The SDP family keeps the best k-medoids start, and RN-SDP clusters its learned K (issue 41, section 2).

``run_kmedoids`` draws every start from one Generator, one start after the other, so
calling ``kmedoids_swap`` repeatedly on one Generator replays the starts of a fit exactly.
Each test checks that the starts disagree and that the first is not the best, then that
the fit kept the lowest cost ``D``. RN-SDP's test feeds the learned ``K`` to k-medoids
explicitly and checks the fit equals that route and differs from k-medoids on the raw
Gaussian similarity. ``tests/mutation/reversals.py`` proves each test by the reversal.
"""

import warnings

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from ccbench import Constraints, make_method
from ccbench import constraints as cgen
from ccbench_plugins.sdp.core import gaussian_similarity, kmedoids_swap, run_kmedoids


def _blobs(n_per=15, k=6, d=2, sep=2.5, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=sep, size=(k, d))
    X = np.concatenate([c + rng.normal(size=(n_per, d)) for c in centres])
    return X, np.repeat(np.arange(k), n_per)


def _replay(dist, k, n_init, seed):
    g = np.random.default_rng(seed)
    return [kmedoids_swap(dist, k, g)[:3] for _ in range(n_init)]  # (medoids, labels, cost)


def _telling_seed(dist, k, n_init, seeds=range(60)):
    """First seed whose starts disagree, with a unique best start that is not the first."""
    for seed in seeds:
        starts = _replay(dist, k, n_init, seed)
        c = np.array([s[2] for s in starts])
        tol = 1e-9 * max(1.0, c.min())
        if c[0] > c.min() + tol and np.sum(c <= c.min() + tol) == 1:
            return seed, starts
    pytest.fail("no seed in range gives k-medoids starts that disagree with the first not the best")


def _check_best(starts, medoids, labels, cost):
    c = np.array([s[2] for s in starts])
    best = int(np.argmin(c))
    assert cost == pytest.approx(c[best], rel=1e-12)
    np.testing.assert_array_equal(np.sort(medoids), np.sort(starts[best][0]))
    np.testing.assert_array_equal(labels, starts[best][1])
    assert cost < c[0]


def test_run_kmedoids_keeps_the_lowest_cost_start():
    X, _ = _blobs()
    dist = cdist(X, X, "sqeuclidean")
    seed, starts = _telling_seed(dist, 6, 4)
    medoids, labels, cost, _, _ = run_kmedoids(dist, 6, np.random.default_rng(seed), method="swap", n_init=4,
                                               max_iter=300)
    _check_best(starts, medoids, labels, cost)


def test_kmedoids_estimator_keeps_the_lowest_cost_start():
    X, _ = _blobs()
    dist = cdist(X, X, "sqeuclidean")
    seed, starts = _telling_seed(dist, 6, 4)
    est = make_method("kmedoids", n_clusters=6, n_init=4, random_state=seed).fit(X)
    _check_best(starts, est.medoid_indices_, est.labels_, est.inertia_)


def test_rn_sdp_keeps_the_lowest_cost_start_on_its_kernel():
    X, y = _blobs(n_per=8)
    cons = cgen.random_pairs(y, 8, rng=np.random.default_rng(0))
    params = dict(n_clusters=4, sigma=0.5, n_neighbors=1, n_init=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        K = make_method("rn_sdp", random_state=0, **params).fit(X, constraints=cons).similarity_
        dist = np.clip(2.0 - 2.0 * K, 0.0, None)
        seed, starts = _telling_seed(dist, 4, 4)
        est = make_method("rn_sdp", random_state=seed, **params).fit(X, constraints=cons)
    np.testing.assert_allclose(est.similarity_, K, atol=1e-12)  # the solve does not depend on the seed
    _check_best(starts, est.medoid_indices_, est.labels_, est.inertia_)


def _four_blobs(m=8, seed=0):
    """Four blobs at the corners of a 3 x 2 rectangle: unconstrained, k = 2 splits left | right;
    the constraints ask for top | bottom."""
    rng = np.random.default_rng(seed)
    corners = np.array([[0, 0], [3, 0], [0, 2], [3, 2]], float)
    X = np.concatenate([c + rng.normal(0, 0.3, (m, 2)) for c in corners])
    ml = [[0, m], [1, m + 1], [2 * m, 3 * m], [2 * m + 1, 3 * m + 1]]
    cl = [[0, 2 * m], [m, 3 * m], [1, 3 * m + 1]]
    return X, Constraints(ml, cl, n_samples=len(X)), np.repeat([0, 0, 1, 1], m)


def test_rn_sdp_clusters_the_learned_kernel_not_the_raw_similarity():
    X, cons, bottom_top = _four_blobs()
    sigma, n_init, seed = 1.0, 4, 0
    est = make_method("rn_sdp", n_clusters=2, sigma=sigma, n_neighbors=2, n_init=n_init, random_state=seed)
    est.fit(X, constraints=cons)
    learned = run_kmedoids(np.clip(2.0 - 2.0 * est.similarity_, 0.0, None), 2, np.random.default_rng(seed),
                           method="swap", n_init=n_init, max_iter=300)
    S = gaussian_similarity(X, sigma)[0]
    raw = run_kmedoids(np.clip(2.0 - 2.0 * S, 0.0, None), 2, np.random.default_rng(seed), method="swap",
                       n_init=n_init, max_iter=300)
    # the learned K changes the answer (top | bottom instead of left | right) ...
    assert not np.array_equal(learned[1], raw[1])
    assert len(np.unique(learned[1][bottom_top == 0])) == 1 and learned[1][0] != learned[1][-1]
    # ... and the fit is k-medoids on K
    np.testing.assert_array_equal(est.labels_, learned[1])
    assert est.inertia_ == pytest.approx(learned[2], rel=1e-12)
