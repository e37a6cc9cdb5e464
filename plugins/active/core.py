"""What the query strategies share: the history's checks, unasked pairs, and neighbourhoods.

A *neighbourhood* (Basu, Banerjee & Mooney 2004) is a set of points the answers say belong
together; different neighbourhoods were told apart by cannot-links. Every neighbourhood strategy
grows them the same way: it takes a *candidate* point in no neighbourhood and asks it against one
point (the *representative*) of each neighbourhood in turn, until a must-link puts the candidate
in that neighbourhood; cannot-links against every neighbourhood open a new one (or, when no new one
may be opened, the candidate is set aside and never proposed again). Strategies differ in which
candidate they take and in which order they ask the neighbourhoods.

The strategies keep no state between calls: :func:`replay` rebuilds the neighbourhoods from
``asked`` and ``answers`` every time, reading each pair as (representative, candidate). A pair
the strategy did not propose (neither point in a neighbourhood, or both) changes no
neighbourhood, except that the first pair of all opens the first neighbourhood with its first
point.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.spatial.distance import cdist

__all__ = ["check_history", "pair_codes", "random_unasked_pair", "Neighbourhoods", "replay",
           "NeighbourhoodStrategy"]


def check_history(X, asked, answers):
    """``(X, asked, answers)`` as float (n, d), int (q, 2) and bool (q,) arrays, or a ``ValueError``."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or len(X) < 2:
        raise ValueError(f"X must be a 2-D array of at least two points, got shape {X.shape}")
    asked = np.zeros((0, 2), dtype=np.int64) if asked is None else np.asarray(asked)
    asked = asked.reshape(-1, 2) if asked.size == 0 else asked
    if asked.ndim != 2 or asked.shape[1] != 2 or (asked.size and not np.issubdtype(asked.dtype, np.integer)):
        raise ValueError(f"asked must be a (q, 2) array of point indices, got shape {asked.shape}, "
                         f"dtype {asked.dtype}")
    answers = np.zeros(0, dtype=bool) if answers is None else np.asarray(answers)
    if answers.shape != (len(asked),) or (answers.size and answers.dtype != bool):
        raise ValueError(f"answers must be a ({len(asked)},) bool array (True = must-link), one per asked "
                         f"pair; got shape {answers.shape}, dtype {answers.dtype}")
    if asked.size and (asked.min() < 0 or asked.max() >= len(X)):
        raise ValueError(f"asked holds a point index outside the {len(X)} points of X")
    return X, asked.astype(np.int64, copy=False), answers.astype(bool, copy=False)


def pair_codes(pairs, n: int) -> np.ndarray:
    """One integer per unordered pair: ``min * n + max``."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return pairs.min(1) * n + pairs.max(1)


def random_unasked_pair(n: int, asked, rng) -> tuple[int, int]:
    """A pair drawn uniformly among the ``n (n - 1) / 2`` pairs not in ``asked``.

    Rejection sampling while at most half the pairs are asked (each draw is accepted with
    probability >= 1/2); past that, the unasked pairs are listed (then ``n`` is small).
    """
    total = n * (n - 1) // 2
    codes = np.unique(pair_codes(asked, n))
    if len(codes) >= total:
        raise ValueError(f"every one of the {total} pairs of the {n} points has been asked; no pair is left")
    if 2 * len(codes) <= total:
        while True:
            i, j = rng.choice(n, size=2, replace=False)
            if not np.isin(min(i, j) * n + max(i, j), codes):
                return int(i), int(j)
    lo, hi = np.triu_indices(n, 1)
    left = np.flatnonzero(~np.isin(lo * n + hi, codes))
    pick = left[rng.integers(len(left))]
    return int(lo[pick]), int(hi[pick])


@dataclasses.dataclass
class Neighbourhoods:
    """The neighbourhoods the answers so far build (:func:`replay`).

    ``groups``: the neighbourhoods in the order they were opened, members in joining order;
    ``member[p]``: the neighbourhood of point ``p`` (-1: none); ``tested[c]``: the neighbourhoods
    that answered cannot-link to candidate ``c``; ``pending``: the candidate still being asked
    about (cannot-links so far, neighbourhoods left), or None; ``set_aside``: candidates that
    answered cannot-link to every neighbourhood when no new one could be opened.
    """

    groups: list[list[int]]
    member: np.ndarray
    tested: dict[int, set[int]]
    pending: int | None
    set_aside: set[int]

    def untested(self, candidate: int) -> list[int]:
        done = self.tested.get(candidate, set())
        return [g for g in range(len(self.groups)) if g not in done]

    def free_points(self) -> np.ndarray:
        """Points in no neighbourhood, not set aside: who may become a candidate."""
        free = self.member < 0
        free[list(self.set_aside)] = False
        return np.flatnonzero(free)


def replay(n: int, asked: np.ndarray, answers: np.ndarray, max_groups: int | None = None) -> Neighbourhoods:
    """The neighbourhoods after the answers ``answers`` to the pairs ``asked``, in order.

    A pair with exactly one point in a neighbourhood is (representative, candidate): a must-link
    puts the candidate in the representative's neighbourhood; a cannot-link marks that
    neighbourhood tested for the candidate, and once every neighbourhood is, the candidate opens a
    new one (while there are fewer than ``max_groups``; else it is set aside).
    """
    nb = Neighbourhoods([], np.full(n, -1, dtype=np.int64), {}, None, set())
    for (a, b), same in zip(asked.tolist(), answers.tolist()):
        if not nb.groups:
            nb.groups.append([a])
            nb.member[a] = 0
        in_a, in_b = nb.member[a] >= 0, nb.member[b] >= 0
        if in_a == in_b or a in nb.set_aside or b in nb.set_aside:
            continue  # not (representative, candidate): tells nothing about the neighbourhoods
        rep, cand = (a, b) if in_a else (b, a)
        group = int(nb.member[rep])
        if same:
            nb.groups[group].append(cand)
            nb.member[cand] = group
            nb.tested.pop(cand, None)
            nb.pending = None
            continue
        nb.tested.setdefault(cand, set()).add(group)
        nb.pending = cand
        if len(nb.tested[cand]) == len(nb.groups):
            nb.pending = None
            if max_groups is None or len(nb.groups) < max_groups:
                nb.member[cand] = len(nb.groups)
                nb.groups.append([cand])
                nb.tested.pop(cand)
            else:
                nb.set_aside.add(cand)
    return nb


def sq_distances(X, rows, cols) -> np.ndarray:
    """Squared Euclidean distances between the points ``rows`` and ``cols`` of ``X``."""
    return cdist(X[np.atleast_1d(rows)], X[np.atleast_1d(cols)], "sqeuclidean")


def farthest_first(X, nb: Neighbourhoods) -> int:
    """The free point farthest from every neighbourhood point: ``argmax_x min_{y in S} ||x - y||``
    over the free points ``x``, ``S`` the points in neighbourhoods (the first index on a tie)."""
    free = nb.free_points()
    skeleton = np.flatnonzero(nb.member >= 0)
    return int(free[np.argmax(sq_distances(X, free, skeleton).min(1))])


class NeighbourhoodStrategy:
    """The loop every neighbourhood strategy shares (see the module docstring); a subclass says
    which candidate to take (:meth:`candidate`) and in which order to ask the neighbourhoods, with
    which representative (:meth:`order`).

    ``next_pair(X, asked, answers, labels, rng) -> (representative, candidate)``: the pending
    candidate against its next untested neighbourhood, else a new candidate against its first; the
    very first pair is a point drawn with ``rng`` (the first neighbourhood) against a candidate.
    When no point is left to be a candidate, a pair drawn uniformly among those not asked.
    """

    def max_groups(self) -> int | None:
        """At most this many neighbourhoods are opened (None: no limit)."""
        return None

    def candidate(self, X, nb: Neighbourhoods, labels, rng) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def order(self, X, nb: Neighbourhoods, candidate: int, groups: list[int], labels) -> list[tuple[int, int]]:
        """``[(neighbourhood, representative), ...]`` for ``candidate``, in the order to ask them."""
        raise NotImplementedError  # pragma: no cover - abstract

    def next_pair(self, X, asked, answers, labels=None, rng=None) -> tuple[int, int]:
        X, asked, answers = check_history(X, asked, answers)
        rng = np.random.default_rng(rng)
        n = len(X)
        if not len(asked):
            first = int(rng.integers(n))
            nb = Neighbourhoods([[first]], np.full(n, -1, dtype=np.int64), {}, None, set())
            nb.member[first] = 0
            return first, self.candidate(X, nb, labels, rng)
        nb = replay(n, asked, answers, self.max_groups())
        codes = pair_codes(asked, n)
        cand = nb.pending
        while True:
            if cand is None:
                if not len(nb.free_points()):
                    return random_unasked_pair(n, asked, rng)
                cand = self.candidate(X, nb, labels, rng)
            for _, rep in self.order(X, nb, cand, nb.untested(cand), labels):
                if not np.isin(min(rep, cand) * n + max(rep, cand), codes):
                    return int(rep), int(cand)
            nb.set_aside.add(cand)  # every representative was already asked about it (pairs proposed elsewhere)
            cand = None


def nearest_members(X, nb: Neighbourhoods, candidate: int, groups: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """For each neighbourhood of ``groups``: the squared distance from ``candidate`` to its nearest
    member, and that member."""
    dist, near = np.empty(len(groups)), np.empty(len(groups), dtype=np.int64)
    for k, g in enumerate(groups):  # a loop over neighbourhoods (at most the number of questions)
        d = sq_distances(X, candidate, nb.groups[g])[0]
        dist[k], near[k] = d.min(), nb.groups[g][int(np.argmin(d))]
    return dist, near
