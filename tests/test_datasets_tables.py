"""Data beyond the 24 sets: ``dataset=csv`` and ``dataset=openml`` (a fake local cache, never the network)."""

from __future__ import annotations

import gzip
import hashlib
import json
import urllib.error
import urllib.request

import numpy as np
import pytest

from ccbench.datasets import (
    DataDownloadError,
    DataIntegrityError,
    DataParseError,
    load_dataset,
)
from ccbench.running import protocol

CSV = """sepal,petal,colour,species
5.1,1.4,red,setosa
4.9,1.3,red,setosa
6.3,4.9,blue,virginica
5.8,?,blue,virginica
7.0,4.7,green,versicolor
6.4,4.5,,versicolor
"""


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "flowers.csv"
    path.write_text(CSV)
    return path


def test_csv_label_by_name_or_position_gives_the_same_data(table):
    by_name = load_dataset("csv", path=str(table), target="species", categorical="onehot")
    by_index = load_dataset("csv", path=str(table), target=3, categorical="onehot")
    by_last = load_dataset("csv", path=str(table), target=-1, categorical="onehot")
    for other in (by_index, by_last):
        np.testing.assert_array_equal(by_name.X, other.X)
        np.testing.assert_array_equal(by_name.y, other.y)
    # rows 4 and 6 have a missing cell: dropped; classes coded in sorted order
    assert by_name.X.shape == (4, 2 + 3)
    assert by_name.meta["classes"] == ["setosa", "versicolor", "virginica"]
    np.testing.assert_array_equal(by_name.y, [0, 0, 2, 1])
    assert by_name.meta["features"] == ["sepal", "petal", "colour=blue", "colour=green", "colour=red"]
    np.testing.assert_array_equal(by_name.X[:, 2:], [[0, 0, 1], [0, 0, 1], [1, 0, 0], [0, 1, 0]])


def test_csv_non_numeric_features_are_refused_by_name_unless_asked(table):
    with pytest.raises(DataParseError, match=r"non-numeric feature column\(s\) \['colour'\].*categorical=onehot"):
        load_dataset("csv", path=str(table), target="species")
    codes = load_dataset("csv", path=str(table), target="species", categorical="codes")
    np.testing.assert_array_equal(codes.X[:, 2], [2, 2, 0, 1])  # blue=0, green=1, red=2


def test_csv_missing_impute_fills_means_and_modes(table):
    ds = load_dataset("csv", path=str(table), target="species", categorical="codes", missing="impute")
    assert ds.X.shape == (6, 3)
    assert ds.X[3, 1] == pytest.approx(np.mean([1.4, 1.3, 4.9, 4.7, 4.5]))
    assert ds.X[5, 2] == 0  # blue and red twice each: the smallest, blue


def test_csv_honours_preprocess(table):
    ds = load_dataset("csv", path=str(table), target="species", categorical="codes", preprocess="minmax_1_2")
    assert ds.X.min(axis=0).tolist() == [1, 1, 1] and ds.X.max(axis=0).tolist() == [2, 2, 2]


def test_csv_clear_errors(table, tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_dataset("csv", path=str(tmp_path / "nope.csv"))
    with pytest.raises(DataParseError, match="'species_' is not a column"):
        load_dataset("csv", path=str(table), target="species_")
    with pytest.raises(DataParseError, match="target=7 is out of range"):
        load_dataset("csv", path=str(table), target=7)
    with pytest.raises(DataIntegrityError, match="flowers.csv failed its checksum"):
        load_dataset("csv", path=str(table), target="species", categorical="codes", sha256="0" * 64)
    good = hashlib.sha256(table.read_bytes()).hexdigest()
    assert load_dataset("csv", path=str(table), target="species", categorical="codes", sha256=good).n_samples == 4


def test_csv_relative_path_is_found_under_the_data_dir(table, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path.parent)
    ds = load_dataset("csv", path="flowers.csv", target="species", categorical="codes", data_dir=tmp_path)
    assert ds.n_samples == 4


def test_csv_seed_ignores_where_the_file_lives_but_not_the_label_column():
    def seed(**options):
        cell = {"dataset": {"name": "csv", "target": -1, **options}, "constraints": {"name": "none"},
                "noise": {"name": "none"}}
        return protocol.trial_seed(cell, 0)

    assert seed(path="/a/x.csv") == seed(path="/cluster/x.csv", preprocess="standardize", sha256="ab")
    assert seed(path="/a/x.csv") != seed(path="/a/x.csv", missing="impute")


# -- OpenML ---------------------------------------------------------------------------------

ARFF = """@RELATION tiny
@ATTRIBUTE width NUMERIC
@ATTRIBUTE shape {round,square}
@ATTRIBUTE class {a,b}
@DATA
1.0,round,a
1.5,round,a
3.0,square,b
3.5,?,b
"""


def _gz(path, payload: bytes):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wb") as fh:
        fh.write(payload)


def _fake_openml_cache(root, data_id=4242, arff=ARFF):
    """The files scikit-learn's fetch_openml caches, under ``<root>/openml/openml.org/``."""
    site = root / "openml" / "openml.org"
    md5 = hashlib.md5(arff.encode()).hexdigest()
    description = {"data_set_description": {
        "id": str(data_id), "name": "tiny", "version": "1", "format": "ARFF", "status": "active",
        "url": f"https://api.openml.org/data/v1/download/{data_id}/tiny.arff", "md5_checksum": md5,
        "description": "a fake", "default_target_attribute": "class"}}
    features = [
        {"index": "0", "name": "width", "data_type": "numeric"},
        {"index": "1", "name": "shape", "data_type": "nominal", "nominal_value": ["round", "square"]},
        {"index": "2", "name": "class", "data_type": "nominal", "nominal_value": ["a", "b"], "is_target": "true"},
    ]
    for f in features:
        f.setdefault("is_target", "false")
        f.update(is_ignore="false", is_row_identifier="false", number_of_missing_values="0")
    qualities = {"data_qualities": {"quality": [{"name": "NumberOfInstances", "value": "4.0"}]}}
    _gz(site / f"api/v1/json/data/{data_id}.gz", json.dumps(description).encode())
    _gz(site / f"api/v1/json/data/features/{data_id}.gz", json.dumps({"data_features": {"feature": features}}).encode())
    _gz(site / f"api/v1/json/data/qualities/{data_id}.gz", json.dumps(qualities).encode())
    _gz(site / f"data/v1/download/{data_id}/tiny.arff.gz", arff.encode())
    return site


@pytest.fixture
def offline(monkeypatch):
    """Any attempt to reach the network fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"the network was used: {args[0] if args else kwargs}")

    import sklearn.datasets._openml as skopenml

    monkeypatch.setattr(skopenml, "urlopen", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def test_openml_reads_the_local_cache_offline(tmp_path, offline):
    _fake_openml_cache(tmp_path)
    ds = load_dataset("openml", data_id=4242, categorical="codes", data_dir=tmp_path)
    np.testing.assert_array_equal(ds.X, [[1.0, 0], [1.5, 0], [3.0, 1]])  # the row with '?' dropped
    np.testing.assert_array_equal(ds.y, [0, 0, 1])
    assert ds.meta["target"] == "class" and ds.meta["openml_name"] == "tiny"
    onehot = load_dataset("openml", data_id=4242, categorical="onehot", missing="impute", data_dir=tmp_path,
                          preprocess="standardize")
    assert onehot.X.shape == (4, 3) and np.allclose(onehot.X.mean(axis=0), 0)


def test_openml_nominal_features_need_a_choice(tmp_path, offline):
    _fake_openml_cache(tmp_path)
    with pytest.raises(DataParseError, match=r"\['shape'\].*categorical=onehot"):
        load_dataset("openml", data_id=4242, data_dir=tmp_path)


def test_openml_corrupt_cache_is_never_parsed(tmp_path, monkeypatch):
    """scikit-learn checks OpenML's md5, drops the bad copy and downloads again: offline, a clear error."""
    import sklearn.datasets._openml as skopenml

    site = _fake_openml_cache(tmp_path)
    _gz(site / "data/v1/download/4242/tiny.arff.gz", ARFF.replace("3.5", "9.5").encode())
    monkeypatch.setattr(skopenml, "urlopen", _no_network)
    monkeypatch.setattr(skopenml.time, "sleep", lambda s: None)  # no retry delays
    with pytest.raises(DataDownloadError, match="not intact"):
        load_dataset("openml", data_id=4242, categorical="codes", data_dir=tmp_path)


def _no_network(*args, **kwargs):
    raise urllib.error.URLError("no network (test)")


def test_openml_without_cache_or_network_says_what_to_run(tmp_path, monkeypatch):
    import sklearn.datasets._openml as skopenml

    monkeypatch.setattr(skopenml, "urlopen", _no_network)
    monkeypatch.setattr(skopenml.time, "sleep", lambda s: None)  # no retry delays
    with pytest.raises(DataDownloadError, match="ccbench fetch dataset=openml dataset.data_id=61"):
        load_dataset("openml", data_id=61, data_dir=tmp_path)


def test_fetch_fills_and_reads_the_openml_cache(tmp_path, offline, capsys, monkeypatch):
    from ccbench.running.cli import main

    _fake_openml_cache(tmp_path)
    monkeypatch.setenv("CCBENCH_DATA_DIR", str(tmp_path))
    assert main(["fetch", "dataset=openml", "dataset.data_id=4242", "dataset.categorical=codes"]) == 0
    assert "ok      OpenML data set 4242: 3 x 2, 2 classes" in capsys.readouterr().out
    # nominal features left at categorical=error: the run would fail, so fetch says so now
    assert main(["fetch", "dataset=openml", "dataset.data_id=4242"]) == 1
    assert "non-numeric feature column(s) ['shape']" in capsys.readouterr().err
