"""Data sets: scikit-learn's bundled copies and the raw UCI files of MANIFEST.tsv.

``iris``, ``wine``, ``breast_cancer`` and ``digits`` are scikit-learn's copies (no
files needed). The 24 UCI sets are read from ``<data_dir>/<name>/<file>``, downloaded
with pooch from the manifest's ``uci_url`` when absent, and always checked
against the manifest's sha256 before parsing; the parsers live in
:mod:`ccbench.data._uci`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect

import numpy as np

from .data._uci import (
    MISSING_OPTIONS,
    UCI_SETS,
    DataDownloadError,
    DataIntegrityError,
    DataParseError,
    load_uci,
    read_manifest,
)
from .data._tables import CATEGORICAL_OPTIONS, load_csv, load_openml
from .data._files import fetch_and_verify, resolve_data_dir
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
    "CATEGORICAL_OPTIONS",
    "suites",
    "expand_suites",
    "fetch_dataset",
]

PREPROCESS_OPTIONS = ("none", "minmax_1_2", "standardize")


def suites() -> dict[str, tuple[str, ...]]:
    """Named suites of data sets, ``{name: members}``: ``dataset=<suite>`` in a sweep runs one job per member
    (:func:`expand_suites`). Registered through the hook ``ccbench_dataset_suites`` like any plugin's:
    ``uci_all`` built in, ``board_all`` by the KEEL data-set plugin."""
    from .registry import dataset_suites

    return dataset_suites()


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
    def load(*, missing="drop", nominal="onehot", data_dir=None, manifest=None):
        # No missing values, no nominal attributes and no files: the options do not apply.
        from sklearn import datasets as skd

        bunch = getattr(skd, f"load_{name}")()
        classes, y = np.unique(bunch.target, return_inverse=True)
        return Dataset(name, np.asarray(bunch.data, dtype=np.float64), y.astype(np.intp), len(classes),
                       {"source": f"sklearn.datasets.load_{name}", "classes": classes.tolist()})

    return load


def _uci_loader(name):
    def load(*, missing="drop", nominal="onehot", data_dir=None, manifest=None):
        X, y, classes, meta = load_uci(name, missing=missing, nominal=nominal, data_dir=data_dir,
                                       manifest=manifest)
        return Dataset(name, X, y, len(classes), meta)

    functools.update_wrapper(load, UCI_SETS[name].parse, assigned=("__doc__",), updated=())
    del load.__wrapped__  # the keys a config may set are the loader's (missing, nominal, ...), not the parser's
    return load


def _table_loader(name, read):
    def load(**options):
        X, y, classes, meta = read(**options)
        return Dataset(name, X, y, len(classes), meta)

    load.__signature__ = inspect.signature(read)  # the options ccbench.running.validate checks keys against
    functools.update_wrapper(load, read, assigned=("__doc__",), updated=())
    return load


def builtin_dataset_specs() -> list[DatasetSpec]:
    """The four scikit-learn copies, ``csv``, ``openml`` and every UCI set of the manifest.

    ``n_samples`` is the size with the default ``missing="drop"``.
    """
    specs = [
        DatasetSpec("iris", _sklearn_loader("iris"), "Fisher's iris (scikit-learn copy)", 150, 4, 3, "sklearn",
                    _NOT_IN_SEED),
        DatasetSpec("wine", _sklearn_loader("wine"), "UCI wine (scikit-learn copy)", 178, 13, 3, "sklearn",
                    _NOT_IN_SEED),
        DatasetSpec("breast_cancer", _sklearn_loader("breast_cancer"), "UCI WDBC (scikit-learn copy)",
                    569, 30, 2, "sklearn", _NOT_IN_SEED),
        # the image set scikit-learn ships: the SRCP paper's image experiments (Scene, Corel)
        # cannot be fetched here, so srcp_fig3_digits runs their protocol on it
        DatasetSpec("digits", _sklearn_loader("digits"), "handwritten digits, 8 x 8 images (scikit-learn copy "
                    "of the UCI optdigits test set)", 1797, 64, 10, "sklearn", _NOT_IN_SEED),
    ]
    specs += [
        # where the file lives and its checksum do not change the data: the same CSV on a
        # laptop and a cluster node gets the same trial seeds
        DatasetSpec("csv", _table_loader("csv", load_csv),
                    "a CSV file: dataset.path=<file> dataset.target=<label column name or position>",
                    source="file", not_in_seed=(*_NOT_IN_SEED, "path", "sha256")),
        DatasetSpec("openml", _table_loader("openml", load_openml),
                    "an OpenML data set by id: dataset.data_id=<id> (local cache, else downloaded)",
                    source="OpenML", not_in_seed=_NOT_IN_SEED),
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
    nominal : {"onehot", "codes"}, default="onehot" (UCI sets; passed through ``**options``)
        Unordered attributes the set's parser knows (promoters' and splice's bases, credit's
        A4-A7/A13, sick's referral source, soybean's unordered multi-valued attributes) as one 0/1
        column per value, or as the integer codes; per set: ``docs/harness.md``, "Nominal attributes".
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


def expand_suites(overrides: list[str]) -> list[str]:
    """Replace a suite among the ``dataset=`` choices of sweep overrides by its members.

    ``dataset=uci_all`` becomes ``dataset=balance,breast_cancer_wisconsin,...`` (the
    24 UCI sets of the manifest, one job each), ``dataset=iris,uci_all`` adds iris; ``board_all``
    (the reference board's distinct sets) comes from the KEEL data-set plugin (:func:`suites`);
    members keep their order and appear once. Other overrides pass unchanged.
    """
    out = []
    for arg in overrides:
        key, sep, value = arg.partition("=")
        choices = [v.strip() for v in value.split(",")] if sep and key.strip() == "dataset" else []
        named = suites() if choices else {}
        if not any(c in named for c in choices):
            out.append(arg)
            continue
        names = [n for c in choices for n in (named.get(c) or (c,))]
        out.append(f"{key}={','.join(dict.fromkeys(names))}")
    return out


def fetch_dataset(name: str, *, preprocess: str = "none", missing: str = "drop", data_dir=None, manifest=None,
                  **options) -> list[tuple[str, str | None]]:
    """Make data set ``name`` available here and verify it, ahead of a run (``ccbench fetch``).

    Returns one ``(what, problem or None)`` per file or source checked, so every
    file is reported even when an earlier one failed:

    - a UCI set: each of its manifest files under the data directory, downloaded
      if absent, its sha256 re-hashed and compared with the manifest;
    - ``csv``: the file exists, with ``dataset.sha256`` has that hash, and reads as a data set;
    - ``openml``: the set is read through the local cache, downloading into it
      when absent (scikit-learn checks OpenML's md5);
    - scikit-learn's copies: nothing to fetch; any other (generated, plugin) set is loaded once.
    """
    spec = get_dataset_spec(name)
    if name in UCI_SETS:
        root = resolve_data_dir(data_dir)
        report = []
        for entry in read_manifest(manifest)[name]:
            where = f"{root / entry.name / entry.file}"
            try:
                _, downloaded = fetch_and_verify(entry, root)
                report.append((f"{where} (sha256 ok{', downloaded' if downloaded else ''})", None))
            except (DataIntegrityError, DataDownloadError, OSError) as exc:
                report.append((where, str(exc)))
        return report
    if spec.source == "sklearn":
        return [(f"{name}: bundled with scikit-learn, nothing to fetch", None)]
    what = {"csv": f"{options.get('path')}", "openml": f"OpenML data set {options.get('data_id')}"}.get(name, name)
    try:
        if name == "csv":
            from .data._tables import check_csv

            file = check_csv(options.get("path"), options.get("sha256"), data_dir)
            note = "sha256 ok" if options.get("sha256") else "dataset.sha256=<hex> would pin it"
            what = f"{file} ({note})"  # and read, as a run would: an empty or one-class file is no data set
        ds = load_dataset(name, preprocess=preprocess, missing=missing, data_dir=data_dir, manifest=manifest,
                          **options)
    except Exception as exc:  # noqa: BLE001 - reported per data set, the others are still checked
        return [(what, f"{type(exc).__name__}: {exc}")]
    where = f" in {ds.meta['files'][0]}" if ds.meta.get("files") and name != "csv" else ""
    return [(f"{what}: {ds.n_samples} x {ds.X.shape[1]}, {ds.n_classes} classes{where}", None)]
