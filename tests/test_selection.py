"""Constraint-only model selection (``tune=cvcp``, :mod:`ccbench_plugins.selection.cvcp`).

CVCP (Pourrajabi et al., EDBT 2014) chooses among a method's ``MethodSpec.grid`` by
cross-validation over the supervision: folds, held-out F-measure, ties, fall-backs, and
the harness path, which never gives the true labels to the selection.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import json
import types

import numpy as np
import pandas as pd
import pytest
from ccbench_plugins.selection import cvcp

from ccbench import Constraints, registry
from ccbench.constraints import labeled_subsets, random_pairs
from ccbench.datasets import load_dataset
from ccbench.hookspecs import hookimpl
from ccbench.reporting._format import method_labels
from ccbench.reporting.origins import method_versions, stale_rows
from ccbench.running.check_plugin import grid_problems
from ccbench.running.config import cell_hash, to_cell
from ccbench.running.harness import fit_and_score, run_job
from ccbench.running.protocol import check_value
from ccbench.specs import MAX_GRID_SIZE, MethodSpec, TunerSpec

# -- a hand-made problem: 1-D points, clustered by a threshold ------------------------------------

class Threshold:
    """Cluster 1-D points by ``x > threshold`` (the hyper-parameter CVCP must choose)."""

    def __init__(self, threshold=5.0):
        self.threshold = threshold
        self.fit_calls = []

    def fit(self, X, y=None, *, constraints=None):
        self.fit_calls.append((y, constraints))
        self.labels_ = (np.asarray(X)[:, 0] > self.threshold).astype(int)
        return self


def _two_groups(n_pairs=40, seed=0):
    """Points 0..19 at x = 0..9.5 and 20..39 at x = 20..29.5; pairs must-link iff same group."""
    X = np.r_[np.arange(20) / 2.0, 20 + np.arange(20) / 2.0][:, None]
    group = (np.arange(40) >= 20).astype(int)
    return X, group, random_pairs(group, n_pairs, rng=np.random.default_rng(seed))


def test_cvcp_picks_the_value_that_satisfies_held_out_constraints():
    X, _, cons = _two_groups()
    # 15 separates the groups; 5 and 25 cut through one. The default (5) must not win by the tie rule.
    sel = cvcp.select(lambda **p: Threshold(**p), X, cons, {"threshold": (5.0, 15.0, 25.0)},
                      default={"threshold": 5.0}, n_folds=3, random_state=0)
    assert sel.params == {"threshold": 15.0}
    scores = dict((c["threshold"], s) for c, s in sel.scores)
    assert scores[15.0] == pytest.approx(1.0) and scores[5.0] < 0.9 and scores[25.0] < 0.9
    assert sel.n_fits == 9 and sel.n_folds == 3 and sel.n_failed == 0


def test_ties_go_to_the_default_then_to_the_first_in_grid_order():
    X, _, cons = _two_groups()
    grid = {"threshold": (12.0, 15.0, 18.0)}  # every one separates the groups: a three-way tie
    make = lambda **p: Threshold(**p)  # noqa: E731
    assert cvcp.select(make, X, cons, grid, default={"threshold": 15.0}).params == {"threshold": 15.0}
    assert cvcp.select(make, X, cons, grid, default={"threshold": 99.0}).params == {"threshold": 12.0}


def test_constraint_f_measure_known_answer():
    labels = np.array([0, 0, 1, 1, 0])
    # must-links: (0,1) kept, (1,2) split; cannot-links: (0,2) kept, (0,4) joined, (2,4) kept
    held = Constraints([[0, 1], [1, 2]], [[0, 2], [0, 4], [2, 4]], n_samples=5)
    # ML positive: TP 1, FN 1, FP 1 -> 2/4; CL positive: TP 2, FN 1, FP 1 -> 4/6
    assert cvcp.constraint_f_measure(labels, held) == pytest.approx((0.5 + 4 / 6) / 2)
    # one kind only: its F alone
    assert cvcp.constraint_f_measure(labels, Constraints([[0, 1], [1, 2]], n_samples=5)) == pytest.approx(2 / 3)
    assert np.isnan(cvcp.constraint_f_measure(labels, Constraints(n_samples=5)))


# -- folds ---------------------------------------------------------------------------------------

def _keys(pairs, n):
    return set((pairs[:, 0] * n + pairs[:, 1]).tolist())


@pytest.mark.parametrize("n_folds", [2, 3, 5])
def test_pair_folds_are_disjoint_covering_and_keep_the_proportions(n_folds):
    y = np.repeat(np.arange(3), 30)
    cons = random_pairs(y, 61, rng=np.random.default_rng(1))
    n = cons.n_samples
    splits = cvcp.split(cons, n_folds, np.random.default_rng(2))
    assert len(splits) == n_folds
    all_ml, all_cl = _keys(cons.must_link, n), _keys(cons.cannot_link, n)
    held_ml = [_keys(te.must_link, n) for _, te in splits]
    held_cl = [_keys(te.cannot_link, n) for _, te in splits]
    for a, b in itertools.combinations(range(n_folds), 2):  # disjoint
        assert not held_ml[a] & held_ml[b] and not held_cl[a] & held_cl[b]
    assert set().union(*held_ml) == all_ml and set().union(*held_cl) == all_cl  # covering
    for (train, _), hm, hc in zip(splits, held_ml, held_cl):  # train = the rest
        assert _keys(train.must_link, n) == all_ml - hm and _keys(train.cannot_link, n) == all_cl - hc
    # proportions: each fold's must-link (cannot-link) count within one of its share
    for counts, total in (([len(h) for h in held_ml], len(all_ml)), ([len(h) for h in held_cl], len(all_cl))):
        assert max(counts) - min(counts) <= 1 and sum(counts) == total


def test_label_folds_hold_out_points_and_every_pair_touching_them():
    y = np.repeat(np.arange(3), 20)
    cons = labeled_subsets(y, 4, rng=np.random.default_rng(3))
    n = cons.n_samples
    splits = cvcp.split(cons, 3, np.random.default_rng(4))
    labeled = np.flatnonzero(cons.labels >= 0)
    held_points = [np.flatnonzero((cons.labels >= 0) & (train.labels < 0)) for train, _ in splits]
    assert sorted(np.concatenate(held_points).tolist()) == labeled.tolist()  # a partition of the labeled points
    for pts in held_points:  # stratified by the given label: every class in every fold, counts within one
        counts = np.bincount(cons.labels[pts], minlength=3)
        assert counts.min() >= 1 and counts.max() - counts.min() <= 1
    for (train, held), pts in zip(splits, held_points):
        touches = lambda pairs: np.isin(pairs, pts).any(axis=1)  # noqa: E731
        assert _keys(held.must_link, n) == _keys(cons.must_link[touches(cons.must_link)], n)
        assert _keys(held.cannot_link, n) == _keys(cons.cannot_link[touches(cons.cannot_link)], n)
        assert not np.isin(train.must_link, pts).any() and not np.isin(train.cannot_link, pts).any()
        assert (train.labels[pts] == -1).all()


def test_label_folds_leave_unlabeled_points_out():
    labels = np.array([-1, 0, 0, -1, 1, 1, -1])
    folds = cvcp.label_folds(labels, 2, np.random.default_rng(0))
    assert (folds[labels < 0] == -1).all() and sorted(folds[labels >= 0].tolist()) == [0, 0, 1, 1]


def test_pairs_with_an_empty_label_vector_take_the_pair_route():
    y = np.repeat(np.arange(2), 20)
    pairs = random_pairs(y, 12, rng=np.random.default_rng(5))
    cons = Constraints(pairs.must_link, pairs.cannot_link, n_samples=40, labels=np.full(40, -1))
    splits = cvcp.split(cons, 3, np.random.default_rng(0))
    assert [len(held) for _, held in splits] == [4, 4, 4]  # the 12 pairs dealt out, not 0 labeled points
    X, _, _ = _two_groups()
    sel = cvcp.select(lambda **p: Threshold(**p), X, cons, {"threshold": (5.0, 15.0)}, default={"threshold": 5.0})
    assert sel.n_folds == 3 and sel.n_fits == 6


def test_too_few_constraints_fall_back_and_say_so():
    X, _, _ = _two_groups()
    grid = {"threshold": (5.0, 15.0)}
    one = Constraints([[0, 1]], n_samples=40)
    sel = cvcp.select(lambda **p: Threshold(**p), X, one, grid, default={"threshold": 5.0}, n_folds=3)
    assert sel.params == {"threshold": 5.0} and sel.n_fits == 0 and sel.n_folds == 0 and "at least 2" in sel.note
    assert sel.n_failed == 0  # nothing fitted, so nothing failed (the row's tune_failed column)
    with pytest.raises(TypeError):  # keyword-only: a default dict passed in the grid's place is refused
        cvcp.select(lambda **p: Threshold(**p), X, one, grid, {"threshold": 5.0})
    two = Constraints([[0, 12]], [[0, 30]], n_samples=40)  # x = 0 and 6 together, 0 and 25 apart
    sel = cvcp.select(lambda **p: Threshold(**p), X, two, grid, default={"threshold": 5.0}, n_folds=3)
    assert sel.n_folds == 2 and "2 folds, not 3" in sel.note and sel.params == {"threshold": 15.0}


def test_a_fold_without_held_out_pairs_is_left_out_and_said():
    X, _, _ = _two_groups()
    labels = np.full(40, -1)
    labels[[0, 12, 30]] = [0, 0, 1]
    make, grid = (lambda **p: Threshold(**p)), {"threshold": (5.0, 15.0)}
    # labels but no pair at all: nothing to hold out
    bare = Constraints(n_samples=40, labels=labels)
    sel = cvcp.select(make, X, bare, grid, default={"threshold": 5.0}, n_folds=3, random_state=0)
    assert sel.params == {"threshold": 5.0} and sel.n_fits == 0 and "no fold holds out" in sel.note
    # one must-link (0, 12) only: the fold of point 30 holds out nothing and is left out, said so
    one = Constraints([[0, 12]], n_samples=40, labels=labels)
    sel = cvcp.select(make, X, one, grid, default={"threshold": 5.0}, n_folds=3, random_state=0)
    assert sel.n_folds == 2 and "1 fold(s) held out no constraint" in sel.note
    assert sel.params == {"threshold": 15.0}  # 5.0 splits x = 0 from x = 6


def test_a_candidate_that_fails_loses_and_is_counted():
    X, _, cons = _two_groups()

    def make(threshold):
        if threshold == 15.0:
            raise ValueError("no such threshold")
        return Threshold(threshold)

    sel = cvcp.select(make, X, cons, {"threshold": (5.0, 15.0, 25.0)}, default={"threshold": 5.0})
    assert sel.params != {"threshold": 15.0} and sel.n_failed == 3 and "no such threshold" in sel.note


# -- the grids the methods declare -----------------------------------------------------------------

def test_every_grid_is_small_holds_the_default_and_is_accepted():
    tuned = 0
    for spec in registry.list_methods():
        if not spec.grid:
            continue
        tuned += 1
        assert len(spec.grid_combinations()) <= MAX_GRID_SIZE
        assert all(2 <= len(values) <= 4 for values in spec.grid.values()), spec.name
        assert grid_problems(spec) == []  # real parameters, defaults included, every combination builds
    assert tuned >= 10


def test_grid_check_finds_a_missing_default_and_an_unknown_parameter():
    spec = registry.get_method_spec("pck_means")
    bad = dataclasses.replace(spec, grid={"penalty": (0.1, 10.0), "penalti": (1, 2)})
    problems = grid_problems(bad)
    assert any("lacks the default 1.0" in p for p in problems) and any("'penalti'" in p for p in problems)


def test_method_spec_refuses_a_bad_grid():
    with pytest.raises(ValueError, match="MAX_GRID_SIZE"):
        MethodSpec("x", "a:B", "s", grid={"a": (1, 2, 3, 4), "b": (1, 2, 3)})
    with pytest.raises(ValueError, match="at least two"):
        MethodSpec("x", "a:B", "s", grid={"a": (1,)})


def test_tune_options_are_checked():
    assert check_value("tune", "cvcp") is None and check_value("tune", "none") is None
    assert "registered tuner" in check_value("tune", "cvpc")
    assert "int >= 2" in check_value("tune_folds", 1)


# -- the harness path: the true labels never reach the selection ----------------------------------

SPY_CALLS = []


def _spy_select(make_estimator, X, constraints, grid, *, default, n_folds, random_state):
    make_estimator(**default)
    SPY_CALLS.append({"args": (X, constraints, grid, default)})
    return cvcp.Selection(params=dict(default))


@pytest.fixture
def spy_tuner():
    plugin = types.SimpleNamespace(ccbench_tuners=hookimpl(lambda: [TunerSpec("spy", _spy_select)]))
    registry.register_plugin(plugin, name="test_selection_spy")
    SPY_CALLS.clear()
    yield
    registry.unregister_plugin("test_selection_spy")


def test_the_selection_never_gets_the_true_labels(spy_tuner):
    ds = load_dataset("iris")
    cons = random_pairs(ds.y, 40, rng=np.random.default_rng(5))
    out = fit_and_score([], "pck_means", {}, 7, 3, ds.X, ds.y, cons, ["ari"], "warn", "all", "spy", 3)
    assert json.loads(out["tuned_params"]) == {"penalty": 1.0, "n_clusters": "k"}
    (call,) = SPY_CALLS
    assert call["args"][1] is cons  # the trial's supervision as drawn, nothing added
    for arg in call["args"]:  # no argument is the label vector, nor holds it
        values = arg.values() if isinstance(arg, dict) else [arg]
        assert not any(isinstance(v, np.ndarray) and v.shape == ds.y.shape for v in values)
    assert "y" not in inspect.signature(cvcp.select).parameters


def test_the_chosen_params_do_not_depend_on_the_true_labels():
    ds = load_dataset("iris")
    cons = random_pairs(ds.y, 60, rng=np.random.default_rng(6))

    def run(y):
        return fit_and_score([], "pck_means", {}, 3, 3, ds.X, y, cons, ["ari", "constraint_violations"], "warn", "all",
                             "cvcp", 3)

    a, b = run(ds.y), run(np.random.default_rng(0).permutation(ds.y))
    assert a["tuned_params"] == b["tuned_params"] and a["tune_score"] == b["tune_score"]
    assert a["constraint_violations"] == b["constraint_violations"] and a["ari"] != b["ari"]
    assert a["tune_fits"] == 27 and json.loads(a["tuned_params"])["penalty"] in (0.1, 1.0, 10.0)


def test_a_method_without_grid_fits_its_defaults_and_says_so():
    ds = load_dataset("iris")
    cons = random_pairs(ds.y, 30, rng=np.random.default_rng(8))
    out = fit_and_score([], "cop_kmeans", {}, 3, 3, ds.X, ds.y, cons, ["ari"], "warn", "all", "cvcp", 3)
    assert json.loads(out["tuned_params"])["n_clusters"] in ("k-1", "k", "k+1") and out["tune_fits"] == 9
    # a k-free run has no k to choose around: nothing to tune, and the note says why
    out = fit_and_score([], "ap", {}, 3, None, ds.X, ds.y, cons, ["ari"], "warn", "all", "cvcp", 3)
    assert out["tuned_params"] == "{}" and out["tune_fits"] == 0 and "k-free" in out["tune_note"]


def test_cvcp_chooses_k_from_the_constraints_and_the_refit_uses_the_chosen_k():
    """The k grid (issue 38, item 5): on three well-separated blobs given a wrong k (2), CVCP picks k+1
    from the held-out constraints alone, and the refit -- not only the candidates -- has that many
    clusters; given the right k it keeps it."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=150, centers=[[0, 0], [8, 0], [0, 8]], cluster_std=0.5, random_state=0)
    cons = random_pairs(y, 60, rng=np.random.default_rng(0))
    wrong = fit_and_score([], "kmeans", {}, 3, 2, X, y, cons, ["ari", "n_clusters_found"], "warn", "all", "cvcp", 3)
    assert json.loads(wrong["tuned_params"]) == {"n_clusters": "k+1"}
    assert wrong["n_clusters_found"] == 3 and wrong["ari"] == pytest.approx(1.0)
    right = fit_and_score([], "kmeans", {}, 3, 3, X, y, cons, ["ari", "n_clusters_found"], "warn", "all", "cvcp", 3)
    assert json.loads(right["tuned_params"]) == {"n_clusters": "k"} and right["n_clusters_found"] == 3


def test_a_relative_k_grid_is_checked_and_resolved():
    from ccbench.specs import K_AROUND, resolve_relative_k

    assert [resolve_relative_k(v, 5) for v in K_AROUND] == [4, 5, 6]
    assert resolve_relative_k("k+12", 3) == 15
    with pytest.raises(ValueError, match="relative"):
        MethodSpec("x", "a:B", "s", grid={"n_clusters": (2, 3)})
    with pytest.raises(ValueError, match="not a relative k"):
        resolve_relative_k("2k", 3)
    spec = registry.get_method_spec("kmeans")
    assert grid_problems(dataclasses.replace(spec, grid={"n_clusters": ("k-1", "k+1")})) != []


def test_a_grid_parameter_the_config_sets_is_not_tuned():
    ds = load_dataset("iris")
    cons = random_pairs(ds.y, 30, rng=np.random.default_rng(8))
    out = fit_and_score([], "pck_means", {"penalty": 2.0}, 3, 3, ds.X, ds.y, cons, ["ari"], "warn", "all", "cvcp", 3)
    assert set(json.loads(out["tuned_params"])) == {"n_clusters"} and "not tuned: penalty" in out["tune_note"]
    assert out["tune_fits"] == 9


def test_label_supervision_path_end_to_end():
    ds = load_dataset("iris")
    cons = labeled_subsets(ds.y, 3, rng=np.random.default_rng(9))
    out = fit_and_score([], "pck_means", {}, 3, 3, ds.X, ds.y, cons, ["ari"], "warn", "all", "cvcp", 3)
    assert json.loads(out["tuned_params"])["penalty"] in (0.1, 1.0, 10.0)
    assert out["tune_fits"] == 27 and np.isfinite(out["tune_score"])


def test_harness_with_tune_cvcp_records_the_choice(tmp_path):
    cell = {"dataset": {"name": "iris"}, "method": {"name": "pck_means", "n_clusters": "true_k"},
            "constraints": {"name": "random_pairs", "n_constraints": 60}, "noise": {"name": "none"},
            "n_trials": 2, "metrics": ["ari"]}
    tuned = run_job({**cell, "tune": "cvcp"}, out_dir=tmp_path / "tuned")
    plain = run_job(cell, out_dir=tmp_path / "plain")
    assert (tuned["status"] == "ok").all(), tuned["error"].tolist()
    assert (tuned["tune"] == "cvcp").all() and (tuned["tune_fits"] == 27).all()
    for text in tuned["tuned_params"]:
        assert set(json.loads(text)) == {"penalty", "n_clusters"}
    assert "tuned_params" not in plain or plain["tuned_params"].isna().all()
    # the tuner's code is part of a tuned cell's method hash (a change to it re-runs the cell)
    assert "ccbench_plugins.selection.cvcp" in json.loads(tuned["code.method_files"].iloc[0])
    assert "ccbench_plugins.selection.cvcp" not in json.loads(plain["code.method_files"].iloc[0])
    # a tuned cell is a cell of its own; a cell at tune=none hashes as before the key existed
    assert tuned["config_hash"].iloc[0] != plain["config_hash"].iloc[0]
    legacy = {k: v for k, v in to_cell(cell).items() if k not in ("tune", "tune_folds")}
    assert plain["config_hash"].iloc[0] == cell_hash(legacy)
    both = pd.concat([tuned, plain], ignore_index=True)
    assert set(method_labels(both)) == {"pck_means", "pck_means+cvcp"}
    # the report judges tuned rows against the tuned code: none is stale
    assert not stale_rows(both).any()
    assert set(method_versions(both)["method"]) == {"pck_means", "pck_means+cvcp"}
    assert (method_versions(both)["installed"] == "yes").all()


def test_tuning_fits_charges_the_time_budget_for_every_fold_and_combination():
    from ccbench.running import protocol
    from ccbench.specs import TimeModel

    spec = registry.get_method_spec("srcp")
    free = 1
    for values in spec.grid.values():
        free *= len(values)
    assert protocol.tuning_fits(spec, {}, "none", 3, n_clusters=3) == 1
    assert protocol.tuning_fits(spec, {}, "cvcp", 3, n_clusters=3) == 1 + 3 * free
    fixed = next(iter(spec.grid))  # a grid value the method config sets is not tuned
    assert protocol.tuning_fits(spec, {fixed: spec.grid[fixed][0]}, "cvcp", 2, n_clusters=3) == \
        1 + 2 * free // len(spec.grid[fixed])
    # k = 2: k-1 would be one cluster, so two k candidates are left
    assert protocol.tuning_fits(spec, {}, "cvcp", 3, n_clusters=2) == 1 + 3 * free // 3 * 2
    # a k-free run (no k to be relative to): a method that finds k itself drops the k grid (ap: nothing else to
    # tune); one that needs k searches k alone over the absolute k_free_range (issue 50, item 5: 2..12 at n=150)
    assert protocol.tuning_fits(registry.get_method_spec("ap"), {}, "cvcp", 3) == 1
    assert protocol.tuning_fits(registry.get_method_spec("kmeans"), {}, "cvcp", 3, n_samples=150) == 1 + 3 * 11
    assert protocol.tuning_fits(registry.get_method_spec("kmeans"), {}, "cvcp", 3, n_clusters=3) == 10
    timed = dataclasses.replace(spec, time=TimeModel(n=1000, seconds=1.0, exponent=2.0))
    assert protocol.size_refusal(timed, {}, 1000, 4, time_budget=5.0) is None
    refusal = protocol.size_refusal(timed, {}, 1000, 4, time_budget=5.0, fits=19)  # 19 s over 3 x 5 s
    assert refusal is not None and "19 fits" in refusal and "n <= 888" in refusal  # 19 (n / 1000)^2 = 15


def test_a_method_without_a_grid_is_skipped_under_tune(tmp_path):
    cell = {"dataset": {"name": "iris"}, "method": {"name": "ap"},  # k-free: its k grid has no k to go by
            "constraints": {"name": "random_pairs", "n_constraints": 20}, "noise": {"name": "none"},
            "n_trials": 2, "metrics": ["ari"], "tune": "cvcp"}
    rows = run_job(cell, out_dir=tmp_path)
    assert rows["status"].eq("skipped").all()
    assert rows["error"].str.contains("nothing to tune").all()
