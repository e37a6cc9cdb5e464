"""Paper figures drawn from what a method learns (``paper.figures``, issue 41: the SRCP paper's Fig. 4).

A tiny sweep (iris, NCuts and SRCP, one trial with 60 random pairs) is run through the harness; then
``ccbench report`` refits that trial and draws the distances between the points of each method's
spectral embedding. The checks: the figure is written and described in ``summary.md``; the matrix drawn
is the *learned* one, the embedding of a fit on the trial's own constraints (not the raw features, not
the unconstrained embedding: the "passed-on" check); the refit reproduces the row's scores and says so
when it does not; and a ``paper.figures`` entry from a stranger's ``cell.json`` cannot name a file
outside the report or an arbitrary attribute.
"""

from __future__ import annotations

import numpy as np
import pytest
from hydra import compose, initialize_config_module
from scipy.spatial.distance import cdist

from ccbench.datasets import load_dataset
from ccbench.reporting import load
from ccbench.reporting.paper_figures import block_scores, distance_matrix, figure_panels, figure_requests
from ccbench.running.cli import main
from ccbench.running.harness import run_job
from ccbench.running.protocol import constraints_hash, draw_supervision, trial_streams

N_PAIRS = 60
FIGURE = {"kind": "distance_matrices", "file": "fig_tiny", "title": "tiny", "attribute": "embedding_",
          "methods": ["ncuts", "srcp"], "x": N_PAIRS, "trial": 0}
GRAPH = {"n_neighbors": 10, "sigma": None}


def _compose(method):
    with initialize_config_module("ccbench_conf", version_base="1.3"):
        cfg = compose("config", overrides=[
            "dataset=iris", f"method={method}", "constraints=random_pairs", f"constraints.n_constraints={N_PAIRS}",
            "noise=none", "n_trials=1", "metrics=[ari,nmi]", "method.n_neighbors=10", "method.sigma=null",
        ])
    # as an experiment file's paper block would set it (it travels to cell.json)
    cfg.paper = {"source": "tiny", "figures": [FIGURE]}
    return cfg


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    for method in ("ncuts", "srcp"):
        run_job(_compose(method), out_dir=root / method)
    return root


def _independent_srcp(row):
    """SRCP fitted here, outside the report, on the trial's constraints and random_state."""
    from ccbench_plugins.spectral.srcp import SRCP

    ds = load_dataset("iris")
    rng, method_seed = trial_streams(int(row["trial_seed"]))
    cons, _ = draw_supervision(ds.y, {"name": "random_pairs", "n_constraints": N_PAIRS}, {"name": "none", "rate": 0.0}, rng)
    assert constraints_hash(cons) == row["constraints_hash"] and method_seed == row["method_seed"]
    est = SRCP(n_clusters=3, random_state=method_seed, **GRAPH).fit(ds.X, constraints=cons)
    return est, ds, cons


def test_the_report_draws_the_figure_the_paper_block_asks_for(sweep, tmp_path):
    out = tmp_path / "report"
    assert main(["report", str(sweep), "--metric", "ari", "--out", str(out), "--no-html"]) == 0
    png = out / "fig_tiny.png"
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "summary.md").read_text()
    assert "## Paper figure: fig\\_tiny" in md or "## Paper figure: fig_tiny" in md
    assert "![fig" in md and "| ncuts |" in md and "| srcp |" in md
    assert md.index("## Paper figure") < md.index("## Problems")
    # --no-figures refits nothing and draws nothing
    assert main(["report", str(sweep), "--metric", "ari", "--out", str(tmp_path / "plain"), "--no-html",
                 "--no-figures"]) == 0
    assert not (tmp_path / "plain" / "fig_tiny.png").exists()
    assert "Paper figure" not in (tmp_path / "plain" / "summary.md").read_text()


def test_the_matrix_drawn_is_the_learned_embedding_not_the_raw_features(sweep):
    """The passed-on check: SRCP's panel is the distance matrix of the embedding SRCP learned from the
    trial's constraints. Replacing it by the raw features' distances, or by an embedding learned
    without the constraints, must fail this test."""
    data = load(sweep)
    panels, ds = figure_panels(data, figure_requests({"figures": [FIGURE]})[0], "constraints.n_constraints")
    ncuts, srcp = panels
    row = data[(data["method_label"] == "srcp") & (data["trial"] == 0)].iloc[0]
    est, _, cons = _independent_srcp(row)
    order = np.argsort(ds.y, kind="stable")
    learned = cdist(est.embedding_[order], est.embedding_[order])
    np.testing.assert_allclose(srcp["D"], learned, atol=1e-10)
    raw = cdist(ds.X[order], ds.X[order])
    assert not np.allclose(srcp["D"], raw, atol=1e-3)
    assert not np.allclose(srcp["D"], ncuts["D"], atol=1e-3)  # the constraints changed what was learned
    unconstrained = type(est)(n_clusters=3, random_state=est.random_state, **GRAPH).fit(ds.X)
    assert not np.allclose(srcp["D"], cdist(unconstrained.embedding_[order], unconstrained.embedding_[order]), atol=1e-3)
    # the scores the report prints are of that matrix, and it reproduced the row
    assert srcp["block_auc"] == pytest.approx(block_scores(learned, ds.y[order])["block_auc"])
    assert srcp["reproduced"] and srcp["rescored"]["ari"][0] == pytest.approx(srcp["rescored"]["ari"][1], abs=1e-12)
    assert srcp["rescored"]["ari"][0] == pytest.approx(float(row["ari"]))


def test_a_refit_that_does_not_reproduce_the_row_is_said_not_hidden(sweep):
    data = load(sweep)
    data.loc[data["method_label"] == "srcp", "ari"] -= 0.25  # as if another machine's fit had scored less
    with pytest.warns(UserWarning, match="differs from the recorded fit"):
        panels, _ = figure_panels(data, figure_requests({"figures": [FIGURE]})[0], "constraints.n_constraints")
    assert panels[0]["reproduced"] and not panels[1]["reproduced"]


def test_block_scores_on_a_known_answer():
    y = np.array([0, 0, 1, 1])
    perfect = np.array([[0, 1, 9, 9], [1, 0, 9, 9], [9, 9, 0, 1], [9, 9, 1, 0]], dtype=float)
    assert block_scores(perfect, y) == {"within_between": pytest.approx(1 / 9), "block_auc": 1.0}
    inverted = np.where(perfect == 9, 1.0, np.where(perfect == 1, 9.0, 0.0))
    assert block_scores(inverted, y)["block_auc"] == 0.0
    flat = np.ones((4, 4)) - np.eye(4)
    assert block_scores(flat, y) == {"within_between": 1.0, "block_auc": 0.5}
    D, order = distance_matrix(np.array([[5.0], [0.0], [5.1], [0.1]]), np.array([1, 0, 1, 0]))
    assert order.tolist() == [1, 3, 0, 2] and D[0, 1] == pytest.approx(0.1) and D[0, 2] == pytest.approx(5.0)


@pytest.mark.parametrize("bad, fix", [
    ({"file": "../outside"}, "plain file name"),
    ({"attribute": "__class__"}, "public fitted attribute"),
    ({"kind": "histogram"}, "kinds a report draws"),
    ({"methods": []}, "non-empty list"),
    ({"trial": -1}, "trial number"),
    ({"colour": "red"}, "unknown key"),
])
def test_a_bad_figure_request_names_the_problem(bad, fix):
    with pytest.raises(ValueError, match=fix):
        figure_requests({"figures": [{**FIGURE, **bad}]})


def test_a_figure_of_rows_that_do_not_exist_names_what_does(sweep):
    data = load(sweep)
    with pytest.raises(ValueError, match=r"no row of 'ncuts' at constraints.n_constraints=999.*values: \[60\]"):
        figure_panels(data, figure_requests({"figures": [{**FIGURE, "x": 999}]})[0], "constraints.n_constraints")
    with pytest.raises(ValueError, match=r"no rows of method 'e2cp'; labels here: \['ncuts', 'srcp'\]"):
        figure_panels(data, figure_requests({"figures": [{**FIGURE, "methods": ["e2cp"]}]})[0],
                      "constraints.n_constraints")


@pytest.mark.parametrize("dataset, why", [
    ({"name": "csv", "path": "/etc/passwd"}, "does not load data"),
    ({"name": "openml", "data_id": 554}, "does not load data"),
    ({"name": "no_such_set"}, "not registered"),
])
def test_a_figure_never_loads_a_data_set_a_cell_json_chooses(sweep, tmp_path, monkeypatch, dataset, why):
    """A results folder may come from anyone: the refit loads only what ``--utility`` may re-draw."""
    import json
    import shutil

    from ccbench import datasets

    copy = tmp_path / "sweep"
    shutil.copytree(sweep, copy)
    cell_file = copy / "ncuts" / "cell.json"
    cell_file.write_text(json.dumps({**json.loads(cell_file.read_text()), "dataset": dataset}))
    seen = []
    monkeypatch.setattr(datasets, "load_dataset", lambda name, **kw: seen.append(name) or 1 / 0)
    with pytest.raises(ValueError, match=why):
        figure_panels(load(copy), figure_requests({"figures": [FIGURE]})[0], "constraints.n_constraints")
    assert seen == []
