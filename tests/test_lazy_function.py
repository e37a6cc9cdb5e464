"""ccbench.registry.lazy_function: a spec's function named by 'module:attr', imported on its first call."""

import pytest

from ccbench.registry import get_metric_spec, lazy_function


def test_it_imports_nothing_until_called_and_then_calls_the_target():
    missing = lazy_function("no_such_module_for_ccbench:f")  # building it imports nothing
    with pytest.raises(ImportError, match="no_such_module_for_ccbench:f"):
        missing(1)
    hypot = lazy_function("math:hypot")
    assert hypot(3.0, 4.0) == 5.0
    assert (hypot.__module__, hypot.__name__) == ("math", "hypot")


@pytest.mark.parametrize("bad", ["math.hypot", ":hypot", "math:"])
def test_a_target_without_module_and_attribute_is_refused(bad):
    with pytest.raises(ValueError, match="package.module:function"):
        lazy_function(bad)


def test_the_bound_metrics_name_the_bound_module_for_provenance():
    for name in ("lower_bound", "bound_gap"):
        assert get_metric_spec(name).func.__module__.endswith("sdp.kmeans_bound")
