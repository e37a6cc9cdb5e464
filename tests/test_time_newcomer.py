"""``tests/benchmarks/time_newcomer.py``: the commands a newcomer runs against the board, timed in order, and a
failed one named (a fake ``ccbench`` records the calls; the real ones are the board's, minutes each)."""

from __future__ import annotations

import json

import pytest

from benchmarks import time_newcomer


def _fake_ccbench(tmp_path, fail_on="never"):
    exe = tmp_path / "ccbench"
    exe.write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'calls'}\necho 'cause of it all'\n"
                   f"case \"$*\" in *{fail_on}*) exit 4;; esac\nexit 0\n")
    exe.chmod(0o755)
    return exe


@pytest.mark.parametrize("method, k_free", [("kmeans", "board_k_free_cvcp"), ("ap", "board_k_free")])
def test_the_k_free_experiment_follows_whether_the_method_needs_k(method, k_free):
    assert time_newcomer.k_free_experiment(method, []) == k_free


def test_each_experiment_then_the_report_with_the_board_are_timed(tmp_path, capsys):
    board, runs = tmp_path / "board", tmp_path / "runs"
    board.mkdir()
    out = tmp_path / "t.json"
    argv = ["--method", "kmeans", "--board", str(board), "--dir", str(runs), "--ccbench", str(_fake_ccbench(tmp_path)),
            "--set", "dataset=iris_uci", "--json", str(out)]
    assert time_newcomer.main(argv) == 0
    calls = (tmp_path / "calls").read_text().splitlines()
    assert [c.split()[1] for c in calls[:5]] == [f"experiment={e}" for e in
                                                 ("board", "board_noise", "board_noise_large", "board_pccc",
                                                  "board_k_free_cvcp")]
    assert all(f"method=kmeans dataset=iris_uci hydra.sweep.dir={runs}" in c for c in calls[:5])
    assert calls[5] == (f"report {runs} --leaderboard --with {board} --out {runs / 'leaderboard'} "
                        f"--site {runs / 'site'}")
    timings = json.loads(out.read_text())
    assert timings["finished"] and len(timings["steps"]) == 6
    assert timings["total_wall_s"] == pytest.approx(sum(s["wall_s"] for s in timings["steps"]))
    assert "load average before" in capsys.readouterr().out


def test_a_failed_command_stops_the_timing_and_is_named_with_its_output(tmp_path, capsys):
    board = tmp_path / "board"
    board.mkdir()
    exe = _fake_ccbench(tmp_path, fail_on="experiment=board_noise")
    assert time_newcomer.main(["--method", "kmeans", "--board", str(board), "--dir", str(tmp_path / "r"),
                               "--ccbench", str(exe)]) == 1
    assert len((tmp_path / "calls").read_text().splitlines()) == 2  # board, then board_noise failed: no more
    err = capsys.readouterr()
    assert "experiment=board_noise" in err.err and "exited 4" in err.err and "cause of it all" in err.err
    assert "NOT FINISHED" in err.out
    with pytest.raises(SystemExit):
        time_newcomer.main(["--method", "kmeans", "--board", str(tmp_path / "none"), "--ccbench", str(exe)])
