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


# -- n_clusters: the preference search of the AP family (core.PreferenceSearchMixin) -------


def _four_blobs():
    """Four tight blobs of 12 points, 6 apart (as tests/test_ap_n_clusters.py)."""
    rng = np.random.default_rng(0)
    return np.concatenate([c + 0.3 * rng.normal(size=(12, 2)) for c in ([0, 0], [6, 0], [0, 6], [6, 6])])


def test_one_cluster_is_reachable_from_the_searchs_lower_end():
    # core.py fit: the search starts at N s_min, below which one exemplar is optimal (a
    # second gains at most N (s_max - s_min) <= -N s_min). Any smaller lower end (e.g. d s_min,
    # here -144 against -3,456) leaves four exemplars cheaper than one, and k = 1 unreachable.
    X = _four_blobs()
    est = make_method("ap", n_clusters=1, random_state=0).fit(X)
    assert est.n_clusters_exact_
    assert np.unique(est.labels_).size == 1


def test_the_search_keeps_the_fit_closest_to_n_clusters(monkeypatch):
    # core.py fit_at: when no preference gives n_clusters, the fit kept is the first one
    # whose count is closest to it. The counts are scripted (the real fits run, their
    # labels are recorded): 1, 1, 1, 1, 2, then 1 to the end, for n_clusters = 3, so the
    # fifth fit (2 clusters, 1 away) is the one to keep, not the first (2 away).
    import warnings

    from ccbench.base import ConvergenceWarning

    script = iter([1, 1, 1, 1, 2] + [1] * 100)
    seen = []

    def scripted(labels):
        seen.append(np.array(labels, copy=True))
        return next(script)

    monkeypatch.setattr(ap_core, "n_clusters_found", scripted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = make_method("ap", n_clusters=3, random_state=0).fit(_four_blobs())
    assert not est.n_clusters_exact_ and len(seen) == ap_core.PREFERENCE_SEARCH_FITS
    assert not np.array_equal(seen[0], seen[4])  # the two candidates are told apart
    np.testing.assert_array_equal(est.labels_, seen[4])


def test_scssap_ml_without_exemplars_keeps_the_uniform_start_metric():
    # scssap.py _fit: the metric starts uniform, one row of 1/d (eq. 28's start); when the
    # first AP pass finds no exemplar (one iteration at a preference far below every
    # similarity: no self-responsibility is positive yet) there is nothing to learn from,
    # and metrics_ must be that start, shape (1, d)
    import warnings

    X = np.random.default_rng(0).normal(size=(12, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_method("scssap_ml", preference=-1e6, max_iter=1, random_state=0).fit(X)
    assert np.all(est.labels_ == -1) and est.n_outer_iter_ == 1
    np.testing.assert_array_equal(est.metrics_, np.full((1, 3), 1.0 / 3))
