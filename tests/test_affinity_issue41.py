"""Affinity family: properties that the mutation run of issue 41 (seed 20261126) found unguarded.

Each test names the line it guards; see ``tests/mutation/issue41/README.md``.
"""

from __future__ import annotations

import numpy as np
import pytest
from ccbench_plugins.affinity import core as ap_core

from ccbench import make_method


@pytest.mark.parametrize("h", [0.0, -0.5])
def test_scssap_ml_refuses_a_bandwidth_that_is_not_positive(h):
    # scssap.py: h is the regulariser's weight in the metric update (eqs. 28-33); h <= 0
    # turns the regulariser off or rewards it, so the parameter check must refuse it
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="parameter 'h' must be float in \\(0, inf\\)"):
        make_method("scssap_ml", h=h).fit(X)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_equal_off_diagonal_with_unequal_preferences_runs_the_messages(backend):
    # core.py _equal_similarities: the scikit-learn shortcut (no messages; exemplar 0 or
    # every point) applies only when the off-diagonal entries AND the preferences are all
    # equal. Here every off-diagonal similarity is -1 but point 1 alone has preference 0:
    # one cluster on point 1 has net similarity 0 - 3 = -3, the best of all exemplar sets
    # (exemplar 0: -13; every point its own: -30), so the answer is point 1, not point 0.
    S = -np.ones((4, 4))
    np.fill_diagonal(S, [-10.0, 0.0, -10.0, -10.0])
    assert not ap_core._equal_similarities(S)
    res = ap_core.affinity_propagation(S, backend=backend)
    np.testing.assert_array_equal(res.exemplars, [1])
    np.testing.assert_array_equal(res.labels, [0, 0, 0, 0])  # cluster indices, in exemplar order


class _Refused:
    def __init__(self, *args, **kwargs):
        raise AssertionError("this back-end was not asked for")


@pytest.mark.parametrize("backend, refused", [("numpy", "_NumbaSteps"), ("numba", "_NumpySteps")])
def test_the_backend_asked_for_is_the_one_that_runs(monkeypatch, backend, refused):
    # core.py affinity_propagation: backend="numpy" is the route without numba (and the
    # reference the numba kernels are compared with), so it must never reach the numba
    # steps, nor backend="numba" the numpy ones; the two agree, so only this tells them apart
    pytest.importorskip("numba")
    monkeypatch.setattr(ap_core, refused, _Refused)
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(size=(8, 2)), rng.normal(size=(8, 2)) + 6]
    S = -((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(S, np.median(S[~np.eye(16, dtype=bool)]))
    res = ap_core.affinity_propagation(S, backend=backend)
    assert res.converged and res.exemplars.size >= 2
