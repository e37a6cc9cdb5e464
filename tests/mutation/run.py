"""Mutation testing for one algorithm family: break its formula modules one change at a time.

Usage (from the repository root, with the ``mutation`` extra installed)::

    .venv/bin/python tests/mutation/run.py nnc                  # 60 sampled mutants, seed 28
    .venv/bin/python tests/mutation/run.py kmeans --sample 120 --seed 1
    .venv/bin/python tests/mutation/run.py sdp --tests tests/test_sdp.py tests/test_solvers.py
    .venv/bin/python tests/mutation/run.py scap --list          # show the sample, run nothing

Each mutant is one small edit made by a cosmic-ray operator (``+`` -> ``-``, ``<`` -> ``<=``, a
number +- 1, ``True`` -> ``False``, ``and`` -> ``or``, a ``for`` loop over ``[]``, ``break`` <->
``continue``, a unary minus dropped, an ``except`` clause disabled, ...). The runner writes the
mutant into the source file in place, runs the family's tests
(``pytest -x -q -p no:cacheprovider``) with a timeout and puts the file back, byte for byte and
with its old modification time, before the next mutant; also on Ctrl-C / SIGTERM / an exception
(``finally``), and a run killed with SIGKILL is repaired by the next run from a backup it kept
(``tests/mutation/.state/``).

Why a sample: a family has 1,000-3,000 mutants and its tests take 5-15 s on this shared 2-core
machine, so the runner draws ``--sample`` mutation *sites* (a place in the code and an operator
kind, e.g. "the ``+`` on line 80") uniformly with a seeded generator, then one replacement per site
(e.g. ``-``). The draw depends only on the seed and the family's source, so two runs on the same
commit test the same mutants. A rate from n mutants is an estimate: its 95% interval is printed.

Outcomes: *killed* (a test failed or the tests could not import the mutant), *timeout* (the tests
ran longer than the timeout: counted as killed, since an infinite loop is detected), *survived*
(every test passed: the tests do not guard that line), *incompetent* (the mutant is not valid
Python; not counted). The report (``tests/mutation/results/<family>.md`` and ``.json``) lists every
survivor with file:line, operator and diff.

Numba: ``nnc`` and ``scap`` run with ``NUMBA_DISABLE_JIT=1``, so their ``_kernels.py`` loops run
as Python and a mutant there is tested without compiling (their tests take about as long either
way). ``affinity`` keeps the JIT (its kernels as Python take minutes): a mutant of its
``_kernels.py`` is compiled afresh in a throw-away numba cache (about a minute; its timeout allows
for it) while every other run reuses a private clean cache.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import datetime as _dt
import difflib
import glob
import hashlib
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
DEFAULT_SAMPLE = 40  # ~10-15 min a family on the shared 2-core machine (about 15 s a mutant under load)
DEFAULT_SEED = 28  # issue 28; the BEFORE/AFTER comparison uses this seed

# Modules never mutated: plugin registration (``__init__``) and the wrappers around third-party
# reference implementations (kmeans ``peers``, cobras ``peer``), which are not formulas of ours.
EXCLUDED_MODULES = ("__init__.py", "peers.py", "peer.py")


@dataclasses.dataclass(frozen=True)
class Family:
    """Which modules to mutate and which tests should kill the mutants."""

    name: str
    tests: tuple[str, ...]  # glob patterns relative to the repository root
    jit: bool = True  # False: run the tests with NUMBA_DISABLE_JIT=1
    paths: tuple[str, ...] = ()  # modules outside plugins/<name>/ (relative to the repository root)

    def modules(self) -> list[Path]:
        if self.paths:
            return sorted(REPO / p for p in self.paths)
        folder = REPO / "plugins" / self.name
        return sorted(p for p in folder.glob("*.py") if p.name not in EXCLUDED_MODULES)

    def test_files(self) -> list[str]:
        found = sorted({f for pattern in self.tests for f in glob.glob(str(REPO / pattern))})
        return [os.path.relpath(f, REPO) for f in found]


# Test files are globs so a new test file of the family (tests/test_nnc_audit.py) counts too.
FAMILIES = {
    f.name: f
    for f in (
        Family("affinity", ("tests/test_ap_core*.py", "tests/test_scssap*.py", "tests/test_ssap_g*.py",
                            "tests/test_affinity*.py", "tests/test_ap_n_clusters.py", "tests/test_search_speedups.py")),
        # test_ap_n_clusters.py: the n_clusters search both families share (six survivors of seed 20261126)
        Family("scap", ("tests/test_scap*.py", "tests/test_ap_n_clusters.py", "tests/test_search_speedups.py"), jit=False),
        Family("kmeans", ("tests/test_kmeans*.py", "tests/test_pccc_method.py", "tests/test_cop_kmeans_explores.py", "tests/test_search_speedups.py")),  # pccc.py: PCCC; local_search.py, _kernels.py: COP-k-means search (issue 52)
        Family("nnc", ("tests/test_nnc*.py",), jit=False),
        Family("spectral", ("tests/test_spectral*.py", "tests/test_search_speedups.py")),
        Family("sdp", ("tests/test_sdp*.py", "tests/test_kmeans_bound.py")),  # kmeans_bound.py: the k-means SDP bound
        Family("selection", ("tests/test_selection*.py",)),  # model selection (tune=cvcp), not an algorithm family
        Family("cobs", ("tests/test_cobs*.py",)),
        Family("cobras", ("tests/test_cobras*.py",)),  # COBRAS (issue 53): core.py, cobras.py
        Family("active", ("tests/test_active*.py",)),  # query strategies and the oracle (issue 53)
        # the active track in the core (issue 53 item 4): the harness's anytime cells and the page's numbers
        Family("active_track", ("tests/test_active_cells.py", "tests/test_active_report.py",
                                "tests/test_active_report_unqueried.py"),
               paths=("ccbench/running/active_cells.py", "ccbench/reporting/active.py")),
        # the leaderboard's statistics (core, not a plugin): its own tests and the signed-rank test's
        Family("leaderboard", ("tests/test_leaderboard.py", "tests/test_leaderboard_effects.py",
                               "tests/test_leaderboard_statements.py", "tests/test_budget_sensitivity.py",
                               "tests/test_leaderboard_power.py", "tests/test_leaderboard_pooling.py"),
               paths=tuple(f"ccbench/reporting/leaderboard/{m}.py" for m in ("_frame", "gains", "pages", "ranks", "effects",
                                                                            "_effect_stats", "budget_sensitivity",
                                                                            "power", "pooling", "headline_text"))),
        # data-set, scheme and noise plugins of plugins/datasets (issue 51: KEEL, PCCC's collection 2, PCCC's pairs
        # and confidence noise; issue 52: PCCC's and PC-SOS-SDP's files)
        Family("datasets", ("tests/test_keel*.py", "tests/test_pccc_col2*.py", "tests/test_pccc_scheme*.py",
                            "tests/test_pccc_noise*.py", "tests/test_pccc.py", "tests/test_pcsos*.py",
                            "tests/test_synthetic*.py")),
        # the paired statistics and the trial protocol (core): their own tests
        Family("stats", ("tests/test_stats.py",), paths=("ccbench/reporting/stats.py",)),
        Family("protocol", ("tests/test_harness.py", "tests/test_validation.py", "tests/test_noise.py",
                               "tests/test_time_models.py"),
               paths=("ccbench/running/protocol.py", "ccbench/running/size_limits.py")),
        # one measured timeout for all base seeds (issue 51 item 6): the marker's family, reading and writing
        Family("seed_timeouts", ("tests/test_seed_timeouts.py",), paths=("ccbench/running/seed_timeouts.py",)),
    )
}

# -- enumerating mutants ---------------------------------------------------------------------

# Replacements are kept within a kind of operator (arithmetic for arithmetic, bitwise for
# bitwise, order for order): ``x + y`` -> ``x >> y`` on floats only raises a TypeError, a kill
# that says nothing about the tests, and such variants would be most of a uniform sample.
_BINARY_GROUPS = ({"Add", "Sub", "Mul", "Div", "FloorDiv", "Mod", "Pow"}, {"BitOr", "BitAnd", "BitXor"},
                  {"LShift", "RShift"})
_COMPARISON_GROUPS = ({"Eq", "NotEq", "Lt", "LtE", "Gt", "GtE"}, {"Is", "IsNot"})
_UNARY_ALLOWED = {("UAdd", "USub"), ("USub", "UAdd"), ("UAdd", "Delete"), ("USub", "Delete"),
                  ("Invert", "Delete"), ("Not", "Delete")}
# Removing a decorator mostly hits @njit (the same code, slower), @property, @dataclass and
# @staticmethod: equivalent or trivially fatal, so not sampled.
_SKIPPED_OPERATORS = {"core/RemoveDecorator"}


def _replacement(name: str) -> tuple[str, str, str] | None:
    """``core/ReplaceBinaryOperator_Add_Sub`` -> ("core/ReplaceBinaryOperator", "Add", "Sub")."""
    for stem in ("core/ReplaceBinaryOperator", "core/ReplaceComparisonOperator", "core/ReplaceUnaryOperator"):
        if name.startswith(stem + "_"):
            a, b = name[len(stem) + 1:].split("_")
            if stem.endswith("UnaryOperator") and a == "Delete":  # named _Delete_<from>
                a, b = b, "Delete"
            return stem, a, b
    return None


def operator_kept(name: str) -> bool:
    """Whether operator ``name`` is one this runner samples (see the groups above)."""
    if name in _SKIPPED_OPERATORS:
        return False
    rep = _replacement(name)
    if rep is None:
        return True
    stem, a, b = rep
    if stem.endswith("BinaryOperator"):
        return any(a in g and b in g for g in _BINARY_GROUPS)
    if stem.endswith("ComparisonOperator"):
        return any(a in g and b in g for g in _COMPARISON_GROUPS)
    return (a, b) in _UNARY_ALLOWED


def site_kind(name: str) -> str:
    """The operator kind of a site: the operator name less its replacement."""
    rep = _replacement(name)
    return name if rep is None else f"{rep[0]}_{rep[1]}"


@dataclasses.dataclass(frozen=True, order=True)
class Mutant:
    path: str  # relative to the root given to enumerate_mutants
    line: int
    col: int
    kind: str
    operator: str
    occurrence: int  # cosmic-ray's index of this operator's position in the file

    @property
    def site(self) -> tuple[str, int, int, str]:
        return self.path, self.line, self.col, self.kind

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def _unmutated_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Spans whose mutants change nothing a test could see: annotations (never evaluated under
    ``from __future__ import annotations``), ``stacklevel=`` of warnings, ``__all__``."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        parts = []
        if isinstance(node, ast.arg) and node.annotation is not None:
            parts.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            parts.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            parts.append(node.annotation)
        elif isinstance(node, ast.keyword) and node.arg == "stacklevel":
            parts.append(node.value)
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            parts.append(node)
        spans += [((p.lineno, p.col_offset), (p.end_lineno, p.end_col_offset)) for p in parts]
    return spans


def _in_spans(pos: tuple[int, int], spans) -> bool:
    return any(start <= pos < end for start, end in spans)


def enumerate_mutants(paths, root=REPO) -> list[Mutant]:
    """Every kept mutant of the files ``paths``, in a deterministic order."""
    import cosmic_ray.plugins
    from cosmic_ray.ast import ast_nodes, get_ast

    names = sorted(n for n in cosmic_ray.plugins.operator_names() if operator_kept(n))
    operators = []
    for name in names:
        cls = cosmic_ray.plugins.get_operator(name)
        if not cls.arguments():  # operators needing arguments (variable replacer/inserter) are off
            operators.append((name, cls()))
    mutants = []
    for path in paths:
        path = Path(path)
        source = path.read_text(encoding="utf-8")
        skip = _unmutated_spans(source)
        skip_lines = {i for i, text in enumerate(source.splitlines(), 1) if "pragma: no mutate" in text}
        nodes = list(ast_nodes(get_ast(source)))
        rel = os.path.relpath(path, root)
        for name, op in operators:
            positions = ((start, end) for node in nodes for start, end in op.mutation_positions(node))
            for occurrence, (start, _end) in enumerate(positions):
                if start[0] in skip_lines or _in_spans(start, skip):
                    continue
                mutants.append(Mutant(rel, start[0], start[1], site_kind(name), name, occurrence))
    return sorted(set(mutants))


def sample_mutants(mutants: list[Mutant], n: int | None, seed: int, valid=None) -> tuple[list[Mutant], int]:
    """``n`` sites drawn uniformly without replacement with ``random.Random(seed)``, then one of
    each site's replacements; ``n=None`` takes every mutant. Returns (sample in draw order,
    number of sites). The draws come from one shuffle of all sites, so a smaller ``n`` with the
    same seed takes the first ``n`` draws of a larger one (results record their ``draw``).

    ``valid(mutant)`` (optional) rejects a draw that is no mutant (e.g. the bare ``*`` of a
    keyword-only signature "replaced" by ``-`` does not parse); the next site is drawn instead.
    """
    sites: dict = {}
    for m in sorted(mutants):
        sites.setdefault(m.site, []).append(m)
    if n is None:
        return [m for m in sorted(mutants) if valid is None or valid(m)], len(sites)
    rng = random.Random(seed)
    keys = sorted(sites)
    chosen = []
    for key in rng.sample(keys, len(keys)):
        if len(chosen) == n:
            break
        m = rng.choice(sites[key])
        if valid is None or valid(m):
            chosen.append(m)
    return chosen, len(sites)


def compiles(root=REPO):
    """``valid`` for :func:`sample_mutants`: the mutant changes the source and still parses."""
    cache: dict = {}

    def valid(m: Mutant) -> bool:
        if m.path not in cache:
            cache[m.path] = (Path(root) / m.path).read_text(encoding="utf-8")
        code = mutated_source(cache[m.path], m)
        if code is None:
            return False
        try:
            compile(code, m.path, "exec")
        except SyntaxError:
            return False
        return True

    return valid


# -- applying one mutant, always undone ------------------------------------------------------


class _Interrupted(BaseException):
    pass


def _raise_interrupt(signum, frame):  # SIGTERM / SIGHUP: unwind through the finally blocks
    raise _Interrupted(signum)


class SourceGuard:
    """Writes a mutant into a file and puts the original back (content and mtime).

    A journal (``state_dir/journal.json``) and a backup copy are written before the file is
    touched, so a run killed with SIGKILL is repaired by :func:`recover` at the next start.
    Restoring the mtime keeps every cache keyed on it (Python's .pyc, numba's cache index) valid
    for the original; the mutant itself gets a different mtime so no cache takes it for the
    original.
    """

    def __init__(self, state_dir: Path):
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.journal = self.state_dir / "journal.json"

    def apply(self, path: Path, mutated: str):
        path = Path(path)
        original = path.read_bytes()
        st = path.stat()
        backup = self.state_dir / "backup.py"
        backup.write_bytes(original)
        self.journal.write_text(json.dumps({"path": str(path), "backup": str(backup),
                                            "sha256": hashlib.sha256(original).hexdigest(),
                                            "atime_ns": st.st_atime_ns, "mtime_ns": st.st_mtime_ns}))
        return _Applied(self, path, original, st, mutated)

    def recover(self) -> str | None:
        """Restore a file left mutated by a killed run; returns its path, or None."""
        if not self.journal.exists():
            return None
        entry = json.loads(self.journal.read_text())
        data = Path(entry["backup"]).read_bytes()
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise RuntimeError(f"mutation backup {entry['backup']} is damaged; restore {entry['path']} "
                               "with `git checkout -- <file>`")
        Path(entry["path"]).write_bytes(data)
        os.utime(entry["path"], ns=(entry["atime_ns"], entry["mtime_ns"]))
        self.journal.unlink()
        return entry["path"]


class _Applied:
    def __init__(self, guard, path, original, st, mutated):
        self.guard, self.path, self.original, self.st, self.mutated = guard, path, original, st, mutated

    def __enter__(self):
        try:
            self.path.write_text(self.mutated, encoding="utf-8")
            if self.path.stat().st_mtime_ns // 10**9 == self.st.st_mtime_ns // 10**9:
                bumped = self.st.st_mtime_ns + 2 * 10**9
                os.utime(self.path, ns=(bumped, bumped))
        except BaseException:
            self.restore()
            raise
        return self

    def restore(self):
        self.path.write_bytes(self.original)
        os.utime(self.path, ns=(self.st.st_atime_ns, self.st.st_mtime_ns))
        if self.path.read_bytes() != self.original:  # pragma: no cover - disk trouble
            raise RuntimeError(f"could not restore {self.path}; the original is in {self.guard.state_dir}")
        self.guard.journal.unlink(missing_ok=True)

    def __exit__(self, *exc):
        self.restore()
        return False


def mutated_source(source: str, mutant: Mutant) -> str | None:
    """The source with ``mutant`` applied, or None when the operator finds nothing to change."""
    import cosmic_ray.plugins
    from cosmic_ray.mutating import mutate_code

    op = cosmic_ray.plugins.get_operator(mutant.operator)()
    try:
        code = mutate_code(source, op, mutant.occurrence)
    except AttributeError:  # cosmic-ray 8.7's ExceptionReplacer on a dotted name inside a tuple,
        return None         # ``except (registry.UnknownNameError, ImportError)``: it cannot write that mutant
    return None if code is None or code == source else code


def _diff(before: str, after: str, path: str) -> str:
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), f"a/{path}", f"b/{path}", n=1,
                                 lineterm="")
    return "\n".join(list(lines)[2:])  # drop the ---/+++ header: the report names the file


def run_command(cmd, env, cwd, timeout) -> tuple[str, float, str]:
    """Run the tests; ("killed" | "survived" | "timeout", seconds, tail of the output)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return "timeout", time.monotonic() - t0, ""
    except BaseException:  # Ctrl-C: stop the tests too before the file is restored
        _kill_group(proc)
        raise
    tail = out.decode("utf-8", "replace")[-1500:]
    outcome = "survived" if proc.returncode == 0 else "killed"
    if proc.returncode == 5:  # pytest: no tests collected, a configuration error
        raise RuntimeError(f"{cmd} collected no tests:\n{tail}")
    return outcome, time.monotonic() - t0, tail


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    proc.communicate()


def run_mutants(sample, *, root, test_cmd, env, timeout, state_dir, kernel_files=(), kernel_extra=0.0,
                fresh_cache_env=None, log=print, results=None) -> list[dict]:
    """Apply each mutant of ``sample`` in turn, run ``test_cmd``, restore. One dict per mutant,
    appended to ``results`` (if given) as each finishes, so an interrupted run keeps its part."""
    guard = SourceGuard(state_dir)
    results = [] if results is None else results
    old = {s: signal.signal(s, _raise_interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        for i, m in enumerate(sample, 1):
            path = Path(root) / m.path
            source = path.read_text(encoding="utf-8")
            code = mutated_source(source, m)
            row = dataclasses.asdict(m)
            if code is None:
                row.update(outcome="no-op", seconds=0.0, diff="")
                results.append(row)
                continue
            row["diff"] = _diff(source, code, m.path)
            try:
                compile(code, str(path), "exec")
            except SyntaxError:
                row.update(outcome="incompetent", seconds=0.0)
                results.append(row)
                continue
            run_env, limit = env, timeout
            if m.path in kernel_files:  # compiled afresh in a throw-away numba cache
                limit = timeout + kernel_extra
            with tempfile.TemporaryDirectory(prefix="ccbench-mutant-numba-") as tmp:
                if m.path in kernel_files and fresh_cache_env:
                    run_env = dict(env, **{fresh_cache_env: tmp})
                with guard.apply(path, code):
                    outcome, seconds, tail = run_command(test_cmd, run_env, root, limit)
            row.update(outcome=outcome, seconds=round(seconds, 1))
            if outcome == "killed":
                row["failure"] = _first_failure(tail)
            results.append(row)
            log(f"[{i:3d}/{len(sample)}] {outcome:8s} {seconds:6.1f}s  {m.where}  {m.operator.split('/')[-1]}")
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    return results


def _first_failure(tail: str) -> str:
    for line in tail.splitlines():
        if line.startswith(("FAILED", "ERROR")):
            return line[:200]
    return ""


# -- reporting -------------------------------------------------------------------------------


def find_equivalent(row: dict):
    """The entry of ``equivalents.py`` proving a survivor equivalent, or None."""
    import importlib.util

    name = "ccbench_mutation_equivalents"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / "equivalents.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclass looks its module up
        spec.loader.exec_module(module)
    return sys.modules[name].find(row)


def summarise(results) -> dict:
    """Counts, the kill rate (killed + timeout) / run, and the rate without the survivors that
    ``equivalents.py`` proves equivalent (``rate_without_equivalents``, from run - equivalent)."""
    counts = {k: sum(r["outcome"] == k for r in results) for k in ("killed", "survived", "timeout",
                                                                   "incompetent", "no-op")}
    tested = counts["killed"] + counts["survived"] + counts["timeout"]
    detected = counts["killed"] + counts["timeout"]
    rate = detected / tested if tested else float("nan")
    lo, hi = wilson_interval(detected, tested)
    equivalent = sum(r["outcome"] == "survived" and find_equivalent(r) is not None for r in results)
    rest = tested - equivalent
    return dict(counts, run=tested, rate=rate, ci95=(lo, hi), equivalent=equivalent,
                rate_without_equivalents=detected / rest if rest else float("nan"),
                ci95_without_equivalents=wilson_interval(detected, rest))


def equivalents_line(s: dict) -> str:
    lo, hi = s["ci95_without_equivalents"]
    return (f"without the {s['equivalent']} proven equivalent mutant(s) (tests/mutation/equivalents.py): "
            f"{s['killed'] + s['timeout']}/{s['run'] - s['equivalent']} = {100 * s['rate_without_equivalents']:.0f}% "
            f"({100 * lo:.0f}-{100 * hi:.0f}%)")


def wilson_interval(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion k/n (a sample's kill rate is an estimate)."""
    if n == 0:
        return float("nan"), float("nan")
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


TABLE_HEAD = ("| family | mutants run | killed | survived | timeout | kill rate | 95% interval |\n"
              "|---|---:|---:|---:|---:|---:|---|")


def table_row(family: str, s: dict) -> str:
    lo, hi = s["ci95"]
    return (f"| {family} | {s['run']} | {s['killed']} | {s['survived']} | {s['timeout']} | "
            f"{100 * s['rate']:.0f}% | {100 * lo:.0f}-{100 * hi:.0f}% |")


def write_report(out_dir: Path, family: str, meta: dict, results, summary) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{family}.json").write_text(json.dumps(dict(meta, summary=summary, mutants=results), indent=1))
    lines = [f"# Mutation testing: {family}", ""]
    lines += [f"- {k}: {v}" for k, v in meta.items()]
    lines += ["", TABLE_HEAD, table_row(family, summary), "", equivalents_line(summary), ""]
    survivors = [r for r in results if r["outcome"] == "survived"]
    lines += [f"## Survivors ({len(survivors)}): each is a change no test of the family notices", ""]
    for r in survivors:
        lines += [f"### {r['path']}:{r['line']} `{r['operator']}`" + (f" (draw {r['draw']})" if "draw" in r else ""),
                  "", "```diff", r["diff"], "```", ""]
        proof = find_equivalent(r)
        if proof is not None:
            lines += [f"Equivalent (equivalents.py): {proof.why}.", ""]
    timeouts = [r for r in results if r["outcome"] == "timeout"]
    if timeouts:
        lines += [f"## Timeouts ({len(timeouts)})", ""]
        lines += [f"- {r['path']}:{r['line']} `{r['operator']}`" for r in timeouts] + [""]
    path = out_dir / f"{family}.md"
    path.write_text("\n".join(lines))
    return path


# -- one family ------------------------------------------------------------------------------


def _git(*args) -> str:
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def family_env(family: Family, numba_cache: Path) -> dict:
    env = dict(os.environ)
    env.update(PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg", PYTHONHASHSEED="0",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.setdefault("CCBENCH_DATA_DIR", "/work/shared/datasets")
    env["NUMBA_CACHE_DIR"] = str(numba_cache)
    if not family.jit:
        env["NUMBA_DISABLE_JIT"] = "1"
    else:
        env.pop("NUMBA_DISABLE_JIT", None)
    return env


def run_family(family: Family, *, sample: int | None, seed: int, tests=None, timeout=None,
               out_dir: Path, list_only=False, log=print) -> dict | None:
    modules = family.modules()
    test_files = list(tests) if tests else family.test_files()
    if not test_files:
        raise SystemExit(f"no test files for {family.name}: none match {family.tests}; pass --tests")
    mutants = enumerate_mutants(modules, root=REPO)
    drawn, n_sites = sample_mutants(mutants, sample, seed, valid=compiles())
    draw = {m: i for i, m in enumerate(drawn, 1)}
    # Run in draw order: the first k finished are the sample --sample k would draw, so an
    # interrupted run still reports an unbiased (smaller) sample.
    chosen = drawn
    log(f"== {family.name}: {len(mutants)} mutants at {n_sites} sites in "
        f"{', '.join(os.path.relpath(m, REPO) for m in modules)}; running {len(chosen)} (seed {seed})")
    log(f"   tests: {' '.join(test_files)}")
    if list_only:
        for m in chosen:
            log(f"   {m.where:40s} {m.operator}")
        return None
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *test_files]
    numba_cache = Path(tempfile.gettempdir()) / f"ccbench-mutation-numba-{family.name}"
    env = family_env(family, numba_cache)
    # modules compiled by numba when the JIT is on: a mutant there must be compiled afresh
    kernel_files = {os.path.relpath(m, REPO) for m in modules
                    if family.jit and "@njit" in m.read_text(encoding="utf-8")}
    # The clean run: the tests must pass unmutated (else every mutant "dies"), warms the numba
    # cache, and times the tests for the timeout.
    outcome, first, tail = run_command(cmd, env, REPO, timeout=1800)
    if outcome != "survived":
        raise SystemExit(f"{family.name}: the tests fail (or time out) on the unmutated code:\n{tail}")
    outcome, clean, tail = run_command(cmd, env, REPO, timeout=1800)
    limit = timeout or max(30.0, 3 * clean + 20)
    # A kernel mutant compiles every kernel afresh: the first clean run did that too when the
    # private cache was empty, so twice its extra time (at least 240 s) covers a busy machine.
    kernel_extra = max(240.0, 2 * (first - clean)) if kernel_files else 0.0
    log(f"   clean run {clean:.1f}s -> timeout {limit:.0f}s"
        + (f" (+{kernel_extra:.0f}s to compile a mutated {', '.join(sorted(kernel_files))})" if kernel_files else ""))
    t0 = time.monotonic()
    results: list[dict] = []
    interrupted = None
    try:
        run_mutants(chosen, root=REPO, test_cmd=cmd, env=env, timeout=limit, state_dir=HERE / ".state",
                    kernel_files=kernel_files, kernel_extra=kernel_extra, fresh_cache_env="NUMBA_CACHE_DIR",
                    log=log, results=results)
    except (KeyboardInterrupt, _Interrupted) as exc:
        interrupted = exc  # report the mutants done (the first draws), then stop
    for r, m in zip(results, chosen):
        r["draw"] = draw[m]
    summary = summarise(results)
    dirty = _git("status", "--porcelain", "--", f"plugins/{family.name}", *test_files)
    meta = {
        "family": family.name,
        "date (UTC)": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "commit": _git("rev-parse", "--short", "HEAD") + (" (+ uncommitted changes)" if dirty else ""),
        "seed": seed,
        "sample": f"{len(chosen)} of {n_sites} sites ({len(mutants)} mutants)",
        "modules": ", ".join(os.path.relpath(m, REPO) for m in modules),
        "tests": " ".join(test_files),
        "numba": "JIT" if family.jit else "NUMBA_DISABLE_JIT=1",
        "timeout (s)": round(limit),
        "wall time (min)": round((time.monotonic() - t0) / 60, 1),
    }
    if interrupted is not None:
        meta["interrupted"] = f"after {len(results)} of {len(chosen)} draws: a sample of {len(results)}"
    report = write_report(out_dir, family.name, meta, results, summary)
    log(f"   survivors and diffs: {os.path.relpath(report, REPO)}")
    if interrupted is not None:
        raise interrupted
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("family", nargs="+", choices=[*FAMILIES, "all"], help="family (or 'all', one after another)")
    parser.add_argument("--sample", type=int, default=DEFAULT_SAMPLE,
                        help=f"mutation sites to draw (default {DEFAULT_SAMPLE}); 0 = every mutant")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"sampling seed (default {DEFAULT_SEED})")
    parser.add_argument("--tests", nargs="+", metavar="PATH", help="test files to run instead of the family's")
    parser.add_argument("--timeout", type=float, help="seconds per mutant (default: 3 x the clean run + 20)")
    parser.add_argument("--out", type=Path, default=HERE / "results",
                        help="report folder (default tests/mutation/results)")
    parser.add_argument("--list", action="store_true", help="print the sampled mutants and stop")
    args = parser.parse_args(argv)
    names = list(FAMILIES) if "all" in args.family else args.family
    lock = HERE / ".state" / "lock"
    if lock.exists() and _alive(int(lock.read_text() or 0)):  # its mutant may be in place right now
        raise SystemExit(f"another mutation run (pid {lock.read_text()}) is using this checkout; wait for it "
                         "(even --list: it would read the mutated file)")
    repaired = SourceGuard(HERE / ".state").recover()
    if repaired:
        print(f"restored {repaired}, left mutated by an interrupted run")
    lock.write_text(str(os.getpid()))
    for s in (signal.SIGTERM, signal.SIGHUP):  # unwind (restore, report, unlock) on kill too
        signal.signal(s, _raise_interrupt)
    summaries = {}
    try:
        for name in names:
            s = run_family(FAMILIES[name], sample=args.sample or None, seed=args.seed, tests=args.tests,
                           timeout=args.timeout, out_dir=args.out, list_only=args.list)
            if s is not None:
                summaries[name] = s
    except (KeyboardInterrupt, _Interrupted):
        print("\ninterrupted: the source is restored", file=sys.stderr)
        return 130
    finally:
        lock.unlink(missing_ok=True)
        dirty = _git("status", "--porcelain", "--", "plugins")
        if dirty and dirty != "?":
            print(f"note: plugins/ differs from HEAD (edits of yours, or report this):\n{dirty}", file=sys.stderr)
    if summaries:
        print("\n" + TABLE_HEAD)
        for name, s in summaries.items():
            print(table_row(name, s))
        for name, s in summaries.items():
            print(f"{name}: {equivalents_line(s)}")
    return 0


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
