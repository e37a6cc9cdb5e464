"""Estimator base class and input validation shared by every method plugin.

Validation lives at the boundary (``fit``), as in scikit-learn: plugins
declare their hyper-parameters in a class-level ``_parameter_constraints``
table and call :meth:`ConstrainedClusterer._validate_fit` once; their private
cores then trust their inputs.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.exceptions import ConvergenceWarning

from .constraints import Constraints

__all__ = [
    "ConstrainedClusterer",
    "ConvergenceWarning",
    "InfeasibleConstraintsError",
    "SolutionNotFoundError",
    "InconsistentConstraintsWarning",
    "DataScaleWarning",
    "warn_if_distances_overflow",
    "InsufficientMemoryError",
    "check_memory",
    "Interval",
    "Options",
    "InsufficientSupervisionError",
    "check_X",
    "check_constraints",
    "check_n_clusters",
    "check_random_state",
]


class InfeasibleConstraintsError(ValueError):
    """Hard constraints that no clustering can satisfy (harness status ``infeasible``)."""


class SolutionNotFoundError(RuntimeError):
    """A method's search met no clustering satisfying its hard constraints, which does not
    prove that none exists (a greedy or budgeted search gave up; harness status ``not_found``)."""


class InsufficientSupervisionError(ValueError):
    """The supervision a trial drew gives the method nothing to work with (metric learning without
    a single cannot-link pair): harness status ``skipped``, not a failure, and not retried."""


class InsufficientMemoryError(ValueError, MemoryError):
    """A method's dense arrays would not fit in the memory available now (refused before allocating)."""


class DataScaleWarning(UserWarning):
    """The data's scale makes the method's arithmetic meaningless (squared distances overflow)."""


def warn_if_distances_overflow(X: np.ndarray, owner) -> bool:
    """Warn (:class:`DataScaleWarning`) when squared Euclidean distances over ``X`` overflow float64.

    Methods whose distance code stays silent (scipy's ``cdist``, numba kernels) would
    otherwise see every distance as ``inf`` and return a meaningless clustering (ARI 0)
    with no word; numpy-based methods at least emit numpy's own ``RuntimeWarning``.
    Returns True when it warned. Call it after :meth:`ConstrainedClusterer._validate_fit`.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        span = np.max(X, axis=0) - np.min(X, axis=0)
        squared = float(np.sum(span * span))
    if np.isfinite(squared):
        return False
    name = owner if isinstance(owner, str) else type(owner).__name__
    largest = float(np.max(np.abs(X)))
    warnings.warn(
        f"{name}: the data reach {largest:.3g} in absolute value, so squared distances overflow "
        f"float64 (inf) and every pair of points looks equally far: the clustering means nothing; "
        f"scale the data first (divide by its largest absolute value, or standardise each feature)",
        DataScaleWarning, stacklevel=3,
    )
    return True


def available_memory() -> int | None:
    """Bytes the OS can give without swapping (``MemAvailable``), or None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_memory(n_bytes: int, *, what: str, fix: str) -> None:
    """Refuse (:class:`InsufficientMemoryError`) when ``n_bytes`` exceed the available memory.

    Called by dense methods before they allocate, so a too-large problem is an
    error row naming the estimate and the alternative, not an out-of-memory kill.
    """
    free = available_memory()
    if free is not None and n_bytes > free:
        raise InsufficientMemoryError(
            f"{what} needs about {n_bytes / 2**30:.1f} GiB but {free / 2**30:.1f} GiB is available; {fix}"
        )


class InconsistentConstraintsWarning(UserWarning):
    """The constraints contradict each other; the method fits anyway (its own policy decides how)."""


@dataclass(frozen=True)
class Interval:
    """A numeric range ``[low, high]`` (bounds optional, closedness configurable)."""

    kind: type
    low: float | None = None
    high: float | None = None
    closed: str = "both"  # "both", "left", "right", "neither"
    allow_inf: bool = False

    def check(self, value) -> bool:
        if isinstance(value, bool):
            return False
        if self.kind is numbers.Integral and not isinstance(value, numbers.Integral):
            return False
        if not isinstance(value, numbers.Real):
            return False
        if np.isnan(value):
            return False
        if np.isinf(value):
            return self.allow_inf and (
                (value > 0 and self.high is None) or (value < 0 and self.low is None)
            )
        lo_ok = self.low is None or (value >= self.low if self.closed in ("both", "left") else value > self.low)
        hi_ok = self.high is None or (value <= self.high if self.closed in ("both", "right") else value < self.high)
        return lo_ok and hi_ok

    def __str__(self):
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        kind = "int" if self.kind is numbers.Integral else "float"
        low = "-inf" if self.low is None else self.low
        high = "inf" if self.high is None else self.high
        return f"{kind} in {left}{low}, {high}{right}"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values."""

    values: frozenset

    def __init__(self, *values):
        object.__setattr__(self, "values", frozenset(values))

    def check(self, value) -> bool:
        try:
            return value in self.values
        except TypeError:
            return False

    def __str__(self):
        return "one of " + ", ".join(sorted(map(repr, self.values)))


def _satisfies(value, rule) -> bool:
    if rule is None:
        return value is None
    if isinstance(rule, type):
        return isinstance(value, rule)
    if rule == "random_state":
        return value is None or isinstance(value, (numbers.Integral, np.random.Generator, np.random.RandomState))
    if rule == "array-like":
        return hasattr(value, "__len__") or hasattr(value, "__array__")
    if callable(rule) and not hasattr(rule, "check"):
        return bool(rule(value))
    return rule.check(value)


def _describe(rule) -> str:
    if rule is None:
        return "None"
    if isinstance(rule, type):
        return rule.__name__
    return str(rule)


def check_random_state(seed) -> np.random.Generator:
    """Turn ``None``, an int, a ``Generator`` or a ``RandomState`` into a ``Generator``."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(2**31))
    return np.random.default_rng(seed)


def check_X(X, *, min_samples: int = 2, name: str = "X") -> np.ndarray:
    """X as a C-contiguous float64 (n, d) array of finite values with n >= min_samples."""
    if hasattr(X, "tocsr") or hasattr(X, "sparse"):
        raise TypeError(
            f"{name} is a sparse matrix; sparse input is not supported: convert it with "
            f"X.toarray() (similarities are dense N x N anyway)"
        )
    if np.iscomplexobj(X):
        raise ValueError(f"Complex data not supported: {name} must be real-valued")
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{name} must be a numeric array: {exc}") from exc
    if arr.ndim == 1:
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features), got a 1-D array; "
            f"reshape with X.reshape(-1, 1) for a single feature"
        )
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}")
    if arr.shape[0] < min_samples:
        raise ValueError(f"{name} has {arr.shape[0]} sample(s); clustering needs at least {min_samples}")
    if arr.shape[1] < 1:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"{name} contains NaN or infinity (first at row {bad[0]}, column {bad[1]}); "
            f"impute or drop those rows first"
        )
    return np.ascontiguousarray(arr)


def check_constraints(constraints, n_samples: int) -> Constraints:
    """A :class:`Constraints` for ``n_samples`` points (empty when ``None``)."""
    if constraints is None:
        return Constraints.empty(n_samples)
    if not isinstance(constraints, Constraints):
        raise TypeError(
            f"constraints must be a ccbench.Constraints, got {type(constraints).__name__}; "
            f"build one with Constraints(must_link, cannot_link, n_samples=n)"
        )
    if constraints.n_samples != n_samples:
        raise ValueError(
            f"constraints refer to {constraints.n_samples} samples but X has {n_samples}"
        )
    return constraints


def check_n_clusters(n_clusters, n_samples: int) -> int:
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, numbers.Integral) or n_clusters < 1:
        raise ValueError(f"n_clusters must be a positive int, got {n_clusters!r}")
    if n_clusters > n_samples:
        raise ValueError(f"n_clusters={n_clusters} exceeds the number of samples ({n_samples})")
    return int(n_clusters)


class ConstrainedClusterer(ClusterMixin, BaseEstimator):
    """Base class for ccbench estimators.

    Subclasses implement ``fit(X, y=None, *, constraints=None)`` that starts
    with ``X, cons = self._validate_fit(X, constraints)`` and sets ``labels_``.
    """

    _parameter_constraints: dict = {}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        return tags

    def _validate_params(self):
        for name, rules in self._parameter_constraints.items():
            value = getattr(self, name)
            if not any(_satisfies(value, r) for r in rules):
                allowed = " or ".join(_describe(r) for r in rules)
                raise ValueError(
                    f"{type(self).__name__}: parameter {name!r} must be {allowed}, got {value!r}"
                )

    def _validate_fit(self, X, constraints):
        self._validate_params()
        columns = getattr(X, "columns", None)
        if columns is not None and all(isinstance(c, str) for c in columns):
            self.feature_names_in_ = np.asarray(list(columns), dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        X = check_X(X)
        self.n_features_in_ = X.shape[1]
        cons = check_constraints(constraints, X.shape[0])
        conflicts = cons.n_conflicts()
        if conflicts:
            warnings.warn(
                f"{type(self).__name__}: {conflicts} cannot-link(s) join points that must-links (or one revealed "
                f"label) chain together, or must-links join points of different revealed labels, so no "
                f"clustering meets every constraint (Constraints.is_consistent() is False)",
                InconsistentConstraintsWarning, stacklevel=3,
            )
        if hasattr(self, "n_clusters") and self.n_clusters is not None:
            check_n_clusters(self.n_clusters, X.shape[0])
        return X, cons

    def fit_predict(self, X, y=None, *, constraints=None):
        return self.fit(X, y, constraints=constraints).labels_

