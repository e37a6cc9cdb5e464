"""The report's vectorised helpers give, bit for bit, what the row-by-row code they replaced gave.

They were written to bring the reference board's report (75,208 cells) within the time a
newcomer's ``--with`` has; the pages must not change by a byte (docs/leaderboard.md, "The
report at the board's scale")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ccbench.reporting._format import key_values, per_distinct_row
from ccbench.reporting.leaderboard._frame import _worst_status, completed
from ccbench.reporting.leaderboard.gains import _group_positions, bootstrap_ci, bootstrap_cis


def test_bootstrap_cis_are_bootstrap_ci_bit_for_bit_on_every_size():
    # sizes past 8 too: there numpy's pairwise sum depends on the array's layout (a 3-D mean differed
    # in the last bit on 9,889 intervals of the shipped board)
    rng = np.random.default_rng(3)
    samples = [rng.normal(size=n) for n in (0, 1, 2, 3, 5, 8, 9, 10, 16, 17, 33, 10, 10, 3, 0, 64)]
    got = bootstrap_cis(samples, n_boot=500, seed=7)
    for sample, (low, high) in zip(samples, got):
        want = bootstrap_ci(sample, n_boot=500, seed=7)
        if sample.size == 0:
            assert np.isnan(low) and np.isnan(high) and all(np.isnan(want))
        else:
            assert (low, high) == want


def test_bootstrap_cis_split_a_large_size_into_parts_without_changing_it():
    rng = np.random.default_rng(0)
    samples = [rng.normal(size=40) for _ in range(30)]
    many = bootstrap_cis(samples, n_boot=20_000, seed=1)  # 30 x 20,000 x 40 = 24M draws: two parts of <= 2**24
    assert [tuple(r) for r in many] == [bootstrap_ci(s, n_boot=20_000, seed=1) for s in samples]


def test_per_distinct_row_renders_as_a_row_wise_apply_does_once_per_distinct_row():
    frame = pd.DataFrame({"a": [1, 1, 2, 1, np.nan, np.nan], "b": ["x", "x", "y", "x", None, None],
                          "c": [[1, 2], [1, 2], [3], [1, 2], [3], [3]], "d": [1, 1, 1, "1", 1, 1]})
    calls = []

    def render(row):
        calls.append(1)
        return key_values(row, skip_missing=False)

    got = per_distinct_row(frame, render)
    want = frame.apply(lambda r: key_values(r), axis=1).to_numpy()
    assert list(got) == list(want)
    assert len(calls) == 4  # (1, x, [1, 2], 1), (2, y, [3], 1), (1, x, [1, 2], "1"), (nan, None, [3], 1)


def test_key_values_leaves_out_missing_values_only_when_asked():
    row = pd.Series({"k": 3, "rate": 0.25, "missing": np.nan})
    assert key_values(row) == "k=3, rate=0.25, missing=nan"
    assert key_values(row, skip_missing=True) == "k=3, rate=0.25"


def test_worst_status_is_the_mode_of_the_statuses_that_are_not_ok_first_by_name_on_a_tie():
    frame = pd.DataFrame({"cell": ["a"] * 5 + ["b"] * 3 + ["c"] * 2,
                          "status": ["ok", "timeout", "error", "timeout", "error",  # tie: error before timeout
                                     "ok", "refused", "refused", "ok", "ok"]})
    got = _worst_status(frame, ["cell"])
    want = frame.groupby("cell")["status"].agg(lambda s: s[s != "ok"].mode().iloc[0] if (s != "ok").any() else None)
    assert got.to_dict() == {"a": "error", "b": "refused"} == want.dropna().to_dict()


def test_completed_is_true_only_where_every_trial_is_ok():
    from ccbench.reporting.leaderboard._frame import CELL

    rows = []
    for method, statuses in {"m1": ["ok", "ok"], "m2": ["ok", "timeout"]}.items():
        for trial, status in enumerate(statuses):
            rows.append({**{c: "x" for c in CELL}, "method": method, "trial": trial, "status": status})
    table = completed(pd.DataFrame(rows))
    assert table.iloc[0].to_dict() == {"m1": True, "m2": False}


def test_group_positions_are_groupby_order_with_each_groups_rows_in_order():
    rows = pd.DataFrame({"k": ["b", "a", "b", None, "a", "c"], "j": [1, 1, 1, 1, 2, 1]})
    got = [(key, list(at)) for key, at in _group_positions(rows, ["k", "j"])]
    want = [(key, list(rows.index.get_indexer(g.index))) for key, g in rows.groupby(["k", "j"], sort=True)]
    assert got == want == [(("a", 1), [1]), (("a", 2), [4]), (("b", 1), [0, 2]), (("c", 1), [5])]


def test_a_report_computes_each_headline_once_and_only_inside_its_block(monkeypatch):
    from ccbench.reporting import leaderboard as lb
    from ccbench.reporting.leaderboard import effects

    rows = []
    for i, d in enumerate([0.1, 0.2, 0.05, 0.15, -0.04, 0.3]):
        for method, value in (("kmeans", 0.5), ("pck_means", 0.5 + d)):
            rows += [{"dataset.name": f"set{i}", "method.name": method, "constraints.name": "random_pairs",
                      "constraints.n_constraints": 20, "noise.name": "none", "trial": t, "trial_seed": t,
                      "status": "ok", "ari": value, "fit_time": 0.01} for t in range(2)]

    def frame():  # built anew each time: an equal frame, not the same object
        data = pd.DataFrame(rows)
        data["method_label"] = data["method.name"]
        return lb.long_frame(data, "ari")

    calls = []
    real = effects._pair_table
    monkeypatch.setattr(effects, "_pair_table", lambda *a, **k: calls.append(1) or real(*a, **k))
    alone = effects.headline_effects(frame(), "ari", n_boot=200)
    per_call = len(calls)
    effects.headline_effects(frame(), "ari", n_boot=200)
    assert len(calls) == 2 * per_call  # outside a report's block: computed every time
    with effects.headlines_remembered():
        first = effects.headline_effects(frame(), "ari", n_boot=200)
        first["effects"].loc[:, "mean_diff"] = 99.0  # a caller's copy: the memo keeps its own
        again = effects.headline_effects(frame(), metric="ari", n_boot=200)  # the same call, spelled otherwise
        assert len(calls) == 3 * per_call
        pd.testing.assert_frame_equal(again["effects"], alone["effects"])
        changed = frame()
        changed.loc[changed.index[0], "value"] = 0.0
        effects.headline_effects(changed, "ari", n_boot=200)  # other rows: computed
        effects.headline_effects(frame(), "ari", n_boot=201)  # other arguments: computed
        assert len(calls) == 5 * per_call
    effects.headline_effects(frame(), "ari", n_boot=200)
    assert len(calls) == 6 * per_call  # the block's memo is gone with it
