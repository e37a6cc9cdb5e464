"""Bad input gets a clear error at the estimator boundary (every registered method)."""

import numpy as np
import pytest

from ccbench import Constraints, make_method
from ccbench.running.check_plugin import builtin_methods
import _proc  # on time-out, the command's whole process group is killed (issue 54)


def _build(spec, **extra):
    params = {"n_clusters": 2} if spec.needs_n_clusters else {}
    params.update(extra)
    return make_method(spec.name, **params)


METHODS = builtin_methods()  # ccbench's own; a plugin is checked by `ccbench check-plugin NAME`
IDS = [m.name for m in METHODS]


@pytest.fixture
def X():
    rng = np.random.default_rng(0)
    return np.r_[rng.normal(0, 0.3, (10, 2)), rng.normal(5, 0.3, (10, 2))]


@pytest.mark.parametrize("spec", METHODS, ids=IDS)
def test_nan_and_inf_are_refused(spec, X):
    X = X.copy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        _build(spec).fit(X)
    X[3, 1] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        _build(spec).fit(X)


@pytest.mark.parametrize("spec", METHODS, ids=IDS)
def test_fewer_than_two_samples_is_refused(spec):
    with pytest.raises(ValueError, match="at least 2"):
        _build(spec).fit(np.zeros((1, 3)))


@pytest.mark.parametrize("spec", METHODS, ids=IDS)
def test_constraints_for_other_data_are_refused(spec, X):
    cons = Constraints([[0, 1]], n_samples=5)
    with pytest.raises(ValueError, match="refer to 5 samples"):
        _build(spec).fit(X, constraints=cons)


@pytest.mark.parametrize("spec", [m for m in METHODS if m.needs_n_clusters], ids=lambda m: m.name)
def test_n_clusters_above_n_is_refused(spec, X):
    with pytest.raises(ValueError, match="exceeds the number of samples"):
        _build(spec, n_clusters=50).fit(X)


def test_one_dimensional_X_names_the_fix():
    with pytest.raises(ValueError, match="reshape"):
        make_method("kmeans", n_clusters=2).fit(np.arange(5.0))


@pytest.mark.parametrize("name", ["fpc", "kmedoids", "nnc"])
def test_overflowing_scale_is_warned_about(name, X):
    """Issue 42, item 13: data scaled by 1e300 used to give ARI 0 with no word from these three."""
    from ccbench.base import DataScaleWarning

    cons = Constraints([[0, 1]], [[0, 15]], n_samples=len(X))
    with pytest.warns(DataScaleWarning, match="scale the data"):
        make_method(name, n_clusters=2, random_state=0).fit(X * 1e300, constraints=cons)


# -- issue 42, item 12: CSV files that are no data set say so, naming the file and the fix ---------

_FEATURES = "a,b\n" + "".join(f"{i}.0,{i % 3}.5\n" for i in range(8))


def _csv(tmp_path, text, name="data.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, target, message", [
    ("a,b,c\n" + "".join(f"{i},{i}.5,same\n" for i in range(8)), "c", "holds one class"),
    # a label column half empty: the rows left all hold one class
    ("a,b,c\n" + "".join(f"{i},{i}.5,{'x' if i % 2 else ''}\n" for i in range(8)), "c", "4 row\\(s\\) without a label"),
    ("id,a,b\n" + "".join(f"{i},{i}.5,{i % 2}\n" for i in range(8)), "id", "its own class"),
    ("a,b,c\n", "c", "header but no data rows"),
    ("a,b,c\n" + "".join(f"{i},,{i % 2}\n" for i in range(8)), "c", r"\['b'\] hold no value"),
    ("a,b,c\n" + "".join(f"{i},{i}.5,\n" for i in range(8)), "c", "holds no value in any"),
])
def test_a_csv_that_is_no_data_set_names_the_file_and_the_fix(tmp_path, text, target, message):
    from ccbench.datasets import DataParseError, load_dataset

    path = _csv(tmp_path, text)
    with pytest.raises(DataParseError, match=message) as err:
        load_dataset("csv", path=str(path), target=target)
    assert str(path) in str(err.value)
    assert "dataset.target" in str(err.value) or "the file" in str(err.value)


def test_an_empty_csv_or_a_directory_is_named(tmp_path):
    from ccbench.datasets import DataParseError, load_dataset

    empty = _csv(tmp_path, "", "empty.csv")
    with pytest.raises(DataParseError, match="empty.csv: the file is empty"):
        load_dataset("csv", path=str(empty))
    with pytest.raises(IsADirectoryError, match="is a directory"):
        load_dataset("csv", path=str(tmp_path))


def test_fetch_reports_a_csv_that_cannot_be_read(tmp_path, capsys):
    from ccbench.running.cli import main

    empty = _csv(tmp_path, "", "empty.csv")
    assert main(["fetch", "dataset=csv", f"dataset.path={empty}"]) == 1
    assert "the file is empty" in capsys.readouterr().err
    good = _csv(tmp_path, "a,b,c\n" + "".join(f"{i},{i}.5,{i % 2}\n" for i in range(8)), "good.csv")
    assert main(["fetch", "dataset=csv", f"dataset.path={good}"]) == 0
    assert "8 x 2, 2 classes" in capsys.readouterr().out


# -- issue 42, item 15: report --utility on a plugin's data set; quoted sweep values ---------------

DATASET_PLUGIN = '''
import numpy as np
from ccbench import hookimpl
from ccbench.registry import DatasetSpec


def _load(*, preprocess="none", missing=None, data_dir=None, manifest=None):
    from ccbench.datasets import Dataset

    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 0.3, (15, 2)), rng.normal(4, 0.3, (15, 2))]
    return Dataset("twoblobs_h5", X, np.repeat([0, 1], 15), 2, {})


@hookimpl
def ccbench_datasets():
    return [DatasetSpec("twoblobs_h5", _load, "two blobs", n_samples=30, n_features=2, n_classes=2,
                        source="generated", not_in_seed=("preprocess", "data_dir", "manifest"))]
'''


def test_report_utility_loads_the_plugin_the_rows_name(tmp_path):
    import subprocess
    import sys

    from ccbench.running.harness import run_job

    (tmp_path / "ds_plugin_h5.py").write_text(DATASET_PLUGIN)
    sys.path.insert(0, str(tmp_path))
    try:
        for method in ("kmeans", "cop_kmeans"):
            cell = {"dataset": {"name": "twoblobs_h5"}, "method": {"name": method, "n_clusters": 2},
                    "constraints": {"name": "random_pairs", "n_constraints": 10}, "noise": {"name": "none"},
                    "n_trials": 2, "metrics": ["ari", "constraint_violations"], "plugins": ["ds_plugin_h5"]}
            run_job(cell, out_dir=tmp_path / "sweep" / method)
    finally:
        sys.path.remove(str(tmp_path))
        from ccbench import registry

        registry.unregister_plugin("ds_plugin_h5")
        sys.modules.pop("ds_plugin_h5", None)
    # a fresh process, as a user would run it: nothing registered the plugin yet
    import os

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    proc = _proc.run([sys.executable, "-m", "ccbench.running.cli", "report", str(tmp_path / "sweep"),
                           "--utility", "kmeans", "--metric", "ari", "--out", str(tmp_path / "out")],
                     capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Constraint-set utility on ari against kmeans" in proc.stdout


def test_quoted_sweep_values_are_accepted_by_the_precheck():
    from ccbench.running.cli import precheck

    assert precheck(["method.name='kmeans','cop_kmeans'", "dataset=iris"]) == []
    assert precheck(["method='kmeans','cop_kmeans'", 'dataset="iris"']) == []
    assert "unknown method 'nope'" in " ".join(precheck(["method.name='kmeans','nope'"]))


# -- the protocol's value checks: both sides of every bound ---------------------------------
# ``ccbench.running.protocol.VALUE_CHECKS`` refuses a bad override before Hydra starts any job (the
# command line's precheck) and a bad cell before a trial runs. Each key below is checked just inside
# and just outside its range, so a bound moved by one (or a check negated) changes an answer.

_OK = [("noise.rate", 0), ("noise.rate", 1), ("noise.rate", 0.5), ("constraints.n_constraints", 0),
       ("constraints.n_constraints", 30), ("constraints.n_constraints", 30.0), ("constraints.n_pairs", 2),
       ("constraints.per_class", 0.2), ("constraints.per_class", 3), ("constraints.per_class", 3.0),
       ("constraints.per_point", None), ("constraints.per_point", 0), ("constraints.per_point", 0.5),
       ("constraints.fraction", 0),
       ("constraints.fraction", 1), ("tune_folds", 2), ("trial_timeout", None), ("trial_timeout", 0.5),
       ("time_budget", 60), ("metrics", "ari"), ("metrics", ["ari", "nmi"]), ("method.name", "kmeans"),
       ("seed", 2**63 - 1), ("seed", -(2**63)), ("seed", 0), ("n_trials", 1), ("n_trials", 10_000),
       ("inconsistent", "ignore"), ("evaluate_on", "both"), ("share_unsupervised_fits", False),
       ("tune", "none"), ("not.a.checked.key", -1)]
_BAD = [("noise.rate", -0.1, "in [0, 1]"), ("noise.rate", 1.1, "in [0, 1]"), ("noise.rate", True, "in [0, 1]"),
        ("noise.rate", "0.1", "in [0, 1]"), ("constraints.n_constraints", -1, ">= 0"),
        ("constraints.n_constraints", 30.7, "whole number"), ("constraints.n_pairs", -2, ">= 0"),
        ("constraints.per_class", 2.5, "whole number"), ("constraints.per_class", -1, ">= 0"),
        ("constraints.per_point", -1, ">= 0"), ("constraints.fraction", 1.5, "in [0, 1]"),
        ("tune_folds", 1, ">= 2"), ("tune_folds", True, ">= 2"), ("trial_timeout", 0, "positive"),
        ("trial_timeout", -1, "positive"), ("time_budget", True, "positive"), ("metrics", [], "is empty"),
        ("metrics", ["ari", "nope"], "nope"), ("method.name", "nope", "unknown method 'nope'"),
        ("seed", 2**63, "64 bits"), ("seed", -(2**63) - 1, "64 bits"), ("seed", 1.5, "an int"),
        ("seed", True, "an int"), ("n_trials", 0, "positive int"), ("n_trials", 10_001, "at most 10,000"),
        ("inconsistent", "x", "must be warn, raise or ignore, got 'x'"), ("evaluate_on", "some", "all, "),
        ("share_unsupervised_fits", "yes", "true or false"), ("tune", "cvpc", "registered tuner")]


@pytest.mark.parametrize("key, value", _OK)
def test_a_value_inside_its_range_passes_the_protocol_check(key, value):
    from ccbench.running.protocol import check_value

    assert check_value(key, value) is None


@pytest.mark.parametrize("key, value, words", _BAD)
def test_a_value_outside_its_range_is_refused_naming_the_key(key, value, words):
    from ccbench.running.protocol import check_value

    message = check_value(key, value)
    assert message is not None and message.startswith(key + " ") and words in message


def test_a_cell_asking_more_pairs_than_the_data_set_has_is_refused():
    from ccbench.running.protocol import check_cell

    def cell(**constraints):  # iris: 150 samples, 150 * 149 / 2 = 11,175 distinct pairs
        return {"dataset": {"name": "iris"}, "method": {"name": "kmeans"}, "noise": {"name": "none"},
                "constraints": {"name": "random_pairs", **constraints}, "n_trials": 2, "seed": 0}

    assert check_cell(cell(n_constraints=11_175)) == []
    assert check_cell(cell(n_constraints=11_176)) == [
        "constraints.n_constraints=11176 is not possible with 150 samples (at most 11175 distinct pairs)"]
    both = check_cell(cell(n_constraints=10, per_point=0.5))
    assert len(both) == 1 and "are both set" in both[0]
    assert check_cell({**cell(n_constraints=11_176), "dataset": {"name": "iris", "missing": "mean"}}) == []
    assert check_cell({**cell(n_constraints=10), "n_trials": 0, "seed": 0.5}) == [
        "n_trials must be a positive int, got 0", "seed must be an int, got 0.5"]
    # the groups' values are checked under their dotted keys
    bad = check_cell({**cell(n_constraints=10), "noise": {"name": "none", "rate": 1.5}, "method": {"name": "nope"}})
    assert [p.split(";")[0] for p in bad] == ["method.name unknown method 'nope'",
                                              "noise.rate must be a number in [0, 1], got 1.5"]


def test_a_name_whose_plugin_fails_to_import_is_a_refused_value_not_a_crash():
    # a registered entry point whose module raises ImportError (a missing optional dependency) must come
    # back as the check's message, so the precheck lists it with the other problems
    from ccbench.running import protocol

    def lookup(name):
        raise ImportError(f"plugin of {name!r} needs the package 'nothere'")

    assert protocol._registered(lookup)("m") == "plugin of 'm' needs the package 'nothere'"


def test_a_tuned_trial_is_charged_one_fit_per_fold_and_free_combination_plus_the_refit():
    # the time budget of a tuned trial (protocol.tuning_fits) counts the tuner's fits; a hand count
    import dataclasses

    from ccbench import registry
    from ccbench.running.protocol import tuning_fits

    spec = dataclasses.replace(registry.get_method_spec("pck_means"), grid={"a": (1, 2, 3), "b": (0.1, 1.0)})
    assert tuning_fits(spec, {}, "none", 3) == 1
    assert tuning_fits(spec, {}, "cvcp", 3) == 1 + 3 * 6
    assert tuning_fits(spec, {"a": 2}, "cvcp", 4) == 1 + 4 * 2
    assert tuning_fits(spec, {"a": 2, "b": 1.0}, "cvcp", 4) == 1  # nothing left to tune: the one fit


def test_a_report_redraws_a_bundled_set_but_not_an_unknown_or_malformed_one():
    from ccbench.running.protocol import report_redraw_refusal

    assert report_redraw_refusal({"name": "iris", "preprocess": "standardize"}) is None  # scikit-learn's copy
    assert report_redraw_refusal({"name": "nope"}) == "data set 'nope' is not registered here"
    assert report_redraw_refusal("iris") == "data set None is not registered here"  # not a dataset group
    # a UCI set is read from the data directory when its files are there, never downloaded
    uci = report_redraw_refusal({"name": "balance"})
    assert uci is None or uci.startswith("UCI set 'balance' is not on this machine")
    assert report_redraw_refusal({"name": "scap_2d_clusters", "n_samples": 100}) is None  # bounded, generated
    assert "above the 5000 a report re-draws" in report_redraw_refusal({"name": "scap_2d_clusters", "n_samples": 10**9})
    assert report_redraw_refusal({"name": "csv"}).startswith("data set 'csv' (file) is not a local, bundled")


def test_size_refusal_by_hand_memory_in_gib_and_time_for_every_fit():
    # 8 n^2 bytes at n = 2^14 is 2 GiB; (n / 1000)^2 s is 268 s a fit, 537 s for the 2 fits of a tuned trial;
    # refused over TIME_REFUSAL_FACTOR (3) x the budget only (issue 50): a 150 s budget refuses above 450 s
    import dataclasses

    from ccbench import registry
    from ccbench.running.protocol import size_refusal
    from ccbench.specs import MemoryModel, TimeModel

    spec = dataclasses.replace(registry.get_method_spec("pck_means"),
                               memory=MemoryModel(dense=1.0, alternative="subsample"),
                               time=TimeModel(n=1000, seconds=1.0, exponent=2.0))
    n = 2**14
    assert size_refusal(spec, {}, n, 4, available=2**30) == (
        "MemoryModel: method 'pck_means' needs about 2.0 GiB for n=16384, d=4 but 1.0 GiB is available; subsample")
    assert size_refusal(spec, {}, n, 4, available=2**32, time_budget=150) is None
    assert size_refusal(spec, {}, n, 4, available=2**32) is None  # no time budget: no time limit
    slow = size_refusal(spec, {}, n, 4, available=2**32, time_budget=150, fits=2)
    assert slow.startswith("TimeModel: method 'pck_means' is predicted to take about 537 s for n=16384, 0 pairs (2 fits")
    assert "subsample to n <= 15,000" in slow  # (n / 1000)^2 * 2 = 450


def test_a_report_redraws_a_uci_set_exactly_when_its_files_are_in_the_data_directory(tmp_path, monkeypatch):
    # an empty stand-in data directory, then one holding every file the manifest lists for balance
    from ccbench.data._files import read_manifest
    from ccbench.running.protocol import report_redraw_refusal

    monkeypatch.setenv("CCBENCH_DATA_DIR", str(tmp_path))
    entries = read_manifest()["balance"]
    assert report_redraw_refusal({"name": "balance"}).startswith("UCI set 'balance' is not on this machine (")
    for e in entries:
        (tmp_path / e.name).mkdir(exist_ok=True)
        (tmp_path / e.name / e.file).write_text("")
    assert report_redraw_refusal({"name": "balance"}) is None


@pytest.mark.parametrize("value", [{"method": "scssap"}, "use from_method=scssap", 2.5])
def test_an_n_clusters_that_is_no_form_of_k_is_refused_naming_the_forms(value):
    # a mapping without from_method, or a string that only contains it, is neither form of from_method
    from ccbench import registry
    from ccbench.running.protocol import resolve_n_clusters

    with pytest.raises(ValueError, match="is not understood; use true_k, an int, from_method=<name> or"):
        resolve_n_clusters(value, spec=registry.get_method_spec("kmeans"), n_classes=3, X=None, constraints=None,
                           random_state=0)
