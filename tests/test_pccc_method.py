"""PCCC (plugins/kmeans/pccc.py): the assignment IP against brute force, hard pairs always met,
soft pairs by confidence, the candidate restriction, and k-means when there are no pairs."""

import itertools

import numpy as np
import pytest
from sklearn.cluster import KMeans

from ccbench import Constraints, make_method
from ccbench.base import InfeasibleConstraintsError
from plugins.kmeans.pccc import PCCC, _contract, assignment_milp, effective_n_neighbors


def _blobs(seed, n_per=8, k=3, spread=1.2):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [3.0, 0.5], [1.0, 3.0]])[:k]
    X = np.vstack([c + spread * rng.standard_normal((n_per, 2)) for c in centres])
    return X, np.repeat(np.arange(k), n_per)


def _random_pairs(y, m, rng):
    pairs = rng.choice(len(y), size=(m, 2))
    pairs = np.unique(np.sort(pairs[pairs[:, 0] != pairs[:, 1]], axis=1), axis=0)
    same = y[pairs[:, 0]] == y[pairs[:, 1]]
    return pairs[same], pairs[~same]


def _objective(prob, centres, lab, P):
    """The IP's objective (A)-(D') for representative labels ``lab``; inf when a hard CL breaks."""
    if np.any(lab[prob.cl[:, 0]] == lab[prob.cl[:, 1]]):
        return np.inf
    dist = prob.size * ((prob.reps - centres[lab]) ** 2).sum(1)
    scl = prob.scl_conf[lab[prob.scl[:, 0]] == lab[prob.scl[:, 1]]].sum()
    sml = prob.sml_conf[lab[prob.sml[:, 0]] != lab[prob.sml[:, 1]]].sum()
    return dist.sum() + P * (scl + sml)


@pytest.mark.parametrize("seed", range(4))
def test_assignment_milp_equals_brute_force(seed):
    # 7 points (one hard must-link: 6 representatives), k = 3, hard CLs, soft CLs and MLs with
    # confidences, fixed centres and penalty: the IP's labels reach the minimum over all 3^6
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((7, 2))
    centres = rng.standard_normal((3, 2))
    cons = Constraints(
        must_link=[[0, 1], [2, 3], [4, 6]], cannot_link=[[0, 2], [1, 5], [3, 4], [5, 6]], n_samples=7,
        must_link_weight=[1.0, 0.7, 0.4], cannot_link_weight=[1.0, 1.0, 0.9, 0.3],
    )
    prob = _contract(X, cons, hard_weight=1.0)
    assert len(prob.reps) == 6 and len(prob.cl) == 2 and len(prob.sml) == 2 and len(prob.scl) == 2
    P = 1.5
    lab, used_P, status = assignment_milp(prob, centres, q=3, penalty=P)
    assert used_P == P and status == 0
    brute = min(_objective(prob, centres, np.array(a), P) for a in itertools.product(range(3), repeat=6))
    assert _objective(prob, centres, lab, P) == pytest.approx(brute, rel=1e-9, abs=1e-9)


def test_assignment_milp_meets_cannot_links_nearest_rule_breaks():
    # two points nearest the same centre and cannot-linked: the nearest-centre rule joins them,
    # the IP separates them (this test fails when rows (B) are dropped from the IP)
    X = np.array([[0.0, 0.0], [0.2, 0.0], [5.0, 5.0]])
    centres = np.array([[0.1, 0.0], [5.0, 5.0]])
    prob = _contract(X, Constraints(cannot_link=[[0, 1]], n_samples=3), hard_weight=1.0)
    lab, _, _ = assignment_milp(prob, centres, q=2, penalty=1.0)
    assert lab[0] != lab[1]
    # point 1 moves to the far centre: the cheaper of the two moves
    assert _objective(prob, centres, lab, 1.0) == pytest.approx(0.1**2 + (4.8**2 + 5**2))


@pytest.mark.parametrize("seed", range(5))
def test_every_hard_constraint_met(seed):
    X, y = _blobs(seed)
    rng = np.random.default_rng(100 + seed)
    ml, cl = _random_pairs(y, 30, rng)
    cons = Constraints(ml, cl, n_samples=len(X))
    est = PCCC(n_clusters=3, random_state=seed).fit(X, constraints=cons)
    assert cons.violations(est.labels_) == (0, 0)
    assert est.n_violated_ == 0
    assert len(np.unique(est.labels_)) == 3


def test_infeasible_hard_constraints_raise():
    X, _ = _blobs(0, n_per=2)
    triangle = Constraints(cannot_link=[[0, 1], [1, 2], [0, 2]], n_samples=len(X))
    with pytest.raises(InfeasibleConstraintsError, match="hard cannot-links with k=2"):
        PCCC(n_clusters=2, random_state=0).fit(X, constraints=triangle)
    inside = Constraints(must_link=[[0, 1], [1, 2]], cannot_link=[[0, 2]], n_samples=len(X))
    with pytest.raises(InfeasibleConstraintsError, match="chunklet"):
        with pytest.warns(UserWarning):
            PCCC(n_clusters=2, random_state=0).fit(X, constraints=inside)
    # the same triangle as soft pairs is no error: one pair is violated and counted
    soft = Constraints(cannot_link=[[0, 1], [1, 2], [0, 2]], n_samples=len(X), cannot_link_weight=[0.5] * 3)
    est = PCCC(n_clusters=2, random_state=0).fit(X, constraints=soft)
    assert est.n_violated_ == 1


def test_soft_confidence_zero_is_ignored_and_high_penalty_is_hard():
    X, y = _blobs(3)
    rng = np.random.default_rng(7)
    ml, cl = _random_pairs(y, 40, rng)
    init = X[[0, 8, 16]]
    free = PCCC(n_clusters=3, init=init, repositioning="none", random_state=0).fit(X)
    zero = Constraints(ml, cl, n_samples=len(X), must_link_weight=np.zeros(len(ml)),
                       cannot_link_weight=np.zeros(len(cl)))
    ignored = PCCC(n_clusters=3, init=init, repositioning="none", random_state=0).fit(X, constraints=zero)
    np.testing.assert_array_equal(ignored.labels_, free.labels_)
    # every pair soft (hard_weight above 1) at confidence 1 with a penalty far above any distance
    # gain: the same clustering as the hard run, and no pair violated
    cons = Constraints(ml, cl, n_samples=len(X))
    hard = PCCC(n_clusters=3, init=init, repositioning="none", random_state=0).fit(X, constraints=cons)
    soft = PCCC(n_clusters=3, init=init, hard_weight=2.0, penalty=1e4, repositioning="none",
                random_state=0).fit(X, constraints=cons)
    assert soft.n_violated_ == 0 and hard.n_violated_ == 0
    assert soft.inertia_ == pytest.approx(hard.inertia_)
    # ... and a small penalty lets the data win: some pair is violated, the inertia is lower
    cheap = PCCC(n_clusters=3, init=init, hard_weight=2.0, penalty=1e-3, repositioning="none",
                 random_state=0).fit(X, constraints=cons)
    assert cheap.n_violated_ > 0 and cheap.inertia_ < hard.inertia_


def test_candidate_restriction_keeps_the_only_feasible_assignment():
    # q = 1 would leave points 0 and 1 (cannot-linked, both nearest centre 0) one candidate each:
    # the restricted IP is infeasible; PCCC raises q to 1 + the largest cannot-link degree (2)
    X = np.array([[0.0, 0.0], [0.2, 0.0], [5.0, 5.0], [5.2, 5.0]])
    centres = np.array([[0.1, 0.0], [5.1, 5.0]])
    cons = Constraints(cannot_link=[[0, 1]], n_samples=4)
    prob = _contract(X, cons, hard_weight=1.0)
    with pytest.raises(InfeasibleConstraintsError):
        assignment_milp(prob, centres, q=1, penalty=1.0)
    assert effective_n_neighbors(prob.cl, 4, 2, 1) == 2
    est = PCCC(n_clusters=2, n_neighbors=1, init=centres, random_state=0).fit(X, constraints=cons)
    assert est.n_neighbors_ == 2 and est.labels_[0] != est.labels_[1]
    # a star of degree 3 with k = 5 and q = 1: q becomes 4 (< k, still a restriction)
    star = np.array([[0, 1], [0, 2], [0, 3]])
    assert effective_n_neighbors(star, 6, 5, 1) == 4
    assert effective_n_neighbors(star, 6, 3, 1) == 3  # capped at k
    assert effective_n_neighbors(np.empty((0, 2), int), 6, 5, None) == 5


@pytest.mark.parametrize("seed", [1, 2])
def test_restricted_candidates_still_meet_every_constraint(seed):
    # few pairs: the largest cannot-link degree is 1, so q = 2 < k = 3 (the restriction is active)
    X, y = _blobs(seed, n_per=10)
    ml, cl = _random_pairs(y, 6, np.random.default_rng(seed))
    cons = Constraints(ml, cl, n_samples=len(X))
    est = PCCC(n_clusters=3, n_neighbors=1, random_state=seed).fit(X, constraints=cons)
    assert cons.violations(est.labels_) == (0, 0)
    # q = 1 raised to 1 + the largest cannot-link degree between chunklets, at most k
    prob = _contract(X, cons, hard_weight=1.0)
    degree = np.bincount(prob.cl.ravel(), minlength=len(prob.reps)).max() if len(prob.cl) else 0
    assert est.n_neighbors_ == min(3, 1 + degree) == 2


@pytest.mark.parametrize("seed", range(3))
def test_matches_kmeans_without_constraints(seed):
    X, _ = _blobs(seed, n_per=15, spread=1.5)
    init = X[np.random.default_rng(seed).choice(len(X), 3, replace=False)]
    km = KMeans(3, init=init, n_init=1, algorithm="lloyd", tol=0.0).fit(X)
    est = PCCC(n_clusters=3, init=init, repositioning="none", random_state=0).fit(X)
    assert est.inertia_ == pytest.approx(km.inertia_, rel=1e-9)
    np.testing.assert_array_equal(est.labels_, km.labels_)
    # the repositioning multi-start keeps the best descent: never worse than that one descent
    multi = PCCC(n_clusters=3, init=init, random_state=0).fit(X)
    assert multi.inertia_ <= km.inertia_ * (1 + 1e-12)


def test_registered_and_deterministic():
    X, y = _blobs(1)
    ml, cl = _random_pairs(y, 20, np.random.default_rng(1))
    cons = Constraints(ml, cl, n_samples=len(X))
    a = make_method("pccc", n_clusters=3, random_state=5).fit(X, constraints=cons)
    b = make_method("pccc", n_clusters=3, random_state=5).fit(X, constraints=cons)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.objective_ == pytest.approx(a.inertia_)  # all pairs hard: no penalty term


def test_too_few_chunklets_is_infeasible():
    X = np.arange(8.0).reshape(4, 2)
    cons = Constraints(must_link=[[0, 1], [1, 2], [2, 3]], n_samples=4)
    with pytest.raises(InfeasibleConstraintsError, match="1 chunklets for n_clusters=2"):
        PCCC(n_clusters=2).fit(X, constraints=cons)


def test_pccc_col1_paper_block_is_accepted_by_the_report():
    # the experiment's paper table is nested ({set: {level: {column: value}}}, NA as null), the
    # form paper_grid prints; the cell.json check refused it, so the end-of-sweep report failed
    from pathlib import Path

    import yaml

    from ccbench.reporting.summary import _checked_paper

    conf = Path(__file__).resolve().parents[1] / "conf" / "experiment" / "pccc_col1.yaml"
    paper = yaml.safe_load(conf.read_text())["paper"]
    assert paper["methods"]["PCCC"] == "pccc"
    assert _checked_paper(paper, "cell.json") is paper
    broken = {**paper, "table": {"iris_uci": {"0.05": {"PCCC": "high"}}}}
    with pytest.raises(ValueError, match="a number or null/NA"):
        _checked_paper(broken, "cell.json")
