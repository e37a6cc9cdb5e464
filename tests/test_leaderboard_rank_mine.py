"""Issue 39, item 2: docs/leaderboard.md's "rank only your method" commands, on the smoke protocol.

Ship the rows of a small leaderboard sweep (kmeans, pck_means), then follow the docs' two commands
for a plugin method (the recipe test's throw-away package, not installed, loaded with
``plugins=[...]``): only that method runs, and the report ``--with`` the shipped folder ranks it
among the shipped methods. The same method run under another protocol (``n_trials=3``) is refused
with the reason.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import sys
from pathlib import Path

import pandas as pd
import pytest

from test_leaderboard_recipe import NAME, PACKAGE, install
import _proc  # on time-out, the command's whole process group is killed (issue 54)

ROOT = Path(__file__).resolve().parents[1]
# the smoke protocol on one data set and three of its cells, to stay cheap; both sides the same
SMALL = ["dataset=iris_uci", "supervision=pairs_mid,labels,unconstrained", "hydra/launcher=basic", "trial_timeout=60"]


def rank_commands() -> list[list[str]]:
    """The docs' run-and-rank lines of "Adding your method" (the sweep, then the report), as words."""
    text = (ROOT / "docs" / "leaderboard.md").read_text()
    section = text[text.index("## Adding your method"):]
    section = section[:section.index("\n## ", 5)]
    lines = [line.split("  #")[0].strip() for block in re.findall(r"^```bash\n(.*?)^```", section, re.M | re.S)
             for line in block.splitlines()]
    run = [line for line in lines if line.startswith("ccbench experiment=leaderboard method=my_method")]
    report = [line for line in lines if line.startswith("ccbench report runs/mine") and "--with" in line]
    assert len(run) == 1 and len(report) == 1, lines
    return [shlex.split(run[0]), shlex.split(report[0])]


def _ccbench(args, cwd, env):
    return _proc.run([sys.executable, "-m", "ccbench.running.cli", *args], cwd=cwd, env=env,
                     capture_output=True, text=True, timeout=1800)


def _fingerprint(folder: Path) -> dict:
    return {p.relative_to(folder): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("results.parquet")}


def test_the_docs_name_one_command_to_run_only_your_method_and_one_to_rank_it():
    run, report = rank_commands()
    assert "method=my_method" in run and not any("append" in w for w in run)
    assert report[:3] == ["ccbench", "report", "runs/mine"] and "--with" in report and "--leaderboard" in report


def test_naming_an_installed_plugin_in_plugins_again_is_harmless(tmp_path, monkeypatch):
    """The docs' command keeps ``plugins=[my_pkg]`` after ``pip install``: the module its entry point
    registered (under the entry point's name) is not registered a second time (pluggy refused that)."""
    import importlib

    from ccbench import registry

    monkeypatch.syspath_prepend(str(install(tmp_path / "site", dist_info=False)))
    module = importlib.import_module(f"{PACKAGE}.plugin")
    registry.register_plugin(module, name=PACKAGE)  # what loading the entry point does
    try:
        registry.load_plugins([f"{PACKAGE}.plugin"])
        assert registry.get_method_spec(NAME).name == NAME
    finally:
        registry.unregister_plugin(PACKAGE)
        for mod in [m for m in sys.modules if m.startswith(PACKAGE)]:
            del sys.modules[mod]


# the shipped board's data sets: two, so that a run of the first only is partial (the second test)
CELLS = ["dataset=iris_uci,soybean_small", *SMALL[1:]]


@pytest.fixture(scope="module")
def board_and_mine(tmp_path_factory):
    """The two slow tests' common start, run once (issue 56: each test ran both sweeps and the ship itself):
    the shipped rows of k-means and PCK-means on :data:`CELLS`, shipped with their site to
    ``reports/leaderboard``, then the docs' sweep of the plugin method alone into ``runs/mine``, copied
    as it was run to ``mine_as_run`` (each test ranks its own copy). The shipped rows' fingerprints
    before and after the plugin's sweep are kept: that sweep must not touch them."""
    import shutil
    from types import SimpleNamespace

    root = tmp_path_factory.mktemp("rank_mine")
    site = install(root / "site", dist_info=False)  # not installed: plugins=[...] loads it, as the docs say
    env = {**os.environ, "MPLBACKEND": "Agg",
           "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    theirs = root / "runs" / "leaderboard"
    run = _ccbench(["experiment=leaderboard_smoke", "method=kmeans,pck_means", *CELLS, f"hydra.sweep.dir={theirs}"],
                   root, env)
    assert run.returncode == 0, run.stderr[-3000:]
    shipped = root / "reports" / "leaderboard"
    ship = _ccbench(["report", str(theirs), "--leaderboard", "--out", str(shipped), "--site", str(shipped / "site")],
                    root, env)
    assert ship.returncode == 0, ship.stderr[-3000:]
    before = _fingerprint(theirs)

    sweep, report = rank_commands()
    sweep = [w.replace("my_method", NAME).replace("my_pkg", f"{PACKAGE}.plugin") for w in sweep]
    sweep[1] = "experiment=leaderboard_smoke"
    run = _ccbench([*sweep[1:], *CELLS], root, env)
    assert run.returncode == 0, run.stderr[-3000:]
    shutil.copytree(root / "runs" / "mine", root / "mine_as_run")
    return SimpleNamespace(root=root, env=env, shipped=shipped, sweep=sweep, report=report,
                           theirs_before=before, theirs_after=_fingerprint(theirs))


def _ranking_folder(board_and_mine, where: Path) -> Path:
    """``where`` with ``reports/leaderboard`` as shipped and ``runs/mine`` as the plugin's sweep left it."""
    import shutil

    shutil.copytree(board_and_mine.root / "reports", where / "reports")
    shutil.copytree(board_and_mine.root / "mine_as_run", where / "runs" / "mine")
    return where


@pytest.mark.slow  # on the fixture's sweeps: a one-cell sweep and two reports through the real command
def test_rank_my_method_against_shipped_rows_on_the_smoke_protocol(board_and_mine, tmp_path):
    env, shipped, sweep, report = board_and_mine.env, board_and_mine.shipped, board_and_mine.sweep, board_and_mine.report
    work = _ranking_folder(board_and_mine, tmp_path)
    mine = pd.concat(pd.read_parquet(p) for p in (work / "runs" / "mine").rglob("results.parquet"))
    assert set(mine["method.name"]) == {NAME}  # nothing else was re-run
    assert board_and_mine.theirs_after == board_and_mine.theirs_before

    ranked = _ccbench(report[1:], work, env)
    assert ranked.returncode == 0, ranked.stderr[-3000:]
    tables = pd.read_parquet(work / "runs" / "mine" / "leaderboard" / "leaderboard.parquet")
    ranks = tables[(tables["kind"] == "pairs") & (tables["table"] == "ranks")]
    assert set(ranks["method"]) == {"kmeans", "pck_means", NAME}
    assert (work / "runs" / "mine" / "site" / f"method-{NAME}.html").is_file()

    # the same method under another protocol (one cell is enough to carry it)
    other = work / "runs" / "other"
    run = _ccbench([*sweep[1:], "dataset=iris_uci", "supervision=unconstrained", *SMALL[2:], "n_trials=3",
                    f"hydra.sweep.dir={other}"], work, env)
    assert run.returncode == 0, run.stderr[-3000:]
    refused = _ccbench(["report", str(other), "--leaderboard", "--with", str(shipped)], work, env)
    assert refused.returncode == 2, refused.stderr[-3000:]
    assert "different protocols" in refused.stderr and "n_trials: 3 in" in refused.stderr


@pytest.mark.slow  # one report through the real command, on the fixture's sweeps
def test_ranking_a_partial_run_keeps_the_boards_numbers_and_says_it_is_partial(board_and_mine, tmp_path):
    """Issue 50, item 15, as a newcomer meets it: their plugin's sweep stops after the first of two data sets
    (the jobs of the second never ran), and they rank it ``--with`` the shipped folder. The site re-ranked
    every shipped method over the one data set the new method has while its text said two, and listed the
    new method's rank over one data set among ranks over two. Now the shipped methods keep the numbers of
    the shipped site, the new method is compared with k-means and the best over the data set it ran, and
    every page of the site says the run is partial."""
    import shutil

    from test_leaderboard_site import _ranks

    work = _ranking_folder(board_and_mine, tmp_path)
    shipped = work / "reports" / "leaderboard"
    stopped = list((work / "runs" / "mine").glob("dataset=soybean_small,*"))
    assert len(stopped) == 3
    for job in stopped:  # the sweep stopped after iris: soybean_small's jobs never ran
        shutil.rmtree(job)
    ranked = _ccbench(board_and_mine.report[1:], work, board_and_mine.env)
    assert ranked.returncode == 0, ranked.stderr[-3000:]

    pages, board = (pd.read_parquet(d / "leaderboard.parquet") for d in (work / "runs" / "mine" / "leaderboard", shipped))
    for name in ("ranks", "cd_blocks", "effects", "p_best"):  # the pages too keep the board's numbers
        for kind in ("pairs", "labels"):
            ours, theirs = (t[(t["table"] == name) & (t["kind"] == kind)] for t in (pages, board))
            cols = theirs.columns[theirs.notna().any()]
            pd.testing.assert_frame_equal(ours[cols].reset_index(drop=True), theirs[cols].reset_index(drop=True))
    assert set(pages.loc[pages["table"] == "partial_effects", "n_sets"].astype(int)) == {1}
    assert "Partial run ranked against the board" in (work / "runs" / "mine" / "leaderboard" / "pairs.md").read_text()
    mine = work / "runs" / "mine" / "site"
    for kind in ("pairs", "labels"):
        for table in ("ranks", "effects-kmeans", "p-best"):
            assert _ranks(mine / f"kind-{kind}.html", table) == _ranks(shipped / "site" / f"kind-{kind}.html", table)
        page = (mine / f"kind-{kind}.html").read_text()
        assert f"{NAME}: a partial run, over 1 of 2 data sets" in page
        assert _ranks(mine / f"kind-{kind}.html", f"partial-{kind}")["kmeans"]["n_sets"] == "1"
    index = _ranks(mine / "index.html", "methods")
    assert index[NAME]["rank pairs"] == "-" and index[NAME]["data_sets"] == "1"
    for page in mine.glob("*.html"):
        text = page.read_text()
        assert "<strong>the sweep is incomplete</strong>" in text, page.name
        assert f"{NAME} ran 1 of 2 data sets (pairs), 1 of 2 data sets (labels)" in text, page.name


def test_ranking_rows_of_fewer_data_sets_says_the_run_is_partial():
    """Item 15: the terminal, too, says that rows covering 1 of the shipped rows' 3 data sets are a partial
    run (compared over that data set, not ranked on the board), and names the data sets not run."""
    from ccbench.reporting import merge_with

    def rows(method, datasets):
        return pd.DataFrame([{"dataset.name": d, "constraints.name": "random_pairs", "constraints.n_constraints": 20,
                              "method.name": method, "config_hash": f"{method}-{d}", "trial": t, "status": "ok",
                              "ari": 0.5} for d in datasets for t in range(2)])

    shipped = rows("kmeans", ["iris", "wine", "glass"])
    _, notes = merge_with(rows("mine", ["iris"]), shipped, new_name="runs/mine", shipped_name="reports/leaderboard")
    assert len(notes) == 1 and "runs/mine cover 1 of the 3 data sets of reports/leaderboard (not run: glass, wine)" \
        in notes[0] and "partial" in notes[0]
    _, notes = merge_with(rows("mine", ["iris", "wine", "glass"]), shipped)
    assert notes == []


def _strip_partial(text: str) -> str:
    """A page's markdown without the partial run's banner and sections (each ``## Partial run`` up to the
    next ``## `` heading)."""
    out, skipping = [], False
    for block in text.split("\n\n"):
        if block.startswith("## "):
            skipping = block.startswith("## Partial run")
        if not skipping and not block.startswith("**Partial run ranked against the board:**"):
            out.append(block)
    return "\n\n".join(out)


def test_the_pages_place_a_partial_method_apart_and_keep_the_boards_numbers(tmp_path):
    """Issue 50, item 15, on the leaderboard pages (the site does the same): a new method run on 2 of the
    board's 6 data sets was ranked among the board (its rank over 2 data sets sorted among ranks over 6),
    joined the headline's Holm family (so every board p-value moved) and was left out of the CD diagram.
    Now every table of the pages is the board's without it, the new method has its own section (effect
    sizes against k-means and the best over its 2 data sets, Holm's family stated, table
    ``partial_effects``), and every page says the run is partial."""
    import numpy as np

    from ccbench.reporting.leaderboard import write_leaderboard
    from test_leaderboard_site import _rows

    scores = {d: {n: {"kmeans": 0.9 if d in ("iris", "wine") else 0.3, "pck_means": 0.6, "cop_kmeans": 0.5}
                  for n in (20, 40)} for d in ("iris", "wine", "glass", "zoo", "ecoli", "yeast")}
    board = _rows(scores, trials=4, noise=0.02)
    mine = _rows({d: {n: {"mine": 0.7 + (0.1 if n == 40 else 0.0)} for n in (20, 40)} for d in ("iris", "wine")},
                 trials=4, noise=0.02, seed=1)
    alone = write_leaderboard(board, tmp_path / "board", "ari")
    merged = write_leaderboard(pd.concat([board, mine], ignore_index=True), tmp_path / "with", "ari", new_rows=mine)

    shipped, ranked = pd.read_parquet(alone["parquet"]), pd.read_parquet(merged["parquet"])
    assert set(ranked["table"]) == set(shipped["table"]) | {"partial_effects"}
    for name, table in shipped.groupby("table"):  # every board table as shipped: ranks, CD blocks, headline, ...
        mine_table = ranked[ranked["table"] == name]
        cols = table.columns[table.notna().any()]  # the parquet holds the union of every table's columns
        assert mine_table.drop(columns=cols).isna().all().all(), name
        pd.testing.assert_frame_equal(mine_table[cols].reset_index(drop=True), table[cols].reset_index(drop=True),
                                      obj=name)
    page, board_page = merged["pairs_md"].read_text(), alone["pairs_md"].read_text()
    assert _strip_partial(page) == board_page  # the same page, plus the banner and the new method's section
    assert "## Partial run: `mine`, over 2 of 6 data sets (not ranked on the board)" in page
    assert "Holm over the family of the 3 methods compared with k-means on these 2 data sets" in page

    own = ranked[(ranked["table"] == "partial_effects") & (ranked["metric"] == "ari")].set_index("reference")
    assert set(own["method"]) == {"mine"} and own.loc["kmeans", "n_sets"] == 2 and own.loc["kmeans", "holm_family"] == 3
    cells = pd.concat([board, mine]).query("`dataset.name` in ['iris', 'wine']").groupby(
        ["dataset.name", "constraints.n_constraints", "method.name"])["ari"].mean().unstack()
    assert np.isclose(own.loc["kmeans", "mean_diff"], (cells["mine"] - cells["kmeans"]).groupby(level=0).mean().mean())
    assert own.loc["best", "reference_name"] == "kmeans"  # the best over iris and wine, the board's k-means there
    for path in (merged["pairs_md"], merged["pairs_html"], merged["index"]):
        assert "Partial run ranked against the board" in path.read_text() and "mine" in path.read_text(), path.name
