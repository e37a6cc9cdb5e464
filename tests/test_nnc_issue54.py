"""NNC family: survivors of the mutation sample of seed 20261129 (issue 54, item 20).

Each test asserts the property the mutated line is responsible for (tests/mutation/REVERSALS.md
lists the draws it kills).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from ccbench_plugins.nnc.fpc import FarthestPointClustering


def test_metric_time_is_the_clock_difference_around_the_metric_step(monkeypatch):
    # Draw 14: metric_time_ = perf_counter() // t0 instead of the difference. A clock that
    # advances 0.3 s per reading: the metric step reads it twice (before and after), so its
    # time is one step, whatever the clock's origin.
    ticks = iter(1000.0 + 0.3 * np.arange(1000))
    monkeypatch.setattr(time, "perf_counter", lambda: float(next(ticks)))
    X = np.random.default_rng(0).normal(size=(12, 2))
    est = FarthestPointClustering(n_clusters=2, random_state=0).fit(X)
    assert est.metric_time_ == pytest.approx(0.3, abs=1e-9)


def test_dmax_ties_go_to_the_first_group_also_at_infinite_distance():
    # Draw 29: the kernel's running argmin started at group 1. Its documented tie rule is the
    # first group; a point whose squared distances overflow to inf ties every group (fit()
    # warns about such data, DataScaleWarning, but still assigns it).
    from ccbench_plugins.nnc._kernels import dmax_assign

    X = np.array([[1e200], [0.5], [2.0]])
    L = np.array([[-1e200], [0.0], [1.0], [-1e200], [0.0], [1.0]])  # two identical groups
    starts, ends = np.array([0, 3]), np.array([3, 6])
    best, arg = np.zeros(3), np.full(3, -1, dtype=np.intp)
    with np.errstate(over="ignore"):  # the overflow is the case under test
        dmax_assign(X, L, starts, ends, best, arg)
    np.testing.assert_array_equal(arg, [0, 0, 0])
    assert best[0] == np.inf


@pytest.mark.parametrize("name", ["fpc", "nnc", "cop_kmeans_xing", "pck_means_xing"])
def test_n_clusters_zero_is_refused_by_the_method_called(name):
    # Draw 34: the baselines' own bound on n_clusters lowered to 0; the k-means delegate then
    # refused it, after the metric was learned, in an error naming the delegate (COPKMeans),
    # not the method the user asked for.
    import ccbench

    est = ccbench.make_method(name, n_clusters=0)
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match=rf"^{type(est).__name__}: parameter 'n_clusters'"):
        est.fit(X)


def _quiet_learn(X, cons, kind):
    import warnings

    from ccbench_plugins.nnc.metric_learning import learn_metric

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = learn_metric(X, cons.must_link, cons.cannot_link, kind)
    return m, [str(w.message) for w in caught]


def test_the_lp_ray_reaches_the_best_split_of_the_simplex():
    # Draw 18: the tie-break was given the LP vertex's first weight as the optimal split
    # (res.x[0], not res.x[-1]): its least-norm point then left the optimal face (split 0.38
    # instead of 1.18 here). Features 0 and 1 are constant inside each labeled set (feature 1 a
    # rescaled copy of 0, feature 2 separates two of the three sets), so the program is unbounded.
    import cvxpy as cp

    from ccbench import Constraints
    from ccbench_plugins.nnc.metric_learning import pair_sq_diffs

    rng = np.random.default_rng(2)
    lab = np.repeat([0, 1, 2, -1], [4, 4, 4, 18])
    f0 = np.r_[np.repeat([1.0, 2.0, 3.0], 4), rng.integers(1, 4, 18)]
    f2 = np.r_[np.repeat([1.0, 1.0, 2.5], 4), rng.integers(1, 4, 18)]
    X = np.c_[f0, f0 * rng.uniform(0.5, 2), f2, rng.uniform(1, 3, 30)]
    cons = Constraints.from_labels(lab)
    m, msgs = _quiet_learn(X, cons, "lp_diag")
    assert m.status == "unbounded_ray" and not [s for s in msgs if "tie-break" in s]
    dml, dcl = pair_sq_diffs(X, cons.must_link), pair_sq_diffs(X, cons.cannot_link)
    free = dml.sum(axis=0) == 0
    z, s = cp.Variable(X.shape[1], nonneg=True), cp.Variable()
    cp.Problem(cp.Maximize(s), [dcl @ z >= s, cp.sum(z) == 1, z[~free] == 0]).solve(solver="CLARABEL")
    assert m.split == pytest.approx(s.value, rel=1e-6)
    assert m.weights.sum() == pytest.approx(1.0) and np.all(m.weights[~free] == 0)


def test_xing_gives_a_feature_constant_over_every_pair_zero_weight():
    # Draw 32: the bounded program's features were taken as m >= 0 (every feature) instead of
    # m > 0, so a feature no pair varies divided 0 by 0. Two routes: the data with a constant
    # column added, and without it; the weights agree and the constant column's is 0.
    from ccbench import constraints as cgen

    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], 8)
    X = np.c_[y + rng.normal(0, 0.3, 24), rng.normal(size=24)]
    cons = cgen.labeled_subsets(y, 3, rng=np.random.default_rng(4))
    ref, _ = _quiet_learn(X, cons, "xing_diag")
    with_constant, _ = _quiet_learn(np.c_[X, np.full(24, 7.0)], cons, "xing_diag")
    assert ref.status == with_constant.status == "optimal"
    np.testing.assert_allclose(with_constant.weights, np.r_[ref.weights, 0.0], rtol=1e-9, atol=1e-12)
