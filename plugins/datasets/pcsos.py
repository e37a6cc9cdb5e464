"""PC-SOS-SDP's instances: five data sets as stored and their constraint files as the scheme ``pcsos_file``.

Piccialli, Russo Russo & Sudoso, "An exact algorithm for semi-supervised minimum sum-of-squares
clustering", Computers & OR 2022 (https://doi.org/10.1016/j.cor.2022.105958), solve the must-link /
cannot-link constrained k-means problem to certified optimality on fixed instances: per data set, six
(a, b) configurations of ``a`` must-links and ``b`` cannot-links, five replicates ``r = 0..4`` each,
``constraints/<set>/ml_<a>_cl_<b>_<r>.txt.gz``: one ``ML i j`` / ``CL i j`` a line, **0-based** row
indices into ``datasets/<set>.zip``. The files are external, never part of this repository: they are
read from ``$CCBENCH_PCSOS_DIR``, else ``<parent of the data dir>/pcsos`` (``shared/pcsos/`` beside
``shared/datasets/``), whose README gives formats, provenance (GPL v3) and scaling. Every file read is
checked against that folder's ``SHA256SUMS``, itself pinned by :data:`SUMS_SHA256`; a mismatch raises
:class:`~ccbench.datasets.DataIntegrityError` naming the file.

Data sets (registry names ``pcsos_<set>``): the features are the zip's, **as stored**, the scaling the
constraint files and the certified optima were made for (``preprocess: none``): iris, wine, ecoli and
connectionist raw, glass min-max scaled to [-1, 1] per column. The files hold no labels; they come from
ccbench's own copies, whose row order is the files' (UCI order), and the loader checks the values
agree before using them, as ``shared/pcsos/README.md`` states:

========================  ==================  ====================================================
set                       labels from         values checked
========================  ==================  ====================================================
``pcsos_iris``            ``iris_uci``        equal, except rows 34 and 37 (0-based): the zip is
                                              scikit-learn's corrected copy
``pcsos_wine``            ``wine_uci``        equal
``pcsos_glass``           ``glass``           ``2 (x - min) / (max - min) - 1`` per column, to 1e-10
``pcsos_ecoli``           ``ecoli``           equal
``pcsos_connectionist``   ``keel/sonar.dat``  within 0.0005 (KEEL rounds UCI's 4 decimals to 3)
========================  ==================  ====================================================

Not registered: heart, seeds, vertebral, accent, ECG5000 and computers (data in the folder, no labelled
copy here) and gene (no data file). The harness cannot run a set without labels cheaply: a
:class:`~ccbench.datasets.Dataset` is ``y`` in 0..k-1, the true k is its class count, and
``harness.score_labels`` scores every label metric against ``y``, so an unlabelled set would need a
"labels unknown" path there and in the reports (NaN ARI rows, objective-only tables), a change to the
harness, not to a plugin. :data:`UNLABELLED` names them.

Scheme ``pcsos_file(y, dataset, configuration, replicate)``: ``configuration`` is the index 0..5 into
the set's configurations in the README's order (:data:`CONFIGURATIONS`: one grid over every set), or the
string ``"ml_<a>_cl_<b>"``. Pairs are read 0-based (:data:`INDEX_BASE`; read 1-based the files leave
their range or disagree with the labels, and the check below says so), a pair listed twice counts once
(:class:`~ccbench.constraints.Constraints` merges it), and every pair must agree with ``y``: must-link =
same class, cannot-link = different class; the first that does not is named by file and line. The set
is fixed, so ``rng`` is not used: the trials of a cell differ only in the method's seed.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from ccbench.hookspecs import hookimpl
from ccbench.registry import DatasetSpec, SchemeSpec

PCSOS_DIR_ENV = "CCBENCH_PCSOS_DIR"
#: sha256 of shared/pcsos/SHA256SUMS (commit 9e33a8f of antoniosudoso/pc-sos-sdp): pins every file's sum
SUMS_SHA256 = "0da6610bb7dda77dff28fd2e2eced54a2dfebe1c11e461806b8e9973199fa7c9"
#: the files' index base (README: the smallest index of every set is 0, the largest n - 1)
INDEX_BASE = 0
#: KEEL's sonar.dat, the labels of connectionist (shared/datasets/keel/MANIFEST.tsv)
SONAR_SHA256 = "3db22f5ece13d019e43617217524f1072b1eae5275c69040517b784c52427b0d"

_A = ((0, 50), (0, 100), (25, 25), (50, 0), (50, 50), (100, 0))
_B = ((0, 100), (0, 150), (50, 50), (75, 75), (100, 0), (150, 0))
#: set -> its six (must-links, cannot-links) configurations, in the README's order
CONFIGURATIONS = {"iris": _A, "wine": _A, "glass": _A, "connectionist": _A, "ecoli": _B}
#: set -> (n, d, k) of the data file's header
SHAPES = {"iris": (150, 4, 3), "wine": (178, 13, 3), "glass": (214, 9, 6), "ecoli": (336, 7, 8),
          "connectionist": (208, 60, 2)}
#: set -> ccbench data set holding its labels in the same row order (connectionist: KEEL's sonar.dat)
LABELS_FROM = {"iris": "iris_uci", "wine": "wine_uci", "glass": "glass", "ecoli": "ecoli",
               "connectionist": "keel/sonar.dat"}
SCALING = {"iris": "raw", "wine": "raw", "glass": "min-max to [-1, 1] per column", "ecoli": "raw",
           "connectionist": "raw"}
#: sets in the folder that are not registered: no labelled copy (gene: no data file either)
UNLABELLED = ("heart", "seeds", "vertebral", "accent", "ECG5000", "computers", "gene")
REPLICATES = range(5)


def pcsos_dir(data_dir=None) -> Path | None:
    """``$CCBENCH_PCSOS_DIR``, else ``<parent of data_dir or $CCBENCH_DATA_DIR>/pcsos``; None when unset."""
    if os.environ.get(PCSOS_DIR_ENV):
        return Path(os.environ[PCSOS_DIR_ENV]).expanduser()
    data = data_dir if data_dir is not None else os.environ.get("CCBENCH_DATA_DIR")
    return Path(data).expanduser().resolve().parent / "pcsos" if data else None


def _root(data_dir=None) -> Path:
    root = pcsos_dir(data_dir)
    if root is None or not (root / "SHA256SUMS").is_file():
        raise FileNotFoundError(f"PC-SOS-SDP's files not found at {root}: set {PCSOS_DIR_ENV} to the folder "
                                f"holding SHA256SUMS, constraints/ and datasets/ (shared/pcsos; external, "
                                f"never in the repository)")
    return root.resolve()


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _integrity_error(path: Path, expected: str, actual: str):
    from ccbench.datasets import DataIntegrityError

    return DataIntegrityError(f"{path} failed its checksum: expected sha256 {expected}, actual {actual}. "
                              f"Restore PC-SOS-SDP's files (shared/pcsos) or point {PCSOS_DIR_ENV} at a verified copy.")


@functools.lru_cache(maxsize=64)
def _checked(path: str, _mtime_ns: int, _size: int, expected: str) -> None:
    """Hash ``path`` once per (stat, expected sum); raise DataIntegrityError on a mismatch."""
    actual = _sha256(Path(path))
    if actual != expected:
        raise _integrity_error(Path(path), expected, actual)


def _verified(root: Path, relative: str) -> Path:
    """``root / relative`` after its sha256 matched SHA256SUMS (whose own sha256 is SUMS_SHA256)."""
    sums = root / "SHA256SUMS"
    st = sums.stat()
    _checked(str(sums), st.st_mtime_ns, st.st_size, SUMS_SHA256)
    listed = dict(line.split()[::-1] for line in sums.read_text().splitlines() if line.strip())
    path = root / relative
    if relative not in listed:
        raise FileNotFoundError(f"{relative} is not listed in {sums}: not one of PC-SOS-SDP's files")
    if not path.is_file():
        raise FileNotFoundError(f"{path} is listed in SHA256SUMS but absent; restore shared/pcsos")
    st = path.stat()
    _checked(str(path), st.st_mtime_ns, st.st_size, listed[relative])
    return path


@functools.lru_cache(maxsize=8)
def _features(path: str, _mtime_ns: int, name: str):
    """The zip's ``<name>.txt``: header ``n d k``, then n rows of d numbers (read-only array)."""
    import io
    import zipfile

    import numpy as np

    with zipfile.ZipFile(path) as archive:
        text = archive.read(f"{name}.txt").decode("ascii")
    header, _, body = text.partition("\n")
    n, d, k = (int(v) for v in header.split())
    X = np.loadtxt(io.StringIO(body), dtype=np.float64, ndmin=2)
    if X.shape != (n, d) or (n, d, k) != SHAPES[name]:
        raise ValueError(f"{path}: header says {n} x {d}, k={k}, body is {X.shape[0]} x {X.shape[1]}; "
                         f"PC-SOS-SDP's {name} is {SHAPES[name]}")
    X.setflags(write=False)
    return X


def _sonar(data_dir):
    """KEEL's sonar.dat (UCI's 4 decimals rounded to 3, UCI order): features and class names."""
    import numpy as np

    from ccbench.datasets import resolve_data_dir

    path = resolve_data_dir(data_dir) / "keel" / "sonar.dat"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: connectionist's labels come from KEEL's sonar.dat "
                                f"(shared/datasets/keel); set CCBENCH_DATA_DIR to shared/datasets")
    st = path.stat()
    _checked(str(path), st.st_mtime_ns, st.st_size, SONAR_SHA256)
    fields = np.char.strip(np.loadtxt(path, dtype=str, delimiter=",", ndmin=2))
    return fields[:, :-1].astype(np.float64), fields[:, -1]


def _labelled_copy(name: str, data_dir, manifest):
    """(features, class of each row) of ccbench's labelled copy of ``name``, in its row order."""
    import numpy as np

    if name == "connectionist":
        X, classes = _sonar(data_dir)
        return X, np.unique(classes, return_inverse=True)[1]
    from ccbench.datasets import load_dataset

    ds = load_dataset(LABELS_FROM[name], data_dir=data_dir, manifest=manifest)
    X = ds.X
    if name == "glass":  # the zip's scaling of the raw UCI columns
        low, high = X.min(axis=0), X.max(axis=0)
        X = 2.0 * (X - low) / (high - low) - 1.0
    return X, ds.y


def _check_rows(name: str, X, copy_X) -> None:
    """Refuse labels whose rows are not the zip's rows (then the labels would belong to other points)."""
    import numpy as np

    tolerance = {"glass": 1e-10, "connectionist": 5e-4 + 1e-9}.get(name, 0.0)
    known = {"iris": (34, 37)}.get(name, ())  # scikit-learn's corrections of UCI iris (README)
    differ = np.flatnonzero(np.abs(X - copy_X).max(axis=1) > tolerance)
    unexpected = np.setdiff1d(differ, known)
    if X.shape != copy_X.shape or unexpected.size:
        raise ValueError(f"pcsos_{name}: rows {unexpected[:5].tolist()} of the zip differ from {LABELS_FROM[name]} "
                         f"by more than {tolerance:g}: not the same row order, so its labels cannot be used")


def _loader(name: str):
    def load(*, missing="drop", data_dir=None, manifest=None):
        # no missing values in the zip or the label copies: `missing` does not apply
        from ccbench.datasets import Dataset

        root = _root(data_dir)
        path = _verified(root, f"datasets/{name}.zip")
        X = _features(str(path), path.stat().st_mtime_ns, name)
        copy_X, y = _labelled_copy(name, data_dir, manifest)
        _check_rows(name, X, copy_X)
        meta = {"source": "PC-SOS-SDP (Piccialli et al. 2022), datasets/" + name + ".zip, as stored",
                "scaling": SCALING[name], "labels_from": LABELS_FROM[name], "files": [str(path)]}
        return Dataset(f"pcsos_{name}", X.copy(), y.astype("intp"), SHAPES[name][2], meta)

    load.__doc__ = f"PC-SOS-SDP's {name} as stored ({SCALING[name]}), labels from {LABELS_FROM[name]}."
    return load


@functools.lru_cache(maxsize=64)
def _read_pairs(path: str, _mtime_ns: int, n: int, base: int):
    """(is_must_link (m,), pairs (m, 2) 0-based) of a constraint file, in line order."""
    import gzip

    import numpy as np

    with gzip.open(path, "rt") as fh:
        rows = [line.split() for line in fh.read().splitlines()]
    bad = next((i for i, r in enumerate(rows) if len(r) != 3 or r[0] not in ("ML", "CL")
                or not (r[1].isdigit() and r[2].isdigit())), None)
    if bad is not None:
        raise ValueError(f"{path} line {bad + 1}: {' '.join(rows[bad])!r} is not 'ML i j' or 'CL i j'")
    table = np.array(rows, dtype=object).reshape(-1, 3)
    pairs = table[:, 1:].astype(np.intp) - base
    out = np.flatnonzero(((pairs < 0) | (pairs >= n)).any(axis=1))
    if out.size:
        raise ValueError(f"{path} line {out[0] + 1}: {' '.join(rows[out[0]])} is outside 0..{n - 1} read "
                         f"{base}-based ({out.size} such lines); PC-SOS-SDP's files are {INDEX_BASE}-based")
    return table[:, 0] == "ML", pairs


def check_against_labels(path, is_ml, pairs, y) -> None:
    """Raise ValueError naming ``path`` and the first line whose pair disagrees with ``y``
    (must-link across classes, cannot-link within one)."""
    import numpy as np

    same = y[pairs[:, 0]] == y[pairs[:, 1]]
    wrong = np.flatnonzero(same != is_ml)
    if wrong.size:
        i = int(wrong[0])
        a, b = (int(v) for v in pairs[i])
        raise ValueError(f"{path} line {i + 1}: {'ML' if is_ml[i] else 'CL'} {a} {b} (0-based) but the labels are "
                         f"{y[a]} and {y[b]}; {wrong.size} of {len(pairs)} pairs disagree: not this data set's "
                         f"row order, or labels under noise")


def _file_name(name: str, configuration, replicate) -> str:
    configs = CONFIGURATIONS[name]
    if isinstance(configuration, str):
        stem = configuration
        if stem not in {f"ml_{a}_cl_{b}" for a, b in configs}:
            raise ValueError(f"pcsos_file: {name} has no configuration {stem!r}; it has "
                             f"{[f'ml_{a}_cl_{b}' for a, b in configs]}")
    elif isinstance(configuration, bool) or not 0 <= int(configuration) < len(configs):
        raise ValueError(f"pcsos_file: configuration must be 0..{len(configs) - 1} (or 'ml_<a>_cl_<b>'), "
                         f"got {configuration!r}")
    else:
        a, b = configs[int(configuration)]
        stem = f"ml_{a}_cl_{b}"
    if isinstance(replicate, bool) or int(replicate) not in REPLICATES:
        raise ValueError(f"pcsos_file: replicate must be 0..4, got {replicate!r}")
    return f"constraints/{name}/{stem}_{int(replicate)}.txt.gz"


def pcsos_file(y, dataset: str, configuration=0, replicate: int = 0, *, rng=None):
    """The constraints of PC-SOS-SDP's instance (``dataset``, ``configuration``, ``replicate``), checked
    against ``y``. ``dataset`` is ``pcsos_<set>``; ``configuration`` 0..5 indexes :data:`CONFIGURATIONS`
    (or is ``"ml_<a>_cl_<b>"``); ``replicate`` is 0..4. ``rng`` is not used (the file is fixed)."""
    import numpy as np

    from ccbench.constraints import Constraints

    name = str(dataset).removeprefix("pcsos_")
    if not str(dataset).startswith("pcsos_") or name not in CONFIGURATIONS:
        raise ValueError(f"pcsos_file: {dataset!r} is not a PC-SOS-SDP data set; use one of "
                         f"{sorted('pcsos_' + s for s in CONFIGURATIONS)} (their rows and scaling are the files')")
    y = np.asarray(y)
    if len(y) != SHAPES[name][0]:
        raise ValueError(f"pcsos_file: {dataset} has {SHAPES[name][0]} rows, the labels given {len(y)}")
    path = _verified(_root(), _file_name(name, configuration, replicate))
    is_ml, pairs = _read_pairs(str(path), path.stat().st_mtime_ns, len(y), INDEX_BASE)
    check_against_labels(path, is_ml, pairs, y)
    return Constraints(pairs[is_ml], pairs[~is_ml], n_samples=len(y))


@hookimpl
def ccbench_datasets():
    return [DatasetSpec(f"pcsos_{name}", _loader(name), f"PC-SOS-SDP's {name} as stored ({SCALING[name]}), "
                        f"labels from {LABELS_FROM[name]}; external files, {PCSOS_DIR_ENV}", n, d, k,
                        "PC-SOS-SDP", ("preprocess", "data_dir", "manifest"))
            for name, (n, d, k) in SHAPES.items()]


@hookimpl
def ccbench_constraint_schemes():
    return [SchemeSpec("pcsos_file", pcsos_file, "PC-SOS-SDP's constraint file for (dataset, configuration 0..5, "
                       "replicate 0..4), 0-based, checked against the labels (external files, CCBENCH_PCSOS_DIR)")]
