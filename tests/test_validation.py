"""Bad input gets a clear error at the estimator boundary (every registered method)."""

import numpy as np
import pytest

from ccbench import Constraints, make_method
from ccbench.running.check_plugin import builtin_methods


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
    proc = subprocess.run([sys.executable, "-m", "ccbench.running.cli", "report", str(tmp_path / "sweep"),
                           "--utility", "kmeans", "--metric", "ari", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Constraint-set utility on ari against kmeans" in proc.stdout


def test_quoted_sweep_values_are_accepted_by_the_precheck():
    from ccbench.running.cli import precheck

    assert precheck(["method.name='kmeans','cop_kmeans'", "dataset=iris"]) == []
    assert precheck(["method='kmeans','cop_kmeans'", 'dataset="iris"']) == []
    assert "unknown method 'nope'" in " ".join(precheck(["method.name='kmeans','nope'"]))
