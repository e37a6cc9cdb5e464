"""Where a row came from: the code that made it and the machine it ran on.

Every row of ``results.parquet`` carries the columns of :func:`job_provenance`,
computed once per job (not per trial):

- ``code.*``: the ccbench version, the git commit of the ccbench tree and whether
  it had uncommitted changes; the method's plugin distribution and version; and
  ``code.method_hash``, a hash of the source of the modules that implement the
  method (``code.method_files`` lists each one with its own hash, so a stale row
  can say *which* files changed).
- ``env.*``: Python and the numerical libraries' versions, the BLAS library and
  its thread count (threadpoolctl), CPU model, cores, memory and hostname.

The modules that implement a method are its estimator's module plus every
module of the same top-level package that it imports, transitively (read from
the source, not from ``sys.modules``, so the answer does not depend on what
happened to be imported first), plus the modules of the methods its
``MethodSpec.uses`` names (compositions through the registry). ``ccbench``'s own
modules are not part of a method's code: they are recorded by the ccbench
version and commit; those of shared numerical code (:data:`SHARED_NUMERICAL`)
are inputs of the rows of the methods that import them (:func:`cell_inputs`). Only a change of
``code.method_hash`` or of a recorded input (``code.inputs``) makes a row stale
(:mod:`ccbench.running.harness`); a new machine or library version is recorded and
reported, never a reason to recompute.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import json
import os
import platform
import socket
import subprocess
from importlib.metadata import PackageNotFoundError, packages_distributions, version
from pathlib import Path

__all__ = ["job_provenance", "environment", "ccbench_code", "method_code", "cell_method_code", "cell_inputs",
           "from_method_of", "METHOD_HASH", "METHOD_FILES", "INPUTS", "changed_files", "changed_inputs",
           "PROVENANCE_PREFIXES"]

METHOD_HASH = "code.method_hash"
METHOD_FILES = "code.method_files"
PROVENANCE_PREFIXES = ("code.", "env.")
# kmedoids: FasterPAM (the kmedoids method); sdpa-python: RN-SDP's exact solver
_LIBRARIES = ("numpy", "scipy", "scikit-learn", "numba", "cvxpy", "pandas", "pyarrow", "kmedoids", "sdpa-python")


def _dist_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _total_memory_gb() -> float | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


def _blas() -> tuple[str, int | None]:
    """``("openblas 0.3.27 (Haswell)", threads)`` of the BLAS numpy uses; other pools are listed too."""
    try:
        from threadpoolctl import threadpool_info

        pools = threadpool_info()
    except Exception:  # noqa: BLE001 - provenance must never stop a run
        return "unknown", None
    blas = [p for p in pools if p.get("user_api") == "blas"]
    # sorted: the order in which libraries load their BLAS differs between processes
    text = "; ".join(sorted(
        f"{p.get('internal_api')} {p.get('version')}" + (f" ({p['architecture']})" if p.get("architecture") else "")
        for p in blas
    )) or "unknown"
    threads = max((p.get("num_threads") or 0 for p in blas), default=None)
    return text, threads


@functools.lru_cache(maxsize=1)
def environment() -> dict:
    """The ``env.*`` columns: this process's interpreter, libraries and machine (cached)."""
    blas, blas_threads = _blas()
    env = {"env.python": platform.python_version()}
    env.update({f"env.{lib}": _dist_version(lib) for lib in _LIBRARIES})
    env.update({
        "env.blas": blas,
        "env.blas_threads": blas_threads,
        "env.omp_num_threads": os.environ.get("OMP_NUM_THREADS", ""),
        "env.cpu": _cpu_model(),
        "env.n_cores": os.cpu_count(),
        "env.memory_gb": _total_memory_gb(),
        "env.hostname": socket.gethostname(),
        "env.platform": platform.platform(),
    })
    return env


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        res = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout.strip() if res.returncode == 0 else None


@functools.lru_cache(maxsize=1)
def ccbench_code() -> dict:
    """``code.ccbench_version``, ``code.git_commit`` (of the ccbench source tree; empty when it is
    not a git checkout, e.g. a wheel) and ``code.git_dirty`` (uncommitted changes)."""
    root = Path(__file__).resolve().parents[2]  # ccbench/running/provenance.py -> the source tree
    commit = _git(["rev-parse", "HEAD"], root) if (root / ".git").exists() else None
    dirty = None
    if commit:
        status = _git(["status", "--porcelain", "--untracked-files=no"], root)
        dirty = bool(status) if status is not None else None
    return {"code.ccbench_version": _dist_version("ccbench"), "code.git_commit": commit or "",
            "code.git_dirty": dirty}


def _module_file(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


_imports: dict[tuple, frozenset] = {}


def _imported_modules(name: str, path: Path) -> frozenset[str]:
    """Absolute names of the modules ``path`` (module ``name``) imports, relative imports resolved.

    Cached per process while the file is unchanged (its size and modification time): every job asks
    for its method's modules (``_shared_numerical``), and parsing them each time was a twentieth of
    the quick start (issue 54)."""
    key = (name, *_stamp([path])[0])
    if key not in _imports:
        _imports[key] = frozenset(_parse_imports(name, path))
    return _imports[key]


def _parse_imports(name: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_bytes(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
            # ``from . import core`` names a module, not an attribute
            found.update(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and _is_import_module(node.func) and node.args:
            # importlib.import_module("pkg.helper") / import_module(".helper", __package__): a literal
            # name is as much an import as an import statement (a computed name cannot be followed)
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                target = first.value
                if target.startswith("."):
                    level = len(target) - len(target.lstrip("."))
                    base = package.split(".")
                    base = base[: len(base) - (level - 1)] if level > 1 else base
                    target = ".".join([*base, target.lstrip(".")] if target.strip(".") else base)
                found.add(target)
    return found


def _is_import_module(func) -> bool:
    """``import_module`` or ``<anything>.import_module`` (``importlib.import_module``)."""
    return (isinstance(func, ast.Name) and func.id == "import_module") or (
        isinstance(func, ast.Attribute) and func.attr == "import_module")


_graphs: dict[str, tuple[dict[str, Path], tuple]] = {}
_hashes: dict[tuple, str] = {}


def _stamp(paths) -> tuple:
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in paths)


def _implementation(root_module: str) -> dict[str, Path]:
    """``root_module`` and the modules of its own top-level package it imports, transitively.

    Cached per process while none of the files changes (a job costs a few ``stat`` calls).
    """
    key = f"{root_module}@{_module_file(root_module)}"  # the same name may come from another file
    cached = _graphs.get(key)
    if cached is not None and _stamp(cached[0].values()) == cached[1]:
        return cached[0]
    graph = _import_graph(root_module)
    _graphs[key] = (graph, _stamp(graph.values()))
    return graph


def _import_graph(root_module: str) -> dict[str, Path]:
    top = root_module.split(".")[0]
    root_path = _module_file(root_module)
    # a plain module loaded with plugins=[...] owns the plain modules beside it that it imports
    plain_root = root_path is not None and "." not in root_module and root_path.name != "__init__.py"

    def ours(name: str, path: Path) -> bool:
        if name.split(".")[0] == top:
            return True
        return plain_root and "." not in name and path.name != "__init__.py" and path.parent == root_path.parent

    seen: dict[str, Path | None] = {}
    todo = [root_module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name.split(".")[0] != top and (not plain_root or "." in name):
            # not ours whatever its file (see ours()): not looked up, because finding a submodule
            # imports its package (numba, a second of a SLURM task's start-up, for nothing)
            seen[name] = None
            continue
        path = _module_file(name)
        if path is None or not ours(name, path):
            seen[name] = None
            continue
        # a package's __init__ is its registration (MethodSpecs), not the method's code
        seen[name] = path if path.name != "__init__.py" or name == root_module else None
        todo.extend(m for m in _imported_modules(name, path) if m not in seen)
    return {name: path for name, path in seen.items() if path is not None}


def _file_hash(path: Path) -> str:
    key = _stamp([path])[0]
    if key not in _hashes:
        _hashes[key] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return _hashes[key]


@functools.lru_cache(maxsize=1)
def _packages_distributions() -> dict:
    return packages_distributions()


def _distribution_of(module: str) -> tuple[str, str]:
    """The installed distribution that provides ``module``'s top-level package, and its version."""
    top = module.split(".")[0]
    # the built-ins are mapped from plugins/, which the metadata scan (0.3 s) would not name
    dists = ["ccbench"] if top == "ccbench_plugins" else _packages_distributions().get(top) or []
    if not dists:  # a plain module loaded with plugins=[...], not installed
        return "", ""
    return dists[0], _dist_version(dists[0])


def method_code(spec, also: tuple[str, ...] = ()) -> dict:
    """``code.plugin_dist``, ``code.plugin_version``, ``code.method_hash`` and ``code.method_files``
    of a loaded :class:`~ccbench.registry.MethodSpec` (see the module docstring for what counts).
    ``also``: further modules that shape the results (the tuner of a ``tune=cvcp`` cell)."""
    from .. import registry

    roots = [spec.estimator.__module__, *also]
    for other in getattr(spec, "uses", ()) or ():
        roots.append(registry.get_method_spec(other).estimator.__module__)
    files: dict[str, str] = {}
    for root in roots:
        for name, path in _implementation(root).items():
            files[name] = _file_hash(path)
    files = dict(sorted(files.items()))
    digest = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:16]
    dist, dist_version = _distribution_of(roots[0])
    return {"code.plugin_dist": dist, "code.plugin_version": dist_version,
            METHOD_HASH: digest, METHOD_FILES: json.dumps(files, sort_keys=True)}


def cell_method_code(method: str, tune: str | None = "none") -> dict:
    """The ``code.*`` columns of a cell's method: :func:`method_code`, plus the tuner's module when the
    cell is tuned (``tune=cvcp``: its numbers depend on the selection code too). The harness records
    it and the report compares rows with it, so the two agree on what "the installed code" is."""
    from .. import registry

    spec = registry.get_method_spec(method)
    if not _tuned(tune):
        return method_code(spec)
    return method_code(spec, also=(registry.get_tuner_spec(tune).select.__module__,))


def _tuned(tune) -> bool:
    return not (tune is None or tune == "none" or (isinstance(tune, float) and tune != tune))  # NaN: before tune


def from_method_of(n_clusters) -> str | None:
    """The method a ``method.n_clusters`` value takes k from (``"from_method=scssap"`` or
    ``{from_method: scssap, ...}``), else None."""
    if isinstance(n_clusters, str) and n_clusters.startswith("from_method="):
        return n_clusters.split("=", 1)[1].strip() or None
    if isinstance(n_clusters, dict) and n_clusters.get("from_method"):
        return str(n_clusters["from_method"])
    return None


INPUTS = "code.inputs"


def _grid_hash(grid: dict) -> str:
    return hashlib.sha256(json.dumps({k: [repr(v) for v in vs] for k, vs in sorted(grid.items())},
                                     sort_keys=True).encode()).hexdigest()[:16]


#: ccbench's modules of numerical code that methods share (the AP family's search for k, similarity
#: graphs): a method whose modules import one records its hash as an input, ``core:<module>``. ccbench's
#: other modules are its API and harness, recorded by the ccbench commit (``code.git_commit``) alone.
SHARED_NUMERICAL = ("ccbench.similarity",)


def _shared_numerical(method: str) -> dict[str, str]:
    """``{"core:<module>": hash}`` of the :data:`SHARED_NUMERICAL` modules the method's modules import
    (its estimator's, and those of the methods its ``MethodSpec.uses`` composes)."""
    from .. import registry

    spec = registry.get_method_spec(method)
    roots = [spec.estimator.__module__] + [registry.get_method_spec(o).estimator.__module__
                                          for o in (getattr(spec, "uses", ()) or ())]
    used = {m for root in roots for name, path in _implementation(root).items()
            for m in _imported_modules(name, path) if m in SHARED_NUMERICAL}
    return {f"core:{m}": _file_hash(_module_file(m)) for m in sorted(used) if _module_file(m) is not None}


def cell_inputs(method: str, tune: str | None = "none", from_method: str | None = None, metrics=()) -> dict:
    """``code.inputs``: JSON ``{input: hash}`` of what shapes a row besides its method's modules:
    ``grid`` (the method's ``MethodSpec.grid``, tuned cells), ``from_method:<name>`` (the
    ``code.method_hash`` of the method a cell takes its k from), ``metric:<name>`` (the module that
    defines each metric's function: ``ccbench/metrics.py`` for the built-ins) and ``core:<module>``
    (:data:`SHARED_NUMERICAL`: ``ccbench/similarity.py``, whose search for k the AP family runs; a row
    recorded before 2026-11-27 lacks it, and is not judged by it). A row is stale when one
    of the inputs it recorded differs from now (:func:`changed_inputs`). They are a column of their own,
    not part of ``code.method_hash``, so rows recorded before it existed keep their hash (those inputs
    are unverifiable for them, and a report says so)."""
    from .. import registry

    entries = {}
    if _tuned(tune):
        entries["grid"] = _grid_hash(registry.get_method_spec(method).grid)
    if from_method:
        entries[f"from_method:{from_method}"] = cell_method_code(from_method)[METHOD_HASH]
    try:
        entries.update(_shared_numerical(method))
    except Exception:  # noqa: BLE001 - an unknown method is reported by the trial itself
        pass
    for name in metrics:
        try:
            path = _module_file(registry.get_metric_spec(name).func.__module__)
        except Exception:  # noqa: BLE001 - an unknown metric is reported by the trial itself
            continue
        if path is not None:
            entries[f"metric:{name}"] = _file_hash(path)
    return {INPUTS: json.dumps(dict(sorted(entries.items())), sort_keys=True)}


def _input_pair(old, new) -> tuple[dict, dict] | None:
    """Two ``code.inputs`` values as dicts (a missing one is empty), or None when one is no JSON."""
    try:
        return (json.loads(old) if isinstance(old, str) else {}), (json.loads(new) if isinstance(new, str) else {})
    except ValueError:
        return None


def changed_inputs(old, new) -> list[str]:
    """Inputs recorded in both ``code.inputs`` values whose hash differs (a row without the column,
    recorded before it existed, is not made stale by this alone)."""
    pair = _input_pair(old, new)
    return [] if pair is None else sorted(k for k in set(pair[0]) & set(pair[1]) if pair[0][k] != pair[1][k])


def untracked_inputs(old, new) -> list[str]:
    """Inputs the current code records (``new``) that a row's ``code.inputs`` (``old``) lacks: the row was
    recorded before they were tracked, so which version of them made it is unknown."""
    pair = _input_pair(old, new)
    return [] if pair is None else sorted(set(pair[1]) - set(pair[0]))


def job_provenance(spec) -> dict:
    """Every provenance column of a job's rows (the method's code, ccbench's, the environment)."""
    return {**ccbench_code(), **method_code(spec), **environment()}


def changed_files(old_files, new_files) -> list[str]:
    """Modules whose hash differs between two ``code.method_files`` values (added or removed count)."""
    try:
        old = json.loads(old_files) if isinstance(old_files, str) else {}
    except ValueError:
        old = {}
    new = json.loads(new_files)
    return sorted(name for name in set(old) | set(new) if old.get(name) != new.get(name))
