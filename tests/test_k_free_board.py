"""The k-free board (issue 50, item 5): every method chooses k itself -- its own rule, or CVCP over k in an
absolute range (protocol.k_free_range) for a method that needs k -- and the board ranks those runs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ccbench import registry
from ccbench.constraints import Constraints
from ccbench.datasets import Dataset
from ccbench.running import harness, protocol
from ccbench.running.tuning import tune_trial


def _blobs(k=4, per=15, seed=0):
    """``k`` well-separated 2-D blobs (centres 10 apart on a line, unit spread)."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(k), per)
    X = rng.normal(size=(k * per, 2)) + np.column_stack([10.0 * y, np.zeros_like(y)])
    return X, y


def _labels_constraints(y, per_class=3, seed=1):
    rng = np.random.default_rng(seed)
    partial = np.full(len(y), -1)
    for c in np.unique(y):
        idx = rng.choice(np.flatnonzero(y == c), per_class, replace=False)
        partial[idx] = c
    return Constraints.from_labels(partial)


# ---- 1. CVCP over k ---------------------------------------------------------------------------------------

def test_the_k_range_is_a_rule_in_n_that_covers_the_board():
    assert protocol.k_free_range(47) == tuple(range(2, 7))  # soybean_small: floor(sqrt(47)) = 6
    assert protocol.k_free_range(3) == (2,)  # n - 1 caps a tiny set
    assert protocol.k_free_range(10 ** 6)[-1] == protocol.K_FREE_MAX
    # every leaderboard set's true k is inside its range (and not its edge): (n, k) from the manifest
    for n, k in [(47, 4), (101, 7), (150, 3), (214, 6), (336, 8), (1484, 10), (2000, 10), (2310, 7)]:
        ks = protocol.k_free_range(n)
        assert ks[0] <= k < ks[-1]
    with pytest.raises(ValueError, match="n >= 3"):
        protocol.k_free_range(None)


@pytest.mark.parametrize("method", ["kmeans", "pck_means"])
def test_the_k_free_grid_of_a_method_that_needs_k_is_absolute_and_k_alone(method):
    spec = registry.get_method_spec(method)
    grid = protocol.free_grid(spec, {}, None, 60)
    assert grid == {"n_clusters": tuple(range(2, 8))}  # floor(sqrt(60)) = 7; pck_means' penalty stays at its default
    # given k, the relative grid as before; a method that finds k itself drops n_clusters k-free
    assert protocol.free_grid(spec, {}, 4, 60)["n_clusters"] == ("k-1", "k", "k+1")
    assert "n_clusters" not in protocol.free_grid(registry.get_method_spec("ap"), {}, None, 60)
    assert protocol.tuning_fits(spec, {}, "cvcp", 3, None, 60) == 1 + 3 * 6


@pytest.mark.parametrize("method", ["kmeans", "pck_means"])
def test_cvcp_over_k_picks_the_true_k_of_separated_blobs(method):
    X, y = _blobs(k=4)
    cons = _labels_constraints(y)
    spec = registry.get_method_spec(method)
    params, k, fields = tune_trial("cvcp", 3, spec, {}, 0, None, X, cons)
    assert k == 4 and json.loads(fields["tuned_params"]) == {"n_clusters": 4}
    assert fields["tune_fits"] == 3 * len(protocol.k_free_range(len(y)))
    assert "k-free: CVCP over k in 2..7" in fields["tune_note"]


def test_a_method_that_needs_k_and_has_no_tuner_cannot_run_k_free():
    spec = registry.get_method_spec("kmeans")
    assert protocol.resolve_n_clusters("free", spec=spec, n_classes=4, X=None, constraints=None,
                                       random_state=0) is None
    with pytest.raises(ValueError, match="needs n_clusters and cannot find k itself.*tune=cvcp"):
        protocol.build_estimator(spec, {}, 0, n_clusters=None)  # never fitted at the estimator's default k
    assert protocol.build_estimator(spec, {}, 0, n_clusters=3).n_clusters == 3
    cell = {"dataset": {"name": "iris"}, "method": {"name": "kmeans", "n_clusters": "free"},
            "constraints": {"name": "random_pairs", "n_constraints": 20}, "noise": {"name": "none"}}
    assert any("tune=cvcp" in p for p in protocol.check_cell(cell))
    assert not any("tune=cvcp" in p for p in protocol.check_cell({**cell, "tune": "cvcp"}))
    ap = {**cell, "method": {"name": "ap", "n_clusters": "free"}}  # finds k itself: no tuner needed
    assert not any("n_clusters" in p for p in protocol.check_cell(ap))


def _blob_cell(supervision):
    return {"dataset": {"name": "iris"}, "method": {"name": "kmeans", "n_clusters": "free"}, **supervision,
            "noise": {"name": "none"}, "n_trials": 2, "metrics": ["ari", "n_clusters_found"], "tune": "cvcp",
            "tune_folds": 3}


@pytest.mark.parametrize("supervision", [
    {"constraints": {"name": "random_pairs", "n_constraints": 30}},
    {"constraints": {"name": "labeled_subsets", "per_class": 3}}])
def test_a_k_free_trial_never_reads_the_true_k(supervision, tmp_path, monkeypatch):
    """Through the harness: the same blobs recorded with 4 classes and with a wrong class count (97) give the
    same chosen k (4), partitions and grid: the true k enters no step of the choice; the row records the
    choice (``tuned_params``, ``n_clusters_found``) and no given k."""
    X, y = _blobs(k=4)
    runs = {}
    for n_classes in (4, 97):
        monkeypatch.setattr(harness, "load_dataset",
                            lambda name, n_classes=n_classes, **kw: Dataset("iris", X, y, n_classes))
        runs[n_classes] = harness.run_job(_blob_cell(supervision), out_dir=tmp_path / str(n_classes))
    for rows in runs.values():
        assert rows["status"].tolist() == ["ok", "ok"], rows["error"].tolist()
        assert rows["n_clusters_given"].isna().all()
        assert [json.loads(t)["n_clusters"] for t in rows["tuned_params"]] == [4, 4]
        assert rows["n_clusters_found"].tolist() == [4, 4]
    cols = ["tuned_params", "tune_score", "ari", "n_clusters_found"]
    pd.testing.assert_frame_equal(runs[4][cols].reset_index(drop=True), runs[97][cols].reset_index(drop=True))


def test_a_k_free_run_without_a_tuner_is_an_error_row_not_a_guess(tmp_path, monkeypatch):
    X, y = _blobs(k=4)
    monkeypatch.setattr(harness, "load_dataset", lambda name, **kw: Dataset("iris", X, y, 4))
    cell = {**_blob_cell({"constraints": {"name": "random_pairs", "n_constraints": 30}}), "tune": "none"}
    rows = harness.run_job(cell, out_dir=tmp_path / "none")
    assert (rows["status"] == "error").all()
    assert rows["error"].str.contains("cannot find k itself").all()


# ---- 3. the board ------------------------------------------------------------------------------------------

def _raw_rows(n_sets=8):
    """Leaderboard-like rows on ``n_sets`` data sets, one pair cell each, 2 trials: the main board (given k) and
    the k-free runs. k-free: ``ap`` 0.5 + 0.01 i, ``cobs`` 0.3, ``kmeans`` (CVCP over k) 0.3 on set i; given k:
    ``kmeans`` 0.9, ``pck_means`` 0.8 (no k-free run), ``ap`` 0.7, ``cobs`` 0.6."""
    from ccbench.reporting import _format as rfmt

    runs = [("kmeans", "true_k", "none", lambda i: 0.9), ("pck_means", "true_k", "none", lambda i: 0.8),
            ("ap", "true_k", "none", lambda i: 0.7), ("cobs", "true_k", "none", lambda i: 0.6),
            ("kmeans", "free", "cvcp", lambda i: 0.3), ("ap", None, "none", lambda i: 0.5 + 0.01 * i),
            ("cobs", None, "none", lambda i: 0.3)]
    rows = []
    for i in range(n_sets):
        for name, k, tune, ari in runs:
            for t in range(2):
                rows.append({"dataset.name": f"d{i}", "method.name": name, "method.n_clusters": k,
                             "constraints.name": "random_pairs", "constraints.n_constraints": 20, "noise.name": "none",
                             "trial": t, "status": "ok", "ari": ari(i), "tune": tune, "tune_folds": 3,
                             "n_classes": 3, "n_clusters_found": 3 if k != "free" else 3 + t})
    data = pd.DataFrame(rows)
    data["method_label"] = rfmt.method_labels(data)
    return data


def test_a_k_means_choosing_k_is_labelled_k_free_beside_k_means_given_k():
    data = _raw_rows(2)
    labels = set(data["method_label"])
    assert {"kmeans", "kmeans[k-free]+cvcp", "ap", "ap[k-free]", "pck_means"} <= labels


def test_the_board_ranks_the_k_free_runs_against_k_means_choosing_k():
    from ccbench.reporting.leaderboard._frame import long_frame
    from ccbench.reporting.leaderboard.k_free_board import k_free_blocks

    data = _raw_rows()
    blocks, tables = k_free_blocks(long_frame(data, "ari"), data, "ari")
    eff = tables["k_free_effects"]
    view = eff[(eff["convention"] == "missing") & (eff["subset"] == "all") & (eff["reference"] == "kmeans")]
    assert set(view["reference_name"]) == {"kmeans"} and set(view["method"]) == {"ap", "cobs"}
    ap = view.set_index("method").loc["ap"]
    # against k-means choosing k (0.3), not k-means given k (0.9): +0.2 + 0.01 i on every set
    assert ap["mean_diff"] == pytest.approx(0.2 + 0.01 * np.mean(range(8))) and ap["wins"] == 8
    assert ap["verdict"] == "ahead"
    assert view.set_index("method").loc["cobs", "ties"] == 8
    ranks = tables["k_free_ranks"].set_index("method")
    assert ranks.loc["ap", "rank_completed"] == 1 and ranks.loc["cobs", "rank_completed"] == 2.5
    missing = tables["k_free_missing"]
    assert missing["method"].tolist() == ["pck_means"] and "CVCP over k" in missing["chooses_k_by"].item()
    k = tables["k_free_k"].set_index("method")
    assert k.loc["kmeans", "k_exact"] == 0.5 and k.loc["kmeans", "variant"] == "kmeans[k-free]+cvcp"
    text = "\n".join(b[-1] for b in blocks if b[0] != "fig")
    assert "k-means choosing k by CVCP" in text and "not run k-free" in text


def test_the_trials_that_did_not_finish_are_counted_per_entry_and_the_refused_k_named():
    from ccbench.reporting.leaderboard._frame import long_frame
    from ccbench.reporting.leaderboard.k_free_board import k_free_blocks

    data = _raw_rows()
    chose = (data["method.name"] == "kmeans") & (data["method.n_clusters"] == "free")
    data.loc[chose & (data["dataset.name"] == "d0"), "status"] = "infeasible"
    data.loc[chose & (data["dataset.name"] == "d1") & (data["trial"] == 1), "status"] = "timeout"
    blocks, tables = k_free_blocks(long_frame(data, "ari"), data, "ari")
    failed = tables["k_free_failures"].set_index(["kind", "method"])
    assert failed.index.tolist() == [("pairs", "kmeans")]  # ap and cobs all ok: not listed
    assert failed.loc[("pairs", "kmeans"), ["ok", "infeasible", "timeout"]].tolist() == [13, 2, 1]
    text = "\n".join(b[-1] for b in blocks if b[0] != "fig")
    assert "Trials that did not finish" in text and "refusing the k chosen for it" in text
    # measured: the infeasible cell ranks kmeans last there, so it loses d0 to both entries
    eff = tables["k_free_effects"]
    row = eff[(eff["convention"] == "last") & (eff["subset"] == "all") & (eff["reference"] == "kmeans")]
    assert (row.set_index("method").loc["cobs", "wins"]) >= 1


@pytest.fixture(scope="module")
def shipped():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "reports" / "leaderboard" / "rows.parquet"
    if not path.exists():
        pytest.skip("no shipped rows")
    from ccbench.reporting.leaderboard._frame import long_frame

    data = pd.read_parquet(path)
    return long_frame(data, "ari"), data


def test_the_shipped_rows_k_free_page_ranks_all_22_methods_each_choosing_k(shipped, tmp_path):
    """The shipped rows hold both halves of the k-free board: the 7 methods that find k by their own rule
    (``name[k-free]``) and the 15 that need k choosing it by CVCP over k (``name[k-free]+cvcp``), so no main-board
    method is missing; NNC's refusals of the k CVCP chose are counted as its measured failures."""
    from ccbench.reporting.leaderboard.k_free_board import write_k_free_board
    from ccbench.reporting.leaderboard.pages import _to_html, _to_markdown

    frame, data = shipped
    paths, tables, index = write_k_free_board(frame, data, tmp_path, "ari", 0.03, 0.05, _to_markdown, _to_html)
    page = paths["k_free_md"].read_text()
    entries = page.split("Entries: ")[1].split("\n")[0]
    for m in ("ap", "scap", "scssap", "scssap_ml", "ssap_g", "ssap_l", "cobs"):
        assert f"`{m}` (`{m}[k-free]`)" in entries
    for m in ("kmeans", "pck_means", "rn_sdp", "nnc", "cop_kmeans", "srcp", "fpc"):
        assert f"`{m}` (`{m}[k-free]+cvcp`)" in entries
    assert entries.count("[k-free]") == 22 and entries.count("[k-free]+cvcp") == 15
    assert "Not on this board" not in page and "not run k-free" not in index[0]
    assert paths["k_free_html"].exists() and "k_free.md" in index[0]
    named = {t["table"].iloc[0]: t for t in tables}
    assert {"k_free_effects", "k_free_ranks", "k_free_k", "k_free_failures"} <= set(named)
    failed = named["k_free_failures"].set_index(["kind", "method"])
    assert failed.loc[("pairs", "nnc"), "infeasible"] > 0 and "error" not in failed  # the kempe_pass fix
    statuses = [c for c in failed.columns if c in ("ok", "timeout", "infeasible", "refused", "skipped",
                                                   "timeout_not_fitted")]
    assert "timeout_not_fitted" in statuses  # the kills recorded without fitting: counted, not scored
    assert (failed[statuses].sum(axis=1) == 24 * 10).all()  # every ranked trial of a listed entry: 24 sets x 10


def test_a_sweep_of_k_free_runs_alone_is_a_board_read_from_the_config():
    """No given-k run to pair a ``[k-free]`` label with (``experiment=leaderboard_k_free*`` alone): the board
    reads ``method.n_clusters`` (``free``, or none for a method that finds k itself) and still ranks all three."""
    from ccbench.reporting import _format as rfmt
    from ccbench.reporting.leaderboard._frame import long_frame
    from ccbench.reporting.leaderboard.k_free_board import k_free_frame

    data = _raw_rows(3)
    data = data[data["method.n_clusters"].astype(str) != "true_k"].reset_index(drop=True)
    data["method_label"] = rfmt.method_labels(data)
    assert "kmeans[k-free]+cvcp" not in set(data["method_label"])  # nothing to pair the label with
    board = k_free_frame(long_frame(data, "ari"), data)
    assert sorted(board["method"].unique()) == ["ap", "cobs", "kmeans"]
    assert board.groupby("method")["value"].mean()["kmeans"] == pytest.approx(0.3)
