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
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ccbench
from ccbench import Constraints
from ccbench.base import ConvergenceWarning, InconsistentConstraintsWarning, InfeasibleConstraintsError

N = 12


def _blobs(n=N, d=2, scale=1.0, dtype=np.float64):
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 0.3, (n // 2, d)), rng.normal(4, 0.3, (n - n // 2, d))] * scale
    return X.astype(dtype)


def _y(n=N):
    return np.r_[np.zeros(n // 2, int), np.ones(n - n // 2, int)]


def _cons(ml=(), cl=(), n=N, labels=None):
    return Constraints(np.array(ml, dtype=int).reshape(-1, 2), np.array(cl, dtype=int).reshape(-1, 2),
                       n_samples=n, labels=labels)


def _labels(n=N, per_class=2):
    lab = np.full(n, -1)
    lab[:per_class] = 0
    lab[n // 2:n // 2 + per_class] = 1
    return lab


# name -> (X, constraints or None, n_clusters)
CASES = {
    "no_constraints": lambda: (_blobs(), None, 2),
    "only_must_links": lambda: (_blobs(), _cons(ml=[(0, 1), (6, 7)]), 2),
    "only_cannot_links": lambda: (_blobs(), _cons(cl=[(0, 6), (1, 7)]), 2),
    "labels": lambda: (_blobs(), Constraints.from_labels(_labels()), 2),
    "contradictory": lambda: (_blobs(), _cons(ml=[(0, 1), (1, 2)], cl=[(0, 2)]), 2),
    "duplicated_and_reversed_pairs": lambda: (_blobs(), _cons(ml=[(0, 1), (1, 0), (0, 1)], cl=[(7, 0), (0, 7)]), 2),
    "one_chunklet": lambda: (_blobs(), _cons(ml=[(i, i + 1) for i in range(N - 1)]), 2),
    "n_clusters_1": lambda: (_blobs(), _cons(ml=[(0, 1)]), 1),
    "n_clusters_n": lambda: (_blobs(), _cons(cl=[(0, 1)]), N),
    "duplicate_points": lambda: (np.repeat(_blobs(6), 2, axis=0), _cons(ml=[(0, 2)], cl=[(0, 11)]), 2),
    "constant_feature": lambda: (np.c_[_blobs(), np.ones(N)], _cons(ml=[(0, 1)]), 2),
    "all_points_identical": lambda: (np.ones((N, 2)), None, 2),
    "two_points": lambda: (np.array([[0.0, 0.0], [1.0, 1.0]]), _cons(cl=[(0, 1)], n=2), 2),
    "one_feature": lambda: (_blobs(d=1), _cons(ml=[(0, 1)], cl=[(0, 7)]), 2),
    "scale_1e-8": lambda: (_blobs(scale=1e-8), _cons(ml=[(0, 1)], cl=[(0, 7)]), 2),
    "scale_1e8": lambda: (_blobs(scale=1e8), _cons(ml=[(0, 1)], cl=[(0, 7)]), 2),
    "float32": lambda: (_blobs(dtype=np.float32), _cons(ml=[(0, 1)], cl=[(0, 7)]), 2),
}

METHODS = [s.name for s in ccbench.list_methods(load=False)]


def _make(spec, k):
    params = {"random_state": 0} if "random_state" in spec.estimator().get_params() else {}
    if spec.needs_n_clusters:
        params["n_clusters"] = k
    return ccbench.make_method(spec.name, **params)


def _check_outcome(spec, X, cons, est):
    labels = np.asarray(est.labels_)
    assert labels.shape == (len(X),), f"labels_ has shape {labels.shape}"
    assert np.issubdtype(labels.dtype, np.integer), f"labels_ dtype {labels.dtype}"
    if cons is None or not cons.is_consistent() or spec.constraint_kind != "hard" or (labels < 0).any():
        return
    split, joined = cons.violations(labels)
    if "must_link" in spec.supervision:
        assert split == 0, f"hard method split {split} must-link(s)"
    if "cannot_link" in spec.supervision:
        assert joined == 0, f"hard method joined {joined} cannot-link(s)"


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("method", METHODS)
def test_hostile_input_gives_a_clustering_or_a_documented_error(method, case):
    spec = ccbench.registry.get_method_spec(method)
    X, cons, k = CASES[case]()
    if cons is not None and cons.labels is not None and "labels" not in spec.supervision and not (
        cons.n_must_link or cons.n_cannot_link
    ):
        cons = cons  # a labels-only supervision is still valid input for a pair method: it sees no pairs
    est = _make(spec, k)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # an unhandled numpy warning fails the case
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        try:
            est.fit(X, constraints=cons)
        except (ValueError, TypeError) as exc:
            assert str(exc).strip(), "an error must say what is wrong"
            return
    _check_outcome(spec, X, cons, est)


@pytest.mark.parametrize("method", METHODS)
def test_dataframe_input_records_feature_names(method):
    spec = ccbench.registry.get_method_spec(method)
    X = pd.DataFrame(_blobs(), columns=["a", "b"])
    est = _make(spec, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, constraints=_cons(ml=[(0, 1)], cl=[(0, 7)]))
    assert list(est.feature_names_in_) == ["a", "b"]
    assert est.labels_.shape == (N,)


@pytest.mark.parametrize("method", METHODS)
def test_same_seed_gives_identical_labels(method):
    spec = ccbench.registry.get_method_spec(method)
    X, cons, k = CASES["only_cannot_links"]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = _make(spec, k).fit(X, constraints=cons).labels_
        b = _make(spec, k).fit(X, constraints=cons).labels_
    np.testing.assert_array_equal(a, b)


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_same_cell_gives_bit_identical_rows(method, tmp_path):
    from ccbench.harness import run_job

    spec = ccbench.registry.get_method_spec(method)
    cell = {"dataset": {"name": "iris"}, "method": {"name": method},
            "constraints": {"name": "labeled_subsets" if "labels" in spec.supervision else "random_pairs",
                            **({"per_class": 3} if "labels" in spec.supervision else {"n_constraints": 30})},
            "noise": {"name": "none"}, "n_trials": 1}
    if spec.needs_n_clusters:
        cell["method"]["n_clusters"] = "true_k"
    a = run_job(cell, out_dir=tmp_path / "a").drop(columns=["fit_time", "timestamp"], errors="ignore")
    b = run_job(cell, out_dir=tmp_path / "b").drop(columns=["fit_time", "timestamp"], errors="ignore")
    pd.testing.assert_frame_equal(a, b)


def _documented_contradiction_policy() -> dict:
    text = (Path(__file__).resolve().parent.parent / "docs" / "harness.md").read_text()
    return dict(re.findall(r"^\| `(\w+)` \| (fits|infeasible) \|$", text, flags=re.M))


def test_contradictory_constraints_behave_as_docs_harness_says():
    documented = _documented_contradiction_policy()
    assert sorted(documented) == sorted(METHODS), "docs/harness.md lists every registered method once"
    X, cons, k = CASES["contradictory"]()
    for method in METHODS:
        est = _make(ccbench.registry.get_method_spec(method), k)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                est.fit(X, constraints=cons)
                outcome = "fits"
            except InfeasibleConstraintsError:
                outcome = "infeasible"
        assert any(issubclass(w.category, InconsistentConstraintsWarning) for w in caught), method
        assert outcome == documented[method], method
