"""Typos are caught before any job starts: every group key against its target, did-you-mean, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccbench.running.cli import main, precheck


@pytest.fixture
def validate():
    """The module under test (imported by the tests that call it directly; the CLI tests go through main)."""
    from ccbench.running import validate as module

    return module


def _cell(**groups):
    cell = {"dataset": {"name": "iris"}, "method": {"name": "kmeans"},
            "constraints": {"name": "random_pairs", "n_constraints": 10}, "noise": {"name": "none", "rate": 0.0},
            "n_trials": 1, "metrics": ["ari"], "inconsistent": "warn", "evaluate_on": "all"}
    for group, section in groups.items():
        cell[group] = section
    return cell


@pytest.mark.parametrize(
    "group, section, expected",
    [
        ("method", {"name": "scssap", "penalti": 3}, "method.penalti: method 'scssap' has no parameter 'penalti'; "
                                                     "did you mean method.penalty?"),
        ("constraints", {"name": "random_pairs", "n_constraint": 5},
         "constraints.n_constraint: constraint scheme 'random_pairs' has no parameter 'n_constraint'; "
         "did you mean constraints.n_constraints?"),
        ("noise", {"name": "label_noise", "rat": 0.1}, "did you mean noise.rate?"),
        ("dataset", {"name": "iris", "preproces": "standardize"}, "did you mean dataset.preprocess?"),
        ("dataset", {"name": "scap_gaussian_similarity", "alpah": 2.0}, "did you mean dataset.alpha?"),
        ("method", {"name": "scsap"}, "method.name: unknown method 'scsap'; did you mean method=scssap?"),
        ("dataset", {"name": "csv", "path": "???"}, "dataset.path: has no value"),
        ("method", {"name": "kmeans", "n_clusters": 0}, "method.n_clusters: 0 clusters is no clustering"),
        ("method", {"name": "ap", "n_clusters": 1}, "give an int >= 2, true_k"),
        ("method", {"name": "kmeans", "n_clusters": 2.5}, "method.n_clusters: 2.5 clusters"),
    ],
)
def test_group_keys_are_checked_against_their_target(group, section, expected, validate):
    problems = validate.check_cells([_cell(**{group: section})])
    assert len(problems) == 1, problems
    assert expected in problems[0]


def test_valid_cells_have_no_problem(validate):
    cells = [_cell(method={"name": "scssap", "penalty": 3.0, "confidence": 0.1, "n_clusters": "true_k"}),
             _cell(constraints={"name": "labeled_subsets", "per_class": 3}, noise={"name": "label_noise", "rate": 0.1}),
             _cell(dataset={"name": "wine_uci", "preprocess": "minmax_1_2", "missing": "impute"}),
             _cell(method={"name": "constrained_em", "n_clusters": {"from_method": "scssap", "penalty": 1e9}})]
    assert validate.check_cells(cells) == []


def test_accepted_keys_are_the_estimators_get_params(validate):
    from ccbench import make_method

    keys = validate.accepted_keys("method", "scssap")
    assert keys == set(make_method("scssap").get_params()) | {"name", "n_clusters"}


def test_keys_of_the_method_that_counts_clusters_are_checked_too(validate):
    problems = validate.check_cells([_cell(method={"name": "constrained_em",
                                                   "n_clusters": {"from_method": "scssap", "penalti": 1}})])
    assert problems and "method.n_clusters.penalti" in problems[0] and "did you mean" in problems[0]


def test_one_line_per_distinct_problem_over_many_jobs(validate):
    cells = [_cell(method={"name": m, "penalti": 3}, constraints={"name": "random_pairs", "n_constraint": n})
             for m in ("scssap", "scssap_ml") for n in (5, 10)]
    problems = validate.check_cells(cells)
    assert len(problems) == 3  # penalti for each method, n_constraint once
    assert sum("n_constraint" in p for p in problems) == 1


@pytest.mark.parametrize(
    "args, expected",
    [
        (["method=scsap"], "method=scsap: no such option; did you mean method=scssap?"),
        (["-m", "method=ap,scsap"], "method=scsap: no such option; did you mean method=scssap?"),
        (["dataset=irs"], "did you mean dataset=iris?"),
        (["n_trails=3"], "n_trails: unknown root key 'n_trails'; did you mean n_trials?"),
    ],
)
def test_unknown_group_options_and_root_keys_are_caught_before_hydra(args, expected):
    problems = precheck(args)
    assert len(problems) == 1 and expected in problems[0], problems


def test_suites_and_searchpath_options_are_known(tmp_path):
    (tmp_path / "method").mkdir()
    (tmp_path / "method" / "mine.yaml").write_text("name: kmeans\n")
    assert precheck(["dataset=uci_all,iris", "method=mine", f"hydra.searchpath=[file://{tmp_path}]"]) == []
    assert precheck(["-m", "method=glob(scssap_expq*)", "experiment=null", "+method.foo=1"]) == []


def test_cli_unknown_option_is_one_line_and_exit_2(capsys):
    assert main(["method=scsap"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "did you mean method=scssap?" in err[1]  # header + one line, not Hydra's 35


def _ccbench(args, cwd):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "ccbench.running.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def test_typos_in_group_keys_stop_a_multirun_before_any_job(tmp_path):
    sweep = tmp_path / "sweep"
    proc = _ccbench(["-m", "method=scssap,ap", "dataset=iris,wine", "method.penalti=3",
                     "constraints.n_constraint=5", "n_trials=1", f"hydra.sweep.dir={sweep}"], tmp_path)
    assert proc.returncode == 2, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    problems = lines[lines.index("ccbench: the sweep was not started:") + 1:]
    assert len(problems) == 3, problems  # penalti for scssap and for ap, n_constraint once (4 jobs)
    assert any("method.penalti: method 'scssap'" in p and "did you mean method.penalty?" in p for p in problems)
    assert any("method.penalti: method 'ap'" in p for p in problems)
    assert any("did you mean constraints.n_constraints?" in p for p in problems)
    assert not list(tmp_path.rglob("results.parquet")) and not sweep.exists()


def test_a_per_point_budget_beside_the_default_count_is_refused_before_any_job():
    from ccbench.running.protocol import check_cell

    def cell(**constraints):
        return {"n_trials": 1, "metrics": ["ari"], "dataset": {"name": "iris"}, "method": {"name": "kmeans"},
                "constraints": {"name": "random_pairs", **constraints}, "noise": {"name": "none"}}

    problems = check_cell(cell(n_constraints=60, per_point=0.1))
    assert len(problems) == 1 and "add constraints.n_constraints=null" in problems[0]
    assert check_cell(cell(n_constraints=None, per_point=0.1)) == []
    assert check_cell(cell(n_constraints=60)) == []
    assert "per_point must be a number" in check_cell(cell(n_constraints=None, per_point=-1))[0]


@pytest.mark.slow
def test_a_single_run_typo_stops_too(tmp_path):
    proc = _ccbench(["method=scssap", "method.penalti=3", "n_trials=1", f"hydra.sweep.dir={tmp_path / 's'}"],
                    tmp_path)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "did you mean method.penalty?" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_a_missing_option_inside_an_experiment_is_one_line(tmp_path):
    (tmp_path / "experiment").mkdir()
    (tmp_path / "experiment" / "typo.yaml").write_text(
        "# @package _global_\nn_trials: 1\nhydra:\n  sweeper:\n    params:\n      method: ap,scsap\n")
    proc = _ccbench(["experiment=typo", f"hydra.searchpath=[file://{tmp_path}]",
                     f"hydra.sweep.dir={tmp_path / 's'}"], tmp_path)
    assert proc.returncode == 2, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    assert lines[-1].strip().startswith("method=scsap: no such option; did you mean method=scssap?"), lines
    assert len(lines) == 2 and not (tmp_path / "s").exists()


_BASE = ["hydra.searchpath=[pkg://ccbench_plugins.kmeans.peers_conf]"]


def _swept_jobs(master) -> list[tuple[str, ...]]:
    """Jobs of the experiment's sweep in which every option of every swept key appears at least once.

    Job ``i`` takes option ``i`` of each key, cycling through a key's options when it has fewer than the
    longest (job 0 is the first option of every key): as many jobs as the longest key has options, where
    one job per option with the other keys at their first took the sum (the leaderboard's 24 data sets,
    12 supervisions and 22 methods: 24 jobs, not 56). Like that design, it is a sample of the product,
    not the product: an option is checked beside one choice of the other keys.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from ccbench.datasets import expand_suites

    # as the sweeper does: a suite (dataset=board_all) is its members, one job each
    params = expand_suites([f"{k}={v}" for k, v in (master.hydra.sweeper.get("params") or {}).items()])
    swept = [[f"{o.key_or_group}={v}" for v in o.sweep_string_iterator()] if o.is_sweep_override()
             else [f"{o.key_or_group}={o.get_value_element_as_str()}"]
             for o in OverridesParser.create().parse_overrides(params)]
    return [tuple(values[i % len(values)] for values in swept) for i in range(max(map(len, swept), default=1))]


def _cells_composing_each_job(experiment: str, jobs=None) -> list[dict]:
    """The sweeper's route: one Hydra compose per job."""
    from hydra import compose, initialize_config_module

    from ccbench.running import app  # noqa: F401 - registers the schema and the sweeper
    from ccbench.running.config import to_cell

    base = [f"experiment={experiment}", *_BASE]
    with initialize_config_module("ccbench_conf", version_base="1.3"):
        jobs = jobs or _swept_jobs(compose("config", overrides=base, return_hydra_config=True))
        return [to_cell(compose("config", overrides=[*base, *job])) for job in jobs]


def _cells_composing_each_group_choice(experiment: str, jobs=None) -> list[dict]:
    """The same cells with one Hydra compose per distinct choice of config-group options.

    A job's plain ``key=value`` overrides whose key is no config group of the defaults list
    (``dataset.seed=3``, ``method.p=0.5``) do not change which files Hydra merges: Hydra
    composes the defaults list from the group overrides, then applies the value overrides
    to the result, in order (``ConfigLoaderImpl._apply_overrides_to_config``). So the jobs
    that differ only in values share one compose, copied, and that same Hydra function
    applies each job's values. Group overrides (``method=ap``, ``supervision=labels``: a
    group file may carry its own defaults list) and ``+``/``~`` overrides go through the
    compose. :func:`test_one_compose_per_group_choice_gives_the_cells_of_one_compose_per_job`
    checks the two routes give equal cells.
    """
    import copy

    from hydra import compose, initialize_config_module
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import OverrideType

    from ccbench.running import app  # noqa: F401 - registers the schema and the sweeper
    from ccbench.running.config import to_cell

    base = [f"experiment={experiment}", *_BASE]
    parser = OverridesParser.create()
    with initialize_config_module("ccbench_conf", version_base="1.3"):
        master = compose("config", overrides=base, return_hydra_config=True)
        groups = set(master.hydra.runtime.choices)
        composed, cells = {}, []
        for job in jobs or _swept_jobs(master):
            overrides = parser.parse_overrides(list(job))
            values = [o for o in overrides if o.key_or_group not in groups and o.package is None
                      and o.type is OverrideType.CHANGE]
            choice = tuple(o.input_line for o in overrides if o not in values)
            if choice not in composed:
                composed[choice] = compose("config", overrides=[*base, *choice])
            cfg = copy.deepcopy(composed[choice])
            ConfigLoaderImpl._apply_overrides_to_config(values, cfg)
            cells.append(to_cell(cfg))
        return cells


@pytest.mark.parametrize("experiment, jobs", [
    # a value beside a group option other than the first; two jobs sharing one compose, the second without the
    # first's value (it must not inherit it)
    ("quickstart", [("method=scssap", "constraints.n_constraints=60"), ("method=kmeans", "constraints.n_constraints=0"),
                    ("method=kmeans",)]),
    # a value beside a group option it interpolates (constraints.dataset: ${dataset.name})
    ("pccc_col1", [("dataset=wine_uci", "constraints.fraction=0.15", "method=pccc"),
                   ("dataset=spectf", "constraints.fraction=0.2", "method=pccc")]),
])
def test_one_compose_per_group_choice_gives_the_cells_of_one_compose_per_job(experiment, jobs):
    shortcut = _cells_composing_each_group_choice(experiment, jobs)
    assert shortcut == _cells_composing_each_job(experiment, jobs)
    assert len({repr(cell) for cell in shortcut}) == len(jobs)  # the values were applied: the jobs' cells differ


def test_the_checked_jobs_hold_every_option_of_every_swept_key():
    from omegaconf import OmegaConf

    master = OmegaConf.create({"hydra": {"sweeper": {"params": {
        "dataset": "iris,wine,glass", "method": "ap,kmeans", "constraints.n_constraints": "0,10,20,40,80",
        "n_trials": "2"}}}})
    jobs = _swept_jobs(master)
    assert len(jobs) == 5 and jobs[0] == ("dataset=iris", "method=ap", "constraints.n_constraints=0", "n_trials=2")
    for key, options in master.hydra.sweeper.params.items():
        assert {f"{key}={o}" for o in str(options).split(",")} == {job[list(master.hydra.sweeper.params).index(key)]
                                                                  for job in jobs}, key
    assert _swept_jobs(OmegaConf.create({"hydra": {"sweeper": {"params": None}}})) == [()]  # no sweep: one job


@pytest.mark.slow
@pytest.mark.parametrize("experiment", sorted(p.stem for p in (Path(__file__).parents[1] / "conf" / "experiment")
                                              .glob("*.yaml")))
def test_every_committed_experiment_passes_the_check(experiment, validate):
    """Each option of each swept key of the experiment, composed in one of its jobs, has no problem.

    :func:`_swept_jobs` puts every option in at least one job; one Hydra compose per distinct choice of
    group options (:func:`_cells_composing_each_group_choice`): the value options of scap's and rn_sdp's
    sweeps share one compose.
    """
    assert validate.check_cells(_cells_composing_each_group_choice(experiment)) == []
