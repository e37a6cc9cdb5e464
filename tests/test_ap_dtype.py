"""float32 messages (``dtype="float32"``) on the AP message core and its estimators."""

import warnings

import numpy as np
import pytest
from ccbench_plugins.affinity import core as ap_core
from sklearn.datasets import make_blobs

from ccbench import Constraints, load_dataset, make_method
from ccbench.constraints import random_pairs
from ccbench.similarity import negative_sq_euclidean

BACKENDS = ["numba", "numpy"]


def _blobs():
    """The asv suite's blobs (tests/benchmarks/common.py: 8-D, 5 centres, std 2, seed 0), n = 500."""
    return make_blobs(n_samples=500, n_features=8, centers=5, cluster_std=2.0, random_state=0)


def _dataset(name):
    if name == "blobs":
        return _blobs()
    ds = load_dataset(name)
    return ds.X, ds.y


def assert_same_up_to_ties(X, f32, f64):
    """Same exemplars; a point may change cluster only if it is tied between the two.

    A point equidistant from two exemplars (iris has such points: rounded measurements)
    has beliefs that differ by the tie noise alone, 1e-16 relative in float64 and 1e-7 in
    float32, so which side wins is a coin toss, not a precision loss. Such a flip is allowed
    when the two exemplars' similarities to the point agree to 1e-6 of the largest |s|,
    and for at most 1 % of the points. Returns the number of flips.
    """
    np.testing.assert_array_equal(f32.cluster_centers_indices_, f64.cluster_centers_indices_)
    S = negative_sq_euclidean(X)
    differ = np.flatnonzero(f32.labels_ != f64.labels_)
    centres = f64.cluster_centers_indices_
    gap = np.abs(S[differ, centres[f32.labels_[differ]]] - S[differ, centres[f64.labels_[differ]]])
    assert np.all(gap <= 1e-6 * np.abs(S).max()), (differ, gap)
    assert differ.size <= 0.01 * len(X), differ
    return differ.size


def _fit(method, X, constraints=None, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a non-converged run would make the comparison moot
        return make_method(method, random_state=0, **params).fit(X, constraints=constraints)


# -- labels on the benchmark sets ------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("data", ["iris", "wine", "blobs"])
def test_ap_float32_labels_equal_float64_on_benchmark_sets(data, backend):
    X, _ = _dataset(data)
    f64 = _fit("ap", X, backend=backend)
    f32 = _fit("ap", X, backend=backend, dtype="float32")
    # measured: identical labels on all three sets (no tie flips)
    np.testing.assert_array_equal(f32.labels_, f64.labels_)
    np.testing.assert_array_equal(f32.cluster_centers_indices_, f64.cluster_centers_indices_)
    assert f32.converged_ and f64.converged_


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("data", ["iris", "wine", "blobs"])
def test_scssap_float32_labels_equal_float64_on_benchmark_sets(data, backend):
    X, y = _dataset(data)
    cons = random_pairs(y, len(y) // 10, rng=np.random.default_rng(1))
    f64 = _fit("scssap", X, cons, backend=backend)
    f32 = _fit("scssap", X, cons, backend=backend, dtype="float32")
    flips = assert_same_up_to_ties(X, f32, f64)
    # measured: one flip on iris, point 78, at s = -0.27 from both exemplars 54 and 127
    # (beliefs 5.6e-14 apart in float64); none on wine or blobs
    assert flips == (1 if data == "iris" else 0)


@pytest.mark.parametrize("method", ["ssap_g", "scssap_ml"])
def test_other_estimators_float32_labels_equal_float64_on_iris(method):
    X, y = _dataset("iris")
    cons = random_pairs(y, 15, rng=np.random.default_rng(1))
    extra = {"max_outer_iter": 3} if method == "scssap_ml" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scssap_ml may stop at max_outer_iter; same for both
        f64 = make_method(method, random_state=0, **extra).fit(X, constraints=cons)
        f32 = make_method(method, random_state=0, dtype="float32", **extra).fit(X, constraints=cons)
    assert assert_same_up_to_ties(X, f32, f64) == 0


# -- the messages themselves ----------------------------------------------------------------


def _small_problem():
    X, y = make_blobs(n_samples=60, n_features=3, centers=3, cluster_std=1.5, random_state=3)
    S, _ = ap_core.ap_similarity(X, None, np.random.default_rng(0))
    cons = random_pairs(y, 8, rng=np.random.default_rng(2))
    factors = ap_core.pair_factors(cons.must_link, cons.cannot_link, penalty_must=np.inf, penalty_cannot=np.inf,
                                   hard_penalty=ap_core.equivalent_hard_penalty(S))
    return S, factors


@pytest.mark.parametrize("with_factors", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_messages_match_float64_to_float32_tolerance(backend, with_factors):
    """alpha, rho (and gamma / omega) after 40 iterations: float32 within 1e-5 of the scale of S.

    float32 rounds each operation to ~6e-8 relative; after 40 damped iterations of sums
    over 60 terms the gap measured 7.2e-7 of max|s| without constraints and 3.4e-6 with
    the 8 hard pairs (both back-ends). Column sums rounded to float16 (a precision loss of
    the accumulator) exceed the 1e-5 bound, as does any formula difference.
    """
    S, factors = _small_problem()
    kw = dict(max_iter=40, convergence_iter=None, backend=backend, factors=factors if with_factors else None,
              warn=False)
    r64 = ap_core.affinity_propagation(S, **kw)
    r32 = ap_core.affinity_propagation(S, dtype="float32", **kw)
    assert r32.availability.dtype == r32.responsibility.dtype == np.float32
    assert r64.availability.dtype == np.float64
    scale = np.abs(S).max()
    for a32, a64 in [(r32.availability, r64.availability), (r32.responsibility, r64.responsibility)]:
        assert np.abs(a32.astype(np.float64) - a64).max() <= 1e-5 * scale
    if with_factors:
        assert r32.pair_messages.dtype == np.float32
        np.testing.assert_allclose(r32.pair_messages, r64.pair_messages, rtol=0, atol=1e-5 * scale)
    np.testing.assert_array_equal(r32.exemplars, r64.exemplars)


@pytest.mark.parametrize("with_factors", [False, True])
def test_float32_numba_and_numpy_paths_agree(with_factors):
    """Two independent float32 routes (fused kernel vs numpy passes) give the same messages."""
    S, factors = _small_problem()
    kw = dict(max_iter=40, convergence_iter=None, factors=factors if with_factors else None, warn=False,
              dtype="float32")
    a = ap_core.affinity_propagation(S, backend="numba", **kw)
    b = ap_core.affinity_propagation(S, backend="numpy", **kw)
    scale = np.abs(S).max()
    np.testing.assert_allclose(a.availability, b.availability, rtol=0, atol=1e-5 * scale)
    np.testing.assert_allclose(a.responsibility, b.responsibility, rtol=0, atol=1e-5 * scale)


def test_numba_kernel_runs_in_float32():
    """The compiled iterations (``run_iterations``, which calls the fused kernel) are specialised for
    float32 messages (no silent float64 path)."""
    from ccbench_plugins.affinity import _kernels

    S, _ = _small_problem()
    ap_core.affinity_propagation(S, max_iter=3, convergence_iter=None, backend="numba", dtype="float32", warn=False)
    signatures = _kernels.run_iterations.signatures
    assert any(str(sig[0].dtype) == str(sig[1].dtype) == str(sig[2].dtype) == "float32" for sig in signatures)


# -- tie noise and validation -----------------------------------------------------------------


def test_tie_noise_survives_rounding_to_float32():
    """Noise at float64's eps vanishes in float32; at float32's eps it separates duplicates."""
    X = np.repeat(np.arange(20.0)[:, None], 2, axis=0)  # every point twice: tied rows
    for precision, expect_ties in [("float64", True), ("float32", False)]:
        S = -((X - X.T) ** 2)
        ap_core.add_tie_noise(S, np.random.default_rng(0), precision=precision)
        S32 = S.astype(np.float32)
        tied = np.mean(S32[0::2, 1:] == S32[1::2, 1:])  # row 2k vs its duplicate 2k+1
        assert (tied > 0.9) if expect_ties else (tied < 0.5), (precision, tied)


def test_default_dtype_is_float64_and_unchanged():
    """dtype defaults to float64 and matches an explicit dtype='float64' bit for bit."""
    X, _ = _blobs()
    est = make_method("ap", random_state=0, max_iter=30, convergence_iter=None)
    assert est.get_params()["dtype"] == "float64"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = est.fit(X).labels_.copy()
        b = make_method("ap", random_state=0, max_iter=30, convergence_iter=None, dtype="float64").fit(X).labels_
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", ["ap", "scssap", "scssap_ml", "ssap_g"])
@pytest.mark.parametrize("bad", ["float16", "double", np.float32, None])
def test_bad_dtype_is_refused_by_name(method, bad):
    X = np.arange(12.0).reshape(6, 2)
    cons = Constraints(must_link=[[0, 1]], n_samples=6)
    with pytest.raises(ValueError, match=r"parameter 'dtype' must be one of 'float32', 'float64', got"):
        make_method(method, dtype=bad).fit(X, constraints=cons)


def test_memory_check_counts_float32_messages_at_half_the_bytes(monkeypatch):
    """The up-front refusal uses the message dtype: 4 N x N arrays of 8 or 4 bytes."""
    import ccbench.base
    from ccbench.base import InsufficientMemoryError

    X = np.random.default_rng(0).normal(size=(100, 2))
    monkeypatch.setattr(ccbench.base, "available_memory", lambda: 20 * 100 * 100)  # 20 N^2 bytes
    with pytest.raises(InsufficientMemoryError, match="dtype='float32'"):
        ap_core.ap_similarity(X, None, np.random.default_rng(0), "float64")  # 32 N^2
    S, _ = ap_core.ap_similarity(X, None, np.random.default_rng(0), "float32")  # 16 N^2
    assert S.dtype == np.float32
