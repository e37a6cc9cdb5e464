"""A stranger's rows must neither replace the reader's, nor hang the reader, nor leave a half-written folder
(issue 54, "A stranger's rows ..."). Hand-sized frames and files only: every test here runs in well under 3 s."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ccbench import reporting
from ccbench.reporting import shipped as shp


def _rows(method: str, ari: float, stamp: str, n: int = 3, source: str = "mine") -> pd.DataFrame:
    """``n`` rows of one cell (iris, 20 pairs): ``(config_hash, trial)`` fixed by ``method`` and the trial."""
    return pd.DataFrame({
        "config_hash": [f"h_{method}"] * n, "trial": np.arange(n), "timestamp": [stamp] * n,
        "method.name": [method] * n, "dataset.name": ["iris"] * n, "constraints.name": ["random_pairs"] * n,
        "constraints.n_constraints": [20] * n, "noise.name": ["none"] * n, "status": ["ok"] * n,
        "ari": [ari] * n, "seed": [0] * n, "n_trials": [n] * n, "source": [f"/tmp/{source}/job_{method}"] * n,
    })


# -- a merge never replaces the reader's rows ---------------------------------------------------------------


def test_a_stranger_reusing_my_config_hash_with_a_later_timestamp_does_not_replace_my_rows():
    mine = _rows("kmeans", 0.730, "2026-01-01T00:00:00")
    theirs = pd.concat([_rows("kmeans", 0.99, "2030-01-01T00:00:00", source="x"),  # my identity, later
                        _rows("cop_kmeans", 0.5, "2030-01-01T00:00:00", source="x")], ignore_index=True)
    merged, notes = reporting.merge_with(mine, theirs, new_name="MINE", shipped_name="STRANGER")
    kmeans = merged[merged["method.name"] == "kmeans"]
    assert len(kmeans) == 3 and (kmeans["ari"] == 0.730).all()  # mine, all three, not the stranger's 0.99
    assert len(merged) == 6  # their three cop_kmeans rows join mine
    assert merged.attrs["shipped_rows"] == 3 and merged.attrs["shipped_clashes"] == 3
    (note,) = [n for n in notes if "yours are kept" in n]
    assert note.startswith("3 row(s) of STRANGER have the (config_hash, trial) of rows of MINE") and "kmeans" in note


def test_a_clash_is_keyed_as_the_merge_keys_rows_trial_1_and_1_0_are_one_trial():
    mine = _rows("kmeans", 0.730, "2026-01-01T00:00:00").assign(trial_timeout=np.nan)  # no limit: missing
    theirs = _rows("kmeans", 0.99, "2030-01-01T00:00:00").astype({"trial": float}).assign(trial_timeout=np.nan)
    theirs.loc[2, "config_hash"] = "h_other"  # one row of another config: not a clash
    merged, _ = reporting.merge_with(mine, theirs)
    assert merged.attrs["shipped_clashes"] == 2 and merged.attrs["shipped_rows"] == 1
    assert sorted(merged["ari"]) == [0.73, 0.73, 0.73, 0.99]


def test_the_page_counts_the_stranger_rows_kept_and_names_the_clash():
    from ccbench.reporting.leaderboard import sweep_coverage

    mine = _rows("kmeans", 0.730, "2026-01-01T00:00:00")
    theirs = pd.concat([_rows("kmeans", 0.99, "2030-01-01T00:00:00"), _rows("pck_means", 0.5, "2030")],
                       ignore_index=True)
    merged, _ = reporting.merge_with(mine, theirs)
    line = sweep_coverage([], mine, shipped=(["STRANGER"], merged.attrs["shipped_rows"],
                                             merged.attrs["shipped_clashes"]))
    assert "Ranked with the shipped rows of STRANGER (3 rows, not re-run" in line
    assert "3 of their rows had the (config_hash, trial) of rows of this sweep and were left out" in line


def test_the_re_shipped_rows_keep_the_readers_rows(tmp_path):
    mine = _rows("kmeans", 0.730, "2026-01-01T00:00:00")
    theirs = pd.concat([_rows("kmeans", 0.99, "2030-01-01T00:00:00"), _rows("pck_means", 0.5, "2030")],
                       ignore_index=True)
    merged, _ = reporting.merge_with(mine, theirs)
    shp.write_shipped(merged, tmp_path / "out", dirs=[tmp_path])
    back = shp.read_shipped(tmp_path / "out")
    assert sorted(back.loc[back["method.name"] == "kmeans", "ari"]) == [0.73] * 3
    assert sorted(back.loc[back["method.name"] == "pck_means", "ari"]) == [0.5] * 3


# -- bounds: what a folder can make the reader do ------------------------------------------------------------


def _union_by_listing(boxes, keys, by):
    """The jobs of the grids listed one by one (the route the coverage line took before): the reference."""
    import itertools

    jobs = set()
    for box in boxes:
        jobs |= set(itertools.product(*[[(k, v) for v in box[k]] for k in keys]))
    counts = {}
    for job in jobs:
        tag = dict(job)[by]
        counts[tag] = counts.get(tag, 0) + 1
    return counts


def test_counting_the_jobs_of_overlapping_grids_agrees_with_listing_them():
    from ccbench.reporting.leaderboard.coverage import count_jobs

    # the docstring's case: A = {a, b} x {x}, B = {b, c} x {x, y}: 2 + 4 - 1 = 5 jobs
    boxes = [{"dataset": {"a", "b"}, "m": {"x"}}, {"dataset": {"b", "c"}, "m": {"x", "y"}}]
    assert count_jobs(boxes, ["dataset", "m"]) == {None: 5}
    assert count_jobs(boxes, ["dataset", "m"], by="dataset") == {"a": 1, "b": 2, "c": 2}
    rng = np.random.default_rng(54)
    for _ in range(40):
        keys = ["dataset", "k1", "k2", "k3"][: rng.integers(2, 5)]
        boxes = [{k: set(rng.choice(list("abcde"), size=rng.integers(1, 4)).tolist()) for k in keys}
                 for _ in range(rng.integers(1, 6))]
        assert count_jobs(boxes, keys, by="dataset") == _union_by_listing(boxes, keys, "dataset")
        assert count_jobs(boxes, keys) == {None: sum(_union_by_listing(boxes, keys, "dataset").values())}


def _huge_grid(n_sets: int = 99) -> dict:
    """A grid of ``n_sets`` x 10**5 jobs, under the 10,000,000-job cap, written in a few kilobytes."""
    return {"dataset": [f"d{i}" for i in range(n_sets)], "method": ["kmeans"],
            **{f"k{j}": [str(v) for v in range(10)] for j in range(5)}}


def test_the_coverage_of_a_grid_of_ten_million_jobs_is_counted_not_listed(tmp_path, monkeypatch):
    import itertools

    from ccbench.reporting.leaderboard import sweep_coverage

    real, drawn = itertools.product, [0]

    def listed(*args, **kwargs):  # the old route listed every job: stop it long before memory runs out
        for job in real(*args, **kwargs):
            drawn[0] += 1
            if drawn[0] > 100_000:
                raise AssertionError("the coverage line lists the grid's jobs one by one")
            yield job

    rows = _rows("kmeans", 0.7, "2026").assign(**{"dataset.name": "d0"})
    shp.write_shipped(rows, tmp_path / "folder", grids=[_huge_grid()])
    assert (tmp_path / "folder" / "grid.json").stat().st_size < 4096
    monkeypatch.setattr(itertools, "product", listed)
    line = sweep_coverage([tmp_path / "folder"], rows)
    assert line.startswith("Sweep coverage: 1 of the 9,900,000 jobs")  # 99 x 10**5; the rows' job is one of them
    assert "Data sets complete: 0 of 99; partly done: d0 (1 of 100000 jobs); not started: d1, d10," in line


def test_grids_too_intricate_to_count_are_left_out_with_a_warning(monkeypatch):
    from ccbench.reporting.leaderboard import coverage

    monkeypatch.setattr(coverage, "MAX_COUNT_STEPS", 50)
    boxes = [{"dataset": {f"d{i}" for i in range(30)}, "m": {str(v) for v in range(30)}}]
    with pytest.raises(ValueError, match="MAX_COUNT_STEPS"):
        coverage.count_jobs(boxes, ["dataset", "m"])


def _sweep(root: Path) -> Path:
    """A sweep directory of one job (``root/job/results.parquet``, three rows)."""
    from ccbench.running.results import write_results

    write_results(_rows("kmeans", 0.7, "2026").drop(columns="source"), root / "job" / "results.parquet")
    return root


@pytest.fixture
def fifo_feeder():
    """``feed(path)``: a FIFO at ``path`` with a writer waiting to send it garbage, so a reader that opens it
    gets a damaged file instead of blocking the test for ever; released at teardown if nobody opened it."""
    import threading

    made = []

    def feed(path: Path) -> Path:
        os.mkfifo(path)

        def write():
            try:
                with open(path, "wb") as pipe:  # blocks until a reader opens the FIFO
                    pipe.write(b"not parquet")
            except OSError:
                pass
        thread = threading.Thread(target=write, daemon=True)
        thread.start()
        made.append((path, thread))
        return path

    yield feed
    for path, thread in made:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # the writer's open returns: the thread ends
        thread.join(5)
        os.close(fd)


def test_a_fifo_named_results_parquet_is_refused_without_opening_it(tmp_path, fifo_feeder):
    sweep = _sweep(tmp_path / "sweep")
    (sweep / "odd").mkdir()
    fifo_feeder(sweep / "odd" / "results.parquet")
    with pytest.raises(ValueError, match=r"odd/results.parquet: it is a FIFO \(named pipe\), not a regular file"):
        reporting.load(sweep)
    with pytest.warns(UserWarning, match="FIFO"):  # damaged="skip": left out, named, the other rows read
        assert len(reporting.load(sweep, damaged="skip")) == 3


def test_a_results_parquet_that_is_a_symbolic_link_is_not_followed(tmp_path):
    elsewhere = _sweep(tmp_path / "elsewhere")
    sweep = tmp_path / "sweep"
    (sweep / "job").mkdir(parents=True)
    (sweep / "job" / "results.parquet").symlink_to(elsewhere / "job" / "results.parquet")
    with pytest.raises(ValueError, match="it is a symbolic link, not a regular file"):
        reporting.load(sweep)


def test_a_fifo_named_rows_parquet_is_refused(tmp_path, fifo_feeder):
    folder = tmp_path / "folder"
    shp.write_shipped(_rows("kmeans", 0.7, "2026"), folder)
    (folder / "rows.parquet").unlink()
    fifo_feeder(folder / "rows.parquet")
    with pytest.raises(ValueError, match="not a plain file"):
        reporting.load(folder)


def _shipped_folder(tmp_path, n_methods: int = 2) -> Path:
    rows = pd.concat([_rows(m, 0.7, "2026") for m in ("kmeans", "pck_means", "ap")[:n_methods]], ignore_index=True)
    shp.write_shipped(rows, tmp_path / "folder")
    return tmp_path / "folder"


def test_a_manifest_naming_one_rows_file_twice_is_refused(tmp_path):
    folder = _shipped_folder(tmp_path)
    manifest = folder / "manifest.jsonl"
    line = manifest.read_text().splitlines()[0]
    manifest.write_text(manifest.read_text() + (line + "\n") * 2)
    with pytest.raises(ValueError, match=r"line 2: names 'rows.parquet' again \(line 1\)"):
        reporting.load(folder)


def test_a_rows_file_above_the_row_cap_is_refused_before_a_row_is_loaded(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    folder = _shipped_folder(tmp_path)  # 6 rows
    assert len(reporting.load(folder)) == 6
    monkeypatch.setenv("CCBENCH_MAX_SHIPPED_ROWS", "5")

    def loaded(*args, **kwargs):
        raise AssertionError("rows were loaded before the cap was checked")

    monkeypatch.setattr(pq.ParquetFile, "read", loaded)
    monkeypatch.setattr(pq, "read_table", loaded)
    with pytest.raises(ValueError, match=r"hold 6 rows, above the 5 .*MAX_SHIPPED_ROWS.*CCBENCH_MAX_SHIPPED_ROWS=6"):
        reporting.load(folder)
    assert shp.MAX_SHIPPED_ROWS == 2_000_000  # the documented default (docs/leaderboard.md)


def test_the_row_cap_counts_every_rows_file_of_the_folder(tmp_path, monkeypatch):
    import hashlib
    import json

    folder = _shipped_folder(tmp_path)
    (folder / "more.parquet").write_bytes((folder / "rows.parquet").read_bytes())
    line = json.loads((folder / "manifest.jsonl").read_text().splitlines()[0])
    line.update(file="more.parquet", sha256=hashlib.sha256((folder / "more.parquet").read_bytes()).hexdigest())
    with open(folder / "manifest.jsonl", "a") as manifest:
        manifest.write(json.dumps(line) + "\n")
    monkeypatch.setenv("CCBENCH_MAX_SHIPPED_ROWS", "11")
    with pytest.raises(ValueError, match="hold 12 rows, above the 11"):
        reporting.load(folder)
    monkeypatch.setenv("CCBENCH_MAX_SHIPPED_ROWS", "12")
    assert len(reporting.load(folder)) == 6  # the same six rows twice: one per (config_hash, trial)


def test_rows_files_above_the_byte_cap_and_an_oversized_manifest_are_refused(tmp_path, monkeypatch):
    folder = _shipped_folder(tmp_path)
    monkeypatch.setenv("CCBENCH_MAX_SHIPPED_BYTES", "100")
    with pytest.raises(ValueError, match=r"above the 100 .*MAX_SHIPPED_BYTES.*CCBENCH_MAX_SHIPPED_BYTES="):
        reporting.load(folder)
    monkeypatch.delenv("CCBENCH_MAX_SHIPPED_BYTES")
    with open(folder / "manifest.jsonl", "a") as manifest:
        manifest.write(" " * shp.MAX_MANIFEST_BYTES)
    with pytest.raises(ValueError, match=r"manifest.jsonl: .* bytes, above the 1,048,576"):
        reporting.load(folder)


# -- a folder is written as a whole --------------------------------------------------------------------------


class _Killed(Exception):
    """What a kill midway looks like to the writer's caller."""


def _snapshot(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_shipping_killed_before_its_manifest_leaves_the_old_folder_readable(tmp_path, monkeypatch):
    folder = _shipped_folder(tmp_path, n_methods=2)
    (folder / "index.md").write_text("the pages beside the rows\n")  # a file the shipping does not write
    before = _snapshot(folder)
    new = pd.concat([_rows(m, 0.1, "2027") for m in ("kmeans", "pck_means", "ap")], ignore_index=True)

    def killed(path, *args, **kwargs):
        raise _Killed(path)

    monkeypatch.setattr(shp, "write_text", killed)  # the manifest is written last: the rows are already new
    with pytest.raises(_Killed):
        shp.write_shipped(new, folder)
    assert _snapshot(folder) == before
    back = shp.read_shipped(folder)  # not "changed or damaged": the old rows, checked against the old manifest
    assert len(back) == 6 and (back["ari"] == 0.7).all()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"]  # no staging folder left behind
    monkeypatch.undo()
    shp.write_shipped(new, folder)  # the same call, not killed: the new rows, the pages kept
    assert len(shp.read_shipped(folder)) == 9 and (folder / "index.md").read_text() == "the pages beside the rows\n"


def test_a_folder_left_aside_by_a_kill_between_two_renames_is_put_back(tmp_path):
    import subprocess
    import sys

    from ccbench.reporting._safe import staged_dir

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    aside = tmp_path / f".site.{dead}.old"
    aside.mkdir()
    (aside / "index.html").write_text("old")
    (tmp_path / f".site.{dead}.staging").mkdir()  # the half-written new one: removed
    with staged_dir(tmp_path / "site") as staging:
        assert (staging / "index.html").read_text() == "old"  # the old site, back in place and staged
        (staging / "index.html").write_text("new")
    assert (tmp_path / "site" / "index.html").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_staging_never_reads_a_fifo_and_keeps_links_as_links(tmp_path):
    from ccbench.reporting._safe import staged_dir

    target = tmp_path / "site"
    target.mkdir()
    os.mkfifo(target / "pipe")
    (target / "link").symlink_to("/etc/hostname")
    with staged_dir(target) as staging:
        (staging / "page.html").write_text("p")
    assert (target / "link").is_symlink() and os.readlink(target / "link") == "/etc/hostname"
    assert not (target / "pipe").is_file() and (target / "pipe").exists() and (target / "page.html").exists()


def _board_rows() -> pd.DataFrame:
    from ccbench.reporting.summary import prepare

    rng = np.random.default_rng(0)
    frames = [pd.DataFrame({"config_hash": f"{d}{m}{n}", "trial": np.arange(3), "timestamp": "2026",
                            "method.name": m, "dataset.name": d, "constraints.name": "random_pairs",
                            "constraints.n_constraints": n, "noise.name": "none", "status": "ok",
                            "ari": rng.uniform(0.3, 0.9, 3), "seed": 0, "n_trials": 3, "fit_time": 0.01})
              for d in ("iris",) for m in ("kmeans", "pck_means") for n in (0, 20)]
    return prepare(pd.concat(frames, ignore_index=True))


def test_a_site_write_killed_midway_leaves_the_old_site(tmp_path, monkeypatch):
    from ccbench.reporting.leaderboard import site

    old = {"index.html": b"first run", "kind-pairs.html": b"first run", "method-kmeans.html": b"first run",
           "method-pck_means.html": b"first run", "dataset-iris.html": b"first run"}
    (tmp_path / "site").mkdir()
    for name, blob in old.items():
        (tmp_path / "site" / name).write_bytes(blob)
    real, calls = site.write_text, []

    def killed_at_the_third_page(path, text, out=None):
        calls.append(path)
        if len(calls) == 3:
            raise _Killed(path)
        return real(path, text, out)

    monkeypatch.setattr(site, "write_text", killed_at_the_third_page)
    with pytest.raises(_Killed):
        site.write_site(_board_rows(), tmp_path / "site", metric="ari", command="second run")
    assert len(calls) == 3  # two pages of the second run were written, somewhere
    assert _snapshot(tmp_path / "site") == old  # not beside the first run's pages
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


# -- a plugins=[...] module that hangs at import ------------------------------------------------------------


def test_a_plugins_module_that_hangs_at_import_is_named_not_waited_for(tmp_path, monkeypatch):
    from ccbench import registry

    (tmp_path / "ccbench_test_hangs_at_import.py").write_text(
        "import time\ntime.sleep(2)\nraise RuntimeError('only now')\n")  # an import that takes far too long
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("CCBENCH_PLUGIN_IMPORT_TIMEOUT", "0.2")
    with pytest.raises(ImportError, match=r"'ccbench_test_hangs_at_import'.*did not finish within 0.2 s.*"
                                          r"CCBENCH_PLUGIN_IMPORT_TIMEOUT"):
        registry.load_plugins(["ccbench_test_hangs_at_import"])
    (tmp_path / "ccbench_test_quick_import.py").write_text("x = 1\n")  # a module without hooks registers at once
    registry.load_plugins(["ccbench_test_quick_import"])
    registry.unregister_plugin("ccbench_test_quick_import")


# -- check-plugin on a fit that never returns ----------------------------------------------------------------


def test_check_plugin_stops_after_two_hung_checks_and_reports_each_as_it_comes(monkeypatch):
    from ccbench.running import check_plugin as cp

    seen, calls = [], []

    def hung(runner, timeout, plugins, name, group, check):  # every fit hangs: what the worker would say
        assert len(seen) == len(calls), "a result was held back until the end"
        calls.append(check or "estimator checks")
        return [cp.CheckResult(group, check or "estimator checks", "fail",
                               f"no result within --timeout {timeout:g} s (a fit that never returns?)")]

    monkeypatch.setattr(cp, "_isolated", hung)
    results = cp.check_method("kmeans", groups=("estimator", "hostile"), timeout=5, on_result=seen.append)
    assert calls == ["estimator checks", cp.HOSTILE_CHECKS[0]]  # 2 x --timeout, not 1 + len(HOSTILE_CHECKS)
    assert seen == results and len(results) == 1 + len(cp.HOSTILE_CHECKS)
    skipped = results[2:]
    assert {r.status for r in skipped} == {"skip"} and "the last 2 checks gave no result" in skipped[0].detail
    assert [r.name for r in skipped] == list(cp.HOSTILE_CHECKS[1:])


def test_check_plugin_goes_on_after_one_hung_check(monkeypatch):
    from ccbench.running import check_plugin as cp

    def once(runner, timeout, plugins, name, group, check):  # only the first hostile check hangs
        if check == cp.HOSTILE_CHECKS[0]:
            return [cp.CheckResult(group, check, "fail", f"no result within --timeout {timeout:g} s")]
        return [cp.CheckResult(group, check or "estimator checks", "pass")]

    monkeypatch.setattr(cp, "_isolated", once)
    results = cp.check_method("kmeans", groups=("estimator", "hostile"), timeout=5)
    assert [r.status for r in results] == ["pass", "fail"] + ["pass"] * (len(cp.HOSTILE_CHECKS) - 1)


def test_a_fifo_named_cell_json_or_labels_npz_is_refused_without_opening_it(tmp_path, fifo_feeder):
    from ccbench.reporting.summary import read_cell

    sweep = _sweep(tmp_path / "sweep")
    fifo_feeder(sweep / "job" / "cell.json")
    with pytest.raises(ValueError, match=r"cell.json: it is a FIFO \(named pipe\)"):
        read_cell(sweep / "job" / "cell.json")
    fifo_feeder(sweep / "job" / "labels.npz")
    with pytest.raises(ValueError, match=r"labels.npz: it is a FIFO \(named pipe\)"):
        shp.write_shipped(reporting.load(sweep), tmp_path / "out", dirs=[sweep])


def test_ctrl_c_during_a_report_is_one_line_and_exit_130(monkeypatch, capsys):
    from ccbench.running import report_command
    from ccbench.running.cli import main

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(report_command, "_report", interrupted)
    try:
        status = main(["report", "anywhere"])
    except KeyboardInterrupt:  # what the command did before: Python's traceback (and it would stop pytest)
        pytest.fail("Ctrl-C escaped the report command as a traceback")
    assert status == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().startswith("ccbench report: interrupted;")


def test_a_lock_held_past_the_lock_timeout_is_given_up_naming_its_holder(tmp_path, monkeypatch):
    import fcntl
    import threading

    from ccbench.running import _locks

    path = tmp_path / "results.parquet"
    lock = _locks.lock_path(path)
    holder = open(lock, "a+")  # another open file: flock conflicts as between processes
    fcntl.flock(holder, fcntl.LOCK_EX)
    holder.write('{"pid": 4242, "host": "node7", "since": "2026-11-29T01:00:00+00:00", "command": "ccbench stopped"}')
    holder.flush()
    release = threading.Timer(3.0, lambda: fcntl.flock(holder, fcntl.LOCK_UN))  # before: the wait ended only here
    release.start()
    monkeypatch.setenv("CCBENCH_LOCK_TIMEOUT", "0.3")
    try:
        with pytest.raises(TimeoutError, match=r"after \d+ s \(CCBENCH_LOCK_TIMEOUT=0.3\), held by pid 4242 on node7"):
            with _locks.locked(path):
                pass
    finally:
        release.cancel()
        holder.close()
