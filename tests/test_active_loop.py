"""The asking loop and check-plugin's strategy group (issue 53, items 1 and 3): pairs checked as
they come, answers from the oracle, every built-in strategy new pairs only; bad strategies named."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.ensemble  # noqa: F401 - NPU's forest: imported at collection, not charged to the first npu test

from ccbench import registry
from ccbench.running import cli
from ccbench.running.check_plugin import builtin_methods
from ccbench_plugins.active.core import replay
from ccbench_plugins.active.loop import run_queries
from ccbench_plugins.active.oracle import Oracle


def _blobs(n_per=5, k=3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(k), n_per)
    return rng.normal(0, 0.2, (len(y), 2)) + 10.0 * np.c_[y, y % 2], y


def _builtin(name):
    spec = registry.get_query_strategy_spec(name)
    return spec.strategy(n_clusters=3) if spec.needs_n_clusters else spec.strategy()


STRATEGIES = ["random", "explore_consolidate", "min_max", "npu", "cobra"]


@pytest.mark.parametrize("name", STRATEGIES)
def test_every_strategy_asks_new_pairs_under_a_noisy_oracle(name):
    X, y = _blobs()
    oracle = Oracle(y, noise_rate=0.3, persistent=False, seed=1)
    asked, answers, conf = run_queries(_builtin(name), X, oracle, 40, rng=0, labels=y, return_confidence=True)
    codes = asked.min(1) * len(X) + asked.max(1)
    assert asked.shape == (40, 2) and len(np.unique(codes)) == 40 and (asked[:, 0] != asked[:, 1]).all()
    assert oracle.n_queries == 40 and np.allclose(conf, 0.7)


@pytest.mark.parametrize("name", ["explore_consolidate", "min_max"])
def test_explore_finds_the_k_clusters_with_an_exact_oracle(name):
    # three blobs 10 apart: farthest-first reaches each blob before asking a second point of one, so
    # after at most 1 + 2 questions (first pair, then a point against two neighbourhoods) there are three
    X, y = _blobs()
    asked, answers = run_queries(_builtin(name), X, Oracle(y), 12, rng=0)
    np.testing.assert_array_equal(answers, y[asked[:, 0]] == y[asked[:, 1]])
    nb = replay(len(X), asked[:3], answers[:3], max_groups=3)
    assert len(nb.groups) == 3
    nb = replay(len(X), asked, answers, max_groups=3)
    assert all(len(set(y[g])) == 1 for g in nb.groups)  # pure: the exact answers built them


def test_refit_gives_the_strategy_the_partition_after_each_answer():
    X, y = _blobs()
    seen = []

    class Spy:
        def next_pair(self, X, asked, answers, labels, rng):
            seen.append((len(asked), None if labels is None else int(labels[0])))
            return 0, len(asked) + 1

    run_queries(Spy(), X, Oracle(y), 3, refit=lambda asked, answers: np.full(len(X), len(asked)))
    assert seen == [(0, None), (1, 1), (2, 2)]


class _Fixed:
    def __init__(self, pairs):
        self.pairs = list(pairs)

    def next_pair(self, X, asked, answers, labels, rng):
        return self.pairs[len(asked)]

    def __repr__(self):
        return "Fixed()"


@pytest.mark.parametrize("pairs, message", [
    ([(0, 1), (1, 0)], r"the query strategy Fixed\(\) \(question 2\) returned the pair \(1, 0\), already asked"),
    ([(0, 15)], r"returned the pair \(0, 15\), outside the 15 points"),
    ([(3, 3)], r"of a point with itself"),
    ([(0.5, 1)], r"must return two point indices"),
])
def test_a_bad_pair_is_an_error_naming_the_strategy_and_the_question(pairs, message):
    X, y = _blobs()
    with pytest.raises(ValueError, match=message):
        run_queries(_Fixed(pairs + [(5, 6)]), X, Oracle(y), len(pairs))


def test_a_strategy_that_fails_is_named_and_a_bad_budget_is_refused():
    X, y = _blobs()

    class Broken:
        def next_pair(self, X, asked, answers, labels, rng):
            raise ZeroDivisionError("oops")

    with pytest.raises(ZeroDivisionError) as info:
        run_queries(Broken(), X, Oracle(y), 2)
    assert any("when proposing question 1 of 2" in note for note in info.value.__notes__)
    for budget in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="n_queries must be an int >= 1"):
            run_queries(_builtin("random"), X, Oracle(y), budget)
    with pytest.raises(ValueError, match="exceeds the 105 pairs"):
        run_queries(_builtin("random"), X, Oracle(y), 106)


BAD_STRATEGY = """
from ccbench import hookimpl
from ccbench.registry import QueryStrategySpec

class Repeats:
    '''Always the first two points: asks an asked pair from the second question on.'''
    def next_pair(self, X, asked, answers, labels, rng):
        return 0, 1

class OutOfRange:
    def next_pair(self, X, asked, answers, labels, rng):
        return 0, len(X)

class Unseeded:
    '''Ignores rng: two runs from one seed differ.'''
    def __init__(self):
        import numpy as np
        self.rng = np.random.default_rng()
    def next_pair(self, X, asked, answers, labels, rng):
        from ccbench_plugins.active.core import random_unasked_pair
        return random_unasked_pair(len(X), asked, self.rng)

@hookimpl
def ccbench_query_strategies():
    return [QueryStrategySpec("toy_repeats", Repeats), QueryStrategySpec("toy_out_of_range", OutOfRange),
            QueryStrategySpec("toy_unseeded", Unseeded)]
"""


def _lines(out, status):
    return [line for line in out.splitlines() if line.startswith(f"{status.upper():5} strategy")]


@pytest.mark.parametrize("name", STRATEGIES)
def test_check_plugin_passes_the_builtin_strategies(name, capsys):
    assert name not in {s.name for s in builtin_methods(load=False)}
    assert cli.main(["check-plugin", name]) == 0
    out = capsys.readouterr().out
    assert len(_lines(out, "pass")) == 6 and not _lines(out, "fail"), out


def test_check_plugin_reports_a_strategy_that_repeats_leaves_the_points_or_ignores_its_seed(throwaway_plugin,
                                                                                            capsys):
    throwaway_plugin(BAD_STRATEGY)
    assert cli.main(["check-plugin", "toy_repeats"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  strategy  new_pairs_exact_answers: ValueError: next_pair (question 2) returned the pair (0, 1), " \
           "already asked" in out
    assert cli.main(["check-plugin", "toy_out_of_range"]) == 1
    assert "outside the 12 points" in capsys.readouterr().out
    assert cli.main(["check-plugin", "toy_unseeded"]) == 1
    out = capsys.readouterr().out
    assert _lines(out, "fail") == ["FAIL  strategy  same_seed_same_pairs: AssertionError: two runs from the same "
                                   "rng seed asked different pairs"], out


def test_ccbench_plugins_all_lists_the_strategies():
    table = cli.plugins_table(all=True)
    section = table[table.index("Query strategies"):]
    assert all(name in section for name in STRATEGIES) and "Basu, Banerjee & Mooney, SDM 2004" in section
