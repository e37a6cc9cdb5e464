"""Data sets: every manifest set parses to its documented shape; raw UCI copies agree
with scikit-learn's; preprocessing; download, verification and error paths.

Tests that read the real UCI files need CCBENCH_DATA_DIR (CI: /work/shared/datasets);
the download/verification tests build their own files and always run.
"""

from __future__ import annotations

import csv
import hashlib
import http.server
import os
import shutil
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ccbench.data import _files as _data_files
from ccbench.data import _uci
from ccbench.datasets import (
    DataIntegrityError,
    DataParseError,
    load_dataset,
    preprocess_features,
    read_manifest,
)
from ccbench.registry import UnknownNameError, get_dataset_spec, list_datasets

DATA_DIR = os.environ.get("CCBENCH_DATA_DIR")
needs_data = pytest.mark.skipif(
    not DATA_DIR,
    reason="CCBENCH_DATA_DIR is not set; point it at a verified copy of the UCI files "
    "(CI uses /work/shared/datasets) to run the tests that parse them",
)

# /work/shared/datasets/README.md: name -> (rows, features, classes). Rows are the
# file's rows, i.e. missing="impute"; DROP_ROWS lists the sets where "drop" keeps fewer.
README_TABLE = {
    "balance": (625, 4, 3), "breast_cancer_wisconsin": (699, 9, 2), "credit": (690, 15, 2),
    "ecoli": (336, 7, 8), "glass": (214, 9, 6), "hepatitis": (155, 19, 2),
    "housing": (506, 13, 3), "ionosphere": (351, 34, 2), "iris_uci": (150, 4, 3),
    "mfeat_fac": (2000, 216, 10), "mfeat_pix": (2000, 240, 10), "parkinsons": (195, 22, 2),
    "pima": (768, 8, 2), "promoters": (106, 57, 2), "segmentation": (2310, 19, 7),
    # README: 2800 x 29; the all-'?' TBG column is dropped -> 28 features.
    "sick": (2800, 28, 2), "soybean_small": (47, 35, 4), "spectf": (267, 44, 2),
    "splice": (3175, 60, 3), "voting": (435, 16, 2), "wdbc": (569, 30, 2),
    "wine_uci": (178, 13, 3), "yeast": (1484, 8, 10), "zoo": (101, 16, 7),
}
# Complete-case sizes: BCW 683, hepatitis 80, voting 232 are the usual literature
# figures, credit 653 is the NNC paper's; sick is re-counted from the raw file below.
DROP_ROWS = {"breast_cancer_wisconsin": 683, "credit": 653, "hepatitis": 80, "voting": 232, "sick": 1947}
# README counts attributes; the default nominal="onehot" gives these sets more columns (issue 38, item 8;
# tests/test_nominal_onehot.py); nominal="codes" gives the README's counts.
ONE_HOT = {"credit": 42, "promoters": 228, "sick": 32, "soybean_small": 44, "splice": 240}


def test_every_manifest_data_set_is_registered():
    manifest_names = set(read_manifest())
    assert manifest_names == set(README_TABLE)
    registered = {spec.name for spec in list_datasets()}
    assert manifest_names | {"iris", "wine", "breast_cancer"} <= registered
    for name in manifest_names:
        spec = get_dataset_spec(name)
        n, d, k = README_TABLE[name]
        assert (spec.n_samples, spec.n_features, spec.n_classes) == (DROP_ROWS.get(name, n), ONE_HOT.get(name, d), k)
        assert spec.source == "UCI" and spec.summary


@needs_data
@pytest.mark.parametrize("missing", ["drop", "impute"])
@pytest.mark.parametrize("name", sorted(README_TABLE))
def test_manifest_set_loads_with_documented_shape(name, missing):
    n, d, k = README_TABLE[name]
    if missing == "drop":
        n = DROP_ROWS.get(name, n)
    ds = load_dataset(name, missing=missing, nominal="codes")
    assert ds.X.shape == (n, d) and ds.X.dtype == np.float64
    assert np.isfinite(ds.X).all()
    assert ds.y.shape == (n,) and np.issubdtype(ds.y.dtype, np.integer)
    assert ds.n_classes == k and len(ds.meta["classes"]) == k
    assert np.array_equal(np.unique(ds.y), np.arange(k))  # 0..k-1, every class present
    for entry, record in zip(read_manifest()[name], ds.meta["files"]):
        assert Path(record["path"]).name == entry.file and record["sha256"] == entry.sha256


@needs_data
def test_sick_complete_rows_recounted_from_raw_file():
    lines = Path(DATA_DIR, "sick", "sick.data").read_text().split()
    fields = [line.split(",") for line in lines]
    assert all(f[27] == "?" for f in fields)  # TBG: the column we drop
    complete = sum("?" not in f[:27] + f[28:] for f in fields)
    ds = load_dataset("sick", missing="drop")
    assert ds.n_samples == complete
    assert "TBG" in str(ds.meta["dropped_columns"])


@needs_data
def test_credit_agrees_with_pandas_route():
    """Drop/impute and the nominal codes, recomputed with pandas from the raw file."""
    raw = pd.read_csv(Path(DATA_DIR, "credit", "crx.data"), header=None, na_values="?")
    nominal = [0, 3, 4, 5, 6, 8, 9, 11, 12]
    features = raw.drop(columns=15)

    def expected(frame):
        out = frame.copy()
        for c in nominal:  # codes 0..I-1 in sorted order of the values present
            out[c] = pd.Categorical(out[c], categories=sorted(frame[c].dropna().unique())).codes
        return out.to_numpy(dtype=float)

    dropped = load_dataset("credit", missing="drop", nominal="codes")
    np.testing.assert_allclose(dropped.X, expected(features.dropna()), rtol=0, atol=1e-12)
    y_expected = (raw.dropna()[15] == "-").to_numpy().astype(int)  # classes sorted: '+', '-'
    assert np.array_equal(dropped.y, y_expected)

    imputed = load_dataset("credit", missing="impute", nominal="codes")
    filled = features.copy()
    for c in features.columns:
        if c in nominal:
            filled[c] = filled[c].fillna(sorted(features[c].dropna().mode())[0])
        else:
            filled[c] = filled[c].fillna(features[c].mean())
    np.testing.assert_allclose(imputed.X, expected(filled), rtol=0, atol=1e-9)
    assert imputed.meta["imputed_cells"] == int(features.isna().sum().sum())


@needs_data
def test_voting_votes_coded_and_imputed_with_the_mode():
    raw = np.array([line.split(",") for line in Path(DATA_DIR, "voting", "house-votes-84.data").read_text().split()])
    votes = raw[:, 1:]
    ds = load_dataset("voting", missing="impute")
    assert set(np.unique(ds.X)) == {0.0, 1.0}
    present = votes != "?"
    assert np.array_equal(ds.X[present], (votes[present] == "y").astype(float))  # n=0, y=1
    for j in range(16):
        mode = 1.0 if (votes[:, j] == "y").sum() > (votes[:, j] == "n").sum() else 0.0
        assert (ds.X[~present[:, j], j] == mode).all()


@needs_data
@pytest.mark.parametrize("name, file, alphabet, n_dropped", [
    ("promoters", "promoters.data", "acgt", 0),
    ("splice", "splice.data", "ACGT", 15),
])
def test_sequences_one_nominal_attribute_per_position(name, file, alphabet, n_dropped):
    rows = [[f.strip() for f in line.split(",")] for line in Path(DATA_DIR, name, file).read_text().splitlines()
            if line.strip()]
    kept = [r for r in rows if set(r[2]) <= set(alphabet)]
    assert len(rows) - len(kept) == n_dropped
    ds = load_dataset(name, nominal="codes")
    assert ds.meta["dropped_rows"] == n_dropped
    expected = np.array([[alphabet.index(ch) for ch in r[2]] for r in kept], dtype=float)
    assert np.array_equal(ds.X, expected)
    assert [ds.meta["classes"][c] for c in ds.y] == [r[0] for r in kept]


@needs_data
def test_housing_medv_tertiles():
    medv = np.loadtxt(Path(DATA_DIR, "housing", "housing.data"))[:, 13]
    ds = load_dataset("housing")
    low, high = ds.meta["medv_bin_edges"]
    assert (low, high) == tuple(np.quantile(medv, [1 / 3, 2 / 3]))
    assert (medv[ds.y == 0] <= low).all()
    assert ((medv[ds.y == 1] > low) & (medv[ds.y == 1] <= high)).all()
    assert (medv[ds.y == 2] > high).all()
    assert np.abs(np.bincount(ds.y) - len(medv) / 3).max() < 0.02 * len(medv)  # equal frequency up to ties


@needs_data
def test_mfeat_labels_in_row_order():
    for name in ("mfeat_fac", "mfeat_pix"):
        assert np.array_equal(load_dataset(name).y, np.repeat(np.arange(10), 200))


@needs_data
def test_segmentation_and_spectf_concatenate_their_files():
    seg = load_dataset("segmentation")
    assert [Path(f["path"]).name for f in seg.meta["files"]] == ["segmentation.data", "segmentation.test"]
    first = Path(DATA_DIR, "segmentation", "segmentation.data").read_text().splitlines()[5]
    assert np.array_equal(seg.X[0], np.array(first.split(",")[1:], dtype=float))
    spectf = load_dataset("spectf")
    last = Path(DATA_DIR, "spectf", "SPECTF.test").read_text().splitlines()[-1]
    assert np.array_equal(spectf.X[-1], np.array(last.split(",")[1:], dtype=float))


@needs_data
def test_raw_uci_copies_agree_with_scikit_learn():
    wine, wine_sk = load_dataset("wine_uci"), load_dataset("wine")
    assert np.array_equal(wine.X, wine_sk.X) and np.array_equal(wine.y, wine_sk.y)
    wdbc, bc_sk = load_dataset("wdbc"), load_dataset("breast_cancer")
    assert np.array_equal(wdbc.X, bc_sk.X)
    assert np.array_equal(wdbc.y, 1 - bc_sk.y)  # ours B=0, M=1; sklearn malignant=0, benign=1
    iris, iris_sk = load_dataset("iris_uci"), load_dataset("iris")
    differs = np.flatnonzero((iris.X != iris_sk.X).any(axis=1))
    assert (differs + 1).tolist() == [35, 38]  # 1-based rows, as the UCI notes give them
    assert np.array_equal(iris.y, iris_sk.y)


# -- preprocessing -----------------------------------------------------------------


def test_preprocess_minmax_and_standardize_with_a_constant_column():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(5, 3, 50), np.full(50, 7.0), rng.integers(0, 4, 50)])
    scaled = preprocess_features(X, "minmax_1_2")
    np.testing.assert_allclose(scaled[:, [0, 2]].min(axis=0), 1.0)
    np.testing.assert_allclose(scaled[:, [0, 2]].max(axis=0), 2.0)
    assert (scaled[:, 1] == 1.0).all()
    # Affine in each column: the order of values is kept and a*x+b scales identically.
    assert np.array_equal(np.argsort(scaled[:, 0]), np.argsort(X[:, 0]))
    np.testing.assert_allclose(preprocess_features(3 * X - 2, "minmax_1_2"), scaled)
    standard = preprocess_features(X, "standardize")
    np.testing.assert_allclose(standard[:, [0, 2]].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(standard[:, [0, 2]].std(axis=0), 1.0)
    assert (standard[:, 1] == 0.0).all()
    assert np.array_equal(preprocess_features(X, "none"), X)


@pytest.mark.parametrize("name", ["iris", pytest.param("ionosphere", marks=needs_data)])
def test_load_dataset_applies_preprocessing(name):
    raw = load_dataset(name)
    scaled = load_dataset(name, preprocess="minmax_1_2")
    varying = raw.X.max(axis=0) > raw.X.min(axis=0)
    np.testing.assert_allclose(scaled.X[:, varying].min(axis=0), 1.0)
    np.testing.assert_allclose(scaled.X[:, varying].max(axis=0), 2.0)
    assert np.isfinite(scaled.X).all() and (scaled.X[:, ~varying] == 1.0).all()
    standard = load_dataset(name, preprocess="standardize")
    np.testing.assert_allclose(standard.X[:, varying].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(standard.X[:, varying].std(axis=0), 1.0)
    assert np.isfinite(standard.X).all()
    assert standard.meta["preprocess"] == "standardize" and np.array_equal(standard.y, raw.y)
    if name == "ionosphere":
        assert (~varying).sum() == 1  # README: column 2 is constant 0


@pytest.mark.parametrize("option, value, listed", [
    ("preprocess", "zscore", "none, minmax_1_2, standardize"),
    ("missing", "mean", "drop, impute"),
])
def test_unknown_option_lists_the_options(option, value, listed):
    with pytest.raises(ValueError, match=f"{option}='{value}'.*{listed}"):
        load_dataset("iris", **{option: value})


def test_unknown_name_lists_known_names():
    with pytest.raises(UnknownNameError) as info:
        load_dataset("wine_ucii")
    message = str(info.value)
    assert "wine_ucii" in message
    for known in ("iris", "wine_uci", "splice", "mfeat_pix"):
        assert known in message


def test_data_dir_resolution(monkeypatch, tmp_path):
    import pooch

    monkeypatch.delenv("CCBENCH_DATA_DIR", raising=False)
    assert _uci.resolve_data_dir() == Path(pooch.os_cache("ccbench"))
    monkeypatch.setenv("CCBENCH_DATA_DIR", str(tmp_path / "env"))
    assert _uci.resolve_data_dir() == tmp_path / "env"
    assert _uci.resolve_data_dir(tmp_path / "arg") == tmp_path / "arg"


# -- download, verification, cache --------------------------------------------------

MANIFEST_COLUMNS = ["name", "file", "role", "sha256", "bytes", "n_rows", "verified", "uci_url", "origin", "notes"]


def _wine_file_bytes() -> bytes:
    """A wine.data in UCI's layout, written from scikit-learn's copy."""
    from sklearn.datasets import load_wine

    bunch = load_wine()
    lines = [",".join([str(c + 1)] + [repr(float(v)) for v in row]) for row, c in zip(bunch.data, bunch.target)]
    return ("\n".join(lines) + "\n").encode()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_manifest(path: Path, *, sha256: str, url: str, n_bytes: int) -> Path:
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t", lineterminator="\n")
        writer.writerow(MANIFEST_COLUMNS)
        writer.writerow(["wine_uci", "wine.data", "data", sha256, n_bytes, 178, "test", url, "test", "test"])
    return path


@pytest.fixture
def file_server():
    """Serve {url path: bytes} on 127.0.0.1 at a free port; count the requests."""
    content: dict[str, bytes] = {}
    requests: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            requests.append(self.path)
            body = content.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # keep pytest output clean
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield base, content, requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_download_verify_and_cache(file_server, tmp_path, monkeypatch):
    base, content, requests = file_server
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    data = _wine_file_bytes()
    content["/wine/wine.data"] = data
    manifest = _write_manifest(tmp_path / "MANIFEST.tsv", sha256=_sha(data), url=f"{base}/wine/wine.data",
                               n_bytes=len(data))
    cache = tmp_path / "cache"

    first = load_dataset("wine_uci", data_dir=cache, manifest=manifest)
    cached = cache / "wine_uci" / "wine.data"
    assert cached.read_bytes() == data
    assert requests == ["/wine/wine.data"]
    assert sorted(p.name for p in (cache / "wine_uci").iterdir()) == ["wine.data"]  # no temporary left

    hashed = []
    monkeypatch.setattr(_data_files, "_sha256", lambda path: hashed.append(path) or _sha(Path(path).read_bytes()))
    second = load_dataset("wine_uci", data_dir=cache, manifest=manifest)
    assert requests == ["/wine/wine.data"]  # served from the cache
    assert hashed == []  # verification remembered for this path, mtime and size
    assert np.array_equal(first.X, second.X) and np.array_equal(first.y, second.y)
    wine = load_dataset("wine")
    assert np.array_equal(first.X, wine.X) and np.array_equal(first.y, wine.y)


def test_download_with_wrong_hash_is_refused_and_not_cached(file_server, tmp_path, monkeypatch):
    base, content, requests = file_server
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    good = _wine_file_bytes()
    tampered = good.replace(b"14.23", b"14.24", 1)
    content["/wine.data"] = tampered
    manifest = _write_manifest(tmp_path / "MANIFEST.tsv", sha256=_sha(good), url=f"{base}/wine.data",
                               n_bytes=len(good))
    cache = tmp_path / "cache"
    with pytest.raises(DataIntegrityError) as info:
        load_dataset("wine_uci", data_dir=cache, manifest=manifest)
    message = str(info.value)
    assert "wine.data" in message and _sha(good) in message and _sha(tampered) in message
    assert not (cache / "wine_uci" / "wine.data").exists()
    assert list((cache / "wine_uci").iterdir()) == []  # nothing half-trusted left behind
    # The next attempt downloads again rather than trusting anything.
    with pytest.raises(DataIntegrityError):
        load_dataset("wine_uci", data_dir=cache, manifest=manifest)
    assert len(requests) == 2


def test_download_failure_names_the_file_and_the_fix(file_server, tmp_path, monkeypatch):
    base, _content, _requests = file_server
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    manifest = _write_manifest(tmp_path / "MANIFEST.tsv", sha256="0" * 64, url=f"{base}/gone", n_bytes=1)
    with pytest.raises(_uci.DataDownloadError, match=r"wine\.data.*CCBENCH_DATA_DIR"):
        load_dataset("wine_uci", data_dir=tmp_path / "cache", manifest=manifest)


@needs_data
def test_corrupt_present_file_is_refused_by_name(tmp_path):
    target = tmp_path / "wine_uci" / "wine.data"
    target.parent.mkdir()
    shutil.copyfile(Path(DATA_DIR, "wine_uci", "wine.data"), target)
    load_dataset("wine_uci", data_dir=tmp_path)  # verified and remembered
    data = bytearray(target.read_bytes())
    data[5] = ord("9") if data[5] != ord("9") else ord("8")
    target.write_bytes(bytes(data))
    os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 1_000_000))
    expected = read_manifest()["wine_uci"][0].sha256
    with pytest.raises(DataIntegrityError) as info:
        load_dataset("wine_uci", data_dir=tmp_path)
    message = str(info.value)
    assert str(target) in message and expected in message and _sha(bytes(data)) in message
    assert "CCBENCH_DATA_DIR" in message and "Delete" in message


def test_unparsable_file_is_refused_by_name(tmp_path):
    data = _wine_file_bytes().replace(b"\n", b",extra\n", 1)  # a ragged first line
    manifest = _write_manifest(tmp_path / "MANIFEST.tsv", sha256=_sha(data), url="http://127.0.0.1:9/x",
                               n_bytes=len(data))
    target = tmp_path / "wine_uci" / "wine.data"
    target.parent.mkdir()
    target.write_bytes(data)
    with pytest.raises(DataParseError, match=r"wine\.data.*line 2 has 14 fields, expected 15"):
        load_dataset("wine_uci", data_dir=tmp_path, manifest=manifest)


def test_non_numeric_value_is_refused_by_name(tmp_path):
    data = _wine_file_bytes().replace(b"14.23", b"14.2x", 1)
    manifest = _write_manifest(tmp_path / "MANIFEST.tsv", sha256=_sha(data), url="http://127.0.0.1:9/x",
                               n_bytes=len(data))
    (tmp_path / "wine_uci").mkdir()
    (tmp_path / "wine_uci" / "wine.data").write_bytes(data)
    with pytest.raises(DataParseError, match=r"wine\.data: file column 1: non-numeric value '14.2x'"):
        load_dataset("wine_uci", data_dir=tmp_path, manifest=manifest)


def test_digits_is_scikit_learns_image_set_with_its_declared_shape():
    """``digits`` (issue 41: the image set the SRCP report uses in place of Scene / Corel) loads
    scikit-learn's copy, as its spec declares: 1797 images of 8 x 8 grey levels 0..16, ten classes
    of 174-183 images each, labels 0..9 in the digits' own order."""
    from sklearn.datasets import load_digits

    spec = get_dataset_spec("digits")
    ds = load_dataset("digits")
    X, y = load_digits(return_X_y=True)
    assert (spec.source, spec.n_samples, spec.n_features, spec.n_classes) == ("sklearn", 1797, 64, 10)
    assert ds.X.shape == (spec.n_samples, spec.n_features) and ds.n_classes == spec.n_classes
    np.testing.assert_array_equal(ds.X, X)
    np.testing.assert_array_equal(ds.y, y)
    assert ds.X.min() == 0 and ds.X.max() == 16
    assert np.bincount(ds.y).min() == 174 and np.bincount(ds.y).max() == 183
