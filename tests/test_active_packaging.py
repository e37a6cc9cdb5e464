"""The distribution ships every plugin package (issue 53): COBRAS, loaded on request with
plugins=[ccbench_plugins.cobras] by experiment=active, was missing from pyproject's package list, so an
install from a wheel (not editable) had no ccbench_plugins.cobras and the active track failed there."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_plugin_package_and_its_configs_are_in_the_distribution():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    on_disk = {".".join(("ccbench_plugins", *init.parent.relative_to(ROOT / "plugins").parts)).rstrip(".")
               for init in (ROOT / "plugins").rglob("__init__.py") if "__pycache__" not in init.parts}
    assert on_disk - listed == set(), f"add these to [tool.setuptools] packages in pyproject.toml: {on_disk - listed}"
    data = setuptools["package-data"]
    for config in (ROOT / "plugins").rglob("*.yaml"):
        owner = next(d for d in config.parents if (d / "__init__.py").exists())  # the package that ships it
        package = ".".join(("ccbench_plugins", *owner.relative_to(ROOT / "plugins").parts))
        assert any(p.endswith("*.yaml") for p in data.get(package, ())), \
            f"{config.relative_to(ROOT)}: list {package}'s YAML in [tool.setuptools.package-data]"
