"""The k-means family keeps the best of its starts, and hands learned metrics on (issue 41, section 2).

Every multi-start estimator here draws all its randomness from one ``numpy`` Generator
(``check_random_state`` returns a Generator it is given as it is), one start after the
other. So ``n_init`` fits with ``n_init=1`` that share one Generator replay the starts of
one ``n_init=N`` fit exactly, and each start's own score is known. Each test first checks
that the starts disagree and that the first start is not the best (else "keep the first"
or "keep the worst" could not be told apart from "keep the best"), then that the fit kept
the best one. Nothing is hard-coded: the seed is the first of a range whose starts
disagree so.

``tests/mutation/reversals.py`` proves each test by reversing the choice it guards.
"""

import warnings

import numpy as np
import pytest
from sklearn.cluster import KMeans

from ccbench import make_method
from ccbench import constraints as cgen


def _blobs(n_per=15, k=5, d=2, sep=3.0, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=sep, size=(k, d))
    X = np.concatenate([c + rng.normal(size=(n_per, d)) for c in centres])
    return X, np.repeat(np.arange(k), n_per)


def _replay(name, score, X, cons, n_init, seed, **params):
    """The starts of ``make_method(name, n_init=n_init, random_state=seed)``: [(score, labels)]."""
    g = np.random.default_rng(seed)
    out = []
    for _ in range(n_init):
        est = make_method(name, n_init=1, random_state=g, **params).fit(X, constraints=cons)
        out.append((float(getattr(est, score)), est.labels_.copy()))
    return out


def _telling_seed(starts_of, *, lower_is_better=True, seeds=range(40)):
    """First seed whose starts disagree, whose best start is unique and is not the first."""
    for seed in seeds:
        starts = starts_of(seed)
        s = np.array([sc for sc, _ in starts])
        if not lower_is_better:
            s = -s
        best = s.min()
        tol = 1e-9 * max(1.0, abs(best))
        if s[0] > best + tol and np.sum(s <= best + tol) == 1 and s.max() > best + tol:
            return seed, starts
    pytest.fail("no seed in range gives starts that disagree with the first not the best")


CASES = [
    # (method, score attribute, lower is better, params)
    ("pck_means", "objective_", True, dict(n_clusters=5, init="k-means++")),
    ("mpck_means", "objective_", True, dict(n_clusters=5, init="k-means++")),
    # n_kicks=0: with its kicks every cop_kmeans start reaches one optimum on these blobs (issue 52),
    # and kept-best could not be told from kept-first
    ("cop_kmeans", "inertia_", True, dict(n_clusters=5, init="k-means++", n_kicks=0)),
    ("constrained_em", "lower_bound_", False, dict(n_clusters=5, init="random")),
]


@pytest.mark.parametrize("name, score, lower, params", CASES, ids=[c[0] for c in CASES])
def test_restarts_keep_the_best_start(name, score, lower, params):
    X, y = _blobs()
    cons = cgen.random_pairs(y, 10, rng=np.random.default_rng(0))
    n_init = 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed, starts = _telling_seed(lambda s: _replay(name, score, X, cons, n_init, s, **params),
                                     lower_is_better=lower)
        est = make_method(name, n_init=n_init, random_state=seed, **params).fit(X, constraints=cons)
    scores = np.array([sc for sc, _ in starts])
    best = int(np.argmin(scores) if lower else np.argmax(scores))
    # the starts disagree (checked in _telling_seed); the fit kept the best of them
    assert getattr(est, score) == pytest.approx(scores[best], rel=1e-12, abs=1e-12)
    np.testing.assert_array_equal(est.labels_, starts[best][1])
    assert getattr(est, score) != pytest.approx(scores[0], rel=1e-9)


def _inertia(X, labels):
    return float(sum(((X[labels == c] - X[labels == c].mean(0)) ** 2).sum() for c in np.unique(labels)))


def test_kmeans_wrapper_passes_n_init_on():
    """``kmeans`` delegates its restarts to scikit-learn's KMeans: the fit must be the best of
    the ``n_init`` starts that KMeans draws from the wrapper's seed (not only the first)."""
    X, _ = _blobs(k=6, sep=2.5)
    n_init = 5

    def starts_of(rs):
        seed = int(np.random.default_rng(rs).integers(2**31 - 1))
        R = np.random.RandomState(seed)
        fits = (KMeans(6, n_init=1, random_state=R).fit(X) for _ in range(n_init))
        return [(float(km.inertia_), km.labels_) for km in fits]

    rs, starts = _telling_seed(starts_of)
    est = make_method("kmeans", n_clusters=6, n_init=n_init, random_state=rs).fit(X)
    scores = [sc for sc, _ in starts]
    assert _inertia(X, est.labels_) == pytest.approx(min(scores), rel=1e-9)
    assert _inertia(X, est.labels_) > 0  # sanity
    assert min(scores) < scores[0] - 1e-9


# -- mpck_means: the learned per-cluster metrics price the assignment ----------------------


def _stretched(seed=0, n_per=25):
    """Two clusters apart along feature 0 (tight) with a wide, uninformative feature 1
    whose spread differs by cluster: per-cluster metrics change which centre is nearest."""
    rng = np.random.default_rng(seed)
    a = np.c_[rng.normal(0.0, 0.3, n_per), rng.normal(0.0, 4.0, n_per)]
    b = np.c_[rng.normal(2.5, 0.3, n_per), rng.normal(0.0, 0.5, n_per)]
    return np.r_[a, b], np.repeat([0, 1], n_per)


def test_mpck_means_assigns_with_its_learned_metrics():
    """At convergence every unconstrained point's label is the argmin of the unary cost
    ||x - mu_h||^2_{A_h} - log det A_h under the returned metrics A_h (``metrics_``); the
    Euclidean nearest centre differs for some point, so a fit whose assignment silently used
    the raw (identity) metric would not match."""
    from ccbench_plugins.kmeans.mpck_means import assignment_terms

    X, y = _stretched()
    cons = cgen.random_pairs(y, 6, rng=np.random.default_rng(3))
    est = make_method("mpck_means", n_clusters=2, random_state=0, max_iter=200).fit(X, constraints=cons)
    assert est.converged_
    A, C = est.metrics_, est.cluster_centers_
    assert not np.allclose(A, 1.0)  # something was learned
    free = np.setdiff1d(np.arange(len(X)), np.r_[cons.must_link.ravel(), cons.cannot_link.ravel()])
    no_pairs = (np.zeros(len(X) + 1, dtype=np.intp), np.zeros(0, dtype=np.intp), np.zeros(0))
    cost, _, _ = assignment_terms(X, C, A, np.zeros_like(A), no_pairs, np.zeros((0, X.shape[1])), no_pairs,
                                  np.zeros((0, X.shape[1])))
    learned = np.argmin(cost, axis=1)
    raw = np.argmin(((X[:, None, :] - C[None]) ** 2).sum(2), axis=1)
    assert np.any(learned[free] != raw[free]), "the data must make the learned metrics matter"
    np.testing.assert_array_equal(est.labels_[free], learned[free])
