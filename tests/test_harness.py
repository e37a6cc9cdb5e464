"""The Hydra harness end to end: a real multirun through the CLI, then run_job directly.

The sweep fixture runs ``ccbench -m`` in a subprocess with throw-away methods
from a plugin module this file writes to a temporary directory (loaded via
the ``plugins`` config key, their method configs found via ``hydra.searchpath``),
exactly as an outside package would add methods.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_module

from ccbench import registry
from ccbench.running.harness import _Progress, run_job
from ccbench.running.protocol import constraints_hash, draw_supervision, trial_seed
from ccbench.running.protocol import trial_streams as _trial_streams
from ccbench.running.results import read_results
import _proc  # on time-out, the command's whole process group is killed (issue 54)

PLUGIN = "ccbench_harness_testplugin_" + uuid.uuid4().hex[:8]

PLUGIN_SOURCE = '''
"""Throw-away methods for the harness tests."""
import numpy as np
from ccbench import ConstrainedClusterer, InfeasibleConstraintsError, MethodSpec, hookimpl

BOOM = True            # boom raises while True
TRUE_LABELS = None     # oracle predicts these
INTERRUPT_AT = None    # interrupter raises KeyboardInterrupt on this fit call
CALLS = [0]


class Boom(ConstrainedClusterer):
    def __init__(self, n_clusters=2, random_state=None):
        self.n_clusters = n_clusters
        self.random_state = random_state

    def fit(self, X, y=None, *, constraints=None):
        if BOOM:
            raise RuntimeError("boom: deliberate failure")
        self.labels_ = np.arange(len(X)) % self.n_clusters
        return self


class LabelsOnly(ConstrainedClusterer):
    def fit(self, X, y=None, *, constraints=None):
        self.labels_ = np.maximum(constraints.labels, 0)
        return self


class Infeasible(ConstrainedClusterer):
    def fit(self, X, y=None, *, constraints=None):
        raise InfeasibleConstraintsError("no partition meets these constraints")


class Oracle(ConstrainedClusterer):
    def fit(self, X, y=None, *, constraints=None):
        self.labels_ = np.asarray(TRUE_LABELS)
        return self


class Halver(ConstrainedClusterer):
    """Two clusters split at the median of feature 0; takes no n_clusters."""

    def fit(self, X, y=None, *, constraints=None):
        self.labels_ = (X[:, 0] > np.median(X[:, 0])).astype(int)
        return self


class Interrupter(ConstrainedClusterer):
    def fit(self, X, y=None, *, constraints=None):
        CALLS[0] += 1
        if CALLS[0] == INTERRUPT_AT:
            raise KeyboardInterrupt
        self.labels_ = np.zeros(len(X), dtype=int)
        return self


class SeedEcho(ConstrainedClusterer):
    """Random labels from random_state: the score reveals the seed it was given."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y=None, *, constraints=None):
        self.labels_ = np.random.default_rng(self.random_state).integers(0, 3, len(X))
        return self


@hookimpl
def ccbench_methods():
    return [
        MethodSpec("boom", Boom, "raises", needs_n_clusters=True),
        MethodSpec("labels_only", LabelsOnly, "uses partial labels only", supervision=("labels",)),
        MethodSpec("infeasible", Infeasible, "hard constraints never met",
                   supervision=("must_link", "cannot_link"), constraint_kind="hard"),
        MethodSpec("oracle", Oracle, "predicts the true labels"),
        MethodSpec("halver", Halver, "two clusters"),
        MethodSpec("interrupter", Interrupter, "Ctrl-C on a chosen call"),
        MethodSpec("seed_echo", SeedEcho, "random labels from random_state"),
    ]
'''

TEST_METHODS = ("boom", "labels_only", "infeasible", "oracle", "halver", "interrupter", "seed_echo")
SWEEP_METHODS = ("kmeans", "ap", "boom", "labels_only")
N_TRIALS = 3
N_CONSTRAINTS = (10, 30)


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("plugin")
    (root / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE)
    conf = root / "conf" / "method"
    conf.mkdir(parents=True)
    for name in TEST_METHODS:
        (conf / f"{name}.yaml").write_text(f"name: {name}\n")
    (conf / "seed_echo.yaml").write_text("name: seed_echo\nrandom_state: null\n")
    return root


@pytest.fixture
def plugin(plugin_dir, throwaway_plugin):
    """The plugin module, importable and registered; unregistered afterwards."""
    module = throwaway_plugin(PLUGIN_SOURCE, name=PLUGIN, directory=plugin_dir)
    module.BOOM, module.TRUE_LABELS, module.INTERRUPT_AT, module.CALLS[0] = True, None, None, 0
    return module


def _ccbench(args, plugin_dir, cwd, expect=0):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_dir), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-c", "import sys; from ccbench.running.cli import main; sys.exit(main())", *args]
    proc = _proc.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == expect, proc.stderr[-3000:]
    return proc


def _sweep_args(plugin_dir, sweep_dir):
    return [
        "-m",
        "hydra/launcher=local",  # joblib, 2 workers
        "method=" + ",".join(SWEEP_METHODS),
        "constraints.n_constraints=" + ",".join(map(str, N_CONSTRAINTS)),
        f"n_trials={N_TRIALS}",
        f"plugins=[{PLUGIN}]",
        f"hydra.searchpath=[file://{plugin_dir / 'conf'}]",
        f"hydra.sweep.dir={sweep_dir}",
    ]


@pytest.fixture(scope="module")
def sweep(plugin_dir, tmp_path_factory):
    """A real 4 methods x 2 constraint counts multirun through the CLI (joblib launcher)."""
    sweep_dir = tmp_path_factory.mktemp("sweep")
    # boom fails every trial: the sweep finishes, then the command exits 1 and says why
    proc = _ccbench(_sweep_args(plugin_dir, sweep_dir), plugin_dir, sweep_dir, expect=1)
    assert "6 trial(s) failed" in proc.stderr and "boom: deliberate failure" in proc.stdout
    rows = pd.concat([read_results(f) for f in sorted(sweep_dir.rglob("results.parquet"))], ignore_index=True)
    return sweep_dir, proc, rows


@pytest.fixture
def compose_cfg(plugin_dir, plugin):
    def make(*overrides):
        with initialize_config_module("ccbench_conf", version_base="1.3"):
            return compose(
                "config",
                overrides=[
                    f"hydra.searchpath=[file://{plugin_dir / 'conf'}]",
                    f"plugins=[{PLUGIN}]",
                    *overrides,
                ],
            )

    return make


# -- the multirun ---------------------------------------------------------------

EXPECTED_COLUMNS = {
    "dataset.name", "dataset.preprocess", "method.name", "constraints.name",
    "constraints.n_constraints", "noise.name", "noise.rate", "n_trials", "seed", "metrics",
    "plugins", "x_axis", "config_hash", "trial", "trial_seed", "method_seed", "n_samples",
    "n_features", "n_classes", "status", "error", "constraints_hash", "n_must_link",
    "n_cannot_link", "n_labeled", "n_clusters_given", "fit_time", "modified_rand", "ari", "nmi",
    "n_clusters_found", "constraint_violations", "n_iter", "converged", "timestamp",
}


@pytest.mark.slow
def test_sweep_writes_one_row_per_trial_per_job(sweep):
    sweep_dir, _, rows = sweep
    files = list(sweep_dir.rglob("results.parquet"))
    assert len(files) == len(SWEEP_METHODS) * len(N_CONSTRAINTS)
    assert len(rows) == len(files) * N_TRIALS
    assert EXPECTED_COLUMNS <= set(rows.columns), EXPECTED_COLUMNS - set(rows.columns)
    counts = rows.groupby(["method.name", "constraints.n_constraints"]).size()
    assert (counts == N_TRIALS).all()
    assert not rows.duplicated(["config_hash", "trial"]).any()


@pytest.mark.slow
def test_sweep_statuses(sweep):
    _, _, rows = sweep
    by = dict(iter(rows.groupby("method.name")))
    for name in ("kmeans", "ap"):
        ok = by[name]
        assert (ok["status"] == "ok").all(), ok["error"].dropna().tolist()
        assert ok["modified_rand"].between(0.5, 1).all()
        assert (ok["fit_time"] > 0).all()
    assert (by["kmeans"]["n_clusters_given"] == 3).all()  # true_k on iris
    boom = by["boom"]
    assert (boom["status"] == "error").all()
    assert boom["error"].str.contains("boom: deliberate failure").all()
    assert boom["error"].str.contains("Traceback").all()
    assert boom["modified_rand"].isna().all()
    skipped = by["labels_only"]
    assert (skipped["status"] == "skipped").all()
    assert skipped["error"].str.contains("labels").all()
    assert skipped["fit_time"].isna().all()


@pytest.mark.slow
def test_sweep_is_paired_across_methods(sweep):
    _, _, rows = sweep
    per_cell = rows.groupby(["constraints.n_constraints", "trial"])
    # every method of a cell saw the very same constraints and seeds ...
    assert (per_cell["constraints_hash"].nunique() == 1).all()
    assert (per_cell["method_seed"].nunique() == 1).all()
    assert (per_cell["method.name"].nunique() == len(SWEEP_METHODS)).all()
    # ... and the sets differ between trials and between constraint counts
    assert rows["constraints_hash"].nunique() == len(N_CONSTRAINTS) * N_TRIALS
    assert (rows["n_must_link"] + rows["n_cannot_link"] == rows["constraints.n_constraints"]).all()


@pytest.mark.slow
def test_recorded_constraints_can_be_redrawn(sweep):
    """An independent route: redraw from trial_seed(config, t) and compare fingerprints."""
    _, _, rows = sweep
    from ccbench import load_dataset

    y = load_dataset("iris").y
    for _, row in rows[rows["method.name"] == "kmeans"].iterrows():
        conf = {
            "seed": int(row["seed"]),
            "dataset": {"name": row["dataset.name"], "preprocess": row["dataset.preprocess"]},
            "constraints": {"name": row["constraints.name"], "n_constraints": int(row["constraints.n_constraints"])},
            "noise": {"name": row["noise.name"], "rate": float(row["noise.rate"])},
        }
        seed = trial_seed(conf, int(row["trial"]))
        assert seed == row["trial_seed"]
        rng, method_seed = _trial_streams(seed)
        cons, _ = draw_supervision(y, conf["constraints"], conf["noise"], rng)
        assert constraints_hash(cons) == row["constraints_hash"]
        assert method_seed == row["method_seed"]


@pytest.mark.slow
def test_sweep_prints_summary_table(sweep):
    sweep_dir, proc, _ = sweep
    out = proc.stdout
    assert "| dataset | method | constraints.n_constraints=10 | constraints.n_constraints=30 |" in out
    for name in ("kmeans", "ap"):
        assert f"| iris | {name} | " in out
    assert "| iris | boom | error | error |" in out
    assert (sweep_dir / "report" / "modified_rand.png").exists()


@pytest.mark.slow
def test_rerun_same_sweep_adds_no_rows(sweep, plugin_dir):
    """Resume: the same sweep into the same directory (basic launcher this time) adds nothing."""
    sweep_dir, _, rows = sweep
    _ccbench([*_sweep_args(plugin_dir, sweep_dir), "hydra/launcher=basic", "rerun_errors=false"],
             plugin_dir, sweep_dir, expect=1)  # the recorded errors still fail the command
    again = pd.concat([read_results(f) for f in sorted(sweep_dir.rglob("results.parquet"))], ignore_index=True)
    key = ["config_hash", "trial"]
    before = rows.sort_values(key).reset_index(drop=True)
    after = again.sort_values(key).reset_index(drop=True)
    assert len(after) == len(before)
    pd.testing.assert_series_equal(after["timestamp"], before["timestamp"])  # untouched rows


@pytest.mark.slow
def test_report_cli_on_sweep(sweep, tmp_path):
    sweep_dir, _, rows = sweep
    from ccbench.reporting.plots import plot_metric
    from ccbench.reporting.summary import load, summarise
    from ccbench.running.cli import main

    out = tmp_path / "rep"
    assert main(["report", str(sweep_dir), "--metric", "modified_rand,nmi", "--out", str(out)]) == 0
    for name in ("summary.parquet", "summary.md", "modified_rand.png", "nmi.png"):
        assert (out / name).stat().st_size > 0
    summary = pd.read_parquet(out / "summary.parquet")
    assert len(summary) == 2 * len(SWEEP_METHODS) * len(N_CONSTRAINTS)
    kmeans10 = rows[(rows["method.name"] == "kmeans") & (rows["constraints.n_constraints"] == 10)]
    got = summary[(summary.method_label == "kmeans") & (summary.x == 10) & (summary.metric == "nmi")]
    assert got["mean"].item() == pytest.approx(kmeans10["nmi"].mean())
    fig = plot_metric(summarise(load(sweep_dir), "modified_rand"), "modified_rand")
    (ax,) = [a for a in fig.axes if a.get_visible()]
    labels = sorted(t.get_text() for t in ax.get_legend().get_texts())
    assert labels == ["ap", "kmeans"]  # methods with ok trials: one line each
    assert len(ax.containers) == 2


# -- run_job directly -------------------------------------------------------------


def test_fixing_the_cause_fixes_the_cell(plugin, compose_cfg, tmp_path):
    """Error rows are retried on the next run by default (rerun_errors=false keeps them)."""
    cfg = compose_cfg("method=boom", "n_trials=2")
    first = run_job(cfg, out_dir=tmp_path)
    assert first["status"].tolist() == ["error", "error"]
    plugin.BOOM = False
    kept = run_job(compose_cfg("method=boom", "n_trials=2", "rerun_errors=false"), out_dir=tmp_path)
    assert kept["status"].tolist() == ["error", "error"]
    again = run_job(cfg, out_dir=tmp_path)
    assert again["status"].tolist() == ["ok", "ok"]
    assert len(read_results(tmp_path)) == 2
    assert (again["constraints_hash"] == first["constraints_hash"]).all()


def test_a_failed_set_up_runs_again_even_where_rerun_errors_keeps_failures(compose_cfg, tmp_path, monkeypatch):
    """A cell whose set-up failed (here: its data file missing, as in a sweep started without CCBENCH_DATA_DIR)
    recorded no verdict of the method: a resume runs it again although rerun_errors=false keeps real failures."""
    from ccbench.running import harness
    from ccbench.running.harness import cell_is_complete
    from ccbench.running.results import NOT_SET_UP

    cfg = compose_cfg("method=kmeans", "n_trials=2", "method.n_init=1", "rerun_errors=false")
    working_setup = harness._setup

    def data_missing(cell):
        raise FileNotFoundError("iris.data is not under CCBENCH_DATA_DIR")

    monkeypatch.setattr(harness, "_setup", data_missing)
    first = run_job(cfg, out_dir=tmp_path)
    assert first["status"].tolist() == ["error", "error"]
    assert first["error"].str.startswith(NOT_SET_UP).all()
    assert first["error"].str.contains("iris.data is not under CCBENCH_DATA_DIR").all()
    assert not cell_is_complete(cfg, tmp_path)  # a SLURM launcher submits it again too
    monkeypatch.setattr(harness, "_setup", working_setup)
    again = run_job(cfg, out_dir=tmp_path)
    assert again["status"].tolist() == ["ok", "ok"]
    assert again["rerun_reason"].tolist() == ["retry of a trial whose set-up failed"] * 2
    assert cell_is_complete(cfg, tmp_path)


def test_more_trials_on_resume_only_adds_new_ones(compose_cfg, tmp_path):
    two = run_job(compose_cfg("method=kmeans", "n_trials=2", "method.n_init=1"), out_dir=tmp_path)
    four = run_job(compose_cfg("method=kmeans", "n_trials=4", "method.n_init=1"), out_dir=tmp_path)
    assert four["trial"].tolist() == [0, 1, 2, 3]
    assert (four["status"] == "ok").all()
    assert four["timestamp"].iloc[:2].tolist() == two["timestamp"].tolist()
    assert len(read_results(tmp_path)) == 4


def test_new_metric_on_resume_recomputes_in_place(compose_cfg, tmp_path):
    base = ("method=kmeans", "n_trials=2", "method.n_init=1")
    first = run_job(compose_cfg(*base, "metrics=[modified_rand]"), out_dir=tmp_path)
    assert "nmi" not in first
    second = run_job(compose_cfg(*base, "metrics=[modified_rand,nmi]"), out_dir=tmp_path)
    assert len(read_results(tmp_path)) == 2
    assert second["nmi"].between(0, 1).all()
    assert second["config_hash"].tolist() == first["config_hash"].tolist()
    assert second["modified_rand"].tolist() == first["modified_rand"].tolist()  # same seeds


def test_interrupted_job_keeps_finished_trials(plugin, compose_cfg, tmp_path):
    plugin.INTERRUPT_AT = 3
    cfg = compose_cfg("method=interrupter", "n_trials=5")
    with pytest.raises(KeyboardInterrupt):
        run_job(cfg, out_dir=tmp_path)
    assert read_results(tmp_path)["trial"].tolist() == [0, 1]
    assert run_job(cfg, out_dir=tmp_path)["trial"].tolist() == [0, 1, 2, 3, 4]


def test_infeasible_status(plugin, compose_cfg, tmp_path):
    rows = run_job(compose_cfg("method=infeasible", "n_trials=2"), out_dir=tmp_path)
    assert rows["status"].tolist() == ["infeasible"] * 2
    assert rows["error"].str.contains("no partition meets").all()


def test_labeled_scheme_runs_labels_only_method(plugin, compose_cfg, tmp_path):
    rows = run_job(compose_cfg("method=labels_only", "constraints=labeled_subsets", "n_trials=2"),
                   out_dir=tmp_path)
    assert rows["status"].tolist() == ["ok", "ok"]
    assert (rows["n_labeled"] == 3 * 5).all()  # iris: 3 classes x per_class=5


def test_label_noise_is_scored_against_true_labels(plugin, compose_cfg, tmp_path):
    from ccbench import load_dataset

    plugin.TRUE_LABELS = load_dataset("iris").y
    rows = run_job(compose_cfg("method=oracle", "noise=label_noise", "noise.rate=0.3", "n_trials=3"),
                   out_dir=tmp_path)
    assert (rows["modified_rand"] == 1.0).all()  # perfect against the truth ...
    assert (rows["constraint_violations"] > 0).all()  # ... while the noisy constraints disagree


def test_n_clusters_resolution(plugin, compose_cfg, tmp_path):
    def given(*overrides):
        rows = run_job(compose_cfg(*overrides, "n_trials=1"), out_dir=tmp_path)
        assert rows["status"].tolist() == ["ok"], rows["error"].tolist()
        return rows["n_clusters_given"].item(), rows["n_clusters_found"].item()

    assert given("method=kmeans") == (3, 3)  # true_k
    assert given("method=kmeans", "method.n_clusters=5") == (5, 5)
    # Hydra's override grammar needs the '=' quoted; in YAML `n_clusters: from_method=halver`
    assert given("method=kmeans", "method.n_clusters='from_method=halver'") == (2, 2)
    assert given("method=kmeans", "method.n_clusters={from_method: halver}") == (2, 2)
    # a method that needs no k never receives it, whatever the config says
    rows = run_job(compose_cfg("method=halver", "+method.n_clusters=7", "n_trials=1"), out_dir=tmp_path)
    assert rows["status"].item() == "ok" and rows["n_clusters_given"].isna().item()


def test_method_random_state_is_the_derived_seed_unless_set(compose_cfg, tmp_path):
    from ccbench import load_dataset
    from ccbench.metrics import modified_rand

    y = load_dataset("iris").y

    def score(seed):
        return modified_rand(y, np.random.default_rng(seed).integers(0, 3, len(y)))

    derived = run_job(compose_cfg("method=seed_echo", "n_trials=3"), out_dir=tmp_path / "a")
    assert derived["modified_rand"].tolist() == [score(s) for s in derived["method_seed"]]
    assert derived["modified_rand"].nunique() == 3
    fixed = run_job(compose_cfg("method=seed_echo", "method.random_state=123", "n_trials=2"), out_dir=tmp_path / "b")
    assert fixed["modified_rand"].tolist() == [score(123)] * 2


def test_bad_config_gives_error_rows_not_a_crash(compose_cfg, tmp_path):
    rows = run_job(compose_cfg("method=kmeans", "dataset.name=no_such_set", "n_trials=2"), out_dir=tmp_path)
    assert rows["status"].tolist() == ["error", "error"]
    assert rows["error"].str.contains("unknown data set 'no_such_set'").all()


def test_job_count_for_progress():
    from omegaconf import OmegaConf

    from ccbench.running.app import _count_jobs

    cfg = OmegaConf.create({"hydra": {
        "sweeper": {"params": {"method": "ap,scssap,kmeans", "constraints.n_constraints": "0,30,90"}},
        "overrides": {"task": ["method=ap,kmeans", "dataset=iris,wine", "n_trials=3"]},
    }})
    assert _count_jobs(cfg) == 2 * 2 * 3  # the command line replaces the method list


def test_a_progress_bar_only_on_a_terminal_of_the_main_process(monkeypatch):
    """Elsewhere (SLURM logs, joblib workers) progress is whole log lines (tests/test_progress.py)."""
    import os

    from ccbench.running.harness import MAIN_PID_ENV

    for tty, main_pid, bar in ((True, None, True), (False, None, False), (True, "1", False)):
        monkeypatch.setattr(sys.stderr, "isatty", lambda: tty)
        if main_pid is None:
            monkeypatch.delenv(MAIN_PID_ENV, raising=False)
        else:  # a worker: the sweep's main process is another one
            monkeypatch.setenv(MAIN_PID_ENV, main_pid if main_pid != str(os.getpid()) else "0")
        p = _Progress("iris/kmeans", 4)
        assert (p.bar is not None) is bar
        p.update(2)
        p.close()


def test_run_job_needs_an_output_dir(compose_cfg):
    with pytest.raises(ValueError, match="output directory"):
        run_job(compose_cfg("method=kmeans", "n_trials=1"))


# -- configs ---------------------------------------------------------------------

CONF = Path(__import__("ccbench_conf").__file__).parent


def test_default_is_a_multirun_of_registered_methods():
    from ccbench.running.cli import with_default_experiment

    with initialize_config_module("ccbench_conf", version_base="1.3"):
        cfg = compose("config", overrides=with_default_experiment([]), return_hydra_config=True)
    assert str(cfg.hydra.mode) == "RunMode.MULTIRUN"
    params = cfg.hydra.sweeper.params
    methods = params["method"].split(",")
    assert {"ap", "scssap", "kmeans"} <= set(methods)
    known = {m.name for m in registry.list_methods()}
    assert set(methods) <= known, f"default sweep names unregistered methods {set(methods) - known}"
    for m in methods:
        assert (CONF / "method" / f"{m}.yaml").exists()
    assert len(params["constraints.n_constraints"].split(",")) >= 3


def test_quickstart_only_when_nothing_is_chosen():
    from ccbench.running.cli import DEFAULT_EXPERIMENT, with_default_experiment

    for args in ([], ["n_trials=3"], ["-m", "hydra/launcher=local"], ["--cfg", "job"]):
        assert with_default_experiment(args) == [DEFAULT_EXPERIMENT, *args]
    for args in (["-m", "method=ap,kmeans"], ["constraints.n_constraints=5"], ["experiment=x"],
                 ["+method.penalty=1"], ["dataset=wine"], ["noise=label_noise"]):
        assert with_default_experiment(args) == args
    # a chosen scheme without n_constraints composes: no default sweep is left over
    with initialize_config_module("ccbench_conf", version_base="1.3"):
        cfg = compose("config", overrides=["constraints=labeled_subsets"], return_hydra_config=True)
    assert not cfg.hydra.sweeper.params


@pytest.mark.parametrize("group", ["dataset", "method", "constraints", "noise"])
def test_every_group_file_names_a_registered_entry(group):
    lookup = {
        "dataset": registry.get_dataset_spec,
        "method": registry.get_method_spec,
        "constraints": registry.get_scheme_spec,
        "noise": registry.get_noise_spec,
    }[group]
    from ccbench.datasets import suites

    files = sorted(f for f in (CONF / group).glob("*.yaml") if f.stem not in suites())  # a suite is a sweep
    assert files
    registry.load_plugins(["ccbench_plugins.datasets.pccc"])  # pccc_file's scheme: a plugin loaded on request
    with initialize_config_module("ccbench_conf", version_base="1.3"):
        for f in files:
            cfg = compose("config", overrides=[f"{group}={f.stem}"])
            lookup(cfg[group]["name"])  # raises UnknownNameError when stale
    if group == "dataset":
        assert {f.stem for f in files} == {d.name for d in registry.list_datasets()}


def test_launcher_presets():
    with initialize_config_module("ccbench_conf", version_base="1.3"):
        local = compose("config", overrides=["hydra/launcher=local"], return_hydra_config=True)
        slurm = compose("config", overrides=["hydra/launcher=slurm"], return_hydra_config=True)
    assert local.hydra.launcher._target_.endswith("JoblibLauncher")
    assert local.hydra.launcher.n_jobs == 2
    assert slurm.hydra.launcher._target_.endswith("SlurmLauncher")
    for key in ("partition", "timeout_min", "cpus_per_task", "mem_gb", "array_parallelism"):
        assert key in slurm.hydra.launcher


@pytest.mark.slow
def test_submitit_local_launcher(plugin_dir, tmp_path):
    """The SLURM code path (submitit) with its local executor."""
    _ccbench(
        ["-m", "hydra/launcher=submitit_local", "method=kmeans", "method.n_init=1", "n_trials=1",
         "constraints.n_constraints=10,20", f"hydra.sweep.dir={tmp_path}"],
        plugin_dir, tmp_path,
    )
    rows = pd.concat([read_results(f) for f in tmp_path.rglob("results.parquet")])
    assert sorted(rows["constraints.n_constraints"]) == [10, 20]
    assert (rows["status"] == "ok").all()


def test_the_trial_timeout_worker_is_kept_from_job_to_job(tmp_path):
    """One worker serves every job of a process (a local sweep runs thousands of jobs); a new
    one per job spent seconds importing before each job's first trial."""
    from ccbench.running import harness

    cell = {"dataset": {"name": "iris"}, "method": {"name": "kmeans"},
            "constraints": {"name": "random_pairs", "n_constraints": 10}, "noise": {"name": "none"},
            "n_trials": 1, "metrics": ["ari"], "trial_timeout": 60}
    run_job(cell, out_dir=tmp_path / "a")
    worker = harness._worker()._proc
    assert worker is not None and worker.is_alive()
    rows = run_job({**cell, "method": {"name": "pck_means"}}, out_dir=tmp_path / "b")
    assert rows["status"].eq("ok").all()
    assert harness._worker()._proc is worker and worker.is_alive()


def test_a_draw_without_cannot_links_skips_metric_learning_instead_of_failing(tmp_path):
    """One random pair on iris is a must-link in about a third of the trials: Xing's metric has
    nothing to separate there (InsufficientSupervisionError), a skipped trial, not a failed one."""
    from ccbench.base import InsufficientSupervisionError

    assert issubclass(InsufficientSupervisionError, ValueError)  # callers catching ValueError still do
    cell = {"dataset": {"name": "iris"}, "method": {"name": "pck_means_xing"},
            "constraints": {"name": "random_pairs", "n_constraints": 1}, "noise": {"name": "none"},
            "n_trials": 8, "metrics": ["ari"]}
    rows = run_job(cell, out_dir=tmp_path)
    assert set(rows["status"]) == {"ok", "skipped"}, rows["status"].tolist()
    skipped = rows[rows["status"] == "skipped"]
    assert skipped["error"].str.startswith("InsufficientSupervisionError").all()
    assert (skipped["n_cannot_link"] == 0).all() and (rows.loc[rows["status"] == "ok", "n_cannot_link"] == 1).all()


def test_a_fit_is_shared_as_unsupervised_only_without_any_pair_or_label():
    # share_unsupervised_fits reuses one fit across budgets: wrong when a single label or pair reached it
    from ccbench import Constraints
    from ccbench.running.protocol import fit_is_unsupervised

    semi, plain = registry.get_method_spec("pck_means"), registry.get_method_spec("kmeans")
    one, two = ([0] + [-1] * 5, [0, 1] + [-1] * 4)
    assert fit_is_unsupervised(semi, Constraints(n_samples=6))
    assert fit_is_unsupervised(plain, Constraints([(0, 1)], n_samples=6, labels=two))
    for cons in (Constraints(n_samples=6, labels=one), Constraints(n_samples=6, labels=two),
                 Constraints([(0, 1)], n_samples=6), Constraints(cannot_link=[(0, 1)], n_samples=6)):
        assert not fit_is_unsupervised(semi, cons)
