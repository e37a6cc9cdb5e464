"""The NNC family clusters in the metric it learned (issue 41, section 2).

``fpc``, ``nnc``, ``cop_kmeans_xing`` and ``pck_means_xing`` learn a Mahalanobis metric from
the supervision and hand ``X`` mapped by it (``metric_.transform``) to the clustering step.
Each test feeds the learned space explicitly to the same method with ``metric="euclidean"``
and checks the fit equals that route, on data where the raw route (Euclidean on X) gives
another answer: feature 0 holds the classes at a small scale, feature 1 is wide noise.
``tests/mutation/reversals.py`` proves each test by handing the raw X on instead.
"""

import warnings

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from ccbench import Constraints, make_method
from ccbench import constraints as cgen


def _noisy_feature(n=40, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = np.c_[y + rng.normal(0, 0.05, n), rng.uniform(0, 10, n)]
    return X, y


CASES = [
    ("fpc", "lp_diag"),
    ("fpc", "xing_diag"),
    ("fpc", "sdp_full"),
    ("nnc", "lp_diag"),
    ("nnc", "xing_diag"),
    ("nnc", "sdp_full"),
    ("cop_kmeans_xing", "xing_diag"),
    ("cop_kmeans_xing", "lp_diag"),
    ("pck_means_xing", "xing_diag"),
    ("pck_means_xing", "lp_diag"),
]


@pytest.mark.parametrize("name, metric", CASES, ids=[f"{n}-{m}" for n, m in CASES])
def test_learned_metric_is_what_is_clustered(name, metric):
    X, y = _noisy_feature()
    cons = cgen.labeled_subsets(y, 3, rng=np.random.default_rng(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_method(name, n_clusters=2, metric=metric, random_state=0).fit(X, constraints=cons)
        Xt = est.metric_.transform(X)
        learned = make_method(name, n_clusters=2, metric="euclidean", random_state=0).fit(Xt, constraints=cons)
        raw = make_method(name, n_clusters=2, metric="euclidean", random_state=0).fit(X, constraints=cons)
    assert adjusted_rand_score(learned.labels_, raw.labels_) < 0.5  # the learned metric changes the answer
    np.testing.assert_array_equal(est.labels_, learned.labels_)
    assert adjusted_rand_score(est.labels_, y) == 1.0


def _cannot_link_case():
    """Three classes on feature 0 (at 0, 1, 2), feature 1 wide noise; point p (f0 = 0.5,
    unlabeled) is cannot-linked to a labeled class-0 point q, so NNC's greedy placement must
    move it to cluster 1 or 2: cluster 1 in the learned metric (f0 distance 0.5 vs 1.5),
    cluster 2 in the raw one (the class-2 labeled points share p's noise value)."""
    rng = np.random.default_rng(0)
    m = 10
    y = np.repeat([0, 1, 2], m)
    f1 = rng.uniform(0, 10, 3 * m)
    labels = np.full(3 * m, -1)
    lab = {0: [0, 1, 2], 1: [m, m + 1, m + 2], 2: [2 * m, 2 * m + 1, 2 * m + 2]}
    for c, idx in lab.items():
        labels[idx] = c
    f1[lab[1]] = [9.0, 9.5, 10.0]
    f1[lab[2]] = [0.5, 1.0, 1.5]
    p, q = 3, 0
    f1[p] = f1[q] = 1.0
    X = np.c_[y + rng.normal(0, 0.05, 3 * m), f1]
    X[p, 0] = 0.5
    base = Constraints.from_labels(labels)
    cons = Constraints(base.must_link, np.r_[base.cannot_link, [[q, p]]], n_samples=3 * m, labels=labels)
    return X, cons, p


@pytest.mark.parametrize("metric", ["lp_diag", "xing_diag"])
def test_nnc_places_cannot_linked_points_in_the_learned_metric(metric):
    X, cons, p = _cannot_link_case()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_method("nnc", n_clusters=3, metric=metric).fit(X, constraints=cons)
        Xt = est.metric_.transform(X)
        learned = make_method("nnc", n_clusters=3, metric="euclidean").fit(Xt, constraints=cons)
    # p sits between classes 0 and 1 in the learned space; the raw one puts class 2 nearer
    assert learned.labels_[p] == 1
    d2 = lambda Z, S: ((Z[S] - Z[p]) ** 2).sum(1).max()  # noqa: E731  (dMax)
    S1, S2 = np.flatnonzero(cons.labels == 1), np.flatnonzero(cons.labels == 2)
    assert d2(X, S2) < d2(X, S1) and d2(Xt, S1) < d2(Xt, S2)
    np.testing.assert_array_equal(est.labels_, learned.labels_)
    assert est.n_cannot_link_stuck_ == 0


@pytest.mark.parametrize("name", ["cop_kmeans_xing", "pck_means_xing"])
def test_xing_baselines_hand_their_restarts_and_parameters_to_the_delegate(name):
    """The delegate runs in the learned space with the baseline's own n_init / init / max_iter
    (and penalty): its fit equals the k-means family method given those explicitly on
    ``metric_.transform(X)`` with the seed the baseline draws, and, on these data, the
    restarts matter (the first start is not the best)."""
    X, y = _noisy_feature(n=60, seed=2)
    X = np.c_[X, np.random.default_rng(3).normal(0, 1, len(X))]  # a third feature: more local optima
    cons = cgen.random_pairs(y, 6, rng=np.random.default_rng(4))
    delegate = name.replace("_xing", "")
    params = dict(init="k-means++", max_iter=50, **({"penalty": 0.5} if delegate == "pck_means" else {}))
    score = "inertia_" if delegate == "cop_kmeans" else "objective_"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rs in range(40):
            est = make_method(name, n_clusters=4, metric="xing_diag", n_init=4, random_state=rs, **params)
            est.fit(X, constraints=cons)
            Xt = est.metric_.transform(X)
            seed = int(np.random.default_rng(rs).integers(2**31 - 1))
            g = np.random.default_rng(seed)
            starts = [getattr(make_method(delegate, n_clusters=4, n_init=1, random_state=g, **params)
                              .fit(Xt, constraints=cons), score) for _ in range(4)]
            if starts[0] > min(starts) + 1e-9:
                break
        else:
            pytest.fail("no seed in range whose first delegate start is not the best")
        explicit = make_method(delegate, n_clusters=4, n_init=4, random_state=seed, **params).fit(Xt, constraints=cons)
    assert getattr(est.estimator_, score) == pytest.approx(min(starts), rel=1e-12)
    np.testing.assert_array_equal(est.labels_, explicit.labels_)
    assert {k: est.estimator_.get_params()[k] for k in ("n_init", *params)} == {"n_init": 4, **params}
