"""Every registered method on hostile inputs: a valid clustering or a documented error.

The cases iterate over the registry, so a family that lands later is covered
without new code. For each (method, case) the outcome must be one of:

- a clustering: ``labels_`` of shape (n,), integer, no NaN; and a method whose
  ``MethodSpec.constraint_kind`` is ``"hard"`` meets every constraint of the kinds
  its ``supervision`` declares whenever the constraints are consistent;
- a documented error: ``ValueError`` (which includes
  :class:`~ccbench.base.InfeasibleConstraintsError`) or ``TypeError`` whose
  message names the problem.

Never an unhandled numpy floating-point warning (``RuntimeWarning`` is an error
here), a crash of another type, or NaN labels.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import ccbench
from ccbench.running.check_plugin import (
    HOSTILE_CASES as CASES,
)
from ccbench.running.check_plugin import (
    builtin_methods,
    check_dataframe_feature_names,
    check_same_seed_same_labels,
    contradiction_outcome,
    run_hostile_case,
)
from ccbench.running.results import MEASURED_COLUMNS

# ccbench's own methods only: an installed third-party plugin is checked by
# `ccbench check-plugin NAME`, not by ccbench's test suite.
METHODS = [s.name for s in builtin_methods(load=False)]


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("method", METHODS)
def test_hostile_input_gives_a_clustering_or_a_documented_error(method, case):
    run_hostile_case(ccbench.registry.get_method_spec(method), case)


@pytest.mark.parametrize("method", METHODS)
def test_dataframe_input_records_feature_names(method):
    check_dataframe_feature_names(ccbench.registry.get_method_spec(method))


@pytest.mark.parametrize("method", METHODS)
def test_same_seed_gives_identical_labels(method):
    check_same_seed_same_labels(ccbench.registry.get_method_spec(method))


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_same_cell_gives_bit_identical_rows(method, tmp_path):
    from ccbench.running.harness import run_job

    spec = ccbench.registry.get_method_spec(method)
    cell = {"dataset": {"name": "iris"}, "method": {"name": method},
            "constraints": {"name": "labeled_subsets" if "labels" in spec.supervision else "random_pairs",
                            **({"per_class": 3} if "labels" in spec.supervision else {"n_constraints": 30})},
            "noise": {"name": "none"}, "n_trials": 1}
    if spec.needs_n_clusters:
        cell["method"]["n_clusters"] = "true_k"
    a = run_job(cell, out_dir=tmp_path / "a").drop(columns=list(MEASURED_COLUMNS), errors="ignore")
    b = run_job(cell, out_dir=tmp_path / "b").drop(columns=list(MEASURED_COLUMNS), errors="ignore")
    pd.testing.assert_frame_equal(a, b)


def _documented_contradiction_policy() -> dict:
    text = (Path(__file__).resolve().parent.parent / "docs" / "harness.md").read_text()
    return dict(re.findall(r"^\| `(\w+)` \| (fits|infeasible) \|$", text, flags=re.M))


def test_contradictory_constraints_behave_as_docs_harness_says():
    documented = _documented_contradiction_policy()
    assert sorted(documented) == sorted(METHODS), "docs/harness.md lists every registered method once"
    for method in METHODS:
        outcome, warned = contradiction_outcome(ccbench.registry.get_method_spec(method))
        assert warned, method
        assert outcome == documented[method], method


def test_builtin_tests_ignore_an_installed_third_party_method(throwaway_plugin):
    """Issue 30, item 3: a plugin's method (here one the docs do not list) leaves the
    tests about ccbench's own methods as they are."""
    throwaway_plugin(
        """
        import numpy as np
        from ccbench import ConstrainedClusterer, MethodSpec, hookimpl

        class Third(ConstrainedClusterer):
            def fit(self, X, y=None, *, constraints=None):
                self.labels_ = np.zeros(len(X), dtype=int)
                return self

        @hookimpl
        def ccbench_methods():
            return [MethodSpec("third_party_method", Third, "a third-party method")]
        """
    )
    assert "third_party_method" in [s.name for s in ccbench.list_methods(load=False)]
    assert "third_party_method" not in [s.name for s in builtin_methods(load=False)]
    assert sorted(_documented_contradiction_policy()) == sorted(s.name for s in builtin_methods(load=False))
