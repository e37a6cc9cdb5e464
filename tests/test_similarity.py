import numpy as np
import pytest
from scipy.spatial.distance import cdist

from ccbench import similarity


def test_negative_sq_euclidean_matches_cdist():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    S = similarity.negative_sq_euclidean(X)
    np.testing.assert_allclose(S, -cdist(X, X, "sqeuclidean"), atol=1e-10)
    assert np.all(S <= 0) and np.all(np.diag(S) == 0)


def test_diagonal_metric_weights_features():
    X = np.array([[0.0, 0.0], [1.0, 2.0]])
    S = similarity.negative_sq_euclidean(X, metric_diag=[3.0, 0.5])
    assert S[0, 1] == pytest.approx(-(3 * 1 + 0.5 * 4))
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(20, 3))
    S = similarity.negative_sq_euclidean(Z, metric_diag=[0.3, 1.7, 2.0])
    assert np.all(np.diag(S) == 0.0) and np.allclose(S, S.T)


def test_median_preference_ignores_the_diagonal():
    S = -np.array([[0, 1, 4], [1, 0, 9], [4, 9, 0]], dtype=float)
    assert similarity.median_preference(S) == -4.0
    S2 = similarity.negative_sq_euclidean(np.array([[0.0], [1.0], [3.0]]))
    S2[[0, 1, 2], [0, 1, 2]] = 123.0  # the diagonal (where a preference goes) is ignored
    assert similarity.median_preference(S2) == -4.0


def test_negative_sq_euclidean_is_translation_invariant():
    # The Gram identity on raw coordinates loses ~eps * ||x||^2 = 2e-4 on iris + 1e6,
    # more than the smallest iris distances; centring first keeps it to rounding.
    from sklearn.datasets import load_iris

    far = load_iris().data + 1e6
    exact = -cdist(far, far, "sqeuclidean")  # differences first: no cancellation
    tol = 1e-12 * np.abs(exact).max()
    np.testing.assert_allclose(similarity.negative_sq_euclidean(far), exact, rtol=1e-12, atol=tol)
    rows = similarity.negative_sq_euclidean(far[:5], far)
    np.testing.assert_allclose(rows, exact[:5], rtol=1e-12, atol=tol)

