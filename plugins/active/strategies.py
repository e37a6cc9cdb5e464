"""The random baseline and the Explore-Consolidate family: ``random``, ``explore_consolidate``, ``min_max``.

Each is ``next_pair(X, asked, answers, labels, rng) -> (i, j)`` (the interface of
:class:`ccbench.registry.QueryStrategySpec`); none of these three reads ``labels`` (the current
partition): they choose from the features and the answers alone.
"""

from __future__ import annotations

import numbers

import numpy as np

from .core import NeighbourhoodStrategy, check_history, farthest_first, nearest_members, random_unasked_pair

__all__ = ["RandomPairs", "ExploreConsolidate", "MinMax"]


class RandomPairs:
    """The baseline: a pair drawn uniformly among the ``n (n - 1) / 2`` pairs not asked yet."""

    def next_pair(self, X, asked, answers, labels=None, rng=None) -> tuple[int, int]:
        X, asked, _ = check_history(X, asked, answers)
        return random_unasked_pair(len(X), asked, np.random.default_rng(rng))

    def __repr__(self):
        return "RandomPairs()"


def _check_k(owner: str, n_clusters) -> int:
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, numbers.Integral) or n_clusters < 1:
        raise ValueError(f"{owner}: n_clusters must be an int >= 1 (the number of neighbourhoods Explore "
                         f"looks for), got {n_clusters!r}")
    return int(n_clusters)


class ExploreConsolidate(NeighbourhoodStrategy):
    """Explore-Consolidate (Basu, Banerjee & Mooney, SDM 2004), pairs for PCK-means.

    **Explore** (while fewer than ``n_clusters`` = K neighbourhoods exist): the first point is drawn
    at random and opens N_1; each next candidate is the farthest-first point

        x* = argmax_{x not in S} min_{y in S} ||x - y||,     S = N_1 u ... u N_l,

    asked against the neighbourhoods until a must-link adds it to one; cannot-links with all l of
    them open N_{l+1} = {x*}.

    **Consolidate** (K neighbourhoods): the candidate is a point drawn uniformly among those in no
    neighbourhood; it is asked against the neighbourhoods in increasing distance to their centroids

        ||x - mu_i||,     mu_i = (1 / |N_i|) sum_{y in N_i} y,

    until a must-link adds it to one. The paper asks "a point of" each neighbourhood; we ask its
    member nearest to the candidate (our choice), and use the centroid order in Explore too (the
    paper leaves Explore's order open). A candidate cannot-linked to all K neighbourhoods (a noisy
    oracle) is set aside, never proposed again; when every point is in a neighbourhood or set aside,
    the pairs are drawn uniformly among those not asked.
    """

    def __init__(self, n_clusters: int = 2):
        self.n_clusters = _check_k(type(self).__name__, n_clusters)

    def max_groups(self) -> int:
        return self.n_clusters

    def exploring(self, nb) -> bool:
        return len(nb.groups) < self.n_clusters

    def candidate(self, X, nb, labels, rng) -> int:
        if self.exploring(nb):
            return farthest_first(X, nb)
        return int(rng.choice(nb.free_points()))

    def order(self, X, nb, candidate, groups, labels):
        centroids = np.array([X[nb.groups[g]].mean(0) for g in groups]).reshape(len(groups), -1)
        to_centroid = ((centroids - X[candidate]) ** 2).sum(1)
        _, near = nearest_members(X, nb, candidate, groups)
        return [(groups[k], int(near[k])) for k in np.argsort(to_centroid, kind="stable")]

    def __repr__(self):
        return f"{type(self).__name__}(n_clusters={self.n_clusters})"


class MinMax(ExploreConsolidate):
    """Min-max consolidation (Mallapragada, Jin & Jain, ICPR 2008), after Basu et al.'s Explore.

    With the Gaussian similarity s(x, y) = exp(-||x - y||^2 / (2 sigma^2)) and the skeleton S (the
    points in neighbourhoods), Consolidate asks about the point least similar to all of S, the one
    whose neighbourhood is most uncertain:

        x* = argmin_{x not in S} max_{y in S} s(x, y) = argmax_{x not in S} min_{y in S} ||x - y||,

    and asks it against the neighbourhoods in decreasing similarity of their most similar member,
    max_{y in N_i} s(x*, y), that member being the one asked. s is decreasing in the distance, so
    sigma changes neither choice and is not a parameter. This is the rule as we read the paper (not
    at hand here): the deterministic min-max point replaces Basu's random one, and the order is by
    nearest member instead of centroid. Explore's candidate is Basu's farthest-first point (the same
    formula over the same S), so the two phases differ only in that Consolidate opens no new
    neighbourhood; the member order applies in both.
    """

    def candidate(self, X, nb, labels, rng) -> int:
        return farthest_first(X, nb)

    def order(self, X, nb, candidate, groups, labels):
        dist, near = nearest_members(X, nb, candidate, groups)
        return [(groups[k], int(near[k])) for k in np.argsort(dist, kind="stable")]
