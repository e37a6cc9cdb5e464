"""``ccbench check-plugin NAME`` (issue 30, item 3): pass on a built-in, fail on a broken toy."""

from __future__ import annotations

import pytest

from ccbench.running import cli
from ccbench.running.check_plugin import HOSTILE_CASES, builtin_methods, is_builtin

BROKEN = """
import numpy as np
from ccbench import ConstrainedClusterer, MethodSpec, hookimpl

class Broken(ConstrainedClusterer):
    '''Skips validation and returns float labels: what the checks exist to catch.'''

    def __init__(self, n_clusters=2):
        self.n_clusters = n_clusters

    def fit(self, X, y=None, *, constraints=None):
        self.labels_ = np.zeros(len(X))  # float, not int
        return self

@hookimpl
def ccbench_methods():
    return [MethodSpec("broken_toy", Broken, "a deliberately broken method", needs_n_clusters=True,
                       supervision=("must_link",), constraint_kind="hard")]
"""


def _lines(out: str, status: str, group: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(f"{status.upper():5} {group}")]


def test_check_plugin_passes_a_builtin_method(capsys):
    assert cli.main(["check-plugin", "kmeans", "--only", "hostile,config"]) == 0
    out = capsys.readouterr().out
    passed = _lines(out, "pass", "hostile")
    assert len(passed) == len(HOSTILE_CASES) + 3, out  # + warns, feature names, same seed
    # kmeans' grid (CVCP's k among k-1, k, k+1) is checked too
    assert _lines(out, "pass", "config") == ["PASS  config    method/kmeans.yaml", "PASS  config    grid"]
    assert not _lines(out, "fail", "hostile")
    assert out.strip().splitlines()[-1].startswith("kmeans: 22 passed, 0 failed")


@pytest.mark.slow
def test_check_plugin_runs_sklearn_checks_on_a_builtin_method(capsys):
    assert cli.main(["check-plugin", "kmeans", "--only", "estimator"]) == 0
    out = capsys.readouterr().out
    assert len(_lines(out, "pass", "estimator")) > 30 and not _lines(out, "fail", "estimator")


def test_check_plugin_fails_a_broken_toy_with_one_line_per_failed_check(throwaway_plugin, capsys):
    module = throwaway_plugin(BROKEN)
    assert not is_builtin(module.ccbench_methods()[0])
    assert cli.main(["check-plugin", "broken_toy"]) == 1
    captured = capsys.readouterr()
    out = captured.out
    # float labels: every hostile case that fits says so
    assert "FAIL  hostile   no_constraints: AssertionError: labels_ dtype float64 is not an integer type" in out
    # no validation: scikit-learn's checks catch it
    failed_sklearn = {line.split()[2].rstrip(":") for line in _lines(out, "fail", "estimator")}
    assert {"check_fit2d_1sample", "check_estimators_nan_inf"} & failed_sklearn, out
    # no method/broken_toy.yaml anywhere
    config = _lines(out, "fail", "config")
    assert len(config) == 1 and "no method/broken_toy.yaml found" in config[0]
    assert "broken_toy FAILED" in captured.err


def test_check_plugin_names_an_unknown_method_and_group(capsys):
    assert cli.main(["check-plugin", "no_such_method"]) == 2
    assert "unknown method 'no_such_method'" in capsys.readouterr().err
    assert cli.main(["check-plugin", "kmeans", "--only", "hostlie"]) == 2
    assert "unknown check group(s) ['hostlie']" in capsys.readouterr().err


def test_builtin_methods_are_ccbench_s_own(throwaway_plugin):
    names = {s.name for s in builtin_methods(load=False)}
    assert {"kmeans", "scssap", "nnc", "rn_sdp", "srcp"} <= names
    throwaway_plugin(BROKEN)
    assert "broken_toy" not in {s.name for s in builtin_methods(load=False)}


GOOD = """
import numpy as np
from sklearn.cluster import KMeans
from ccbench import ConstrainedClusterer, MethodSpec, hookimpl

class Good(ConstrainedClusterer):
    def __init__(self, n_clusters=2, *, n_init=10, random_state=None):
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.random_state = random_state

    def fit(self, X, y=None, *, constraints=None):
        X, cons = self._validate_fit(X, constraints)
        self.labels_ = KMeans(self.n_clusters, n_init=self.n_init, random_state=self.random_state).fit(X).labels_
        return self

@hookimpl
def ccbench_methods():
    return [MethodSpec("good_toy", Good, "k-means", needs_n_clusters=True)]
"""


@pytest.mark.parametrize("yaml, expected", [
    ("name: good_toy\nn_clusters: true_k\n", None),
    ("name: good_toy\nn_clusters: true_k\nn_init: 10\n", "repeats the default(s) ['n_init']"),
    ("name: good_toy\nn_clusters: true_k\nn_inits: 3\n", "['n_inits'] are not parameters of Good"),
    ("name: good_toy\nn_init: 3\n", "lacks n_clusters"),
])
def test_config_check_of_a_plugin_yaml(throwaway_plugin, tmp_path, capsys, yaml, expected):
    throwaway_plugin(GOOD)
    conf = tmp_path / "conf" / "method"
    conf.mkdir(parents=True)
    (conf / "good_toy.yaml").write_text(yaml)
    status = cli.main(["check-plugin", "good_toy", "--only", "config", "--searchpath", f"file://{conf.parent}"])
    out = capsys.readouterr().out
    if expected is None:
        assert status == 0 and "PASS  config    method/good_toy.yaml" in out, out
    else:
        assert status == 1 and expected in out, out
