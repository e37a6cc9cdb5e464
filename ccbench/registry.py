"""The plugin registry: one pluggy manager, specs by kind, look-up by name.

Start-up follows pytest: create the manager, add the hook specs, register the
core built-ins, then every plugin of the ``ccbench`` entry-point group (the
built-in algorithm families are advertised there too), each followed by
``check_pending()`` so a misspelt hook is an error rather than silently ignored.

One broken package does not take the others down: an entry point that fails to
import or to validate is unregistered, recorded (:func:`broken_plugins`, naming
the distribution and the module) and reported with a ``RuntimeWarning``; the
look-up errors and ``ccbench plugins`` name it. A plugin module the caller asks
for explicitly (:func:`load_plugins`) raises instead, naming the module.
"""

from __future__ import annotations

import dataclasses
import importlib
import threading
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import pluggy

from . import hookspecs

__all__ = [
    "MethodSpec",
    "MemoryModel",
    "TimeModel",
    "DatasetSpec",
    "SchemeSpec",
    "NoiseSpec",
    "MetricSpec",
    "DIRECTIONS",
    "get_plugin_manager",
    "register_plugin",
    "load_plugins",
    "make_method",
    "list_methods",
    "get_method_spec",
    "get_dataset_spec",
    "get_scheme_spec",
    "get_noise_spec",
    "get_metric_spec",
    "list_datasets",
    "list_schemes",
    "list_noise",
    "list_metrics",
    "UnknownNameError",
    "BrokenPlugin",
    "broken_plugins",
]

# Built-in core plugins (data sets, schemes, noise, metrics). Built-in
# *algorithms* come through the entry-point group like any third-party method.
BUILTIN_PLUGINS = ("ccbench._builtin",)

SUPERVISION_KINDS = ("must_link", "cannot_link", "labels")


class UnknownNameError(KeyError, ValueError):
    """A registry look-up used a name no plugin provides."""

    def __str__(self):  # KeyError would repr() the message
        return str(self.args[0])


@dataclasses.dataclass(frozen=True)
class MemoryModel:
    """A method's peak memory as a function of the problem size, declared with its spec.

    ``bytes(n, d) = 8 * (dense * n**2 + linear * n * d)``: ``dense`` counts the
    n x n float64 arrays a fit holds at once, ``linear`` the n x d ones. The
    protocol compares it with the memory available before fitting
    (:func:`ccbench.protocol.memory_refusal`) and records a ``refused`` row naming
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
    """A method's fit time against n, measured: ``seconds`` at ``n`` points, growing as n**exponent.

    Declared from the scale table (``tests/benchmarks/scale_table.py``, d = 10, 0.01 n pairs,
    the 2-core reference machine). With the cell option ``time_budget`` set, the protocol
    refuses before fitting a cell whose predicted time exceeds it
    (:func:`ccbench.protocol.size_refusal`).
    """

    n: int
    seconds: float
    exponent: float

    def predict(self, n_samples: int) -> float:
        return self.seconds * (n_samples / self.n) ** self.exponent

    def largest_n(self, seconds: float = 60.0) -> int:
        """The n at which the predicted fit time reaches ``seconds``."""
        return int(self.n * (seconds / self.seconds) ** (1.0 / self.exponent))

    def describe(self) -> str:
        return f"O(n^{self.exponent:g}); {self.seconds:.2g} s at n={self.n:,}; 60 s at n~{self.largest_n():,}"


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
    constraint_kind : {"none", "soft", "hard"}
        Whether constraints are penalised (soft) or enforced (hard).
    memory : MemoryModel, optional
        Peak memory against n and d; a problem it says will not fit is refused
        before fitting (status ``refused``). ``None``: O(n d), never refused.
    time : TimeModel, optional
        Measured fit time against n; with ``time_budget`` set, a cell predicted
        to take longer is refused before fitting.
    uses : tuple of str
        Registry names of the methods this one builds through ``make_method``
        (a composition across families): their code is part of this method's
        ``code.method_hash`` (:mod:`ccbench.provenance`).
    """

    name: str
    estimator: type | str
    summary: str
    paper: str = ""
    supervision: tuple[str, ...] = ()
    needs_n_clusters: bool = False
    constraint_kind: str = "none"
    memory: MemoryModel | None = None
    time: TimeModel | None = None
    uses: tuple[str, ...] = ()

    def __post_init__(self):
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


_lock = threading.Lock()
_pm: pluggy.PluginManager | None = None


@dataclasses.dataclass(frozen=True)
class BrokenPlugin:
    """An entry-point plugin that could not be registered (start-up goes on without it)."""

    distribution: str
    module: str
    error: str

    def __str__(self):
        return f"plugin {self.module!r} from the package {self.distribution!r} failed to load: {self.error}"


_broken: list[BrokenPlugin] = []


def broken_plugins() -> list[BrokenPlugin]:
    """Entry-point plugins that failed to import or to validate, with the reason."""
    get_plugin_manager()
    return list(_broken)


def _new_plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager("ccbench")
    pm.add_hookspecs(hookspecs)
    for modname in BUILTIN_PLUGINS:
        _import_and_register(pm, modname)
    _broken.clear()
    from importlib.metadata import entry_points

    for ep in entry_points(group="ccbench"):
        if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
            continue
        try:
            _register(pm, ep.load(), ep.name)
        except Exception as exc:  # one broken package must not take the others down
            dist = ep.dist.name if ep.dist is not None else "?"
            broken = BrokenPlugin(dist, ep.value, f"{type(exc).__name__}: {exc}")
            _broken.append(broken)
            warnings.warn(f"ccbench: {broken}; its methods are unavailable", RuntimeWarning, stacklevel=2)
    return pm


def _import_and_register(pm: pluggy.PluginManager, modname: str):
    if pm.get_plugin(modname) is not None:
        return pm.get_plugin(modname)
    try:
        module = importlib.import_module(modname)
    except Exception as exc:
        raise ImportError(f"could not import ccbench plugin module {modname!r}: {exc}") from exc
    return _register(pm, module, modname)


def _register(pm: pluggy.PluginManager, plugin: Any, name: str | None):
    """Register ``plugin``; a hook without a spec unregisters it again and names it."""
    pm.register(plugin, name=name)
    try:
        pm.check_pending()  # a hook without a spec is an error, not silently ignored
    except pluggy.PluginValidationError as exc:
        pm.unregister(plugin)
        raise pluggy.PluginValidationError(
            plugin, f"ccbench plugin {name or plugin!r} was not registered: {exc}"
        ) from exc
    finally:
        _clear_caches()
    return plugin


def get_plugin_manager() -> pluggy.PluginManager:
    """Return the process-wide plugin manager, creating it on first use."""
    global _pm
    with _lock:
        if _pm is None:
            _pm = _new_plugin_manager()
        return _pm


def register_plugin(plugin: Any, name: str | None = None) -> Any:
    """Register a plugin object or module (by object or dotted module name).

    Returns the registered plugin. Registering the same name twice is a no-op.
    """
    pm = get_plugin_manager()
    if isinstance(plugin, str):
        return _import_and_register(pm, plugin)
    name = name or getattr(plugin, "__name__", None)
    if name is not None and pm.get_plugin(name) is not None:
        return pm.get_plugin(name)
    return _register(pm, plugin, name)


def unregister_plugin(name: str) -> None:
    """Remove a plugin registered under ``name`` (used by tests)."""
    pm = get_plugin_manager()
    plugin = pm.get_plugin(name)
    if plugin is not None:
        pm.unregister(plugin)
    _clear_caches()


def load_plugins(modules: Iterable[str]) -> None:
    """Import and register extra plugin modules (``plugins:`` in a config)."""
    for modname in modules or ():
        register_plugin(str(modname))


# -- look-up ------------------------------------------------------------------

_caches: dict[str, dict[str, Any]] = {}


def _clear_caches():
    _caches.clear()


def _specs(kind: str) -> dict[str, Any]:
    if kind not in _caches:
        hook = getattr(get_plugin_manager().hook, f"ccbench_{kind}")
        table: dict[str, Any] = {}
        # pluggy calls the last-registered plugin first; reverse it so a later
        # registration overrides an earlier one of the same name.
        for specs in reversed(hook()):
            for spec in specs or ():
                table[spec.name] = spec
        _caches[kind] = dict(sorted(table.items()))
    return _caches[kind]


def _lookup(kind: str, name: str, what: str):
    table = _specs(kind)
    try:
        return table[name]
    except KeyError:
        known = ", ".join(table) or "(none registered)"
        note = "".join(f"; note: {b}" for b in _broken)
        raise UnknownNameError(f"unknown {what} {name!r}; known {what}s: {known}{note}") from None


def get_method_spec(name: str) -> MethodSpec:
    spec = _lookup("methods", name, "method")
    if isinstance(spec.estimator, str):
        spec = _caches["methods"][name] = spec.loaded()
    return spec


def get_dataset_spec(name: str) -> DatasetSpec:
    return _lookup("datasets", name, "data set")


def get_scheme_spec(name: str) -> SchemeSpec:
    return _lookup("constraint_schemes", name, "constraint scheme")


def get_noise_spec(name: str) -> NoiseSpec:
    return _lookup("noise_injectors", name, "noise injector")


def get_metric_spec(name: str) -> MetricSpec:
    return _lookup("metrics", name, "metric")


def list_methods(*, load: bool = True) -> list[MethodSpec]:
    """All registered methods, sorted by name.

    ``load=False`` leaves ``"module:Class"`` estimators as strings, so listing
    imports no estimator module (``ccbench plugins``).
    """
    if load:
        return [get_method_spec(name) for name in _specs("methods")]
    return list(_specs("methods").values())


def list_datasets() -> list[DatasetSpec]:
    return list(_specs("datasets").values())


def list_schemes() -> list[SchemeSpec]:
    return list(_specs("constraint_schemes").values())


def list_noise() -> list[NoiseSpec]:
    return list(_specs("noise_injectors").values())


def list_metrics() -> list[MetricSpec]:
    return list(_specs("metrics").values())


def make_method(name: str, **params):
    """Build the estimator registered as ``name`` with hyper-parameters ``params``.

    >>> est = make_method("kmeans", n_clusters=3)  # doctest: +SKIP
    """
    spec = get_method_spec(name)
    try:
        return spec.estimator(**params)
    except TypeError as exc:
        import inspect

        accepted = [p for p in inspect.signature(spec.estimator).parameters if p != "self"]
        unknown = sorted(set(params) - set(accepted)) or sorted(params)
        raise TypeError(
            f"method {name!r} does not accept {unknown}: {exc}; its parameters are {accepted}"
        ) from exc
