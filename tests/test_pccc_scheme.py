"""PCCC's constraint scheme ``pccc_random_pairs`` (plugins/datasets/pccc_supervision.py, PCCC-Data's
``generate_hard_constraints``): its counts against PCCC's collection-1 files and Table W1, PCCC's own iris
and wine sets pair for pair from seed 24 in KEEL's row order, and the invariants of the draw."""

from __future__ import annotations

import csv
import gzip
import json
import math
import os

import numpy as np
import pytest

from ccbench import registry

MODULE = "ccbench_plugins.datasets.pccc_supervision"
LEVELS = (0.05, 0.1, 0.15, 0.2)


@pytest.fixture(autouse=True)
def _plugin():
    registry.load_plugins([MODULE])  # also an entry point; named here so the tests never depend on the install


def _scheme():
    return registry.get_scheme_spec("pccc_random_pairs").func


def _needs_pccc():
    from ccbench_plugins.datasets.pccc import pccc_dir

    root = pccc_dir()  # $CCBENCH_PCCC_DIR, else <parent of $CCBENCH_DATA_DIR>/pccc
    if root is None or not (root / "pccc_col1_constraint_counts.tsv").exists():
        pytest.skip(f"PCCC's files are not here ({root}); set CCBENCH_DATA_DIR (shared/pccc beside it) "
                    f"or CCBENCH_PCCC_DIR")
    return root


def _table_w1(root):
    return {(r["dataset"], int(r["level_pct"])): (int(r["n_ml"]), int(r["n_cl"]))
            for r in csv.DictReader(open(root / "pccc_col1_constraint_counts.tsv"), delimiter="\t")}


def _file_size_and_pairs(path):
    """(n, number of pairs) of a PCCC constraint matrix: symmetric, diagonal 1, so (nonzeros - n) / 2."""
    with gzip.open(path, "rt") as fh:
        rows = [r.split() for r in fh.read().split("\n") if r.strip()]
    n = len(rows)
    assert all(len(r) == n for r in rows), f"{path.name} is not square"
    tokens = [t for r in rows for t in r]
    assert set(tokens) <= {"-1", "0", "1"}, f"{path.name} holds other entries than -1, 0, 1"
    return n, (n * n - tokens.count("0") - n) // 2


def test_counts_equal_pccc_files_and_table_w1_for_every_collection_1_set():
    root = _needs_pccc()
    table = _table_w1(root)
    scheme = _scheme()
    checked = 0
    for (name, pct), (n_ml, n_cl) in sorted(table.items()):
        n, in_file = _file_size_and_pairs(root / "constraint_sets" / f"{name}({pct / 100:.2f}).txt.gz")
        assert in_file == n_ml + n_cl, f"{name} {pct} %: the file and Table W1 disagree"
        cons = scheme(np.arange(n) % 3, fraction=pct / 100, rng=np.random.default_rng(pct))
        assert len(cons) == in_file == math.comb(math.ceil(n * pct / 100), 2), f"{name} at {pct} %"
        checked += 1
    assert checked == 36  # 9 sets x 4 levels


def _keel_sets(root):
    return json.loads((root / "pccc_iris_wine_keel.json").read_text())


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_seed_24_in_keel_order_gives_pcccs_iris_and_wine_sets_pair_for_pair(name):
    root = _needs_pccc()
    entry = _keel_sets(root)[name]
    y = np.asarray(entry["keel_labels"])
    table = _table_w1(root)
    for level, expected in entry["constraint_sets_keel_index"].items():
        cons = _scheme()(y, fraction=float(level), legacy_seed=24, rng=np.random.default_rng(0))
        np.testing.assert_array_equal(cons.must_link, np.asarray(expected["ml"]).reshape(-1, 2))
        np.testing.assert_array_equal(cons.cannot_link, np.asarray(expected["cl"]).reshape(-1, 2))
        assert (cons.n_must_link, cons.n_cannot_link) == table[(name, round(float(level) * 100))]


def test_the_harness_route_on_keel_iris_gives_pcccs_set():
    """The registered scheme with the yaml's keys, through the harness's draw, on the KEEL copy of iris."""
    root = _needs_pccc()
    if not os.environ.get("CCBENCH_DATA_DIR"):
        pytest.skip("CCBENCH_DATA_DIR is not set")
    from ccbench import load_dataset
    from ccbench.running.protocol import draw_supervision

    expected = _keel_sets(root)["iris"]["constraint_sets_keel_index"]["0.15"]
    y = load_dataset("keel_iris").y
    cons, _ = draw_supervision(y, {"name": "pccc_random_pairs", "fraction": 0.15, "legacy_seed": 24},
                               {"name": "none", "rate": 0.0}, np.random.default_rng(5))
    np.testing.assert_array_equal(cons.must_link, np.asarray(expected["ml"]))
    np.testing.assert_array_equal(cons.cannot_link, np.asarray(expected["cl"]))


@pytest.mark.parametrize("fraction", [0.05, 0.1, 0.2, 0.5])
def test_invariants_ceil_unique_off_diagonal_and_must_link_iff_same_class(fraction):
    n = 101  # 101 x 0.05 = 5.05 and 101 x 0.1 = 10.1: ceil and round differ
    y = np.random.default_rng(3).integers(0, 4, size=n)
    cons = _scheme()(y, fraction=fraction, rng=np.random.default_rng(11))
    assert len(cons) == math.comb(math.ceil(n * fraction), 2)  # ceil, not round; none merged away
    pairs = np.concatenate([cons.must_link, cons.cannot_link])
    assert np.all(pairs[:, 0] < pairs[:, 1])
    assert len(np.unique(pairs, axis=0)) == len(pairs)
    assert np.all(y[cons.must_link[:, 0]] == y[cons.must_link[:, 1]])
    assert np.all(y[cons.cannot_link[:, 0]] != y[cons.cannot_link[:, 1]])


def test_the_draw_keeps_the_lexicographically_first_unique_off_diagonal_pairs():
    """A hand-made stream, m = 2 pairs of 5 points. Round 1: i = (3, 2), j = (1, 2) -> {(1, 3)} ((2, 2) dropped);
    round 2 draws m = 2 again (not the shortfall): i = (4, 0), j = (3, 2) -> (3, 4), (0, 2). PCCC keeps the first
    two of {(0, 2), (1, 3), (3, 4)} in lexicographic order, not in drawing order ((1, 3), (3, 4))."""
    from ccbench_plugins.datasets.pccc_supervision import _draw_pairs

    pool = iter([3, 2, 1, 2, 4, 0, 3, 2])
    pairs = _draw_pairs(5, 2, lambda n, size: np.array([next(pool) for _ in range(size)]))
    np.testing.assert_array_equal(pairs, [[0, 2], [1, 3]])


def test_seeding_same_rng_same_pairs_and_no_global_state():
    y = np.arange(60) % 3
    np.random.seed(1)
    before = np.random.get_state()[1].copy()
    a = _scheme()(y, fraction=0.2, rng=np.random.default_rng(9))
    b = _scheme()(y, fraction=0.2, rng=np.random.default_rng(9))
    c = _scheme()(y, fraction=0.2, rng=np.random.default_rng(10))
    legacy = _scheme()(y, fraction=0.2, legacy_seed=24, rng=np.random.default_rng(9))
    np.testing.assert_array_equal(np.random.get_state()[1], before)  # neither route touches numpy's global stream
    assert a == b and a != c and a != legacy


def test_fewer_than_two_points_give_no_pairs_and_bad_parameters_are_named():
    y = np.arange(30) % 2
    assert len(_scheme()(y, fraction=0.03, rng=np.random.default_rng(0))) == 0  # ceil(0.9) = 1 point
    with pytest.raises(ValueError, match=r"fraction must be a number in \[0, 1\]"):
        _scheme()(y, fraction=1.5, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="legacy_seed must be null"):
        _scheme()(y, fraction=0.1, legacy_seed=-1, rng=np.random.default_rng(0))
