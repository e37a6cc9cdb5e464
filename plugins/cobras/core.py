"""COBRAS's machinery: super-instances, the split level, the merging phase, the anytime record.

COBRAS (Van Craenendonck, Dumancic, Van Wolputte & Blockeel, IDA 2018) keeps a partition of the
points into *super-instances* (groups it never looks inside again until it splits them) and a
partition of the super-instances into *clusters*. Each super-instance is represented by one of
its points, and every question is about two representatives: "are i and j in the same cluster?".
One iteration of its main loop (the paper's Algorithm 1, as we recall it) is

1. **split** the largest super-instance (:func:`super_instance_to_split`) by k-means into
   ``k`` parts, ``k`` estimated by queries (:meth:`_Run.split_level`); each part becomes a
   cluster of its own;
2. **merge** (:meth:`_Run.merge`): query the closest pair of clusters not known to be
   cannot-linked, merge on a must-link, record a cannot-link, until every pair of clusters is
   known to be cannot-linked.

It stops when the budget of questions is spent (or nothing can be split). COBRA (IJCAI 2017) is
the merging phase alone, over a fixed number of k-means super-instances.

We wrote this from memory of the papers and of the authors' ``cobras_ts`` package, with no copy at
hand: the section and algorithm numbers cited (Algorithm 1, the main loop; section 3.1, k-means as the
splitting step; section 3.2, the splitting level; COBRA section 3, the merging) are as we remember them
and may be off by a section. Where a rule was uncertain the docstring that applies it says so and
names the choice made.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.cluster import KMeans
from threadpoolctl import ThreadpoolController

__all__ = ["BudgetSpent", "SPLIT_SEARCHES", "labels_oracle", "oracle_labels", "representative", "super_instance_to_split",
           "run_cobras"]

#: k-means restarts of every split (scikit-learn's classic default; COBRAS's papers use k-means
#: as given by scikit-learn, so we keep its default rather than tune it).
KMEANS_N_INIT = 10

#: Below this many points every k-means runs on one thread: COBRAS fits hundreds of small k-means, and
#: starting threads for each took 40 ms a fit of 120 points on a loaded 2-core machine against 13 ms.
THREADED_FROM = 5_000
_controller: ThreadpoolController | None = None


def _thread_limit(n_samples: int):
    """One thread for the k-means of a small data set (one controller: building one scans the libraries)."""
    global _controller
    if _controller is None:
        _controller = ThreadpoolController()
    return _controller.limit(limits=1 if n_samples < THREADED_FROM else None)  # pragma: no mutate (speed only)


class BudgetSpent(Exception):
    """The next question would exceed ``max_questions``: the run stops where it is."""


def labels_oracle(labels: np.ndarray):
    """The exact oracle of a labelling: ``oracle(i, j) = labels[i] == labels[j]`` (must-link)."""
    labels = np.asarray(labels)
    return lambda i, j: bool(labels[i] == labels[j])


def oracle_labels(y, *, rng=None):
    """Scheme ``oracle_labels``: every label revealed as the oracle's answer key, no pair drawn.

    Provisional (until issue 53's anytime protocol passes an oracle to a method): COBRAS reads
    these labels only through :func:`labels_oracle`, one question at a time, within its budget.
    No pairs are built (``labeled_subsets`` revealing every label would list all n(n-1)/2 pairs).
    ``rng`` is unused (nothing is drawn); schemes take it by contract.
    """
    from ccbench.constraints import Constraints

    y = np.asarray(y)
    _, codes = np.unique(y, return_inverse=True)
    return Constraints(n_samples=len(y), labels=codes.astype(np.intp))


def representative(X: np.ndarray, members: np.ndarray) -> int:
    """The member closest to the members' mean: the point a super-instance is asked about.

    The paper calls it the super-instance's medoid; ``cobras_ts`` (as we recall it) takes the
    instance closest to the centroid, which is cheaper (O(m d), not O(m^2 d)) and what we use.
    Ties go to the lowest index.
    """
    offsets = X[members] - X[members].mean(axis=0)
    return int(members[int(np.argmin(np.einsum("ij,ij->i", offsets, offsets)))])


def super_instance_to_split(sizes: np.ndarray, splittable: np.ndarray) -> int:
    """The super-instance COBRAS splits next: the largest one that can still be split (section 3:
    "the largest super-instance is split"), ties to the lowest index; -1 when none can."""
    candidates = np.flatnonzero(splittable)
    if candidates.size == 0:
        return -1
    return int(candidates[np.argmax(sizes[candidates])])


def _kmeans_parts(X: np.ndarray, members: np.ndarray, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``members`` split by k-means into at most ``k`` (<= ``members.size``) non-empty parts, largest
    first; fewer when the members hold fewer than ``k`` distinct points (k-means leaves centres empty:
    dropped). k-means is COBRAS's splitting step (section 3.1)."""
    seed = int(rng.integers(2**31 - 1))  # pragma: no mutate (any seed will do)
    with warnings.catch_warnings():  # the empty centres of duplicates: a ConvergenceWarning, handled below
        warnings.simplefilter("ignore")
        assign = KMeans(int(k), n_init=KMEANS_N_INIT, random_state=seed).fit(X[members]).labels_
    parts = [members[assign == c] for c in range(int(k))]
    return sorted((p for p in parts if p.size), key=lambda p: -p.size)


SPLIT_SEARCHES = ("smaller", "larger")


def _next_half(halves: list[np.ndarray], split_search: str) -> np.ndarray:
    """The half the split-level search goes on with (:meth:`_Run.split_level`); ``halves`` come largest
    first. ``"smaller"``: the smallest with two or more points; ``"larger"``: the first. An empty array
    (nothing left to split) when no half has two points."""
    if split_search == "larger":
        return halves[0]
    splittable = [h for h in halves if h.size >= 2]
    return splittable[-1] if splittable else halves[-1][:0]


class _Run:
    """One COBRAS run: the state (super-instances, clusters, answers) and its two phases."""

    def __init__(self, X, oracle, max_questions, rng, split_search="smaller"):
        self.X, self.oracle, self.budget, self.rng = X, oracle, int(max_questions), rng
        self.split_search = split_search
        n = X.shape[0]
        self.si_of_point = np.zeros(n, dtype=np.intp)      # super-instance of each point
        self.reps = [representative(X, np.arange(n))]       # representative of each super-instance
        self.cluster_of_si = [0]                            # cluster of each super-instance
        self.splittable = [n >= 2]
        self.answers: dict[tuple[int, int], bool] = {}      # (i < j) -> must-link?; insertion order = order asked
        self.history = [self.labels()]                      # partition after 0, 1, 2, ... answers

    # -- questions and the anytime record
    def ask(self, i: int, j: int) -> bool:
        """The oracle's answer for (i, j); a pair asked before is answered from memory (never
        asked twice, costs nothing). Raises :class:`BudgetSpent` instead of a question over budget."""
        key = (min(i, j), max(i, j))
        if key in self.answers:
            return self.answers[key]
        if len(self.answers) >= self.budget:
            raise BudgetSpent
        answer = self.oracle(*key)
        if not (isinstance(answer, (bool, np.bool_)) or (isinstance(answer, numbers.Integral) and answer in (0, 1))):
            raise TypeError(f"the oracle answered {answer!r} for the pair {key}; it must return a bool "
                            f"(True = same cluster, must-link; False = cannot-link)")
        self.answers[key] = bool(answer)
        # anytime rule: until this iteration's merging ends, the partition is the last complete one
        self.history.append(self.history[-1])
        return bool(answer)

    def labels(self) -> np.ndarray:
        """Points labelled by cluster, clusters numbered by first appearance (0, 1, ...)."""
        by_si = np.asarray(self.cluster_of_si)[self.si_of_point]
        _, first, codes = np.unique(by_si, return_index=True, return_inverse=True)
        return np.argsort(np.argsort(first))[codes].astype(np.intp)

    def _complete(self) -> None:
        """An iteration ended with every pair of clusters known: its partition holds from the last answer on."""
        self.history[-1] = self.labels()

    # -- splitting
    def split_level(self, members: np.ndarray) -> int:
        """How many parts to split a super-instance into (section 3.2, "determining the splitting level").

        Split the super-instance in two by k-means and ask about the two halves' representatives;
        while the answer is cannot-link, count one more level and go on with one half of at least two
        points; stop at the first must-link (or when no half can be split). With ``d`` cannot-links the
        level is ``max(2, 2**d)``, at most the number of members: a super-instance is always split in at
        least two.

        Which half the search goes on with (``split_search``): ``"smaller"`` (the default) is the
        authors' package, ``cobras_ts`` 0.1.3 (``COBRAS.determine_split_level``: the smallest of the
        halves with two or more points), read when ``peer_cobras`` wrapped it; ``"larger"`` was our
        reading of the paper before that (the larger half holds more of the points that may still mix
        classes): kept as an option, not the default, since the paper's text was not at hand to
        settle it and the authors' code is.
        """
        depth, part = 0, members
        while part.size >= 2:
            halves = _kmeans_parts(self.X, part, 2, self.rng)
            if len(halves) < 2:
                break
            if self.ask(representative(self.X, halves[0]), representative(self.X, halves[1])):
                break
            depth += 1
            part = _next_half(halves, self.split_search)
        return int(min(members.size, max(2, 2**depth)))

    def split(self, s: int) -> list[int]:
        """Split super-instance ``s`` (algorithm 1's splitting phase): its parts, each in a new
        cluster of its own; the other super-instances of its cluster stay together. Returns the new
        super-instances' indices (empty when k-means found a single part: ``s`` is marked unsplittable)."""
        members = np.flatnonzero(self.si_of_point == s)
        parts = _kmeans_parts(self.X, members, self.split_level(members), self.rng)
        if len(parts) < 2:
            self.splittable[s] = False
            return []
        new = [s] + list(range(len(self.reps), len(self.reps) + len(parts) - 1))
        next_cluster = max(self.cluster_of_si) + 1
        for index, (si, part) in enumerate(zip(new, parts)):
            self.si_of_point[part] = si
            rep, cluster = representative(self.X, part), next_cluster + index
            if si == s:
                self.reps[s], self.cluster_of_si[s], self.splittable[s] = rep, cluster, part.size >= 2
            else:
                self.reps.append(rep)
                self.cluster_of_si.append(cluster)
                self.splittable.append(part.size >= 2)
        return new

    # -- merging
    def merge(self) -> None:
        """Algorithm 1's merging phase (COBRA's whole procedure, IJCAI 2017 section 3).

        Cluster pairs are visited closest first, the distance of two clusters being that of their
        closest pair of representatives, which is also the pair asked about. A pair of clusters with a
        cannot-link known between any of their representatives is skipped (asked before, or implied:
        the answer still holds for the clusters containing those representatives). A must-link merges
        the two clusters and the visit restarts on the new clusters; a cannot-link is recorded and
        the visit goes on. It ends when every pair of clusters is known to be cannot-linked.
        ``cobras_ts`` ranks clusters by their super-instances' centroids; we rank by the
        representatives, the points actually asked about (a choice: we could not check the paper).
        """
        reps = np.asarray(self.reps)
        points = self.X[reps]
        sq = np.einsum("ij,ij->i", points, points)
        dist = sq[:, None] + sq[None, :] - 2.0 * points @ points.T
        a, b = np.triu_indices(len(reps), k=1)
        order = np.argsort(dist[a, b], kind="stable")
        a, b = a[order], b[order]
        while True:
            candidates = self._cluster_pairs_to_ask(a, b, reps)
            for p in candidates:
                if self.ask(int(reps[a[p]]), int(reps[b[p]])):
                    keep, gone = self.cluster_of_si[a[p]], self.cluster_of_si[b[p]]
                    self.cluster_of_si = [keep if c == gone else c for c in self.cluster_of_si]
                    break
            else:  # no must-link: every pair of clusters is now known to be cannot-linked
                return

    def _cluster_pairs_to_ask(self, a: np.ndarray, b: np.ndarray, reps: np.ndarray) -> np.ndarray:
        """Of the super-instance pairs ``(a, b)`` (sorted closest first), the closest one of every pair of
        clusters not known to be cannot-linked, in that order."""
        clusters = np.asarray(self.cluster_of_si)
        cannot = self._cannot_linked_clusters(reps, clusters)
        ca, cb = clusters[a], clusters[b]
        index = np.flatnonzero((ca != cb) & ~cannot[ca, cb])
        pair_code = np.minimum(ca, cb)[index] * cannot.shape[0] + np.maximum(ca, cb)[index]
        _, first = np.unique(pair_code, return_index=True)
        return index[np.sort(first)]

    def _cannot_linked_clusters(self, reps: np.ndarray, clusters: np.ndarray) -> np.ndarray:
        """``cannot[c, e]``: a cannot-link is known between a representative of cluster ``c`` and one of
        cluster ``e`` (symmetric; cluster ids index it)."""
        cannot = np.zeros((int(clusters.max()) + 1,) * 2, dtype=bool)
        pairs = np.array(list(self.answers), dtype=np.intp).reshape(-1, 2)
        pairs = pairs[~np.fromiter(self.answers.values(), dtype=bool, count=len(pairs))]
        cluster_of_point = np.full(self.X.shape[0], -1, dtype=np.intp)
        cluster_of_point[reps] = clusters
        ci, cj = cluster_of_point[pairs[:, 0]], cluster_of_point[pairs[:, 1]]
        both = (ci >= 0) & (cj >= 0)
        cannot[ci[both], cj[both]] = cannot[cj[both], ci[both]] = True
        return cannot


def run_cobras(X: np.ndarray, oracle, max_questions: int, rng: np.random.Generator, pick=None,
               split_search: str = "smaller") -> _Run:
    """Algorithm 1: split the largest super-instance, merge, until the budget is spent or nothing
    can be split. ``pick(sizes, splittable)`` chooses the super-instance to split (default
    :func:`super_instance_to_split`, looked up at call time so a test can reverse the rule);
    ``split_search`` is the split-level search's rule (:meth:`_Run.split_level`).

    The anytime partition after answer t (``_Run.history[t]``) is the clustering of the last
    iteration whose merging phase had ended by then: in the middle of an iteration the new
    super-instances are not yet compared with every cluster, and the previous clustering is the
    answer (``cobras_ts`` reports its intermediate clusterings so, as we recall it). A run cut
    short by the budget therefore ends on the last complete clustering.
    """
    with _thread_limit(X.shape[0]):
        return _run(X, oracle, max_questions, rng, pick or super_instance_to_split, split_search)


def _run(X, oracle, max_questions, rng, pick, split_search) -> _Run:
    run = _Run(X, oracle, max_questions, rng, split_search)
    try:
        while len(run.answers) < run.budget:
            sizes = np.bincount(run.si_of_point, minlength=len(run.reps))
            s = pick(sizes, np.asarray(run.splittable))
            if s < 0:
                break
            if run.split(s):
                run.merge()
            run._complete()
    except BudgetSpent:
        pass
    return run
