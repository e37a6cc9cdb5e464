"""tests/benchmarks/machine_check.py: the same trials paired across two machines, from a shipped folder or a sweep."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/benchmarks as a package

from benchmarks.machine_check import main  # noqa: E402


def _cells(cpu: str, seconds: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"config_hash": ["a", "a", "b"], "trial": [0, 1, 0], "status": "ok",
                         "method.name": ["scap", "scap", "cobs"], "method.n_clusters": "true_k",
                         "dataset.name": "iris", "trial_cpu_time": seconds, "ari": [0.5, 0.6, 0.7], "env.cpu": cpu})


def _sweep(folder: Path, rows: pd.DataFrame) -> Path:
    (folder / "job").mkdir(parents=True)
    rows.to_parquet(folder / "job" / "results.parquet")
    return folder


def test_a_sweep_made_elsewhere_pairs_trial_by_trial_like_a_shipped_folder(tmp_path, capsys):
    here = _sweep(tmp_path / "here", _cells("Intel", [2.0, 4.0, 1.0]))
    other = _cells("AMD", [1.0, 2.0, 3.0])
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    other.to_parquet(shipped / "rows.parquet")
    sweep = _sweep(tmp_path / "sweep", other)
    printed = []
    for elsewhere in (shipped, sweep):
        assert main(["--rows", str(here), "--shipped", str(elsewhere)]) == 0
        printed.append(capsys.readouterr().out)
    assert printed[0] == printed[1]
    assert "median ratio over the 2 cells: 1.75 (range 0.50-3.00)" in printed[0]  # scap_k 0.5, cobs_k 3.0
    assert "here:    Intel" in printed[0] and "shipped: AMD" in printed[0]


def test_a_folder_without_rows_is_named_with_exit_2(tmp_path, capsys):
    here = _sweep(tmp_path / "here", _cells("Intel", [2.0, 4.0, 1.0]))
    for argv in (["--rows", str(here), "--shipped", str(tmp_path / "nope")],
                 ["--rows", str(tmp_path / "nope"), "--shipped", str(here)]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2 and f"no such results file or directory: {tmp_path / 'nope'}" in capsys.readouterr().err
