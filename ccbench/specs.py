"""The spec dataclasses: what a plugin declares about a method, data set, scheme, noise or metric.

Their own module because both :mod:`ccbench.hookspecs` (the hook signatures) and
:mod:`ccbench.registry` (which imports the hook specs) need them; ``ccbench.registry``
re-exports every name, so ``from ccbench.registry import MethodSpec`` keeps working.
"""

from __future__ import annotations

import dataclasses
import importlib
import warnings
import itertools
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

__all__ = ["SUPERVISION_KINDS", "DIRECTIONS", "MAX_GRID_SIZE", "RELATIVE_K", "K_AROUND", "resolve_relative_k", "MemoryModel", "TimeModel", "MethodSpec", "DatasetSpec",
           "SchemeSpec", "NoiseSpec", "MetricSpec", "TunerSpec", "QueryStrategySpec", "checked_pair", "lazy_function"]

#: The most combinations a :attr:`MethodSpec.grid` may hold: model selection fits every one of them
#: once per fold (``tune_folds`` + 1 fits per combination), so the leaderboard's cost grows with it.
MAX_GRID_SIZE = 9

SUPERVISION_KINDS = ("must_link", "cannot_link", "labels")

#: A grid's ``n_clusters`` values are relative to the k the trial is given (the true number of
#: classes): ``"k"``, ``"k-1"``, ``"k+2"``; CVCP then chooses k from the constraints (issue 38).
RELATIVE_K = re.compile(r"k(?:([+-])([1-9][0-9]*))?")

#: The k grid of every method that takes k: one less, the given k (the default), one more.
K_AROUND = ("k-1", "k", "k+1")


def resolve_relative_k(value: str, k: int) -> int:
    """``"k+1"`` -> ``k + 1`` (``value`` a :data:`RELATIVE_K` string)."""
    match = RELATIVE_K.fullmatch(str(value))
    if match is None:
        raise ValueError(f"{value!r} is not a relative k: use 'k', 'k-1', 'k+2', ...")
    sign, step = match.groups()
    return int(k) + (0 if sign is None else int(step) * (1 if sign == "+" else -1))


@dataclasses.dataclass(frozen=True)
class MemoryModel:
    """A method's peak memory as a function of the problem size, declared with its spec.

    ``bytes(n, d) = 8 * (dense * n**2 + linear * n * d)``: ``dense`` counts the
    n x n float64 arrays a fit holds at once, ``linear`` the n x d ones. The
    protocol compares it with the memory available before fitting
    (:func:`ccbench.running.protocol.memory_refusal`) and records a ``refused`` row naming
    the estimate and ``alternative`` instead of letting the fit exhaust memory.
    ``unless`` lists ``(parameter, value)`` pairs under which the model does not
    apply (SCAP's ``memory="linear"``).
    """

    dense: float = 0.0
    linear: float = 0.0
    alternative: str = ""
    unless: tuple[tuple[str, Any], ...] = ()

    def bytes(self, n_samples: int, n_features: int, params: dict | None = None) -> float:
        if any((params or {}).get(key) == value for key, value in self.unless):
            return 0.0
        return 8.0 * (self.dense * n_samples**2 + self.linear * n_samples * n_features)

    def describe(self) -> str:
        """``"8 x 5 n^2 B"`` (what ``ccbench plugins`` shows)."""
        terms = [f"{self.dense:g} n^2" if self.dense else "", f"{self.linear:g} n d" if self.linear else ""]
        text = " + ".join(t for t in terms if t) or "0"
        unless = "".join(f" (0 with {k}={v!r})" for k, v in self.unless)
        return f"8 x ({text}) B{unless}"


@dataclasses.dataclass(frozen=True)
class TimeModel:
    """A method's CPU time per trial, measured: ``seconds`` at ``n`` points, growing as n**exponent.

    ``TimeModel(n, seconds, exponent)`` is a power law in n, the form every plugin declared first
    (from the scale table, ``tests/benchmarks/scale_table.py``). The optional terms, all neutral at
    their defaults, let a model calibrated from measured rows (``ccbench time-models ROWS``,
    :mod:`ccbench.running.time_models`) follow what the rows show matters::

        t(n, p, k, d) = seconds * (n / self.n)**exponent * (1 + p / n)**pairs_exponent
                        * (k / 2)**k_exponent * (d / 10)**features_exponent

    with ``p`` the trial's supervision pairs (must-links plus cannot-links: the dense track holds
    tens of thousands), ``k`` the number of clusters the trial is given (the term is left out
    when none is given) and ``d`` the number of features (left out when not known). A tuned trial is charged ``tuned * fits * t`` (``fits`` from
    :func:`ccbench.running.protocol.tuning_fits`; ``tuned`` is the measured CPU of a tuned trial per
    fit over the untuned one: a cross-validation fit sees fewer constraints, the score costs time).

    ``k_free``: for a method that finds k itself and ``accepts_n_clusters`` (the AP family), the
    model of its k-free trial, one fit; the outer model is then the given-k trial *including the
    search for k* (measured so), and :attr:`MethodSpec.search_fits` is not charged on top. Without
    ``k_free`` the model is one fit, and a given-k trial is charged ``search_fits`` of them (the rule
    for a model declared from single fits). For a method that **needs** k, ``k_free`` is the model of
    its k-free trial, CVCP over k (``tuned * fits`` of it, calibrated on those trials: the fits over
    2..sqrt(n) grow with k, which the outer model, given no k, cannot see).

    With the cell option ``time_budget`` set, the protocol refuses before fitting a trial whose
    prediction exceeds :data:`ccbench.running.protocol.TIME_REFUSAL_FACTOR` times the budget
    (:func:`ccbench.running.protocol.size_refusal`).
    """

    n: int
    seconds: float
    exponent: float
    pairs_exponent: float = 0.0
    k_exponent: float = 0.0
    features_exponent: float = 0.0
    tuned: float = 1.0
    k_free: "TimeModel | None" = None

    #: The k and d at which ``seconds`` is stated (the ``k_exponent`` and ``features_exponent`` terms are 1 there).
    K_REF: ClassVar[int] = 2
    D_REF: ClassVar[int] = 10

    def predict(self, n_samples: int, n_pairs: int = 0, n_clusters: int | None = None,
                n_features: int | None = None) -> float:
        """Seconds of one untuned trial of ``n_samples`` points, ``n_pairs`` supervision pairs, ``n_clusters``
        given and ``n_features`` (None: not given, that term left out)."""
        seconds = self.seconds * (n_samples / self.n) ** self.exponent
        if self.pairs_exponent:
            seconds *= (1.0 + max(n_pairs, 0) / max(n_samples, 1)) ** self.pairs_exponent
        if self.k_exponent and n_clusters:
            seconds *= (max(int(n_clusters), 1) / self.K_REF) ** self.k_exponent
        if self.features_exponent and n_features:
            seconds *= (max(int(n_features), 1) / self.D_REF) ** self.features_exponent
        return seconds

    def largest_n(self, seconds: float = 60.0) -> int:
        """The n at which the predicted fit time (no supervision, k = 2, d = 10) reaches ``seconds``."""
        return int(self.n * (seconds / self.seconds) ** (1.0 / self.exponent))

    def describe(self) -> str:
        """``"O(n^2.41) (k/2)^0.41; tuned x1.46 a fit; 7.9 s at n=1,000; 60 s at n~2,320"`` (``ccbench plugins``);
        a ``k_free`` part follows in brackets."""
        terms = "".join([f" (1+p/n)^{self.pairs_exponent:g}" if self.pairs_exponent else "",
                         f" (k/2)^{self.k_exponent:g}" if self.k_exponent else "",
                         f" (d/10)^{self.features_exponent:g}" if self.features_exponent else "",
                         f"; tuned x{self.tuned:g} a fit" if self.tuned != 1.0 else ""])
        free = f" [k-free: {self.k_free.describe()}]" if self.k_free is not None else ""
        return (f"O(n^{self.exponent:g}){terms}; {self.seconds:.2g} s at n={self.n:,}; "
                f"60 s at n~{self.largest_n():,}{free}")


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """What a clustering method is and what it needs.

    Parameters
    ----------
    name : str
        Registry name (``make_method(name)``).
    estimator : type or str
        A scikit-learn style estimator class, or ``"module:Class"`` naming it.
        The string form keeps ``ccbench plugins`` fast (nothing heavy is
        imported until the method is used); look-ups return the class.
    summary : str
        One line for ``ccbench plugins``.
    paper : str
        Short citation of the defining paper.
    supervision : tuple of str
        Which of ``"must_link"``, ``"cannot_link"``, ``"labels"`` the method
        uses. Empty for unsupervised methods.
    needs_n_clusters : bool
        Whether ``n_clusters`` is a required hyper-parameter.
    accepts_n_clusters : bool
        Whether a method that finds the number of clusters itself can also be given one
        (the AP family searches its preference for it): the harness passes the method
        config's ``n_clusters`` (``true_k``, an int, ``from_method``) when the config sets it,
        and nothing when it does not (the k-free run).
    search_fits : int
        Fits one ``fit`` makes when an ``accepts_n_clusters`` method is given k (its search
        for the count), charged to the time budget only when ``time`` is a model of one fit
        (no ``TimeModel.k_free``): a model calibrated on given-k trials (the built-in AP family's,
        ``ccbench time-models``) already includes the search and its ``k_free`` part describes the
        k-free trial, so nothing is charged on top. Given the true k of 8 UCI sets, AP's bisection
        took 5-9 fits on six and stopped at the 20-fit cap on ecoli and voting; on the shipped
        leaderboard rows a given-k AP trial took 5-16 times its k-free one. 1 for every other method.
    constraint_kind : {"none", "soft", "hard"}
        Whether constraints are penalised (soft) or enforced (hard).
    memory : MemoryModel, optional
        Peak memory against n and d; a problem it says will not fit is refused
        before fitting (status ``refused``). ``None``: O(n d), never refused.
    time : TimeModel, optional
        Measured CPU time per trial against n (and, calibrated, supervision pairs, k and the
        tuning fits); with ``time_budget`` set, a trial predicted to take more than
        ``TIME_REFUSAL_FACTOR`` (3) times the budget is refused before fitting
        (:func:`ccbench.running.protocol.size_refusal`); below that the CPU kill at
        ``trial_timeout`` decides. ``None``: never refused by time.
    uses : tuple of str
        Registry names of the methods this one builds through ``make_method``
        (a composition across families): their code is part of this method's
        ``code.method_hash`` (:mod:`ccbench.running.provenance`).
    grid : mapping of str to tuple
        The hyper-parameters constraint-only model selection may choose (``tune=cvcp``):
        ``{"penalty": (0.1, 1.0, 10.0)}``, 2-4 values each, at most :data:`MAX_GRID_SIZE`
        combinations, the estimator's default among each parameter's values (a test
        checks it). ``n_clusters`` takes values relative to the k the trial is given
        (:data:`K_AROUND`: ``("k-1", "k", "k+1")``; ``"k"`` is the default), left out of a
        k-free run. Empty: nothing to tune (the method's defaults are fitted).
    noise_label : bool
        Whether ``labels_`` may hold ``-1`` for points the method leaves unclustered (noise, as in
        DBSCAN). The harness checks every fit's labels (:func:`ccbench.running.labels_check.checked_labels`):
        one per point, whole numbers >= 0, and -1 only when this is True; anything else is an ``error``
        row naming the method.
    """

    name: str
    estimator: type | str
    summary: str
    paper: str = ""
    supervision: tuple[str, ...] = ()
    needs_n_clusters: bool = False
    accepts_n_clusters: bool = False
    search_fits: int = 1
    constraint_kind: str = "none"
    memory: MemoryModel | None = None
    time: TimeModel | None = None
    uses: tuple[str, ...] = ()
    grid: Mapping[str, tuple] = dataclasses.field(default_factory=dict, hash=False)
    noise_label: bool = False

    def __post_init__(self):
        self._check_grid()
        bad = set(self.supervision) - set(SUPERVISION_KINDS)
        if bad:
            raise ValueError(
                f"MethodSpec {self.name!r}: unknown supervision {sorted(bad)}; "
                f"use any of {SUPERVISION_KINDS}"
            )
        if self.constraint_kind not in ("none", "soft", "hard"):
            raise ValueError(
                f"MethodSpec {self.name!r}: constraint_kind must be 'none', 'soft' "
                f"or 'hard', got {self.constraint_kind!r}"
            )
        if isinstance(self.estimator, str) and ":" not in self.estimator:
            raise ValueError(
                f"MethodSpec {self.name!r}: estimator {self.estimator!r} must be a class "
                f"or a 'package.module:ClassName' string"
            )

    def _check_grid(self):
        if not isinstance(self.grid, Mapping):
            raise TypeError(f"MethodSpec {self.name!r}: grid must be a mapping parameter -> tuple of values, "
                            f"got {type(self.grid).__name__}")
        grid = {}
        for key, values in self.grid.items():
            if isinstance(values, (str, bytes)) or not isinstance(values, (tuple, list)) or len(values) < 2:
                raise ValueError(f"MethodSpec {self.name!r}: grid[{key!r}] must be a tuple of at least two "
                                 f"values, got {values!r}")
            if len(set(map(repr, values))) != len(values):
                raise ValueError(f"MethodSpec {self.name!r}: grid[{key!r}] repeats a value: {values!r}")
            if key == "n_clusters" and not all(isinstance(v, str) and RELATIVE_K.fullmatch(v) for v in values):
                raise ValueError(f"MethodSpec {self.name!r}: grid['n_clusters'] takes values relative to the given k "
                                 f"('k', 'k-1', 'k+1', ...; e.g. K_AROUND), got {values!r}")
            grid[str(key)] = tuple(values)
        size = math.prod(len(v) for v in grid.values()) if grid else 0
        if size > MAX_GRID_SIZE:
            raise ValueError(f"MethodSpec {self.name!r}: grid has {size} combinations, more than "
                             f"MAX_GRID_SIZE={MAX_GRID_SIZE}; every one is fitted once per fold, so drop values")
        object.__setattr__(self, "grid", grid)

    def grid_combinations(self) -> list[dict]:
        """Every combination of :attr:`grid`, in grid order (the last parameter varies fastest)."""
        keys = list(self.grid)
        return [dict(zip(keys, values)) for values in itertools.product(*self.grid.values())]

    def loaded(self) -> "MethodSpec":
        """This spec with ``estimator`` imported (a no-op when it is a class)."""
        if not isinstance(self.estimator, str):
            return self
        modname, _, attr = self.estimator.partition(":")
        try:
            cls = getattr(importlib.import_module(modname), attr)
        except (ImportError, AttributeError) as exc:
            raise ImportError(
                f"method {self.name!r}: cannot import its estimator {self.estimator!r}: {exc}"
            ) from exc
        return dataclasses.replace(self, estimator=cls)


@dataclasses.dataclass(frozen=True)
class DatasetSpec:
    """A loadable data set: ``loader(**options) -> Dataset``.

    ``not_in_seed`` names the loader options that change how the data is read
    or scaled but not which points and labels it has (where the files live,
    preprocessing). Trial seeds leave them out, so such variants of one data
    set see the same constraint sets (paired).
    """

    name: str
    loader: Callable[..., Any]
    summary: str = ""
    n_samples: int | None = None
    n_features: int | None = None
    n_classes: int | None = None
    source: str = ""
    not_in_seed: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class SchemeSpec:
    """A constraint scheme: ``func(y, *, rng, **params) -> Constraints``."""

    name: str
    func: Callable[..., Any]
    summary: str = ""


@dataclasses.dataclass(frozen=True)
class NoiseSpec:
    """A noise injector.

    ``stage="labels"``: ``func(y, *, rate, rng) -> y_noisy`` applied before the
    constraints are drawn. ``stage="constraints"``:
    ``func(constraints, *, rate, rng) -> Constraints`` applied after.
    """

    name: str
    func: Callable[..., Any]
    stage: str
    summary: str = ""

    def __post_init__(self):
        if self.stage not in ("labels", "constraints"):
            raise ValueError(
                f"NoiseSpec {self.name!r}: stage must be 'labels' or 'constraints', got {self.stage!r}"
            )


#: Which way is up for a metric (:attr:`MetricSpec.direction`): ``"higher"`` or ``"lower"`` is
#: better and the metric is ranked; ``"none"``: a count or diagnostic that reports show but never
#: rank, call "better" or put in a Friedman test / CD diagram (e.g. ``n_clusters_found``).
DIRECTIONS = ("higher", "lower", "none")


def lazy_function(target: str) -> Callable[..., Any]:
    """A function that imports ``"package.module:function"`` on its first call and calls it.

    For specs whose ``func`` lives in a heavy module (a solver): a plugin's ``__init__`` names
    it without importing it, so listing the registry loads no solver. The wrapper's
    ``__module__`` is the target module, so provenance hashes the file that holds the code.
    """
    modname, sep, attr = target.partition(":")
    if not sep or not modname or not attr:
        raise ValueError(f"lazy_function: {target!r} must be a 'package.module:function' string")

    def call(*args, **kwargs):
        try:
            func = getattr(importlib.import_module(modname), attr)
        except (ImportError, AttributeError) as exc:
            raise ImportError(f"cannot import {target!r}: {exc}") from exc
        return func(*args, **kwargs)

    call.__module__, call.__name__, call.__qualname__ = modname, attr, attr
    return call


@dataclasses.dataclass(frozen=True)
class MetricSpec:
    """A metric: ``func(y_true, y_pred, *, constraints=None) -> float``.

    ``direction`` (one of :data:`DIRECTIONS`) tells reports which way is up and
    whether to rank the metric at all; declare it. ``greater_is_better`` is the
    older spelling (True = ``"higher"``, False = ``"lower"``); a spec that gives
    neither is read as ``"higher"`` with a warning. After construction both are
    set (``greater_is_better`` is None for ``"none"``). ``bounds`` is the range
    the metric can take (plots clip confidence intervals to it); ``label`` is a
    short axis label (default: the name).
    """

    name: str
    func: Callable[..., float]
    summary: str = ""
    greater_is_better: bool | None = None
    needs_constraints: bool = False
    direction: str | None = None
    bounds: tuple[float, float] = (-float("inf"), float("inf"))
    label: str = ""
    #: called as ``func(y_true, y_pred, X=X)`` with the features the method was fitted on (``inertia``);
    #: like a constraint metric it sees every point (no ``_unconstrained`` column); with
    #: ``needs_constraints`` too it gets both (``lower_bound``: ``func(y_true, y_pred, constraints=, X=)``)
    needs_features: bool = False

    def __post_init__(self):
        legacy = self.greater_is_better
        direction = self.direction
        if direction is None:
            if legacy is None:
                warnings.warn(f"metric {self.name!r} declares no direction; read as 'higher is better' "
                              f"(declare MetricSpec(..., direction='higher' | 'lower' | 'none'))",
                              UserWarning, stacklevel=3)
            direction = "lower" if legacy is False else "higher"
        if direction not in DIRECTIONS:
            raise ValueError(f"MetricSpec {self.name!r}: direction must be one of {DIRECTIONS}, got {direction!r}")
        if legacy is not None and direction != ("higher" if legacy else "lower"):
            raise ValueError(f"MetricSpec {self.name!r}: greater_is_better={legacy} contradicts "
                             f"direction={direction!r}; give direction only")
        lo, hi = (float(b) for b in self.bounds)
        if not lo < hi:
            raise ValueError(f"MetricSpec {self.name!r}: bounds must be (low, high) with low < high, "
                             f"got {self.bounds!r}")
        object.__setattr__(self, "direction", direction)
        object.__setattr__(self, "greater_is_better", None if direction == "none" else direction == "higher")
        object.__setattr__(self, "bounds", (lo, hi))
        object.__setattr__(self, "label", self.label or self.name)


@dataclasses.dataclass(frozen=True)
class TunerSpec:
    """A model-selection procedure: chooses a method's hyper-parameters from its supervision alone.

    ``select(make_estimator, X, constraints, grid, *, default, n_folds, random_state)``
    returns an object with ``params`` (the chosen combination, a dict), ``n_fits``,
    ``scores`` and ``note`` (:class:`ccbench_plugins.selection.cvcp.Selection`).
    ``make_estimator(**params)`` builds the method with ``params`` over its cell's
    configuration; the selector is never given the true labels. ``select`` may be a
    ``"module:function"`` string, imported on first use.
    """

    name: str
    select: Callable[..., Any] | str
    summary: str = ""
    paper: str = ""

    def loaded(self) -> "TunerSpec":
        """This spec with ``select`` imported (a no-op when it is a function)."""
        if not isinstance(self.select, str):
            return self
        modname, _, attr = self.select.partition(":")
        try:
            func = getattr(importlib.import_module(modname), attr)
        except (ImportError, AttributeError) as exc:
            raise ImportError(f"tuner {self.name!r}: cannot import {self.select!r}: {exc}") from exc
        return dataclasses.replace(self, select=func)


@dataclasses.dataclass(frozen=True)
class QueryStrategySpec:
    """An active query strategy: which pair to ask the oracle next (issue 53).

    ``strategy`` is a class (or a ``"module:Class"`` string, imported on first use) whose
    instances have ``next_pair(X, asked, answers, labels, rng) -> (i, j)``: ``X`` the (n, d)
    features, ``asked`` the (q, 2) int array of the pairs asked so far, in order, ``answers`` the
    (q,) bool array of their answers (True = must-link), ``labels`` the current partition of the
    n points (None before any fit), ``rng`` a ``numpy.random.Generator``. The pair returned must
    be two distinct points in ``range(n)``, not asked before (:func:`checked_pair`).
    ``needs_n_clusters``: the constructor takes the number of clusters ``n_clusters``.
    """

    name: str
    strategy: type | str
    summary: str = ""
    paper: str = ""
    needs_n_clusters: bool = False

    def __post_init__(self):
        if isinstance(self.strategy, str) and ":" not in self.strategy:
            raise ValueError(f"QueryStrategySpec {self.name!r}: strategy {self.strategy!r} must be a class "
                             f"or a 'package.module:ClassName' string")

    def loaded(self) -> "QueryStrategySpec":
        """This spec with ``strategy`` imported (a no-op when it is a class)."""
        if not isinstance(self.strategy, str):
            return self
        modname, _, attr = self.strategy.partition(":")
        try:
            cls = getattr(importlib.import_module(modname), attr)
        except (ImportError, AttributeError) as exc:
            raise ImportError(f"query strategy {self.name!r}: cannot import {self.strategy!r}: {exc}") from exc
        return dataclasses.replace(self, strategy=cls)


def checked_pair(pair, n_samples: int, asked=None, who: str = "the query strategy") -> tuple[int, int]:
    """``pair`` as ``(i, j)`` ints, or a ``ValueError`` naming what is wrong with it.

    A proposed pair must be two whole numbers, distinct, each in ``range(n_samples)``, and
    (in either order) not among ``asked`` (a (q, 2) array): asking again wastes a question
    and, under a non-persistent noisy oracle, changes what the answers mean.
    """
    import numpy as np

    try:
        i, j = pair
        if int(i) != i or int(j) != j:
            raise TypeError
        i, j = int(i), int(j)
    except (TypeError, ValueError):
        raise ValueError(f"{who} returned {pair!r}; next_pair must return two point indices (i, j)") from None
    if not (0 <= i < n_samples and 0 <= j < n_samples):
        raise ValueError(f"{who} returned the pair ({i}, {j}), outside the {n_samples} points (indices 0.."
                         f"{n_samples - 1})")
    if i == j:
        raise ValueError(f"{who} returned the pair ({i}, {j}) of a point with itself; propose two distinct points")
    if asked is not None and len(asked):
        asked = np.asarray(asked).reshape(-1, 2)
        lo, hi = min(i, j), max(i, j)
        if np.any((asked.min(1) == lo) & (asked.max(1) == hi)):
            raise ValueError(f"{who} returned the pair ({i}, {j}), already asked; propose a pair not in `asked`")
    return i, j
