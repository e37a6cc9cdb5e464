"""Noise injectors (SCSSAP section 4.1).

- :func:`label_noise` corrupts labels *before* constraints are drawn
  ("the labels of 10 or 20 percent of the data instances are randomly
  changed"); evaluation always uses the true labels.
- :func:`constraint_flip` moves pairs between the must-link and cannot-link
  sets *after* drawing ("5 or 10 percent of the constraint pairs in C ∪ M were
  moved from one set to the other").

Both change exactly ``round(rate * count)`` items.
"""

from __future__ import annotations

import numpy as np

from ..constraints import Constraints

__all__ = ["label_noise", "constraint_flip"]


def _check_rate(rate) -> float:
    rate = float(rate)
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"noise rate must lie in [0, 1], got {rate}")
    return rate


def label_noise(y, *, rate: float, rng: np.random.Generator) -> np.ndarray:
    """Return a copy of ``y`` with ``round(rate * n)`` labels changed.

    Each chosen point gets a different class, drawn uniformly from the others.
    """
    rate = _check_rate(rate)
    y = np.asarray(y)
    classes = np.unique(y)
    if len(classes) < 2 and rate > 0:
        raise ValueError("label noise needs at least 2 classes")
    n_flip = int(round(rate * len(y)))
    chosen = rng.choice(len(y), size=n_flip, replace=False)
    codes = np.searchsorted(classes, y[chosen])
    # shift by 1..k-1 so the new class always differs from the old one
    shift = rng.integers(1, len(classes), size=n_flip)
    noisy = y.copy()
    noisy[chosen] = classes[(codes + shift) % len(classes)]
    return noisy


def constraint_flip(constraints: Constraints, *, rate: float, rng: np.random.Generator) -> Constraints:
    """Move ``round(rate * m)`` of the ``m`` pairs to the other set.

    Confidences travel with their pairs. The result may be inconsistent
    (e.g. i~j, j~k must-linked, i,k cannot-linked): that is the point.
    """
    rate = _check_rate(rate)
    ml, cl = constraints.must_link, constraints.cannot_link
    pairs = np.concatenate([ml, cl])
    conf = np.concatenate([constraints.must_link_weight, constraints.cannot_link_weight])
    is_ml = np.r_[np.ones(len(ml), bool), np.zeros(len(cl), bool)]
    n_flip = int(round(rate * len(pairs)))
    chosen = rng.choice(len(pairs), size=n_flip, replace=False)
    is_ml[chosen] = ~is_ml[chosen]
    return constraints.with_pairs(pairs[is_ml], pairs[~is_ml], conf[is_ml], conf[~is_ml])
