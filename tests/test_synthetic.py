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
