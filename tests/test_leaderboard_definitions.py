"""Issue 38 (the leaderboard made right): what the hurt share joins on, completed cells in the gains,
main methods against tuned variants, data sets as Friedman blocks, coverage, per-cell means."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ccbench.reporting import _format as rfmt
from ccbench.reporting import leaderboard as lb
from ccbench.reporting.leaderboard import _frame as lb_frame

N = "constraints.n_constraints"
PER = "constraints.per_class"


def _labels_sweep(n_trials: int = 6, seed: int = 0) -> pd.DataFrame:
    """Labeled rows carry ``constraints.small_classes=all`` (the leaderboard's label scheme); the
    unconstrained rows (``constraints=none``) carry no scheme option at all."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in ("iris", "wine"):
        for m in ("pck_means", "kmeans", "cop_kmeans"):
            for t in range(n_trials):
                rows.append({"dataset.name": d, "dataset.preprocess": "standardize", "method.name": m,
                             "constraints.name": "none", "noise.name": "none", "trial": t, "trial_seed": t,
                             "status": "ok", "ari": rng.uniform(0.3, 0.6)})
                rows.append({"dataset.name": d, "dataset.preprocess": "standardize", "method.name": m,
                             "constraints.name": "labeled_subsets", PER: 5, "constraints.small_classes": "all",
                             "noise.name": "none", "trial": t, "trial_seed": 1000 + t, "status": "ok",
                             "ari": rng.uniform(0.3, 0.7)})
    data = pd.DataFrame(rows)
    data["method_label"] = rfmt.method_labels(data)
    return data


def test_hurt_share_joins_labels_with_the_unconstrained_run_despite_scheme_options(tmp_path):
    data = _labels_sweep()
    frame = lb.long_frame(data, "ari")
    hurt = lb.hurt_share(frame, "ari").set_index("method")
    assert set(hurt.index) == {"pck_means", "kmeans", "cop_kmeans"}
    ok = data[data["status"] == "ok"]
    for m in hurt.index:
        own = ok[ok["method.name"] == m]
        ref = own[own["constraints.name"] == "none"].set_index(["dataset.name", "trial"])["ari"]
        sup = own[own["constraints.name"] != "none"]
        worse = sum(v < ref[(d, t)] for d, t, v in zip(sup["dataset.name"], sup["trial"], sup["ari"]))
        assert hurt.loc[m, "n_trials"] == len(sup) and hurt.loc[m, "n_worse"] == worse
    text = lb.write_leaderboard(data, tmp_path, metric="ari")["labels_md"].read_text()
    assert "No method has an unconstrained run" not in text


def test_hurt_share_still_separates_data_options_and_evaluate_on():
    data = _labels_sweep()
    other = data.assign(**{"dataset.preprocess": "none", "ari": data["ari"] + 0.5})
    frame = lb.long_frame(pd.concat([data, other], ignore_index=True), "ari")
    hurt = lb.hurt_share(frame, "ari").set_index("method")
    alone = lb.hurt_share(lb.long_frame(data, "ari"), "ari").set_index("method")
    # each preprocessing is joined with its own unconstrained run: twice the trials, the same changes
    assert (hurt["n_trials"] == 2 * alone["n_trials"].reindex(hurt.index)).all()
    assert hurt["mean_change"].to_numpy() == pytest.approx(alone["mean_change"].reindex(hurt.index).to_numpy())


def _rows(values: dict, statuses: dict | None = None, budget0: dict | None = None) -> pd.DataFrame:
    """``values[(dataset, budget, method)]`` = per-trial ari; ``statuses[(dataset, budget, method)]`` = a
    status per trial (list) or one for all."""
    statuses = statuses or {}
    rows = []
    cells = list(values.items()) + [((d, 0, m), v) for (d, m), v in (budget0 or {}).items()]
    for (d, b, m), vals in cells:
        st = statuses.get((d, b, m), "ok")
        st = st if isinstance(st, list) else [st] * len(vals)
        for t, (v, s) in enumerate(zip(vals, st)):
            rows.append({"dataset.name": d, "method.name": m.split("+")[0], "tune": m.split("+")[1] if "+" in m else "none",
                         "constraints.name": "random_pairs", N: b, "noise.name": "none", "trial": t,
                         "trial_seed": 100 * b + t, "status": s, "ari": v if s == "ok" else np.nan,
                         "fit_time": 0.01 * (1 + t)})
    data = pd.DataFrame(rows)
    data["method_label"] = rfmt.method_labels(data)
    return data


def test_gains_use_completed_cells_only(tmp_path):
    up = [0.0, 0.01, 0.02, 0.03, 0.04, 0.05]
    values = {("iris", 20, "pck_means"): [0.9 + u for u in up], ("iris", 20, "kmeans"): [0.5 + u for u in up],
              ("iris", 20, "cop_kmeans"): [0.95 + u for u in up]}
    # cop_kmeans: one ok trial of six (the easy draw that survived the time limit)
    data = _rows(values, statuses={("iris", 20, "cop_kmeans"): ["ok"] + ["timeout"] * 5})
    g = lb.gains(lb.long_frame(data, "ari"), "ari")
    assert g["method"].tolist() == ["pck_means"]
    text = lb.write_leaderboard(data, tmp_path, metric="ari")["pairs_md"].read_text()
    assert "Completed cells only, as the ranks" in text


def test_cobs_and_rn_sdp_are_left_out_of_the_hurt_share_with_a_reason(tmp_path):
    values = {("iris", 20, m): [0.9, 0.8, 0.7] for m in ("pck_means", "cobs", "rn_sdp", "kmeans")}
    budget0 = {("iris", m): [0.5, 0.5, 0.5] for m in ("pck_means", "cobs", "rn_sdp", "kmeans")}
    data = _rows(values, budget0=budget0)
    hurt = lb.hurt_share(lb.long_frame(data, "ari"), "ari")
    assert set(hurt["method"]) == {"pck_means", "kmeans"}
    text = lb.write_leaderboard(data, tmp_path, metric="ari")["pairs_md"].read_text()
    assert "`cobs`: with no constraints COBS" in text and "`rn_sdp`: with no constraints RN-SDP" in text
