"""NNC's choices, signs and accepted steps (issue 54, item 20): hand-sized known answers.

Three classes of break that random mutation rarely draws, each checked here on a case small
enough to work out by hand (1-D points, squared distances):

- **choice reversed**: the greedy cannot-link repair (:func:`enforce_cannot_links`) places the
  most confident point first (smallest distance to its nearest representative), each to its
  nearest *allowed* cluster, a stranded point to its nearest cluster; Xing's Newton line search
  keeps only a step that lowers g.
- **distance swapped**: the repair ranks clusters by dMax (the farthest member of S_g, as
  Algorithm 2 assigns), not dMin.
- **silent or false warning**: a point the greedy repair cannot place is counted and warned
  about; a fit whose cannot-links all hold warns nothing (issue 54: "0 point(s) could not be
  placed" on normal fits, silence on stranded points).

``tests/mutation/reversals.py`` applies each break (``--only nnc``) and runs these tests.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from ccbench_plugins.nnc import metric_learning as ml
from ccbench_plugins.nnc.metric_learning import pair_sq_diffs

import ccbench
from ccbench import Constraints


def _fit_nnc(x, partial_labels, extra_cannot_links, k):
    """NNC on 1-D points ``x`` with labeled subsets and cannot-links beyond them; returns the
    estimator and the warnings it raised (all of them recorded)."""
    X = np.asarray(x, dtype=float)[:, None]
    lab = np.asarray(partial_labels)
    base = Constraints.from_labels(lab)
    cl = np.r_[base.cannot_link, np.asarray(extra_cannot_links, dtype=int).reshape(-1, 2)]
    cons = Constraints(base.must_link, cl, n_samples=len(X), labels=lab)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = ccbench.make_method("nnc", n_clusters=k).fit(X, constraints=cons)
    return est, [str(w.message) for w in caught]


def _stuck_warnings(messages):
    return [m for m in messages if "could not be placed" in m]


# -- the greedy repair's choices ------------------------------------------------------------


def test_a_cannot_linked_point_moves_to_its_nearest_allowed_cluster():
    # S0 = {0}, S1 = {3}, S2 = {10}; p = 1 is nearest S0 (1) but cannot-linked to it: of the
    # allowed clusters S1 is at 4, S2 at 81 (squared), so p joins S1
    est, msgs = _fit_nnc([0, 3, 10, 1.0], [0, 1, 2, -1], [[3, 0]], 3)
    np.testing.assert_array_equal(est.labels_, [0, 1, 2, 1])
    assert est.n_cannot_link_stuck_ == 0 and _stuck_warnings(msgs) == []


def test_the_repair_places_the_most_confident_point_first():
    # S0 = {0}, S1 = {3}; q = 1.2 (index 2) and p = 0.5 (index 3) are cannot-linked and both
    # nearest S0. p is the more confident (0.25 against 1.44), so p keeps S0 and q moves to S1.
    # Placed in index order or least confident first, q would take S0 and push p out.
    est, msgs = _fit_nnc([0, 3, 1.2, 0.5], [0, 1, -1, -1], [[2, 3]], 2)
    np.testing.assert_array_equal(est.labels_, [0, 1, 1, 0])
    assert est.n_cannot_link_stuck_ == 0 and _stuck_warnings(msgs) == []


def test_the_repair_ranks_clusters_by_dmax_not_dmin():
    # p = 2 (index 5) starts in S0 = {1.5, 2.2} (dMax 0.25) and is cannot-linked to 1.5.
    # S1 = {2.5, 9} has dMax 49 (dMin 0.25), S2 = {4} has 4: by dMax p joins S2
    est, _ = _fit_nnc([1.5, 2.2, 2.5, 9.0, 4.0, 2.0], [0, 0, 1, 1, 2, -1], [[5, 0]], 3)
    np.testing.assert_array_equal(est.labels_, [0, 0, 1, 1, 2, 2])


def test_a_stranded_point_joins_its_nearest_cluster_counted_and_warned():
    # k = 2 and p = 1 is cannot-linked to both subsets: no cluster is allowed; it keeps its
    # nearest (S0 at 1, not S1 at 16), one cannot-link is violated, and the fit says so
    est, msgs = _fit_nnc([0, 5, 1.0], [0, 1, -1], [[2, 0], [2, 1]], 2)
    np.testing.assert_array_equal(est.labels_, [0, 1, 0])
    assert est.n_cannot_link_stuck_ == 1
    assert len(_stuck_warnings(msgs)) == 1 and _stuck_warnings(msgs)[0].startswith("1 point(s)")


def test_a_fit_whose_cannot_links_all_hold_warns_nothing_about_placement():
    # iris with 3 labeled points per class and cannot-links from unlabeled points to other
    # classes' labeled points: every one can be met, so no placement warning and count 0
    ds = ccbench.load_dataset("iris", preprocess="minmax_1_2")
    rng = np.random.default_rng(0)
    base = ccbench.constraints.labeled_subsets(ds.y, 3, rng=rng)
    free = np.flatnonzero(base.labels < 0)[:20]
    labeled = np.flatnonzero(base.labels >= 0)
    extra = [[p, next(q for q in labeled if ds.y[q] != ds.y[p])] for p in free]
    cons = Constraints(base.must_link, np.r_[base.cannot_link, extra], n_samples=len(ds.y), labels=base.labels)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = ccbench.make_method("nnc", n_clusters=3).fit(ds.X, constraints=cons)
    assert _stuck_warnings([str(w.message) for w in caught]) == []
    assert est.n_cannot_link_stuck_ == 0
    a, b = cons.cannot_link.T
    assert np.all(est.labels_[a] != est.labels_[b])


def _random_instance(seed, n_pairs):
    """30 points in 2-D, two labeled subsets of two points, ``n_pairs`` random cannot-links
    among the free points (with k = 2, many pairs form odd cycles: some point is stranded)."""
    rng = np.random.default_rng(seed)
    n = 30
    X = rng.normal(size=(n, 2))
    lab = np.full(n, -1)
    lab[:2], lab[2:4] = 0, 1
    cl = rng.choice(np.arange(4, n), size=(n_pairs, 2))
    cl = cl[cl[:, 0] != cl[:, 1]]
    base = Constraints.from_labels(lab)
    return X, Constraints(base.must_link, np.r_[base.cannot_link, cl], n_samples=n, labels=lab)


RANDOM_CASES = [(seed, n_pairs) for seed in range(3) for n_pairs in (3, 12)]


@pytest.mark.parametrize("seed, n_pairs", RANDOM_CASES)
def test_the_stuck_count_is_zero_exactly_when_every_cannot_link_holds(seed, n_pairs):
    """Invariant over random instances (two routes: the count the estimator reports and the
    violations counted here from its labels): a violated cannot-link has a stranded endpoint,
    so count 0 <=> no violation, and the count never exceeds the violated pairs; the warning
    is raised exactly when the count is positive."""
    X, cons = _random_instance(seed, n_pairs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = ccbench.make_method("nnc", n_clusters=2).fit(X, constraints=cons)
    a, b = cons.cannot_link.T
    violated = int(np.sum(est.labels_[a] == est.labels_[b]))
    assert (est.n_cannot_link_stuck_ == 0) == (violated == 0)
    assert est.n_cannot_link_stuck_ <= violated
    assert bool(_stuck_warnings([str(w.message) for w in caught])) == (est.n_cannot_link_stuck_ > 0)


def test_the_random_instances_strand_points_in_some_fits_and_none_in_others():
    """The invariant above is not vacuous: both outcomes occur among its cases."""
    stuck = []
    for seed, n_pairs in RANDOM_CASES:
        X, cons = _random_instance(seed, n_pairs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stuck.append(ccbench.make_method("nnc", n_clusters=2).fit(X, constraints=cons).n_cannot_link_stuck_)
    assert max(stuck) > 0 and min(stuck) == 0


# -- Xing's Newton iteration keeps no rejected step -------------------------------------------


def _xing_newton_replayed(m, dcl, tol=1e-3, max_iter=100):
    """Xing et al.'s documented procedure, written here step by step: from a = 1, a projected
    Newton step on g; its length halved from 1 while that lowers g (the first length that does
    not is rejected); stop when g's relative decrease is below ``tol``."""
    a = np.ones(dcl.shape[1])
    for _ in range(max_iter):
        g0, grad, hess = ml._xing_g(a, m, dcl)
        ridged = hess + 1e-6 * np.eye(len(a))
        try:
            step = np.linalg.solve(ridged, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(ridged, grad, rcond=None)[0]
        kept, kept_g = a, np.inf
        for lam in 0.5 ** np.arange(40):
            cand = np.maximum(a - lam * step, 0.0)
            g = ml._xing_g(cand, m, dcl)[0]
            if g >= kept_g:
                break  # rejected: longer steps were better
            kept, kept_g = cand, g
        a = kept
        if abs((kept_g - g0) / kept_g) < tol:
            return a
    return a


def test_xing_newton_keeps_only_steps_that_lower_g():
    # unbounded (feature 0 constant in each labeled set): Xing's Newton iteration runs
    rng = np.random.default_rng(1)
    lab = np.repeat([0, 1, 2, -1], [5, 5, 5, 10])
    X = np.c_[np.r_[np.repeat([1.0, 1.5, 2.0], 5), rng.uniform(1, 2, 10)], rng.uniform(1, 2, (25, 3))]
    cons = Constraints.from_labels(lab)
    dml, dcl = pair_sq_diffs(X, cons.must_link), pair_sq_diffs(X, cons.cannot_link)
    m = dml.sum(axis=0)
    a, stopped = ml._xing_newton(m, dcl)
    expected = _xing_newton_replayed(m, dcl)
    np.testing.assert_allclose(a, expected, rtol=1e-12, atol=1e-15)
    assert ml._xing_g(a, m, dcl)[0] < ml._xing_g(np.ones(len(m)), m, dcl)[0]


# -- the LP metric's tie-break keeps no point that leaves the optimal face --------------------


def _nominal_instance():
    """Three classes on five nominal features (codes 1..3; feature 1 mostly the class): the LP
    optimum is a face, and the least-norm point of the rows active at HiGHS's vertex violates
    another row, so the tie-break's constraint generation needs a second round."""
    rng = np.random.default_rng(1)
    d, n = int(rng.integers(3, 8)), 40
    y = np.repeat(np.arange(3), 14)[:n]
    X = rng.integers(1, 4, size=(n, d)).astype(float)
    X[:, 0] += y
    X[:, 1] = np.where(rng.random(n) < 0.7, y, X[:, 1])
    cons = ccbench.constraints.labeled_subsets(y, 5, rng=rng)
    return pair_sq_diffs(X, cons.must_link), pair_sq_diffs(X, cons.cannot_link)


def test_the_lp_tie_break_stays_on_the_optimal_face(monkeypatch):
    import cvxpy as cp

    dml, dcl = _nominal_instance()
    qps = []
    real = ml._least_norm_qp
    monkeypatch.setattr(ml, "_least_norm_qp", lambda *a, **k: qps.append(1) or real(*a, **k))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z, split, status = ml.learn_lp_diag(dml, dcl)
    assert status == "optimal" and len(qps) >= 2  # the premise: one round is not enough here
    # the LP of eqs. 21-25 (squared), solved here by Clarabel: max s, dcl z >= s, dml z <= 1
    zv, s = cp.Variable(dcl.shape[1], nonneg=True), cp.Variable(nonneg=True)
    cp.Problem(cp.Maximize(s), [dcl @ zv >= s, dml @ zv <= 1]).solve(solver="CLARABEL")
    assert split == pytest.approx(s.value, rel=1e-6)
    assert (dcl @ z).min() == pytest.approx(s.value, rel=1e-6) and (dml @ z).max() <= 1 + 1e-9
