"""COP-k-means: a greedy failure is not a proof (issue 28).

``infeasible`` must mean that no clustering meets the hard constraints (proven);
a search that gives up is ``not_found``; and the default search finds the
clusterings that are easy to find.
"""

import itertools

import numpy as np
import pytest

from ccbench import Constraints, make_method
from ccbench import constraints as cgen
from ccbench.base import InfeasibleConstraintsError, SolutionNotFoundError


def _blobs(n_per=30, k=3, d=2, sep=4.0, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=sep, size=(k, d))
    X = np.concatenate([c + rng.normal(size=(n_per, d)) for c in centres])
    return X, np.repeat(np.arange(k), n_per)


def _brute_force_colourable(n, edges, k):
    """Whether some labelling of n nodes with k labels separates every edge (enumeration)."""
    conf = np.array(list(itertools.product(range(k), repeat=n)))
    return bool(np.any(np.all(conf[:, edges[:, 0]] != conf[:, edges[:, 1]], axis=1)))


# -- the search ---------------------------------------------------------------------


def test_colour_units_petersen_graph_is_three_chromatic():
    from ccbench_plugins.kmeans.core import colour_units

    ring = [[i, (i + 1) % 5] for i in range(5)]
    star = [[5 + i, 5 + (i + 2) % 5] for i in range(5)]
    spokes = [[i, i + 5] for i in range(5)]
    edges = np.array(ring + star + spokes)
    cost = np.random.default_rng(0).random((10, 3))
    lab, status = colour_units(cost, edges)
    assert status == "found"
    assert np.all(lab[edges[:, 0]] != lab[edges[:, 1]])
    assert colour_units(cost[:, :2], edges) == (None, "infeasible")  # odd cycles: not 2-colourable


@pytest.mark.parametrize("seed", range(40))
def test_colour_units_agrees_with_enumeration(seed):
    from ccbench_plugins.kmeans.core import colour_units

    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(4, 8)), int(rng.integers(2, 4))
    pairs = np.array(list(itertools.combinations(range(n), 2)))
    edges = pairs[rng.random(len(pairs)) < rng.uniform(0.3, 0.8)]
    if not len(edges):
        edges = pairs[:1]
    lab, status = colour_units(rng.random((n, k)), edges, budget=10**6)
    assert status == ("found" if _brute_force_colourable(n, edges, k) else "infeasible")
    if status == "found":
        assert np.all(lab[edges[:, 0]] != lab[edges[:, 1]])


def test_colour_units_prefers_cheap_labels_and_reports_the_budget():
    from ccbench_plugins.kmeans.core import colour_units

    edges = np.array([[0, 1]])
    cost = np.array([[0.0, 5.0], [0.0, 1.0], [3.0, 0.0]])  # unit 2 is free: its cheapest label
    lab, status = colour_units(cost, edges)
    assert status == "found" and lab.tolist() == [0, 1, 1]
    # a search stopped by its budget proves nothing
    ring = np.array([[i, (i + 1) % 9] for i in range(9)] + [[0, 4], [2, 7]])
    assert colour_units(np.zeros((9, 3)), ring, budget=2) == (None, "budget")


# -- the estimator ------------------------------------------------------------------


def test_wine_satisfiable_set_is_clustered_not_called_infeasible():
    # issue 28's case: the true labels meet all 182 pairs, yet every greedy order failed
    from ccbench.datasets import load_dataset

    ds = load_dataset("wine")
    cons = cgen.random_pairs(ds.y, 182, rng=np.random.default_rng(1031))
    assert cons.violations(ds.y) == (0, 0)
    est = make_method("cop_kmeans", n_clusters=3, random_state=31).fit(ds.X, constraints=cons)
    assert cons.violations(est.labels_) == (0, 0)
    np.testing.assert_allclose(est.inertia_, ((ds.X - est.cluster_centers_[est.labels_]) ** 2).sum())


@pytest.mark.parametrize("seed", range(6))
def test_feasible_dense_sets_always_met(seed):
    # pairs drawn from the true labels are always satisfiable: no restart may fail
    X, y = _blobs(seed=seed)
    cons = cgen.random_pairs(y, 200, rng=np.random.default_rng(seed))
    est = make_method("cop_kmeans", n_clusters=3, n_init=2, n_orders=1, random_state=seed).fit(X, constraints=cons)
    assert cons.violations(est.labels_) == (0, 0)
    assert est.n_failed_ == 0


def test_search_giving_up_is_not_found_not_infeasible():
    X, y = _blobs(seed=1)
    cons = cgen.random_pairs(y, 200, rng=np.random.default_rng(1))
    est = make_method("cop_kmeans", n_clusters=3, n_init=2, n_orders=1, search_budget=1, random_state=1)
    with pytest.raises(SolutionNotFoundError, match="search_budget=1"):
        est.fit(X, constraints=cons)
    assert not issubclass(SolutionNotFoundError, InfeasibleConstraintsError)


def test_proven_infeasible_clique_raises_infeasible():
    # four mutually cannot-linked chunklets and k = 3: an exhausted search is a proof
    X = np.arange(8.0)[:, None]
    cons = Constraints(
        must_link=[[0, 4], [1, 5]], cannot_link=list(itertools.combinations(range(4), 2)), n_samples=8
    )
    with pytest.raises(InfeasibleConstraintsError, match="exhaustive search"):
        make_method("cop_kmeans", n_clusters=3, random_state=0).fit(X, constraints=cons)
    lab = make_method("cop_kmeans", n_clusters=4, random_state=0).fit_predict(X, constraints=cons)
    assert cons.violations(lab) == (0, 0)


def test_harness_records_not_found_status(tmp_path):
    from hydra import compose, initialize_config_module

    from ccbench.running.harness import run_job

    with initialize_config_module("ccbench_conf", version_base="1.3"):
        cfg = compose("config", overrides=[
            "method=cop_kmeans", "+method.n_init=1", "+method.n_orders=1", "+method.search_budget=1",
            "constraints.n_constraints=300", "n_trials=3", "metrics=[ari]",
        ])
    rows = run_job(cfg, out_dir=tmp_path)
    assert "not_found" in set(rows["status"])
    assert "infeasible" not in set(rows["status"])
    assert rows.loc[rows["status"] == "not_found", "error"].str.startswith("SolutionNotFoundError").all()


@pytest.mark.slow
def test_greedy_failure_rate_as_documented():
    """The figures in COPKMeans's ``n_orders`` docstring (run: pytest -m slow -k failure_rate)."""
    import warnings

    def failures(**params):
        out = 0
        for s in range(60):
            X, y = _blobs(seed=s)
            cons = cgen.random_pairs(y, 60, rng=np.random.default_rng(s))
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    make_method("cop_kmeans", n_clusters=3, n_init=1, random_state=s, **params).fit(X, constraints=cons)
            except SolutionNotFoundError:
                out += 1
        return out

    assert failures(n_orders=1, search_budget=1) == 12  # greedy, one order: 20 %
    assert failures(n_orders=10, search_budget=1) == 0
    assert failures(n_orders=1) == 0  # one order, then the backtracking search


@pytest.mark.parametrize("seed", range(30))
def test_colour_units_agrees_with_enumeration_near_the_threshold(seed):
    # 10 nodes, k = 3, density near 3-colourability's threshold: the search must backtrack
    from ccbench_plugins.kmeans.core import colour_units

    rng = np.random.default_rng(1000 + seed)
    pairs = np.array(list(itertools.combinations(range(10), 2)))
    edges = pairs[rng.random(len(pairs)) < 0.45]
    lab, status = colour_units(rng.random((10, 3)), edges, budget=10**6)
    assert status == ("found" if _brute_force_colourable(10, edges, 3) else "infeasible")
    if status == "found":
        assert np.all(lab[edges[:, 0]] != lab[edges[:, 1]])
