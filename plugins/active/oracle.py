"""The simulated oracle: answers "are points i and j in the same cluster?" from the true labels.

Noise model, with ``r = noise_rate`` in [0, 1/2] and, for each ask, two uniform draws
``u, v ~ U[0, 1)``:

- ``confidence=None``: the answer is the truth ``y_i == y_j``, flipped when ``u < r``; it is
  reported with confidence ``1 - r`` (the probability that it is right).
- ``confidence="uniform"`` (answers with a confidence, as PCCC's soft pairs carry one): each answer
  has its own confidence ``c``, uniform on an interval ``[lo, hi]`` placed so that its mean is
  ``1 - r`` and it stays within [1/2, 1]::

      [lo, hi] = [1 - 2r, 1]          if r <= 1/4
                 [1/2, 3/2 - 2r]      if r >  1/4,        c = lo + (hi - lo) v

  and the answer is wrong when ``u >= c``. The confidences are *calibrated*: an answer of
  confidence ``c`` is right with probability ``c``, and the expected share of wrong answers is
  ``1 - E[c] = r``, the same rate as without confidences. At ``r = 0`` every confidence is 1
  (exact); at ``r = 1/2`` every confidence is 1/2 (a coin). PCCC (Baumann & Hochbaum 2024)
  takes a confidence in (0, 1] per pair; the files of its experiments kept in ``shared/pccc``
  are hard pairs only (entries +-1), so they fix no model of how confidences arise: this one is
  ours, chosen so that a confidence means what it says.

``persistent=True``: ``u`` and ``v`` come from a generator seeded with ``(seed, min(i, j),
max(i, j))``, so the same pair always gets the same answer and confidence, whoever asks and in
whatever order; under one seed the pairs flipped at a rate are a subset of those flipped at any
higher rate (``u < r`` is monotone in ``r``), so trials at noise 5, 10, 20 % share their draws.
``persistent=False``: each ask takes fresh draws from one generator seeded with ``seed`` (asking
again may change the answer).
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["Oracle", "CONFIDENCE_MODELS"]

#: Values of ``Oracle(confidence=...)``: None (one confidence, 1 - r, for every answer) or "uniform".
CONFIDENCE_MODELS = (None, "uniform")


def confidence_interval(noise_rate: float) -> tuple[float, float]:
    """``[lo, hi]`` of the ``"uniform"`` confidence model at ``noise_rate`` (mean ``1 - noise_rate``)."""
    r = float(noise_rate)
    return (1.0 - 2.0 * r, 1.0) if r <= 0.25 else (0.5, 1.5 - 2.0 * r)


class Oracle:
    """Answers must-link (True) or cannot-link (False) about pairs of points of true labels ``y``.

    Parameters
    ----------
    y : array of shape (n,)
        The true labels.
    noise_rate : float in [0, 0.5]
        The expected share of wrong answers (see the module docstring for the model).
    persistent : bool
        Whether the same pair always gets the same answer (draws keyed by the pair and ``seed``).
    confidence : None or "uniform"
        None: every answer has confidence ``1 - noise_rate``; "uniform": each its own, calibrated.
    seed : int >= 0
        The seed of every draw.

    Calling ``oracle(i, j)`` returns the answer; ``oracle.ask(i, j)`` returns ``(answer,
    confidence)``. ``n_queries`` counts the asks, repeats included.
    """

    def __init__(self, y, noise_rate: float = 0.0, persistent: bool = True, confidence: str | None = None,
                 seed: int = 0):
        y = np.asarray(y)
        if y.ndim != 1 or len(y) < 2:
            raise ValueError(f"Oracle: y must be a 1-D array of at least two labels, got shape {y.shape}")
        if isinstance(noise_rate, bool) or not isinstance(noise_rate, numbers.Real) \
                or not 0.0 <= float(noise_rate) <= 0.5:
            raise ValueError(f"Oracle: noise_rate must be a number in [0, 0.5] (the share of wrong answers; "
                             f"above 0.5 the answers would be better read inverted), got {noise_rate!r}")
        if not isinstance(persistent, (bool, np.bool_)):
            raise TypeError(f"Oracle: persistent must be True or False, got {persistent!r}")
        if confidence not in CONFIDENCE_MODELS:
            raise ValueError(f"Oracle: confidence must be one of {CONFIDENCE_MODELS}, got {confidence!r}")
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(f"Oracle: seed must be an int >= 0, got {seed!r}")
        self.y = y
        self.noise_rate = float(noise_rate)
        self.persistent = bool(persistent)
        self.confidence = confidence
        self.seed = int(seed)
        self.n_queries = 0
        self._stream = np.random.default_rng(self.seed)

    def _draws(self, lo: int, hi: int) -> tuple[float, float]:
        if self.persistent:
            u, v = np.random.default_rng([self.seed, lo, hi]).random(2)
        else:
            u, v = self._stream.random(2)
        return float(u), float(v)

    def ask(self, i, j) -> tuple[bool, float]:
        """``(answer, confidence)`` for the pair ``(i, j)``: answer True = same cluster (must-link),
        confidence the probability that the answer is right."""
        n = len(self.y)
        try:
            i, j = int(i), int(j)
        except (TypeError, ValueError):
            raise ValueError(f"Oracle: a pair is two point indices, got ({i!r}, {j!r})") from None
        if not (0 <= i < n and 0 <= j < n) or i == j:
            raise ValueError(f"Oracle: ({i}, {j}) is not a pair of two distinct points among the {n} (indices 0.."
                             f"{n - 1})")
        self.n_queries += 1
        truth = bool(self.y[i] == self.y[j])
        u, v = self._draws(min(i, j), max(i, j))
        if self.confidence is None:
            return truth != (u < self.noise_rate), 1.0 - self.noise_rate
        lo, hi = confidence_interval(self.noise_rate)
        conf = lo + (hi - lo) * v
        return truth != (u >= conf), conf

    def __call__(self, i, j) -> bool:
        return self.ask(i, j)[0]

    def __repr__(self):
        return (f"Oracle(n={len(self.y)}, noise_rate={self.noise_rate:g}, persistent={self.persistent}, "
                f"confidence={self.confidence!r}, seed={self.seed}, n_queries={self.n_queries})")
