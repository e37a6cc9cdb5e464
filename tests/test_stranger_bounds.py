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
