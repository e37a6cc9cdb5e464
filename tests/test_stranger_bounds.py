"""A stranger's rows must neither replace the reader's, nor hang the reader, nor leave a half-written folder
(issue 54, "A stranger's rows ..."). Hand-sized frames and files only: every test here runs in well under 3 s."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ccbench import reporting
from ccbench.reporting import shipped as shp


def _rows(method: str, ari: float, stamp: str, n: int = 3, source: str = "mine") -> pd.DataFrame:
    """``n`` rows of one cell (iris, 20 pairs): ``(config_hash, trial)`` fixed by ``method`` and the trial."""
    return pd.DataFrame({
        "config_hash": [f"h_{method}"] * n, "trial": np.arange(n), "timestamp": [stamp] * n,
        "method.name": [method] * n, "dataset.name": ["iris"] * n, "constraints.name": ["random_pairs"] * n,
        "constraints.n_constraints": [20] * n, "noise.name": ["none"] * n, "status": ["ok"] * n,
        "ari": [ari] * n, "seed": [0] * n, "n_trials": [n] * n, "source": [f"/tmp/{source}/job_{method}"] * n,
    })


# -- a merge never replaces the reader's rows ---------------------------------------------------------------


def test_a_stranger_reusing_my_config_hash_with_a_later_timestamp_does_not_replace_my_rows():
    mine = _rows("kmeans", 0.730, "2026-01-01T00:00:00")
    theirs = pd.concat([_rows("kmeans", 0.99, "2030-01-01T00:00:00", source="x"),  # my identity, later
                        _rows("cop_kmeans", 0.5, "2030-01-01T00:00:00", source="x")], ignore_index=True)
    merged, notes = reporting.merge_with(mine, theirs, new_name="MINE", shipped_name="STRANGER")
    kmeans = merged[merged["method.name"] == "kmeans"]
    assert len(kmeans) == 3 and (kmeans["ari"] == 0.730).all()  # mine, all three, not the stranger's 0.99
    assert len(merged) == 6  # their three cop_kmeans rows join mine
    assert merged.attrs["shipped_rows"] == 3 and merged.attrs["shipped_clashes"] == 3
    (note,) = [n for n in notes if "yours are kept" in n]
    assert note.startswith("3 row(s) of STRANGER have the (config_hash, trial) of rows of MINE") and "kmeans" in note


def test_a_clash_is_keyed_as_the_merge_keys_rows_trial_1_and_1_0_are_one_trial():
    mine = _rows("kmeans", 0.730, "2026-01-01T00:00:00")
    theirs = _rows("kmeans", 0.99, "2030-01-01T00:00:00").astype({"trial": float})
    theirs.loc[2, "config_hash"] = "h_other"  # one row of another config: not a clash
    merged, _ = reporting.merge_with(mine, theirs)
    assert merged.attrs["shipped_clashes"] == 2 and merged.attrs["shipped_rows"] == 1
    assert sorted(merged["ari"]) == [0.73, 0.73, 0.73, 0.99]


def test_the_page_counts_the_stranger_rows_kept_and_names_the_clash():
    from ccbench.reporting.leaderboard import sweep_coverage

    mine = _rows("kmeans", 0.730, "2026-01-01T00:00:00")
    theirs = pd.concat([_rows("kmeans", 0.99, "2030-01-01T00:00:00"), _rows("pck_means", 0.5, "2030")],
                       ignore_index=True)
    merged, _ = reporting.merge_with(mine, theirs)
    line = sweep_coverage([], mine, shipped=(["STRANGER"], merged.attrs["shipped_rows"],
                                             merged.attrs["shipped_clashes"]))
    assert "Ranked with the shipped rows of STRANGER (3 rows, not re-run" in line
    assert "3 of their rows had the (config_hash, trial) of rows of this sweep and were left out" in line


def test_the_re_shipped_rows_keep_the_readers_rows(tmp_path):
    mine = _rows("kmeans", 0.730, "2026-01-01T00:00:00")
    theirs = pd.concat([_rows("kmeans", 0.99, "2030-01-01T00:00:00"), _rows("pck_means", 0.5, "2030")],
                       ignore_index=True)
    merged, _ = reporting.merge_with(mine, theirs)
    shp.write_shipped(merged, tmp_path / "out", dirs=[tmp_path])
    back = shp.read_shipped(tmp_path / "out")
    assert sorted(back.loc[back["method.name"] == "kmeans", "ari"]) == [0.73] * 3
    assert sorted(back.loc[back["method.name"] == "pck_means", "ari"]) == [0.5] * 3


# -- bounds: what a folder can make the reader do ------------------------------------------------------------


def _union_by_listing(boxes, keys, by):
    """The jobs of the grids listed one by one (the route the coverage line took before): the reference."""
    import itertools

    jobs = set()
    for box in boxes:
        jobs |= set(itertools.product(*[[(k, v) for v in box[k]] for k in keys]))
    counts = {}
    for job in jobs:
        tag = dict(job)[by]
        counts[tag] = counts.get(tag, 0) + 1
    return counts


def test_counting_the_jobs_of_overlapping_grids_agrees_with_listing_them():
    from ccbench.reporting.leaderboard.coverage import count_jobs

    # the docstring's case: A = {a, b} x {x}, B = {b, c} x {x, y}: 2 + 4 - 1 = 5 jobs
    boxes = [{"dataset": {"a", "b"}, "m": {"x"}}, {"dataset": {"b", "c"}, "m": {"x", "y"}}]
    assert count_jobs(boxes, ["dataset", "m"]) == {None: 5}
    assert count_jobs(boxes, ["dataset", "m"], by="dataset") == {"a": 1, "b": 2, "c": 2}
    rng = np.random.default_rng(54)
    for _ in range(40):
        keys = ["dataset", "k1", "k2", "k3"][: rng.integers(2, 5)]
        boxes = [{k: set(rng.choice(list("abcde"), size=rng.integers(1, 4)).tolist()) for k in keys}
                 for _ in range(rng.integers(1, 6))]
        assert count_jobs(boxes, keys, by="dataset") == _union_by_listing(boxes, keys, "dataset")
        assert count_jobs(boxes, keys) == {None: sum(_union_by_listing(boxes, keys, "dataset").values())}


def _huge_grid(n_sets: int = 99) -> dict:
    """A grid of ``n_sets`` x 10**5 jobs, under the 10,000,000-job cap, written in a few kilobytes."""
    return {"dataset": [f"d{i}" for i in range(n_sets)], "method": ["kmeans"],
            **{f"k{j}": [str(v) for v in range(10)] for j in range(5)}}


def test_the_coverage_of_a_grid_of_ten_million_jobs_is_counted_not_listed(tmp_path, monkeypatch):
    import itertools

    from ccbench.reporting.leaderboard import sweep_coverage

    real, drawn = itertools.product, [0]

    def listed(*args, **kwargs):  # the old route listed every job: stop it long before memory runs out
        for job in real(*args, **kwargs):
            drawn[0] += 1
            if drawn[0] > 100_000:
                raise AssertionError("the coverage line lists the grid's jobs one by one")
            yield job

    rows = _rows("kmeans", 0.7, "2026").assign(**{"dataset.name": "d0"})
    shp.write_shipped(rows, tmp_path / "folder", grids=[_huge_grid()])
    assert (tmp_path / "folder" / "grid.json").stat().st_size < 4096
    monkeypatch.setattr(itertools, "product", listed)
    line = sweep_coverage([tmp_path / "folder"], rows)
    assert line.startswith("Sweep coverage: 1 of the 9,900,000 jobs")  # 99 x 10**5; the rows' job is one of them
    assert "Data sets complete: 0 of 99; partly done: d0 (1 of 100000 jobs); not started: d1, d10," in line


def test_grids_too_intricate_to_count_are_left_out_with_a_warning(monkeypatch):
    from ccbench.reporting.leaderboard import coverage

    monkeypatch.setattr(coverage, "MAX_COUNT_STEPS", 50)
    boxes = [{"dataset": {f"d{i}" for i in range(30)}, "m": {str(v) for v in range(30)}}]
    with pytest.raises(ValueError, match="MAX_COUNT_STEPS"):
        coverage.count_jobs(boxes, ["dataset", "m"])
