"""Shared fixtures: throw-away plugins for registry, harness and CLI tests; every test starts from
the plugins registered before it."""

from __future__ import annotations

import sys
import textwrap
import uuid

import pytest

from ccbench import registry


@pytest.fixture(autouse=True)
def _plugins_a_test_loads_are_unloaded():
    """A config's ``plugins:`` (e.g. the opt-in ``ccbench_plugins.kmeans.peers`` of an experiment a
    test composes) registers into the process-wide plugin manager; without this, every later test on
    the same worker saw those methods, and which tests did depended on pytest-xdist's scheduling."""
    pm = registry.get_plugin_manager()
    before = {name for name, _ in pm.list_name_plugin()}
    yield
    if registry._pm is pm:  # a test that replaced the manager restores its own
        for name in {name for name, _ in pm.list_name_plugin()} - before:
            registry.unregister_plugin(name)


@pytest.fixture
def throwaway_plugin(tmp_path, monkeypatch):
    """``make(source, name=None, directory=None, register=True)``: write a plugin module and
    (by default) register it; everything made is unregistered and forgotten afterwards."""
    made = []

    def make(source: str, name: str | None = None, directory=None, register: bool = True):
        name = name or f"ccbench_throwaway_{uuid.uuid4().hex[:8]}"
        directory = directory or tmp_path
        path = directory / f"{name}.py"
        if not path.exists():
            path.write_text(textwrap.dedent(source))
        monkeypatch.syspath_prepend(str(directory))
        made.append(name)
        return registry.register_plugin(name) if register else name

    yield make
    for name in made:
        registry.unregister_plugin(name)
        sys.modules.pop(name, None)
