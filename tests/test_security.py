"""Opening a results folder from a stranger (issue 42): a report writes only inside its output folder,
replaces what is there instead of following it, keeps every text from the rows on its own line and
inert, loads no data set the folder chooses, and reads its YAML without expanding aliases.

Each test failed on the code before the fix.
"""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import pytest

from ccbench.running.cli import main
from ccbench.running.harness import run_job
from ccbench.running.results import read_results, write_results


def _cell(**extra) -> dict:
    return {"dataset": {"name": "iris"}, "method": {"name": "kmeans", "n_clusters": 3},
            "constraints": {"name": "random_pairs", "n_constraints": 10}, "noise": {"name": "none"},
            "n_trials": 2, "metrics": ["ari"], **extra}


@pytest.fixture(scope="module")
def _one_job(tmp_path_factory):
    root = tmp_path_factory.mktemp("job")
    run_job(_cell(), out_dir=root / "sweep" / "job")
    return root / "sweep"


@pytest.fixture
def sweep(_one_job, tmp_path):
    """A copy of one finished job (kmeans on iris, 2 trials) under ``tmp_path/home/sweep``."""
    dest = tmp_path / "home" / "sweep"
    shutil.copytree(_one_job, dest)
    return dest


def _edit_rows(sweep: Path, **columns) -> None:
    path = sweep / "job" / "results.parquet"
    write_results(read_results(path).assign(**columns), path)


def _edit_cell(sweep: Path, **entries) -> Path:
    path = sweep / "job" / "cell.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **entries}))
    return path


# -- 1. a planted symlink is replaced, never written through ------------------------------------


@pytest.mark.parametrize("name", ["summary.md", "summary.parquet", "ari.png", "report.html", "summary.csv"])
def test_report_replaces_a_symlink_planted_in_the_report_folder(sweep, tmp_path, name):
    victim = tmp_path / "home" / ".ssh" / "authorized_keys"
    victim.parent.mkdir(parents=True)
    victim.write_text("ssh-ed25519 AAAA the owner's key\n")
    (sweep / "report").mkdir()
    (sweep / "report" / name).symlink_to("../../.ssh/authorized_keys")
    assert main(["report", str(sweep), "--metric", "ari", "--format", "csv"]) == 0
    assert victim.read_text() == "ssh-ed25519 AAAA the owner's key\n"
    assert not (sweep / "report" / name).is_symlink() and (sweep / "report" / name).stat().st_size > 0


def test_the_leaderboard_replaces_planted_symlinks_too(sweep, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    _edit_cell(sweep, paper={"leaderboard": {"metric": "ari"}})
    (sweep / "leaderboard").mkdir()
    for name in ("index.md", "pairs.md", "pairs.html", "leaderboard.parquet"):
        (sweep / "leaderboard" / name).symlink_to(victim)
    assert main(["report", str(sweep)]) == 0
    assert victim.read_text() == "keep"
    assert not (sweep / "leaderboard" / "index.md").is_symlink()


def test_report_refuses_an_output_folder_that_is_a_symlink(sweep, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (sweep / "report").symlink_to(elsewhere)
    assert main(["report", str(sweep), "--metric", "ari"]) == 2
    err = capsys.readouterr().err
    assert "symbolic link" in err and str(sweep / "report") in err
    assert list(elsewhere.iterdir()) == []


def test_a_symlinked_site_is_refused_before_the_page_is_written(sweep, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "site").symlink_to(elsewhere)
    page = tmp_path / "page"
    assert main(["report", str(sweep), "--leaderboard", "--out", str(page), "--site", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err
    assert "symbolic link" in err and "pass --site a real folder" in err
    assert not page.exists() and list(elsewhere.iterdir()) == []


def test_a_report_writer_refuses_a_path_outside_its_output_folder(tmp_path):
    from ccbench.reporting._safe import write_text

    (tmp_path / "out").mkdir()
    with pytest.raises(ValueError, match="outside the output folder"):
        write_text(tmp_path / "out" / ".." / "escaped.md", "x", tmp_path / "out")
    assert not (tmp_path / "escaped.md").exists()


def test_a_planted_temporary_name_is_not_followed(tmp_path, monkeypatch):
    """The temporary file of a replace-not-follow write is created exclusively (a symlink planted
    under its predictable name, pid included, is never opened)."""
    import os

    from ccbench.reporting._safe import write_text

    victim = tmp_path / "victim"
    victim.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    for token in ("", ".00000000"):
        (out / f".summary.md.{os.getpid()}{token}.tmp").symlink_to(victim)
    write_text(out / "summary.md", "new", out)
    assert victim.read_text() == "keep" and (out / "summary.md").read_text() == "new"


def test_a_newline_in_a_method_name_stays_in_its_row(sweep, capsys):
    _edit_rows(sweep, **{"method.name": "kmeans\n## Injected heading\n| evil | row |\x1b[2J"})
    assert main(["report", str(sweep), "--metric", "ari"]) == 0
    text = (sweep / "report" / "summary.md").read_text()
    assert not any(line.startswith(("## Injected", "| evil")) for line in text.splitlines())
    assert "\x1b" not in text and "\x1b" not in capsys.readouterr().out
    assert "kmeans ## Injected heading" in text


def test_a_newline_in_a_data_set_name_and_error_message_stays_in_its_row(sweep):
    _edit_rows(sweep, **{"dataset.name": "iris\n# title", "status": "error", "error": "Boom\r\n# also\x07"})
    assert main(["report", str(sweep), "--metric", "ari"]) == 0
    text = (sweep / "report" / "summary.md").read_text()
    assert not any(line.startswith("# title") or line.startswith("# also") for line in text.splitlines())
    assert "\x07" not in text and "\r" not in text


# -- 3. paper blocks and YAML from a results folder ----------------------------------------------


def test_paper_source_is_inert_text_in_the_report(sweep):
    _edit_cell(sweep, paper={"source": "<script>alert(1)</script> [see](javascript:alert(2))\n# x",
                             "metric": "ari", "method": "kmeans`<b>`", "values": {"10": 0.5}})
    assert main(["report", str(sweep), "--metric", "ari"]) == 0
    text = (sweep / "report" / "summary.md").read_text()
    assert "Beside the paper" in text
    assert "<script>" not in text and not re.search(r"(?<!\\)\]\(javascript:", text) and "<b>" not in text
    assert not any(line.startswith("# x") for line in text.splitlines())
    page = (sweep / "report" / "report.html").read_text()
    assert "<script>" not in page and "href=\"javascript" not in page and "<b>" not in page


@pytest.mark.parametrize("paper", [
    {"source": "T1", "metric": "ari", "method": "kmeans", "values": {"10": "0.5; rm -rf"}},
    {"source": "T1", "metric": "ari", "method": "kmeans", "values": {"ten": 0.5}},
    {"source": "T1", "metric": "ari", "methods": {"K": "kmeans"}, "table": {"iris": {"K": ["a", 0.1]}}},
])
def test_a_non_numeric_paper_value_names_the_cell_file(sweep, capsys, paper):
    cell = _edit_cell(sweep, paper=paper)
    assert main(["report", str(sweep), "--metric", "ari"]) == 2
    err = capsys.readouterr().err
    assert str(cell) in err and "paper." in err and "Traceback" not in err


_BOMB = "\n".join(
    ["hydra:", "  overrides:", "    task: []", "  sweeper:", "    params:",
     "      a: &a [x, x, x, x, x, x, x, x, x, x]"]
    + [f"      {chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
       f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]"
       for i in range(4)]  # 10^5 strings here; the same 1 KB with 9 levels is 10^9, which never returned
) + "\n"


def test_a_yaml_alias_bomb_in_multirun_yaml_is_refused_not_expanded(sweep):
    from ccbench.reporting import load
    from ccbench.reporting.leaderboard import sweep_coverage

    (sweep / "multirun.yaml").write_text(_BOMB)
    assert len(_BOMB) < 1024
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sweep_coverage([sweep], load(sweep))
    assert line is None
    assert any("alias" in str(w.message) and str(sweep / "multirun.yaml") in str(w.message) for w in caught)


def test_plain_report_asking_for_the_leaderboard_survives_an_alias_bomb(sweep, capsys):
    _edit_cell(sweep, paper={"leaderboard": {"metric": "ari"}})
    (sweep / "multirun.yaml").write_text(_BOMB)
    assert main(["report", str(sweep)]) == 0
    assert "Sweep coverage" not in (sweep / "leaderboard" / "index.md").read_text()


def test_a_hydra_multirun_yaml_still_gives_coverage(sweep):
    from ccbench.reporting import load
    from ccbench.reporting.leaderboard import sweep_coverage

    (sweep / "multirun.yaml").write_text(
        "hydra:\n  overrides:\n    task: [method=kmeans]\n  sweeper:\n    params:\n      dataset: iris\n")
    assert sweep_coverage([sweep], load(sweep)).startswith("Sweep coverage: 1 of the 1 jobs")



# -- 2. --utility re-draws only local, bounded data sets -----------------------------------------


@pytest.mark.parametrize("dataset, why", [
    ({"name": "openml", "data_id": 554}, "does not load data"),
    ({"name": "csv", "path": "/etc/passwd"}, "does not load data"),
    ({"name": "scap_gaussian_similarity", "n_samples": 60000, "n_clusters": 5}, "n_samples=60000"),
    ({"name": "no_such_set"}, "not registered"),
])
def test_utility_never_loads_a_data_set_a_cell_json_chooses(sweep, monkeypatch, dataset, why):
    from ccbench import datasets
    from ccbench.reporting import constraint_utility, load

    _edit_cell(sweep, dataset=dataset)
    seen = []
    monkeypatch.setattr(datasets, "load_dataset", lambda name, **kw: seen.append(name) or 1 / 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        coherence = constraint_utility.trial_coherence(load(sweep))
    assert seen == [] and coherence.isna().all()
    messages = [str(w.message) for w in caught]
    assert any(str(sweep / "job") in m and why in m for m in messages), messages


def test_utility_still_redraws_bundled_and_small_generated_sets(sweep, monkeypatch):
    from ccbench.reporting import constraint_utility, load

    assert constraint_utility.trial_coherence(load(sweep)).notna().all()  # iris, bundled with scikit-learn
    _edit_cell(sweep, dataset={"name": "scap_gaussian_similarity", "n_samples": 100, "n_clusters": 5})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        constraint_utility.trial_coherence(load(sweep))  # loaded (the labels differ from iris': no warning)


def test_utility_never_downloads_a_uci_set(sweep, monkeypatch, tmp_path):
    from ccbench.reporting import constraint_utility, load

    monkeypatch.setenv("CCBENCH_DATA_DIR", str(tmp_path / "empty"))
    _edit_cell(sweep, dataset={"name": "glass"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert constraint_utility.trial_coherence(load(sweep)).isna().all()
    assert any("not on this machine" in str(w.message) for w in caught)
    assert not (tmp_path / "empty").exists()
