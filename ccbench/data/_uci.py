"""Raw UCI files: one parser per data set (fetching and verifying: :mod:`ccbench.data._files`).

Every data set of ``ccbench/data/MANIFEST.tsv`` (role ``data``) has a row in
:data:`UCI_SETS`: a small parse function plus the shape it yields with the
default ``missing="drop"``. The parsers share three helpers: :func:`_read_cells`
(text -> 2-D array of stripped strings, ragged lines refused by line number),
:func:`_table` (columns -> float features with ids dropped, nominal text coded
as integers and ``'?'`` dropped or imputed) and :func:`_code_sequence`
(nucleotide strings -> one integer-coded attribute per position).

Choices shared by every parser (per-set choices are in each parser's docstring):

- Nominal text values are coded ``0..I-1`` in sorted order of the distinct
  values of that column (e.g. voting ``n=0, y=1``; sick ``f=0, t=1``). The NNC
  paper codes them ``1..I``; the constant shift disappears under
  ``preprocess="minmax_1_2"`` or ``"standardize"``. Attributes the file already
  writes as integer codes keep the file's numbers.
- ``missing="drop"`` removes every row with a ``'?'`` in a kept column;
  ``missing="impute"`` fills a numeric column with the mean of its present
  values and a nominal (or integer-coded categorical) column with its most
  frequent value (ties: the smallest code), so the column stays a valid code;
  ``missing="category"`` keeps every row like ``"impute"`` but codes ``'?'`` in a
  nominal (or categorical) column as one more value, in the same sorted order as the
  file's text values: ``'?'`` sorts before letters (voting: ?=0, n=1, y=2; this coding
  reproduces the NNC paper's voting column of Table 2, the rule is then the same as for
  any other value) and after digits (integer-coded columns: max + 1); numeric columns
  are mean-imputed as with ``"impute"``.
- Class codes follow the sorted class names (numerically when all names are
  numbers); ``meta["classes"]`` lists the names in code order.
- Unordered (nominal) attributes are one-hot encoded by default (``nominal="onehot"``):
  a code 0..I-1 puts "a" nearer "c" than "t" in any distance, an order the data do not
  have. Each parser declares which of its attributes are unordered (``info["unordered"]``,
  feature index -> categories, or None for the values present); :func:`_one_hot` turns
  every such attribute with three or more values into one 0/1 column per value (a
  two-valued one stays one 0/1 column: its two values are one distance apart either way),
  and the nucleotide positions of promoters and splice always into four (A, C, G, T), so
  two sequences differing in one base are sqrt(2) apart whatever the bases.
  ``nominal="codes"`` keeps the integer codes (the NNC paper's coding, for its reproduction).
  Per set: promoters, splice: every position unordered (57 x 4 = 228, 60 x 4 = 240
  columns); credit: A4, A5, A6, A7, A13 (A1, A9, A10, A12 are two-valued); sick: referral
  source (and sex under ``missing="category"``); soybean_small: area-damaged, seed-tmt,
  leafspots-halo, leafspots-marg, leafspot-size, leaf-mild, stem-cankers, canker-lesion,
  external-decay, int-discolor, fruit-pods, fruit-spots, roots (those with three or more
  values in the 47 rows are expanded); date, precip, temp, crop-hist, severity and
  germination are ordered and stay codes, the rest are two-valued; voting and hepatitis:
  two-valued (yes/no; expanded only under ``missing="category"``, where '?' is a third
  value). Ordered or numeric, kept as they are: balance (weights and distances 1-5),
  breast_cancer_wisconsin (1-10 grades), zoo (boolean, and legs a count), and every set of
  measurements.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ._files import (
    DataDownloadError,
    DataIntegrityError,
    DataParseError,
    ManifestEntry,
    fetch_file,
    read_manifest,
    resolve_data_dir,
)

__all__ = [
    "DataIntegrityError",
    "DataParseError",
    "DataDownloadError",
    "ManifestEntry",
    "UCISet",
    "UCI_SETS",
    "read_manifest",
    "resolve_data_dir",
    "fetch_file",
    "load_uci",
]

MISSING_OPTIONS = ("drop", "impute", "category")  # checked once, in load_dataset


# -- parsing helpers ------------------------------------------------------------


def _read_cells(path: Path, *, sep: str | None = ",", skip: int = 0) -> np.ndarray:
    """Non-empty lines after the first ``skip`` split on ``sep`` (None: whitespace)."""
    try:
        text = path.read_text(encoding="ascii")
    except UnicodeDecodeError as exc:
        raise DataParseError(f"{path}: not an ASCII text file ({exc})") from None
    lines = [line for line in text.splitlines()[skip:] if line.strip()]
    rows = [[field.strip() for field in line.split(sep)] for line in lines]
    if not rows:
        raise DataParseError(f"{path}: no data lines")
    width = len(rows[0])
    for lineno, row in enumerate(rows, start=skip + 1):
        if len(row) != width:
            raise DataParseError(f"{path}: data line {lineno} has {len(row)} fields, expected {width}")
    return np.array(rows, dtype=str)


def _floats(values: np.ndarray, where: str) -> np.ndarray:
    try:
        return values.astype(np.float64)
    except ValueError:
        row, bad = next((i, str(v)) for i, v in enumerate(values) if not _is_number(v))
        raise DataParseError(f"{where}: non-numeric value {bad!r} (data row {row + 1})") from None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _mode(values: np.ndarray) -> float:
    distinct, counts = np.unique(values, return_counts=True)
    return float(distinct[np.argmax(counts)])  # argmax: first, i.e. smallest, of ties


def _table(
    cells: np.ndarray,
    *,
    source: str,
    missing: str,
    label: int | None,
    drop: dict[int, str] | None = None,
    nominal: tuple[int, ...] = (),
    categorical: tuple[int, ...] = (),
    unordered: tuple[int, ...] = (),
) -> tuple[np.ndarray, np.ndarray | None, dict]:
    """Turn a string table into float features, raw labels and a record of what changed.

    ``label`` is the class column, ``drop`` maps id/name columns to a description,
    ``nominal`` columns hold text values (coded 0..I-1, sorted), ``categorical``
    columns hold integer codes (kept; imputed with the mode). Other columns are
    numeric (imputed with the mean). ``unordered`` columns (nominal or categorical) have no
    order among their values: recorded in ``info["unordered"]`` for :func:`_one_hot`.
    Indices refer to the file's columns.
    """
    drop = drop or {}
    n_cols = cells.shape[1]
    kept = [c for c in range(n_cols) if c != label and c not in drop]
    labels = cells[:, label] if label is not None else None
    features = cells[:, kept]
    is_missing = features == "?"
    info: dict = {"dropped_columns": {f"file column {c}": why for c, why in drop.items()}}
    if missing == "drop":
        complete = ~is_missing.any(axis=1)
        info["dropped_rows"] = int((~complete).sum())
        if info["dropped_rows"]:
            info["dropped_rows_reason"] = "a '?' (missing value) in a kept column (missing='drop')"
        features, is_missing = features[complete], is_missing[complete]
        labels = labels[complete] if labels is not None else None
    else:
        info["dropped_rows"] = 0
        info["category_cells" if missing == "category" else "imputed_cells"] = int(is_missing.sum())
    X = np.empty(features.shape, dtype=np.float64)
    codes: dict[str, list[str]] = {}
    for j, c in enumerate(kept):  # loop over columns only
        present = ~is_missing[:, j]
        column = features[:, j]
        if c in nominal:
            # with missing="category" '?' is one of the sorted values (no fill below)
            values = np.unique(column if missing == "category" else column[present])
            X[:, j] = np.searchsorted(values, column)
            codes[f"feature {j}"] = values.tolist()
        else:
            X[present, j] = _floats(column[present], f"{source}: file column {c}")
        if not present.all():
            if not present.any():
                raise DataParseError(f"{source}: file column {c} has no values; drop it in the parser")
            coded = c in nominal or c in categorical
            if c in nominal and missing == "category":
                continue  # coded above
            if coded and missing == "category":
                fill = X[present, j].max() + 1.0  # '?' sorts after the digits of the codes
            else:
                fill = _mode(X[present, j]) if coded else X[present, j].mean()
            X[~present, j] = fill
    if codes:
        info["nominal_codes"] = codes
    info["unordered"] = {j: None for j, c in enumerate(kept) if c in unordered}
    return X, labels, info


def _one_hot(X: np.ndarray, unordered: dict) -> tuple[np.ndarray, dict]:
    """Expand the unordered attributes of ``X`` (feature index -> categories, or None for the values
    present): one 0/1 column per category, in the attribute's place, when the categories are given or
    there are three or more values; a two-valued attribute stays one column. Returns the new ``X``
    and a record {"feature j": [codes of its columns]}."""
    blocks, record = [], {}
    for j in range(X.shape[1]):
        if j in unordered:
            cats = unordered[j]
            values = np.unique(X[:, j]) if cats is None else np.asarray(cats, dtype=np.float64)
            if cats is not None or len(values) >= 3:
                blocks.append((X[:, [j]] == values[None, :]).astype(np.float64))
                record[f"feature {j}"] = [float(v) for v in values]
                continue
        blocks.append(X[:, [j]])
    return (np.hstack(blocks) if blocks else X), record


def _code_sequence(seqs: np.ndarray, alphabet: str, source: str) -> np.ndarray:
    """(n,) equal-length strings -> (n, L) integer codes, letter i of ``alphabet`` -> i."""
    length = len(seqs[0])
    if any(len(s) != length for s in seqs):
        raise DataParseError(f"{source}: sequences differ in length (first has {length})")
    lookup = np.full(256, -1, dtype=np.int64)
    for code, letter in enumerate(alphabet):
        lookup[ord(letter)] = code
    raw = np.frombuffer("".join(seqs).encode("ascii"), dtype=np.uint8)
    coded = lookup[raw].reshape(len(seqs), length)
    if (coded < 0).any():
        bad = sorted({chr(b) for b in raw[lookup[raw] < 0]})
        raise DataParseError(f"{source}: sequence letters {bad} outside {alphabet!r}")
    return coded.astype(np.float64)


# -- per-data-set parsers ---------------------------------------------------------
# Each takes the verified file paths (manifest order) and ``missing`` and returns
# (X, raw labels, info). info may carry "class_names" for labels that are codes.


def _simple(label, drop=None, sep=",", nominal=(), categorical=(), unordered=(), note=""):
    """Parser for a single-file table: label column, id columns to drop, column kinds."""

    def parse(paths, missing):
        (path,) = paths
        return _table(_read_cells(path, sep=sep), source=str(path), missing=missing, label=label,
                      drop=drop, nominal=nominal, categorical=categorical, unordered=unordered)

    parse.__doc__ = (
        f"{'Whitespace' if sep is None else repr(sep)}-separated table; class = file column {label}"
        + (f"; dropped: {drop}" if drop else "")
        + (f"; nominal (coded) columns {nominal}" if nominal else "")
        + (f"; unordered (one-hot) columns {unordered}" if unordered else "")
        + "; other columns numeric (a '?' is dropped or mean-imputed)."
        + (f" {note}" if note else "")
    )
    return parse


def _parse_credit(paths, missing):
    """crx.data: A1, A4-A7, A9, A10, A12, A13 are nominal (coded); A2, A3, A8, A11,
    A14, A15 numeric. 37 rows have a '?': drop -> 653 rows (the NNC paper's size),
    impute -> 690. Every nominal attribute is unordered: A4 (4 values), A5 (3), A6 (14),
    A7 (9) and A13 (3) are one-hot encoded (nominal="onehot"), A1, A9, A10, A12 are
    two-valued and stay one 0/1 column: 15 attributes -> 42 columns with missing="drop"."""
    (path,) = paths
    nominal = (0, 3, 4, 5, 6, 8, 9, 11, 12)
    return _table(_read_cells(path), source=str(path), missing=missing, label=15,
                  nominal=nominal, unordered=nominal)


def _parse_hepatitis(paths, missing):
    """Label first (1=DIE, 2=LIVE). AGE, BILIRUBIN, ALK PHOSPHATE, SGOT, ALBUMIN,
    PROTIME are numeric; the 13 yes/no attributes are file codes 1/2 (kept, imputed
    with the mode). drop -> 80 complete rows; impute -> 155 (the NNC paper's size).
    The yes/no attributes are unordered but two-valued: one column each, unless
    missing="category" makes '?' a third value (then one-hot)."""
    (path,) = paths
    numeric = (1, 14, 15, 16, 17, 18)
    categorical = tuple(c for c in range(1, 20) if c not in numeric)
    return _table(_read_cells(path), source=str(path), missing=missing, label=0,
                  categorical=categorical, unordered=categorical)


def _parse_housing(paths, missing):
    """13 features; the 14th column MEDV (median value, $1000s) becomes the class.

    The NNC paper (Yang et al. 2015, Table 1: 3 classes) does not say how it
    binned MEDV, so we use equal-frequency tertiles of MEDV: edges
    ``np.quantile(MEDV, [1/3, 2/3])`` = 18.8333 and 23.7; class 0 is
    MEDV <= 18.8333, class 1 is 18.8333 < MEDV <= 23.7, class 2 is MEDV > 23.7
    (169 / 171 / 166 rows; ties at the edges keep the sizes from being equal).
    The edges are recorded in ``meta["medv_bin_edges"]``.
    """
    (path,) = paths
    X, _, info = _table(_read_cells(path, sep=None), source=str(path), missing=missing, label=None)
    medv, X = X[:, 13], X[:, :13]
    edges = np.quantile(medv, [1 / 3, 2 / 3])
    info["medv_bin_edges"] = edges.tolist()
    info["dropped_columns"]["file column 13"] = "MEDV (binned into the class label)"
    lo, hi = (f"{e:.4g}" for e in edges)
    info["class_names"] = [f"MEDV <= {lo}", f"{lo} < MEDV <= {hi}", f"MEDV > {hi}"]
    return X, np.digitize(medv, edges, right=True), info


def _parse_mfeat(paths, missing):
    """No label column: 2000 rows, 200 per digit 0..9 in row order."""
    (path,) = paths
    X, _, info = _table(_read_cells(path, sep=None), source=str(path), missing=missing, label=None)
    if X.shape[0] != 2000:
        raise DataParseError(f"{path}: expected 2000 rows (200 per digit), found {X.shape[0]}")
    info["class_names"] = [f"digit {d}" for d in range(10)]
    return X, np.repeat(np.arange(10), 200), info


def _parse_parkinsons(paths, missing):
    """Header row; drop ``name`` (recording id); label ``status`` (0 healthy, 1 PD)."""
    (path,) = paths
    cells = _read_cells(path)
    header, cells = list(cells[0]), cells[1:]
    try:
        name, status = header.index("name"), header.index("status")
    except ValueError:
        raise DataParseError(f"{path}: header lacks a 'name' or 'status' column: {header}") from None
    X, labels, info = _table(cells, source=str(path), missing=missing, label=status,
                             drop={name: "name (recording id)"})
    info["feature_names"] = [h for i, h in enumerate(header) if i not in (name, status)]
    return X, labels, info


def _parse_promoters(paths, missing):
    """Class +/- first, instance name (dropped), then a 57-letter a/c/g/t sequence:
    one nominal attribute per position, coded a=0, c=1, g=2, t=3; bases have no order,
    so every position is one-hot encoded (nominal="onehot", the default): 57 x 4 = 228
    0/1 columns, position by position in the order a, c, g, t."""
    (path,) = paths
    cells = _read_cells(path)
    X = _code_sequence(cells[:, 2], "acgt", str(path))
    info = {"dropped_columns": {"file column 1": "instance name"}, "dropped_rows": 0,
            "nominal_codes": "every position: a=0, c=1, g=2, t=3",
            "unordered": {j: [0, 1, 2, 3] for j in range(X.shape[1])}}
    return X, cells[:, 0], info


def _parse_splice(paths, missing):
    """Class EI/IE/N first, instance name (dropped), then 60 letters A/C/G/T, one
    nominal attribute per position coded A=0, C=1, G=2, T=3. The 15 rows that
    contain the ambiguity codes D, N, S or R are always dropped (-> 3175 rows,
    the NNC paper's size), whatever ``missing`` says. Every position is one-hot
    encoded (nominal="onehot"): 60 x 4 = 240 0/1 columns, in the order A, C, G, T."""
    (path,) = paths
    cells = _read_cells(path)
    seqs = cells[:, 2]
    ambiguous = np.array([bool(set(s) & set("DNSR")) for s in seqs])
    X = _code_sequence(seqs[~ambiguous], "ACGT", str(path))
    info = {"dropped_columns": {"file column 1": "instance name"},
            "dropped_rows": int(ambiguous.sum()),
            "dropped_rows_reason": "ambiguity codes D/N/S/R in the sequence",
            "nominal_codes": "every position: A=0, C=1, G=2, T=3",
            "unordered": {j: [0, 1, 2, 3] for j in range(X.shape[1])}}
    return X, cells[~ambiguous, 0], info


def _parse_segmentation(paths, missing):
    """segmentation.data (210 rows) then segmentation.test (2100), 5 header lines
    skipped in each; class name first, 19 numeric features."""
    tables = [_read_cells(path, skip=5) for path in paths]
    return _table(np.vstack(tables), source=" + ".join(map(str, paths)), missing=missing, label=0)


def _parse_sick(paths, missing):
    """29 attributes then 'class.|record id' (e.g. 'negative.|3733'): the class is
    the part before '.|'. TBG (file column 27) is '?' in every row and is dropped
    (otherwise missing='drop' would drop every row), leaving 28 features.
    sex, the f/t flags and referral source are nominal (coded); age, TSH, T3,
    TT4, T4U and FTI numeric. drop -> 1947 complete rows; impute -> 2800 (only
    sick.data was found; the NNC paper used 3772 = sick.data + sick.test).
    The nominal attributes are unordered; referral source (5 values) is one-hot encoded
    (nominal="onehot"), the two-valued ones stay one 0/1 column: 28 -> 32 columns."""
    (path,) = paths
    cells = _read_cells(path)
    label_field = cells[:, 29]
    if not all(".|" in v for v in label_field):
        raise DataParseError(f"{path}: last field is not 'class.|id' in every row")
    cells = cells.copy()
    cells[:, 29] = [v.split(".|")[0] for v in label_field]
    numeric = (0, 17, 19, 21, 23, 25, 27)
    nominal = tuple(c for c in range(29) if c not in numeric)
    return _table(cells, source=str(path), missing=missing, label=29,
                  drop={27: "TBG (all values '?')"}, nominal=nominal, unordered=nominal)


def _parse_spectf(paths, missing):
    """SPECTF.train (80 rows) then SPECTF.test (187); label OVERALL_DIAGNOSIS first."""
    by_name = {p.name: p for p in paths}
    ordered = [by_name["SPECTF.train"], by_name["SPECTF.test"]]
    cells = np.vstack([_read_cells(p) for p in ordered])
    return _table(cells, source=" + ".join(map(str, ordered)), missing=missing, label=0)


def _parse_voting(paths, missing):
    """Party first; 16 votes y/n nominal (n=0, y=1); '?' (not voted) is missing:
    drop -> 232 rows; impute (the mode per vote) -> 435 (the NNC paper's size);
    category ('?' a third value: ?=0, n=1, y=2, as the NNC paper coded it) -> 435.
    The votes are unordered but two-valued: one 0/1 column each, except under
    missing="category" with nominal="onehot", where ?/n/y become three columns (48)."""
    (path,) = paths
    return _table(_read_cells(path), source=str(path), missing=missing, label=0,
                  nominal=tuple(range(1, 17)), unordered=tuple(range(1, 17)))


# soybean-small.names: the multi-valued attributes without an order (file columns, 0-based):
# area-damaged, seed-tmt, leafspots-halo, leafspots-marg, leafspot-size, leaf-mild, stem-cankers,
# canker-lesion, external-decay, int-discolor, fruit-pods, fruit-spots, roots
_SOYBEAN_UNORDERED = (6, 8, 12, 13, 14, 17, 20, 21, 23, 25, 27, 28, 34)
_SOYBEAN_NOTE = ("The file's integer codes are kept for ordered attributes (date, precip, temp, crop-hist, "
                 "severity, germination) and two-valued ones; the unordered multi-valued attributes are one-hot "
                 "encoded where the 47 rows hold three or more of their values (nominal='onehot').")


@dataclasses.dataclass(frozen=True)
class UCISet:
    """A UCI data set: its parser and the shape it yields with ``missing="drop"`` (and the default
    ``nominal="onehot"``)."""

    parse: Callable
    summary: str
    n_samples: int
    n_features: int
    n_classes: int
    n_samples_impute: int | None = None  # when missing="impute" keeps more rows


UCI_SETS: dict[str, UCISet] = {
    "balance": UCISet(_simple(label=0), "balance scale, label first (L/B/R)", 625, 4, 3),
    "breast_cancer_wisconsin": UCISet(
        _simple(label=10, drop={0: "sample code number"}),
        "Wisconsin breast cancer (original); 16 '?' in Bare Nuclei (mean-imputed)", 683, 9, 2, 699),
    "credit": UCISet(_parse_credit, "credit approval (crx); 9 nominal attributes coded", 653, 42, 2, 690),
    "ecoli": UCISet(_simple(label=8, drop={0: "sequence name"}, sep=None), "E. coli protein localisation", 336, 7, 8),
    "glass": UCISet(_simple(label=10, drop={0: "Id"}), "glass identification (types 1,2,3,5,6,7)", 214, 9, 6),
    "hepatitis": UCISet(_parse_hepatitis, "hepatitis survival; many '?'", 80, 19, 2, 155),
    "housing": UCISet(_parse_housing, "Boston housing, MEDV in 3 equal-frequency bins", 506, 13, 3),
    "ionosphere": UCISet(_simple(label=34), "ionosphere radar returns (column 2 constant)", 351, 34, 2),
    "iris_uci": UCISet(_simple(label=4), "Fisher's iris, UCI file (rows 35, 38 differ from sklearn)", 150, 4, 3),
    "mfeat_fac": UCISet(_parse_mfeat, "multiple features: Fourier profile correlations", 2000, 216, 10),
    "mfeat_pix": UCISet(_parse_mfeat, "multiple features: 15x16 pixel averages", 2000, 240, 10),
    "parkinsons": UCISet(_parse_parkinsons, "Parkinson's voice recordings", 195, 22, 2),
    "pima": UCISet(_simple(label=8), "Pima diabetes (zeros kept as recorded)", 768, 8, 2),
    "promoters": UCISet(_parse_promoters, "E. coli promoter sequences, 57 nominal positions", 106, 228, 2),
    "segmentation": UCISet(_parse_segmentation, "image segmentation, .data + .test", 2310, 19, 7),
    "sick": UCISet(_parse_sick, "thyroid 'sick' (sick.data only; TBG dropped)", 1947, 32, 2, 2800),
    "soybean_small": UCISet(_simple(label=35, unordered=_SOYBEAN_UNORDERED, note=_SOYBEAN_NOTE),
                            "small soybean disease", 47, 44, 4),
    "spectf": UCISet(_parse_spectf, "SPECTF heart, train + test", 267, 44, 2),
    "splice": UCISet(_parse_splice, "splice junctions, 60 nominal positions (ambiguous rows dropped)", 3175, 240, 3),
    "voting": UCISet(_parse_voting, "1984 congressional votes (y/n coded)", 232, 16, 2, 435),
    "wdbc": UCISet(_simple(label=1, drop={0: "ID"}), "Wisconsin diagnostic breast cancer (UCI file)", 569, 30, 2),
    "wine_uci": UCISet(_simple(label=0), "wine recognition (UCI file)", 178, 13, 3),
    "yeast": UCISet(_simple(label=9, drop={0: "sequence name"}, sep=None), "yeast protein localisation", 1484, 8, 10),
    "zoo": UCISet(_simple(label=17, drop={0: "animal name"}), "zoo animals (legs numeric, rest boolean)", 101, 16, 7),
}


def _encode_labels(raw: np.ndarray) -> tuple[np.ndarray, list]:
    """Codes 0..k-1 in sorted order of the names (numeric order if all are numbers)."""
    raw = np.asarray(raw)
    if raw.dtype.kind in "iuf":
        classes, y = np.unique(raw, return_inverse=True)
        return y.astype(np.intp), classes.tolist()
    names = raw.astype(str)
    distinct = sorted(set(names.tolist()))
    if all(_is_number(s) for s in distinct):
        distinct.sort(key=float)
    index = {name: code for code, name in enumerate(distinct)}
    return np.array([index[s] for s in names], dtype=np.intp), distinct


NOMINAL_OPTIONS = ("onehot", "codes")


def load_uci(name: str, *, missing: str = "drop", nominal: str = "onehot", data_dir=None, manifest=None):
    """Fetch, verify and parse UCI data set ``name``.

    ``nominal="onehot"`` (default) one-hot encodes the attributes the parser declares unordered
    (:func:`_one_hot`); ``"codes"`` keeps their integer codes.

    Returns ``(X, y, classes, meta)``; :func:`ccbench.datasets.load_dataset` wraps
    them in a :class:`~ccbench.datasets.Dataset`.
    """
    entries = read_manifest(manifest).get(name)
    if not entries:
        raise ValueError(f"data set {name!r} has no data file in the manifest {manifest or 'MANIFEST.tsv'}")
    root = resolve_data_dir(data_dir)
    paths = [fetch_file(entry, root) for entry in entries]
    try:
        X, raw_labels, info = UCI_SETS[name].parse(paths, missing)
    except DataParseError:
        raise
    except (ValueError, IndexError, KeyError) as exc:
        files = ", ".join(map(str, paths))
        raise DataParseError(f"{files}: could not parse as data set {name!r}: {exc!r}") from exc
    if nominal not in NOMINAL_OPTIONS:
        raise ValueError(f"nominal must be one of {NOMINAL_OPTIONS}, got {nominal!r}")
    unordered = info.pop("unordered", {})
    info["nominal"] = nominal
    if nominal == "onehot" and unordered:
        X, info["onehot"] = _one_hot(X, unordered)
    y, classes = _encode_labels(raw_labels)
    classes = info.pop("class_names", classes)
    meta = {
        "source": "UCI: " + ", ".join(e.url for e in entries),
        "files": [{"path": str(p), "sha256": e.sha256} for p, e in zip(paths, entries)],
        "classes": classes,
        "missing": missing,
        **info,
    }
    return np.ascontiguousarray(X, dtype=np.float64), y, classes, meta
