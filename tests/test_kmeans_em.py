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
    from ccbench.harness import fit_and_score

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
