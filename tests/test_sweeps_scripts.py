"""sweeps/run_blocks.py and sweeps/progress.py: the runner of a config's listed blocks, resumable by block."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "sweeps"))
run_blocks = importlib.import_module("run_blocks")
progress = importlib.import_module("progress")


def test_budget6x_blocks_hold_the_1036_cells_its_header_states():
    config = REPO / "conf" / "experiment" / "leaderboard_budget6x.yaml"
    assert len(run_blocks.blocks(config)) == 60
    assert progress.planned_cells(config) == 1036
    assert all(not a.startswith("hydra.sweep.dir=") for b in run_blocks.blocks(config) for a in b)


def test_a_block_without_a_list_counts_the_experiments_own():
    # three blocks give only the method: each holds the leaderboard's 24 sets x 12 supervisions; the fourth
    # gives seed 1's 18 sets x 2 supervisions for three methods
    config = REPO / "conf" / "experiment" / "leaderboard_k_rerun.yaml"
    assert progress.planned_cells(config) == 3 * 24 * 12 + 3 * 18 * 2


def test_k_free_cvcp_blocks_split_its_grid_with_no_method_twice_or_left_out():
    # the blocks partition the experiment's 15 methods; each runs both supervisions on the 24 sets
    config = REPO / "conf" / "experiment" / "leaderboard_k_free_cvcp.yaml"
    lists = progress._experiment_lists(config.stem)
    listed = [m for b in run_blocks.blocks(config) for a in b if a.startswith("method=")
              for m in a.split("=", 1)[1].split(",")]
    assert sorted(listed) == sorted(lists["method"]) and len(lists["method"]) == 15
    assert progress.planned_cells(config) == 15 * 2 * 24


def test_the_active_tracks_blocks_partition_its_24_sets_smallest_first():
    config = REPO / "conf" / "experiment" / "active.yaml"
    lists = progress._experiment_lists(config.stem)
    listed = [d for b in run_blocks.blocks(config) for a in b if a.startswith("dataset=") for d in a.split("=", 1)[1].split(",")]
    assert listed == lists["dataset"] and len(listed) == 24  # each once, in the grid's order (by size)
    assert progress.planned_cells(config) == 24 * 3 * 6 * 4  # data sets x methods x strategies x noise rates


def test_an_experiment_made_of_several_runs_its_whole_family():
    from ccbench.datasets import suites

    # board.yaml's header lists the board's five experiments into one sweep dir; leaderboard.yaml its three
    board = run_blocks.blocks(REPO / "conf" / "experiment" / "board.yaml")
    family = ["board", "board_noise", "board_noise_large", "board_pccc", "board_k_free", "board_k_free_cvcp"]
    assert list(dict.fromkeys(b[0].split("=", 1)[1] for b in board)) == family  # the main tracks first
    for name in family:  # each experiment's blocks partition its data sets: none twice, none left out
        listed = [d for b in board if b[0] == f"experiment={name}" for a in b[1:] if a.startswith("dataset=")
                  for d in a.split("=", 1)[1].split(",")]
        own = progress._experiment_lists(name)["dataset"]
        expected = [m for v in own for m in suites().get(v, (v,))]  # board_all named as a suite
        assert sorted(listed) == sorted(expected) and len(set(listed)) == len(listed), name
    assert len(run_blocks.blocks(REPO / "conf" / "experiment" / "leaderboard.yaml")) == 3
    # each block counted by its own experiment's lists: the board design's 75,208 jobs (docs/leaderboard.md; 1,888 of
    # them the k-free board's CVCP half: 16 methods x 59 sets x 2 supervisions)
    # and the shipped leaderboard's 7,632
    assert progress.planned_cells(REPO / "conf" / "experiment" / "board.yaml") == 73320 + 16 * 59 * 2
    assert progress.planned_cells(REPO / "conf" / "experiment" / "leaderboard.yaml") == 7632
    # one of the family names only itself; a name that only starts alike, with no file, is no block
    assert len(run_blocks.blocks(REPO / "conf" / "experiment" / "board_noise.yaml")) == 1


def test_a_header_line_of_another_experiment_is_no_block(tmp_path):
    config = tmp_path / "demo.yaml"
    config.write_text("#   ccbench experiment=demo method=a\n#   ccbench experiment=demo_x method=b\n"
                      "#   ccbench experiment=other method=c\n")
    assert run_blocks.blocks(config) == [["experiment=demo", "method=a"]]
    (tmp_path / "demo_x.yaml").write_text("")
    assert len(run_blocks.blocks(config)) == 2


def _fake_ccbench(tmp_path: Path, fail_on: str = "never", cfg: str = "", fetch_fails: str | None = None) -> Path:
    """A shell ``ccbench`` that records its block calls (``calls``) and data checks (``fetches``), exits 3 on a
    call containing ``fail_on``, prints ``cfg`` for ``--cfg`` (a block's launcher config) and fails the data check
    ``fetch <fetch_fails>`` as ``ccbench fetch`` does (a ``FAILED`` line, exit 1)."""
    failing_fetch = (f"case \"$*\" in 'fetch {fetch_fails}') echo 'FAILED  missing.data'; exit 1;; esac\n"
                     if fetch_fails else "")
    exe = tmp_path / "ccbench"
    exe.write_text(f"#!/bin/sh\ncase \"$*\" in *--cfg*) {cfg} exit 0;; esac\n{failing_fetch}"
                   f"case \"$1\" in fetch) echo \"$@\" >> {tmp_path / 'fetches'}; exit 0;; esac\n"
                   f"echo \"$@\" >> {tmp_path / 'calls'}\n"
                   f"case \"$*\" in *{fail_on}*) exit 3;; esac\nexit 0\n")
    exe.chmod(0o755)
    return exe


def test_run_blocks_records_finished_blocks_names_failed_ones_and_resumes(tmp_path, capsys):
    config = tmp_path / "demo.yaml"
    config.write_text("# blocks:\n#   ccbench experiment=demo hydra.sweep.dir=runs/x method=a dataset=d1,d2\n"
                      "#   ccbench experiment=demo method=b dataset=d1\n#   ccbench experiment=demo method=c dataset=d3\n"
                      "defaults: []\n")
    exe = _fake_ccbench(tmp_path, fail_on="method=b")
    sweep = tmp_path / "sweep"
    argv = [str(config), "--dir", str(sweep), "--jobs", "2", "--ccbench", str(exe)]
    assert run_blocks.main(argv) == 1
    assert "FAILED block: ccbench -m experiment=demo method=b dataset=d1" in capsys.readouterr().err
    done = (sweep / run_blocks.DONE_FILE).read_text().splitlines()
    assert sorted(done) == ["experiment=demo method=a dataset=d1,d2", "experiment=demo method=c dataset=d3"]
    calls = (tmp_path / "calls").read_text().splitlines()
    assert len(calls) == 3 and all(c.startswith("-m ") and c.endswith(f"hydra.sweep.dir={sweep}") for c in calls)
    # the same command again runs only the block that failed
    assert run_blocks.main(argv) == 1
    assert (tmp_path / "calls").read_text().splitlines()[3:] == [
        f"-m experiment=demo method=b dataset=d1 {run_blocks.NO_BLOCK_REPORT} hydra.sweep.dir={sweep}"]
    assert progress.planned_cells(config) == 2 + 1 + 1


def test_set_adds_an_override_to_every_block_but_not_to_its_recorded_name(tmp_path, capsys):
    config = tmp_path / "demo.yaml"
    config.write_text("#   ccbench experiment=demo method=a\n#   ccbench experiment=demo method=b\ndefaults: []\n")
    exe = _fake_ccbench(tmp_path, fail_on="never")
    sweep = tmp_path / "sweep"
    argv = [str(config), "--dir", str(sweep), "--ccbench", str(exe), "--set", "keep_stale=true"]
    assert run_blocks.main(argv) == 0
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls == [f"-m experiment=demo method={m} {run_blocks.NO_BLOCK_REPORT} keep_stale=true "
                     f"hydra.sweep.dir={sweep}" for m in "ab"]
    # a block finished with the override is the same block without it: a resume without --set skips it
    assert sorted((sweep / run_blocks.DONE_FILE).read_text().splitlines()) == ["experiment=demo method=a",
                                                                               "experiment=demo method=b"]
    for bad in ("keep_stale", "hydra.sweep.dir=elsewhere"):
        with pytest.raises(SystemExit):
            run_blocks.main([*argv[:-1], bad])
        assert "--set" in capsys.readouterr().err


def test_parallel_blocks_run_their_own_cells_one_at_a_time(tmp_path, capsys):
    # the leaderboard family's launcher runs two jobs at once: two blocks of it would be four workers on two cores
    config = tmp_path / "demo.yaml"
    config.write_text("#   ccbench experiment=demo method=a\n#   ccbench experiment=demo_seq method=b\ndefaults: []\n")
    (tmp_path / "demo_seq.yaml").write_text("")
    exe = _fake_ccbench(tmp_path, cfg="case \"$1\" in experiment=demo) echo 'n_jobs: 2';; esac;")
    sweep = tmp_path / "sweep"
    assert run_blocks.main([str(config), "--dir", str(sweep), "--ccbench", str(exe), "--jobs", "2"]) == 0
    calls = sorted((tmp_path / "calls").read_text().splitlines())
    assert calls == [f"-m experiment=demo method=a hydra.launcher.n_jobs=1 {run_blocks.NO_BLOCK_REPORT} "
                     f"hydra.sweep.dir={sweep}",
                     f"-m experiment=demo_seq method=b {run_blocks.NO_BLOCK_REPORT} hydra.sweep.dir={sweep}"]
    assert "hydra.launcher.n_jobs=1" in capsys.readouterr().out
    # one block at a time keeps the launcher's own parallelism; a launcher key in --set is the user's choice
    for argv, expected in ((["--jobs", "1"], "method=a hydra.callbacks"),
                           (["--jobs", "2", "--set", "hydra.launcher.n_jobs=2"],
                            "write_report=false hydra.launcher.n_jobs=2 hydra.sweep")):
        (tmp_path / "calls").unlink()
        shutil.rmtree(sweep)
        assert run_blocks.main([str(config), "--dir", str(sweep), "--ccbench", str(exe), *argv]) == 0
        assert any(expected in c for c in (tmp_path / "calls").read_text().splitlines())


def test_blocks_skip_the_whole_folder_report_unless_asked_and_the_override_composes(tmp_path):
    # each block's end-of-sweep report re-read every block's rows (8 min a block on the board at 40,000 cells)
    config = tmp_path / "demo.yaml"
    config.write_text("#   ccbench experiment=demo method=a\ndefaults: []\n")
    exe = _fake_ccbench(tmp_path, fail_on="never")
    for extra, written in (([], False), (["--block-reports"], True),
                           (["--set", "hydra.callbacks.ccbench_summary.write_report=true"], True)):
        sweep = tmp_path / f"sweep{len(extra)}{written}"
        assert run_blocks.main([str(config), "--dir", str(sweep), "--ccbench", str(exe), *extra]) == 0
        call = (tmp_path / "calls").read_text().splitlines()[-1]
        assert (run_blocks.NO_BLOCK_REPORT in call) is not written
    # the key is declared by the callback's config: without it the override is a Hydra error before any cell
    from hydra import compose, initialize_config_module
    from hydra.utils import instantiate

    with initialize_config_module("ccbench_conf", version_base="1.3"):
        cfg = compose("config", overrides=[run_blocks.NO_BLOCK_REPORT], return_hydra_config=True)
    assert instantiate(cfg.hydra.callbacks.ccbench_summary).write_report is False


def test_a_block_whose_data_is_not_there_is_not_run(tmp_path, capsys):
    # resumed once without CCBENCH_DATA_DIR, the board's blocks wrote 789 error rows in five minutes
    config = tmp_path / "demo.yaml"
    config.write_text("#   ccbench experiment=demo dataset=here\n#   ccbench experiment=demo dataset=gone\n"
                      "defaults: []\n")
    exe = _fake_ccbench(tmp_path, fetch_fails="experiment=demo dataset=gone")
    sweep = tmp_path / "sweep"
    argv = [str(config), "--dir", str(sweep), "--ccbench", str(exe)]
    assert run_blocks.main(argv) == 1
    out = capsys.readouterr()
    assert "data not there" in out.out and "CCBENCH_DATA_DIR" in out.out
    assert "FAILED block: ccbench -m experiment=demo dataset=gone" in out.err
    assert "FAILED  missing.data" in (sweep / ".block_0.log").read_text()
    assert [c.split()[2] for c in (tmp_path / "calls").read_text().splitlines()] == ["dataset=here"]
    assert (sweep / run_blocks.DONE_FILE).read_text().splitlines() == ["experiment=demo dataset=here"]
    assert run_blocks.main([*argv, "--skip-data-check"]) == 0  # the user's call: run it all the same
    assert [c.split()[2] for c in (tmp_path / "calls").read_text().splitlines()] == ["dataset=here", "dataset=gone"]


def test_a_config_without_listed_blocks_is_a_clear_error(tmp_path):
    config = tmp_path / "plain.yaml"
    config.write_text("defaults: []\n")
    with pytest.raises(SystemExit, match="no '#   ccbench experiment=plain"):
        run_blocks.blocks(config)


def test_a_missing_config_or_folder_and_a_bad_job_count_are_one_line_errors(tmp_path, capsys):
    with pytest.raises(SystemExit, match="no such experiment file"):
        run_blocks.blocks(tmp_path / "nosuch.yaml")
    with pytest.raises(SystemExit) as exc:
        run_blocks.main([str(tmp_path / "x.yaml"), "--dir", str(tmp_path / "s"), "--jobs", "0"])
    assert exc.value.code == 2 and "--jobs must be at least 1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        run_blocks.main([str(tmp_path / "x.yaml"), "--dir", str(tmp_path / "s"), "--ccbench", str(tmp_path / "none")])
    assert exc.value.code == 2 and "not an executable file" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="progress: no such results file"):
        progress.main([str(tmp_path / "nowhere")])


def test_progress_counts_an_active_curve_s_cpu_where_no_trial_worker_measured_one():
    import pandas as pd

    rows = pd.DataFrame({"trial_cpu_time": [3600.0, None, None], "curve_cpu_time": [1.0, 1800.0, None]})
    assert progress._cpu_seconds(rows).tolist() == [3600.0, 1800.0, 0.0]
    assert progress._cpu_seconds(pd.DataFrame({"curve_cpu_time": [7.0]})).tolist() == [7.0]


pack = importlib.import_module("pack")


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_packed_sweep_unpacks_byte_for_byte_and_a_later_pack_holds_only_what_changed(tmp_path, capsys):
    import pandas as pd

    sweep = tmp_path / "sweep"
    for i in range(3):
        cell = sweep / f"dataset=d{i},method=m"
        (cell / ".hydra").mkdir(parents=True)
        pd.DataFrame({"trial": [0], "status": ["ok"], "ari": [0.1 * i]}).to_parquet(cell / "results.parquet")
        (cell / "cell.json").write_text(f'{{"i": {i}}}')
        (cell / ".hydra" / "config.yaml").write_text(f"i: {i}\n")
        (cell / "ccbench.log").write_text("not packed")
    (sweep / "dataset=d0,method=m" / "results.parquet.journal").write_text('{"trial": 1}\n')
    (sweep / ".blocks_done").write_text("experiment=x\n")
    (sweep / ".timeouts").mkdir()
    (sweep / ".timeouts" / "0123abcd.json").write_text("{}")
    (sweep / ".ccbench_grids").mkdir()
    (sweep / ".ccbench_grids" / "20261130-205941-14252-1b6ad4.yaml").write_text("hydra: {}\n")
    packs = tmp_path / "packs"
    assert pack.main(["pack", str(sweep), str(packs)]) == 0
    assert pack.main(["pack", str(sweep), str(packs)]) == 0 and "nothing changed" in capsys.readouterr().out
    # the cell finishes: its journal is folded into the rows; a new cell appears
    (sweep / "dataset=d0,method=m" / "results.parquet.journal").unlink()
    (sweep / "dataset=d0,method=m" / "results.parquet").write_bytes(b"new rows")
    (sweep / "dataset=d3,method=m").mkdir()
    (sweep / "dataset=d3,method=m" / "cell.json").write_text("{}")
    second = pack.pack(sweep, packs)
    assert second.name == "pack-0002.parquet"
    import pyarrow.parquet as pq
    assert set(pq.read_table(second).column("cell").to_pylist()) == {"dataset=d0,method=m", "dataset=d3,method=m"}
    # a fresh machine: the packs alone give the sweep back, logs aside
    fresh = tmp_path / "fresh"
    assert pack.unpack(packs, fresh) == 7
    expected = {k: v for k, v in _tree(sweep).items() if not k.endswith("ccbench.log")}
    assert _tree(fresh) == expected
    # an older copy catches up: the folded journal is removed, nothing else is touched
    older = tmp_path / "older"
    (packs / "pack-0002.parquet").rename(tmp_path / "second.parquet")
    pack.unpack(packs, older)
    assert (older / "dataset=d0,method=m" / "results.parquet.journal").is_file()
    (tmp_path / "second.parquet").rename(packs / "pack-0002.parquet")
    assert pack.unpack(packs, older) == 2 and _tree(older) == expected


def test_a_pack_naming_a_path_outside_its_sweep_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    packs = tmp_path / "packs"
    packs.mkdir()
    for cell, name in (("../escape", "cell.json"), ("dataset=d", "../../x"), ("dataset=d", "run.sh"),
                       (".timeouts", "../x.json"), (".fits", "results.parquet"), (".ccbench_grids", "x.py")):
        pq.write_table(pa.table({"cell": [cell], "file": [name], "data": [b"x"]}), packs / "pack-0001.parquet")
        with pytest.raises(ValueError, match="refusing the entry"):
            pack.unpack(packs, tmp_path / "sweep")
    assert not (tmp_path / "escape").exists() and not (tmp_path / "sweep").exists()


def test_a_damaged_pack_is_a_one_line_error_with_exit_1(tmp_path, capsys):
    (tmp_path / "packs").mkdir()
    (tmp_path / "packs" / "pack-0001.parquet").write_text("junk")
    assert pack.main(["unpack", str(tmp_path / "packs"), str(tmp_path / "sweep")]) == 1
    assert "unpack: error:" in capsys.readouterr().err and "Traceback" not in capsys.readouterr().err
