"""``cobs``: constraint-based clustering selection (Van Craenendonck & Blockeel 2017)."""

from __future__ import annotations

import numbers
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from ccbench.base import ConstrainedClusterer, ConvergenceWarning, Interval, Options, check_random_state
from ccbench.registry import make_method

from .core import k_grid, knn_scale, pairs_with_labels, preference_grid, satisfied, select, silhouette

#: The pool's members, in pool order (the last tie-break).
MEMBERS = ("kmeans", "ap", "ncuts")


def _floats_in(low: float, high: float, *, closed_low: bool = True):
    """A rule for ``_parameter_constraints``: a non-empty list/tuple of reals in the range."""

    def check(value) -> bool:
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) == 0:
            return False
        return all(Interval(numbers.Real, low, high, closed="both" if closed_low else "neither").check(v)
                   for v in value)

    check.__doc__ = f"a non-empty list of reals in {'[' if closed_low else '('}{low}, {high}]"
    return check


def _members(value) -> bool:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) == 0:
        return False
    return all(v in MEMBERS for v in value) and len(set(value)) == len(value)


class _Rule:
    """A callable rule with a readable description (``_describe`` uses ``str``)."""

    def __init__(self, func, text):
        self.func, self.text = func, text

    def check(self, value) -> bool:
        return self.func(value)

    def __str__(self):
        return self.text


class COBS(ConstrainedClusterer):
    """Constraint-based clustering selection: the pool member that satisfies the most constraints.

    A pool of unsupervised clusterings is run (k-means over k, affinity propagation over
    its preference, normalised-cut spectral clustering over k and the Gaussian width), each
    through the registry (``kmeans``, ``ap``, ``ncuts``: the built-in methods, not copies),
    and the clustering satisfying the most must-link and cannot-link constraints is
    returned. The constraints never change a clustering; they only choose one.

    Parameters
    ----------
    n_clusters : int or None, default=None
        Optional. With ``k_mode="hint"`` it centres the k grid on it
        (:func:`~ccbench_plugins.cobs.core.k_grid`); with ``k_mode="fixed"`` every member
        is restricted to it. The method finds k itself (``needs_n_clusters=False``) and
        accepts one (``accepts_n_clusters``): the harness passes it when the method config
        sets ``n_clusters`` (the leaderboard's ``cobs_k``: the true k, as the k-means-type
        methods get it).
    k_mode : {"auto", "hint", "fixed"}, default="auto"
        ``"auto"``: ``"fixed"`` when ``n_clusters`` is given, else ``"hint"`` (issue 38: a
        method given k is given it on the same terms as every other method given k).
        ``"hint"``: the grids above. ``"fixed"`` (needs ``n_clusters``): the pool is
        restricted to clusterings with ``n_clusters`` clusters where a member can be
        restricted: k-means with k = ``n_clusters`` (one member), NCuts with it for each
        sigma factor, and AP as one member whose preference is searched by bisection for
        that many clusters (``ap``'s ``n_clusters``, :func:`ccbench.similarity.bisect_preference`,
        at most 20 AP fits; ``ap_quantiles`` unused; if the count is not hit the closest
        is kept and its warning recorded in ``pool_``). The constraints then choose the
        algorithm and its other hyper-parameters only.
    tie_break : {"silhouette", "fewer_clusters"}, default="silhouette"
        How members satisfying the same (weighted) number of constraints are ordered (see
        Notes). ``"fewer_clusters"`` is the rule before issue 38.
    silhouette_max_samples : int >= 2 or None, default=2000
        The tie-break's silhouettes cost O(n^2 d) each, for the tied members only (0.16 s
        at 2,000 x 30 on the 2-core reference machine, so about 5 s when all ~30 members of
        the default pool tie, as with no constraints); above
        this many points they are computed on one random subsample of this size (the same
        rows for every member, drawn after the members' seeds). ``None``: all points.
    k_max : int >= 2, default=10
        The k-means and NCuts members try k = 2..k_max (``k_max - 1`` values; with a hint,
        as many values centred on it). 10 covers the class counts of the built-in data sets
        (2 to 10: the two-class UCI sets up to mfeat and yeast) while keeping the pool affordable (each k costs one k-means and
        ``len(sigma_factors)`` NCuts fits).
    ap_quantiles : list of float in [0, 1], default=(0.0, 0.1, 0.5)
        AP preferences as quantiles of the off-diagonal similarities -||x_i - x_j||^2: 0.5
        is AP's default (the median), 0 the minimum (Frey & Dueck's choice for few clusters),
        0.1 between. AP with the median tends to find many clusters; the low quantiles give
        the pool AP clusterings with fewer.
    ap_max_samples : int >= 0 or None, default=2000
        AP is the expensive member (dense n x n messages): per preference, 1.4 s at
        n = 2,000 (load average 1.4, one thread) and 12 to 16 s at 3,200 (load average 2,
        two threads) on the 2-core reference machine, so three preferences alone would take
        most of a minute at 3,200. Above this many points its members are skipped: noted in
        ``skipped_`` and with a ``UserWarning``. ``None`` never skips; 0 always does.
    sigma_factors : list of float > 0, default=(1.0, 2.0)
        NCuts's Gaussian widths, as multiples of the mean distance to the
        ``n_neighbors``-th neighbour (NCuts's own ``sigma=None`` width, so factor 1 is NCuts's
        default graph and the grid is scale-free); 2 gives a smoother graph that joins
        groups the default width leaves apart. Narrower widths make more k-NN weights
        underflow (NCuts then warns of a degenerate graph), and every factor costs
        ``k_max - 1`` NCuts fits: at n <= 2,000 NCuts takes its dense eigendecomposition
        route, the pool's most expensive part there (docs/benchmarks.md).
    n_neighbors : int >= 1, default=20
        k of NCuts's k-NN graph (``ncuts``'s default).
    ncuts_n_init : int >= 1, default=3
        k-means restarts on each NCuts member's spectral embedding. ``ncuts``'s own default
        is 10, but those restarts are half of an NCuts fit at n = 3,200 and the pool has
        ``(k_max - 1) * len(sigma_factors)`` NCuts members; 3 keeps a fit at n = 3,200
        affordable (docs/benchmarks.md, scale table).
    n_threads : int >= 1 or None, default=1
        BLAS / OpenMP threads of the member fits (``threadpoolctl``); ``None`` leaves the
        libraries' defaults. The pool is many small fits, each starting thread pools that
        then wait on each other and on other processes: on the shared 2-core machine under
        load (load average 9), nine NCuts fits at n = 500 took 5 to 48 s with the default
        two threads and 0.34 s with one; at n = 2,000, 16 to 38 s against 3.8 to 5.4 s.
    members : list of {"kmeans", "ap", "ncuts"}, default=("kmeans", "ap", "ncuts")
        Which algorithms make up the pool (pool order is always kmeans, ap, ncuts).
    random_state : int, Generator or None, default=None
        One generator; every pool member gets its own seed drawn from it in pool order
        (drawn for the whole grid, skipped members included, so the seeds of the others do
        not depend on which were skipped).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The selected member's labels.
    selected_ : dict
        The winner: ``method`` (registry name), ``params`` (what ``make_method`` got),
        ``grid`` (its grid coordinates: ``k``, ``quantile``, ``sigma_factor``),
        ``n_satisfied``, ``score``, ``n_clusters``.
    pool_ : list of dict
        Every member tried (the whole pool of this fit, i.e. of one trial), in pool order,
        with the keys of ``selected_`` plus ``silhouette`` (computed for the members tied
        at the best score when ``tie_break="silhouette"`` and more than one is; else None),
        ``labels``
        (None for a failed member), ``converged``, ``seconds`` (its fit time), ``warnings``
        (``(category, message)`` of what its fit warned, recorded instead of repeated) and
        ``error`` (a ``ValueError`` it raised, or None; such a member cannot win).
    n_fits_ : int
        Member fits run (``len(pool_)``).
    n_satisfied_ : int
        Constraints the selected clustering satisfies (of ``n_constraints_``).
    n_constraints_ : int
        Must-links plus cannot-links counted, label supervision included as its pairs.
    skipped_ : list of str
        Members not run, and why (AP above ``ap_max_samples``).
    converged_ : bool
        Whether the selected member converged (``True`` for members that do not report it).
    n_clusters_ : int
        Clusters in ``labels_``.

    Notes
    -----
    Selection: the member with the highest number of satisfied constraints wins, each
    constraint counted with its weight (``Constraints.*_weight``, default 1, so the score is
    the plain count of the paper). Ties (issue 38): with ``tie_break="silhouette"`` (default)
    the member with the higher mean silhouette (Rousseeuw 1987; Euclidean, on the data COBS
    was given; undefined for one cluster, ranked last) wins, then the one with fewer
    clusters, then the earlier one in pool order (:func:`~ccbench_plugins.cobs.core.select`);
    ``"fewer_clusters"`` skips the silhouette. The paper's text on ties was not available
    to us (only its abstract and introduction), so this rule is ours. Why the silhouette:
    ties are frequent (few constraints, or several members meeting all of them), and
    "fewer clusters" then always returns the smallest k of the pool (k = 2 with no
    constraints at all, whatever the data), and among members with the same k (k-means vs
    NCuts, two NCuts widths) it is pool order, i.e. arbitrary. The silhouette is an
    unsupervised, scale-free quality of the clustering itself, so a tie is settled by the
    data, in the spirit of COBS (the constraints choose, the data's structure breaks ties);
    with no constraints COBS becomes silhouette model selection over the pool.

    Label supervision counts as the pairs it implies
    (:func:`~ccbench_plugins.cobs.core.pairs_with_labels`), as everywhere in ccbench.
    ``constraint_kind`` is ``"soft"``: the constraints are an objective of the selection,
    never enforced; the selected clustering may violate some (``n_satisfied_``).

    Warnings of the members (a non-converged AP, a degenerate NCuts graph, k-means finding
    fewer distinct clusters than k) are recorded in ``pool_``; those of the selected member
    are issued again after the selection, so the returned clustering's problems are never
    silent. A member that raises ``ValueError`` (e.g. a k no clustering of these points can
    have) is recorded and left out; if every member fails, ``fit`` raises.

    The pool follows the paper's idea, not its exact pool: the paper was not available here,
    so the algorithms and hyper-parameter ranges are ccbench's own unsupervised methods and
    the grids above, and the tie rule is ours.

    References
    ----------
    T. Van Craenendonck and H. Blockeel, "Constraint-based clustering selection",
    Machine Learning (2017), doi:10.1007/s10994-017-5643-7: constraints select an
    unsupervised algorithm and its hyper-parameters, by the number of constraints satisfied.

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import Constraints
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 0.3, (15, 2)), rng.normal(3, 0.3, (15, 2)), rng.normal(6, 0.3, (15, 2))]
    >>> cons = Constraints(must_link=[[0, 1], [15, 16]], cannot_link=[[0, 15], [15, 30], [0, 30]], n_samples=45)
    >>> est = COBS(members=("kmeans",), random_state=0).fit(X, constraints=cons)
    >>> est.selected_["method"], est.selected_["grid"], est.n_satisfied_
    ('kmeans', {'k': 3}, 5)
    """

    _parameter_constraints = {
        "n_clusters": [Interval(numbers.Integral, 1, None), None],
        "k_max": [Interval(numbers.Integral, 2, None)],
        "ap_quantiles": [_Rule(_floats_in(0.0, 1.0), "a non-empty list of quantiles in [0, 1]")],
        "ap_max_samples": [Interval(numbers.Integral, 0, None), None],
        "sigma_factors": [_Rule(_floats_in(0.0, float("inf"), closed_low=False),
                                "a non-empty list of positive finite reals")],
        "n_neighbors": [Interval(numbers.Integral, 1, None)],
        "ncuts_n_init": [Interval(numbers.Integral, 1, None)],
        "n_threads": [Interval(numbers.Integral, 1, None), None],
        "members": [_Rule(_members, f"a non-empty list of distinct names from {MEMBERS}")],
        "k_mode": [Options("auto", "hint", "fixed")],
        "tie_break": [Options("silhouette", "fewer_clusters")],
        "silhouette_max_samples": [Interval(numbers.Integral, 2, None), None],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=None, *, k_max=10, ap_quantiles=(0.0, 0.1, 0.5), ap_max_samples=2000,
                 sigma_factors=(1.0, 2.0), n_neighbors=20, ncuts_n_init=3, n_threads=1,
                 members=MEMBERS, k_mode="auto", tie_break="silhouette", silhouette_max_samples=2000,
                 random_state=None):
        self.n_clusters = n_clusters
        self.k_mode = k_mode
        self.tie_break = tie_break
        self.silhouette_max_samples = silhouette_max_samples
        self.k_max = k_max
        self.ap_quantiles = ap_quantiles
        self.ap_max_samples = ap_max_samples
        self.sigma_factors = sigma_factors
        self.n_neighbors = n_neighbors
        self.ncuts_n_init = ncuts_n_init
        self.n_threads = n_threads
        self.members = members
        self.random_state = random_state

    # -- the pool ------------------------------------------------------------------

    def _grid(self, n_samples: int) -> list[tuple[str, dict]]:
        """(member, grid coordinates) for every pool member, in pool order."""
        fixed = self._k_fixed()
        ks = [int(self.n_clusters)] if fixed else k_grid(int(self.k_max), n_samples, self.n_clusters)
        grid = []
        for name in MEMBERS:
            if name not in self.members:
                continue
            if name == "kmeans":
                grid += [(name, {"k": k}) for k in ks]
            elif name == "ap" and fixed:
                grid += [(name, {"n_clusters": int(self.n_clusters)})]
            elif name == "ap":
                grid += [(name, {"quantile": float(q)}) for q in self.ap_quantiles]
            else:
                grid += [(name, {"k": k, "sigma_factor": float(f)}) for k in ks for f in self.sigma_factors]
        return grid

    def _k_fixed(self) -> bool:
        return self.k_mode == "fixed" or (self.k_mode == "auto" and self.n_clusters is not None)

    def _skip_ap(self, n_samples: int) -> bool:
        return self.ap_max_samples is not None and n_samples > self.ap_max_samples

    def _fit_member(self, name: str, params: dict, X) -> dict:
        entry = {"method": name, "params": params, "error": None, "warnings": [], "converged": True}
        tic = time.perf_counter()
        with threadpool_limits(self.n_threads), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                # the members are unsupervised: they get no constraints (which they would ignore,
                # after warning a second time about contradictory ones)
                est = make_method(name, **params).fit(X)
            except ValueError as exc:
                entry["error"] = f"{type(exc).__name__}: {exc}"
                est = None
        entry["seconds"] = time.perf_counter() - tic
        entry["warnings"] = [(w.category, str(w.message)) for w in caught]
        if est is not None:
            labels = np.asarray(est.labels_)
            entry["labels"] = labels
            entry["converged"] = bool(getattr(est, "converged_", True))
            if (labels < 0).any():  # AP without exemplars labels every point -1: no clustering
                entry["error"] = "no clustering (labels -1: no exemplar emerged)"
        return entry

    # -- fit -------------------------------------------------------------------------

    def fit(self, X, y=None, *, constraints=None):
        X, cons = self._validate_fit(X, constraints)
        if self.k_mode == "fixed" and self.n_clusters is None:
            raise ValueError("COBS: k_mode='fixed' restricts the pool to n_clusters clusters; set n_clusters "
                             "(an int) or use k_mode='hint'")
        cons = pairs_with_labels(cons)
        n = X.shape[0]
        rng = check_random_state(self.random_state)
        grid = self._grid(n)
        # one seed per grid entry, drawn up front: skipping AP leaves the others' seeds alone
        seeds = rng.integers(2**31 - 1, size=len(grid))

        self.skipped_ = []
        prefs = scale = None
        if "ap" in self.members:
            if self._skip_ap(n):
                self.skipped_.append(
                    f"ap: {sum(name == 'ap' for name, _ in grid)} member(s) skipped, n={n} > ap_max_samples={self.ap_max_samples} "
                    f"(dense n x n messages); raise ap_max_samples or set it to None to include them")
                warnings.warn(f"COBS: {self.skipped_[-1]}", UserWarning, stacklevel=2)
            elif not self._k_fixed():
                prefs = preference_grid(X, self.ap_quantiles)
        if "ncuts" in self.members:
            scale = knn_scale(X, self.n_neighbors)

        pool = []
        for (name, coords), seed in zip(grid, seeds):
            if name == "ap" and self._skip_ap(n):
                continue
            if name == "kmeans":
                params = {"n_clusters": coords["k"]}
            elif name == "ap" and "n_clusters" in coords:
                params = {"n_clusters": coords["n_clusters"]}
            elif name == "ap":
                params = {"preference": float(prefs[list(self.ap_quantiles).index(coords["quantile"])])}
            else:
                params = {"n_clusters": coords["k"], "sigma": coords["sigma_factor"] * scale,
                          "n_neighbors": int(self.n_neighbors), "n_init": int(self.ncuts_n_init)}
            params["random_state"] = int(seed)
            entry = self._fit_member(name, params, X)
            entry["grid"] = coords
            if entry["error"] is None:
                entry["n_satisfied"], entry["score"] = satisfied(entry["labels"], cons)
                entry["n_clusters"] = int(len(np.unique(entry["labels"])))
            else:
                entry["n_satisfied"], entry["score"], entry["n_clusters"] = 0, -np.inf, 0
            entry.setdefault("labels", None)
            pool.append(entry)

        if not pool or all(e["error"] is not None for e in pool):
            errors = "; ".join(f"{e['method']} {e['grid']}: {e['error']}" for e in pool) or "the pool is empty"
            raise ValueError(f"COBS: no pool member produced a clustering ({errors}); "
                             f"check the data or widen the pool (members, k_max)")

        scores = np.array([e["score"] for e in pool])
        tied = np.flatnonzero(scores == scores.max())
        for e in pool:
            e["silhouette"] = None
        if self.tie_break == "silhouette" and len(tied) > 1:
            rows = None
            if self.silhouette_max_samples is not None and n > self.silhouette_max_samples:
                rows = np.sort(rng.choice(n, size=int(self.silhouette_max_samples), replace=False))
            for i in tied:
                pool[i]["silhouette"] = silhouette(X, pool[i]["labels"], rows)
        sil = [np.nan if e["silhouette"] is None else e["silhouette"] for e in pool]
        best = select(scores, [e["n_clusters"] for e in pool], sil if self.tie_break == "silhouette" else None)
        winner = pool[best]
        self.labels_ = winner["labels"]
        self.n_fits_ = len(pool)
        self.n_constraints_ = len(cons)
        self.n_satisfied_ = winner["n_satisfied"]
        self.n_clusters_ = winner["n_clusters"]
        self.converged_ = winner["converged"]
        keys = ("method", "params", "grid", "n_satisfied", "score", "n_clusters")
        self.selected_ = {k: winner[k] for k in keys}
        self.pool_ = [{k: e[k] for k in keys + ("silhouette", "labels", "converged", "seconds", "warnings", "error")}
                      for e in pool]
        for category, message in dict.fromkeys(winner["warnings"]):  # the winner's problems, once each
            warnings.warn(f"COBS selected {winner['method']} {winner['grid']}, which warned: {message}",
                          category, stacklevel=2)
        if not winner["converged"] and not any(issubclass(c, ConvergenceWarning) for c, _ in winner["warnings"]):
            warnings.warn(f"COBS selected {winner['method']} {winner['grid']}, which did not converge",
                          ConvergenceWarning, stacklevel=2)
        return self
