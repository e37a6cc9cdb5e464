"""The leaderboard's budget sensitivity (issue 50, item 4): a re-run of the failed cells at a larger budget
feeds its own section (the verdicts that change, the outcome and cost of the re-run) and never the board,
which stays at its own budget; with no re-run the section says so and gives the command; the per-size-class
sentence follows from its numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccbench.reporting import _format as rfmt
from ccbench.reporting import leaderboard as lb
from ccbench.reporting.leaderboard import budget_sensitivity as bs
from ccbench.reporting.leaderboard._frame import _of_kind
from ccbench.reporting.leaderboard.effects import headline_effects
from ccbench.reporting.shipped import newest_rows

N = "constraints.n_constraints"
SETS = [f"set{i}" for i in range(8)]
FAILED = SETS[:3]  # B times out on these at the board's 10 s and completes them at 60 s
CPU_RERUN = 30.0  # CPU seconds of each re-run trial


def _row(d, m, t, status, ari, timeout, stamp, cpu):
    return {"dataset.name": d, "method.name": m, "constraints.name": "random_pairs", N: 20, "noise.name": "none",
            "trial": t, "trial_seed": t, "status": status, "ari": ari if status == "ok" else np.nan,
            "fit_time": 0.01, "config_hash": f"{d}-{m}", "trial_timeout": timeout, "time_budget": timeout,
            "timestamp": stamp, "trial_cpu_time": cpu, "n_samples": 100}


def _board_and_rerun() -> tuple[pd.DataFrame, pd.DataFrame]:
    """kmeans at 0.5 and A at 0.8 on 8 data sets; B at A - 0.01 on 5 and timed out on 3 (board, 10 s):
    B's 8 paired differences from A are all negative (behind the best: exact signed-rank p = 2/256, Holm
    over {kmeans, B} 0.016, still below 0.05 after dropping any one set). At 60 s B completes the 3 at
    A + 0.01: 5 of 8 differences -0.01, 3 of 8 +0.01 (W = 13.5 of 36: tied)."""
    board, rerun = [], []
    for d in SETS:
        for t in range(2):
            board.append(_row(d, "kmeans", t, "ok", 0.5, 10, "2026-01-01T00:00", 0.1))
            board.append(_row(d, "A", t, "ok", 0.8, 10, "2026-01-01T00:00", 1.0))
            if d in FAILED:
                board.append(_row(d, "B", t, "timeout", np.nan, 10, "2026-01-01T00:00", 10.0))
                rerun.append(_row(d, "B", t, "ok", 0.81, 60, "2026-02-01T00:00", CPU_RERUN))
            else:
                board.append(_row(d, "B", t, "ok", 0.79, 10, "2026-01-01T00:00", 5.0))
    board, rerun = pd.DataFrame(board), pd.DataFrame(rerun)
    for frame in (board, rerun):
        frame["method_label"] = rfmt.method_labels(frame)
    return board, rerun


def _effects(data):
    return headline_effects(_of_kind(lb.long_frame(data, "ari"), "pairs"), "ari")["effects"]


def _verdict(effects, method, reference="best", convention="missing"):
    row = effects[(effects["method"] == method) & (effects["reference"] == reference)
                  & (effects["convention"] == convention) & (effects["subset"] == "all")]
    assert len(row) == 1, row
    return row.iloc[0]


def _section(data, kind="pairs"):
    frame = _of_kind(lb.long_frame(data, "ari"), kind)
    blocks = bs.budget_sensitivity_blocks(frame, kind, data.reset_index(drop=True), "ari", 0.03, 0.05,
                                          lambda t, index=True: t.to_markdown(index=index))
    return "\n".join(b[-1] for b in blocks if b[0] == "md")


def test_the_constructed_board_flips_at_the_larger_budget():
    """The premise, computed by the headline itself: B is behind the best at 10 s and tied with it once its
    3 timed-out sets complete at 60 s (the same A is the best on both sides)."""
    board, rerun = _board_and_rerun()
    before = _verdict(_effects(board), "B")
    replaced = pd.concat([board[~board["dataset.name"].isin(FAILED) | (board["method.name"] != "B")],
                          rerun], ignore_index=True)
    after = _verdict(_effects(replaced), "B")
    assert (before["reference_name"], before["verdict"], before["losses"]) == ("A", "behind", 8)
    assert (after["reference_name"], after["verdict"], after["losses"], after["wins"]) == ("A", "tied", 5, 3)


def test_the_board_is_not_changed_by_the_rerun_rows():
    """Every headline number of the board with the (later) 60 s rows beside its rows is the board's alone:
    a re-run never replaces its board twin in the long frame."""
    board, rerun = _board_and_rerun()
    both = pd.concat([board, rerun], ignore_index=True)
    assert bs.rerun_mask(both).sum() == len(rerun)
    frame = lb.long_frame(both, "ari")
    assert (frame["status"] == "timeout").sum() == 2 * len(FAILED)  # the board's timeouts stay
    pd.testing.assert_frame_equal(_effects(both), _effects(board))


def test_the_loader_keeps_a_rerun_beside_its_board_row():
    """Reading a shipped folder beside the re-run's sweep keeps one row per (config_hash, trial) *and budget*:
    the newest of a resumed sweep still wins at one budget, the board's row survives its 60 s twin."""
    board, rerun = _board_and_rerun()
    resumed = board.iloc[:1].assign(timestamp="2026-01-02T00:00", ari=0.4)
    kept = newest_rows(pd.concat([board, rerun, resumed], ignore_index=True))
    assert len(kept) == len(board) + len(rerun)
    assert kept.loc[(kept["config_hash"] == "set0-kmeans") & (kept["trial"] == 0), "ari"].tolist() == [0.4]


def test_the_section_reports_the_flip_the_outcome_and_the_cost():
    board, rerun = _board_and_rerun()
    text = _section(pd.concat([board, rerun], ignore_index=True))
    assert f"{len(FAILED)} (cell, method, seed) re-run" in text
    assert f"{len(FAILED)} now ok, 0 still timeout, 0 still refused, 0 still failed, 0 incomplete" in text
    hours = len(rerun) * CPU_RERUN / 3600
    assert f"{hours:.3g} core-hours (sum of `trial_cpu_time`)" in text
    changes = bs.verdict_changes(_effects(board), _effects(pd.concat(
        [board[~board["dataset.name"].isin(FAILED) | (board["method.name"] != "B")], rerun], ignore_index=True)))
    b_best = changes[(changes["method"] == "B") & (changes["reference"] == "best")]
    assert set(b_best["convention"]) == {"missing", "last"}
    assert (b_best["verdict_board"] == "behind").all() and (b_best["verdict_rerun"] == "tied").all()
    # the page's table holds exactly those changes
    assert f"{len(changes)} headline verdict(s) change" in text
    assert text.count("| B ") >= len(b_best)


def test_without_rerun_rows_the_section_gives_the_command_and_the_estimate():
    board, _ = _board_and_rerun()
    text = _section(board)
    assert "has not been made" in text
    assert "ccbench experiment=leaderboard_budget6x hydra.sweep.dir=sweeps/leaderboard_budget6x" in text
    assert "python sweeps/run_blocks.py conf/experiment/leaderboard_budget6x.yaml --jobs 2" in text
    assert "core-hours" in text


def test_the_board_budget_is_the_most_common_one():
    board, rerun = _board_and_rerun()
    assert bs.board_budget(pd.concat([board, rerun])) == (10.0, 10.0)
    # a 60 s row with no board twin is no re-run: it is a row of the board
    lone = rerun.assign(config_hash="elsewhere")
    assert not bs.rerun_mask(pd.concat([board, lone], ignore_index=True)).any()


def _class_table(hits: dict) -> pd.DataFrame:
    """{size class: (cells, hit, fit_at_rerun)} as one method's :func:`size_class_table`."""
    return pd.DataFrame([{"method": "m", "size_class": c, "cells": n, "hit": h, "hit_share": h / n,
                          "fit_at_rerun": f, "predicted_at_rerun": h} for c, (n, h, f) in hits.items()])


@pytest.mark.parametrize("hits, argues", [
    ({"n < 500": (100, 0, 0), "500 <= n <= 1,500": (100, 2, 2), "n > 1,500": (100, 30, 20)}, True),
    ({"n < 500": (100, 0, 0), "n > 1,500": (100, 30, 5)}, False),   # 6x would not serve the big sets
    ({"n < 500": (100, 10, 9), "n > 1,500": (100, 30, 20)}, False),  # the budget binds everywhere
    ({"n < 500": (100, 1, 1), "n > 1,500": (100, 3, 3)}, False),    # it binds nowhere
    # the shipped rows' numbers: binds on 15.3 % and 40.2 % (6x serves 79 % and 50 %), not on 2.8 %
    ({"n < 500": (3948, 111, 102), "500 <= n <= 1,500": (2259, 345, 271), "n > 1,500": (1425, 573, 285)}, True),
])
def test_the_per_class_sentence_follows_from_the_numbers(hits, argues):
    text = bs.per_class_sentence(_class_table(hits), 10.0)
    assert text.startswith("The measurements argue" if argues else "The measurements do not argue")
    for c, (n, h, _) in hits.items():
        assert f"{c}: {h} of {n} cells hit it ({h / n:.1%})" in text
    if argues:  # the classes it names as served are those with a share >= 5 % and half their hits fitting 6x
        served = [c for c, (n, h, f) in hits.items() if h / n >= bs.BINDS and f / h >= bs.SERVED]
        assert text.endswith(f"so 60 s for {', '.join(served)} and 10 s for "
                             f"{', '.join(c for c, (n, h, f) in hits.items() if h / n < bs.BINDS)}.")


def test_a_rerun_with_fewer_trials_than_the_board_failed_is_incomplete():
    """A re-run stopped after one of a cell's two failed trials has no outcome yet."""
    board, rerun = _board_and_rerun()
    partial = rerun[(rerun["dataset.name"] != "set0") | (rerun["trial"] == 0)]
    text = _section(pd.concat([board, partial], ignore_index=True))
    assert f"{len(FAILED) - 1} now ok, 0 still timeout, 0 still refused, 0 still failed, 1 incomplete" in text


def test_a_rerun_of_fewer_trials_than_the_board_stands_for_its_cell_when_it_ran_its_own_n_trials():
    """The re-run made with ``n_trials=1`` (the first of the board's two paired trials): complete, so its one
    trial replaces both of the board's in each cell, and B's verdict flips as with the full re-run. The same
    one trial without ``n_trials`` (the board's count expected) is incomplete and changes nothing."""
    board, rerun = _board_and_rerun()
    first = rerun[rerun["trial"] == 0].assign(n_trials=1)
    text = _section(pd.concat([board.assign(n_trials=2), first], ignore_index=True))
    assert f"{len(FAILED)} now ok, 0 still timeout, 0 still refused, 0 still failed, 0 incomplete" in text
    assert "headline verdict(s) change" in text and "| B " in text
    text = _section(pd.concat([board, first.drop(columns="n_trials")], ignore_index=True))
    assert f"0 now ok, 0 still timeout, 0 still refused, 0 still failed, {len(FAILED)} incomplete" in text
    assert "No verdict comparison: no complete re-run" in text


def test_the_section_says_how_a_cpu_second_of_the_rerun_compares_with_the_boards():
    # the re-run of 2026-11-30 ran on another CPU with faster code of the same answers: scap_k's trials took
    # 4.7x less CPU there, so its 60 s bought about 280 s of the board's work; the page must say so
    keys = dict(config_hash=["c1", "c1", "c2", "c3"], trial=[0, 1, 0, 0])
    board = pd.DataFrame({**keys, "method.name": ["m", "m", "n", "n"], "status": ["ok", "ok", "ok", "timeout"],
                          "trial_cpu_time": [8.0, 6.0, 3.0, 10.0], "trial_timeout": 10.0, "time_budget": 10.0,
                          "env.cpu": "Intel Xeon", "code.method_hash": ["h1", "h1", "g1", "g1"]})
    rerun = board.assign(status="ok", trial_cpu_time=[2.0, 2.0, 3.0, 40.0], trial_timeout=60.0, time_budget=60.0,
                         **{"env.cpu": "AMD EPYC", "code.method_hash": ["h2", "h2", "g1", "g1"]})
    data = pd.concat([board, rerun], ignore_index=True)
    mask = bs.rerun_mask(data)
    assert mask.tolist() == [False] * 4 + [True] * 4
    text = bs.machine_comparison(data, mask, 60.0)
    assert "made on `AMD EPYC`, the board's on `Intel Xeon`" in text
    # c1's two pairs: 8/2 and 6/2 (median 3.5x); c2's: 1x; c3 finished only in the re-run: no pair
    assert "3 trials finished at both budgets (2 methods)" in text
    assert "`n` 1x, `m` 3.5x" in text and "median" in text
    assert "The code of 1 of them changed in between (`code.method_hash`: `m`)" in text
    none = bs.machine_comparison(data.assign(status="timeout"), mask, 60.0)
    assert "No trial finished at both budgets" in none and "machine_check.py" in none
