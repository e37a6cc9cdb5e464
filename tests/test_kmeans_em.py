"""Constrained EM (Shental et al. 2003): what loopy BP's decoding and the mixing
weights / likelihood must get right (issue 28)."""

import itertools

import numpy as np
import pytest

from ccbench import Constraints, make_method
from ccbench.base import InfeasibleConstraintsError


def _dense_graph(seed, n=7, p=0.5):
    rng = np.random.default_rng(seed)
    pairs = np.array(list(itertools.combinations(range(n), 2)))
    return pairs[rng.random(len(pairs)) < p], rng.normal(scale=2.0, size=(n, 3))


# seeds whose greedy most-confident-first decoding of loopy beliefs broke a cannot-link
# although a 3-colouring exists (found by enumeration: 26 of 200 such random graphs)
GREEDY_BROKE = [1, 5, 10, 11, 31, 35, 36, 38, 39, 43]


@pytest.mark.parametrize("seed", GREEDY_BROKE)
def test_bp_decoding_meets_cannot_links_when_a_colouring_exists(seed):
    from ccbench_plugins.kmeans.constrained_em import CannotLinkNetwork

    edges, phi = _dense_graph(seed)
    net = CannotLinkNetwork(edges, 7, 3, 1)  # every component through loopy BP
    assert not net.is_exact
    _, labels, _ = net.infer(phi)
    assert np.all(labels[edges[:, 0]] != labels[edges[:, 1]])
    assert net.n_violated == 0


def test_bp_decoding_counts_what_the_search_cannot_mend():
    from ccbench_plugins.kmeans.constrained_em import CannotLinkNetwork

    edges, phi = _dense_graph(GREEDY_BROKE[0])
    net = CannotLinkNetwork(edges, 7, 3, 1, search_budget=1)
    _, labels, _ = net.infer(phi)
    assert net.n_violated == int(np.sum(labels[edges[:, 0]] == labels[edges[:, 1]])) > 0


def test_bp_component_proven_uncolourable_is_infeasible():
    from ccbench_plugins.kmeans.constrained_em import CannotLinkNetwork

    # K4 with k = 3 (81 labelings > max_configurations): no clustering exists
    edges = np.array(list(itertools.combinations(range(4), 2)))
    with pytest.raises(InfeasibleConstraintsError, match="exhaustive search"):
        CannotLinkNetwork(edges, 4, 3, 1)


def _broken_decoder(monkeypatch):
    """Make the greedy decoding the plain argmax (ignores every cannot-link)."""
    from ccbench_plugins.kmeans.constrained_em import CannotLinkNetwork

    monkeypatch.setattr(CannotLinkNetwork, "_greedy_decode", lambda self, b: np.argmax(b[self.bp_nodes], axis=1))


def test_fit_warns_and_rows_count_broken_cannot_links(monkeypatch):
    from ccbench.running.harness import fit_and_score

    _broken_decoder(monkeypatch)
    X = np.array([[0.0], [0.1], [0.2], [0.3], [5.0], [5.1], [5.2], [5.3]])
    y = np.repeat([0, 1], 4)
    cons = Constraints(cannot_link=[[0, 1], [1, 2], [2, 0], [3, 0]], n_samples=8)
    params = dict(max_configurations=1, init="supervision")
    # the check mends the decoding: no cannot-link broken, no warning
    est = make_method("constrained_em", n_clusters=3, random_state=0, **params).fit(X, constraints=cons)
    assert cons.violations(est.labels_) == (0, 0) and est.n_violated_ == 0
    # a search without budget cannot: the estimator warns, the row shows it
    with pytest.warns(UserWarning, match="break .* cannot-links"):
        est = make_method("constrained_em", n_clusters=3, random_state=0, search_budget=1, **params)
        est.fit(X, constraints=cons)
    assert est.n_violated_ == cons.violations(est.labels_)[1] > 0
    row = fit_and_score([], "constrained_em", dict(search_budget=1, **params), 0, 3, X, y, cons, ["ari"], "raise")
    assert row["n_violated"] == est.n_violated_
    assert "cannot-links" in row["warnings"]


# -- the likelihood and the mixing weights against enumeration ------------------------------


def _log_gauss_1d(x, mu, var):
    return -0.5 * (x - mu) ** 2 / var - 0.5 * np.log(2 * np.pi * var)


def _enumerate(X, cons, k, w, mu, var):
    """Shental et al.'s model by brute force over the unit (chunklet) labelings: unit
    posteriors and log p(X | constraints) = log sum_L prod alpha prod N [CL met] - log Z."""
    from ccbench_plugins.kmeans.core import Units

    units = Units.build(X, cons)
    n_u = units.n_units
    conf = np.array(list(itertools.product(range(k), repeat=n_u)))
    ok = np.ones(len(conf), dtype=bool)
    for a, b in units.cannot:
        ok &= conf[:, a] != conf[:, b]
    loglik_unit = np.array([[_log_gauss_1d(X[units.unit_of == u, 0], mu[h], var[h]).sum() for h in range(k)]
                            for u in range(n_u)])
    log_prior = np.log(w)[conf].sum(1)
    joint = log_prior + loglik_unit[np.arange(n_u), conf].sum(1)
    joint[~ok] = -np.inf
    p = np.exp(joint - joint.max())
    p /= p.sum()
    post = np.array([[p[conf[:, u] == h].sum() for h in range(k)] for u in range(n_u)])
    log_z = np.log(np.exp(log_prior[ok]).sum())
    ll = np.log(np.exp(joint[ok] - joint.max()).sum()) + joint.max() - log_z
    return units, post, ll, log_z


CASE = dict(
    X=np.array([[0.0], [0.4], [0.9], [-0.3], [4.0], [5.5], [2.5], [3.0]]),
    must_link=[[0, 1], [1, 2], [2, 3], [4, 5]],
    cannot_link=[[0, 6], [6, 7], [7, 4]],
    w=np.array([0.3, 0.7]), mu=np.array([0.5, 4.0]), var=np.array([1.5, 2.0]),
)


def test_log_likelihood_matches_enumeration_with_the_normaliser():
    from ccbench_plugins.kmeans.constrained_em import (
        CannotLinkNetwork,
        constrained_em_single,
    )

    X = CASE["X"]
    cons = Constraints(must_link=CASE["must_link"], cannot_link=CASE["cannot_link"], n_samples=len(X))
    units, _, ll, log_z = _enumerate(X, cons, 2, CASE["w"], CASE["mu"], CASE["var"])
    assert abs(log_z) > 0.1  # the normaliser matters here
    net = CannotLinkNetwork(units.cannot, units.n_units, 2, 4096)
    run = constrained_em_single(X, units, net, CASE["w"], CASE["mu"][:, None], CASE["var"],
                                cov_type="spherical", reg_covar=0.0, max_iter=1, tol=0)
    assert run["history"][0] == pytest.approx(ll, rel=1e-12)


def test_mixing_weights_count_each_chunklet_once():
    # Shental et al.: alpha_h = (1/L) sum over the L chunklets of p(l_j = h), not over points
    from ccbench_plugins.kmeans.constrained_em import (
        CannotLinkNetwork,
        constrained_em_single,
    )

    X = CASE["X"]
    cons = Constraints(must_link=CASE["must_link"], n_samples=len(X))  # no cannot-link: plain M-step
    units, post, _, _ = _enumerate(X, cons, 2, CASE["w"], CASE["mu"], CASE["var"])
    net = CannotLinkNetwork(units.cannot, units.n_units, 2, 4096)
    run = constrained_em_single(X, units, net, CASE["w"], CASE["mu"][:, None], CASE["var"],
                                cov_type="spherical", reg_covar=0.0, max_iter=1, tol=0)
    np.testing.assert_allclose(run["weights"], post.mean(0), rtol=1e-10)
    # the means weight every point by its chunklet's posterior
    R = post[units.unit_of]
    np.testing.assert_allclose(run["means"][:, 0], (R * X).sum(0) / R.sum(0), rtol=1e-10)


def test_mixing_weight_step_never_lowers_the_exact_objective():
    # one cannot-link between units 0 and 1 of four, k = 2: Z(alpha) = 2 alpha_0 alpha_1, so
    # Q = counts . log alpha - log Z peaks at alpha ~ counts - 1 = (0.75, 0.25), while the
    # unconstrained update alpha ~ counts = (0.625, 0.375) lowers Q from alpha = (0.75, 0.25)
    from ccbench_plugins.kmeans.constrained_em import CannotLinkNetwork, _alpha_step

    net = CannotLinkNetwork(np.array([[0, 1]]), 4, 2, 4096)
    resp = np.array([[1.0, 0.0], [0.5, 0.5], [0.5, 0.5], [0.5, 0.5]])
    old, new = np.array([0.75, 0.25]), resp.mean(0)

    def q(w):  # Z by enumeration of the two feasible labelings
        return resp.sum(0) @ np.log(w) - np.log(w[0] * w[1] + w[1] * w[0])

    assert q(new) < q(old)
    got = _alpha_step(net, resp, old, new)
    assert q(got) >= q(old) - 1e-12


def test_alpha_step_takes_the_full_update_when_it_raises_the_objective():
    from ccbench_plugins.kmeans.constrained_em import CannotLinkNetwork, _alpha_step

    net = CannotLinkNetwork(np.array([[0, 1]]), 4, 2, 4096)
    resp = np.array([[1.0, 0.0], [0.5, 0.5], [0.5, 0.5], [0.5, 0.5]])

    def q(w):
        return resp.sum(0) @ np.log(w) - np.log(2 * w[0] * w[1])

    old, new = np.array([0.4, 0.6]), resp.mean(0)
    assert q(new) > q(old)
    np.testing.assert_allclose(_alpha_step(net, resp, old, new), new)
    # from (0.75, 0.25) the full step lowers Q; the first of t = 1, 1/2, 1/4, 1/10, 1/100
    # that does not is taken (or the old weights)
    old = np.array([0.75, 0.25])
    ts = [t for t in (1.0, 0.5, 0.25, 0.1, 0.01) if q(t * new + (1 - t) * old) >= q(old)]
    want = ts[0] * new + (1 - ts[0]) * old if ts else old
    np.testing.assert_allclose(_alpha_step(net, resp, old, new), want)
    # six units (0 and 1 cannot-linked) where t = 1/4 is the first step that does not lower Q
    net = CannotLinkNetwork(np.array([[0, 1]]), 6, 2, 4096)
    r = np.array([0.18, 0.97, 0.9, 0.96, 0.6, 0.52])
    resp = np.column_stack([r, 1 - r])
    old, new = np.array([0.8, 0.2]), resp.mean(0)
    assert [t for t in (1.0, 0.5, 0.25) if q(t * new + (1 - t) * old) >= q(old)] == [0.25]
    np.testing.assert_allclose(_alpha_step(net, resp, old, new), 0.25 * new + 0.75 * old)


def test_greedy_decoding_known_answer():
    # most confident node first, each its most probable label no decoded neighbour holds:
    # node 0 (0.9 on label 1) takes 1 although its neighbour is not decoded yet, node 1 then 0
    from ccbench_plugins.kmeans.constrained_em import CannotLinkNetwork

    net = CannotLinkNetwork(np.array([[0, 1]]), 2, 2, 1)
    beliefs = np.array([[0.1, 0.9], [0.4, 0.6]])
    assert net._greedy_decode(beliefs).tolist() == [1, 0]
    # a 3-clique with k = 3, all preferring label 2: 2, then the next best free labels
    net = CannotLinkNetwork(np.array([[0, 1], [1, 2], [0, 2]]), 3, 3, 1)
    beliefs = np.array([[0.2, 0.1, 0.7], [0.5, 0.1, 0.4], [0.1, 0.3, 0.6]])
    assert net._greedy_decode(beliefs).tolist() == [2, 0, 1]


def test_max_iter_one_is_one_em_iteration_and_says_it_did_not_converge():
    from sklearn.exceptions import ConvergenceWarning

    X = CASE["X"]
    cons = Constraints(must_link=CASE["must_link"], cannot_link=CASE["cannot_link"], n_samples=len(X))
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        est = make_method("constrained_em", n_clusters=2, max_iter=1, random_state=0).fit(X, constraints=cons)
    assert est.n_iter_ == 1 and not est.converged_
