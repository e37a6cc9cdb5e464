"""PCCC's synthetic collection 2 (``plugins/datasets/pccc_col2.py``): 15 sets of 300 standardised blobs.

PCCC's own files of these sets were not available (shared/pccc holds collection 1 only), so each set is
checked against PCCC-Data's definition by a second route (scikit-learn's StandardScaler, not ccbench's
``preprocess_features``) and against its invariants.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.preprocessing import StandardScaler

from ccbench.datasets import load_dataset
from ccbench.registry import get_dataset_spec, list_datasets
from ccbench_plugins.datasets import pccc_col2

CONF = Path(__file__).resolve().parents[1] / "conf" / "dataset"


@pytest.mark.parametrize("k, s", pccc_col2.PARAMETERS)
def test_each_set_is_pcccs_standardised_blobs(k, s):
    ds = load_dataset(f"pccc_blobs_k{k}_s{s}")
    X, y = make_blobs(n_samples=300, n_features=2, centers=k, cluster_std=s, center_box=(-20, 20), random_state=24)
    np.testing.assert_allclose(ds.X, StandardScaler().fit_transform(X), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(ds.y, y)
    assert ds.X.shape == (300, 2) and ds.n_classes == k
    assert np.bincount(ds.y).tolist() == [300 // k] * k  # k clusters of equal size
    np.testing.assert_allclose(ds.X.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(ds.X.var(axis=0), 1.0, rtol=1e-12)


def test_the_spread_grows_with_the_standard_deviation():
    # in the raw blobs, a cluster's spread is s: the mean within-cluster std at s = 5 is about 5 x that at s = 1
    def within(s):
        X, y = make_blobs(n_samples=300, n_features=2, centers=10, cluster_std=s, center_box=(-20, 20),
                          random_state=24)
        return np.mean([X[y == c].std(axis=0).mean() for c in range(10)])

    assert 4.0 < within(5) / within(1) < 6.0
    # and after standardising, the larger s leaves the clusters less apart: the class means' spread shrinks
    tight, wide = load_dataset("pccc_blobs_k10_s1"), load_dataset("pccc_blobs_k10_s5")
    spread = [np.var([d.X[d.y == c].mean(axis=0) for c in range(10)], axis=0).sum() for d in (tight, wide)]
    assert spread[0] > spread[1]


def test_the_fifteen_are_registered_with_a_config_each():
    names = {s.name for s in list_datasets() if s.name.startswith("pccc_blobs_")}
    assert names == set(pccc_col2.COLLECTION_2) and len(names) == 15
    assert {p.stem for p in CONF.glob("pccc_blobs_*.yaml")} == names
    spec = get_dataset_spec("pccc_blobs_k50_s3")
    assert (spec.n_samples, spec.n_features, spec.n_classes, spec.source) == (300, 2, 50, "generated")
    with pytest.raises(ValueError, match="k in \\(10, 20, 50\\) and s in 1..5"):
        pccc_col2.collection_2_blobs(30, 1)
