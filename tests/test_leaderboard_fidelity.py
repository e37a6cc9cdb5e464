"""The leaderboard's section 9: ok trials that did not converge, returned another k than the true k they
were given (the AP family's search keeps the closest count where no preference gives k), or, for a
hard-constraint method, left a constraint unmet (NNC's greedy placement)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccbench.reporting import _format as rfmt
from ccbench.reporting.leaderboard import _frame
from ccbench.reporting.leaderboard.fidelity import fidelity_table


def _rows(trials, violated=None):
    """trials[(method, dataset, tune)] = list of (n_clusters_found, converged); ``violated[(method,
    dataset)]`` = per-trial ``n_violated`` of a hard-constraint method."""
    rows = []
    violated = violated or {}
    for (method, dataset, tune), found in trials.items():
        for t, (k, conv) in enumerate(found):
            hard = violated.get((method, dataset))
            rows.append({"dataset.name": dataset, "method.name": method, "constraints.name": "random_pairs",
                         "constraints.n_constraints": 20, "noise.name": "none", "trial": t, "status": "ok",
                         "ari": 0.5, "fit_time": 1.0, "tune": tune, "n_clusters_given": 3,
                         "n_clusters_found": k, "converged": conv,
                         "constraint_kind": "hard" if hard else "soft", "n_violated": hard[t] if hard else 0})
    data = pd.DataFrame(rows)
    data["method_label"] = rfmt.method_labels(data)
    return data


def test_k_missed_and_not_converged_are_counted_per_method_and_data_set():
    data = _rows({("ap", "iris", "none"): [(3, True), (4, True), (3, False), (3, True)],
                  ("ap", "wine", "none"): [(3, True), (3, True)],
                  ("kmeans", "iris", "none"): [(3, True)] * 4,          # nothing to say: absent
                  ("kmeans", "wine", "cvcp"): [(5, True)] * 2,          # a tuner chose k=5: no miss
                  ("srcp", "iris", "none"): [(3, np.nan)] * 2})         # records no convergence: no share
    frame = _frame.long_frame(data, "ari")
    table = fidelity_table(frame, data).set_index("method")
    assert list(table.index) == ["ap"]
    assert table.loc["ap", "ok_trials"] == 6 and table.loc["ap", "k_given"] == 6
    assert table.loc["ap", "k_missed"] == pytest.approx(1 / 6)
    assert table.loc["ap", "not_converged"] == pytest.approx(1 / 6)
    per_set = fidelity_table(frame, data, by=("method", "dataset"))
    assert per_set[["method", "dataset"]].values.tolist() == [["ap", "iris"]]
    assert per_set.loc[0, "k_missed"] == pytest.approx(0.25)


def test_a_hard_constraint_left_unmet_is_counted():
    # nnc (hard) left 2 constraints unmet in one of 4 trials; a soft method's violations are its trade-off
    data = _rows({("nnc", "promoters", "none"): [(3, True)] * 4, ("pck_means", "promoters", "none"): [(3, True)] * 4},
                 violated={("nnc", "promoters"): [0, 2, 0, 0]})
    data.loc[data["method.name"] == "pck_means", "n_violated"] = 3
    table = fidelity_table(_frame.long_frame(data, "ari"), data).set_index("method")
    assert list(table.index) == ["nnc"] and table.loc["nnc", "hard_unmet"] == pytest.approx(0.25)


def test_the_leaderboard_page_says_which_trials_missed_k(tmp_path):
    from ccbench.reporting import leaderboard as lb

    data = _rows({(m, d, "none"): [(k, True)] * 3 for m, k in (("ap", 4), ("kmeans", 3), ("srcp", 3))
                  for d in ("iris", "wine", "glass")})
    data = pd.concat([data, data.assign(**{"constraints.n_constraints": 0})], ignore_index=True)
    data["method_label"] = rfmt.method_labels(data)
    paths = lb.write_leaderboard(data, tmp_path)
    page = (tmp_path / "pairs.md").read_text()
    section = page.split("## 9. Not converged, another k than the one given, a hard constraint unmet")[1].split("\n## ")[0]
    assert "| ap | 18 |" in section and "1.000" in section and "kmeans" not in section
