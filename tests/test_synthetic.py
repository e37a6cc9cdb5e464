import numpy as np
import pytest


def test_scap_gaussian_similarity_matches_its_definition():
    from ccbench import load_dataset

    ds = load_dataset("scap_gaussian_similarity", n_samples=300, n_clusters=3, alpha=4.0, seed=1)
    S, y = ds.X, ds.y
    assert S.shape == (300, 300) and np.allclose(S, S.T) and np.all(np.diag(S) == 0)
    same = (y[:, None] == y[None, :]) & ~np.eye(300, dtype=bool)
    diff = y[:, None] != y[None, :]
    # N(alpha, 1) within, N(0, 1) between (tens of thousands of draws each)
    assert abs(S[same].mean() - 4.0) < 0.05 and abs(S[same].std() - 1) < 0.05
    assert abs(S[diff].mean()) < 0.05 and abs(S[diff].std() - 1) < 0.05
    with pytest.raises(ValueError, match="multiple of n_clusters"):
        load_dataset("scap_gaussian_similarity", n_samples=101, n_clusters=5)


def test_divide_by_n_rescales_the_penalty_exactly_at_zero_temperature():
    from ccbench import load_dataset
    from ccbench_plugins.scap.scap import SCAP

    plain = load_dataset("scap_gaussian_similarity", n_samples=200, seed=3)
    scaled = load_dataset("scap_gaussian_similarity", n_samples=200, seed=3, divide_by_n=True)
    np.testing.assert_allclose(scaled.X * 200, plain.X)
    a = SCAP(p=0.06 * 200, similarity="precomputed", random_state=0).fit(plain.X)
    b = SCAP(p=0.06, similarity="precomputed", random_state=0).fit(scaled.X)
    np.testing.assert_array_equal(a.exemplars_, b.exemplars_)


def test_scap_hierarchical_similarity_matches_its_definition():
    from ccbench import load_dataset

    ds = load_dataset("scap_hierarchical_similarity", n_samples=360, alpha0=2.0, alpha1=5.0, seed=1)
    sup = load_dataset("scap_hierarchical_similarity", n_samples=360, alpha0=2.0, alpha1=5.0, seed=1,
                       level="supercluster")
    S, y = ds.X, ds.y
    assert np.array_equal(S, sup.X) and ds.n_classes == 9 and sup.n_classes == 3
    assert np.array_equal(sup.y, y // 3) and np.allclose(S, S.T) and np.all(np.diag(S) == 0)
    off = ~np.eye(360, dtype=bool)
    same_c = (y[:, None] == y[None, :]) & off
    same_s = (sup.y[:, None] == sup.y[None, :]) & ~(y[:, None] == y[None, :])
    across = sup.y[:, None] != sup.y[None, :]
    for mask, mean in ((same_c, 5.0), (same_s, 2.0), (across, 0.0)):
        assert abs(S[mask].mean() - mean) < 0.05 and abs(S[mask].std() - 1) < 0.05
    with pytest.raises(ValueError, match="multiple of"):
        load_dataset("scap_hierarchical_similarity", n_samples=100)
    with pytest.raises(ValueError, match="level"):
        load_dataset("scap_hierarchical_similarity", level="leaf")


def test_scap_2d_clusters_and_the_labeled_classes_scheme():
    from ccbench import load_dataset, registry

    ds = load_dataset("scap_2d_clusters", n_clusters=3, n_per_cluster=200, gap=0.1, seed=0)
    X, y = ds.X, ds.y
    assert X.shape == (600, 2) and np.bincount(y).tolist() == [200, 200, 200]
    # each cluster inside its ellipse (semi-axes 0.5, 1.5); the two lower ones 0.1 apart
    centres = np.array([[-0.55, 0.0], [0.55, 0.0], [0.0, 3.1]])
    z = (X - centres[y]) / [0.5, 1.5]
    assert np.all((z ** 2).sum(axis=1) <= 1.0 + 1e-12)
    assert X[y == 0, 0].max() < -0.05 < 0.05 < X[y == 1, 0].min()
    scheme = registry.get_scheme_spec("labeled_classes")
    cons = scheme.func(y, 10, [0, 1], rng=np.random.default_rng(0))
    labels = cons.labels
    assert np.bincount(labels[labels >= 0]).tolist() == [10, 10] and np.all(labels[y == 2] == -1)
    assert np.all(labels[labels >= 0] == y[labels >= 0])
    assert len(scheme.func(y, 0, [0, 1], rng=np.random.default_rng(0))) == 0
