"""The asking loop: a strategy proposes, the oracle answers, ``n_queries`` times.

The harness's anytime protocol (issue 53, item 4) will call the method between answers; here
``refit``, when given, stands in for it: the partition it returns is what the strategy sees next.
"""

from __future__ import annotations

import numbers

import numpy as np

from ccbench.registry import checked_pair

__all__ = ["run_queries"]


def run_queries(strategy, X, oracle, n_queries: int, *, labels=None, refit=None, rng=None,
                return_confidence: bool = False):
    """Ask ``n_queries`` questions chosen by ``strategy`` of ``oracle``.

    Parameters
    ----------
    strategy : object with ``next_pair(X, asked, answers, labels, rng) -> (i, j)``
    X : array of shape (n, d)
    oracle : callable ``oracle(i, j) -> bool`` (True = same cluster); its ``ask(i, j) -> (answer,
        confidence)`` is used when it has one (:class:`.oracle.Oracle`)
    n_queries : int >= 1
        The budget.
    labels : array of shape (n,), optional
        The partition the strategy sees before the first answer (None: no fit yet).
    refit : callable ``refit(asked, answers) -> labels``, optional
        Called after each answer; its partition is what the strategy sees next.
    rng : seed or ``numpy.random.Generator``
        The strategy's random stream (one generator for the whole run).

    Returns
    -------
    asked : int array of shape (n_queries, 2), the pairs in the order asked
    answers : bool array of shape (n_queries,)
    confidences : float array of shape (n_queries,), only with ``return_confidence``
        (1.0 for an oracle without ``ask``)

    A proposed pair that is out of range, of a point with itself or already asked is a
    ``ValueError`` naming the strategy and the question (:func:`ccbench.registry.checked_pair`);
    an exception of the strategy itself carries a note naming both.
    """
    if isinstance(n_queries, bool) or not isinstance(n_queries, numbers.Integral) or n_queries < 1:
        raise ValueError(f"run_queries: n_queries must be an int >= 1 (the question budget), got {n_queries!r}")
    X = np.asarray(X, dtype=float)
    n = len(X)
    if n_queries > n * (n - 1) // 2:
        raise ValueError(f"run_queries: a budget of {n_queries} questions exceeds the {n * (n - 1) // 2} pairs of "
                         f"{n} points")
    rng = np.random.default_rng(rng)
    asked = np.zeros((n_queries, 2), dtype=np.int64)
    answers = np.zeros(n_queries, dtype=bool)
    confidences = np.ones(n_queries)
    ask = getattr(oracle, "ask", None)
    who = repr(strategy)
    for q in range(n_queries):
        try:
            pair = strategy.next_pair(X, asked[:q], answers[:q], labels, rng)
        except Exception as exc:
            exc.add_note(f"raised by the query strategy {who} when proposing question {q + 1} of {n_queries}")
            raise
        i, j = checked_pair(pair, n, asked[:q], who=f"the query strategy {who} (question {q + 1})")
        asked[q] = i, j
        if ask is not None:
            answers[q], confidences[q] = ask(i, j)
        else:
            answers[q] = bool(oracle(i, j))
        if refit is not None:
            labels = refit(asked[:q + 1], answers[:q + 1])
    return (asked, answers, confidences) if return_confidence else (asked, answers)
