"""The anytime protocol's first slice (issue 53, item 4): one (strategy, method) trial's ARI curve,
its area, COBRAS read from its own history, failures as rows, bad input refused."""

from __future__ import annotations

import numpy as np
import pytest

from ccbench import registry
from ccbench.hookspecs import hookimpl
from ccbench.metrics import adjusted_rand
from ccbench.registry import MethodSpec
from ccbench_plugins.active import anytime
from ccbench_plugins.active.anytime import COLUMNS, anytime_curve, area_under_curve
from ccbench_plugins.active.oracle import Oracle
from ccbench_plugins.cobras import cobras as _cobras  # noqa: F401 - COBRAS's module (k-means): loaded at collection

# the registry's plugins and PCK-means's module: loaded at collection, not charged to the first test
registry.make_method("pck_means", n_clusters=2)


def _strips(n_per=20, seed=0):
    """Two long parallel strips 2 apart (spread 0.1 across, 10 along): k-means with k = 2 cuts both
    across the middle (ARI ~ 0), so only answers can put the strips together."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(2), n_per)
    return np.c_[rng.uniform(0, 10, len(y)), 2.0 * y + rng.normal(0, 0.1, len(y))], y


def _blobs(sizes=(12, 10, 8), seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(sizes)), sizes)
    return np.array([[0, 0], [10, 0], [0, 10]], dtype=float)[y] + rng.normal(0, 0.3, (len(y), 2)), y


class AlwaysCannotLink:
    """A broken oracle: every answer "different clusters", whatever the pair."""

    def ask(self, i, j):
        return False, 1.0


PCK = dict(strategy="explore_consolidate", method="pck_means", budgets=[0, 10, 20, 40])


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_exact_answers_lift_the_curve_and_ignored_answers_do_not(seed):
    X, y = _strips()
    curve = anytime_curve(X, y, seed=seed, **PCK)
    assert list(curve.columns) == list(COLUMNS) and (curve.status == "ok").all()
    assert curve.budget.tolist() == [0, 10, 20, 40]
    assert (curve.n_must_link + curve.n_cannot_link).tolist() == [0, 10, 20, 40]
    # q = 0 is unsupervised k-means (cuts the strips); 40 exact answers put them together
    assert curve.ari_all.iloc[0] < 0.1
    assert curve.ari_all.iloc[-1] >= curve.ari_all.iloc[0] + 0.6
    assert curve.ari_unqueried.iloc[0] == curve.ari_all.iloc[0]  # no pair asked: every point is unqueried
    broken = anytime_curve(X, y, seed=seed, oracle=AlwaysCannotLink(), **PCK)
    assert (broken.n_must_link == 0).all()
    assert area_under_curve(broken.budget, broken.ari_all) < area_under_curve(curve.budget, curve.ari_all) - 0.2


@pytest.mark.filterwarnings("ignore::ccbench.base.InconsistentConstraintsWarning")  # 30 % noise: expected
def test_trials_of_one_seed_share_the_oracles_answers():
    # two strategies, one seed, a noisy persistent oracle: a pair both asked got the same answer in both,
    # and the answer the oracle of that seed gives it
    X, y = _strips()
    runs = {}
    for name in ("random", "min_max"):
        asked = []

        class Recording(Oracle):
            def ask(self, i, j):
                out = super().ask(i, j)
                asked.append((min(i, j), max(i, j), out[0]))
                return out

        anytime_curve(X, y, strategy=name, method="pck_means", budgets=[0, 60], seed=4,
                      oracle=Recording(y, noise_rate=0.3, seed=4))
        runs[name] = {(i, j): a for i, j, a in asked}
    shared = set(runs["random"]) & set(runs["min_max"])
    assert shared  # the test would prove nothing without a pair both asked
    ref = Oracle(y, noise_rate=0.3, seed=4)
    assert all(runs["random"][p] == runs["min_max"][p] == ref(*p) for p in shared)
    assert any(ref(*p) != (y[p[0]] == y[p[1]]) for p in runs["random"])  # the noise did flip some


class FixedPairs:
    """A strategy asking ``pairs`` in order."""

    def __init__(self, pairs):
        self.pairs = pairs

    def next_pair(self, X, asked, answers, labels, rng):
        return self.pairs[len(asked)]


@pytest.mark.filterwarnings("ignore::ccbench.base.InconsistentConstraintsWarning")
def test_the_default_oracle_is_the_seeds_noisy_oracle_of_y():
    X, y = _strips()
    pairs = [tuple(p) for p in np.random.default_rng(0).permutation(np.c_[np.arange(0, 40, 2), np.arange(39, 0, -2)])]
    budgets = [0, 5, 10, 20]

    def must_links(seed):
        curve = anytime_curve(X, y, strategy=FixedPairs(pairs), method="pck_means", budgets=budgets, seed=seed,
                              oracle_kwargs={"noise_rate": 0.3})
        return curve.n_must_link.tolist()

    said = np.array([Oracle(y, noise_rate=0.3, seed=4)(*p) for p in pairs])
    assert must_links(4) == [int(said[:q].sum()) for q in budgets]
    truth = np.array([y[i] == y[j] for i, j in pairs])
    assert (said != truth).any() and must_links(5) != must_links(4)  # noisy, and the seed picks the flips


def test_area_under_curve_by_hand():
    # (10 (0 + 0.5) / 2 + 20 (0.5 + 1) / 2) / 30 = (2.5 + 15) / 30
    assert area_under_curve([0, 10, 30], [0.0, 0.5, 1.0]) == pytest.approx(17.5 / 30)
    assert area_under_curve([5, 20], [0.4, 0.4]) == pytest.approx(0.4)  # a flat curve's area is its height
    assert np.isnan(area_under_curve([0, 10, 20], [0.1, np.nan, 0.9]))  # a failed row is not bridged
    with pytest.raises(ValueError, match="strictly increasing"):
        area_under_curve([0, 10, 10], [0.1, 0.2, 0.3])


@pytest.fixture
def cobras_registered():
    registry.load_plugins(["ccbench_plugins.cobras"])
    yield
    registry.unregister_plugin("ccbench_plugins.cobras")


def test_cobras_curve_is_its_own_history_read_at_each_budget(cobras_registered):
    X, y = _blobs()
    budgets = [0, 3, 8, 15]
    curve = anytime_curve(X, y, strategy=None, method="cobras", budgets=budgets, seed=2,
                          method_params={"random_state": 7})
    # the other route: one COBRAS fit of the same seed and oracle, its history scored by hand
    model = registry.make_method("cobras", max_questions=15, random_state=7).fit(X, oracle=Oracle(y, seed=2))
    expected = [adjusted_rand(y, model.labels_history_[min(q, model.n_questions_)]) for q in budgets]
    np.testing.assert_allclose(curve.ari_all, expected)
    assert curve.ari_all.iloc[0] == 0.0 and curve.ari_all.iloc[-1] == pytest.approx(1.0)
    said, pairs = model.answers_, model.queried_pairs_
    for q, got in zip(budgets, curve.ari_unqueried):
        rest = np.setdiff1d(np.arange(len(y)), pairs[:q].ravel())
        assert got == pytest.approx(adjusted_rand(y[rest], model.labels_history_[min(q, len(said))][rest]))
    assert curve.n_must_link.tolist() == [int(said[:min(q, len(said))].sum()) for q in budgets]
    assert (curve.status == "ok").all() and curve.strategy_seconds.isna().all()
    with pytest.raises(ValueError, match="asks its own questions"):
        anytime_curve(X, y, strategy="random", method="cobras", budgets=budgets)


class FailsAtTenPairs:
    """A method that raises when given exactly ten pairs, and cuts at x = 5 otherwise (across the strips)."""

    def __init__(self, n_clusters=2, random_state=None):
        self.n_clusters = n_clusters

    def fit(self, X, constraints=None):
        if constraints.n_must_link + constraints.n_cannot_link == 10:
            raise RuntimeError("ten is too many")
        self.labels_ = (X[:, 0] > 5).astype(int)
        return self


class InAWorker(FailsAtTenPairs):
    """A method whose fit says it spent 2.5 CPU seconds in a worker process (as a peer library run isolated
    does, ``peer_fit_seconds_``), which this process's clock cannot see."""

    def fit(self, X, constraints=None):
        self.labels_, self.peer_fit_seconds_ = (X[:, 0] > 5).astype(int), 2.5
        return self


class AsksInAWorker:
    """A method that asks its own questions ((0, 1), (0, 2), ...) in a worker process: 2.5 CPU seconds there."""

    def __init__(self, n_clusters=2, max_questions=10, random_state=None):
        self.max_questions = max_questions

    def fit(self, X, oracle=None):
        pairs = np.c_[np.zeros(self.max_questions, int), np.arange(1, self.max_questions + 1)]
        self.queried_pairs_, self.answers_ = pairs, np.array([bool(oracle(i, j)) for i, j in pairs])
        self.labels_history_ = np.tile((X[:, 0] > 5).astype(int), (self.max_questions + 1, 1))
        self.labels_, self.peer_fit_seconds_ = self.labels_history_[-1], 2.5
        return self


class _Plugin:
    @hookimpl
    def ccbench_methods(self):
        return [MethodSpec(name="fails_at_ten", estimator=FailsAtTenPairs, summary="raises on ten pairs",
                           supervision=("must_link", "cannot_link"), needs_n_clusters=True),
                MethodSpec(name="in_a_worker", estimator=InAWorker, summary="fits in a worker",
                           supervision=("must_link", "cannot_link"), needs_n_clusters=True),
                MethodSpec(name="asks_in_a_worker", estimator=AsksInAWorker, summary="asks in a worker",
                           supervision=("labels",), needs_n_clusters=True)]


@pytest.fixture
def failing_method():
    registry.register_plugin(_Plugin(), name="test_anytime_failing")
    yield
    registry.unregister_plugin("test_anytime_failing")


def test_a_method_failing_at_one_budget_fails_that_row_only(failing_method):
    X, y = _strips()
    pairs = [(i, 39 - i) for i in range(0, 30, 2)]  # points 0..28 even and 11..39 odd: queried
    budgets = [0, 5, 10, 15]
    curve = anytime_curve(X, y, strategy=FixedPairs(pairs), method="fails_at_ten", budgets=budgets, seed=0)
    assert curve.status.tolist()[:2] == ["ok", "ok"] and curve.status.iloc[3] == "ok"
    assert curve.status.iloc[2] == "method error: RuntimeError: ten is too many"
    assert np.isnan(curve.ari_all.iloc[2]) and np.isnan(curve.ari_unqueried.iloc[2])
    cut = (X[:, 0] > 5).astype(int)
    for row in (0, 1, 3):  # the other route: the cut scored by hand, on the points in no pair asked
        rest = np.setdiff1d(np.arange(len(y)), np.ravel(pairs[:budgets[row]]))
        assert curve.ari_all.iloc[row] == pytest.approx(adjusted_rand(y, cut))
        assert curve.ari_unqueried.iloc[row] == pytest.approx(adjusted_rand(y[rest], cut[rest]))
    assert curve.ari_unqueried.iloc[3] != pytest.approx(curve.ari_all.iloc[3])  # the case tells them apart


def test_costs_are_charged_per_budget(failing_method, monkeypatch):
    # a CPU clock that ticks 1 per reading: each question's proposal reads it twice (1 s), each fit twice (1 s)
    ticks = iter(range(10_000))
    monkeypatch.setattr(anytime, "_cpu_seconds", lambda: float(next(ticks)))
    X, y = _strips()
    curve = anytime_curve(X, y, strategy="random", method="fails_at_ten", budgets=[0, 4, 11, 12], seed=0)
    assert curve.strategy_seconds.tolist() == [0.0, 4.0, 7.0, 1.0]  # the questions since the previous budget
    assert curve.refit_seconds.tolist() == [1.0, 1.0, 1.0, 1.0]


def test_the_cpu_a_fit_spent_in_a_worker_is_charged(failing_method, monkeypatch):
    ticks = iter(range(10_000))  # this process's clock: 1 s per fit, as above
    monkeypatch.setattr(anytime, "_cpu_seconds", lambda: float(next(ticks)))
    X, y = _strips()
    curve = anytime_curve(X, y, strategy="random", method="in_a_worker", budgets=[4, 8], seed=0)
    assert curve.refit_seconds.tolist() == [3.5, 3.5]  # 1 s here and 2.5 s in the worker, per fit
    # the unsupervised fit made for the strategy's first partition (budgets leave out 0) is charged too
    assert curve.worker_seconds.tolist() == [5.0, 2.5]


def test_the_cpu_a_self_asking_method_spent_in_a_worker_is_charged(failing_method, monkeypatch):
    ticks = iter(range(10_000))
    monkeypatch.setattr(anytime, "_cpu_seconds", lambda: float(next(ticks)))
    X, y = _strips()
    curve = anytime_curve(X, y, strategy=None, method="asks_in_a_worker", budgets=[0, 5, 10], seed=0)
    assert (curve.status == "ok").all()
    assert curve.worker_seconds.tolist() == [0.0, 0.0, 2.5] and curve.refit_seconds.tolist() == [0.0, 0.0, 3.5]


class RepeatsItself:
    """A strategy that asks (0, 1), (0, 2), then (0, 1) again."""

    def next_pair(self, X, asked, answers, labels, rng):
        return [(0, 1), (0, 2), (0, 1)][len(asked)]


def test_a_strategy_asking_a_pair_again_ends_the_curve_with_recorded_rows():
    X, y = _strips()
    curve = anytime_curve(X, y, strategy=RepeatsItself(), method="pck_means", budgets=[1, 2, 3, 5], seed=0)
    assert curve.status.tolist()[:2] == ["ok", "ok"]
    assert all(s.startswith("strategy error: ValueError:") and "already" in s for s in curve.status.iloc[2:])
    assert curve.ari_all.iloc[2:].isna().all()
    assert (curve.n_must_link + curve.n_cannot_link).tolist() == [1, 2, 2, 2]  # the answers actually given


class BrokenOracle:
    def ask(self, i, j):
        raise ConnectionError("the annotator went home")


def test_an_oracle_that_raises_ends_the_curve_with_recorded_rows():
    X, y = _strips()
    curve = anytime_curve(X, y, strategy="random", method="pck_means", budgets=[0, 3], seed=0, oracle=BrokenOracle())
    assert curve.status.tolist() == ["ok", "oracle error: ConnectionError: the annotator went home"]
    assert curve.n_cannot_link.tolist() == [0, 0] and np.isnan(curve.ari_all.iloc[1])


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_a_bad_seed_is_refused(seed):
    X, y = _strips()
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        anytime_curve(X, y, seed=seed, oracle=AlwaysCannotLink(), **PCK)


@pytest.mark.parametrize("budgets, match", [
    ([], "non-empty"), ([0], "ask no question"), ([0, 20, 10], "strictly increasing"),
    ([0, 10, 10], "strictly increasing"), ([-5, 10], "ints >= 0"), ([0, 2.5], "ints >= 0"),
    ([0, 10_000], "exceeds"),
])
def test_bad_budgets_are_refused(budgets, match):
    X, y = _strips()
    with pytest.raises(ValueError, match=match):
        anytime_curve(X, y, budgets=budgets, **{k: v for k, v in PCK.items() if k != "budgets"})


@pytest.mark.parametrize("rate", [-0.1, 0.7])
def test_an_oracle_rate_outside_zero_to_half_is_refused(rate):
    X, y = _strips()
    with pytest.raises(ValueError, match=r"noise_rate must be a number in \[0, 0.5\]"):
        anytime_curve(X, y, oracle_kwargs={"noise_rate": rate}, **PCK)
