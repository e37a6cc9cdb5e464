"""SSAP-G: meta-points for must-link groups, hard cannot-link factors between meta-points."""

import itertools
import warnings

import numpy as np
import pytest
from ccbench_plugins.affinity import core as ap_core
from ccbench_plugins.affinity.ssap_g import (
    SSAPG,
    meta_points,
    node_problem,
    node_similarity,
    polish,
)
from sklearn.datasets import make_blobs

from ccbench import Constraints, make_method
from ccbench import constraints as cgen
from ccbench.similarity import median_preference, negative_sq_euclidean


def with_median_preference(X):
    """-||x_i - x_j||^2 with the median off-diagonal value on the diagonal (no tie noise)."""
    S = negative_sq_euclidean(X)
    pref = median_preference(S)
    np.fill_diagonal(S, pref)
    return S, pref


def _blobs(seed, n=90, std=1.0):
    return make_blobs(n_samples=n, centers=3, cluster_std=std, center_box=(-10, 10), random_state=seed)


def test_meta_points_are_chunklets_then_free_cannot_link_ends():
    cons = Constraints([[0, 1], [1, 2], [5, 6]], [[0, 5], [3, 7]], n_samples=9)
    groups, meta_of = meta_points(cons)
    assert [g.tolist() for g in groups] == [[0, 1, 2], [5, 6], [3], [7]]
    np.testing.assert_array_equal(meta_of, [0, 0, 0, 2, -1, 1, 1, 3, -1])


def test_node_similarity_follows_eq1():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 2))
    S, pref = with_median_preference(X)
    cons = Constraints([[0, 1], [1, 2]], [[0, 4]], n_samples=8)
    groups, meta_of = meta_points(cons)  # P_0 = {0, 1, 2}, P_1 = {4}
    T, free = node_similarity(S, groups, meta_of, -7.0)
    np.testing.assert_array_equal(free, [3, 5, 6, 7])
    nodes = [[3], [5], [6], [7], [0, 1, 2], [4]]  # free points, then meta-points
    for a, pa in enumerate(nodes):
        for b, pb in enumerate(nodes):
            expected = -7.0 if a == b else max(S[i, j] for i in pa for j in pb)
            assert T[a, b] == expected, (a, b)


@pytest.mark.parametrize("seed", range(6))
def test_constraints_always_met_when_consistent(seed):
    X, y = _blobs(seed, std=2.5)  # overlapping: the constraints have work to do
    cons = cgen.random_pairs(y, n_constraints=45, rng=np.random.default_rng(seed))
    assert cons.is_consistent()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_method("ssap_g", random_state=0).fit(X, constraints=cons)
    labels = est.labels_
    _check_valid(est, cons)  # labels >= 0, constraints met, every centre inside its cluster
    cl = cons.cannot_link
    assert not np.any(labels[cl[:, 0]] == labels[cl[:, 1]])
    for group in cons.chunklets():
        assert np.unique(labels[group]).size == 1
    assert est.n_ignored_cannot_links_ == 0


def test_many_cannot_links_between_close_points():
    # Cannot-links inside one tight blob force it apart.
    X, _ = make_blobs(n_samples=40, centers=[[0.0, 0.0]], cluster_std=0.5, random_state=0)
    cons = Constraints(cannot_link=[[0, 1], [1, 2], [0, 2], [3, 4]], must_link=[[0, 5], [1, 6]], n_samples=40)
    for backend in ("numba", "numpy"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            labels = SSAPG(backend=backend, random_state=0).fit(X, constraints=cons).labels_
        assert cons.violations(labels) == (0, 0)


def test_backends_agree():
    X, y = _blobs(1, n=60, std=2.0)
    cons = cgen.random_pairs(y, n_constraints=30, rng=np.random.default_rng(1))
    a = SSAPG(backend="numba", random_state=2).fit(X, constraints=cons)
    b = SSAPG(backend="numpy", random_state=2).fit(X, constraints=cons)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.n_iter_ == b.n_iter_


def test_without_constraints_equals_ap():
    X, _ = _blobs(3, n=70, std=2.0)
    ap = make_method("ap", random_state=4).fit(X)
    g = make_method("ssap_g", random_state=4).fit(X)
    np.testing.assert_array_equal(g.labels_, ap.labels_)
    np.testing.assert_array_equal(g.cluster_centers_indices_, ap.cluster_centers_indices_)


def reference_cannot_link_ap(T, pairs, q, mu, n_iter):
    """AP with cannot-link factors, Python loops, gamma from its max-sum definition (eqs. 15-16).

    gamma_ab^j = max_c[-q 1(c = 1) + lam(c)] - max_c lam(c) with lam(0) = 0,
    lam(1) = alpha_bj + rho_bj - gamma_ba^j (eq. 23); not the closed form of eq. 17.
    """
    n = len(T)
    directed = [(a, b) for a, b in pairs] + [(b, a) for a, b in pairs]
    alpha = [[0.0] * n for _ in range(n)]
    rho = [[0.0] * n for _ in range(n)]
    gamma = {d: [0.0] * n for d in directed}
    for _ in range(n_iter):
        new = {}
        for a, b in directed:
            row = []
            for j in range(n):
                lam = {0: 0.0, 1: alpha[b][j] + rho[b][j] - gamma[(b, a)][j]}
                row.append(max(-q * (c == 1) + lam[c] for c in (0, 1)) - max(lam.values()))
            new[(a, b)] = row
        gamma = new
        s_hat = [[T[i][j] + sum(gamma[(i, k)][j] for (a, k) in directed if a == i) for j in range(n)]
                 for i in range(n)]
        new_alpha = [[0.0] * n for _ in range(n)]
        for i in range(n):
            for j in range(n):
                others = sum(max(rho[k][j], 0.0) for k in range(n) if k not in (i, j))
                upd = others if i == j else min(0.0, rho[j][j] + others)
                new_alpha[i][j] = mu * alpha[i][j] + (1 - mu) * upd
        alpha = new_alpha
        rho = [[mu * rho[i][j] + (1 - mu) * (s_hat[i][j] - max(s_hat[i][k] + alpha[i][k] for k in range(n) if k != j))
                for j in range(n)] for i in range(n)]
    return np.array(alpha), np.array(rho), gamma


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_cannot_link_messages_match_loop_reference(backend):
    X = np.random.default_rng(5).normal(size=(7, 2))
    S, pref = with_median_preference(X)
    cons = Constraints([[0, 1]], [[0, 2], [3, 4], [1, 5]], n_samples=7)
    prob = node_problem(S, cons, pref, np.random.default_rng(0))
    q = ap_core.equivalent_hard_penalty(prob.T)
    pairs = [tuple(int(v) for v in p) for p in prob.pairs]
    assert len(pairs) == 3
    for n_iter in (1, 2, 5, 12):
        alpha, rho, gamma = reference_cannot_link_ap(prob.T.tolist(), pairs, q, 0.75, n_iter)
        res = ap_core.affinity_propagation(prob.T, max_iter=n_iter, convergence_iter=None, factors=prob.factors,
                                           backend=backend, warn=False)
        np.testing.assert_allclose(res.availability, alpha, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(res.responsibility, rho, rtol=1e-12, atol=1e-12)
        for r in range(prob.factors.n_rows):
            key = (int(prob.factors.source[r]), int(prob.factors.partner[r]))
            np.testing.assert_allclose(res.pair_messages[r], gamma[key], rtol=1e-12, atol=1e-12)
    assert np.abs(res.pair_messages).max() > 0  # the factors are active on this case


def test_inconsistent_cannot_links_are_ignored_and_counted():
    X, y = _blobs(0, n=40)
    cons = Constraints([[0, 1], [1, 2]], [[0, 2], [3, 4]], n_samples=40)
    assert not cons.is_consistent()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = SSAPG(random_state=0).fit(X, constraints=cons)
    assert est.n_ignored_cannot_links_ == 1
    assert est.labels_[0] == est.labels_[1] == est.labels_[2]
    assert est.labels_[3] != est.labels_[4]


# -- easy inputs: the obvious answer, a valid clustering, centres inside their clusters --------


def _two_blobs(seed):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(0, 0.1, (5, 2)), rng.normal(0, 0.1, (5, 2)) + [7.0, 0.0]]
    a, b = rng.choice(5, 2, replace=False)
    return X, int(a), int(b), int(rng.integers(2))


def _check_valid(est, cons):
    labels = est.labels_
    assert labels.min() == 0
    assert cons.violations(labels) == (0, 0)
    for k, c in enumerate(est.cluster_centers_indices_):
        assert labels[c] == k  # every centre is inside its own cluster


@pytest.mark.parametrize("kind", ["must", "cannot"])
def test_separated_blobs_with_one_constraint(kind):
    # The old relay model merged the blobs in 3 of these 20 must-link cases (one
    # exemplar in blob B, blob A relaying through the meta-point at cost ~0).
    for seed in range(20):
        X, a, b, blob = _two_blobs(seed)
        cons = (Constraints(must_link=[[a + 5 * blob, b + 5 * blob]], n_samples=10) if kind == "must"
                else Constraints(cannot_link=[[a, 5 + b]], n_samples=10))
        est = SSAPG(random_state=seed).fit(X, constraints=cons)
        np.testing.assert_array_equal(est.labels_, np.repeat([0, 1], 5), err_msg=f"seed {seed}")
        assert est.converged_
        _check_valid(est, cons)


def _valid_configurations(n):
    c = np.array(list(itertools.product(range(n), repeat=n)))
    return c[(np.take_along_axis(c, c, axis=1) == c).all(axis=1)]  # E (eq. 3): exemplars choose themselves


def _map_value(T, different=(), same=()):
    """Brute-force max of sum_i T[i, c_i] over every configuration meeting E and the pair constraints."""
    c = _valid_configurations(len(T))
    ok = np.ones(len(c), dtype=bool)
    for a, b in different:
        ok &= c[:, a] != c[:, b]
    for a, b in same:
        ok &= c[:, a] == c[:, b]
    return T[np.arange(len(T)), c[ok]].sum(axis=1).max()


def _partition_value(T, labels):
    """Objective of a partition: each cluster takes its best exemplar inside it."""
    return sum(max(T[idx, e].sum() for e in idx) for idx in (np.flatnonzero(labels == k) for k in np.unique(labels)))


def test_tiny_instances_against_brute_force_map():
    """20 instances of 5-6 points, one must-link, one cannot-link (the audit's setting).

    Reported per instance: the meta-point model's objective (what max-sum
    maximises) and the true constrained objective (every point pays its
    similarity to its centre), ours vs the brute-force maximum.
    """
    rows, model_hits, true_hits = [], 0, 0
    for inst in range(20):
        rng = np.random.default_rng(inst)
        n = 5 + inst % 2
        X = rng.normal(size=(n, 2)) * rng.uniform(0.5, 3)
        i, j, k, m = (int(v) for v in rng.choice(n, 4, replace=False))
        cons = Constraints(must_link=[[i, j]], cannot_link=[[k, m]], n_samples=n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = SSAPG(random_state=inst).fit(X, constraints=cons)
        _check_valid(est, cons)
        S, pref = with_median_preference(X)
        prob = node_problem(S, cons, pref, np.random.default_rng(0))
        T = node_similarity(S, prob.groups, prob.meta_of, pref)[0]
        node_of = np.empty(n, dtype=np.intp)
        node_of[prob.free] = np.arange(prob.free.size)
        grouped = prob.meta_of >= 0
        node_of[grouped] = prob.free.size + prob.meta_of[grouped]
        node_labels = np.empty(len(T), dtype=np.intp)
        node_labels[node_of] = est.labels_
        ours, best = _partition_value(T, node_labels), _map_value(T, different=[tuple(prob.pairs[0])])
        true_ours, true_best = _partition_value(S, est.labels_), _map_value(S, different=[(k, m)], same=[(i, j)])
        model_hits += np.isclose(ours, best)
        true_hits += np.isclose(true_ours, true_best)
        rows.append((inst, est.converged_, ours, best, true_ours, true_best))
        assert ours <= best + 1e-9 and true_ours <= true_best + 1e-9
        if est.converged_:
            assert np.isclose(ours, best), rows[-1]  # settled max-sum found the model's maximum
    # Measured: 17 / 20 at the model's maximum (the relay model: 8; without the local
    # search of unsettled runs: 14), 10 / 20 at the true constrained maximum.
    assert model_hits >= 17, rows
    assert true_hits >= 10, rows


def test_degenerate_inputs_give_a_valid_clustering():
    two = SSAPG(random_state=0).fit(np.array([[0.0], [1.0]]), constraints=Constraints([[0, 1]], n_samples=2))
    np.testing.assert_array_equal(two.labels_, [0, 0])
    assert two.cluster_centers_indices_.tolist() in ([0], [1])
    # Two groups of identical points, one must-link inside each and a cannot-link between them.
    X = np.r_[np.zeros((3, 2)), np.ones((3, 2))]
    cons = Constraints([[0, 1], [3, 4]], [[0, 3]], n_samples=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = SSAPG(random_state=0).fit(X, constraints=cons)
    _check_valid(est, cons)
    np.testing.assert_array_equal(est.labels_, [0, 0, 0, 1, 1, 1])
    ten = SSAPG(random_state=0).fit(np.ones((10, 2)))
    np.testing.assert_array_equal(ten.labels_, np.zeros(10))  # as scikit-learn: one cluster


def test_polish_keeps_a_valid_assignment_and_never_loses():
    rng = np.random.default_rng(0)
    for trial in range(30):
        n = int(rng.integers(3, 9))
        T = -rng.uniform(0, 10, size=(n, n))
        np.fill_diagonal(T, -rng.uniform(2, 8))
        pairs = np.array([p for p in itertools.combinations(range(n), 2) if rng.random() < 0.2]).reshape(-1, 2)
        start = np.arange(n)  # every node its own exemplar: always valid
        out = polish(T, start, pairs)
        assert np.all(out[out] == out)  # E: exemplars choose themselves
        assert all(out[a] != out[b] for a, b in pairs)
        assert T[np.arange(n), out].sum() >= T[np.arange(n), start].sum()
