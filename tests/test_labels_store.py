"""store_labels: a trial's partition beside its row (ccbench.running.labels_store), never another run's."""

from __future__ import annotations

import numpy as np

from ccbench.running import harness
from ccbench.running.labels_store import LABELS_FILE, entry, read_labels, write_labels
from ccbench.running.results import ResultsStore, read_results, write_results


def _cell(**extra):
    return {"dataset": {"name": "iris", "preprocess": "standardize"}, "method": {"name": "kmeans", "n_clusters": "true_k"},
            "constraints": {"name": "random_pairs", "n_constraints": 20}, "noise": {"name": "none"},
            "n_trials": 2, "metrics": ["ari"], "store_labels": True, **extra}


def test_a_trial_rerun_without_labels_drops_its_old_ones(tmp_path):
    write_labels(tmp_path, {"a_0": np.array([0, 1]), "a_1": np.array([1, 1])})
    write_labels(tmp_path, {}, drop=["a_0"])  # trial 0 re-ran and timed out: no partition of its own
    assert set(read_labels(tmp_path)) == {"a_1"}
    write_labels(tmp_path, {"a_1": np.array([0, 0])}, drop=["a_1"])  # replaced, not dropped
    assert list(read_labels(tmp_path)["a_1"]) == [0, 0]
    assert write_labels(tmp_path / "none", {}, drop=["a_0"]) is None  # nothing on disk: nothing written
    assert not (tmp_path / "none" / LABELS_FILE).exists()


def test_each_ok_row_is_added_after_its_labels_are_on_disk(tmp_path, monkeypatch):
    """Labels used to be written once, after the last trial: a job killed in between (a session's end)
    left ok rows, already flushed, without labels, and the resume never fitted them again."""
    seen = []
    add = ResultsStore.add

    def checked_add(self, row):
        if row["status"] == "ok":
            seen.append(entry(row["config_hash"], row["trial"]) in read_labels(tmp_path / "job"))
        add(self, row)

    monkeypatch.setattr(ResultsStore, "add", checked_add)
    harness.run_job(_cell(), out_dir=tmp_path / "job")
    assert seen == [True, True]


def test_a_resumed_trial_that_fails_keeps_no_labels_of_its_earlier_run(tmp_path, monkeypatch):
    """A retried trial that ends without a partition used to keep its earlier run's labels, which the
    leaderboard then shipped beside a row they did not belong to (26 timeout rows had labels)."""
    job = tmp_path / "job"
    rows = harness.run_job(_cell(), out_dir=job)
    chash = rows["config_hash"].iloc[0]
    assert set(read_labels(job)) == {entry(chash, 0), entry(chash, 1)}
    frame = read_results(job / "results.parquet")
    frame.loc[frame["trial"] == 1, ["status", "error"]] = ["error", "RuntimeError: planted"]  # retried on resume
    write_results(frame, job / "results.parquet")
    monkeypatch.setattr(harness, "_run_trial", lambda cell, setup, t: {"status": "error", "error": "RuntimeError: again"})
    harness.run_job(_cell(), out_dir=job)
    assert set(read_labels(job)) == {entry(chash, 0)}
