"""Synthetic data sets defined by the papers (a data-set plugin).

``scap_gaussian_similarity``
    Leone, Sumedha & Weigt (2008), section 3.1: N points in q equal clusters;
    each pair's similarity is drawn independently, from N(alpha, 1) inside a
    cluster and from N(0, 1) between clusters. There are no coordinates: ``X``
    *is* the symmetric N x N similarity matrix (diagonal 0), to be used with a
    method that accepts precomputed similarities (``scap`` with
    ``similarity="precomputed"``). ``meta["affinity"] = "precomputed"`` says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccbench.hookspecs import hookimpl
from ccbench.registry import DatasetSpec

if TYPE_CHECKING:
    from ccbench.datasets import Dataset


def gaussian_similarity_clusters(n_samples: int = 100, n_clusters: int = 5, alpha: float = 3.0,
                                 seed: int = 0) -> Dataset:
    """Draw one instance of the SCAP paper's section 3.1 artificial data.

    Parameters
    ----------
    n_samples : int, default=100
        N; must be a multiple of ``n_clusters`` (equal cluster sizes, as the paper).
    n_clusters : int, default=5
        q.
    alpha : float, default=3.0
        Mean intra-cluster similarity (separability; the paper shows 1, 3 and larger).
    seed : int, default=0
        Seed of this instance (the paper averages over many instances).
    """
    import numpy as np  # here, not at the top: listing plugins must not import numpy

    from ccbench.datasets import Dataset

    n_samples, n_clusters = int(n_samples), int(n_clusters)
    if n_clusters < 1 or n_samples < 2 or n_samples % n_clusters:
        raise ValueError(
            f"n_samples={n_samples} must be >= 2 and a multiple of n_clusters={n_clusters} "
            f"(the paper's clusters have equal size)"
        )
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_clusters), n_samples // n_clusters)
    upper = rng.standard_normal((n_samples, n_samples)) + alpha * (y[:, None] == y[None, :])
    S = np.triu(upper, k=1)
    S = S + S.T
    meta = {"affinity": "precomputed", "alpha": float(alpha), "seed": int(seed),
            "source": "Leone et al. 2008, section 3.1"}
    return Dataset("scap_gaussian_similarity", S, y, n_clusters, meta)


def _load(*, n_samples: int = 100, n_clusters: int = 5, alpha: float = 3.0, seed: int = 0,
          missing=None, data_dir=None, manifest=None) -> Dataset:
    # explicit options, so a mistyped key is refused before a sweep starts (ccbench.validate);
    # there are no files and no missing values: the last three do not apply
    return gaussian_similarity_clusters(n_samples=n_samples, n_clusters=n_clusters, alpha=alpha, seed=seed)


@hookimpl
def ccbench_datasets():
    return [
        DatasetSpec(
            "scap_gaussian_similarity", _load,
            "SCAP sec. 3.1: Gaussian similarities, N(alpha,1) within / N(0,1) between clusters (X is S)",
            n_samples=100, n_features=100, n_classes=5, source="generated",
            # every option defines the generated data except where files would live
            not_in_seed=("preprocess", "data_dir", "manifest"),
        )
    ]
