"""Issue 51, deliverable 6: the slow methods made cheaper without changing their answers.

Each speed-up is checked against the route it replaces, run in the same test: the same labels (and the
same preference found), and the saving's mechanism itself (the work it removes is really not done).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from ccbench_plugins.scap import scap as scap_module
from ccbench_plugins.scap.scap import SCAP, SSAPL
from sklearn.datasets import load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from ccbench import constraints as cgen


def _data(loader, n_pairs, seed):
    X, y = loader(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    rng = np.random.default_rng(seed)
    return X, y, cgen.random_pairs(y, n_constraints=n_pairs, rng=rng)


def _search(est, X, cons):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, constraints=cons)
    return est


@pytest.mark.parametrize("method", [SCAP, SSAPL])
@pytest.mark.parametrize("loader, n_pairs", [(load_iris, 15), (load_wine, 18)])
def test_scap_search_builds_its_dense_similarities_once_with_the_same_answer(method, loader, n_pairs, monkeypatch):
    X, y, cons = _data(loader, n_pairs, seed=3)
    k = len(np.unique(y))
    built = []
    row = scap_module._CandidateSimilarity.row

    def counting_row(self, position):
        built.append(position)
        return row(self, position)

    monkeypatch.setattr(scap_module._CandidateSimilarity, "row", counting_row)
    shared = _search(method(n_clusters=k, random_state=0), X, cons)
    n_built_shared = len(built)

    run_scap = scap_module._run_scap
    monkeypatch.setattr(scap_module, "_run_scap", lambda *a, **kw: run_scap(*a, **{**kw, "dense_rows": None}))
    built.clear()
    alone = _search(method(n_clusters=k, random_state=0), X, cons)

    np.testing.assert_array_equal(shared.labels_, alone.labels_)
    assert shared.p_ == alone.p_ and shared.n_preference_fits_ == alone.n_preference_fits_ > 1
    n_variables = len(shared.exemplars_) - sum(len(g) for g in shared.macro_nodes_) + shared.n_free_macro_nodes_
    assert n_built_shared == n_variables  # one matrix for the whole search
    assert len(built) == n_variables * alone.n_preference_fits_


# --------------------------------------------------------------------------- SRCP / E2CP eigendecomposition


def _spectral_case(n_components=1):
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=240, centers=3, cluster_std=1.0 if n_components == 1 else 0.2,
                      center_box=(-30, 30), random_state=4)
    cons = cgen.random_pairs(y, n_constraints=40, rng=np.random.default_rng(2))
    return X, y, cons


@pytest.mark.parametrize("n_components", [1, 3])  # 3: a repeated eigenvalue 0, a basis the drivers choose freely
def test_divide_and_conquer_eigh_propagates_the_same_constraints(n_components, monkeypatch):
    import scipy.linalg
    from ccbench_plugins.spectral import core

    X, y, cons = _spectral_case(n_components)
    W = core.gaussian_knn_graph(X, 10)
    L = core.normalized_laplacian(W)
    Y = core.constraint_matrix(cons, len(y))
    drivers = []
    eigh = scipy.linalg.eigh
    monkeypatch.setattr(scipy.linalg, "eigh", lambda *a, **kw: drivers.append(kw.get("driver")) or eigh(*a, **kw))
    lam, U = core.laplacian_eigh(L)
    assert drivers == ["evd"]
    lam_evr, U_evr = eigh(L.toarray(), driver="evr")
    np.testing.assert_allclose(lam, np.clip(lam_evr, 0, 2), atol=1e-12)
    for propagate, kw in ((core.propagate_eig, {"mu": 0.2}), (core.propagate_e2cp, {"alpha": 0.8})):
        F = propagate(lam, U, Y, **kw)
        F_evr = propagate(np.clip(lam_evr, 0, 2), U_evr, Y, **kw)
        np.testing.assert_allclose(F, F_evr, atol=1e-12)
        assert np.abs(F).max() > 1e-3  # something was propagated


@pytest.mark.parametrize("method", ["srcp", "e2cp"])
def test_srcp_and_e2cp_labels_do_not_depend_on_the_eigh_driver(method, monkeypatch):
    from ccbench import registry
    from ccbench_plugins.spectral import core

    X, y, cons = _spectral_case()
    fit = lambda: registry.make_method(method, n_clusters=3, random_state=0).fit(X, constraints=cons).labels_
    labels = fit()
    monkeypatch.setattr(core, "EIGH_DRIVER", "evr")
    # the same partition; the cluster numbers may differ (an eigenvector's sign is the driver's choice)
    np.testing.assert_array_equal(_first_seen_order(labels), _first_seen_order(fit()))


def _first_seen_order(labels):
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inverse]


# --------------------------------------------------------------------------- the AP message kernel's scan


def _one_lane(v):
    """The scan ``best_two`` replaces, written out: first index of the largest, largest elsewhere."""
    best, arg = -np.inf, 0
    for j, x in enumerate(v):
        if x > best:
            best, arg = x, j
    second = max((x for j, x in enumerate(v) if j != arg), default=-np.inf)
    return best, arg, second


def _best_two(v, family):
    """The scan of the AP message kernel (``affinity``) or of SCAP's sweep (``scap``, a copy: see its docstring)."""
    from ccbench_plugins.affinity import _kernels as affinity_kernels
    from ccbench_plugins.scap import _kernels as scap_kernels

    kernels = {"affinity": affinity_kernels, "scap": scap_kernels}[family]
    scan = kernels.best_two if family == "affinity" else kernels._best_two
    lanes = kernels.SCAN_LANES
    buffers = np.empty(lanes, v.dtype), np.empty(lanes, v.dtype), np.empty(lanes, np.intp)
    best, arg, second = scan(v, *buffers)
    return float(best), int(arg), float(second)


FAMILIES = pytest.mark.parametrize("family", ["affinity", "scap"])


@pytest.mark.parametrize("v, expected", [
    ([1.0, 5.0, 2.0], (5.0, 1, 2.0)),
    ([5.0, 1.0, 5.0], (5.0, 0, 5.0)),  # a tie: the first index, and second = best
    ([-np.inf, -np.inf, 3.0, -np.inf], (3.0, 2, -np.inf)),
    ([-np.inf] * 20, (-np.inf, 0, -np.inf)),
    ([0.0] * 17 + [2.0] + [2.0] * 3, (2.0, 17, 2.0)),  # lanes 1-4 hold the ties; the first wins
    (list(range(33, 0, -1)), (33.0, 0, 32.0)),  # best in lane 0, second in lane 1
    ([1.0] * 16 + [9.0] + [1.0] * 15 + [9.0], (9.0, 16, 9.0)),  # two 9s in one lane (0)
])
@FAMILIES
def test_best_two_on_hand_cases(v, expected, family):
    assert _best_two(np.asarray(v, dtype=np.float64), family) == expected


@pytest.mark.parametrize("family, dtype", [("affinity", np.float64), ("affinity", np.float32), ("scap", np.float64)])
def test_best_two_is_the_one_lane_scan_on_random_rows_with_ties(family, dtype):
    rng = np.random.default_rng(7)
    for m in [2, 3, 15, 16, 17, 31, 32, 33, 100, 257]:
        for _ in range(20):
            v = np.round(rng.normal(size=m) * 2).astype(dtype)  # few distinct values: many ties
            v[rng.random(m) < 0.1] = -np.inf
            assert _best_two(v, family) == _one_lane(v.tolist()), (m, v)


def test_fused_iteration_gives_the_numpy_iterations_messages():
    """The fused kernel with the lane scan against the numpy back-end, 200 iterations with constraints."""
    from ccbench_plugins.affinity import core

    X, y, cons = _data(load_iris, 30, seed=1)
    S = -((X[:, None] - X[None]) ** 2).sum(-1)
    np.fill_diagonal(S, np.median(S))
    factors = core.pair_factors(cons.must_link, cons.cannot_link, penalty_must=2.0, penalty_cannot=2.0)
    runs = [core.affinity_propagation(S, backend=b, factors=factors, max_iter=200, convergence_iter=None, warn=False)
            for b in ("numba", "numpy")]
    np.testing.assert_allclose(runs[0].availability, runs[1].availability, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(runs[0].responsibility, runs[1].responsibility, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(runs[0].labels, runs[1].labels)


def test_scap_compiled_sweep_gives_the_numpy_sweeps_exemplars_with_ties():
    """The lane scan inside SCAP's compiled sweep against the numpy path's per-point update, on data
    with exact distance ties (integer grid points), with and without macro-nodes. Dense memory: in
    linear mode the two paths sum a similarity row in another order, so a tie may break differently
    (``_auto_backend``), before and after this change alike."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 4, size=(90, 2)).astype(float)
    y = (X[:, 0] > 1).astype(int)
    cons = cgen.random_pairs(y, n_constraints=12, rng=np.random.default_rng(1))
    for method in (SCAP, SSAPL):
        fits = [_search(method(p=1.5, backend=b, random_state=0), X, cons) for b in ("numba", "numpy")]
        np.testing.assert_array_equal(fits[0].exemplars_, fits[1].exemplars_)
        np.testing.assert_array_equal(fits[0].labels_, fits[1].labels_)


# --------------------------------------------------------------------------- the k-means family's ICM pass


def _icm_case(rng, n, k, n_ml, n_cl, hard_share):
    from ccbench_plugins.kmeans import core as kcore

    cost = rng.normal(size=(n, k)) ** 2
    pairs = rng.choice(n, size=(n_ml + n_cl, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    ml, cl = pairs[: len(pairs) // 2], pairs[len(pairs) // 2:]
    adj = []
    for part, with_q in ((ml, True), (cl, False)):
        w = rng.uniform(0.1, 3.0, size=len(part))
        w[rng.random(len(part)) < hard_share] = np.inf
        indptr, nbr, we = kcore.neighbours(part, n, w)
        P = we[:, None] * rng.uniform(0.5, 1.5, size=(len(we), k))
        Q = P[:, ::-1].copy() if with_q else None
        adj.append((indptr, nbr, P, Q))
    lab = np.argmin(cost, axis=1)
    constrained = np.unique(pairs)
    lab[constrained[rng.random(len(constrained)) < 0.5]] = -1  # some not placed yet: no penalty from them
    return cost, lab, rng.permutation(constrained), adj[0], adj[1]


@pytest.mark.parametrize("hard_share", [0.0, 0.3])
def test_compiled_icm_pass_gives_the_numpy_pass_labels(hard_share):
    from ccbench_plugins.kmeans import core as kcore

    rng = np.random.default_rng(11)
    for case in range(60):
        n, k = int(rng.integers(5, 80)), int(rng.integers(2, 7))
        cost, lab, order, ml, cl = _icm_case(rng, n, k, int(rng.integers(0, 3 * n)), int(rng.integers(0, 3 * n)),
                                             hard_share)
        expected = kcore.icm_sweep(cost, lab.copy(), order, ml, cl, backend="numpy")
        got = kcore.icm_sweep(cost, lab.copy(), order, ml, cl, backend="numba")
        np.testing.assert_array_equal(got, expected, err_msg=f"case {case}")
    assert (expected != np.argmin(cost, axis=1)).any()  # the penalties moved someone


@pytest.mark.parametrize("method", ["pck_means", "mpck_means"])
def test_pck_and_mpck_means_give_the_same_labels_on_either_icm_pass(method, monkeypatch):
    import functools

    from ccbench import registry
    from ccbench_plugins.kmeans import core as kcore
    from ccbench_plugins.kmeans import mpck_means, pck_means

    X, y, cons = _data(load_wine, 60, seed=4)
    fit = lambda: registry.make_method(method, n_clusters=3, random_state=0).fit(X, constraints=cons).labels_
    labels = fit()
    numpy_pass = functools.partial(kcore.icm_sweep, backend="numpy")
    for module in (pck_means, mpck_means):
        monkeypatch.setattr(module, "icm_sweep", numpy_pass)
    np.testing.assert_array_equal(labels, fit())


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_icm_pass_on_a_hand_sized_case(backend):
    """Point 0 ties between clusters 0 and 1 (the first wins); point 1, must-linked to point 0 with
    P = 2 and Q = 1, pays 2 + 1 away from 0's cluster; point 2, hard cannot-linked to point 1, avoids
    its cluster whatever the cost."""
    from ccbench_plugins.kmeans import core as kcore

    cost = np.array([[1.0, 1.0, 5.0], [0.0, 2.5, 9.0], [0.0, 9.0, 9.0]])
    ml = kcore.neighbours(np.array([[0, 1]]), 3, np.array([1.0]))
    ml = (ml[0], ml[1], np.full((2, 3), 2.0), np.full((2, 3), 1.0))
    cl = kcore.neighbours(np.array([[1, 2]]), 3, np.array([np.inf]))
    cl = (cl[0], cl[1], np.full((2, 3), np.inf), None)
    lab = kcore.icm_sweep(cost, np.full(3, -1, dtype=np.intp), np.array([0, 1, 2]), ml, cl, backend=backend)
    np.testing.assert_array_equal(lab, [0, 0, 1])
    # point 1 with its partner in cluster 1: 0 + 3 in cluster 0 against 2.5 in cluster 1
    lab = kcore.icm_sweep(cost, np.array([1, -1, -1], dtype=np.intp), np.array([1]), ml, cl, backend=backend)
    assert lab[1] == 1


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("with_factors", [False, True])
@pytest.mark.parametrize("convergence_iter", [15, None])
def test_compiled_message_loop_is_the_step_by_step_loop(dtype, with_factors, convergence_iter):
    """``affinity_propagation``'s compiled loop (``_kernels.run_iterations``) against ``_NumbaSteps``
    called once per iteration under the same stopping rule: the same messages bit for bit, the same
    iteration count, convergence flag and pairwise messages."""
    from ccbench_plugins.affinity import core

    X, y, cons = _data(load_iris, 30, seed=2)
    S = -((X[:, None] - X[None]) ** 2).sum(-1)
    np.fill_diagonal(S, np.median(S))
    S = S.astype(dtype)
    factors = (core.pair_factors(cons.must_link, cons.cannot_link, penalty_must=1.0, penalty_cannot=1.0)
               if with_factors else None)
    compiled = core.affinity_propagation(S, backend="numba", factors=factors, max_iter=400,
                                         convergence_iter=convergence_iter, warn=False, dtype=dtype)
    A, R = np.zeros_like(S), np.zeros_like(S)
    step = core._NumbaSteps(S, A, R, factors, 0.75)
    it, converged = core._iterate(step, 400, convergence_iter)  # the numpy back-end's loop, one call a step
    assert (compiled.n_iter, compiled.converged) == (it, converged)
    assert it < 400 if convergence_iter else it == 400
    np.testing.assert_array_equal(compiled.availability, A)
    np.testing.assert_array_equal(compiled.responsibility, R)
    if with_factors:
        np.testing.assert_array_equal(compiled.pair_messages, step.msg)


def test_compiled_pairwise_sum_is_numpys_row_sum_bit_for_bit():
    """``_kernels.pairwise_sum`` (numpy's pairwise summation, its first levels as calls and the rest on
    a stack) against ``ndarray.sum(axis=-1)``: every length to 300 (the leaf of 128, its multiples of
    8 and remainders), the three-level limit near 1,000 and lengths that reach the stack."""
    from ccbench_plugins.kmeans._kernels import pairwise_sum

    rng = np.random.default_rng(0)
    for length in [*range(1, 300), 383, 512, 1000, 1023, 1024, 1025, 1500, 2049, 4000, 10007]:
        rows = rng.standard_normal((6, length)) ** 2 * rng.uniform(1e-3, 1e3, size=(6, 1))
        got = np.array([0.0 + pairwise_sum(r, length) for r in rows])
        np.testing.assert_array_equal(got, rows.sum(axis=-1), err_msg=f"length {length}")


def test_compiled_farthest_pairs_are_the_numpy_sweeps_with_ties():
    """MPCK-means's farthest-pair sweeps compiled (``backend="numba"``) against the numpy sweeps: the
    same (k, d) squared differences bit for bit on random data of up to 600 features, and on data with
    duplicated far points (the largest distance tied: both must take its first index)."""
    from ccbench_plugins.kmeans.mpck_means import farthest_pairs

    rng = np.random.default_rng(5)
    for n, d, k in [(40, 2, 2), (300, 13, 3), (500, 216, 10), (200, 600, 4)]:
        X = rng.standard_normal((n, d))
        A = rng.uniform(0.1, 3.0, size=(k, d))
        np.testing.assert_array_equal(farthest_pairs(X, A, 0), farthest_pairs(X, A, 0, backend="numpy"))
    # a square's corners twice over, in two orders: every sweep meets a tie for the farthest point
    corners = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    X = np.vstack([corners, corners[::-1], [[0.5, 0.5]]])
    A = np.array([[1.0, 1.0], [1.0, 4.0]])
    for start in range(len(X)):
        np.testing.assert_array_equal(farthest_pairs(X, A, start), farthest_pairs(X, A, start, backend="numpy"))
    with pytest.raises(ValueError, match="backend"):
        farthest_pairs(X, A, 0, backend="cuda")


def test_compiled_farthest_index_takes_the_first_of_tied_points():
    """A hand-sized case: from point 0 at the origin, points 1 and 3 are both 2 away (point 2 only 1):
    the first, 1, is the farthest, as ``np.argmax`` rules."""
    from ccbench_plugins.kmeans._kernels import farthest_index

    X = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    assert farthest_index(X, np.ones(2), 0) == 1
    assert farthest_index(X, np.array([1.0, 4.0]), 0) == 3  # the metric stretches the second feature


@pytest.mark.parametrize("loader, n_pairs", [(load_wine, 60), (load_iris, 40)])
def test_mpck_means_gives_the_same_labels_on_either_farthest_pair_sweep(loader, n_pairs, monkeypatch):
    import functools

    from ccbench import registry
    from ccbench_plugins.kmeans import mpck_means

    X, y, cons = _data(loader, n_pairs, seed=6)
    fit = lambda: registry.make_method("mpck_means", n_clusters=3, random_state=0).fit(X, constraints=cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = fit()
        monkeypatch.setattr(mpck_means, "farthest_pairs", functools.partial(mpck_means.farthest_pairs, backend="numpy"))
        reference = fit()
    np.testing.assert_array_equal(compiled.labels_, reference.labels_)
    np.testing.assert_array_equal(compiled.metrics_, reference.metrics_)
    assert compiled.objective_ == reference.objective_
