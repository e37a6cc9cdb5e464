"""``ccbench check-plugin NAME`` for an active query strategy (issue 53): the strategy group.

A strategy (:class:`ccbench.registry.QueryStrategySpec`) is asked for pairs on small blobs, its
answers given from the true labels (exactly, then with a share flipped at random), and each check
is one line: a pair out of range, of a point with itself or asked before, an exception, or two runs
from one seed that differ, fails it. The asking loop is written out here (the harness's lives with
the strategies, in a plugin the core does not import). Re-exported by
:mod:`ccbench.running.check_plugin`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..specs import checked_pair
from ._check_report import CheckResult, _first_line

__all__ = ["STRATEGY_CHECKS", "is_query_strategy", "strategy_checks", "ask_strategy"]

#: Questions each run asks (fewer than the 66 pairs of the 12 points, more than half of them so a
#: strategy's late phase and its fall-back run too).
N_QUESTIONS = 40


def _blobs(n: int = 12):
    rng = np.random.default_rng(0)
    y = np.arange(n) % 3
    return rng.normal(0.0, 0.3, (n, 2)) + 4.0 * np.c_[y, y % 2], y


def is_query_strategy(name: str) -> bool:
    """Whether ``name`` is a registered query strategy and not a method (a method's checks win)."""
    from ..registry import list_methods, list_query_strategies

    return (name in {s.name for s in list_query_strategies()}
            and name not in {m.name for m in list_methods(load=False)})


def ask_strategy(strategy, X, y, n_questions: int, *, noise: float = 0.0, labels=None, seed: int = 0):
    """Ask ``strategy`` for ``n_questions`` pairs, each checked (:func:`ccbench.registry.checked_pair`),
    answered from ``y`` with a share ``noise`` flipped at random; returns the (q, 2) pairs."""
    rng, flips = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    asked = np.zeros((n_questions, 2), dtype=np.int64)
    answers = np.zeros(n_questions, dtype=bool)
    for q in range(n_questions):
        pair = strategy.next_pair(X, asked[:q], answers[:q], labels, rng)
        i, j = asked[q] = checked_pair(pair, len(X), asked[:q], who=f"next_pair (question {q + 1})")
        answers[q] = (y[i] == y[j]) != (flips.random() < noise)
    return asked


def _make(spec):
    return spec.strategy(n_clusters=3) if spec.needs_n_clusters else spec.strategy()


def _items(spec) -> list[tuple[str, Callable[[], str | None]]]:
    X, y = _blobs()

    def first_pair():
        i, j = checked_pair(_make(spec).next_pair(X, np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=bool),
                                                   None, np.random.default_rng(0)), len(X), who="next_pair")
        return f"({i}, {j})"

    def new_pairs(noise, labels):
        def run():
            ask_strategy(_make(spec), X, y, N_QUESTIONS, noise=noise, labels=labels)
            return f"{N_QUESTIONS} pairs of 12 points, each new"
        return run

    def same_seed():
        a, b = (ask_strategy(_make(spec), X, y, N_QUESTIONS, labels=y) for _ in range(2))
        assert np.array_equal(a, b), "two runs from the same rng seed asked different pairs"

    def every_pair():
        ask_strategy(_make(spec), X[:5], y[:5], 10, noise=0.3)
        return "all 10 pairs of 5 points, none twice"

    return [
        ("builds", lambda: repr(_make(spec))),
        ("first_pair_without_history", first_pair),
        ("new_pairs_exact_answers", new_pairs(0.0, y)),  # a partition given (the true one) ...
        ("new_pairs_noisy_answers", new_pairs(0.3, None)),  # ... and none (before any fit)
        ("every_pair_of_a_tiny_set", every_pair),
        ("same_seed_same_pairs", same_seed),
    ]


STRATEGY_CHECKS = ("builds", "first_pair_without_history", "new_pairs_exact_answers", "new_pairs_noisy_answers",
                   "every_pair_of_a_tiny_set", "same_seed_same_pairs")


def strategy_checks(spec) -> list[CheckResult]:
    """The strategy group on ``spec`` (its ``strategy`` imported), one result per check."""
    out = []
    for name, func in _items(spec):
        try:
            detail = func() or ""
        except Exception as exc:  # noqa: BLE001 - any exception is this check's failure, reported
            out.append(CheckResult("strategy", name, "fail", _first_line(exc)))
        else:
            out.append(CheckResult("strategy", name, "pass", str(detail)))
    return out
