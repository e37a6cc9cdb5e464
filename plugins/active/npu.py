"""``npu``: Neighbourhood-based Pairwise Uncertainty (Xiong, Azimi & Fern, IEEE TKDE 26(1), 2014).

Neighbourhoods grow as in :mod:`.core` (a candidate asked against neighbourhood representatives
until a must-link; cannot-links with all open a new one, without limit). The candidate is the point
whose neighbourhood is most uncertain per question it is expected to cost. With a similarity
M(x, y) in [0, 1] and the neighbourhoods N_1..N_l, the probability that x belongs to N_i is

    p_i(x) = s_i(x) / sum_m s_m(x),     s_i(x) = (1 / |N_i|) sum_{y in N_i} M(x, y)

(uniform when every s_i(x) is 0), its uncertainty the entropy

    H(x) = - sum_i p_i(x) log p_i(x),

and, x being asked against the neighbourhoods in decreasing p_i(x) (p_(1) >= p_(2) >= ...), the
expected number of questions it costs

    E[q(x)] = sum_{r=1}^{l} r p_(r)(x).

NPU asks about x* = argmax_{x in no neighbourhood} H(x) / E[q(x)] (ties, e.g. every point while
there is one neighbourhood and H = 0, drawn uniformly with ``rng``), against the neighbourhoods in
decreasing p_i(x*), each time their member most similar to x*.

The similarity (``similarity=``):

- ``"forest"`` (the paper's model): a random forest of ``n_trees`` trees trained to predict the
  current partition ``labels`` from ``X``; M(x, y) is the share of trees in which x and y fall in
  the same leaf. The paper trains the forest on the clustering of the constraints so far, as here;
  when there is no partition yet (``labels`` None, before any fit) or it has one cluster, the
  ``"rbf"`` similarity stands in (our choice: there is nothing to train on).
- ``"rbf"``: M(x, y) = exp(-||x - y||^2 / (2 sigma^2)), sigma^2 the median of the squared
  distances from the points to the neighbourhood points (our choice of bandwidth).

s_i(x) for every point costs O(n T l) with T trees (leaf counts per neighbourhood), never an
n x n matrix.
"""

from __future__ import annotations

import hashlib
import numbers

import numpy as np

from .core import NeighbourhoodStrategy, sq_distances

__all__ = ["NPU", "membership", "npu_scores"]

SIMILARITIES = ("forest", "rbf")


def membership(s: np.ndarray) -> np.ndarray:
    """p_i(x) = s_i(x) / sum_m s_m(x) for an (n, l) array of s; a row of zeros becomes uniform."""
    total = s.sum(1, keepdims=True)
    return np.where(total > 0, s / np.where(total > 0, total, 1.0), 1.0 / s.shape[1])


def npu_scores(p: np.ndarray) -> np.ndarray:
    """H(x) / E[q(x)] for an (n, l) array of membership probabilities."""
    logs = np.log(np.where(p > 0, p, 1.0))
    entropy = -(p * logs).sum(1)
    ranked = -np.sort(-p, axis=1)
    expected = (ranked * np.arange(1, p.shape[1] + 1)).sum(1)
    return entropy / expected


class NPU(NeighbourhoodStrategy):
    """NPU query selection (see the module docstring for the equations and the similarity).

    The forest is kept between calls while ``X`` and ``labels`` stay the same (see :meth:`_leaves`),
    and dropped when a run starts (an empty ``asked``), so a run's pairs depend on its own seed only.
    """

    def __init__(self, similarity: str = "forest", n_trees: int = 50):
        if similarity not in SIMILARITIES:
            raise ValueError(f"NPU: similarity must be one of {SIMILARITIES}, got {similarity!r}")
        if isinstance(n_trees, bool) or not isinstance(n_trees, numbers.Integral) or n_trees < 1:
            raise ValueError(f"NPU: n_trees must be an int >= 1, got {n_trees!r}")
        self.similarity = similarity
        self.n_trees = int(n_trees)
        self._rng = self._cache = None
        self._forest_key = self._forest_leaves = None

    def _group_similarity(self, X, nb, labels, rng):
        """(s, member_similarity): s the (n, l) array s_i(x); member_similarity(x) the similarity of x
        to every point in a neighbourhood (a dict point -> value)."""
        points = [p for g in nb.groups for p in g]
        owner = np.repeat(np.arange(len(nb.groups)), [len(g) for g in nb.groups])
        sizes = np.array([len(g) for g in nb.groups], dtype=float)
        leaves = self._leaves(X, labels, rng)
        if leaves is None:
            d2 = sq_distances(X, np.arange(len(X)), points)
            sigma2 = np.median(d2)
            sim = np.exp(-d2 / (2.0 * sigma2)) if sigma2 > 0 else (d2 == 0).astype(float)
            s = np.zeros((len(X), len(nb.groups)))
            np.add.at(s.T, owner, sim.T)
            return s / sizes, lambda x: dict(zip(points, sim[x]))
        n_trees = leaves.shape[1]
        # global leaf ids: per tree, how many members of each neighbourhood share each leaf
        ids = leaves + np.r_[0, np.cumsum(leaves.max(0) + 1)[:-1]]
        counts = np.zeros((ids.max() + 1, len(nb.groups)))
        np.add.at(counts, (ids[points].ravel(), np.repeat(owner, n_trees)), 1.0)
        s = counts[ids].sum(1) / (n_trees * sizes)
        return s, lambda x: dict(zip(points, (ids[points] == ids[x]).mean(1)))

    def _leaves(self, X, labels, rng):
        """The (n, T) leaf index of every point in every tree, or None for the ``"rbf"`` similarity.

        The forest is refitted only when ``X`` or ``labels`` differ from the previous call's (a
        refit often returns the same partition); its seed is drawn from ``rng`` at every call all
        the same, so the stream the strategy consumes does not depend on the cache.
        """
        if self.similarity == "rbf" or labels is None or len(np.unique(np.asarray(labels))) < 2:
            return None
        seed = int(rng.integers(2**31))
        labels = np.asarray(labels)
        key = (X.shape, hashlib.sha1(X.tobytes()).hexdigest(), labels.tobytes())
        if self._forest_key != key:
            from sklearn.ensemble import RandomForestClassifier

            forest = RandomForestClassifier(n_estimators=self.n_trees, random_state=seed)
            self._forest_leaves, self._forest_key = forest.fit(X, labels).apply(X), key
        return self._forest_leaves

    def _model(self, X, nb, labels):
        if self._cache is None:  # one similarity model per call of next_pair (the groups do not change in it)
            self._cache = self._group_similarity(X, nb, labels, self._rng)
        return self._cache

    def candidate(self, X, nb, labels, rng) -> int:
        free = nb.free_points()
        if len(nb.groups) == 1:  # p = 1, H = 0 for every point: all tie (no model needed to say so)
            return int(rng.choice(free))
        s, _ = self._model(X, nb, labels)
        score = npu_scores(membership(s[free]))
        best = free[score == score.max()]
        return int(best[0] if len(best) == 1 else rng.choice(best))

    def order(self, X, nb, candidate, groups, labels):
        s, member_similarity = self._model(X, nb, labels)
        p = membership(s[[candidate]])[0]
        sim = member_similarity(candidate)
        order = sorted(groups, key=lambda g: -p[g])
        return [(g, max(nb.groups[g], key=lambda y: sim[y])) for g in order]

    def next_pair(self, X, asked, answers, labels=None, rng=None) -> tuple[int, int]:
        self._rng, self._cache = np.random.default_rng(rng), None
        if asked is None or not len(asked):  # a new run: no forest of another run's seed
            self._forest_key = self._forest_leaves = None
        try:
            return super().next_pair(X, asked, answers, labels, self._rng)
        finally:
            self._rng = self._cache = None

    def __repr__(self):
        return f"NPU(similarity={self.similarity!r}, n_trees={self.n_trees})"
