"""The plugin registry: built-ins, a throw-away plugin, and clear look-up errors."""

import sys
import textwrap

import numpy as np
import pytest

import ccbench
from ccbench import registry
from ccbench.registry import UnknownNameError

PLUGIN_SOURCE = textwrap.dedent(
    '''
    import numpy as np
    from ccbench import ConstrainedClusterer, MethodSpec, hookimpl

    class FirstFeatureSplit(ConstrainedClusterer):
        """Two clusters: below / above the median of the first feature."""

        def __init__(self, offset=0.0):
            self.offset = offset

        def fit(self, X, y=None, *, constraints=None):
            X, _ = self._validate_fit(X, constraints)
            self.labels_ = (X[:, 0] > np.median(X[:, 0]) + self.offset).astype(int)
            return self

    @hookimpl
    def ccbench_methods():
        return [MethodSpec("throwaway_split", FirstFeatureSplit, "split on feature 0",
                           paper="none", supervision=())]
    '''
)


@pytest.fixture
def throwaway_plugin(tmp_path, monkeypatch):
    (tmp_path / "throwaway_ccbench_plugin.py").write_text(PLUGIN_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "throwaway_ccbench_plugin"
    registry.unregister_plugin("throwaway_ccbench_plugin")
    sys.modules.pop("throwaway_ccbench_plugin", None)


def test_builtins_are_registered_through_the_entry_point_group():
    from importlib.metadata import entry_points

    advertised = {ep.value for ep in entry_points(group="ccbench")}
    names = {spec.name for spec in ccbench.list_methods()}
    assert {"ap", "scssap", "scap", "kmeans"} <= names
    assert {"ccbench_plugins.affinity", "ccbench_plugins.scap", "ccbench_plugins.kmeans"} <= advertised


def test_throwaway_plugin_is_listed_and_runnable(throwaway_plugin):
    assert "throwaway_split" not in {s.name for s in ccbench.list_methods()}
    registry.load_plugins([throwaway_plugin])
    spec = registry.get_method_spec("throwaway_split")
    assert spec.summary == "split on feature 0"
    X = np.r_[np.zeros((5, 2)), np.ones((5, 2))]
    labels = ccbench.make_method("throwaway_split").fit_predict(X)
    np.testing.assert_array_equal(labels, [0] * 5 + [1] * 5)
    from ccbench.cli import plugins_table

    assert "throwaway_split" in plugins_table()


def test_unknown_method_lists_the_known_ones():
    with pytest.raises(UnknownNameError, match="unknown method 'nope'.*kmeans"):
        ccbench.make_method("nope")


def test_unknown_parameter_names_the_accepted_ones():
    with pytest.raises(TypeError, match="n_clusters"):
        ccbench.make_method("kmeans", not_a_param=1)


def test_unknown_dataset_scheme_noise_metric():
    with pytest.raises(UnknownNameError, match="iris"):
        ccbench.load_dataset("irs")
    with pytest.raises(UnknownNameError, match="random_pairs"):
        registry.get_scheme_spec("random")
    with pytest.raises(UnknownNameError, match="constraint_flip"):
        registry.get_noise_spec("flip")
    with pytest.raises(UnknownNameError, match="modified_rand"):
        registry.get_metric_spec("modrand")


def test_a_hook_without_a_spec_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "misspelt_plugin.py").write_text(
        "from ccbench import hookimpl\n@hookimpl\ndef ccbench_method():\n    return []\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(Exception, match="ccbench_method"):
            registry.load_plugins(["misspelt_plugin"])
    finally:
        registry.unregister_plugin("misspelt_plugin")


def test_a_missing_plugin_module_is_named():
    with pytest.raises(ImportError, match="could not import ccbench plugin module 'no_such_plugin_module'"):
        registry.load_plugins(["no_such_plugin_module"])


def test_method_spec_validates_supervision():
    with pytest.raises(ValueError, match="supervision"):
        registry.MethodSpec("x", object, "x", supervision=("must-link",))


def test_public_api_quick_start():
    from ccbench import constraints as cgen, metrics

    ds = ccbench.load_dataset("iris")
    assert ds.X.shape == (150, 4) and ds.X.dtype == np.float64 and ds.n_classes == 3
    cons = cgen.random_pairs(ds.y, n_constraints=60, rng=np.random.default_rng(0))
    est = ccbench.make_method("kmeans", n_clusters=3, random_state=0)
    labels = est.fit(ds.X, constraints=cons).labels_
    assert metrics.modified_rand(ds.y, labels) > 0.7


def test_noise_spec_validates_its_stage():
    with pytest.raises(ValueError, match="stage must be 'labels' or 'constraints'"):
        registry.NoiseSpec("x", lambda y, *, rate, rng: y, "before")
