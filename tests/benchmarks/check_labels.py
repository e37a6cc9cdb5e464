"""Check a leaderboard's stored labels against its rows: each partition's ARI must be the row's ``ari``.

    python tests/benchmarks/check_labels.py reports/leaderboard      # a shipped folder
    python tests/benchmarks/check_labels.py runs/leaderboard         # a sweep directory

A label array that gives another ARI than its row belongs to another run of the trial (a job killed
between writing its rows and its labels, before the harness wrote labels first). Prints the counts
and every disagreeing (job, trial); exits 1 when there is one. Needs the data sets
(``CCBENCH_DATA_DIR``), as the rows' ``ari`` is on all points of the standardised set.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from ccbench.datasets import load_dataset
from ccbench.metrics import adjusted_rand
from ccbench.reporting import load
from ccbench.reporting.leaderboard._rerun_rows import shadowed_reruns
from ccbench.reporting.shipped import is_shipped, job_path, read_shipped_labels
from ccbench.running.labels_store import read_labels


def _labels(folder: Path, rows: pd.DataFrame) -> pd.DataFrame:
    if is_shipped(folder):
        return read_shipped_labels(folder)
    found = [(chash, int(t), arrays) for job in rows["source"].dropna().unique()
             for name, arrays in read_labels(Path(job)).items() for chash, _, t in [name.rpartition("_")]]
    return pd.DataFrame(found, columns=["config_hash", "trial", "labels"])


def disagreements(folder) -> tuple[int, int, list]:
    """(ok rows, ok rows with labels, [(job, trial, row ari, labels' ari)] where they differ)."""
    folder = Path(folder)
    rows = load(folder)
    ok = rows[rows["status"] == "ok"]
    # a larger-budget re-run's row shares its board twin's key; the partition shipped for the key is the board's
    # when the board's trial is ok (ccbench.reporting.shipped), so that is the row it must score as
    ok = ok[~shadowed_reruns(rows).reindex(ok.index).to_numpy()]
    joined = ok.merge(_labels(folder, ok), on=["config_hash", "trial"])
    bad = []
    for (name, preprocess), group in joined.groupby(["dataset.name", "dataset.preprocess"]):
        y = load_dataset(name, preprocess=preprocess).y
        for source, trial, ari, labels in zip(group["source"], group["trial"], group["ari"], group["labels"]):
            found = adjusted_rand(y, np.asarray(labels)) if len(labels) == len(y) else np.nan
            if not np.isclose(found, ari, atol=1e-9):
                bad.append((Path(job_path(source)).name, int(trial), float(ari), float(found)))
    return len(ok), len(joined), bad


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a shipped folder or a sweep directory")
    args = parser.parse_args(argv)
    try:
        n_ok, n_labelled, bad = disagreements(args.folder)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    print(f"{n_ok:,} ok rows, {n_labelled:,} with labels, {len(bad)} whose labels give another ARI")
    for job, trial, ari, found in bad:
        print(f"  {job} trial {trial}: row ari {ari:.6f}, labels' ari {found:.6f}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
