"""SSAP-L given k (issue 50, item 5): macro-nodes that outnumber k, freed or reported.

Held apart, every macro-node is a cluster (Leone et al. 2008, section 4), so sparse must-link pairs
(one chunklet per pair) put a floor above k on the count: the shipped leaderboard's SSAP-L returned k
in 19.9 % of its 760 sparse-pair trials. The search frees the unlabeled chunklets then (they choose an
exemplar, eqs. 21-23 over {points} + {chunklets}); labeled macro-nodes that outnumber k are reported.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from ccbench_plugins.scap.scap import SSAPL, NClustersUnreachableWarning, _CandidateSimilarity, _run_scap
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

from sklearn.metrics import adjusted_rand_score

from ccbench import Constraints
from ccbench import constraints as cgen
from ccbench.similarity import negative_sq_euclidean


def _blobs(n_per, centers, scale=0.3, seed=0):
    rng = np.random.default_rng(seed)
    centers = np.asarray(centers, dtype=float)
    X = np.concatenate([c + scale * rng.normal(size=(n_per, centers.shape[1])) for c in centers])
    return X, np.repeat(np.arange(len(centers)), n_per)


def _must_link_pairs(y, n_pairs, rng):
    """``n_pairs`` disjoint must-link pairs inside classes: ``n_pairs`` chunklets, no labels."""
    order = rng.permutation(len(y))
    pairs, used = [], set()
    for i in order:
        if len(pairs) == n_pairs:
            break
        mates = [j for j in order if j != i and y[j] == y[i] and j not in used and i not in used]
        if mates:
            pairs.append([int(i), int(mates[0])])
            used.update(pairs[-1])
    return Constraints(pairs, [], n_samples=len(y))


def _fit(est, X, cons):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, constraints=cons)
    return est, caught


def test_more_chunklets_than_k_reach_k_on_two_blobs():
    # 6 must-link pairs (6 chunklets) on 2 blobs, k = 2: held apart they are at least 6 clusters at any p
    X, y = _blobs(20, [[0, 0], [6, 0]], seed=1)
    cons = _must_link_pairs(y, 6, np.random.default_rng(0))
    assert len(cons.chunklets()) == 6
    est, caught = _fit(SSAPL(n_clusters=2, stop_on="clusters", random_state=0), X, cons)
    assert est.labels_.max() + 1 == 2 and est.n_clusters_reached_ and est.n_clusters_exact_
    assert est.n_clusters_unreachable_ is None and est.n_free_macro_nodes_ == 6
    assert adjusted_rand_score(y, est.labels_) == 1.0  # well separated: the blobs
    assert not any(issubclass(w.category, NClustersUnreachableWarning) or "no p in" in str(w.message) for w in caught)
    for a, b in cons.must_link:  # the chunklets' members still share a cluster
        assert est.labels_[a] == est.labels_[b]


def test_iris_with_sparse_pairs_reaches_k_and_keeps_must_links():
    # iris, standardised, 6 must-link pairs (the leaderboard's middle budget, 15 random pairs, gives 3-8)
    X = StandardScaler().fit_transform(load_iris().data)
    y = load_iris().target
    cons = _must_link_pairs(y, 6, np.random.default_rng(3))
    n_chunklets = len(cons.chunklets())
    assert n_chunklets == 6
    est, _ = _fit(SSAPL(n_clusters=3, stop_on="clusters", random_state=0), X, cons)
    assert est.labels_.max() + 1 == 3 and est.n_clusters_reached_
    assert est.n_free_macro_nodes_ == n_chunklets
    assert all(est.labels_[a] == est.labels_[b] for a, b in cons.must_link)
    # the freed chunklets do not cost the partition: setosa alone, the rest mostly in two clusters
    assert adjusted_rand_score(y, est.labels_) > 0.5


def test_more_labeled_macro_nodes_than_k_is_reported_not_silent():
    # three labeled classes (three held macro-nodes) and k = 2: no p gives 2 clusters
    X, y = _blobs(15, [[0, 0], [6, 0], [0, 6]], seed=2)
    cons = cgen.labeled_subsets(y, 2, rng=np.random.default_rng(0))
    with pytest.warns(NClustersUnreachableWarning, match="3 labeled macro-nodes") as rec:
        est = SSAPL(n_clusters=2, stop_on="clusters", random_state=0).fit(X, constraints=cons)
    assert not est.n_clusters_reached_ and not est.n_clusters_exact_
    assert "3 labeled macro-nodes" in est.n_clusters_unreachable_
    assert est.n_free_macro_nodes_ == 0
    assert est.labels_.max() + 1 >= 3 and len(np.unique(est.labels_[cons.labels >= 0])) == 3
    assert any("n_clusters_reached_=False" in str(w.message) for w in rec)


def test_labeled_macro_nodes_stay_held_when_unlabeled_chunklets_are_freed():
    # labels on two of three blobs plus must-link pairs on the third: 2 labeled + 4 unlabeled > k = 3
    X, y = _blobs(15, [[0, 0], [6, 0], [0, 6]], seed=5)
    labels = np.full(len(y), -1)
    labels[[0, 1, 15, 16]] = [0, 0, 1, 1]
    third = np.flatnonzero(y == 2)
    pairs = [[0, 1], [15, 16]] + [[int(a), int(b)] for a, b in third[:8].reshape(4, 2)]
    cons = Constraints(pairs, [], labels=labels, n_samples=len(y))
    est, _ = _fit(SSAPL(n_clusters=3, stop_on="clusters", random_state=0), X, cons)
    assert est.n_clusters_reached_ and est.labels_.max() + 1 == 3
    assert est.n_free_macro_nodes_ == 4
    held = est.macro_nodes_[est.n_free_macro_nodes_:]
    assert sorted(g.tolist() for g in held) == [[0, 1], [15, 16]]
    assert est.labels_[0] != est.labels_[15]
    assert adjusted_rand_score(y, est.labels_) == 1.0


def test_k_free_fit_and_chunklets_within_k_are_unchanged():
    # the freeing happens only in a search whose macro-nodes outnumber k
    X, y = _blobs(20, [[0, 0], [6, 0]], seed=1)
    cons = _must_link_pairs(y, 6, np.random.default_rng(0))
    free = SSAPL(p=5.0, stop_on="clusters", random_state=0).fit(X, constraints=cons)
    assert free.n_free_macro_nodes_ == 0 and free.labels_.max() + 1 >= 6 and free.n_clusters_reached_
    two = _must_link_pairs(y, 2, np.random.default_rng(0))
    est, _ = _fit(SSAPL(n_clusters=2, stop_on="clusters", random_state=0), X, two)
    assert est.n_free_macro_nodes_ == 0 and est.n_clusters_reached_


def test_free_chunklet_rows_are_the_max_over_members():
    # two routes: _CandidateSimilarity's rows against the full similarity matrix, maxed by hand
    X, _ = _blobs(6, [[0, 0], [3, 1]], seed=7)
    groups = [np.array([0, 1]), np.array([6, 7, 8]), np.array([2])]  # two free, one held
    variables = np.array([3, 4, 5, 9, 10, 11])
    sim = _CandidateSimilarity(X, "sqeuclidean", variables, groups, n_free=2)
    S = negative_sq_euclidean(X)
    nodes = [[v] for v in variables] + [g.tolist() for g in groups]  # candidates
    expected = np.array([[S[np.ix_(a, b)].max() for b in nodes] for a in nodes[:8]])
    got = sim.rows(np.arange(8))
    mask = ~np.eye(8, len(nodes), dtype=bool)  # a variable's own column is never read (eq. 2)
    np.testing.assert_allclose(got[mask], expected[mask], rtol=1e-12, atol=1e-12)
    assert sim.n_variables == 8 and sim.n_candidates == 9


def test_free_chunklets_dense_and_linear_agree():
    X, y = _blobs(15, [[0, 0], [5, 0], [0, 5]], seed=4)
    cons = _must_link_pairs(y, 7, np.random.default_rng(1))
    fits = [SSAPL(n_clusters=3, memory=m, stop_on="clusters", random_state=0).fit(X, constraints=cons) for m in ("dense", "linear")]
    np.testing.assert_array_equal(fits[0].labels_, fits[1].labels_)
    assert fits[0].p_ == fits[1].p_ and fits[0].n_free_macro_nodes_ == 7


def test_free_chunklet_messages_match_direct_loops_over_eq22():
    # a free chunklet is a variable like a point: the direct loops over eq. 14 / 22 of test_scap, run on the
    # (n_var, n_cand) similarity whose chunklet rows are maxima over members, give the same exemplars
    from test_scap import _reference_sweeps

    X = np.array([[0.0, 0.0], [0.2, 0.1], [1.0, 1.2], [2.9, 3.0], [3.2, 3.1], [3.0, 2.6], [1.8, 1.9], [0.4, 0.3]])
    groups = [np.array([1, 7]), np.array([4, 5])]  # the first free, the second held
    variables = np.array([0, 2, 3, 6])
    p, sweeps, seed = 0.9, 3, 5
    sim = _CandidateSimilarity(X, "sqeuclidean", variables, groups, n_free=1)
    state, _, _ = _run_scap(sim, p=p, max_iter=sweeps, convergence_iter=10**6, rng=np.random.default_rng(seed),
                            dense=False)
    full = negative_sq_euclidean(X)
    nodes = [[v] for v in variables] + [g.tolist() for g in groups]
    S = np.array([[full[np.ix_(a, b)].max() for b in nodes] for a in nodes[:5]])
    rng = np.random.default_rng(seed)
    _, _, c_ref = _reference_sweeps(S, p, [rng.permutation(5) for _ in range(sweeps)])
    np.testing.assert_array_equal(state.exemplar, c_ref)


@pytest.mark.parametrize("method", ["ap", "scap"])
def test_ap_family_search_reports_n_clusters_reached_under_one_name(method):
    # the AP family (PreferenceSearchMixin) and SCAP give the same two attributes the harness can read:
    # ten points of one blob are not ten clusters at any preference in the bracket (every point its own
    # exemplar needs a preference above s_max), nine are
    from ccbench import make_method

    X = 0.3 * np.random.default_rng(0).normal(size=(10, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        missed = make_method(method, n_clusters=10, random_state=0).fit(X)
        default = make_method(method, random_state=0).fit(X)
    assert not missed.n_clusters_reached_ and missed.labels_.max() + 1 != 10
    assert "bisection steps" in missed.n_clusters_unreachable_
    assert default.n_clusters_reached_ and default.n_clusters_unreachable_ is None


class _CountCurve:
    """A stand-in estimator whose fit at a preference finds a given count (a hand-made count curve)."""

    def __init__(self, count):
        self.count, self.fits = count, []

    def fit_at(self, preference):
        self.labels_ = np.zeros(3, dtype=int)  # a fitted attribute: the state the search keeps
        self.preference_ = preference
        self.fits.append(preference)
        return self.count(preference)


def test_search_looks_below_the_bracket_when_every_fit_gives_too_many():
    # bracket [-10, -1]; 4 clusters (k + 1) down to -50, k = 3 below it (as SCSSAP on balance: 4-5 across
    # the bracket, 3 at 10 x its low end): the search must find -50's plateau end, not keep 4
    from ccbench.similarity import fit_for_n_clusters

    curve = _CountCurve(lambda p: 4 if p > -50.0 else 3)
    search = fit_for_n_clusters(curve, curve.fit_at, 3, -10.0, -1.0)
    assert search.exact and search.n_clusters == 3
    assert -50.0 * 1.05 <= search.preference <= -50.0  # the plateau's upper end, within rtol
    assert curve.preference_ == search.preference  # the kept state is the returned fit's
    assert search.n_fits == len(curve.fits)
    # a floor above k at every preference: two probes more, the closest kept, not exact
    floor = _CountCurve(lambda p: 4)
    missed = fit_for_n_clusters(floor, floor.fit_at, 3, -10.0, -1.0)
    assert not missed.exact and missed.n_clusters == 4 and missed.n_fits == 20 + 2
    # a closer count below the bracket that is not k does not replace the bracket's closest fit
    closer = _CountCurve(lambda p: 5 if p > -50.0 else 4)
    kept = fit_for_n_clusters(closer, closer.fit_at, 3, -10.0, -1.0)
    assert not kept.exact and kept.n_clusters == 5 and -10.0 <= kept.preference
    assert closer.preference_ == kept.preference and min(closer.fits) < -50.0
    # a count reached inside the bracket is searched as before: nothing below it is fitted
    inside = _CountCurve(lambda p: 4 if p > -5.0 else 3)
    hit = fit_for_n_clusters(inside, inside.fit_at, 3, -10.0, -1.0)
    assert hit.exact and min(inside.fits) >= -10.0


def test_free_chunklets_numba_and_numpy_agree():
    # dense mode: the compiled sweep reads the stored rows, free chunklets' maxima included; linear mode
    # with numba runs the numpy sweep for them (the compiled linear sweep builds point rows only)
    pytest.importorskip("numba")
    X, y = _blobs(15, [[0, 0], [5, 0], [0, 5]], seed=4)
    cons = _must_link_pairs(y, 7, np.random.default_rng(1))
    fits = [SSAPL(n_clusters=3, memory=m, backend=b, stop_on="clusters", random_state=0).fit(X, constraints=cons)
            for m, b in (("dense", "numpy"), ("dense", "numba"), ("linear", "numba"))]
    for other in fits[1:]:
        np.testing.assert_array_equal(fits[0].labels_, other.labels_)
        assert other.p_ == fits[0].p_ and other.n_free_macro_nodes_ == 7
