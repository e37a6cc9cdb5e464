"""The shared AP message core and the ``ap`` estimator."""


import warnings

import numpy as np
import pytest
from ccbench_plugins.affinity import core as ap_core
from ccbench_plugins.affinity.ap import AffinityPropagationClusterer
from sklearn.cluster import AffinityPropagation
from sklearn.datasets import make_blobs

from ccbench import make_method
from ccbench.base import ConvergenceWarning
from ccbench.similarity import median_preference, negative_sq_euclidean


def with_median_preference(X):
    """-||x_i - x_j||^2 with the median off-diagonal value on the diagonal (no tie noise)."""
    S = negative_sq_euclidean(X)
    pref = median_preference(S)
    np.fill_diagonal(S, pref)
    return S, pref


def canonical(labels):
    """Relabel by order of first appearance, so partitions compare with ==."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.argsort(np.argsort(first))
    return rank[inverse]


def disagreements(a, b):
    """Points outside the majority overlap of each cluster of ``a`` with one of ``b``."""
    table = np.zeros((a.max() + 1, b.max() + 1), dtype=int)
    np.add.at(table, (a, b), 1)
    return int(a.size - table.max(axis=1).sum())


def _data(seed, n=120, kind="blobs"):
    rng = np.random.default_rng(seed)
    if kind == "blobs":
        X, _ = make_blobs(n_samples=n, centers=4, cluster_std=1.0, random_state=seed)
    else:
        X = rng.normal(size=(n, 3))
    S, pref = with_median_preference(X)
    ap_core.add_tie_noise(S, rng)
    return X, S, pref


@pytest.mark.parametrize("seed,kind", [(0, "blobs"), (1, "blobs"), (2, "gauss"), (3, "gauss"), (4, "blobs")])
def test_matches_sklearn_on_same_similarities(seed, kind):
    _, S, pref = _data(seed, kind=kind)
    ours = ap_core.affinity_propagation(S, damping=0.75, max_iter=500, convergence_iter=15)
    # sklearn puts `preference` on the diagonal and adds its own eps-relative noise,
    # far below any gap in S, so both run on the same S.
    sk = AffinityPropagation(
        affinity="precomputed", damping=0.75, preference=np.diagonal(S).copy(),
        max_iter=500, convergence_iter=15, random_state=0,
    ).fit(S.copy())
    assert ours.converged
    assert len(ours.exemplars) == len(sk.cluster_centers_indices_)
    # Same exemplars: Frey & Dueck's decoding of our exemplar set gives sklearn's labels exactly.
    np.testing.assert_array_equal(ap_core.similarity_assignment(S, ours.exemplars)[0], sk.labels_)
    # Algorithm 1's decoding (argmax a + r) may differ from argmax s only on
    # points between clusters; on these data sets it does on at most 2 points.
    assert disagreements(ours.labels, sk.labels_) <= 2


def test_estimator_matches_sklearn_on_X():
    X, _ = make_blobs(n_samples=150, centers=3, cluster_std=1.5, random_state=7)
    S, pref = with_median_preference(X)
    sk = AffinityPropagation(affinity="precomputed", damping=0.75, preference=pref, random_state=0).fit(S)
    ours = make_method("ap", assignment="similarity", random_state=0).fit(X)
    np.testing.assert_array_equal(ours.labels_, sk.labels_)
    np.testing.assert_array_equal(ours.cluster_centers_indices_, sk.cluster_centers_indices_)
    # Algorithm 1's rule (the default) keeps the exemplar set, moves boundary points only.
    default = make_method("ap", random_state=0).fit(X)
    assert disagreements(default.labels_, sk.labels_) <= 0.1 * len(X)
    assert ours.preference_ == pytest.approx(pref)


def test_same_responsibility_sequence_as_sklearn_loop():
    """Availability-then-responsibility (Algorithm 1) gives sklearn's R after every iteration."""
    _, S, _ = _data(5, n=40)
    n = S.shape[0]
    A = np.zeros((n, n))
    R = np.zeros((n, n))
    ind = np.arange(n)
    mu = 0.75
    for t in range(1, 8):
        # scikit-learn's iteration, written out: responsibilities first, then availabilities.
        tmp = A + S
        I = np.argmax(tmp, axis=1)
        Y = tmp[ind, I]
        tmp[ind, I] = -np.inf
        Y2 = tmp.max(axis=1)
        Rn = S - Y[:, None]
        Rn[ind, I] = S[ind, I] - Y2
        R = mu * R + (1 - mu) * Rn
        Rp = np.maximum(R, 0)
        np.fill_diagonal(Rp, np.diagonal(R))
        An = Rp.sum(axis=0)[None, :] - Rp
        dA = np.diagonal(An).copy()
        An = np.minimum(An, 0)
        np.fill_diagonal(An, dA)
        res = ap_core.affinity_propagation(S, damping=mu, max_iter=t, convergence_iter=None, backend="numpy", warn=False)
        np.testing.assert_allclose(res.responsibility, R, rtol=1e-12, atol=1e-12)
        A = mu * A + (1 - mu) * An


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_numba_and_numpy_agree(seed):
    _, S, _ = _data(seed, n=90, kind="gauss")
    a = ap_core.affinity_propagation(S, max_iter=60, convergence_iter=None, backend="numba", warn=False)
    b = ap_core.affinity_propagation(S, max_iter=60, convergence_iter=None, backend="numpy", warn=False)
    np.testing.assert_allclose(a.responsibility, b.responsibility, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(a.availability, b.availability, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(a.labels, b.labels)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_stops_when_the_exemplar_set_has_held_for_convergence_iter_iterations(backend):
    """The drivers' running count (kept by the numba kernel on that path) against the
    exemplar sets recomputed from fixed-length runs."""
    _, S, _ = _data(6, n=60, kind="gauss")
    c = 8
    res = ap_core.affinity_propagation(S, max_iter=300, convergence_iter=c, backend=backend, warn=False)
    flags = []
    for t in range(1, res.n_iter + 1):
        run = ap_core.affinity_propagation(S, max_iter=t, convergence_iter=None, backend="numpy", warn=False)
        flags.append(tuple(np.diagonal(run.availability) + np.diagonal(run.responsibility) > 0))
    held = [t for t in range(c, len(flags) + 1) if len(set(flags[t - c:t])) == 1 and any(flags[t - 1])]
    assert res.converged and held and held[0] == res.n_iter


def test_fixed_iterations_without_convergence_test():
    _, S, _ = _data(0, n=50)
    res = ap_core.affinity_propagation(S, max_iter=7, convergence_iter=None, warn=False)
    assert res.n_iter == 7


def test_exemplars_label_themselves_and_labels_follow_exemplar_order():
    _, S, _ = _data(1, n=80)
    res = ap_core.affinity_propagation(S)
    assert res.exemplars.size > 1
    np.testing.assert_array_equal(res.labels[res.exemplars], np.arange(res.exemplars.size))
    belief = res.availability + res.responsibility
    np.testing.assert_array_equal(res.exemplars, np.flatnonzero(np.diagonal(belief) > 0))
    others = np.setdiff1d(np.arange(80), res.exemplars)
    expected = np.argmax(belief[np.ix_(others, res.exemplars)], axis=1)
    np.testing.assert_array_equal(res.labels[others], expected)


def test_empty_exemplar_set_gives_minus_one_and_warning():
    # After one iteration alpha = 0 and rho_kk = (1 - mu)(s_kk - max_j s_kj) < 0 when
    # the preference is far below every similarity: Psi is empty.
    _, S, _ = _data(2, n=30)
    np.fill_diagonal(S, -1e9)
    with pytest.warns(ConvergenceWarning, match="no exemplar"):
        res = ap_core.affinity_propagation(S, max_iter=1)
    assert not res.converged
    assert res.exemplars.size == 0
    np.testing.assert_array_equal(res.labels, -1)


def test_non_convergence_warns():
    _, S, _ = _data(3, n=60, kind="gauss")
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        res = ap_core.affinity_propagation(S, max_iter=20, convergence_iter=50)
    assert not res.converged and res.n_iter == 20 and res.exemplars.size > 0


def test_tie_noise_breaks_duplicate_points():
    X = np.repeat(np.array([[0.0, 0.0], [5.0, 5.0]]), 5, axis=0)
    est = AffinityPropagationClusterer(random_state=0).fit(X)
    np.testing.assert_array_equal(canonical(est.labels_), np.repeat([0, 1], 5))
    S = np.array([[0.0, -np.inf], [-1.0, 0.0]])
    ap_core.add_tie_noise(S, np.random.default_rng(0))
    assert S[0, 1] == -np.inf and np.isfinite(S).sum() == 3


def test_random_state_reproducible():
    X, _, _ = _data(4, kind="gauss")
    a = AffinityPropagationClusterer(random_state=3).fit(X)
    b = AffinityPropagationClusterer(random_state=3).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.n_iter_ == b.n_iter_


@pytest.mark.parametrize(
    "params",
    [{"damping": 1.0}, {"damping": 0.4}, {"max_iter": 0}, {"backend": "cuda"}, {"convergence_iter": 0}],
)
def test_bad_parameters(params):
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match=next(iter(params))):
        AffinityPropagationClusterer(**params).fit(X)


def test_resolve_backend():
    assert ap_core.resolve_backend("numpy") == "numpy"
    import importlib.util

    expected = "numba" if importlib.util.find_spec("numba") else "numpy"
    assert ap_core.resolve_backend("auto") == expected
    with pytest.raises(ValueError, match="backend"):
        ap_core.resolve_backend("gpu")


@pytest.mark.parametrize("preference", [None, 1.0, -1.0])
def test_equal_similarities_as_scikit_learn(preference):
    # Without the special case, tie noise alone split ten identical points into 4 clusters.
    for X in (np.ones((10, 2)), np.eye(4)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = AffinityPropagation(preference=preference, random_state=0).fit(X)
        for name in ("ap", "scssap", "ssap_g"):
            est = make_method(name, preference=preference, random_state=0).fit(X)
            np.testing.assert_array_equal(est.labels_, ref.labels_, err_msg=name)
            np.testing.assert_array_equal(est.cluster_centers_indices_, ref.cluster_centers_indices_)
