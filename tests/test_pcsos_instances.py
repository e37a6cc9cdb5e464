"""PC-SOS-SDP's instances (plugin ccbench_plugins.datasets.pcsos): data sets as stored, the scheme pcsos_file.

The files are external (shared/pcsos, located as the plugin does: $CCBENCH_PCSOS_DIR, else beside the data
dir); every test that reads them is skipped with the reason when they are absent. Each property is checked
by a second route: the files are parsed here with gzip and str.split, never with the plugin's reader.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from ccbench import registry
from ccbench.datasets import DataIntegrityError, load_dataset
from ccbench_plugins.datasets import pcsos

ROOT = pcsos.pcsos_dir()
pytestmark = pytest.mark.skipif(
    ROOT is None or not (ROOT / "SHA256SUMS").is_file() or not os.environ.get("CCBENCH_DATA_DIR"),
    reason=f"PC-SOS-SDP's files not found at {ROOT} (set CCBENCH_DATA_DIR to shared/datasets, or "
           f"{pcsos.PCSOS_DIR_ENV} to shared/pcsos): they are external, never in the repository",
)
SETS = sorted(pcsos.CONFIGURATIONS)
EXPERIMENT = Path(__file__).parents[1] / "conf" / "experiment" / "pcsos.yaml"


def _lines(path: Path) -> list[tuple[str, int, int]]:
    """(kind, i, j) of every line, read here independently of the plugin."""
    with gzip.open(path, "rt") as fh:
        return [(kind, int(i), int(j)) for kind, i, j in (line.split() for line in fh if line.strip())]


def _files(name: str):
    """(configuration index, replicate, a, b, path) of the set's 30 files."""
    for c, (a, b) in enumerate(pcsos.CONFIGURATIONS[name]):
        for r in pcsos.REPLICATES:
            yield c, r, a, b, ROOT / "constraints" / name / f"ml_{a}_cl_{b}_{r}.txt.gz"


def _labels(name: str) -> np.ndarray:
    return load_dataset(f"pcsos_{name}").y


@pytest.mark.parametrize("name", SETS)
def test_counts_per_file_are_the_file_names_minus_duplicates(name):
    y = _labels(name)
    for c, r, a, b, path in _files(name):
        lines = _lines(path)
        ml = {frozenset(p[1:]) for p in lines if p[0] == "ML"}
        cl = {frozenset(p[1:]) for p in lines if p[0] == "CL"}
        assert sum(p[0] == "ML" for p in lines) == a and sum(p[0] == "CL" for p in lines) == b, path
        cons = pcsos.pcsos_file(y, f"pcsos_{name}", c, r)
        assert (cons.n_must_link, cons.n_cannot_link) == (len(ml), len(cl)), path
        assert {frozenset(map(int, p)) for p in cons.must_link} == ml
        assert {frozenset(map(int, p)) for p in cons.cannot_link} == cl


@pytest.mark.parametrize("name", SETS)
def test_every_pair_agrees_with_the_labels(name):
    y = _labels(name)
    assert len(np.unique(y)) == pcsos.SHAPES[name][2]
    for c, r, _, _, path in _files(name):
        cons = pcsos.pcsos_file(y, f"pcsos_{name}", c, r)
        assert (y[cons.must_link[:, 0]] == y[cons.must_link[:, 1]]).all(), path
        assert (y[cons.cannot_link[:, 0]] != y[cons.cannot_link[:, 1]]).all(), path


def test_a_disagreeing_pair_is_named_by_file_and_line():
    y = _labels("iris").copy()
    path = ROOT / "constraints" / "iris" / "ml_25_cl_25_0.txt.gz"
    lines = _lines(path)
    point = lines[7][1]
    y[point] = (y[point] + 1) % 3  # a label error at one point of the file's 8th line
    first = next(n for n, (kind, i, j) in enumerate(lines, 1) if (y[i] == y[j]) != (kind == "ML"))
    with pytest.raises(ValueError, match=rf"ml_25_cl_25_0\.txt\.gz line {first}: "):
        pcsos.pcsos_file(y, "pcsos_iris", "ml_25_cl_25", 0)


@pytest.mark.parametrize("name", SETS)
def test_reading_the_files_one_based_is_refused(name, monkeypatch):
    # README: read 1-based, pairs leave 0..n-1 or disagree with the labels; the scheme must say so
    y = _labels(name)
    monkeypatch.setattr(pcsos, "INDEX_BASE", 1)
    refused = 0
    for c, r, _, _, _ in _files(name):
        try:
            pcsos.pcsos_file(y, f"pcsos_{name}", c, r)
        except ValueError as exc:
            assert re.search(r"line \d+: .*(outside|disagree)", str(exc))
            refused += 1
    assert refused >= 20  # README's counts: 20-29 of each set's 30 files hold a pair that gives it away


def test_a_tampered_file_is_refused_by_its_checksum(tmp_path, monkeypatch):
    files = ["SHA256SUMS", "datasets/glass.zip", "constraints/glass/ml_25_cl_25_0.txt.gz"]
    intact, tampered = tmp_path / "intact", tmp_path / "tampered"
    for folder in (intact, tampered):
        for rel in files:
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / rel, folder / rel)
    for rel in files[1:]:  # one byte changed in the zip and in the constraint file
        data = bytearray((tampered / rel).read_bytes())
        data[len(data) // 2] ^= 0x01
        (tampered / rel).write_bytes(bytes(data))
    monkeypatch.setenv(pcsos.PCSOS_DIR_ENV, str(intact))
    y = load_dataset("pcsos_glass").y  # the intact copy is accepted
    assert pcsos.pcsos_file(y, "pcsos_glass", 2, 0).n_must_link > 0
    monkeypatch.setenv(pcsos.PCSOS_DIR_ENV, str(tampered))
    with pytest.raises(DataIntegrityError, match=r"glass\.zip failed its checksum"):
        load_dataset("pcsos_glass")
    with pytest.raises(DataIntegrityError, match=r"ml_25_cl_25_0\.txt\.gz failed its checksum"):
        pcsos.pcsos_file(y, "pcsos_glass", 2, 0)
    # a SHA256SUMS rewritten to match the tampered file is refused by the sum pinned in the plugin
    sums = tampered / "SHA256SUMS"
    sums.write_text(sums.read_text().replace("constraints/glass/ml_25_cl_25_0.txt.gz",
                                              "constraints/glass/ml_25_cl_25_0.txt.gz "))
    with pytest.raises(DataIntegrityError, match=r"SHA256SUMS failed its checksum"):
        pcsos.pcsos_file(y, "pcsos_glass", 2, 0)


def test_glass_is_read_as_stored_each_column_spanning_minus_one_to_one():
    X = load_dataset("pcsos_glass").X
    assert X.shape == (214, 9)
    assert np.allclose(X.min(axis=0), -1.0, atol=1e-12) and np.allclose(X.max(axis=0), 1.0, atol=1e-12)
    raw = load_dataset("glass").X  # the UCI columns it was scaled from (README: 4e-14)
    np.testing.assert_allclose(X, 2 * (raw - raw.min(0)) / (raw.max(0) - raw.min(0)) - 1, atol=1e-10)


def test_labels_of_another_row_order_are_refused():
    X = load_dataset("pcsos_wine").X
    pcsos._check_rows("wine", X, X)
    with pytest.raises(ValueError, match="not the same row order"):
        pcsos._check_rows("wine", X, np.roll(X, 1, axis=0))
    iris, uci = load_dataset("pcsos_iris").X, load_dataset("iris_uci").X
    pcsos._check_rows("iris", iris, uci)  # differs on rows 34 and 37 only: scikit-learn's corrections
    assert np.flatnonzero((iris != uci).any(axis=1)).tolist() == [34, 37]
    uci = uci.copy()
    uci[0, 0] += 0.1
    with pytest.raises(ValueError, match=r"rows \[0\]"):
        pcsos._check_rows("iris", iris, uci)


def test_configuration_by_index_or_name_and_bad_values_refused():
    y = _labels("ecoli")
    by_index = pcsos.pcsos_file(y, "pcsos_ecoli", 3, 4)
    by_name = pcsos.pcsos_file(y, "pcsos_ecoli", "ml_75_cl_75", 4)
    assert np.array_equal(by_index.must_link, by_name.must_link)
    assert np.array_equal(by_index.cannot_link, by_name.cannot_link)
    for bad in ({"configuration": 6}, {"configuration": "ml_25_cl_25"}, {"replicate": 5}):
        with pytest.raises(ValueError, match="pcsos_file"):
            pcsos.pcsos_file(y, "pcsos_ecoli", **{"configuration": 0, "replicate": 0, **bad})
    with pytest.raises(ValueError, match="not a PC-SOS-SDP data set"):
        pcsos.pcsos_file(_labels("iris"), "iris_uci")


def test_the_experiment_covers_every_file_of_every_registered_set():
    params = yaml.safe_load(EXPERIMENT.read_text())["hydra"]["sweeper"]["params"]
    datasets = params["dataset"].split(",")
    assert set(datasets) == {d.name for d in registry.list_datasets() if d.name.startswith("pcsos_")}
    grid = {pcsos._file_name(d.removeprefix("pcsos_"), int(c), int(r)) for d in datasets
            for c in str(params["constraints.configuration"]).split(",")
            for r in str(params["constraints.replicate"]).split(",")}
    listed = {line.split()[1] for line in (ROOT / "SHA256SUMS").read_text().splitlines()
              if line.split()[1].split("/")[1:2] in ([s] for s in SETS)}
    assert len(grid) == 150 and grid == listed
