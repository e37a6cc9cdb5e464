"""``ccbench fetch`` (every data set a run needs, verified ahead of it) and the ``uci_all`` suite."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from ccbench.data import _files as _data_files
from ccbench.datasets import expand_suites, read_manifest, suites
from ccbench.running.cli import main
from ccbench.running.fetch import needed_datasets
import _proc  # on time-out, the command's whole process group is killed (issue 54)

SHARED = Path(os.environ.get("CCBENCH_DATA_DIR") or "/work/shared/datasets")
needs_data = pytest.mark.skipif(not (SHARED / "pima").is_dir(), reason="the UCI copies are not here")
# the UCI sets of the SCSSAP Fig. 3 experiment (iris, wine, breast_cancer are scikit-learn's)
FIG3_UCI = ("parkinsons", "spectf", "ionosphere", "balance", "pima")


def _files(names):
    manifest = read_manifest()
    return [f"{e.name}/{e.file}" for n in names for e in manifest[n]]


def test_the_suite_is_the_24_uci_sets_of_the_manifest():
    assert suites()["uci_all"] == tuple(read_manifest())
    assert len(suites()["uci_all"]) == 24


def test_expand_suites():
    assert expand_suites(["dataset=uci_all"]) == [f"dataset={','.join(suites()['uci_all'])}"]
    assert expand_suites(["dataset=iris,uci_all,balance", "method=ap"]) == [
        f"dataset=iris,{','.join(suites()['uci_all'])}", "method=ap"]  # balance once
    assert expand_suites(["dataset=iris", "dataset.missing=impute"]) == ["dataset=iris", "dataset.missing=impute"]


def test_needed_datasets_follow_the_sweep():
    fig3 = [d["dataset"]["name"] for d in needed_datasets(["experiment=scssap_fig3"])]
    assert fig3 == ["iris", "wine", "parkinsons", "spectf", "ionosphere", "breast_cancer", "balance", "pima"]
    # the command line replaces the experiment's list, as in the sweep
    assert [d["dataset"]["name"] for d in needed_datasets(["experiment=scssap_fig3", "dataset=zoo"])] == ["zoo"]


@pytest.mark.slow
def test_needed_datasets_of_a_suite():
    suite = needed_datasets(["-m", "dataset=uci_all,iris", "dataset.missing=impute,drop"])
    assert len(suite) == 25 * 2 and {d["dataset"]["name"] for d in suite} == {*suites()["uci_all"], "iris"}


def test_progress_counts_the_jobs_of_a_suite():
    from hydra import compose, initialize_config_module

    from ccbench.running.app import _count_jobs

    with initialize_config_module("ccbench_conf", version_base="1.3"):
        cfg = compose("config", overrides=["dataset=uci_all", "method=kmeans"], return_hydra_config=True)
    cfg.hydra.overrides.task = ["dataset=uci_all,iris", "method=ap,kmeans"]
    assert _count_jobs(cfg) == 25 * 2


@needs_data
def test_fetch_verifies_every_file_of_an_experiment(capsys, monkeypatch):
    monkeypatch.setenv("CCBENCH_DATA_DIR", str(SHARED))
    assert main(["fetch", "experiment=scssap_fig3"]) == 0
    out = capsys.readouterr().out
    for f in _files(FIG3_UCI):
        assert f"ok      {SHARED / f} (sha256 ok)" in out
    assert "iris: bundled with scikit-learn" in out


@needs_data
def test_fetch_names_a_corrupted_copy(tmp_path, capsys, monkeypatch):
    for name in FIG3_UCI:
        shutil.copytree(SHARED / name, tmp_path / name)
    bad = tmp_path / "pima" / "pima-indians-diabetes.data"
    bad.write_bytes(bad.read_bytes().replace(b"6,148", b"7,148", 1))
    monkeypatch.setenv("CCBENCH_DATA_DIR", str(tmp_path))
    assert main(["fetch", "experiment=scssap_fig3"]) == 1
    captured = capsys.readouterr()
    assert f"FAILED  {bad}: " in captured.err and "failed its checksum" in captured.err
    assert "1 data file(s) missing or corrupt" in captured.err
    assert f"ok      {tmp_path / 'balance' / 'balance-scale.data'}" in captured.out  # the others still checked


def test_fetch_names_a_file_it_cannot_download(tmp_path, capsys, monkeypatch):
    def offline(entry, path):
        raise _data_files.DataDownloadError(f"could not download {entry.file} (test: no network)")

    monkeypatch.setattr(_data_files, "_download", offline)
    monkeypatch.setenv("CCBENCH_DATA_DIR", str(tmp_path))
    assert main(["fetch", "dataset=zoo"]) == 1
    assert f"FAILED  {tmp_path / 'zoo' / 'zoo.data'}: could not download zoo.data" in capsys.readouterr().err


def test_fetch_refuses_unknown_options(capsys):
    assert main(["fetch", "dataset=uci_al"]) == 2
    assert "did you mean dataset=uci_all?" in capsys.readouterr().err


def test_fetch_checks_a_csv_against_its_sha256(tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,x\n2,y\n")
    assert main(["fetch", "dataset=csv", f"dataset.path={table}", f"dataset.sha256={'0' * 64}"]) == 1
    assert f"FAILED  {table}" in capsys.readouterr().err


@pytest.mark.slow
def test_uci_all_sweeps_the_24_sets(tmp_path):
    """The suite in a real multirun: an unknown key stops it before any job, once per member set."""
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = _proc.run([sys.executable, "-m", "ccbench.running.cli", "-m", "dataset=uci_all", "method=kmeans",
                           "dataset.nope=1", f"hydra.sweep.dir={tmp_path / 's'}"],
                     capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 2, proc.stderr[-3000:]
    named = {line.split("data set '")[1].split("'")[0] for line in proc.stderr.splitlines()
             if line.strip().startswith("dataset.nope:")}
    assert named == set(suites()["uci_all"])
