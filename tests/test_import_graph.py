"""ccbench and its Hydra plugins import no module that imports them back (issue 54, item 21).

The graph is read from the source (``ast``): an edge ``A -> B`` for every ``import`` or ``from ... import``
in module ``A``, at module level or inside a function, relative ones resolved, ``B`` being the most specific
module of the two packages the statement names (``from pkg import mod`` names ``pkg.mod`` when it is a
module, else ``pkg``). Names imported by string (``importlib.import_module``, ``lazy_function``) are not
edges: they are resolved at call time, never at import time. A cycle is a strongly connected component of
more than one module (Tarjan).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ccbench", "hydra_plugins")


def _modules(root: Path, packages) -> dict[str, tuple[Path, bool]]:
    """``dotted name -> (file, is a package)`` of every module under ``root/<package>``."""
    out = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def _imported(node: ast.AST, package: str, modules) -> list[str]:
    """The dotted names an import statement ``node`` of a module in ``package`` names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        parts = package.split(".")[:len(package.split(".")) - node.level + 1]
        base = ".".join(parts + ([node.module] if node.module else []))
    else:
        base = node.module
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]


def import_graph(root: Path = ROOT, packages=PACKAGES) -> dict[str, set[str]]:
    """``module -> modules of the packages it imports`` (module level and function level)."""
    modules = _modules(root, packages)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            for target in _imported(node, package, modules):
                while target and target not in modules:  # a name inside a module: the module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@functools.cache
def _real_graph() -> dict[str, set[str]]:
    return import_graph()  # about 0.8 s of CPU: read once for the tests below


def test_ccbench_and_its_hydra_plugins_have_no_import_cycle():
    found = cycles(_real_graph())
    assert not found, ("modules that import each other (directly or through others; move what they share to a "
                       f"module both import): {found}")


def test_the_graph_sees_function_level_and_relative_imports():
    """Known edges of the real tree, one per kind of statement the reader must resolve."""
    graph = _real_graph()
    # function level, absolute, across the two packages (app._register_sweeper)
    assert "hydra_plugins.ccbench_sweeper.joblib_launcher" in graph["ccbench.running.app"]
    # function level, absolute (joblib_launcher._lost)
    assert "ccbench.running.worker_deaths" in graph["hydra_plugins.ccbench_sweeper.joblib_launcher"]
    # module level, relative (`from .config import ...`)
    assert "ccbench.running.config" in graph["ccbench.running.app"]


def test_a_cycle_hidden_in_a_function_is_found(tmp_path):
    """A hand-made package: a -> b at module level, b -> a inside a function (``from . import a``), c -> a
    only: the one cycle is {a, b}; c is on no cycle."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import helper\n")
    (pkg / "b.py").write_text("def helper():\n    from . import a\n    return a\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    graph = import_graph(tmp_path, ["pkg"])
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}, "pkg.c": {"pkg.a"}}
    assert cycles(graph) == [["pkg.a", "pkg.b"]]
    assert cycles({**graph, "pkg.b": set()}) == []  # the same package without the function's import
