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
import sys
import threading
import warnings
from collections.abc import Iterable
from typing import Any

import pluggy

from . import hookspecs
from .specs import (  # noqa: F401 - re-exported: the registry is where plugins look them up
    DIRECTIONS,
    K_AROUND,
    SUPERVISION_KINDS,
    DatasetSpec,
    MemoryModel,
    MethodSpec,
    MetricSpec,
    NoiseSpec,
    QueryStrategySpec,
    SchemeSpec,
    TimeModel,
    TunerSpec,
    checked_pair,
    lazy_function,
)

__all__ = [
    "K_AROUND",
    "MethodSpec",
    "MemoryModel",
    "TimeModel",
    "DatasetSpec",
    "SchemeSpec",
    "NoiseSpec",
    "MetricSpec",
    "TunerSpec",
    "QueryStrategySpec",
    "checked_pair",
    "DIRECTIONS",
    "lazy_function",
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
    "get_tuner_spec",
    "list_tuners",
    "get_query_strategy_spec",
    "list_query_strategies",
    "make_query_strategy",
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

class UnknownNameError(KeyError, ValueError):
    """A registry look-up used a name no plugin provides."""

    def __str__(self):  # KeyError would repr() the message
        return str(self.args[0])


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
            _register(pm, _load_with_time_limit(ep), ep.name)
        except Exception as exc:  # one broken package must not take the others down
            dist = ep.dist.name if ep.dist is not None else "?"
            broken = BrokenPlugin(dist, ep.value, f"{type(exc).__name__}: {exc}")
            _broken.append(broken)
            # warn_explicit at a location with no source text: the warning prints as one line, not followed
            # by a line of ccbench's code ("_pm = _new_plugin_manager()") that says nothing to the user
            warnings.warn_explicit(f"ccbench: {broken}; its methods are unavailable", RuntimeWarning,
                                   filename=f"<ccbench plugin {ep.name}>", lineno=1, module=__name__)
    return pm


#: Seconds an entry-point plugin's import may take before start-up goes on without it, and a
#: ``plugins=[...]`` module's before the command stops naming it (``CCBENCH_PLUGIN_IMPORT_TIMEOUT``):
#: one package that hangs at import must not hang every command. Counted by the importing thread's
#: own clocks, not the wall's (:func:`_load_with_time_limit`): a busy machine does not use it up.
PLUGIN_IMPORT_TIMEOUT_ENV = "CCBENCH_PLUGIN_IMPORT_TIMEOUT"
DEFAULT_PLUGIN_IMPORT_TIMEOUT = 60.0


def _thread_times(thread: threading.Thread) -> tuple[float, float] | None:
    """``(cpu, runnable)`` seconds of ``thread`` so far: time on a CPU, and time ready to run but
    waiting for one (Linux's ``/proc/self/task/<tid>/schedstat``, first two fields, ns). None where
    the kernel does not say (not Linux, or the thread has ended)."""
    try:
        with open(f"/proc/self/task/{thread.native_id}/schedstat", "rb") as fh:
            on_cpu, runnable = fh.read().split()[:2]
    except (OSError, ValueError, TypeError):
        return None
    return int(on_cpu) / 1e9, int(runnable) / 1e9


def _import_budget_used(thread: threading.Thread, started: float, now: float) -> tuple[float, float]:
    """``(cpu, stalled)`` seconds of the importing ``thread`` since ``started`` (its start, on
    ``time.monotonic``): the CPU it used, and the wall time it neither ran nor waited for a CPU

        stalled = wall - cpu - runnable

    (asleep, blocked on a lock, a pipe or a network). Each is measured against the time limit on its
    own. Without the kernel's per-thread figures both are the wall time (the limit is then by wall)."""
    wall = now - started
    times = _thread_times(thread)
    if times is None:
        return wall, wall
    cpu, runnable = times
    return cpu, max(wall - cpu - runnable, 0.0)


def _load_with_time_limit(ep, load_plugin=None, name: str | None = None):
    """``ep.load()`` (or ``load_plugin()``, named ``name``) in a daemon thread, given up on
    (``TimeoutError``) when that thread has used the time limit ``L`` in either of two ways:

    - ``cpu > L``: it computed for ``L`` seconds (a loop at import);
    - ``stalled > L``: it spent ``L`` seconds of wall neither running nor waiting for a CPU (it
      sleeps or waits on something that does not come: it hangs at import).

    The choice: time the import by the importing thread's own clocks, not the wall's. On a busy
    machine a healthy import spends most of its wall waiting for a CPU (``runnable``), which counts
    against neither, so it is not dropped for the machine's load (issue 54, item 18); a hang or a
    loop is caught after ``L`` seconds of either on any machine. The thread is left behind (an import
    cannot be interrupted); the command goes on without it."""
    import os
    import time

    try:
        limit = float(os.environ.get(PLUGIN_IMPORT_TIMEOUT_ENV, DEFAULT_PLUGIN_IMPORT_TIMEOUT))
    except ValueError:
        limit = DEFAULT_PLUGIN_IMPORT_TIMEOUT
    box: dict[str, Any] = {}

    def load():
        try:
            box["plugin"] = load_plugin() if load_plugin is not None else ep.load()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=load, daemon=True, name=f"ccbench-import-{name or ep.name}")
    started = time.monotonic()
    worker.start()
    while True:
        # each measure grows no faster than the wall, so waiting for the larger one's remainder
        # never overshoots the limit
        worker.join(max(limit - max(_import_budget_used(worker, started, time.monotonic())), 0.0) + 0.01)
        if not worker.is_alive():
            break
        cpu, stalled = _import_budget_used(worker, started, time.monotonic())
        if cpu > limit:
            raise TimeoutError(f"its import did not finish within {limit:g} s of CPU (a loop at import?); "
                               f"fix or uninstall the package, or raise {PLUGIN_IMPORT_TIMEOUT_ENV}")
        if stalled > limit:
            raise TimeoutError(f"its import did not finish within {limit:g} s (it waited {stalled:.1f} s without "
                               f"running or waiting for a CPU: it hangs at import?); fix or uninstall the "
                               f"package, or raise {PLUGIN_IMPORT_TIMEOUT_ENV}")
    if "error" in box:
        raise box["error"]
    return box["plugin"]


def _import_and_register(pm: pluggy.PluginManager, modname: str):
    if pm.get_plugin(modname) is not None:
        return pm.get_plugin(modname)
    try:  # under the entry points' time limit: a module that hangs at import must not hang a sweep silently
        module = sys.modules.get(modname)
        if module is None or getattr(getattr(module, "__spec__", None), "_initializing", False):  # none, or half
            module = _load_with_time_limit(None, lambda: importlib.import_module(modname), modname)
    except Exception as exc:
        raise ImportError(f"could not import ccbench plugin module {modname!r}: {exc}") from exc
    if pm.is_registered(module):  # installed (its entry point registered it) and named again in plugins=[...]
        return module
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


def _lookup(kind: str, name: str, what: str, plural: str | None = None):
    table = _specs(kind)
    try:
        return table[name]
    except KeyError:
        known = ", ".join(table) or "(none registered)"
        note = "".join(f"; note: {b}" for b in _broken)
        raise UnknownNameError(f"unknown {what} {name!r}; known {plural or what + 's'}: {known}{note}") from None


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


def get_tuner_spec(name: str) -> TunerSpec:
    """The model-selection procedure registered as ``name``, its ``select`` imported."""
    spec = _lookup("tuners", name, "tuner")
    if isinstance(spec.select, str):
        spec = _caches["tuners"][name] = spec.loaded()
    return spec


def list_tuners() -> list[TunerSpec]:
    return list(_specs("tuners").values())


def get_query_strategy_spec(name: str) -> QueryStrategySpec:
    """The active query strategy registered as ``name``, its class imported."""
    spec = _lookup("query_strategies", name, "query strategy", "query strategies")
    if isinstance(spec.strategy, str):
        spec = _caches["query_strategies"][name] = spec.loaded()
    return spec


def list_query_strategies() -> list[QueryStrategySpec]:
    """All registered query strategies, sorted by name (their classes not imported)."""
    return list(_specs("query_strategies").values())


def make_query_strategy(name: str, **params):
    """Build the query strategy registered as ``name`` with ``params`` (``n_clusters=3``, ...)."""
    spec = get_query_strategy_spec(name)
    try:
        return spec.strategy(**params)
    except TypeError as exc:
        import inspect

        accepted = [p for p in inspect.signature(spec.strategy).parameters if p != "self"]
        raise TypeError(f"query strategy {name!r} does not accept {sorted(params)}: {exc}; "
                        f"its parameters are {accepted}") from exc


def list_datasets() -> list[DatasetSpec]:
    return list(_specs("datasets").values())


def dataset_suites() -> dict[str, tuple[str, ...]]:
    """Every registered suite of data sets (hook ``ccbench_dataset_suites``), by name."""
    if "dataset_suites" not in _caches:
        table: dict[str, tuple[str, ...]] = {}
        for suites in reversed(get_plugin_manager().hook.ccbench_dataset_suites()):  # later registrations win
            table.update({name: tuple(members) for name, members in (suites or {}).items()})
        _caches["dataset_suites"] = dict(sorted(table.items()))
    return _caches["dataset_suites"]


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
