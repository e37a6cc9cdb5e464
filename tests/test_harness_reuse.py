"""Shared unsupervised fits (``share_unsupervised_fits``) and ``evaluate_on=both``.

A counting plugin (every ``fit`` appends one line to the file named by ``$CCBENCH_FIT_LOG``, so
fits in other processes count too) shows how many fits a grid of cells costs.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid

import numpy as np
import pytest

from ccbench import registry
from ccbench.datasets import load_dataset
from ccbench.reporting import _format as rfmt
from ccbench.running import protocol
from ccbench.running.harness import run_job
import _proc  # on time-out, the command's whole process group is killed (issue 54)

PLUGIN = "ccbench_reuse_testplugin_" + uuid.uuid4().hex[:8]
PLUGIN_SOURCE = '''
import os, time
import numpy as np
from ccbench import ConstrainedClusterer, MethodSpec, hookimpl


def _count(name):
    with open(os.environ["CCBENCH_FIT_LOG"], "a") as handle:
        handle.write(name + "\\n")


class Counter(ConstrainedClusterer):
    """Random labels from random_state (the score reveals the seed); counts its fits."""

    def __init__(self, random_state=None, sleep=0.0):
        self.random_state = random_state
        self.sleep = sleep

    def fit(self, X, y=None, *, constraints=None):
        _count(type(self).__name__)
        time.sleep(self.sleep)
        self.labels_ = np.random.default_rng(self.random_state).integers(0, 3, len(X))
        self.n_iter_ = 7
        return self


class PairCounter(Counter):
    """Declares pair supervision: its fits may only be shared when given no pair."""


@hookimpl
def ccbench_methods():
    return [
        MethodSpec("counter", Counter, "counts its fits; uses no supervision"),
        MethodSpec("pair_counter", PairCounter, "counts its fits; uses pairs",
                   supervision=("must_link", "cannot_link")),
    ]
'''

BUDGETS = (0, 10, 30)
NOISES = ({"name": "none"}, {"name": "constraint_flip", "rate": 0.2})


@pytest.fixture
def plugin(throwaway_plugin, tmp_path, monkeypatch):
    log = tmp_path / "fits.log"
    monkeypatch.setenv("CCBENCH_FIT_LOG", str(log))
    throwaway_plugin(PLUGIN_SOURCE, name=PLUGIN)
    return lambda: log.read_text().split() if log.exists() else []


def _cell(method="counter", n=10, noise=NOISES[0], **root):
    return {"dataset": {"name": "iris"}, "method": {"name": method} if isinstance(method, str) else method,
            "constraints": {"name": "random_pairs", "n_constraints": n}, "noise": noise,
            "n_trials": 2, "plugins": [PLUGIN], "metrics": ["ari", "constraint_violations"], **root}


def _grid(tmp_path, method="counter", **root):
    """Every budget x noise cell into its own job directory under ``tmp_path/sweep``."""
    return {(n, noise["name"]): run_job(_cell(method, n, noise, **root),
                                        out_dir=tmp_path / "sweep" / f"n={n},noise={noise['name']}")
            for n in BUDGETS for noise in NOISES}


def test_an_unsupervised_fit_runs_once_per_trial_across_budgets_and_noise(plugin, tmp_path):
    rows = _grid(tmp_path, share_unsupervised_fits=True)
    assert len(plugin()) == 2  # 6 cells x 2 trials: one fit per trial
    assert all((r["status"] == "ok").all() for r in rows.values())
    reused = np.concatenate([r["fit_reused"].to_numpy(bool) for r in rows.values()])
    assert reused.sum() == 10 and (~reused).sum() == 2
    for t in range(2):  # the same clustering in every cell: same seed, same score against y
        assert len({r.loc[t, "method_seed"] for r in rows.values()}) == 1
        assert len({r.loc[t, "ari"] for r in rows.values()}) == 1
        assert len({r.loc[t, "fit_key"] for r in rows.values()}) == 1
        assert {r.loc[t, "n_iter"] for r in rows.values()} == {7}  # the fit's fields travel with it
    # the same columns in the same order whether the job computed the fit or read it back (the SLURM
    # launcher's rows and the local one's differed when another job computed the fit first)
    common = set.intersection(*(set(r.columns) for r in rows.values()))  # noise cells add noise.rate
    assert len({tuple(c for c in r.columns if c in common) for r in rows.values()}) == 1
    assert len(list((tmp_path / "sweep" / ".fits").glob("*.npz"))) == 2
    # the default (off): every cell fits, with the seed of its own trial
    before = len(plugin())
    off = _grid(tmp_path / "off")
    assert len(plugin()) - before == 12 and "fit_reused" not in off[(0, "none")]


def test_a_tuned_unsupervised_method_tunes_and_is_not_shared(tmp_path):
    """kmeans+cvcp chooses k among k-1, k, k+1 from the constraints (issue 38, item 5): with shared fits on
    it must still tune (the shared path fits the defaults), and its fit is not the default cell's."""
    plain = run_job(_cell("kmeans", 60, plugins=[], share_unsupervised_fits=True), out_dir=tmp_path / "sweep" / "a")
    tuned = run_job(_cell("kmeans", 60, plugins=[], share_unsupervised_fits=True, tune="cvcp", tune_folds=3),
                    out_dir=tmp_path / "sweep" / "b")
    assert (tuned["status"] == "ok").all()
    assert tuned["tuned_params"].str.contains('"n_clusters"').all() and (tuned["tune_fits"] > 1).all()
    assert not tuned["fit_reused"].any() and tuned["fit_key"].isna().all()
    assert plain["fit_key"].notna().all()


def test_a_shared_fit_is_rescored_with_each_cells_constraints(tmp_path):
    """kmeans on iris: the reused labels equal a fresh fit with the shared seed, and every cell's
    constraint metric is computed from its own constraints."""
    ds = load_dataset("iris")
    spec = registry.get_method_spec("kmeans")
    rows = {n: run_job(_cell("kmeans", n, plugins=[], share_unsupervised_fits=True), out_dir=tmp_path / f"n={n}")
            for n in (10, 30)}
    assert not rows[10]["fit_reused"].any() and rows[30]["fit_reused"].all()
    # a fresh fit of the second cell (its own cache): the same row values
    fresh = run_job(_cell("kmeans", 30, plugins=[], share_unsupervised_fits=True), out_dir=tmp_path / "fresh" / "a",
                    fits_dir=tmp_path / "fresh" / ".fits")
    assert not fresh["fit_reused"].any()
    for col in ("method_seed", "ari", "constraint_violations", "n_iter", "converged"):
        assert fresh[col].tolist() == rows[30][col].tolist(), col
    for t in range(2):
        _, seed = protocol.trial_streams(protocol.fit_seed(_cell("kmeans", 30), t))
        assert rows[30].loc[t, "method_seed"] == seed
        labels = protocol.build_estimator(spec, {}, seed, n_clusters=3).fit(ds.X).labels_
        from sklearn.metrics import adjusted_rand_score

        assert rows[30].loc[t, "ari"] == pytest.approx(adjusted_rand_score(ds.y, labels))
        for n in (10, 30):  # the constraint metric: the cell's own pairs, not those of the fitting cell
            rng, _ = protocol.trial_streams(protocol.trial_seed(_cell("kmeans", n), t))
            cons, _ = protocol.draw_supervision(ds.y, {"name": "random_pairs", "n_constraints": n},
                                                {"name": "none"}, rng)
            expected = registry.get_metric_spec("constraint_violations").func(ds.y, labels, constraints=cons)
            assert rows[n].loc[t, "constraint_violations"] == pytest.approx(expected)
    assert rows[10]["constraint_violations"].tolist() != rows[30]["constraint_violations"].tolist()


def test_a_method_given_constraints_is_never_reused(plugin, tmp_path):
    rows = _grid(tmp_path, "pair_counter", share_unsupervised_fits=True)
    # per trial: one shared fit for both empty (budget 0) cells, one fit per cell with pairs
    assert len(plugin()) == 2 * (1 + 4)
    for (n, noise), r in rows.items():
        if n == 0:
            assert r["fit_key"].notna().all()
            continue
        assert not r["fit_reused"].any() and r["fit_key"].isna().all()
        cell = _cell("pair_counter", n, next(x for x in NOISES if x["name"] == noise))
        # seeded as without sharing: the trial's own method seed
        assert r["method_seed"].tolist() == [protocol.trial_streams(protocol.trial_seed(cell, t))[1] for t in range(2)]
    assert rows[(0, "none")]["ari"].tolist() == rows[(0, "constraint_flip")]["ari"].tolist()
    assert rows[(0, "constraint_flip")]["fit_reused"].all()


def test_resume_and_a_damaged_cache_entry(plugin, tmp_path):
    first = run_job(_cell(n=10, share_unsupervised_fits=True), out_dir=tmp_path / "a")
    again = run_job(_cell(n=10, share_unsupervised_fits=True), out_dir=tmp_path / "a")
    assert len(plugin()) == 2 and again["timestamp"].tolist() == first["timestamp"].tolist()
    for f in (tmp_path / ".fits").glob("*.npz"):  # damaged entries are refitted, never trusted
        f.write_bytes(f.read_bytes()[:40])
    other = run_job(_cell(n=30, share_unsupervised_fits=True), out_dir=tmp_path / "b")
    assert len(plugin()) == 4 and not other["fit_reused"].any()
    assert other["ari"].tolist() == first["ari"].tolist()


def test_share_unsupervised_fits_is_identity_and_off_keeps_hashes():
    from ccbench.running.config import IDENTITY_KEYS, cell_hash

    cell = {**_cell(), "seed": 0}
    assert "share_unsupervised_fits" in IDENTITY_KEYS
    assert cell_hash(cell) == cell_hash({**cell, "share_unsupervised_fits": False})
    assert cell_hash(cell) != cell_hash({**cell, "share_unsupervised_fits": True})
    assert protocol.check_value("share_unsupervised_fits", "yes")


@pytest.mark.slow
def test_two_processes_racing_on_one_key_agree(plugin, tmp_path):
    """Two jobs (two budgets) start together on a slow unsupervised fit. The fit runs outside the
    lock (a suspended sweep blocks no other, issue 42 item 10), so both may fit: the first writer
    wins, one cache file, and both rows hold the same clustering."""
    script = (
        "import sys, json; from ccbench.running.harness import run_job; "
        "cell = json.loads(sys.argv[1]); run_job(cell, out_dir=sys.argv[2])"
    )
    import json

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    with contextlib.ExitStack() as stack:  # a job still running when the test gives up is killed with its children
        procs = [stack.enter_context(_proc.started([sys.executable, "-c", script,
                                                    json.dumps(_cell({"name": "counter", "sleep": 2.0}, n, n_trials=1,
                                                                     share_unsupervised_fits=True)),
                                                    str(tmp_path / f"n={n}")], env=env))
                 for n in (10, 30)]
        assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert 1 <= len(plugin()) <= 2
    assert len(list((tmp_path / ".fits").glob("*.npz"))) == 1
    from ccbench.running.results import read_results

    rows = [read_results(tmp_path / f"n={n}" / "results.parquet") for n in (10, 30)]
    assert rows[0]["fit_key"].tolist() == rows[1]["fit_key"].tolist()
    assert rows[0]["ari"].tolist() == rows[1]["ari"].tolist()


def test_shared_fit_in_a_worker_process(tmp_path):
    """With trial_timeout the shared fit runs in the isolated worker and comes back to be scored."""
    rows = [run_job(_cell("kmeans", n, plugins=[], share_unsupervised_fits=True, trial_timeout=120, n_trials=1),
                    out_dir=tmp_path / f"n={n}") for n in (10, 30)]
    assert rows[0]["fit_reused"].tolist() == [False] and rows[1]["fit_reused"].tolist() == [True]
    assert rows[0]["ari"].tolist() == rows[1]["ari"].tolist() and (rows[1]["status"] == "ok").all()


# -- evaluate_on=both -------------------------------------------------------------------


def test_evaluate_on_both_equals_the_two_single_runs(tmp_path):
    cell = _cell({"name": "kmeans", "n_init": 1}, 30, plugins=[], metrics=["ari", "nmi", "constraint_violations"])
    every = run_job(cell, out_dir=tmp_path / "all")
    held = run_job({**cell, "evaluate_on": "unconstrained"}, out_dir=tmp_path / "held")
    both = run_job({**cell, "evaluate_on": "both"}, out_dir=tmp_path / "both")
    for m in ("ari", "nmi", "constraint_violations", "n_evaluated"):
        assert both[m].tolist() == every[m].tolist(), m
    for m in ("ari", "nmi", "n_evaluated"):
        assert both[f"{m}_unconstrained"].tolist() == held[m].tolist(), m
    assert (both["n_evaluated_unconstrained"] < 150).all()
    assert "constraint_violations_unconstrained" not in both  # a constraint metric sees every pair
    assert both["trial_seed"].tolist() == every["trial_seed"].tolist()


def test_evaluate_on_both_when_every_point_is_constrained():
    from ccbench import Constraints
    from ccbench.running.harness import score_labels

    y = np.array([0, 0, 1, 1])
    cons = Constraints([[0, 1]], [[2, 3]], n_samples=4)
    out = score_labels(registry.get_method_spec("kmeans"), y, y, cons, ["ari"], "both")
    assert out["ari"] == 1.0 and np.isnan(out["ari_unconstrained"]) and out["n_evaluated_unconstrained"] == 0
    assert "every point is constrained" in out["warnings"]


def test_evaluate_on_both_with_one_unconstrained_point_is_nan_not_an_error():
    # PCCC's scheme (pairs over all points) left one point free on six board sets: a pair-counting
    # metric on one point raised, and the trial became an error row
    from ccbench import Constraints
    from ccbench.running.harness import score_labels

    y = np.array([0, 0, 1, 1, 2])
    cons = Constraints([[0, 1]], [[2, 3]], n_samples=5)
    out = score_labels(registry.get_method_spec("kmeans"), y, y, cons, ["ari", "nmi"], "both")
    assert out["ari"] == 1.0 and out["n_evaluated_unconstrained"] == 1
    assert np.isnan(out["ari_unconstrained"]) and np.isnan(out["nmi_unconstrained"])
    assert "all points but one are constrained" in out["warnings"]


def test_unconstrained_metric_columns_have_their_base_metrics_direction():
    from ccbench.reporting._format import axis_label

    assert rfmt.direction("ari_unconstrained") == "higher" and rfmt.is_ranked("nmi_unconstrained")
    assert rfmt.metric_bounds("ari_unconstrained") == rfmt.metric_bounds("ari")
    assert rfmt.direction("n_clusters_found_unconstrained") == rfmt.direction("n_clusters_found")
    assert rfmt.direction("not_a_metric_unconstrained") == "none"
    assert "unconstrained" in axis_label("ari_unconstrained")


@pytest.mark.slow
def test_a_sweep_through_the_command_shares_fits_in_its_sweep_dir(tmp_path):
    """The app hands run_job ``<hydra.sweep.dir>/.fits``: two budgets x two noise levels under the
    joblib launcher, one kmeans fit per trial."""
    sweep = tmp_path / "sweep"
    cmd = [sys.executable, "-c", "import sys; from ccbench.running.cli import main; sys.exit(main())", "-m",
           "hydra/launcher=local", "method=kmeans", "constraints.n_constraints=10,30", "noise=none,constraint_flip",
           "n_trials=2", "share_unsupervised_fits=true", f"hydra.sweep.dir={sweep}",
           "hydra.sweep.subdir=jobs/${hydra.job.num}"]  # nested job dirs: the cache is still at the root
    proc = _proc.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    from ccbench.running.results import gather

    rows = gather(sweep)
    assert len(rows) == 8 and (rows["status"] == "ok").all()
    # one cache entry per trial at the sweep's root; the lock is held only to write (issue 42), so two
    # workers that start the same trial's fit at once may both fit it (the first write wins): 2 to 4 fits
    fitted = int((~rows["fit_reused"].astype(bool)).sum())
    assert 2 <= fitted <= 4 and len(list((sweep / ".fits").glob("*.npz"))) == 2


def test_a_shared_fit_is_keyed_by_the_shared_numerical_code_it_ran():
    # AP's shared unsupervised fit runs ccbench.similarity's search for k: a cached fit of the old search
    # must not serve the new one (its method hash, over the plugin's modules, does not see the change)
    import json

    from ccbench.running import provenance, shared_fits

    cell = {"dataset": {"name": "iris"}, "method": {"name": "ap", "n_clusters": 3}, "seed": 0}
    code = {**provenance.cell_method_code("ap"), **provenance.cell_inputs("ap", metrics=["ari"])}
    inputs = json.loads(code[provenance.INPUTS])
    edited = {**code, provenance.INPUTS: json.dumps({**inputs, "core:ccbench.similarity": "edited"})}
    metric_only = {**code, provenance.INPUTS: json.dumps({**inputs, "metric:ari": "edited"})}
    key = lambda c: shared_fits.fit_key(cell, "data", c, 0, 1, 3, None)  # noqa: E731
    assert key(edited) != key(code)
    assert key(metric_only) == key(code)  # a metric's code re-scores, it does not refit
    plain = {**provenance.cell_method_code("kmeans"), **provenance.cell_inputs("kmeans", metrics=["ari"])}
    no_inputs = {k: v for k, v in plain.items() if k != provenance.INPUTS}
    kcell = {**cell, "method": {"name": "kmeans", "n_clusters": 3}}
    # a method that runs no shared numerical module keeps the key it had before the inputs existed
    assert shared_fits.fit_key(kcell, "data", plain, 0, 1, 3, None) == shared_fits.fit_key(kcell, "data", no_inputs, 0, 1, 3, None)
