"""Data sets: scikit-learn's bundled copies and the raw UCI files of MANIFEST.tsv.

``iris``, ``wine`` and ``breast_cancer`` are scikit-learn's copies (no files
needed). The 24 UCI sets are read from ``<data_dir>/<name>/<file>``, downloaded
with pooch from the manifest's ``uci_url`` when absent, and always checked
against the manifest's sha256 before parsing; the parsers live in
:mod:`ccbench._uci`.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ._uci import (
    MISSING_OPTIONS,
    UCI_SETS,
    DataDownloadError,
    DataIntegrityError,
    DataParseError,
    load_uci,
    read_manifest,
)
from .registry import DatasetSpec, get_dataset_spec

__all__ = [
    "Dataset",
    "load_dataset",
    "builtin_dataset_specs",
    "preprocess_features",
    "read_manifest",
    "DataIntegrityError",
    "DataParseError",
    "DataDownloadError",
    "PREPROCESS_OPTIONS",
    "MISSING_OPTIONS",
]

PREPROCESS_OPTIONS = ("none", "minmax_1_2", "standardize")
# Options that do not change which points or labels a set has (see DatasetSpec.not_in_seed).
_NOT_IN_SEED = ("preprocess", "data_dir", "manifest")


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


def _sklearn_loader(name):
    def load(*, missing="drop", data_dir=None, manifest=None):
        # No missing values and no files: the options do not apply.
        from sklearn import datasets as skd

        bunch = getattr(skd, f"load_{name}")()
        classes, y = np.unique(bunch.target, return_inverse=True)
        return Dataset(name, np.asarray(bunch.data, dtype=np.float64), y.astype(np.intp), len(classes),
                       {"source": f"sklearn.datasets.load_{name}", "classes": classes.tolist()})

    return load


def _uci_loader(name):
    def load(*, missing="drop", data_dir=None, manifest=None):
        X, y, classes, meta = load_uci(name, missing=missing, data_dir=data_dir, manifest=manifest)
        return Dataset(name, X, y, len(classes), meta)

    functools.update_wrapper(load, UCI_SETS[name].parse, assigned=("__doc__",), updated=())
    return load


def builtin_dataset_specs() -> list[DatasetSpec]:
    """The three scikit-learn copies and every UCI set of the manifest.

    ``n_samples`` is the size with the default ``missing="drop"``.
    """
    specs = [
        DatasetSpec("iris", _sklearn_loader("iris"), "Fisher's iris (scikit-learn copy)", 150, 4, 3, "sklearn",
                    _NOT_IN_SEED),
        DatasetSpec("wine", _sklearn_loader("wine"), "UCI wine (scikit-learn copy)", 178, 13, 3, "sklearn",
                    _NOT_IN_SEED),
        DatasetSpec("breast_cancer", _sklearn_loader("breast_cancer"), "UCI WDBC (scikit-learn copy)",
                    569, 30, 2, "sklearn", _NOT_IN_SEED),
    ]
    for name, uci in UCI_SETS.items():
        summary = uci.summary
        if uci.n_samples_impute is not None:
            summary += f" ({uci.n_samples} rows with missing='drop', {uci.n_samples_impute} with 'impute')"
        specs.append(DatasetSpec(name, _uci_loader(name), summary, uci.n_samples, uci.n_features,
                                 uci.n_classes, "UCI", _NOT_IN_SEED))
    return specs


def _check_option(what: str, value, options: tuple[str, ...]) -> None:
    if value not in options:
        raise ValueError(f"{what}={value!r} is not an option; use one of {', '.join(options)}")


def preprocess_features(X: np.ndarray, method: str = "none") -> np.ndarray:
    """Scale each column of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    method : {"none", "minmax_1_2", "standardize"}
        ``"minmax_1_2"`` maps each column affinely onto [1, 2] (the NNC paper's
        preprocessing, Yang et al. 2015, Sec. 5.2); ``"standardize"`` gives each
        column mean 0 and (population) standard deviation 1.

    Returns
    -------
    ndarray of shape (n_samples, n_features), float64, a new array.

    Notes
    -----
    A constant column has no range to scale: it becomes all 1 under
    ``minmax_1_2`` and all 0 under ``standardize`` (never NaN).
    """
    _check_option("preprocess", method, PREPROCESS_OPTIONS)
    X = np.array(X, dtype=np.float64)
    if method == "minmax_1_2":
        low = X.min(axis=0)
        span = X.max(axis=0) - low
        return 1.0 + (X - low) / np.where(span > 0, span, 1.0)
    if method == "standardize":
        centred = X - X.mean(axis=0)
        std = centred.std(axis=0)
        return centred / np.where(std > 0, std, 1.0)
    return X


def load_dataset(name: str, *, preprocess: str = "none", missing: str = "drop", data_dir=None,
                 manifest=None, **options) -> Dataset:
    """Load a registered data set by name.

    Parameters
    ----------
    name : str
        A registered data-set name (``ccbench.registry.list_datasets()``); an
        unknown name raises :class:`~ccbench.registry.UnknownNameError` listing
        the known ones.
    preprocess : {"none", "minmax_1_2", "standardize"}, default="none"
        Feature scaling applied after loading, see :func:`preprocess_features`.
    missing : {"drop", "impute", "category"}, default="drop"
        What to do with ``'?'`` values: drop the rows, or fill numeric
        attributes with the column mean and nominal ones with the most frequent
        value, or (``"category"``) as ``"impute"`` but with ``'?'`` in a nominal
        attribute coded as one more value (voting: n=0, y=1, ?=2; the NNC paper's
        coding). Per set (rows with "drop" / "impute" and "category"):

        - breast_cancer_wisconsin: 16 '?' in Bare Nuclei (treated as numeric): 683 / 699
        - credit: '?' in 37 rows, numeric and nominal: 653 (the NNC paper) / 690
        - hepatitis: '?' in 75 rows: 80 / 155 (the NNC paper's size)
        - voting: '?' = did not vote, 203 rows: 232 / 435 (the NNC paper's size)
        - sick: the all-'?' TBG column is always dropped, then '?' in 853 rows: 1947 / 2800
        - splice: the 15 rows with ambiguity codes D/N/S/R are dropped in both
          modes (3175); pima's zeros are kept as recorded (768).

        Other sets have no missing values.
    data_dir : path-like, optional
        Where UCI files live, as ``<data_dir>/<name>/<file>``. Default: the
        ``CCBENCH_DATA_DIR`` environment variable, else ``pooch.os_cache("ccbench")``.
        Absent files are downloaded from the manifest's ``uci_url``; every file's
        sha256 is checked against the manifest before parsing (cached per path,
        mtime and size), and a mismatch raises :class:`DataIntegrityError`.
    manifest : path-like, optional
        A MANIFEST.tsv to use instead of the packaged one.
    **options
        Passed to the data set's loader. Loaders are called as
        ``loader(missing=..., data_dir=..., manifest=..., **options)``.

    Returns
    -------
    Dataset
        ``X`` float64 (n, d), ``y`` int 0..k-1; ``meta`` holds the source files,
        class names (in code order), what was dropped or imputed and the
        preprocessing.
    """
    _check_option("preprocess", preprocess, PREPROCESS_OPTIONS)
    _check_option("missing", missing, MISSING_OPTIONS)
    spec = get_dataset_spec(name)
    ds = spec.loader(missing=missing, data_dir=data_dir, manifest=manifest, **options)
    ds.X = preprocess_features(ds.X, preprocess)
    ds.meta["preprocess"] = preprocess
    return ds
