"""PCCC's synthetic collection 2 as generated data-set plugins ``pccc_blobs_k<k>_s<s>`` (entry point
``pccc_col2``).

Baumann & Hochbaum, "PCCC: the pairwise-confidence constrained clustering algorithm" (INFORMS J. Computing
2024), collection 2, as PCCC-Data's ``prepare_data_sets_of_collection_2.py`` makes it: 15 sets, one per
number of clusters k in {10, 20, 50} and cluster standard deviation s in {1, 2, 3, 4, 5}::

    X, y = sklearn.datasets.make_blobs(n_samples=300, n_features=2, centers=k, cluster_std=s,
                                       center_box=(-20, 20), random_state=24)
    X = (X - mean(X)) / std(X)          per column, population std (scikit-learn's StandardScaler)

so each set has 300 points in the plane, 300 / k per cluster (make_blobs splits n evenly), and every column
mean 0, variance 1. The standardisation is ccbench's ``preprocess_features(X, "standardize")``; the set is
fixed by ``random_state=24`` (PCCC's), so a trial's seed changes only the supervision and the method. PCCC's
own files of these sets were not available here (shared/pccc holds collection 1 only): the sets are checked
against the definition above, not against PCCC's files.
"""

from __future__ import annotations

from ccbench.hookspecs import hookimpl
from ccbench.registry import DatasetSpec

#: (k, s) of the 15 sets, in PCCC's order (k, then s)
PARAMETERS = tuple((k, s) for k in (10, 20, 50) for s in (1, 2, 3, 4, 5))
N_SAMPLES, N_FEATURES, CENTER_BOX, RANDOM_STATE = 300, 2, (-20.0, 20.0), 24


def registry_name(k: int, s: int) -> str:
    return f"pccc_blobs_k{k}_s{s}"


#: the registry names, in PCCC's order
COLLECTION_2 = tuple(registry_name(k, s) for k, s in PARAMETERS)


def collection_2_blobs(k: int, s: int):
    """(X, y) of PCCC's collection-2 set (k clusters, standard deviation s), standardised."""
    from sklearn.datasets import make_blobs

    from ccbench.datasets import preprocess_features

    if (int(k), int(s)) not in PARAMETERS:
        raise ValueError(f"PCCC's collection 2 has k in (10, 20, 50) and s in 1..5, not k={k}, s={s}")
    X, y = make_blobs(n_samples=N_SAMPLES, n_features=N_FEATURES, centers=int(k), cluster_std=float(s),
                      center_box=CENTER_BOX, random_state=RANDOM_STATE)
    return preprocess_features(X, "standardize"), y


def _loader(k: int, s: int):
    def load(*, missing=None, data_dir=None, manifest=None):
        # generated: no files and no missing values, so the three options do not apply
        import numpy as np

        from ccbench.datasets import Dataset

        X, y = collection_2_blobs(k, s)
        meta = {"source": "PCCC collection 2: make_blobs(n_samples=300, n_features=2, centers=k, cluster_std=s, "
                          "center_box=(-20, 20), random_state=24), standardised", "k": k, "cluster_std": s}
        return Dataset(registry_name(k, s), X, y.astype(np.intp), k, meta)

    load.__doc__ = f"PCCC's collection-2 blobs, k={k}, s={s} (300 points, 2 features, standardised)."
    return load


@hookimpl
def ccbench_datasets():
    return [DatasetSpec(registry_name(k, s), _loader(k, s), f"PCCC collection 2: 300 blobs, k={k}, std={s}, "
                        f"standardised", N_SAMPLES, N_FEATURES, k, "generated",
                        ("preprocess", "data_dir", "manifest"))
            for k, s in PARAMETERS]
