"""Shared fixtures: throw-away plugins for registry, harness and CLI tests."""

from __future__ import annotations

import sys
import textwrap
import uuid

import pytest

from ccbench import registry


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
