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
