"""The asv suite itself: asv silently skips abstract classes, so a misnamed
``make_data`` / ``make_estimator`` would drop a benchmark without any error."""

import importlib
import inspect
import pkgutil

import pytest

import benchmarks
from benchmarks.common import EstimatorBenchmark

MODULES = [m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_")]


@pytest.mark.parametrize("name", MODULES)
def test_every_estimator_benchmark_is_concrete(name):
    module = importlib.import_module(f"benchmarks.{name}")
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if issubclass(c, EstimatorBenchmark) and c is not EstimatorBenchmark and c.__module__ == module.__name__]
    assert classes, f"{name} defines no EstimatorBenchmark"
    for cls in classes:
        assert not inspect.isabstract(cls), f"{cls.__name__} is abstract: {sorted(cls.__abstractmethods__)}"
