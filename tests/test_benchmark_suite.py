"""The asv suite itself: asv silently skips abstract classes, so a misnamed
``make_data`` / ``make_estimator`` would drop a benchmark without any error."""

import importlib
import inspect
import pkgutil

import benchmarks
import pytest
from benchmarks.common import EstimatorBenchmark

MODULES = [m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_")]


@pytest.mark.parametrize("name", MODULES)
def test_every_estimator_benchmark_is_concrete(name):
    module = importlib.import_module(f"benchmarks.{name}")
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if issubclass(c, EstimatorBenchmark) and c is not EstimatorBenchmark and c.__module__ == module.__name__]
    if not classes:  # e.g. bench_harness: start-up / per-job overhead, no estimator
        others = [c for _, c in inspect.getmembers(module, inspect.isclass) if c.__module__ == module.__name__
                  and any(n.startswith(("time_", "peakmem_", "track_", "mem_")) for n in dir(c))]
        assert others, f"{name} defines no benchmark class"
    for cls in classes:
        assert not inspect.isabstract(cls), f"{cls.__name__} is abstract: {sorted(cls.__abstractmethods__)}"


def _benchmark_classes():
    for name in MODULES:
        module = importlib.import_module(f"benchmarks.{name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and isinstance(getattr(cls, "method", None), str) \
                    and not inspect.isabstract(cls):
                yield cls


def _benchmarks_of(cls, prefix):
    return [n for n in dir(cls) if n.startswith(prefix) and callable(getattr(cls, n))]


#: ``track_`` benchmarks that measure resources, not clustering quality.
RESOURCE_TRACKS = {"track_fit_peak_mb"}


def test_every_registered_method_has_time_peakmem_and_quality_benchmarks():
    """Each registered method (built-in families and those still to land) is timed, its
    peak memory measured and its clustering quality tracked by some class whose
    ``method`` names it; a new method without them fails here."""
    from ccbench.running.check_plugin import builtin_methods

    found = {}
    for cls in _benchmark_classes():
        kinds = found.setdefault(cls.method, set())
        kinds |= {"time_" for _ in _benchmarks_of(cls, "time_")}
        kinds |= {"peakmem_" for _ in _benchmarks_of(cls, "peakmem_")}
        kinds |= {"quality track_" for n in _benchmarks_of(cls, "track_") if n not in RESOURCE_TRACKS}
    needed = {"time_", "peakmem_", "quality track_"}
    missing = {spec.name: sorted(needed - found.get(spec.name, set())) for spec in builtin_methods()}
    missing = {name: kinds for name, kinds in missing.items() if kinds}
    assert not missing, (
        f"registered methods without benchmarks: {missing}; add a common.EstimatorBenchmark "
        "subclass with method = '<name>' to tests/benchmarks/bench_<family>.py (docs/benchmarks.md)"
    )


def test_the_folders_scripts_define_nothing_asv_would_collect():
    """asv imports every module of ``benchmark_dir``: a script's top-level ``track_of`` (asv's
    ``track_.+``) became a failing benchmark of the smoke run. Only ``bench_*`` modules may define them."""
    import ast
    from pathlib import Path

    prefixes = ("time_", "timeraw_", "track_", "mem_", "peakmem_")
    found = []
    for path in sorted(Path(benchmarks.__path__[0]).glob("*.py")):
        if path.name.startswith("bench_"):
            continue
        tree = ast.parse(path.read_text())
        for node in tree.body:
            # top-level functions only: a class here is a base (common.EstimatorBenchmark, abstract: asv skips it)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(prefixes):
                found.append(f"{path.name}:{node.name}")
    assert not found, f"asv would run these as benchmarks: {found}; rename them (a leading underscore)"


def test_every_registered_query_strategy_has_time_and_peakmem_benchmarks():
    """Each registered active query strategy (issue 53, item 6) is timed and its peak memory measured
    by some class listing it in ``query_strategies`` (bench_active.QueryStrategyCost); a new strategy
    without them fails here, and so does a listed name no plugin registers (a stale entry)."""
    from ccbench.registry import list_query_strategies

    covered = set()
    for name in MODULES:
        module = importlib.import_module(f"benchmarks.{name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and _benchmarks_of(cls, "time_") \
                    and _benchmarks_of(cls, "peakmem_"):
                covered |= set(getattr(cls, "query_strategies", ()))
    registered = {spec.name for spec in list_query_strategies()}
    assert registered, "no query strategy registered: is the entry point `active` installed (pip install -e .)?"
    missing, stale = sorted(registered - covered), sorted(covered - registered)
    assert not missing, (f"registered query strategies without time_/peakmem_ benchmarks: {missing}; add them to "
                         "VARIANTS in tests/benchmarks/bench_active.py")
    assert not stale, f"benchmarked query strategies that no plugin registers: {stale}"
