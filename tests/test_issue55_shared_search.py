"""Issue 55: a tuned AP-family trial no longer repeats its search for k per grid point and fold.

CVCP fits the method at k-1, k, k+1 on each fold; each fit bisects its preference over the same
bracket. The searches of one fold now start from one another (:class:`SharedPreferenceFits`, the
``seen`` of :func:`bisect_preference`), a method that uses no supervision shares them across the
folds too, and SCAP / SSAP-L run their compiled sweep by default (the same exemplars as numpy).
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

from ccbench import Constraints
from ccbench.similarity import SharedPreferenceFits, bisect_preference, fit_for_n_clusters


def _staircase(step=1.0):
    """A monotone fit on a hand-sized scale: k(p) = 1 + floor(p / step) for p >= 0, else 1."""
    calls = []

    def fit(p):
        calls.append(p)
        return max(1, int(np.floor(p / step)) + 1) if p >= 0 else 1

    return fit, calls


# -- bisect_preference with earlier fits (seen) ----------------------------------------------


@pytest.mark.parametrize("k", [2, 3, 4])
def test_a_seeded_search_meets_the_same_contract_with_fewer_fits(k):
    """Seeded by the k-1 search's fits, the search for k ends on k's plateau end, fitting less."""
    fit, calls = _staircase()
    first = bisect_preference(fit, k - 1, -1.0, 10.0, max_iter=30)
    seen = {p: fit(p) for p in list(calls)}
    fit2, calls2 = _staircase()
    alone = bisect_preference(fit2, k, -1.0, 10.0, max_iter=30)
    fit3, calls3 = _staircase()
    seeded = bisect_preference(fit3, k, -1.0, 10.0, max_iter=30, seen=seen)
    assert first.exact and alone.exact and seeded.exact
    # k's plateau is [k - 1, k): both answers lie on it, within rtol of its upper end
    for out in (alone, seeded):
        assert k - 1 <= out.preference < k and k - out.preference <= 0.05 * abs(out.preference) + 1.0 / 2 ** 10
    assert seeded.n_fits == len(calls3) < alone.n_fits


def test_seen_fits_that_already_answer_need_no_fit():
    fit, calls = _staircase()
    seen = {2.9: 3, 2.95: 3, 3.0: 4}  # k = 3's plateau end, bracketed to 0.05 of it
    out = bisect_preference(fit, 3, -1.0, 10.0, seen=seen)
    assert (out.preference, out.n_clusters, out.n_fits, out.exact) == (2.95, 3, 0, True)
    assert calls == []


def test_non_monotone_seen_counts_leave_the_bracket_as_given():
    """Counts that contradict a monotone fit (4 below a 2) do not bound the search: it runs as unseeded."""
    fit, _ = _staircase()
    alone = bisect_preference(_staircase()[0], 3, -1.0, 10.0)
    out = bisect_preference(fit, 3, -1.0, 10.0, seen={0.5: 4, 8.0: 2})
    assert (out.preference, out.n_fits) == (alone.preference, alone.n_fits)


# -- fit_for_n_clusters inside SharedPreferenceFits -------------------------------------------


class _Stairs:
    """An estimator whose fit at preference p finds the staircase's count; remembers its fits."""

    random_state = 0

    def __init__(self, n_clusters=None, confidence=None):
        self.n_clusters, self.confidence, self.fits = n_clusters, confidence, []

    def get_params(self, deep=False):
        return {"n_clusters": self.n_clusters, "confidence": self.confidence, "random_state": self.random_state}

    def fit_at(self, p):
        self.fits.append(p)
        self.converged_ = True
        found = max(1, int(np.floor(p)) + 1) if p >= 0 else 1
        self.labels_ = np.arange(20) % found
        self.preference_ = p
        return found

    def search(self):
        return fit_for_n_clusters(self, self.fit_at, self.n_clusters, -1.0, 10.0)


def _grid_fits(block_factory, confidence=(None,)):
    """Fits of k = 2, 3, 4 (and each confidence) as CVCP runs them on one fold, and their searches."""
    estimators, searches = [], []
    with block_factory():
        for c in confidence:
            for k in (2, 3, 4):
                est = _Stairs(k, c)
                searches.append(est.search())
                estimators.append(est)
    return estimators, searches


def test_a_folds_searches_share_their_fits_and_each_keeps_its_own_answer():
    from contextlib import nullcontext

    alone, alone_searches = _grid_fits(nullcontext)
    shared, shared_searches = _grid_fits(SharedPreferenceFits)
    assert sum(len(e.fits) for e in shared) < sum(len(e.fits) for e in alone)
    assert len(shared[0].fits) == len(alone[0].fits)  # the fold's first search is the unseeded one
    assert shared_searches[0] == alone_searches[0]
    for k, est, search in zip((2, 3, 4), shared, shared_searches):
        # k's plateau is [k - 1, k); the estimator is left in the state of the fit at the kept preference
        assert search.exact and k - 1 <= search.preference < k and search.n_fits == len(est.fits)
        assert est.preference_ == search.preference and len(np.unique(est.labels_)) == k


def test_other_settings_and_outside_a_block_share_nothing():
    # a confidence is another model: its searches do not read the first confidence's fits
    shared, _ = _grid_fits(SharedPreferenceFits, confidence=(None, 0.5))
    assert [len(e.fits) for e in shared[:3]] == [len(e.fits) for e in shared[3:]]
    # no block: every search runs in full (the untuned path is unchanged)
    est = _Stairs(3)
    est.search()
    again = _Stairs(3)
    again.search()
    assert est.fits == again.fits


def test_covers_nested_shares_the_outer_record_with_inner_blocks():
    """A method that uses no supervision fits the same problem on every fold: the tuner opens one
    record over its folds (covers_nested), and each fold's own block reads it."""
    def folds(outer):
        fits = []
        with outer:
            for _ in range(3):
                with SharedPreferenceFits():
                    est = _Stairs(3)
                    est.search()
                    fits.append(len(est.fits))
        return fits

    per_fold = folds(SharedPreferenceFits(covers_nested=False))
    across = folds(SharedPreferenceFits(covers_nested=True))
    assert per_fold[0] == per_fold[1] == per_fold[2] > 0
    assert across[0] == per_fold[0] and across[1] == across[2] == 1  # later folds refit only the kept fit


def test_a_random_seed_is_not_shared():
    """An estimator with random_state=None draws anew at every fit: its counts are not the same fit's."""
    with SharedPreferenceFits():
        first, second = _Stairs(3), _Stairs(3)
        first.random_state = second.random_state = None
        first.search()
        second.search()
    assert len(first.fits) == len(second.fits)


# -- the real methods ------------------------------------------------------------------------


def _iris():
    data = load_iris()
    return StandardScaler().fit_transform(data.data), data.target


def test_scap_and_ssapl_default_to_the_compiled_dense_sweep_with_the_numpy_answer():
    """backend='auto' runs the compiled sweep with dense memory (numpy in linear mode): the same
    exemplars as the numpy path on iris with its search for k."""
    from ccbench_plugins.scap.scap import SCAP, SSAPL

    X, y = _iris()
    rng = np.random.default_rng(0)
    pairs = rng.choice(len(X), size=(15, 2))
    same = y[pairs[:, 0]] == y[pairs[:, 1]]
    cons = Constraints(pairs[same], pairs[~same], n_samples=len(X))
    for cls in (SCAP, SSAPL):
        assert cls()._backend() == "numba" and cls(memory="linear")._backend() == "numpy"
        fast = cls(n_clusters=3, random_state=0).fit(X, constraints=cons)
        slow = cls(n_clusters=3, random_state=0, backend="numpy").fit(X, constraints=cons)
        np.testing.assert_array_equal(fast.labels_, slow.labels_)
        assert fast.p_ == slow.p_ and fast.n_preference_fits_ == slow.n_preference_fits_


@pytest.mark.parametrize("method", ["scap", "ssap_l"])
def test_cvcp_over_k_fits_fewer_preferences_and_chooses_as_the_unshared_grid(method, monkeypatch):
    """CVCP over k on iris (pairs, 3 folds): the same scores per combination as fitting every
    (combination, fold) on its own, with fewer preference fits (scap, which uses no supervision,
    about one search per k)."""
    import json

    import ccbench.similarity as similarity
    from ccbench import registry
    from ccbench.running import protocol, tuning
    from ccbench_plugins.selection import cvcp

    X, y = _iris()
    rng = np.random.default_rng(1)
    pairs = rng.choice(len(X), size=(15, 2))
    same = y[pairs[:, 0]] == y[pairs[:, 1]]
    cons = Constraints(pairs[same], pairs[~same], n_samples=len(X))
    spec = registry.get_method_spec(method)
    fits = []
    real = similarity.bisect_preference

    def counted(fit, *args, **kwargs):
        out = real(fit, *args, **kwargs)
        fits.append(out.n_fits)
        return out

    monkeypatch.setattr(similarity, "bisect_preference", counted)
    params, k, fields = tuning.tune_trial("cvcp", 3, spec, {}, 7, 3, X, cons)
    shared_fits = sum(fits)

    # the other route: every (combination, fold) fitted alone, no record, scored by cvcp's own measure
    fits.clear()
    splits = cvcp.split(cons, 3, np.random.default_rng(7))
    scores = {}
    for kk in ("k-1", "k", "k+1"):
        k_abs = {"k-1": 2, "k": 3, "k+1": 4}[kk]
        per_fold = []
        for train, held in splits:
            est = protocol.build_estimator(spec, {}, 7, n_clusters=k_abs)
            per_fold.append(cvcp.constraint_f_measure(est.fit(X, constraints=train).labels_, held))
        scores[kk] = float(np.mean(per_fold))
    alone_fits = sum(fits)
    chosen = json.loads(fields["tuned_params"])["n_clusters"]
    assert chosen == max(scores, key=lambda c: (scores[c], c == "k"))
    assert fields["tune_score"] == pytest.approx(scores[chosen])
    assert shared_fits < alone_fits
    if method == "scap":
        assert shared_fits < 0.5 * alone_fits
