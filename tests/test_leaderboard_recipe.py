"""docs/leaderboard.md's "Adding your method" recipe works verbatim for a newcomer (issue 39, item 5).

A throw-away plugin package, installed the way pip installs one (a module plus a ``.dist-info``
with a ``ccbench`` entry point, on ``PYTHONPATH``) and shipping no config, is added to the
leaderboard with the docs' command: ``method=<name>`` needs no ``hydra.searchpath`` (a
registered method without a config gets one) and ``hydra.sweeper.append.method=[...]`` adds it
to the experiment's 22 methods instead of replacing them. The command itself runs in
tests/test_leaderboard_experiment.py (its smoke sweep is this recipe); here, its pieces in process.
"""

from __future__ import annotations

import re
import shlex
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAME = "recipe_kmeans"
PACKAGE = "ccbench_recipe_pkg"

PLUGIN = textwrap.dedent(f'''
    import numpy as np
    from sklearn.cluster import KMeans
    from ccbench import ConstrainedClusterer, MethodSpec, hookimpl
    from ccbench.base import check_random_state

    class RecipeKMeans(ConstrainedClusterer):
        def __init__(self, n_clusters=2, *, random_state=None):
            self.n_clusters = n_clusters
            self.random_state = random_state

        def fit(self, X, y=None, *, constraints=None):
            X, cons = self._validate_fit(X, constraints)
            seed = int(check_random_state(self.random_state).integers(2**31 - 1))
            self.labels_ = KMeans(self.n_clusters, n_init=2, random_state=seed).fit(X).labels_
            return self

    @hookimpl
    def ccbench_methods():
        return [MethodSpec("{NAME}", "{PACKAGE}.plugin:RecipeKMeans", "k-means, the recipe test's plugin",
                           paper="-", supervision=("must_link",), needs_n_clusters=True)]
''')


def install(site: Path, package: str = PACKAGE, plugin: str = PLUGIN, dist_info: bool = True) -> Path:
    """``package`` as pip leaves it in ``site``: the module and a dist-info with the entry point
    (``dist_info=False``: the module only, for tests that register it themselves)."""
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text("")
    (site / package / "plugin.py").write_text(plugin)
    if not dist_info:
        return site
    info = site / f"{package}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package.replace('_', '-')}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[ccbench]\n{package} = {package}.plugin\n")
    return site


def recipe() -> str:
    """The ``ccbench experiment=leaderboard ...`` line of the docs' "Adding your method" block."""
    text = (ROOT / "docs" / "leaderboard.md").read_text()
    section = text[text.index("## Adding your method"):]
    section = section[:section.find("\n## ", 5) if "\n## " in section[5:] else None]
    blocks = re.findall(r"^```bash\n(.*?)^```", section, re.M | re.S)
    lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
    # the maintainers' line adds to the full sweep (the "rank only your method" line is
    # tests/test_leaderboard_rank_mine.py's)
    (command,) = [line for line in lines if line.startswith("ccbench experiment=leaderboard")
                  and "hydra.sweeper.append" in line]
    return command


def test_the_recipe_needs_no_search_path_and_keeps_the_experiments_methods():
    command = recipe()
    assert "searchpath" not in command and "my_method" in command
    words = shlex.split(command)
    assert not any(w.startswith("method=") for w in words), "method= would replace the 22 methods"


# The recipe's line itself, run verbatim (the smoke experiment for the full one) on an installed plugin: the
# sweep of tests/test_leaderboard_experiment.py::test_leaderboard_smoke_then_report is that line, and it checks the
# plugin's method joins the experiment's 22 on every cell (issue 56: a sweep of its own here cost 25 s).


# -- the pieces, in process (fast) ------------------------------------------------------------


@pytest.fixture
def plugin_on_path(tmp_path, monkeypatch):
    from hydra.core.config_store import ConfigStore

    from ccbench import registry

    site = install(tmp_path / "site", dist_info=False)
    monkeypatch.syspath_prepend(str(site))
    registry.register_plugin(f"{PACKAGE}.plugin")
    yield site
    registry.unregister_plugin(f"{PACKAGE}.plugin")
    ConfigStore.instance().repo.get("method", {}).pop(f"{NAME}.yaml", None)
    for mod in [m for m in sys.modules if m.startswith(PACKAGE)]:
        del sys.modules[mod]


def test_a_registered_method_without_a_config_is_an_option_of_the_method_group(plugin_on_path):
    from ccbench.running import cli
    from ccbench.running.app import register_method_configs

    assert any(p.startswith(f"method={NAME}: no such option") for p in cli.precheck([f"method={NAME}"]))
    assert NAME in register_method_configs()
    assert cli.precheck(["experiment=leaderboard", f"method={NAME},kmeans"]) == []
    from hydra.core.config_store import ConfigStore

    assert dict(ConfigStore.instance().load(f"method/{NAME}.yaml").node) == {"name": NAME}
    assert NAME not in register_method_configs()  # once


def test_a_plugin_yaml_in_readmes_layout_is_used_and_a_search_path_yaml_wins(tmp_path, monkeypatch):
    from hydra.core.config_store import ConfigStore

    from ccbench import registry
    from ccbench.running.app import register_method_configs

    package, name = "ccbench_recipe_conf_pkg", "recipe_conf_kmeans"
    site = install(tmp_path / "site", package, PLUGIN.replace(NAME, name).replace(PACKAGE, package),
                   dist_info=False)
    (site / package / "conf" / "method").mkdir(parents=True)
    (site / package / "conf" / "__init__.py").write_text("")
    (site / package / "conf" / "method" / f"{name}.yaml").write_text(f"name: {name}\nn_clusters: 3\n")
    other = tmp_path / "other" / "method"
    other.mkdir(parents=True)
    (other / f"{name}.yaml").write_text(f"name: {name}\n")
    monkeypatch.syspath_prepend(str(site))
    registry.register_plugin(f"{package}.plugin")
    try:
        assert name not in register_method_configs([f"file://{other.parent}"])
        assert name in register_method_configs()
        assert dict(ConfigStore.instance().load(f"method/{name}.yaml").node) == {"name": name, "n_clusters": 3}
    finally:
        registry.unregister_plugin(f"{package}.plugin")
        ConfigStore.instance().repo.get("method", {}).pop(f"{name}.yaml", None)


def test_append_extends_the_command_line_list_else_the_experiments():
    from hydra_plugins.ccbench_sweeper.ccbench_sweeper import append_values

    params = {"method": "ap,kmeans", "dataset": "iris"}
    assert append_values(params, ["n_trials=1"], {"method": ["mine", "kmeans"]}) == \
        ({"method": "ap,kmeans,mine", "dataset": "iris"}, ["n_trials=1"])
    assert append_values(params, ["method=scssap"], {"method": "mine,other"}) == \
        (params, ["method=scssap,mine,other"])
    assert append_values({}, [], {"method": ["mine"]}) == ({"method": "mine"}, [])
    assert append_values(params, [], None) == (params, [])
