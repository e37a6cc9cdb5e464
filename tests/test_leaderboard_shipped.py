"""Issue 39: shipped rows (item 1), ranking a new method against them (item 2), comparing two sweeps (item 3).

Small sweeps through the real harness (iris; kmeans, pck_means, cop_kmeans; two trials), shipped with
``ccbench report DIR --leaderboard --out FOLDER`` and read back through the same command.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ccbench.running.cli import main
from ccbench.running.harness import run_job
from leaderboard_fixture import make_small_sweep as run_sweep
from ccbench.running.results import read_results, write_results

@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """A sweep of kmeans and pck_means, and its shipped folder."""
    root = tmp_path_factory.mktemp("lb")
    sweep = run_sweep(root / "sweep", ["kmeans", "pck_means"])
    assert main(["report", str(sweep), "--leaderboard", "--out", str(root / "shipped")]) == 0
    return sweep, root / "shipped"


def _rows(folder) -> pd.DataFrame:
    return pd.read_parquet(Path(folder) / "rows.parquet")


# -- item 1: shipped rows ----------------------------------------------------------------------


def test_shipped_rows_are_compact_parquet_with_a_manifest_line(shipped):
    import pyarrow.parquet as pq

    sweep, folder = shipped
    lines = [json.loads(x) for x in (folder / "manifest.jsonl").read_text().splitlines()]
    rows_line = next(x for x in lines if x["kind"] == "rows")
    import hashlib

    assert rows_line["sha256"] == hashlib.sha256((folder / "rows.parquet").read_bytes()).hexdigest()
    gathered = pd.concat(read_results(p) for p in sweep.rglob("results.parquet"))
    assert rows_line["rows"] == len(gathered) == 2 * 3 * 2
    assert isinstance(rows_line["protocol_hash"], str) and rows_line["protocol"][rows_line["protocol_hash"]]["n_trials"] == 2
    assert "ccbench_commit" in rows_line and rows_line["code_commits"]
    meta = pq.ParquetFile(folder / "rows.parquet").metadata
    status = meta.schema.names.index("status")
    assert meta.row_group(0).column(status).compression == "ZSTD"
    assert "RLE_DICTIONARY" in meta.row_group(0).column(status).encodings
    rows = _rows(folder)
    # every column a report needs: config, seeds, statuses, metrics, times, memory, provenance
    for col in ("config_hash", "method.name", "constraints.n_constraints", "trial", "trial_seed", "method_seed",
                "status", "ari", "nmi", "fit_time", "peak_rss_mb", "env.cpu", "code.git_commit", "protocol_hash"):
        assert col in rows, col
    assert not rows["source"].str.startswith("/").any()  # no local path shipped


def test_the_shipped_folder_is_read_like_a_sweep(shipped, tmp_path, capsys):
    from ccbench import reporting

    sweep, folder = shipped
    a, b = reporting.load(sweep), reporting.load(folder)
    key = ["config_hash", "trial"]
    a, b = a.sort_values(key).reset_index(drop=True), b.sort_values(key).reset_index(drop=True)
    pd.testing.assert_series_equal(a["ari"], b["ari"])
    assert list(a["method_label"]) == list(b["method_label"])
    assert main(["report", str(folder), "--leaderboard", "--out", str(tmp_path / "again")]) == 0
    again = pd.read_parquet(tmp_path / "again" / "leaderboard.parquet")
    first = pd.read_parquet(folder / "leaderboard.parquet")
    cols = ["kind", "table", "method"]
    assert set(map(tuple, again[cols].astype(str).to_numpy())) == set(map(tuple, first[cols].astype(str).to_numpy()))


def test_the_shipped_folder_regenerates_its_own_pages_and_ships_again_unchanged(shipped, tmp_path):
    """Pages made from the shipped rows are the sweep's pages, coverage line included (the grid ships in
    grid.json), and shipping the shipped rows again changes no byte of them (a job keeps its name)."""
    import yaml

    sweep, _ = shipped
    copy = tmp_path / "sweep"
    shutil.copytree(sweep, copy)
    grid = {"hydra": {"sweeper": {"params": {"dataset": "iris", "method": "kmeans,pck_means,cop_kmeans",
                                             "supervision": "unconstrained,pairs,labels"}},
                      "overrides": {"task": [], "hydra": []}}}
    (copy / "multirun.yaml").write_text(yaml.safe_dump(grid))
    first, again = tmp_path / "first", tmp_path / "again"
    assert main(["report", str(copy), "--leaderboard", "--out", str(first)]) == 0
    assert main(["report", str(first), "--leaderboard", "--out", str(again)]) == 0

    def page(folder, name):
        return (folder / name).read_text().replace(str(copy), "DIR").replace(str(first), "DIR")

    assert "Sweep coverage: 6 of the 9 jobs" in page(first, "index.md")
    for name in ("index.md", "pairs.md", "labels.md"):
        assert page(again, name) == page(first, name), name
    assert (again / "rows.parquet").read_bytes() == (first / "rows.parquet").read_bytes()
    assert str(tmp_path) not in (again / "rows.parquet").read_bytes().decode("latin-1")  # no local path inside
    assert json.loads((first / "grid.json").read_text())[0]["method"] == ["kmeans", "pck_means", "cop_kmeans"]


def test_regenerating_from_the_shipped_folder_and_its_sweep_records_each_grid_once(shipped, tmp_path):
    """The reference board is regenerated from its own shipped folder plus the sweeps it was made from: each
    regeneration recorded their grids again (grid.json had grown to 57 grids, 10 distinct)."""
    import yaml

    sweep, _ = shipped
    copy = tmp_path / "sweep"
    shutil.copytree(sweep, copy)
    grid = {"hydra": {"sweeper": {"params": {"dataset": "iris", "method": "kmeans,pck_means,cop_kmeans",
                                             "supervision": "unconstrained,pairs,labels"}},
                      "overrides": {"task": [], "hydra": []}}}
    (copy / "multirun.yaml").write_text(yaml.safe_dump(grid))
    first, again = tmp_path / "first", tmp_path / "again"
    assert main(["report", str(copy), "--leaderboard", "--out", str(first)]) == 0
    assert main(["report", str(first), str(copy), "--leaderboard", "--out", str(again)]) == 0
    assert len(json.loads((again / "grid.json").read_text())) == 1
    assert (again / "grid.json").read_bytes() == (first / "grid.json").read_bytes()


def test_a_text_column_gathered_as_object_ships_as_it_reads_back():
    """Texts gathered from job files are an object column; read back from a shipped file they are str
    (pandas 3): the bytes written are the read-back's, so shipping shipped rows again changes nothing."""
    import io

    import pyarrow.parquet as pq

    from ccbench.reporting.shipped import _parquet_bytes

    gathered = pd.DataFrame({"error": pd.Series([None, "ValueError: x", None], dtype=object), "ari": [0.5, np.nan, 1.0]})
    first = _parquet_bytes(gathered)
    assert _parquet_bytes(pq.read_table(io.BytesIO(first)).to_pandas()) == first


def _with_grid_file(folder, copy, blob: bytes):
    """A copy of the shipped ``folder`` whose grid.json is ``blob``, listed in its manifest (a stranger's)."""
    import hashlib

    shutil.copytree(folder, copy)
    (copy / "grid.json").write_bytes(blob)
    line = {"file": "grid.json", "kind": "grid", "sha256": hashlib.sha256(blob).hexdigest(), "rows": 1}
    with open(copy / "manifest.jsonl", "a") as manifest:
        manifest.write(json.dumps(line) + "\n")
    return copy


def test_a_shipped_grid_of_the_wrong_shape_is_left_out_naming_it(shipped, tmp_path):
    from ccbench.reporting import leaderboard as lb

    copy = _with_grid_file(shipped[1], tmp_path / "copy", b'[{"method": "kmeans"}]\n')
    with pytest.warns(UserWarning, match=r"grid.json: a grid file is a list of"):
        assert lb.sweep_coverage([copy], _rows(copy)) is None


def test_a_changed_shipped_file_is_refused_naming_it(shipped, tmp_path, capsys):
    _, folder = shipped
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    blob = bytearray((copy / "rows.parquet").read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    (copy / "rows.parquet").write_bytes(bytes(blob))
    assert main(["report", str(copy), "--leaderboard", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "rows.parquet does not match its manifest line" in err and "ship it again" in err


def test_a_manifest_line_cannot_name_a_file_outside_the_folder(shipped, tmp_path, capsys):
    _, folder = shipped
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    line = json.loads((copy / "manifest.jsonl").read_text().splitlines()[0])
    (copy / "manifest.jsonl").write_text(json.dumps({**line, "file": "../copy/rows.parquet"}) + "\n")
    assert main(["report", str(copy)]) == 2
    assert "is not a plain file in" in capsys.readouterr().err


def test_stored_labels_are_shipped_and_score_without_a_refit(shipped):
    """``store_labels`` keeps every ok trial's partition: the shipped labels give the rows' ARI back."""
    from ccbench.datasets import load_dataset
    from ccbench.metrics import adjusted_rand

    _, folder = shipped
    labels = pd.read_parquet(folder / "labels.parquet")
    rows = _rows(folder)
    ok = rows[rows["status"] == "ok"]
    assert len(labels) == len(ok) > 0
    y = load_dataset("iris", preprocess="standardize").y
    joined = ok.merge(labels, on=["config_hash", "trial"])
    assert len(joined) == len(ok)
    for ari, partition in zip(joined["ari"], joined["labels"]):
        assert np.isclose(adjusted_rand(y, np.asarray(partition)), ari)
    import pyarrow.parquet as pq

    assert str(pq.read_schema(folder / "labels.parquet").field("labels").type) == "list<element: int16>"


# -- item 2: rank my method --------------------------------------------------------------------


def test_with_ranks_a_new_method_against_the_shipped_rows(shipped, tmp_path):
    _, folder = shipped
    mine = run_sweep(tmp_path / "mine", ["cop_kmeans"])
    assert set(pd.concat(read_results(p) for p in mine.rglob("results.parquet"))["method.name"]) == {"cop_kmeans"}
    out = tmp_path / "ranked"
    assert main(["report", str(mine), "--leaderboard", "--with", str(folder), "--out", str(out)]) == 0
    tables = pd.read_parquet(out / "leaderboard.parquet")
    ranked = set(tables[(tables["kind"] == "pairs") & (tables["table"] == "ranks")]["method"])
    assert ranked == {"kmeans", "pck_means", "cop_kmeans"}
    merged = _rows(out)  # the merge is shipped too: how a contributor's rows join ours
    assert len(merged) == len(_rows(folder)) + 6
    page = (out / "pairs.md").read_text()
    # the page's command regenerates it (with --with), and says which rows were not re-run
    assert f"`ccbench report {mine} --leaderboard --metric ari --margin 0.03 --with {folder}`" in page
    assert f"Ranked with the shipped rows of {folder} ({len(merged) - 6:,} rows, not re-run" in page


def test_with_refuses_rows_of_another_protocol_with_the_reason(shipped, tmp_path, capsys):
    _, folder = shipped
    other = run_sweep(tmp_path / "other", ["cop_kmeans"], evaluate_on="both")
    assert main(["report", str(other), "--leaderboard", "--with", str(folder), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "different protocols" in err and 'evaluate_on: "both"' in err and '"all"' in err
    assert not (tmp_path / "o" / "leaderboard.parquet").exists()


def test_with_refuses_cells_the_shipped_grid_lacks(shipped, tmp_path, capsys):
    _, folder = shipped
    other = tmp_path / "other"
    run_job({"dataset": {"name": "iris", "preprocess": "standardize"}, "method": {"name": "kmeans", "n_clusters": "true_k"},
             "constraints": {"name": "random_pairs", "n_constraints": 40}, "noise": {"name": "none"}, "n_trials": 2,
             "metrics": ["ari", "nmi"]}, out_dir=other / "job")
    assert main(["report", str(other), "--leaderboard", "--with", str(folder), "--out", str(tmp_path / "o")]) == 2
    assert "not in the shipped grid" in capsys.readouterr().err


def test_with_warns_when_time_verdicts_come_from_another_machine(shipped):
    from ccbench import reporting

    sweep, folder = shipped
    theirs, mine = reporting.load(folder), reporting.load(sweep)
    mine = mine[mine["method.name"] == "kmeans"].copy()
    mine["config_hash"] = mine["config_hash"] + "x"  # another method's rows, as far as the merge knows
    merged, notes = reporting.merge_with(mine, theirs)
    assert notes == [] and len(merged) == len(theirs) + len(mine)
    mine.loc[mine.index[0], ["status", "env.cpu"]] = ["timeout", "a slower CPU"]
    _, notes = reporting.merge_with(mine, theirs)
    assert len(notes) == 1 and "1 timeout/refused verdict(s)" in notes[0] and "a slower CPU" in notes[0]


# -- item 3: compare two sweeps ----------------------------------------------------------------


def test_compare_sweeps_finds_the_one_planted_difference(shipped, tmp_path, capsys):
    sweep, _ = shipped
    other = tmp_path / "b"
    shutil.copytree(sweep, other)
    planted = other / "iris_pck_means_1" / "results.parquet"  # pck_means at 20 pairs
    rows = read_results(planted)
    rows["ari"] = rows["ari"] - 0.25
    rows["env.cpu"] = "another CPU"
    write_results(rows, planted)
    out = tmp_path / "cmp"
    assert main(["report", str(sweep), str(other), "--compare-sweeps", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    table = pd.read_csv(out / "compare.csv")
    assert (table["verdict"] == "disagree").sum() == 1 and (table["verdict"] == "identical").sum() == len(table) - 1
    bad = table[table["verdict"] == "disagree"].iloc[0]
    assert bad["method"] == "pck_means" and "n_constraints=20" in bad["cell"]
    assert np.isclose(bad["ari_diff"], -0.25) and "another CPU" in bad["made_by_b"]
    assert "another CPU" not in bad["made_by_a"]
    assert "| disagree | 1 |" in text and "| identical | 5 |" in text
    assert bad["beyond_on"] == "ari"  # which metric is beyond its trial spread


def test_compare_sweeps_counts_configs_one_sweep_lacks_per_data_set(shipped, tmp_path, capsys):
    # a re-run of some data sets against the whole sweep: the rest is counted, not listed config by config
    sweep, _ = shipped
    other = tmp_path / "b"
    shutil.copytree(sweep, other)
    for job in other.glob("iris_kmeans_*"):
        shutil.rmtree(job)
    assert main(["report", str(sweep), str(other), "--compare-sweeps"]) == 0
    text = capsys.readouterr().out
    table = compare_rows_of(sweep, other)
    lacking = int((table["verdict"] == "only in A").sum())
    assert lacking > 0 and f"- only in A: {lacking:,} configs (iris {lacking})" in text
    assert "| only in A | iris" not in text and "| identical | " in text


def compare_rows_of(a_dir, b_dir):
    from ccbench import reporting
    from ccbench.reporting.compare_sweeps import compare_rows

    return compare_rows(reporting.load(a_dir), reporting.load(b_dir), ["ari"])


def test_compare_sweeps_counts_run_to_run_noise_as_within_the_spread(shipped, tmp_path):
    from ccbench.reporting.compare_sweeps import compare_rows
    from ccbench import reporting

    sweep, _ = shipped
    a = reporting.load(sweep)
    b = a.copy()
    b.loc[b["method.name"] == "kmeans", "ari"] += np.where(b.loc[b["method.name"] == "kmeans", "trial"] == 0, 0.01, -0.01)
    b.loc[(b["method.name"] == "pck_means") & (b["trial"] == 1), "status"] = "timeout"
    table = compare_rows(a, b, ["ari"])
    verdicts = table.groupby("method")["verdict"].agg(set)
    assert verdicts["kmeans"] == {"within spread"}
    assert verdicts["pck_means"] == {"status differs"}


def test_a_grid_claiming_billions_of_jobs_is_left_out_whichever_file_holds_it(shipped, tmp_path):
    """One bound for both files a stranger can hand the coverage line: a shipped grid.json and a sweep
    directory's multirun.yaml (10 keys of 10 values: 10^10 jobs, never listed)."""
    import yaml

    from ccbench.reporting import leaderboard as lb

    huge = {f"key{i}": [str(v) for v in range(10)] for i in range(10)}
    copy = _with_grid_file(shipped[1], tmp_path / "copy", (json.dumps([huge]) + "\n").encode())
    with pytest.warns(UserWarning, match=r"grid.json: a grid of more than 10,000,000 jobs"):
        assert lb.sweep_coverage([copy], _rows(copy)) is None
    params = {k: ",".join(v) for k, v in huge.items()}
    (tmp_path / "multirun.yaml").write_text(yaml.safe_dump(
        {"hydra": {"sweeper": {"params": params}, "overrides": {"task": [], "hydra": []}}}))
    with pytest.warns(UserWarning, match=r"multirun.yaml: a grid of more than 10,000,000 jobs"):
        assert lb.sweep_coverage([tmp_path], _rows(copy)) is None


def test_only_ok_trials_ship_labels(shipped, tmp_path):
    """A trial whose row is not ok has no partition of this run: labels left on disk by an earlier run of
    it are not shipped beside it."""
    sweep, _ = shipped
    copy = tmp_path / "sweep"
    shutil.copytree(sweep, copy)
    job = next(copy.glob("iris_kmeans_1"))
    rows = read_results(job / "results.parquet")
    rows.loc[rows["trial"] == 0, ["status", "error"]] = ["timeout", "TrialTimeout: planted"]
    write_results(rows, job / "results.parquet")
    assert main(["report", str(copy), "--leaderboard", "--out", str(tmp_path / "out")]) == 0
    labels, shipped_rows = pd.read_parquet(tmp_path / "out" / "labels.parquet"), _rows(tmp_path / "out")
    ok = shipped_rows[shipped_rows["status"] == "ok"]
    assert len(labels) == len(ok) == len(shipped_rows) - 1


def test_check_labels_finds_a_partition_from_another_run(shipped, tmp_path, capsys):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/benchmarks as a package
    from benchmarks.check_labels import main as check

    sweep, folder = shipped
    assert check([str(folder)]) == 0 and check([str(sweep)]) == 0
    copy = tmp_path / "sweep"
    shutil.copytree(sweep, copy)
    from ccbench.running.labels_store import read_labels, write_labels

    job = next(copy.glob("iris_kmeans_1"))
    name = sorted(read_labels(job))[0]
    write_labels(job, {name: np.roll(read_labels(job)[name], 1)})  # another run's partition
    assert check([str(copy)]) == 1
    assert f"{job.name} trial 0" in capsys.readouterr().out


def _board_and_rerun(shipped, tmp_path, killed_trial=None):
    """A board folder at a 10 s budget and a 60 s re-run of its ``iris_kmeans_1`` job whose partitions differ
    (rolled by one); ``killed_trial``: that board trial is a timeout, with no partition, as a killed trial is."""
    from ccbench.running.labels_store import read_labels, write_labels

    sweep, _ = shipped
    board, rerun = tmp_path / "board", tmp_path / "rerun"
    shutil.copytree(sweep, board)
    for path in board.rglob("results.parquet"):
        rows = read_results(path)
        write_results(rows.assign(trial_timeout=10.0), path)
    job = next(board.glob("iris_kmeans_1"))
    shutil.copytree(job, rerun / job.name)
    rows = read_results(rerun / job.name / "results.parquet")
    write_results(rows.assign(trial_timeout=60.0), rerun / job.name / "results.parquet")
    board_labels = read_labels(job)
    write_labels(rerun / job.name, {k: np.roll(v, 1) for k, v in board_labels.items()})
    if killed_trial is not None:
        rows = read_results(job / "results.parquet")
        rows.loc[rows["trial"] == killed_trial, "status"] = "timeout"
        write_results(rows, job / "results.parquet")
        write_labels(job, {k: v for k, v in board_labels.items() if not k.endswith(f"_{killed_trial}")})
    assert main(["report", str(board), str(rerun), "--leaderboard", "--out", str(tmp_path / "out")]) == 0
    return board_labels, pd.read_parquet(tmp_path / "out" / "labels.parquet")


def _shipped_partition(labels: pd.DataFrame, name: str) -> list:
    chash, _, trial = name.rpartition("_")
    return [np.asarray(v) for v in labels[(labels["config_hash"] == chash) & (labels["trial"] == int(trial))]["labels"]]


def test_a_larger_budget_re_run_ships_the_board_s_partition_not_its_own(shipped, tmp_path):
    """leaderboard_budget6x's trials share (config_hash, trial) with the board's: where both are ok the shipped
    partition is the board's, the one its row's ARI was computed from (the regeneration of 2026-11-30 shipped
    15 SCSSAP-ML partitions of the re-run beside the board's rows)."""
    board_labels, labels = _board_and_rerun(shipped, tmp_path)
    for name, mine in board_labels.items():
        kept = _shipped_partition(labels, name)
        assert len(kept) == 1 and np.array_equal(kept[0], mine), name


def test_a_re_run_ships_its_own_partition_where_the_board_trial_was_killed(shipped, tmp_path):
    """Where the board's trial timed out, the re-run's ok trial is the key's only partition: it ships."""
    board_labels, labels = _board_and_rerun(shipped, tmp_path, killed_trial=0)
    for name, mine in board_labels.items():
        kept = _shipped_partition(labels, name)
        expected = np.roll(mine, 1) if name.endswith("_0") else mine
        assert len(kept) == 1 and np.array_equal(kept[0], expected), name
