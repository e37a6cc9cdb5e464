"""Pairwise supervision (:class:`Constraints`) and the schemes that draw it.

Schemes (DESIGN.md "Experiments"):

- :func:`random_pairs` — random point pairs, must-link when the labels agree
  (SCSSAP section 4.1, SRCP).
- :func:`labeled_subsets` — a few labeled points per class (NNC, SCAP trainers).
- :func:`per_class_pairs` — ``j`` must-links per class and ``j`` cannot-links
  per class pair (RN-SDP).
- :func:`fraction_pairs` — all pairs among a random fraction of the points (dense supervision
  on few points; not the scheme of PCCC's files, which spread as many pairs over all points).

Every scheme takes the labels it may look at and a ``numpy.random.Generator``;
none touches global random state.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

__all__ = ["Constraints", "pairs_with_labels", "random_pairs", "fraction_pairs", "labeled_subsets",
           "per_class_pairs"]


def _as_pairs(pairs, what: str) -> np.ndarray:
    if pairs is None:
        return np.empty((0, 2), dtype=np.intp)
    arr = np.asarray(pairs)
    if arr.size == 0:
        return np.empty((0, 2), dtype=np.intp)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{what} must have shape (m, 2), got {arr.shape}")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        first = tuple(arr[0].tolist())
        raise TypeError(
            f"{what} must hold integer sample indices, got {arr.dtype.name} values such as {first!r}; "
            f"pass pairs of point numbers, e.g. [(0, 1), (2, 5)]"
            + (" (True/False are not indices: a boolean mask of points is not a pair)" if arr.dtype == bool else "")
        )
    if not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{what} must hold integer sample indices")
    return arr.astype(np.intp)


def _warn_renamed(kind: str) -> None:
    import warnings

    warnings.warn(
        f"{kind}_confidence is deprecated and will be removed in 0.3; use {kind}_weight "
        f"(the same numbers: 0 = the pair does not count, 1 = full weight)",
        FutureWarning, stacklevel=3,
    )


def _renamed(old, new, kind: str):
    if old is None:
        return new
    if new is not None:
        raise TypeError(f"give {kind}_weight only ({kind}_confidence is its deprecated name), not both")
    _warn_renamed(kind)
    return old


class Constraints:
    """Must-link and cannot-link pairs over ``n_samples`` points.

    Pairs are stored with ``i < j``, sorted, duplicates merged (keeping the
    highest weight). Construction validates: indices in range, no
    self-pairs, no pair both must-link and cannot-link.

    Parameters
    ----------
    must_link, cannot_link : array-like of shape (m, 2), default=None
        Index pairs.
    n_samples : int
        Number of points the indices refer to.
    must_link_weight, cannot_link_weight : array-like of shape (m,), default=None
        Per-constraint weight in [0, 1]: how much a pair counts (SCSSAP: it
        multiplies the penalty q, note after eq. 20, so 0 = no penalty; PCK-means:
        it multiplies w). Default 1 for every pair. Formerly ``*_confidence``
        (still accepted, with a FutureWarning, until 0.3); renamed because
        SCSSAP's ``confidence`` hyper-parameter meant exp(-q), the opposite scale.
    labels : array-like of shape (n_samples,), default=None
        Partial labels (-1 = unlabeled) when the supervision came as labeled
        points; methods that use labels directly (SSAP-L, NNC) read these.

    Attributes
    ----------
    must_link, cannot_link : ndarray of shape (m, 2)
    must_link_weight, cannot_link_weight : ndarray of shape (m,)
    labels : ndarray of shape (n_samples,) or None
    """

    def __init__(
        self,
        must_link=None,
        cannot_link=None,
        *,
        n_samples: int,
        must_link_weight=None,
        cannot_link_weight=None,
        labels=None,
        must_link_confidence=None,
        cannot_link_confidence=None,
    ):
        if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)):
            raise TypeError(f"n_samples must be an int, got {n_samples!r}")
        if n_samples < 1:
            raise ValueError(f"n_samples must be >= 1, got {n_samples}")
        self.n_samples = int(n_samples)
        must_link_weight = _renamed(must_link_confidence, must_link_weight, "must_link")
        cannot_link_weight = _renamed(cannot_link_confidence, cannot_link_weight, "cannot_link")
        self.must_link, self.must_link_weight = self._clean(must_link, must_link_weight, "must_link")
        self.cannot_link, self.cannot_link_weight = self._clean(cannot_link, cannot_link_weight, "cannot_link")
        clash = np.intersect1d(self._pair_keys(self.must_link), self._pair_keys(self.cannot_link))
        if clash.size:
            i, j = divmod(int(clash[0]), self.n_samples)
            raise ValueError(
                f"pair ({i}, {j}) is both must-link and cannot-link "
                f"({clash.size} such pair(s)); a pair can be in one set only"
            )
        self.labels = None if labels is None else self._check_labels(labels)

    # -- validation -------------------------------------------------------

    def _clean(self, pairs, confidence, what):
        arr = _as_pairs(pairs, what)
        if confidence is None:
            conf = np.ones(len(arr))
        else:
            conf = np.asarray(confidence, dtype=float).reshape(-1)
            if conf.shape[0] != len(arr):
                raise ValueError(
                    f"{what}_weight has {conf.shape[0]} values for {len(arr)} pairs"
                )
            if not np.all((conf >= 0) & (conf <= 1)):
                raise ValueError(f"{what}_weight must lie in [0, 1]")
        if len(arr) == 0:
            return arr, conf
        bad = (arr < 0) | (arr >= self.n_samples)
        if bad.any():
            row = int(np.nonzero(bad.any(axis=1))[0][0])
            raise ValueError(
                f"{what} pair {tuple(int(v) for v in arr[row])} is out of range "
                f"for n_samples={self.n_samples} (indices must be 0..{self.n_samples - 1})"
            )
        self_pairs = arr[:, 0] == arr[:, 1]
        if self_pairs.any():
            i = int(arr[self_pairs][0, 0])
            raise ValueError(f"{what} contains the self-pair ({i}, {i}); a point cannot be paired with itself")
        arr = np.sort(arr, axis=1)
        keys = self._pair_keys(arr)
        order = np.lexsort((-conf, keys))  # by key, highest weight first
        keys, arr, conf = keys[order], arr[order], conf[order]
        first = np.ones(len(keys), dtype=bool)
        first[1:] = keys[1:] != keys[:-1]
        return arr[first], conf[first]

    def _pair_keys(self, pairs):
        return pairs[:, 0] * self.n_samples + pairs[:, 1]

    def _check_labels(self, labels):
        lab = np.asarray(labels)
        if lab.shape != (self.n_samples,):
            raise ValueError(f"labels must have shape ({self.n_samples},), got {lab.shape}")
        if not np.issubdtype(lab.dtype, np.integer):
            raise ValueError("labels must be integers (-1 = unlabeled)")
        if (lab < -1).any():
            raise ValueError("labels must be >= -1 (-1 = unlabeled)")
        return lab.astype(np.intp)

    # -- constructors -----------------------------------------------------

    @classmethod
    def from_labels(cls, labels, n_samples: int | None = None) -> "Constraints":
        """All pairwise constraints implied by partial labels (-1 = unlabeled).

        Labeled points of one class are must-linked, of different classes
        cannot-linked; ``labels`` is kept on the result.
        """
        lab = np.asarray(labels)
        if n_samples is None:
            n_samples = lab.shape[0]
        idx = np.flatnonzero(lab >= 0)
        i, j = np.triu_indices(len(idx), k=1)
        a, b = idx[i], idx[j]
        same = lab[a] == lab[b]
        return cls(
            np.column_stack([a[same], b[same]]),
            np.column_stack([a[~same], b[~same]]),
            n_samples=n_samples,
            labels=lab,
        )

    @classmethod
    def empty(cls, n_samples: int) -> "Constraints":
        return cls(n_samples=n_samples)

    # -- queries ----------------------------------------------------------

    @property
    def n_must_link(self) -> int:
        return len(self.must_link)

    @property
    def n_cannot_link(self) -> int:
        return len(self.cannot_link)

    @property
    def n_labeled(self) -> int:
        """Points with a revealed label (0 when the supervision came as bare pairs)."""
        return 0 if self.labels is None else int(np.sum(self.labels >= 0))

    def __len__(self) -> int:
        return self.n_must_link + self.n_cannot_link

    def __repr__(self) -> str:
        lab = "" if self.labels is None else f", labeled={self.n_labeled}"
        return (
            f"Constraints(n_samples={self.n_samples}, must_link={self.n_must_link}, "
            f"cannot_link={self.n_cannot_link}{lab})"
        )

    def __eq__(self, other) -> bool:
        if not isinstance(other, Constraints):
            return NotImplemented
        return (
            self.n_samples == other.n_samples
            and np.array_equal(self.must_link, other.must_link)
            and np.array_equal(self.cannot_link, other.cannot_link)
        )

    def chunklet_labels(self) -> np.ndarray:
        """Component id per point of the must-link graph (its transitive closure).

        Points in no must-link pair get their own component.
        """
        n = self.n_samples
        ml = self.must_link
        graph = coo_matrix((np.ones(len(ml)), (ml[:, 0], ml[:, 1])), shape=(n, n))
        _, comp = connected_components(graph, directed=False)
        return comp

    def chunklets(self) -> list[np.ndarray]:
        """Groups of two or more points joined by must-links (transitive closure).

        Sorted by their smallest member; each group's indices sorted.
        """
        comp = self.chunklet_labels()
        order = np.argsort(comp, kind="stable")
        bounds = np.flatnonzero(np.diff(comp[order])) + 1
        groups = [g for g in np.split(order, bounds) if len(g) > 1]
        return sorted(groups, key=lambda g: g[0])

    def is_consistent(self) -> bool:
        """False when a cannot-link joins two points of one chunklet, or when the
        partial ``labels`` contradict the pairs.

        Consistent constraints always admit a clustering meeting them all
        (with enough clusters).
        """
        return self.n_conflicts() == 0

    def n_conflicts(self) -> int:
        """Number of contradictions: cannot-links whose two points must-links (or one
        revealed label) chain together, plus, with partial ``labels``, groups of points
        chained by must-links that hold two different revealed labels.
        """
        lab = self.labels
        labelled = lab is not None and np.count_nonzero(lab >= 0) > 0
        if self.n_cannot_link == 0 and not (labelled and self.n_must_link):
            return 0
        n = self.n_samples
        ml = self.must_link
        rows, cols = ml[:, 0], ml[:, 1]
        if labelled:
            # one extra node per revealed class: a labelled point is must-linked to its class
            idx = np.flatnonzero(lab >= 0)
            rows = np.concatenate([rows, idx])
            cols = np.concatenate([cols, n + lab[idx]])
        size = n + (int(lab.max()) + 1 if labelled else 0)
        graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(size, size))
        _, comp = connected_components(graph, directed=False)
        cl = self.cannot_link
        conflicts = int(np.sum(comp[cl[:, 0]] == comp[cl[:, 1]]))
        if labelled:
            classes = np.unique(lab[lab >= 0])
            # a component holding k > 1 class nodes: k - 1 must-link chains across classes
            counts = np.bincount(comp[n + classes], minlength=comp.max() + 1)
            conflicts += int(np.sum(np.maximum(counts - 1, 0)))
        return conflicts

    def violations(self, labels) -> tuple[int, int]:
        """(must-links split, cannot-links joined) by a clustering ``labels``."""
        lab = np.asarray(labels)
        ml, cl = self.must_link, self.cannot_link
        return (
            int(np.sum(lab[ml[:, 0]] != lab[ml[:, 1]])),
            int(np.sum(lab[cl[:, 0]] == lab[cl[:, 1]])),
        )

    @property
    def must_link_confidence(self):
        """Deprecated name of :attr:`must_link_weight` (FutureWarning; removed in 0.3)."""
        _warn_renamed("must_link")
        return self.must_link_weight

    @property
    def cannot_link_confidence(self):
        """Deprecated name of :attr:`cannot_link_weight` (FutureWarning; removed in 0.3)."""
        _warn_renamed("cannot_link")
        return self.cannot_link_weight

    def with_pairs(self, must_link, cannot_link, must_link_weight=None, cannot_link_weight=None):
        """A copy with other pairs (same ``n_samples`` and ``labels``)."""
        return Constraints(
            must_link,
            cannot_link,
            n_samples=self.n_samples,
            must_link_weight=must_link_weight,
            cannot_link_weight=cannot_link_weight,
            labels=self.labels,
        )


# -- schemes ----------------------------------------------------------------


def _check_y(y) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    if len(y) < 2:
        raise ValueError(f"need at least 2 samples to draw constraints, got {len(y)}")
    return y


def _as_count(value, name: str) -> int:
    """``value`` as an int count, refusing a fraction (30.7 pairs would silently be 30)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float, np.floating)):
        raise TypeError(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, (float, np.floating)) and not (np.isfinite(value) and float(value).is_integer()):
        raise ValueError(
            f"{name}={value!r} is not a whole number: a count of pairs or points cannot be fractional "
            f"(it would be drawn as {int(value) if np.isfinite(value) else value!r}); give an integer"
        )
    return int(value)


def _decode_pair_index(k: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Map k in [0, n(n-1)/2) to the k-th pair (i < j) in row-major order."""
    k = np.asarray(k, dtype=np.int64)
    # Row i holds n-1-i pairs; rows before i hold i*n - i*(i+1)/2 of them.
    i = np.floor((2 * n - 1 - np.sqrt((2 * n - 1) ** 2 - 8 * k.astype(np.float64))) / 2).astype(np.int64)
    # the square root can land one row off at a row boundary: step back or forward once
    i[k < i * n - i * (i + 1) // 2] -= 1
    i[k >= (i + 1) * n - (i + 1) * (i + 2) // 2] += 1
    return i, k - (i * n - i * (i + 1) // 2) + i + 1


def pairs_with_labels(constraints: Constraints) -> Constraints:
    """The constraints plus every pair their partial labels imply (for methods built from pairs:
    SRCP/E2CP's Y of eq. 2, COBS's count of satisfied pairs).

    ``Constraints(labels=...)`` without pairs would otherwise leave such a
    method nothing to use, silently. Given pairs keep their weights; implied
    pairs (same label: must-link, different labels: cannot-link, as
    :meth:`Constraints.from_labels`) get weight 1. A given pair that contradicts
    the labels raises ``ValueError``.
    """
    if constraints.labels is None or np.count_nonzero(constraints.labels >= 0) < 2:
        return constraints
    n = constraints.n_samples
    implied = Constraints.from_labels(constraints.labels, n_samples=n)

    def merged(given, given_w, extra):
        new = ~np.isin(extra[:, 0] * n + extra[:, 1], given[:, 0] * n + given[:, 1])
        return np.concatenate([given, extra[new]]), np.concatenate([given_w, np.ones(int(new.sum()))])

    ml, ml_w = merged(constraints.must_link, constraints.must_link_weight, implied.must_link)
    cl, cl_w = merged(constraints.cannot_link, constraints.cannot_link_weight, implied.cannot_link)
    return constraints.with_pairs(ml, cl, must_link_weight=ml_w, cannot_link_weight=cl_w)


def random_pairs(y, n_constraints: int | None = None, *, per_point: float | None = None,
                 rng: np.random.Generator) -> Constraints:
    """Draw ``n_constraints`` distinct random pairs; must-link iff labels agree.

    SCSSAP section 4.1: "pairs of points are randomly selected ... assigned to
    the must-link set if they share the same label or the cannot-link set if
    they have different labels".

    ``per_point`` instead of ``n_constraints`` scales the budget with the data set:
    ``round(per_point * n)`` pairs, so one sweep value means the same supervision
    density on iris (n = 150) and splice (n = 3,190).
    """
    y = _check_y(y)
    n = len(y)
    total = n * (n - 1) // 2
    if (n_constraints is None) == (per_point is None):
        raise ValueError(
            f"random_pairs takes exactly one of n_constraints (a count) and per_point (pairs per "
            f"point), got n_constraints={n_constraints!r}, per_point={per_point!r}; with "
            f"constraints.per_point=... set constraints.n_constraints=null"
        )
    if per_point is not None:
        if not per_point >= 0:
            raise ValueError(f"per_point must be >= 0, got {per_point!r}")
        n_constraints = round(float(per_point) * n)
    n_constraints = _as_count(n_constraints, "n_constraints")
    if not 0 <= n_constraints <= total:
        raise ValueError(
            f"n_constraints={n_constraints} is not possible with {n} samples "
            f"(at most {total} distinct pairs)"
        )
    k = rng.choice(total, size=n_constraints, replace=False)
    i, j = _decode_pair_index(np.asarray(k), n)
    same = y[i] == y[j]
    pairs = np.column_stack([i, j])
    return Constraints(pairs[same], pairs[~same], n_samples=n)


def fraction_pairs(y, fraction: float, *, rng: np.random.Generator) -> Constraints:
    """All pairs among ``round(fraction * n)`` random points; must-link iff labels agree.

    A fraction ``f`` of the points is drawn and all ``m (m - 1) / 2`` pairs among those
    ``m = round(f n)`` points are labelled from the classes: dense supervision on few points.
    The budget grows with ``(f n)^2 / 2``: f = 10 % gives 105 pairs on iris (n = 150) and
    50,403 on splice (n = 3,175, m = 318), where :func:`random_pairs` at ``per_point=0.1``
    gives 15 and 318.

    Not the scheme of PCCC's constraint files (Baumann & Hochbaum, arXiv:2212.14437,
    collection 1, whose sizes follow DILS, Gonzalez-Almagro et al.): those hold
    ``C(ceil(f n), 2)`` random pairs over *all* ``n`` points (PCCC-Data's
    ``generate_hard_constraints``; iris at 5 %: 28 pairs touching 50 distinct points, where
    this scheme's 28 pairs touch 8), and count with ``ceil`` where this uses ``round``. The
    ``pccc_file`` scheme (plugin ``ccbench_plugins.datasets.pccc``) reads PCCC's files.
    """
    y = _check_y(y)
    n = len(y)
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float, np.floating)) \
            or not 0 <= fraction <= 1:
        raise ValueError(f"fraction must be a number in [0, 1] (a share of the points), got {fraction!r}")
    m = int(round(float(fraction) * n))
    if m < 2:
        return Constraints.empty(n)
    points = np.sort(rng.choice(n, size=m, replace=False))
    i, j = np.triu_indices(m, k=1)
    pairs = np.column_stack([points[i], points[j]])
    same = y[pairs[:, 0]] == y[pairs[:, 1]]
    return Constraints(pairs[same], pairs[~same], n_samples=n)


def labeled_subsets(y, per_class, *, small_classes: str = "raise", rng: np.random.Generator) -> Constraints:
    """Reveal ``per_class`` random labels of every class (-1 elsewhere).

    ``per_class`` is a count (int >= 1) or a fraction of each class (0 < float < 1,
    at least one point). The result carries the partial ``labels`` and every
    pairwise constraint they imply. A class with fewer than ``per_class`` points
    is an error (``small_classes="raise"``) or revealed whole (``"all"``: one
    count across data sets whose smallest classes differ, as the leaderboard uses).
    """
    if small_classes not in ("raise", "all"):
        raise ValueError(f"small_classes must be 'raise' or 'all', got {small_classes!r}")
    y = _check_y(y)
    partial = np.full(len(y), -1, dtype=np.intp)
    classes, codes = np.unique(y, return_inverse=True)
    for c in range(len(classes)):
        members = np.flatnonzero(codes == c)
        if isinstance(per_class, float) and 0 < per_class < 1:
            take = max(1, int(round(per_class * len(members))))
        else:
            take = _as_count(per_class, "per_class (a count >= 1 or a fraction in (0, 1))")
            if take < 0:
                raise ValueError(f"per_class must be >= 0, got {per_class}")
            if take > len(members) and small_classes == "all":
                take = len(members)
            elif take > len(members):
                raise ValueError(
                    f"per_class={take} but class {classes[c]!r} has only {len(members)} "
                    f"points; lower per_class, pass a fraction, or set small_classes=all"
                )
        chosen = rng.choice(members, size=take, replace=False)
        partial[chosen] = c
    return Constraints.from_labels(partial, n_samples=len(y))


def per_class_pairs(y, n_pairs: int, *, rng: np.random.Generator) -> Constraints:
    """``n_pairs`` must-links inside every class, ``n_pairs`` cannot-links per class pair.

    The RN-SDP protocol (Okabe & Yamada 2010, section 4): j must-link pairs per
    class and j cannot-link pairs per pair of classes. Pairs are distinct.
    """
    y = _check_y(y)
    n_pairs = _as_count(n_pairs, "n_pairs")
    classes = np.unique(y)
    members = [np.flatnonzero(y == c) for c in classes]
    ml, cl = [], []
    for c, idx in zip(classes, members):
        possible = len(idx) * (len(idx) - 1) // 2
        if n_pairs > possible:
            raise ValueError(
                f"class {c!r} has {len(idx)} points: at most {possible} must-link pairs, "
                f"asked for {n_pairs}"
            )
        if n_pairs:
            i, j = _decode_pair_index(rng.choice(possible, n_pairs, replace=False), len(idx))
            ml.append(np.column_stack([idx[i], idx[j]]))
    for (a, ia), (b, ib) in itertools.combinations(zip(classes, members), 2):
        if n_pairs:
            k = rng.choice(len(ia) * len(ib), n_pairs, replace=False)
            cl.append(np.column_stack([ia[k // len(ib)], ib[k % len(ib)]]))
    return Constraints(
        np.concatenate(ml) if ml else None,
        np.concatenate(cl) if cl else None,
        n_samples=len(y),
    )
