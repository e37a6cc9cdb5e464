"""``ap`` with ``similarity="precomputed"`` (issue 41: SCAP paper Fig. 6 runs AP on the
paper's random similarity matrices, dataset ``scap_gaussian_similarity``)."""

import numpy as np
import pytest

from ccbench import make_method
from ccbench.similarity import negative_sq_euclidean


def _blobs():
    rng = np.random.default_rng(0)
    return np.concatenate([c + 0.5 * rng.normal(size=(15, 2)) for c in ([0, 0], [5, 0], [0, 5])])


@pytest.mark.parametrize("assignment", ["messages", "similarity"])
@pytest.mark.parametrize("preference", [None, -20.0])
def test_precomputed_equals_features(assignment, preference):
    X = _blobs()
    common = dict(preference=preference, assignment=assignment, backend="numpy", random_state=0)
    on_X = make_method("ap", **common).fit(X)
    on_S = make_method("ap", similarity="precomputed", **common).fit(negative_sq_euclidean(X))
    np.testing.assert_array_equal(on_S.labels_, on_X.labels_)
    np.testing.assert_array_equal(on_S.cluster_centers_indices_, on_X.cluster_centers_indices_)
    assert on_S.preference_ == on_X.preference_
    assert on_S.n_iter_ == on_X.n_iter_


def test_precomputed_n_clusters_search_equals_features():
    X = _blobs()
    on_X = make_method("ap", n_clusters=3, backend="numpy", random_state=0).fit(X)
    on_S = make_method("ap", n_clusters=3, similarity="precomputed", backend="numpy",
                       random_state=0).fit(negative_sq_euclidean(X))
    np.testing.assert_array_equal(on_S.labels_, on_X.labels_)
    assert on_S.preference_ == on_X.preference_ and on_S.n_preference_fits_ == on_X.n_preference_fits_


def test_precomputed_ignores_the_diagonal():
    S = negative_sq_euclidean(_blobs())
    S2 = S.copy()
    np.fill_diagonal(S2, 123.0)
    a = make_method("ap", similarity="precomputed", backend="numpy", random_state=0).fit(S)
    b = make_method("ap", similarity="precomputed", backend="numpy", random_state=0).fit(S2)
    np.testing.assert_array_equal(a.labels_, b.labels_)


def test_precomputed_on_scap_data():
    from ccbench_plugins.datasets.synthetic import gaussian_similarity_clusters

    ds = gaussian_similarity_clusters(n_samples=50, alpha=6.0, seed=0)
    est = make_method("ap", similarity="precomputed", n_clusters=5, random_state=0).fit(ds.X)
    assert len(np.unique(est.labels_)) == 5


@pytest.mark.parametrize("n_clusters", [None, 2])
def test_precomputed_refuses_a_non_square_matrix(n_clusters):
    X = _blobs()
    est = make_method("ap", similarity="precomputed", n_clusters=n_clusters)
    with pytest.raises(ValueError, match=r"similarity='precomputed' needs a square \(N, N\) similarity matrix, got shape \(45, 2\)"):
        est.fit(X)


def test_unknown_similarity_is_refused():
    with pytest.raises(ValueError, match="similarity"):
        make_method("ap", similarity="cosine").fit(_blobs())
