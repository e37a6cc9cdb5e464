"""The layout rules of docs/architecture.md, checked on the source (ast) and at run time."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import ccbench
import ccbench_plugins

PLUGINS = Path(ccbench_plugins.__file__).parent
CORE = Path(ccbench.__file__).parent
FAMILIES = sorted(p for p in PLUGINS.iterdir() if p.is_dir() and (p / "__init__.py").exists())


def _imports(path: Path) -> list[tuple[int, str, int]]:
    """(line, absolute-or-relative module name, relative level) of every import in ``path``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                out.append((node.lineno, node.module or "", 0))
            elif node.module:
                out.append((node.lineno, node.module, node.level))
            else:  # from . import a, b
                out += [(node.lineno, alias.name, node.level) for alias in node.names]
    return out


def _estimator_modules(family: str) -> set[str]:
    """Modules of ``family`` that define a registered estimator (from the specs' strings)."""
    prefix = f"ccbench_plugins.{family}."
    mods = set()
    for spec in ccbench.list_methods(load=False):
        est = spec.estimator if isinstance(spec.estimator, str) else f"{spec.estimator.__module__}:"
        module = est.partition(":")[0]
        if module.startswith(prefix):
            mods.add(module.removeprefix(prefix).split(".")[0])
    return mods


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_a_family_imports_only_ccbench_and_its_own_folder(family):
    bad = []
    for path in sorted(family.rglob("*.py")):
        for line, module, level in _imports(path):
            top = module.split(".")[0]
            if level >= 2 or top == "plugins":
                bad.append(f"{path.name}:{line} imports {'.' * level}{module}")
            elif top == "ccbench_plugins" and not module.startswith(f"ccbench_plugins.{family.name}"):
                bad.append(f"{path.name}:{line} imports {module}")
    assert not bad, f"{family.name} reaches outside ccbench and its folder: {bad}; use ccbench.make_method"


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_shared_helpers_come_from_the_core_not_a_sibling_estimator(family):
    estimators = _estimator_modules(family.name)
    bad = []
    for path in sorted(family.glob("*.py")):
        for line, module, level in _imports(path):
            name = module.removeprefix(f"ccbench_plugins.{family.name}.") if level == 0 else module
            if (level == 1 or module.startswith(f"ccbench_plugins.{family.name}.")) \
                    and name.split(".")[0] in estimators and name.split(".")[0] != path.stem:
                bad.append(f"{path.name}:{line} imports the estimator module {name}")
    assert not bad, f"move shared helpers of {family.name} into its core module: {bad}"


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_plugin_module_declares_specs_without_importing_estimators(family):
    allowed = {"__future__", "typing", "ccbench.hookspecs", "ccbench.registry"}
    bad = [f"line {line}: {'.' * level}{module}" for line, module, level in _imports(family / "__init__.py")
           if level or module not in allowed]
    assert not bad, f"{family.name}/__init__.py must stay light (hookspecs, registry, strings): {bad}"


def test_the_core_holds_no_algorithm_and_the_harness_no_hydra():
    for path in sorted(CORE.glob("*.py")):
        for line, module, _ in _imports(path):
            assert not module.startswith(("ccbench_plugins", "plugins")), f"{path.name}:{line} imports {module}"
    for name in ("harness.py", "protocol.py"):
        modules = {m for _, m, _ in _imports(CORE / name)}
        assert not {m for m in modules if m.split(".")[0] in ("hydra", "omegaconf")}, name
        assert "report" not in modules, f"{name} must not import the report"


def test_listing_plugins_imports_no_estimator_or_heavy_library():
    code = (
        "import sys; from importlib.metadata import entry_points; "
        "from ccbench.cli import plugins_table; plugins_table(); "
        "plugins = {ep.value for ep in entry_points(group='ccbench')}; "
        "print(sorted(m for m in sys.modules if m not in plugins and (m.split('.')[0] in "
        "('sklearn', 'numba', 'scipy', 'cvxpy', 'hydra', 'matplotlib', 'pandas') "
        "or (m.startswith('ccbench_plugins.') and m.count('.') > 1))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    loaded = out.stdout.strip()
    assert loaded == "[]", f"ccbench plugins imported {loaded[:300]}..."
