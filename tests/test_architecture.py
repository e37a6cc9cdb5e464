"""The layout rules of docs/architecture.md, checked on the source (ast) and at run time."""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import ccbench_plugins
import pytest

import ccbench
import _proc  # on time-out, the command's whole process group is killed (issue 54)

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
    for path in sorted(CORE.rglob("*.py")):
        for line, module, _ in _imports(path):
            assert not module.startswith(("ccbench_plugins", "plugins")), f"{path.name}:{line} imports {module}"
    for name in ("running/harness.py", "running/protocol.py"):
        modules = {_resolve(CORE / name, m, level) for _, m, level in _imports(CORE / name)}
        assert not {m for m in modules if m.split(".")[0] in ("hydra", "omegaconf")}, name
        assert not {m for m in modules if m.startswith("ccbench.reporting")}, f"{name} must not import the report"


# -- the four rooms (docs/architecture.md "The core") --------------------------------------

#: The plugin API: where third-party plugins import from, unchanged in spelling.
API_MODULES = {"__init__", "base", "constraints", "hookspecs", "registry", "specs", "metrics", "similarity",
               "datasets", "isolation", "_builtin"}
ROOMS = {"data", "running", "reporting"}
MAX_LINES = 600


def _module_name(path: Path, root: Path = CORE) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(path: Path, module: str, level: int, root: Path = CORE) -> str:
    """The absolute name of ``module`` imported with relative ``level`` from ``path``."""
    if not level:
        return module
    package = _module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - level + 1]
    return ".".join([*base, module] if module else base)


def _core_modules(root: Path = CORE) -> dict[str, Path]:
    return {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _lazy_exports(module: str) -> dict:
    """A package's PEP 562 table (``_EXPORTS`` / ``_SUBMODULES``): name -> defining module."""
    mod = importlib.import_module(module)
    table = {k: f"{module}.{v}" for k, v in getattr(mod, "_EXPORTS", {}).items()}
    subs = getattr(mod, "_SUBMODULES", ())
    table.update({k: f"{module}.{v}" for k, v in (subs.items() if isinstance(subs, dict) else ((s, s) for s in subs))})
    return table


def _edges(path: Path, modules: dict, root: Path = CORE) -> list[tuple[int, str]]:
    """(line, target module) of every import of ``path`` that lands in ``ccbench``, names resolved to the
    module that defines them (a package's lazy table, a submodule, else the package itself)."""
    out = []
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "ccbench"]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(path, node.module or "", node.level, root)
            if target.split(".")[0] != "ccbench":
                continue
            lazy = (_lazy_exports(target)  # a planted package (root elsewhere) is never imported
                    if root == CORE and target in modules and modules[target].name == "__init__.py" else {})
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.append((node.lineno, sub if sub in modules else lazy.get(alias.name, target)))
    return [(line, t) for line, t in out if t in modules]


def _import_graph(root: Path = CORE) -> dict[str, set]:
    """Module -> the modules of the package at ``root`` it imports (every import, function bodies too)."""
    modules = _core_modules(root)
    return {m: {t for _, t in _edges(p, modules, root) if t != m} for m, p in modules.items()}


def _cycles(graph: dict[str, set]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                cycles.append(sorted(scc))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_no_import_cycle_inside_ccbench():
    """Every import counts, those inside functions too: a cycle there is still two modules that cannot
    be understood (or moved) one without the other."""
    cycles = _cycles(_import_graph())
    assert not cycles, f"import cycles inside ccbench/: {cycles}"


def test_the_cycle_check_finds_a_planted_cycle(tmp_path):
    """The same graph and search as the check above, on a planted package: a cycle through an import
    inside a function (and through ``from .a import name``) is found; without it, none is."""
    pkg = tmp_path / "ccbench"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .sub import c\n")
    (pkg / "sub" / "c.py").write_text("from ..b import g\n")
    (pkg / "b.py").write_text("from .a import f\n\n\ndef g():\n    pass\n")
    assert _cycles(_import_graph(pkg)) == [["ccbench.a", "ccbench.b", "ccbench.sub.c"]]
    (pkg / "b.py").write_text("def g():\n    pass\n")
    assert _cycles(_import_graph(pkg)) == []


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ROOMS else "api"


def test_each_room_imports_only_what_docs_architecture_allows():
    """API -> API (and ``datasets`` -> data); data -> API; running -> API, data, reporting's public names;
    reporting -> anything but the CLI and the Hydra app."""
    modules = _core_modules()
    public = {f"ccbench.reporting.{v.removeprefix('ccbench.reporting.')}" for v in
              _lazy_exports("ccbench.reporting").values()}
    bad = []
    for name, path in modules.items():
        src, lines = _room(name), path.read_text().splitlines()
        for line, target in _edges(path, modules):
            dst = _room(target)
            text = f"{name}:{line} imports {target}"
            if src == "api" and dst not in ("api",) and not (name == "ccbench.datasets" and dst == "data") \
                    and not (name == "ccbench._builtin" and target == "ccbench.data.noise") and name != "ccbench":
                bad.append(text)
            elif src == "data" and dst != "api" and dst != "data":
                bad.append(text)
            elif src == "running" and dst == "reporting":
                stmt = lines[line - 1].strip()
                via_package = stmt.startswith(("from .. import reporting", "from ccbench import reporting",
                                               "from ..reporting import", "from ccbench.reporting import"))
                if not via_package:
                    bad.append(text + " (reach the reporting room through ccbench.reporting's public names)")
            elif src == "reporting" and target in ("ccbench.running.cli", "ccbench.running.app"):
                bad.append(text)
    assert not bad, "imports across rooms that docs/architecture.md does not allow:\n" + "\n".join(bad)
    assert public  # the reporting room declares its public names


def test_top_level_holds_the_plugin_api_and_the_rooms():
    top = {p.stem for p in CORE.glob("*.py")}
    assert top == API_MODULES, f"unexpected top-level modules: {sorted(top ^ API_MODULES)}"
    packages = {p.parent.name for p in CORE.glob("*/__init__.py")}
    assert packages == ROOMS, packages
    for room in ROOMS:
        doc = ast.get_docstring(ast.parse((CORE / room / "__init__.py").read_text()))
        assert doc and "import" in doc, f"ccbench/{room}/__init__.py must say what it owns and may import"


def test_no_core_module_is_over_600_lines():
    long = {str(p.relative_to(CORE)): n for p in CORE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"split these modules (over {MAX_LINES} lines): {long}"


_FILE_SUFFIXES = {"log", "yaml", "json", "md", "toml", "txt"}
DOCS = [CORE.parent / "README.md", *sorted((CORE.parent / "docs").glob("*.md"))]


def _documented_imports() -> list[tuple[str, str]]:
    """(where, statement) of every ``import ccbench...`` / ``from ccbench... import`` line in a code block
    of README.md or docs/*.md, and every backticked dotted name ``ccbench.x.y``."""
    out = []
    for doc in DOCS:
        if not doc.exists():
            continue
        in_code = False
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
                continue
            stmt = line.strip().split("#")[0].strip()
            if in_code and re.match(r"^(from ccbench[\w.]* import [\w, ]+|import ccbench[\w.]*( as \w+)?)$", stmt):
                out.append((f"{doc.name}:{n}", stmt))
            for dotted in re.findall(r"`(ccbench(?:\.[A-Za-z_]\w*)+)`", line):
                if dotted.rpartition(".")[2] not in _FILE_SUFFIXES:  # `ccbench.log` names a file
                    out.append((f"{doc.name}:{n}", dotted))
    return out


def test_every_documented_import_works():
    """README's and docs/'s imports and dotted names resolve (in a fresh interpreter: nothing imported first)."""
    found = _documented_imports()
    assert len(found) > 20, "the docs' imports were not found: the scan is broken"
    code = (
        "import importlib, sys\n"
        "bad = []\n"
        "for where, stmt in CASES:\n"
        "    try:\n"
        "        if stmt.startswith(('from ', 'import ')):\n"
        "            exec(stmt, {})\n"
        "        else:\n"
        "            parts = stmt.split('.')\n"
        "            for i in range(len(parts), 0, -1):\n"
        "                try:\n"
        "                    obj = importlib.import_module('.'.join(parts[:i]))\n"
        "                    break\n"
        "                except ImportError:\n"
        "                    continue\n"
        "            for attr in parts[i:]:\n"
        "                obj = getattr(obj, attr)\n"
        "    except Exception as exc:\n"
        "        bad.append(f'{where}: {stmt}: {type(exc).__name__}: {exc}')\n"
        "print('\\n'.join(bad))\n"
    )
    out = _proc.run([sys.executable, "-c", f"CASES = {found!r}\n" + code], capture_output=True, text=True,
                    timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert not out.stdout.strip(), "documented imports that fail:\n" + out.stdout


def test_listing_plugins_imports_no_estimator_or_heavy_library():
    code = (
        "import sys; from importlib.metadata import entry_points; "
        "from ccbench.running.cli import plugins_table; plugins_table(); "
        "plugins = {ep.value for ep in entry_points(group='ccbench')}; "
        "print(sorted(m for m in sys.modules if m not in plugins and (m.split('.')[0] in "
        "('sklearn', 'numba', 'scipy', 'cvxpy', 'hydra', 'matplotlib', 'pandas') "
        "or (m.startswith('ccbench_plugins.') and m.count('.') > 1))))"
    )
    out = _proc.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    loaded = out.stdout.strip()
    assert loaded == "[]", f"ccbench plugins imported {loaded[:300]}..."
