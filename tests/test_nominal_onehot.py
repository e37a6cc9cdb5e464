"""Issue 38, item 8: unordered (nominal) attributes are one-hot encoded by default, so distances
between nucleotides (and other unordered values) no longer depend on an arbitrary code order."""

from __future__ import annotations

import hashlib
import itertools
import os
from pathlib import Path

import numpy as np
import pytest

from ccbench import load_dataset

DATA = os.environ.get("CCBENCH_DATA_DIR")
needs_data = pytest.mark.skipif(not DATA or not Path(DATA, "promoters").is_dir(),
                                reason="CCBENCH_DATA_DIR with the UCI files is not set")

#: (drop-mode shape with the default one-hot encoding, shape with nominal="codes")
SHAPES = {"promoters": ((106, 228), (106, 57)), "splice": ((3175, 240), (3175, 60)),
          "credit": ((653, 42), (653, 15)), "sick": ((1947, 32), (1947, 28)),
          "soybean_small": ((47, 44), (47, 35)),
          # two-valued or ordered attributes: unchanged
          "voting": ((232, 16), (232, 16)), "hepatitis": ((80, 19), (80, 19)), "zoo": ((101, 16), (101, 16)),
          "balance": ((625, 4), (625, 4)), "breast_cancer_wisconsin": ((683, 9), (683, 9))}


@needs_data
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_encoded_shapes_per_set(name):
    onehot, codes = SHAPES[name]
    ds = load_dataset(name)
    assert ds.X.shape == onehot
    assert load_dataset(name, nominal="codes").X.shape == codes
    from ccbench import registry

    assert registry.get_dataset_spec(name).n_features == onehot[1]


@needs_data
def test_one_hot_columns_are_indicators():
    X = load_dataset("promoters").X
    assert set(np.unique(X)) == {0.0, 1.0}
    assert (X.reshape(106, 57, 4).sum(axis=2) == 1).all()  # one base per position
    # voting under missing="category": ?/n/y are three values of an unordered vote -> three columns
    assert load_dataset("voting", missing="category").X.shape == (435, 48)
    assert load_dataset("voting", missing="category", nominal="codes").X.shape == (435, 16)


def _promoters_dir(tmp_path: Path, sequences: list[str]) -> tuple[Path, Path]:
    """A data dir and manifest holding a promoters.data file of ``sequences``."""
    text = "".join(f"{'+-'[i % 2]},S{i},\t\t{s}\n" for i, s in enumerate(sequences))
    (tmp_path / "promoters").mkdir()
    (tmp_path / "promoters" / "promoters.data").write_text(text)
    digest = hashlib.sha256(text.encode()).hexdigest()
    manifest = tmp_path / "MANIFEST.tsv"
    manifest.write_text("name\tfile\trole\tsha256\tbytes\tn_rows\tverified\tuci_url\torigin\tnotes\n"
                        f"promoters\tpromoters.data\tdata\t{digest}\t{len(text)}\t{len(sequences)}\ttest\t"
                        f"https://example.invalid/promoters.data\ttest\ttest\n")
    return tmp_path, manifest


def test_one_base_apart_is_one_distance_whatever_the_bases(tmp_path):
    base = "acgt" * 14 + "a"  # 57 letters
    sequences = [base]
    for pos in (0, 1, 30):
        for letter in "acgt":
            if letter != base[pos]:
                sequences.append(base[:pos] + letter + base[pos + 1:])
    data_dir, manifest = _promoters_dir(tmp_path, sequences)
    X = load_dataset("promoters", data_dir=data_dir, manifest=manifest).X
    d = np.linalg.norm(X[1:] - X[0], axis=1)
    assert np.allclose(d, np.sqrt(2.0)), d  # a->c, a->g, a->t, c->t, ...: all the same distance
    # and any two one-base variants at the same position are equally far apart too
    for i, j in itertools.combinations(range(1, 4), 2):
        assert np.isclose(np.linalg.norm(X[i] - X[j]), np.sqrt(2.0))
    # the old integer codes put 'a' three times farther from 't' than from 'c'
    codes = load_dataset("promoters", data_dir=data_dir, manifest=manifest, nominal="codes").X
    assert len(np.unique(np.round(np.linalg.norm(codes[1:4] - codes[0], axis=1), 9))) == 3
