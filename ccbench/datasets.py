"""Data sets: scikit-learn's bundled copies and the raw UCI files of MANIFEST.tsv."""

from __future__ import annotations

import dataclasses

import numpy as np

from .registry import DatasetSpec, get_dataset_spec

__all__ = ["Dataset", "load_dataset", "builtin_dataset_specs"]


@dataclasses.dataclass
class Dataset:
    """A labeled data set: ``X`` float64 (n, d), ``y`` int 0..k-1."""

    name: str
    X: np.ndarray
    y: np.ndarray
    n_classes: int
    meta: dict = dataclasses.field(default_factory=dict)

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]


def _encode_labels(raw) -> tuple[np.ndarray, list]:
    classes, y = np.unique(np.asarray(raw), return_inverse=True)
    return y.astype(np.intp), list(classes)


def _sklearn_loader(name):
    def load(**_options):
        from sklearn import datasets as skd

        bunch = getattr(skd, f"load_{name}")()
        y, classes = _encode_labels(bunch.target)
        return Dataset(name, np.asarray(bunch.data, dtype=np.float64), y, len(classes),
                       {"source": f"sklearn.datasets.load_{name}", "classes": classes})

    return load


def builtin_dataset_specs() -> list[DatasetSpec]:
    return [
        DatasetSpec("iris", _sklearn_loader("iris"), "Fisher's iris (scikit-learn copy)", 150, 4, 3, "sklearn"),
        DatasetSpec("wine", _sklearn_loader("wine"), "UCI wine (scikit-learn copy)", 178, 13, 3, "sklearn"),
        DatasetSpec("breast_cancer", _sklearn_loader("breast_cancer"), "UCI WDBC (scikit-learn copy)", 569, 30, 2, "sklearn"),
    ]


def load_dataset(name: str, *, preprocess: str = "none", **options) -> Dataset:
    """Load a registered data set by name."""
    ds = get_dataset_spec(name).loader(**options)
    return ds
