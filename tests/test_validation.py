"""Bad input gets a clear error at the estimator boundary (every registered method)."""

import numpy as np
import pytest

from ccbench import Constraints, make_method
from ccbench.running.check_plugin import builtin_methods


def _build(spec, **extra):
    params = {"n_clusters": 2} if spec.needs_n_clusters else {}
    params.update(extra)
    return make_method(spec.name, **params)


METHODS = builtin_methods()  # ccbench's own; a plugin is checked by `ccbench check-plugin NAME`
IDS = [m.name for m in METHODS]


@pytest.fixture
def X():
    rng = np.random.default_rng(0)
    return np.r_[rng.normal(0, 0.3, (10, 2)), rng.normal(5, 0.3, (10, 2))]


@pytest.mark.parametrize("spec", METHODS, ids=IDS)
def test_nan_and_inf_are_refused(spec, X):
    X = X.copy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        _build(spec).fit(X)
    X[3, 1] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        _build(spec).fit(X)


@pytest.mark.parametrize("spec", METHODS, ids=IDS)
def test_fewer_than_two_samples_is_refused(spec):
    with pytest.raises(ValueError, match="at least 2"):
        _build(spec).fit(np.zeros((1, 3)))


@pytest.mark.parametrize("spec", METHODS, ids=IDS)
def test_constraints_for_other_data_are_refused(spec, X):
    cons = Constraints([[0, 1]], n_samples=5)
    with pytest.raises(ValueError, match="refer to 5 samples"):
        _build(spec).fit(X, constraints=cons)


@pytest.mark.parametrize("spec", [m for m in METHODS if m.needs_n_clusters], ids=lambda m: m.name)
def test_n_clusters_above_n_is_refused(spec, X):
    with pytest.raises(ValueError, match="exceeds the number of samples"):
        _build(spec, n_clusters=50).fit(X)


def test_one_dimensional_X_names_the_fix():
    with pytest.raises(ValueError, match="reshape"):
        make_method("kmeans", n_clusters=2).fit(np.arange(5.0))


@pytest.mark.parametrize("name", ["fpc", "kmedoids", "nnc"])
def test_overflowing_scale_is_warned_about(name, X):
    """Issue 42, item 13: data scaled by 1e300 used to give ARI 0 with no word from these three."""
    from ccbench.base import DataScaleWarning

    cons = Constraints([[0, 1]], [[0, 15]], n_samples=len(X))
    with pytest.warns(DataScaleWarning, match="scale the data"):
        make_method(name, n_clusters=2, random_state=0).fit(X * 1e300, constraints=cons)
