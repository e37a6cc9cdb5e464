"""Synthetic data sets defined by the papers (a data-set plugin).

``scap_gaussian_similarity``
    Leone, Sumedha & Weigt (2008), section 3.1: N points in q equal clusters;
    each pair's similarity is drawn independently, from N(alpha, 1) inside a
    cluster and from N(0, 1) between clusters. There are no coordinates: ``X``
    *is* the symmetric N x N similarity matrix (diagonal 0), to be used with a
    method that accepts precomputed similarities (``scap`` with
    ``similarity="precomputed"``). ``meta["affinity"] = "precomputed"`` says so.
    ``divide_by_n=True`` divides S by N, so a penalty p on it acts as p * N on the
    paper's S (Fig. 4 rescales p by N): ``method.p`` is then the paper's p / N.

``scap_hierarchical_similarity``
    The same paper, section 3.2 / Fig. 7: N points in q0 superclusters of q1
    clusters each; pair similarities from N(alpha1, 1) inside a cluster,
    N(alpha0, 1) inside a supercluster but across clusters, N(0, 1) across
    superclusters. ``level`` chooses which partition is ``y`` (the truth scored
    against); it does not change S, so both levels of one ``seed`` are one instance.

``scap_2d_clusters``
    The same paper, section 4.1 / Figs. 10-13: points drawn uniformly in equal,
    vertically elongated ellipses in the plane (semi-axes 0.5 and 1.5), two side by
    side ``gap`` apart at their closest (data set 1; default 0.1) and, with ``n_clusters=3``,
    a third one above them (data set 2). The paper shows its data only as a
    picture; these shapes are ours (see the experiment configs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccbench.hookspecs import hookimpl
from ccbench.registry import DatasetSpec

if TYPE_CHECKING:
    from ccbench.constraints import Constraints
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
          divide_by_n: bool = False, missing=None, data_dir=None, manifest=None) -> Dataset:
    # explicit options, so a mistyped key is refused before a sweep starts (ccbench.validate);
    # there are no files and no missing values: the last three do not apply
    ds = gaussian_similarity_clusters(n_samples=n_samples, n_clusters=n_clusters, alpha=alpha, seed=seed)
    if divide_by_n:
        ds.X /= ds.X.shape[0]
        ds.meta["divide_by_n"] = True
    return ds


def hierarchical_similarity_clusters(n_samples: int = 180, n_superclusters: int = 3,
                                     n_clusters_per_supercluster: int = 3, alpha0: float = 3.0,
                                     alpha1: float = 6.0, level: str = "cluster", seed: int = 0) -> Dataset:
    """Draw one instance of the SCAP paper's section 3.2 two-level data (Figs. 7-8).

    Parameters
    ----------
    n_samples : int, default=180
        N; a multiple of q0 * q1 (equal clusters).
    n_superclusters : int, default=3
        q0.
    n_clusters_per_supercluster : int, default=3
        q1.
    alpha0 : float, default=3.0
        Mean similarity of two points in one supercluster but different clusters.
    alpha1 : float, default=6.0
        Mean similarity of two points in one cluster (0 < alpha0 < alpha1).
    level : {"cluster", "supercluster"}, default="cluster"
        Which partition is returned as ``y`` (q0 * q1 or q0 classes); S is the same.
    seed : int, default=0
        Seed of this instance.
    """
    import numpy as np

    from ccbench.datasets import Dataset

    n, q0, q1 = int(n_samples), int(n_superclusters), int(n_clusters_per_supercluster)
    if q0 < 1 or q1 < 1 or n < 2 or n % (q0 * q1):
        raise ValueError(f"n_samples={n} must be >= 2 and a multiple of n_superclusters * "
                         f"n_clusters_per_supercluster = {q0 * q1} (the paper's clusters have equal size)")
    if level not in ("cluster", "supercluster"):
        raise ValueError(f"level must be 'cluster' or 'supercluster', got {level!r}")
    rng = np.random.default_rng(seed)
    cluster = np.repeat(np.arange(q0 * q1), n // (q0 * q1))
    supercluster = cluster // q1
    same_c = cluster[:, None] == cluster[None, :]
    same_s = supercluster[:, None] == supercluster[None, :]
    upper = rng.standard_normal((n, n)) + alpha1 * same_c + alpha0 * (same_s & ~same_c)
    S = np.triu(upper, k=1)
    S = S + S.T
    y = cluster if level == "cluster" else supercluster
    meta = {"affinity": "precomputed", "alpha0": float(alpha0), "alpha1": float(alpha1), "level": level,
            "seed": int(seed), "source": "Leone et al. 2008, section 3.2"}
    return Dataset("scap_hierarchical_similarity", S, y, int(y.max()) + 1, meta)


def _load_hierarchical(*, n_samples: int = 180, n_superclusters: int = 3, n_clusters_per_supercluster: int = 3,
                       alpha0: float = 3.0, alpha1: float = 6.0, level: str = "cluster", seed: int = 0,
                       missing=None, data_dir=None, manifest=None) -> Dataset:
    return hierarchical_similarity_clusters(n_samples, n_superclusters, n_clusters_per_supercluster,
                                            alpha0, alpha1, level, seed)


def two_d_clusters(n_per_cluster: int = 300, n_clusters: int = 2, gap: float = 0.1, seed: int = 0) -> Dataset:
    """Points in the plane for the SCAP paper's section 4.1 (Figs. 10-13).

    Each cluster is ``n_per_cluster`` points uniform in an ellipse with horizontal
    semi-axis 0.5 and vertical semi-axis 1.5. Clusters 0 and 1 stand side by side,
    ``gap`` apart at their closest (centres at x = -/+(0.5 + gap / 2), y = 0);
    cluster 2 (``n_clusters=3``) stands above them, centred at x = 0, y = 3 + gap.

    Parameters
    ----------
    n_per_cluster : int, default=300
        Points per cluster (the paper: 300 for data set 1, 200 for data set 2).
    n_clusters : {2, 3}, default=2
        Data set 1 (two clusters) or data set 2 (a third, unlabeled one above).
    gap : float, default=0.1
        Distance between the two lower ellipses at their closest.
    seed : int, default=0
        Seed of the points.
    """
    import numpy as np

    from ccbench.datasets import Dataset

    m, k = int(n_per_cluster), int(n_clusters)
    if k not in (2, 3) or m < 1 or gap < 0:
        raise ValueError(f"need n_clusters in (2, 3), n_per_cluster >= 1 and gap >= 0; "
                         f"got {k}, {m}, {gap}")
    rng = np.random.default_rng(seed)
    centres = np.array([[-(0.5 + gap / 2), 0.0], [0.5 + gap / 2, 0.0], [0.0, 3.0 + gap]])[:k]
    radius = np.sqrt(rng.uniform(size=(k, m)))  # uniform in the unit disc, then stretched
    angle = rng.uniform(0.0, 2 * np.pi, size=(k, m))
    disc = np.stack([radius * np.cos(angle) * 0.5, radius * np.sin(angle) * 1.5], axis=-1)
    X = (disc + centres[:, None, :]).reshape(k * m, 2)
    y = np.repeat(np.arange(k), m)
    meta = {"gap": float(gap), "seed": int(seed), "source": "Leone et al. 2008, section 4.1 (shapes ours)"}
    return Dataset("scap_2d_clusters", X, y, k, meta)


def _load_2d(*, n_per_cluster: int = 300, n_clusters: int = 2, gap: float = 0.1, seed: int = 0,
             missing=None, data_dir=None, manifest=None) -> Dataset:
    return two_d_clusters(n_per_cluster, n_clusters, gap, seed)


def labeled_classes(y, per_class, classes, *, rng) -> "Constraints":
    """Reveal ``per_class`` random labels of each class in ``classes`` only (-1 elsewhere).

    The SCAP paper's data set 2 (section 4.1, Figs. 12-13): trainers for the two lower
    clusters, none for the third. Draws as ``labeled_subsets`` does, class by class in
    the given order; returns the partial labels with every pair they imply.
    """
    import numpy as np

    from ccbench.constraints import Constraints

    y = np.asarray(y)
    partial = np.full(len(y), -1, dtype=np.intp)
    for c in [int(c) for c in classes]:
        members = np.flatnonzero(y == c)
        if not 0 <= int(per_class) <= len(members):
            raise ValueError(f"per_class={per_class} but class {c} has {len(members)} points")
        partial[rng.choice(members, size=int(per_class), replace=False)] = c
    return Constraints.from_labels(partial, n_samples=len(y))


@hookimpl
def ccbench_constraint_schemes():
    from ccbench.registry import SchemeSpec

    return [SchemeSpec("labeled_classes", labeled_classes,
                       "per_class labeled points in each of the listed classes, none in the others")]


@hookimpl
def ccbench_datasets():
    return [
        DatasetSpec(
            "scap_gaussian_similarity", _load,
            "SCAP sec. 3.1: Gaussian similarities, N(alpha,1) within / N(0,1) between clusters (X is S)",
            n_samples=100, n_features=100, n_classes=5, source="generated",
            # every option defines the generated data except where files would live
            not_in_seed=("preprocess", "data_dir", "manifest"),
        ),
        DatasetSpec(
            "scap_hierarchical_similarity", _load_hierarchical,
            "SCAP sec. 3.2: two-level Gaussian similarities, N(alpha1,1) in a cluster / N(alpha0,1) in a "
            "supercluster / N(0,1) across (X is S)",
            n_samples=180, n_features=180, n_classes=9, source="generated",
            # ``level`` only chooses the truth: both levels of a seed share trials (same fits)
            not_in_seed=("preprocess", "data_dir", "manifest", "level"),
        ),
        DatasetSpec(
            "scap_2d_clusters", _load_2d,
            "SCAP sec. 4.1: 2 (or 3) close elongated uniform clusters in the plane",
            n_samples=600, n_features=2, n_classes=2, source="generated",
            not_in_seed=("preprocess", "data_dir", "manifest"),
        ),
    ]
