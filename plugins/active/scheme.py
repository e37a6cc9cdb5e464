"""``active_queries``: the constraint scheme of an anytime cell (issue 53, item 4).

An anytime cell draws no pairs up front: its pairs are asked one at a time, by a query strategy, of a
simulated oracle (:func:`.anytime.anytime_curve`, which the harness calls for such a cell:
:mod:`ccbench.running.active_cells`). The scheme's parameters are the cell's question plan, so they are
part of the cell's identity and the harness checks their names like any scheme's:

- ``strategy``: a registered query strategy (``ccbench plugins --all``), or ``cobras`` for a method that
  asks its own questions;
- ``budget``: the most questions asked (an int >= 1); ``step``: the curve's spacing (an int >= 1): the
  method is scored at q = 0, step, 2 step, ..., and at ``budget``;
- ``persistent``, ``confidence``: the oracle's options (:class:`.oracle.Oracle`); its wrong-answer rate
  is the cell's ``noise.rate`` (``noise=constraint_flip``; ``noise=none``: exact).

Called as a scheme (a draw), it returns the supervision before the first question: no pair.
"""

from __future__ import annotations

import numbers

import numpy as np

from ccbench.constraints import Constraints

__all__ = ["active_queries", "curve_budgets"]


def curve_budgets(budget, step) -> list[int]:
    """``[0, step, 2 step, ..., budget]`` (``budget`` last even when ``step`` does not divide it), or a
    ``ValueError`` naming the bad value."""
    for key, value in (("budget", budget), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"active_queries: constraints.{key} must be an int >= 1 ({'the questions asked' if key == 'budget' else 'the questions between two points of the curve'}), got {value!r}")
    return sorted({*range(0, int(budget), int(step)), int(budget)})


def active_queries(y, *, rng=None, strategy: str = "random", budget: int = 100, step: int = 10,
                   persistent: bool = True, confidence: str | None = None) -> Constraints:
    """The supervision of an anytime cell before its first question: none (the module docstring)."""
    curve_budgets(budget, step)
    if not isinstance(strategy, str) or not strategy:
        raise ValueError(f"active_queries: constraints.strategy must be a query strategy's name, got {strategy!r}")
    return Constraints.empty(len(np.asarray(y)))
