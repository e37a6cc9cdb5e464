"""The plugin registry: built-ins, a throw-away plugin, and clear look-up errors."""

import sys
import textwrap

import numpy as np
import pytest

import ccbench
from ccbench import registry
from ccbench.registry import UnknownNameError
import _proc  # on time-out, the command's whole process group is killed (issue 54)

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
def split_plugin(throwaway_plugin):
    return throwaway_plugin(PLUGIN_SOURCE, register=False)


def test_builtins_are_registered_through_the_entry_point_group():
    from importlib.metadata import entry_points

    advertised = {ep.value for ep in entry_points(group="ccbench")}
    names = {spec.name for spec in ccbench.list_methods()}
    assert {"ap", "scssap", "scap", "kmeans"} <= names
    assert {"ccbench_plugins.affinity", "ccbench_plugins.scap", "ccbench_plugins.kmeans"} <= advertised


def test_throwaway_plugin_is_listed_and_runnable(split_plugin):
    assert "throwaway_split" not in {s.name for s in ccbench.list_methods()}
    registry.load_plugins([split_plugin])
    spec = registry.get_method_spec("throwaway_split")
    assert spec.summary == "split on feature 0"
    X = np.r_[np.zeros((5, 2)), np.ones((5, 2))]
    labels = ccbench.make_method("throwaway_split").fit_predict(X)
    np.testing.assert_array_equal(labels, [0] * 5 + [1] * 5)
    from ccbench.running.cli import plugins_table

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
    from ccbench import constraints as cgen
    from ccbench import metrics

    ds = ccbench.load_dataset("iris")
    assert ds.X.shape == (150, 4) and ds.X.dtype == np.float64 and ds.n_classes == 3
    cons = cgen.random_pairs(ds.y, n_constraints=60, rng=np.random.default_rng(0))
    est = ccbench.make_method("kmeans", n_clusters=3, random_state=0)
    labels = est.fit(ds.X, constraints=cons).labels_
    assert metrics.modified_rand(ds.y, labels) > 0.7


def test_noise_spec_validates_its_stage():
    with pytest.raises(ValueError, match="stage must be 'labels' or 'constraints'"):
        registry.NoiseSpec("x", lambda y, *, rate, rng: y, "before")


# -- broken third-party packages ---------------------------------------------------

GOOD_SOURCE = """
from ccbench.hookspecs import hookimpl
from ccbench.registry import MethodSpec

@hookimpl
def ccbench_methods():
    return [MethodSpec("good_third_party", "ccbench_plugins.kmeans.kmeans:KMeansClusterer", "still works",
                       needs_n_clusters=True)]
"""


def _fake_distribution(root, dist, module, source):
    """An installed package as importlib.metadata sees it: a dist-info with one ccbench entry point."""
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[ccbench]\n{dist} = {module}\n")
    (root / f"{module}.py").write_text(source)


@pytest.fixture
def broken_packages(tmp_path, monkeypatch):
    _fake_distribution(tmp_path, "brokenimport", "brokenimport_plugin", "import no_such_module_xyz\n")
    _fake_distribution(tmp_path, "misspelthook", "misspelthook_plugin",
                       "from ccbench.hookspecs import hookimpl\n@hookimpl\ndef ccbench_method():\n    return []\n")
    _fake_distribution(tmp_path, "goodthirdparty", "goodthirdparty_plugin", GOOD_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_pm", None)  # a fresh start-up that sees the fake packages
    monkeypatch.setattr(registry, "_broken", [])  # restored afterwards with the old manager
    registry._clear_caches()
    yield tmp_path
    registry._pm = None
    registry._clear_caches()
    for mod in ("brokenimport_plugin", "misspelthook_plugin", "goodthirdparty_plugin"):
        sys.modules.pop(mod, None)


def test_broken_packages_are_named_and_the_rest_still_works(broken_packages):
    with pytest.warns(RuntimeWarning, match="brokenimport"):
        names = {s.name for s in ccbench.list_methods()}
    assert {"ap", "kmeans", "good_third_party"} <= names
    broken = {b.distribution: b for b in registry.broken_plugins()}
    assert set(broken) == {"brokenimport", "misspelthook"}
    assert broken["brokenimport"].module == "brokenimport_plugin"
    assert "no_such_module_xyz" in broken["brokenimport"].error
    assert "ccbench_method" in broken["misspelthook"].error
    assert registry.get_plugin_manager().get_plugin("misspelthook") is None  # unregistered again
    with pytest.raises(UnknownNameError, match="brokenimport"):
        ccbench.make_method("from_the_broken_package")


def test_plugins_command_lists_the_rest_and_names_the_broken(broken_packages):
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(broken_packages), os.environ.get("PYTHONPATH", "")])}
    proc = _proc.run([sys.executable, "-m", "ccbench.running.cli", "plugins"], env=env, capture_output=True,
                     text=True, timeout=120)
    assert proc.returncode == 1
    assert "good_third_party" in proc.stdout and "scssap" in proc.stdout
    assert "'brokenimport'" in proc.stderr and "'misspelthook'" in proc.stderr


def test_a_misspelt_explicit_plugin_is_unregistered_and_later_ones_work(throwaway_plugin):
    bad = throwaway_plugin("from ccbench.hookspecs import hookimpl\n@hookimpl\ndef ccbench_metric():\n    return []\n",
                           register=False)
    with pytest.raises(Exception, match=f"{bad}.*not registered.*ccbench_metric"):
        registry.load_plugins([bad])
    assert registry.get_plugin_manager().get_plugin(bad) is None
    good = throwaway_plugin(PLUGIN_SOURCE, register=False)
    registry.load_plugins([good])
    assert registry.get_method_spec("throwaway_split").summary == "split on feature 0"
