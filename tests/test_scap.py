"""SCAP and SSAP-L (Leone, Sumedha & Weigt 2008): messages, storage modes, limits, macro-nodes."""

import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from ccbench_plugins.scap.scap import SCAP, SSAPL, _CandidateSimilarity, _run_scap

import ccbench
from ccbench import Constraints, metrics
from ccbench import constraints as cgen
from ccbench.base import ConvergenceWarning
from ccbench.similarity import negative_sq_euclidean


def _blobs(n_per, centers, scale=0.3, seed=0):
    rng = np.random.default_rng(seed)
    centers = np.asarray(centers, dtype=float)
    X = np.concatenate([c + scale * rng.normal(size=(n_per, centers.shape[1])) for c in centers])
    return X, np.repeat(np.arange(len(centers)), n_per)


def _reference_sweeps(S, p, orders):
    """Direct loops over eq. 14 (no site quantities, no max/second-max trick).

    ``S`` is (n_var, n_cand); candidate i is variable i itself (excluded), candidates
    beyond n_var are macro-nodes (eq. 22). Before each update of point i, every
    availability a_{k->i} is evaluated from the current requests. Returns the
    requests, availabilities a[i, k] = a_{k->i} and the exemplars (eq. 15) chosen.
    """
    n_var, n_cand = S.shape
    R = np.zeros((n_var, n_cand))
    A = np.zeros((n_var, n_cand))
    exemplar = np.full(n_var, -1)
    for order in orders:
        for i in order:
            for k in range(n_cand):
                if k != i:
                    total = sum(max(0.0, R[l, k]) for l in range(n_var) if l != k and l != i)
                    A[i, k] = min(0.0, -p + total)
            for k in range(n_cand):
                if k != i:
                    R[i, k] = S[i, k] - max(S[i, l] + A[i, l] for l in range(n_cand) if l != i and l != k)
            exemplar[i] = max((k for k in range(n_cand) if k != i), key=lambda k: S[i, k] + A[i, k])
    # Final availabilities for every variable from the final requests.
    for i in range(n_var):
        for k in range(n_cand):
            if k != i:
                total = sum(max(0.0, R[l, k]) for l in range(n_var) if l != k and l != i)
                A[i, k] = min(0.0, -p + total)
    return R, A, exemplar


def _availabilities(state, R, p):
    """a_{k->i} = min(0, -p + u_k - max(0, r_{i->k})) (eq. 19)."""
    return np.minimum(0.0, state.positive_requests[None, :] - np.maximum(R, 0.0) - p)


def _linear_requests(state, S):
    """Requests rebuilt from site quantities, eq. 17."""
    R = S - state.best[:, None]
    rows = np.arange(len(state.best))
    R[rows, state.exemplar] = S[rows, state.exemplar] - state.second
    R[rows, rows] = 0.0
    return R


def _run(X, *, p, sweeps, seed, dense, engine="numpy", kind="sqeuclidean", macro_nodes=(), variables=None):
    n = X.shape[0]
    variables = np.arange(n) if variables is None else variables
    sim = _CandidateSimilarity(X, kind, variables, list(macro_nodes))
    state, _, _ = _run_scap(
        sim, p=p, max_iter=sweeps, convergence_iter=10**6,
        rng=np.random.default_rng(seed), dense=dense, engine=engine,
    )
    return sim, state


@pytest.mark.parametrize("dense", [True, False])
def test_hand_sized_messages_match_direct_loop_over_eq14(dense):
    X = np.array([[0.0, 0.0], [0.3, 0.1], [0.1, 0.5], [3.0, 3.0], [3.4, 2.8]])
    p, sweeps, seed = 0.7, 4, 3
    sim, state = _run(X, p=p, sweeps=sweeps, seed=seed, dense=dense)
    S = negative_sq_euclidean(X)
    rng = np.random.default_rng(seed)
    R_ref, A_ref, c_ref = _reference_sweeps(S, p, [rng.permutation(5) for _ in range(sweeps)])
    R = state.requests if dense else _linear_requests(state, sim.rows(np.arange(5)))
    off = ~np.eye(5, dtype=bool)
    np.testing.assert_allclose(R[off], R_ref[off], atol=1e-12)
    A = _availabilities(state, R, p)
    np.testing.assert_allclose(A[off], A_ref[off], atol=1e-12)
    np.testing.assert_array_equal(state.exemplar, c_ref)
    # Eq. 18 holds exactly for the final requests (u is kept up to date incrementally).
    np.testing.assert_allclose(state.positive_requests, np.maximum(R * off, 0).sum(axis=0), atol=1e-12)


def test_hand_sized_macro_node_messages_match_direct_loop_over_eq22():
    X = np.array([[0.0, 0.0], [0.2, 0.1], [1.0, 1.2], [2.9, 3.0], [3.2, 3.1], [3.0, 2.6], [1.8, 1.9]])
    macro = [np.array([1, 5]), np.array([4])]  # two macro-nodes
    variables = np.array([0, 2, 3, 6])
    p, sweeps, seed = 0.9, 3, 5
    sim, state = _run(X, p=p, sweeps=sweeps, seed=seed, dense=False, macro_nodes=macro, variables=variables)
    full = negative_sq_euclidean(X)
    S = np.column_stack([full[np.ix_(variables, variables)]] + [full[np.ix_(variables, g)].max(axis=1) for g in macro])
    np.testing.assert_allclose(sim.rows(np.arange(4)), S, atol=1e-12)
    rng = np.random.default_rng(seed)
    R_ref, _, c_ref = _reference_sweeps(S, p, [rng.permutation(4) for _ in range(sweeps)])
    R = _linear_requests(state, S)
    mask = np.ones_like(S, dtype=bool)
    mask[np.arange(4), np.arange(4)] = False
    np.testing.assert_allclose(R[mask], R_ref[mask], atol=1e-12)
    np.testing.assert_array_equal(state.exemplar, c_ref)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("kind", ["sqeuclidean", "euclidean"])
def test_dense_and_linear_modes_agree_on_the_same_random_order(kind):
    X, _ = _blobs(20, [[0, 0], [2, 0], [0, 2]], scale=0.6, seed=1)
    _, dense = _run(X, p=1.0, sweeps=12, seed=7, dense=True, kind=kind)
    sim, linear = _run(X, p=1.0, sweeps=12, seed=7, dense=False, kind=kind)
    np.testing.assert_array_equal(dense.exemplar, linear.exemplar)
    np.testing.assert_allclose(linear.best, dense.best, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(linear.second, dense.second, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(linear.positive_requests, dense.positive_requests, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(_linear_requests(linear, sim.rows(np.arange(60))), dense.requests, atol=1e-9)
    a = SCAP(p=1.0, similarity=kind, memory="dense", random_state=4).fit(X)
    b = SCAP(p=1.0, similarity=kind, memory="linear", random_state=4).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.n_iter_ == b.n_iter_


@pytest.mark.parametrize("memory", ["dense", "linear"])
def test_numba_engine_matches_numpy_path(memory):
    X, y = _blobs(15, [[0, 0], [3, 0]], scale=0.8, seed=2)
    cons = Constraints.from_labels(np.where(np.arange(30) % 7 == 0, y, -1))
    kw = dict(p=2.0, memory=memory, random_state=3, max_iter=20, convergence_iter=100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for cls in (SCAP, SSAPL):
            a = cls(backend="numpy", **kw).fit(X, constraints=cons)
            b = cls(backend="numba", **kw).fit(X, constraints=cons)
            np.testing.assert_array_equal(a.exemplars_, b.exemplars_)


def test_p_zero_every_point_picks_its_nearest_neighbour():
    # Paper, section 2.1: without the penalty each point chooses its closest neighbour.
    X = np.random.default_rng(0).normal(size=(40, 3))
    est = SCAP(p=0.0, convergence_iter=3, random_state=0).fit(X)
    S = negative_sq_euclidean(X)
    np.fill_diagonal(S, -np.inf)
    np.testing.assert_array_equal(est.exemplars_, S.argmax(axis=1))
    assert est.converged_ and est.n_iter_ == 4  # exemplars fixed from the first sweep


def _gaussian_similarities(n, q, alpha, seed):
    """Section 3.1: N(alpha, 1) inside a cluster, N(0, 1) between clusters."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(q), n // q)
    S = np.triu(rng.normal(size=(n, n)), 1)
    S = S + S.T + alpha * (y[:, None] == y[None, :])
    return S, y


@pytest.mark.parametrize("seed", [0, 1])
def test_section_3_1_plateau_without_errors_and_few_errors_when_merged(seed):
    S, y = _gaussian_similarities(100, 5, 6.0, seed)
    errors = lambda est: int(np.sum(y[est.exemplars_] != y))  # noqa: E731 (exemplar in another cluster)
    plateau = SCAP(p=10.0, similarity="precomputed", random_state=0).fit(S)
    assert metrics.adjusted_rand(y, plateau.labels_) == 1.0 and errors(plateau) == 0
    # Forced below five clusters, SCAP links clusters with few points (>= 4 needed).
    merged = SCAP(p=40.0, similarity="precomputed", random_state=0).fit(S)
    assert merged.labels_.max() + 1 < 5 and errors(merged) <= 8
    # p = 0 gives O(N) clusters (section 2.1).
    assert SCAP(p=0.0, similarity="precomputed", random_state=0).fit(S).labels_.max() + 1 > 10


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_ssap_l_label_macro_nodes_end_in_distinct_clusters():
    X, y = _blobs(25, [[0, 0], [6, 0], [0, 6]], seed=3)
    cons = cgen.labeled_subsets(y, 3, rng=np.random.default_rng(0))
    est = SSAPL(random_state=0).fit(X, constraints=cons)
    labeled = cons.labels >= 0
    for c in range(3):
        assert len(np.unique(est.labels_[cons.labels == c])) == 1
    assert len(np.unique(est.labels_[labeled])) == 3
    # Well separated: no cluster mixes two blobs.
    assert all(len(np.unique(y[est.labels_ == k])) == 1 for k in np.unique(est.labels_))
    assert len(est.macro_nodes_) == 3 and np.all(est.exemplars_[labeled] == -1)


def test_ssap_l_chunklets_from_pairs_and_single_labeled_points():
    X, y = _blobs(20, [[0, 0], [6, 0], [0, 6]], seed=4)
    # Pairs only: chunklets {0, 1, 2, 40} (0-1, 1-2 and a long-range 2-40) and {20, 21}.
    cons = Constraints([[0, 1], [1, 2], [20, 21], [2, 40]], [[0, 20]], n_samples=60)
    est = SSAPL(random_state=0).fit(X, constraints=cons)
    assert [g.tolist() for g in est.macro_nodes_] == [[0, 1, 2, 40], [20, 21]]
    assert len(np.unique(est.labels_[[0, 1, 2, 40]])) == 1
    assert est.labels_[0] != est.labels_[20]
    # A class with one labeled point is a one-point macro-node.
    cons = cgen.labeled_subsets(y, 1, rng=np.random.default_rng(1))
    est = SSAPL(random_state=0).fit(X, constraints=cons)
    assert len(est.macro_nodes_) == 3 and len(np.unique(est.labels_[cons.labels >= 0])) == 3


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_ssap_l_ignores_cannot_links():
    X, _ = _blobs(15, [[0, 0], [4, 0]], seed=5)
    only_cl = Constraints(cannot_link=[[0, 1], [2, 3]], n_samples=30)
    a = SSAPL(p=2.0, random_state=0).fit(X, constraints=only_cl)
    b = SCAP(p=2.0, random_state=0).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)


def _traced_peak(fit):
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_linear_mode_never_allocates_an_n_by_n_array():
    n = 3000
    X, _ = _blobs(n // 3, np.random.default_rng(0).normal(0, 5, (3, 8)), scale=1.0, seed=6)
    one_matrix = n * n * 8
    # Message passing alone: O(N) site quantities and one similarity row at a time.
    peak = _traced_peak(lambda: SCAP(p=5.0, memory="linear", max_iter=2, random_state=0).fit(X))
    assert peak < one_matrix / 50, f"peak {peak / 2**20:.1f} MiB"
    # The default p adds a fixed-size sample of 100 000 pairs (bounded, independent of N).
    peak = _traced_peak(lambda: SCAP(memory="linear", max_iter=1, random_state=0).fit(X))
    assert peak < one_matrix / 10, f"peak {peak / 2**20:.1f} MiB"
    # Control: the same measurement sees the dense mode's N x N arrays.
    m = 600
    assert _traced_peak(lambda: SCAP(p=5.0, memory="dense", max_iter=1).fit(X[:m])) > 2 * m * m * 8


def test_non_convergence_warns_and_keeps_last_exemplars():
    X = np.random.default_rng(0).uniform(size=(30, 2))
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        est = SCAP(p=0.5, max_iter=1, random_state=0).fit(X)
    assert not est.converged_ and est.n_iter_ == 1
    assert np.all(est.exemplars_ != np.arange(30))  # no self-exemplars (eq. 2)


def test_stop_on_clusters_stops_when_only_the_shared_exemplar_wanders():
    # p far above within-blob distances: any member is an equally good hub.
    X, y = _blobs(20, [[0, 0], [5, 5]], scale=0.1, seed=0)
    with pytest.warns(ConvergenceWarning, match="exemplars still changed"):
        by_exemplars = SCAP(p=1.0, max_iter=60, random_state=0).fit(X)
    by_clusters = SCAP(p=1.0, max_iter=60, stop_on="clusters", random_state=0).fit(X)
    assert by_clusters.converged_ and by_clusters.n_iter_ < 60
    assert metrics.adjusted_rand(y, by_clusters.labels_) == 1.0
    assert metrics.adjusted_rand(y, by_exemplars.labels_) == 1.0


def test_default_penalty_is_the_median_distance():
    X = np.random.default_rng(1).normal(size=(50, 2))
    d = -negative_sq_euclidean(X)[np.triu_indices(50, 1)]
    assert SCAP(random_state=0).fit(X).p_ == pytest.approx(np.median(d))
    assert SCAP(similarity="euclidean", random_state=0).fit(X).p_ == pytest.approx(np.median(np.sqrt(d)))


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(p=np.inf), "'p'"),
        (dict(p=np.nan), "'p'"),
        (dict(p=-1.0), "'p'"),
        (dict(memory="sparse"), "'memory'"),
        (dict(similarity="cosine"), "'similarity'"),
        (dict(backend="cython"), "'backend'"),
        (dict(max_iter=0), "'max_iter'"),
        (dict(convergence_iter=0), "'convergence_iter'"),
    ],
)
def test_bad_parameters_are_refused(params, match):
    with pytest.raises(ValueError, match=match):
        SCAP(**params).fit(np.random.default_rng(0).normal(size=(10, 2)))


def test_bad_precomputed_input_is_refused():
    with pytest.raises(ValueError, match="square"):
        SCAP(similarity="precomputed").fit(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="memory='dense'"):
        SCAP(similarity="precomputed", memory="linear").fit(np.zeros((5, 5)))
    with pytest.raises(ValueError, match="constraints refer to"):
        SSAPL().fit(np.zeros((5, 2)), constraints=Constraints([[0, 1]], n_samples=6))


def test_tiny_inputs():
    assert list(SCAP().fit(np.array([[0.0], [1.0]])).labels_) == [0, 0]
    # Everything labeled: no unlabeled point, clusters are the labels.
    cons = Constraints.from_labels(np.array([0, 0, 1, 1]))
    est = SSAPL().fit(np.array([[0.0], [0.1], [5.0], [5.1]]), constraints=cons)
    assert list(est.labels_) == [0, 0, 1, 1] and est.converged_


def test_registry_specs_and_configs():
    scap, ssap_l = ccbench.registry.get_method_spec("scap"), ccbench.registry.get_method_spec("ssap_l")
    assert scap.supervision == () and not scap.needs_n_clusters
    assert set(ssap_l.supervision) == {"must_link", "labels"} and ssap_l.constraint_kind == "hard"
    conf_dir = Path(ccbench.__file__).resolve().parents[1] / "conf" / "method"
    for spec in (scap, ssap_l):
        conf = yaml.safe_load((conf_dir / f"{spec.name}.yaml").read_text())
        assert conf.pop("name") == spec.name
        est = ccbench.make_method(spec.name, **conf)
        assert est.get_params() == {**spec.estimator().get_params(), **conf}


def test_engine_is_a_deprecated_alias_of_backend():
    X = np.r_[np.zeros((4, 2)), np.ones((4, 2)) * 5] + np.arange(8)[:, None] * 0.01
    with pytest.warns(FutureWarning, match="backend='numpy'"):
        old = SCAP(engine="numpy", random_state=0).fit(X)
    new = SCAP(backend="numpy", random_state=0).fit(X)
    np.testing.assert_array_equal(old.labels_, new.labels_)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_dense_and_linear_modes_are_identical_on_ties_and_unsettled_runs():
    # iris has exact distance ties (d(47, 38) = d(47, 30)); the dense matrix used to
    # come from one matrix product and could break them unlike linear mode's rows.
    from sklearn.datasets import load_iris

    X = load_iris().data
    for kw in (dict(max_iter=200), dict(max_iter=30, convergence_iter=100)):  # settled, unsettled
        a = SCAP(memory="dense", random_state=3, **kw).fit(X)  # seed 3: 2 exemplars differed
        b = SCAP(memory="linear", random_state=3, **kw).fit(X)
        np.testing.assert_array_equal(a.exemplars_, b.exemplars_)
        assert a.n_iter_ == b.n_iter_


def test_similarity_rows_are_translation_invariant():
    # The Gram identity on raw iris + 1e6 was off by ~1e-5 relative (eps * ||x||^2).
    from ccbench_plugins.scap.scap import _CandidateSimilarity
    from scipy.spatial.distance import cdist
    from sklearn.datasets import load_iris

    far = load_iris().data + 1e6
    exact = -cdist(far, far, "sqeuclidean")
    sim = _CandidateSimilarity(far, "sqeuclidean", np.arange(150), [])
    tol = 1e-12 * np.abs(exact).max()
    np.testing.assert_allclose(sim.rows(np.arange(150)), exact, rtol=1e-12, atol=tol)
    row = np.empty(150)
    from ccbench_plugins.scap._kernels import _point_row

    _point_row(sim.X, sim.X_T, sim.sq_norms, 47, False, row)  # the compiled (linear, numba) rows
    np.testing.assert_allclose(row, exact[47], rtol=1e-12, atol=tol)


# -- finite temperature (eqs. 6, 12-13) ---------------------------------------


def _reference_sweeps_eq12(S, p, beta, orders):
    """Eq. 12 iterated in its own variables, the probabilities A~ and B~, by plain loops.

    An independent route to the finite-temperature messages: no log fields, no
    log-sum-exp, no running sums. ``S`` is (n_var, n_cand) as in :func:`_reference_sweeps`.
    Initial r = 0 means B~ = 1/2 (eq. 13). Before the update of point i every
    A~_{k->i} is evaluated from the current B~ (first line of eq. 12), then the
    B~_{i->k} (second line), and the exemplar is the argmax of P_i (third line).
    Returns r and a of eq. 13 and the exemplars.
    """
    n_var, n_cand = S.shape
    B = np.full((n_var, n_cand), 0.5)
    A = np.ones((n_var, n_cand))
    exemplar = np.full(n_var, -1)
    for order in orders:
        for i in order:
            for k in range(n_cand):
                if k != i:
                    prod = 1.0
                    for l in range(n_var):
                        if l != k and l != i:
                            prod *= 1.0 - B[l, k]
                    A[i, k] = 1.0 / (1.0 + (np.exp(beta * p) - 1.0) * prod)
            for k in range(n_cand):
                if k != i:
                    total = sum(np.exp(beta * (S[i, l] - S[i, k])) * A[i, l]
                                for l in range(n_cand) if l != i and l != k)
                    B[i, k] = 1.0 / (1.0 + total)
            marginal = [np.exp(beta * S[i, k]) * A[i, k] if k != i else -1.0 for k in range(n_cand)]
            exemplar[i] = int(np.argmax(marginal))
    return np.log(B / (1.0 - B)) / beta, np.log(A) / beta, exemplar


def _run_beta(S, *, p, beta, sweeps, seed, engine="numpy"):
    sim = _CandidateSimilarity(S, "precomputed", np.arange(S.shape[0]), [])
    state, _, _ = _run_scap(sim, p=p, max_iter=sweeps, convergence_iter=10**6, rng=np.random.default_rng(seed),
                            dense=True, engine=engine, beta=beta)
    return state


@pytest.mark.parametrize("engine", ["numpy", "numba"])
@pytest.mark.parametrize("beta", [0.7, 3.0])
def test_hand_sized_finite_beta_messages_match_eq12_in_probabilities(beta, engine):
    X = np.array([[0.0, 0.0], [0.3, 0.1], [0.1, 0.5], [3.0, 3.0], [3.4, 2.8], [1.5, 1.4]])
    S = negative_sq_euclidean(X)
    p, sweeps, seed = 0.8, 4, 3
    state = _run_beta(S, p=p, beta=beta, sweeps=sweeps, seed=seed, engine=engine)
    rng = np.random.default_rng(seed)
    R_ref, A_ref, c_ref = _reference_sweeps_eq12(S, p, beta, [rng.permutation(6) for _ in range(sweeps)])
    off = ~np.eye(6, dtype=bool)
    np.testing.assert_allclose(state.requests[off], R_ref[off], rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(state.exemplar, c_ref)
    # u_k sums sp(r_{l->k}) = ln(1 + e^{beta r})/beta over l != k, kept up to date incrementally.
    sp = np.log1p(np.exp(beta * R_ref)) / beta
    np.testing.assert_allclose(state.positive_requests, (sp * off).sum(axis=0), rtol=1e-10, atol=1e-10)
    assert np.all(A_ref[off] <= 0.0)  # a = ln(A~)/beta <= 0, as at zero temperature


def test_hand_sized_finite_beta_with_macro_nodes_matches_eq12():
    X = np.array([[0.0, 0.0], [0.2, 0.1], [1.0, 1.2], [2.9, 3.0], [3.2, 3.1], [3.0, 2.6], [1.8, 1.9]])
    macro = [np.array([1, 5]), np.array([4])]
    variables = np.array([0, 2, 3, 6])
    p, beta, sweeps, seed = 0.9, 2.0, 3, 5
    sim = _CandidateSimilarity(X, "sqeuclidean", variables, macro)
    state, _, _ = _run_scap(sim, p=p, max_iter=sweeps, convergence_iter=10**6, rng=np.random.default_rng(seed),
                            dense=True, beta=beta)
    S = sim.rows(np.arange(4))
    rng = np.random.default_rng(seed)
    R_ref, _, c_ref = _reference_sweeps_eq12(S, p, beta, [rng.permutation(4) for _ in range(sweeps)])
    mask = np.ones_like(S, dtype=bool)
    mask[np.arange(4), np.arange(4)] = False
    np.testing.assert_allclose(state.requests[mask], R_ref[mask], rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(state.exemplar, c_ref)


def test_large_beta_recovers_the_zero_temperature_messages():
    from ccbench_plugins.datasets.synthetic import gaussian_similarity_clusters

    S = gaussian_similarity_clusters(60, 3, 3.0, seed=1).X
    zero = _run_beta(S, p=4.0, beta=np.inf, sweeps=5, seed=2)
    for beta, tol in ((1e9, 1e-4), (1e12, 1e-7)):  # the gap shrinks as 1/beta
        hot = _run_beta(S, p=4.0, beta=beta, sweeps=5, seed=2)
        off = ~np.eye(60, dtype=bool)
        np.testing.assert_allclose(hot.requests[off], zero.requests[off], atol=tol)
        np.testing.assert_allclose(hot.positive_requests, zero.positive_requests, atol=tol)
        np.testing.assert_array_equal(hot.exemplar, zero.exemplar)
    X, _ = _blobs(20, [[0, 0], [3, 0], [0, 3]], scale=0.4, seed=0)
    for backend in ("numpy", "numba"):
        a = SCAP(p=2.0, random_state=1, backend=backend).fit(X)
        b = SCAP(p=2.0, beta=1e12, random_state=1, backend=backend).fit(X)
        np.testing.assert_array_equal(a.exemplars_, b.exemplars_)
        np.testing.assert_array_equal(a.labels_, b.labels_)


def test_default_beta_is_the_zero_temperature_path_bit_for_bit():
    X, _ = _blobs(15, [[0, 0], [2, 0]], scale=0.7, seed=4)
    sim = _CandidateSimilarity(X, "sqeuclidean", np.arange(30), [])
    kw = dict(p=1.0, max_iter=6, convergence_iter=10**6, dense=True)
    a, _, _ = _run_scap(sim, rng=np.random.default_rng(0), **kw)
    b, _, _ = _run_scap(sim, rng=np.random.default_rng(0), beta=np.inf, **kw)
    assert np.array_equal(a.requests, b.requests) and np.array_equal(a.positive_requests, b.positive_requests)
    assert SCAP().get_params()["beta"] == np.inf


def test_temperature_is_not_ignored():
    """Hot SCAP: sp(r) > max(0, r) lifts every availability, so more points look like exemplars."""
    from ccbench_plugins.datasets.synthetic import gaussian_similarity_clusters

    S = gaussian_similarity_clusters(100, 5, 3.0, seed=1).X
    cold = SCAP(p=5.0, similarity="precomputed", random_state=0).fit(S)
    hot = SCAP(p=5.0, similarity="precomputed", beta=0.5, random_state=0).fit(S)
    assert hot.labels_.max() + 1 > cold.labels_.max() + 1 + 5  # T = 2: the 5-cluster plateau is gone
    # and the messages differ from zero temperature after one sweep already
    zero = _run_beta(S, p=5.0, beta=np.inf, sweeps=1, seed=0)
    warm = _run_beta(S, p=5.0, beta=4.0, sweeps=1, seed=0)
    assert np.abs(warm.requests - zero.requests).max() > 0.1


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_finite_beta_numba_matches_numpy():
    X, y = _blobs(15, [[0, 0], [3, 0]], scale=0.8, seed=2)
    cons = Constraints.from_labels(np.where(np.arange(30) % 7 == 0, y, -1))
    kw = dict(p=2.0, beta=1.5, random_state=3, max_iter=20, convergence_iter=100)
    for cls in (SCAP, SSAPL):
        a = cls(backend="numpy", **kw).fit(X, constraints=cons)
        b = cls(backend="numba", **kw).fit(X, constraints=cons)
        np.testing.assert_array_equal(a.exemplars_, b.exemplars_)
    S = negative_sq_euclidean(X)
    a = _run_beta(S, p=2.0, beta=1.5, sweeps=8, seed=1)
    b = _run_beta(S, p=2.0, beta=1.5, sweeps=8, seed=1, engine="numba")
    np.testing.assert_allclose(a.requests, b.requests, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(a.positive_requests, b.positive_requests, rtol=1e-9, atol=1e-9)


def test_finite_beta_is_refused_in_linear_memory_and_at_zero():
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="memory='dense'"):
        SCAP(beta=2.0, memory="linear").fit(X)
    for bad in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="'beta'"):
            SCAP(beta=bad).fit(X)
