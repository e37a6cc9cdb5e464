"""``ccbench check-plugin NAME``: ccbench's own method checks, run on one method.

What ``benchopt test`` is to a benchopt solver: a plugin author runs the checks that
ccbench's test suite runs on every built-in method, on their own method, and gets a
pass / fail line per check (exit status 1 on any failure). Three groups:

- ``estimator``: scikit-learn's estimator checks
  (:func:`sklearn.utils.estimator_checks.check_estimator`), with the failures a method
  cannot avoid listed with their reason in :data:`EXPECTED_FAILED_CHECKS`
  (``tests/test_estimator_checks.py`` runs the same on the built-ins);
- ``hostile``: :data:`HOSTILE_CASES` (contradictory constraints, one point per cluster,
  constant features, scales 1e-8 / 1e8, float32, ...): a valid clustering (a ``hard``
  method meeting its consistent constraints) or a documented ``ValueError`` /
  ``TypeError``, never a numpy ``RuntimeWarning``; contradictory constraints warn; the
  same seed gives the same labels; a DataFrame records ``feature_names_in_``
  (``tests/test_hostile.py``);
- ``config``: ``method/NAME.yaml`` composes, holds only real parameters that differ
  from the estimator's defaults, and sets ``n_clusters`` when the method needs k
  (``tests/test_method_configs.py``).

``NAME`` may also be an active query strategy (``ccbench_query_strategies``): then the
``strategy`` group runs instead (:mod:`ccbench.running._check_strategy`: a pair out of range,
of a point with itself or asked before, an exception, or a seed that does not fix the pairs fails).

The checks live here, once; the test files import them. ccbench's tests about *its*
methods iterate over :func:`builtin_methods` only, so installing a third-party plugin
cannot break them.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Iterable

import numpy as np

from ..specs import resolve_relative_k
from ._check_report import _NO_RESULT, MAX_HUNG_IN_A_ROW, CheckResult, _first_line, _Results  # noqa: F401
from ._check_strategy import STRATEGY_CHECKS, is_query_strategy, strategy_checks  # noqa: F401

#: Top-level packages of ccbench's own distribution: a method whose estimator lives in
#: one of them is a built-in.
BUILTIN_PACKAGES = ("ccbench", "ccbench_plugins")
GROUPS = ("estimator", "hostile", "config")


# --------------------------------------------------------------------------- which methods


def estimator_module(spec) -> str:
    """Dotted module of ``spec``'s estimator (without importing a ``"module:Class"`` string)."""
    est = spec.estimator
    return est.partition(":")[0] if isinstance(est, str) else est.__module__


def is_builtin(spec) -> bool:
    """Whether ``spec`` comes from ccbench itself (not a third-party or test plugin)."""
    return estimator_module(spec).split(".", 1)[0] in BUILTIN_PACKAGES


def builtin_methods(*, load: bool = True) -> list:
    """The registered methods ccbench ships (``list_methods`` minus every other plugin's)."""
    from ..registry import list_methods

    return [spec for spec in list_methods(load=load) if is_builtin(spec)]


# --------------------------------------------------------------------------- estimator checks

#: Checks that cannot hold for a method, and why: ``{method name: {check: reason}}``.
EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {
    "rn_sdp": {
        "check_clustering": "without constraints the SDP optimum on the check's blobs is the all-ones K "
        "(every point alike), so k-medoids finds one cluster; RN-SDP needs supervision (it warns). Under the "
        "default SDPA route the interior-point K is all-ones only to about 1e-7 and k-medoids splits that "
        "noise, which can pass the check by chance (an xpass, not a fix)",
    },
}


def check_instance(spec):
    """The estimator the scikit-learn checks run on: fixed seed, short message-passing runs
    (the checks test the interface, not convergence)."""
    est = spec.estimator()
    defaults = est.get_params()
    params = {}
    if "random_state" in defaults:
        params["random_state"] = 0
    if "max_iter" in defaults and spec.name != "kmeans":
        params["max_iter"] = 200
    if "convergence_iter" in defaults:
        params["convergence_iter"] = 15
    return spec.estimator(**params)


def expected_failed_checks(spec) -> dict[str, str]:
    return dict(EXPECTED_FAILED_CHECKS.get(spec.name, {}))


def estimator_checks(spec) -> list[CheckResult]:
    """scikit-learn's estimator checks on ``spec``'s estimator, one result per check."""
    from sklearn.utils.estimator_checks import check_estimator

    expected = expected_failed_checks(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(check_instance(spec), expected_failed_checks=expected,
                                  on_skip=None, on_fail=None)
    out = []
    for r in results:
        status = {"passed": "pass", "failed": "fail", "xfail": "xfail", "skipped": "skip"}.get(r["status"], "fail")
        if status == "fail":
            detail = _first_line(r["exception"]) if r.get("exception") is not None else r["status"]
        elif status == "xfail":
            detail = r.get("expected_to_fail_reason") or ""
        elif status == "skip" and r.get("exception") is not None:
            detail = str(r["exception"]).strip()
        else:
            detail = ""
        out.append(CheckResult("estimator", r["check_name"], status, detail))
    return out


# --------------------------------------------------------------------------- hostile cases

N = 12


def _blobs(n=N, d=2, scale=1.0, dtype=np.float64):
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 0.3, (n // 2, d)), rng.normal(4, 0.3, (n - n // 2, d))] * scale
    return X.astype(dtype)


def _cons(ml=(), cl=(), n=N, labels=None):
    from ..constraints import Constraints

    return Constraints(np.array(ml, dtype=int).reshape(-1, 2), np.array(cl, dtype=int).reshape(-1, 2),
                       n_samples=n, labels=labels)


def _labels(n=N, per_class=2):
    lab = np.full(n, -1)
    lab[:per_class] = 0
    lab[n // 2:n // 2 + per_class] = 1
    return lab


def _from_labels():
    from ..constraints import Constraints

    return Constraints.from_labels(_labels())


#: name -> () -> (X, constraints or None, n_clusters)
HOSTILE_CASES: dict[str, Callable] = {
    "no_constraints": lambda: (_blobs(), None, 2),
    "only_must_links": lambda: (_blobs(), _cons(ml=[(0, 1), (6, 7)]), 2),
    "only_cannot_links": lambda: (_blobs(), _cons(cl=[(0, 6), (1, 7)]), 2),
    "labels": lambda: (_blobs(), _from_labels(), 2),
    "contradictory": lambda: (_blobs(), _cons(ml=[(0, 1), (1, 2)], cl=[(0, 2)]), 2),
    "duplicated_and_reversed_pairs": lambda: (_blobs(), _cons(ml=[(0, 1), (1, 0), (0, 1)], cl=[(7, 0), (0, 7)]), 2),
    "one_chunklet": lambda: (_blobs(), _cons(ml=[(i, i + 1) for i in range(N - 1)]), 2),
    "n_clusters_1": lambda: (_blobs(), _cons(ml=[(0, 1)]), 1),
    "n_clusters_n": lambda: (_blobs(), _cons(cl=[(0, 1)]), N),
    "duplicate_points": lambda: (np.repeat(_blobs(6), 2, axis=0), _cons(ml=[(0, 2)], cl=[(0, 11)]), 2),
    "constant_feature": lambda: (np.c_[_blobs(), np.ones(N)], _cons(ml=[(0, 1)]), 2),
    "all_points_identical": lambda: (np.ones((N, 2)), None, 2),
    "two_points": lambda: (np.array([[0.0, 0.0], [1.0, 1.0]]), _cons(cl=[(0, 1)], n=2), 2),
    "one_feature": lambda: (_blobs(d=1), _cons(ml=[(0, 1)], cl=[(0, 7)]), 2),
    "scale_1e-8": lambda: (_blobs(scale=1e-8), _cons(ml=[(0, 1)], cl=[(0, 7)]), 2),
    "scale_1e8": lambda: (_blobs(scale=1e8), _cons(ml=[(0, 1)], cl=[(0, 7)]), 2),
    "float32": lambda: (_blobs(dtype=np.float32), _cons(ml=[(0, 1)], cl=[(0, 7)]), 2),
}


def make_for_checks(spec, k):
    """``spec``'s estimator with ``random_state=0`` (if it has one) and ``n_clusters=k`` (if it needs k)."""
    from ..registry import make_method

    params = {"random_state": 0} if "random_state" in spec.estimator().get_params() else {}
    if spec.needs_n_clusters:
        params["n_clusters"] = k
    return make_method(spec.name, **params)


def check_outcome(spec, X, cons, est) -> None:
    """``AssertionError`` unless ``est.labels_`` is a clustering of ``X`` and a ``hard``
    method meets the consistent constraints of the kinds it declares."""
    labels = np.asarray(est.labels_)
    assert labels.shape == (len(X),), f"labels_ has shape {labels.shape}, expected ({len(X)},)"
    assert np.issubdtype(labels.dtype, np.integer), f"labels_ dtype {labels.dtype} is not an integer type"
    if cons is None or not cons.is_consistent() or spec.constraint_kind != "hard" or (labels < 0).any():
        return
    split, joined = cons.violations(labels)
    if "must_link" in spec.supervision:
        assert split == 0, f"hard method split {split} must-link(s)"
    if "cannot_link" in spec.supervision:
        assert joined == 0, f"hard method joined {joined} cannot-link(s)"


def run_hostile_case(spec, case: str) -> str:
    """Fit ``spec`` on ``HOSTILE_CASES[case]``: returns ``"clustering"`` or
    ``"documented error: ..."``; raises ``AssertionError`` (or the unexpected exception,
    e.g. a numpy ``RuntimeWarning`` turned error) when the outcome is neither."""
    from ..base import ConvergenceWarning

    X, cons, k = HOSTILE_CASES[case]()
    est = make_for_checks(spec, k)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # an unhandled numpy warning fails the case
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        try:
            est.fit(X, constraints=cons)
        except (ValueError, TypeError) as exc:
            assert str(exc).strip(), f"{type(exc).__name__} without a message: an error must say what is wrong"
            return f"documented error: {_first_line(exc)}"
    check_outcome(spec, X, cons, est)
    return "clustering"


def contradiction_outcome(spec) -> tuple[str, bool]:
    """Fit the ``contradictory`` case: (``"fits"`` or ``"infeasible"``, whether an
    :class:`~ccbench.base.InconsistentConstraintsWarning` was issued)."""
    from ..base import InconsistentConstraintsWarning, InfeasibleConstraintsError

    X, cons, k = HOSTILE_CASES["contradictory"]()
    est = make_for_checks(spec, k)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est.fit(X, constraints=cons)
            outcome = "fits"
        except InfeasibleConstraintsError:
            outcome = "infeasible"
    return outcome, any(issubclass(w.category, InconsistentConstraintsWarning) for w in caught)


def check_dataframe_feature_names(spec) -> None:
    """A pandas DataFrame with string columns records them in ``feature_names_in_``."""
    import pandas as pd

    X = pd.DataFrame(_blobs(), columns=["a", "b"])
    est = make_for_checks(spec, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, constraints=_cons(ml=[(0, 1)], cl=[(0, 7)]))
    assert list(getattr(est, "feature_names_in_", [])) == ["a", "b"], "feature_names_in_ not recorded"
    assert np.asarray(est.labels_).shape == (N,), f"labels_ has shape {np.shape(est.labels_)}"


def check_same_seed_same_labels(spec) -> None:
    """Two fits with ``random_state=0`` on the same input give identical labels."""
    X, cons, k = HOSTILE_CASES["only_cannot_links"]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = make_for_checks(spec, k).fit(X, constraints=cons).labels_
        b = make_for_checks(spec, k).fit(X, constraints=cons).labels_
    np.testing.assert_array_equal(a, b, err_msg="the same seed gave different labels")


def _outcome(group: str, name: str, func: Callable[[], str | None]) -> CheckResult:
    try:
        detail = func() or ""
    except Exception as exc:  # noqa: BLE001 - any exception is this check's failure, reported
        return CheckResult(group, name, "fail", _first_line(exc))
    return CheckResult(group, name, "pass", detail)


def _hostile_items(spec) -> list[tuple[str, Callable[[], str | None]]]:
    def warns():
        outcome, warned = contradiction_outcome(spec)
        assert warned, "contradictory constraints gave no InconsistentConstraintsWarning"
        return outcome

    return [
        *[(case, lambda case=case: run_hostile_case(spec, case)) for case in HOSTILE_CASES],
        ("contradictory_constraints_warn", warns),
        ("dataframe_feature_names", lambda: check_dataframe_feature_names(spec)),
        ("same_seed_same_labels", lambda: check_same_seed_same_labels(spec)),
    ]


HOSTILE_CHECKS = (*HOSTILE_CASES, "contradictory_constraints_warn", "dataframe_feature_names",
                  "same_seed_same_labels")


def hostile_checks(spec) -> list[CheckResult]:
    return [_outcome("hostile", name, func) for name, func in _hostile_items(spec)]


def _checks_in_worker(plugins, name: str, group: str, check: str | None) -> list[CheckResult]:
    """One hostile check, or the whole estimator group, of method ``name``: what
    :func:`check_method` runs in an isolated worker (picklable arguments only)."""
    from ..registry import get_method_spec, load_plugins

    load_plugins(list(plugins))
    spec = get_method_spec(name)
    if group == "estimator":
        return estimator_checks(spec)
    return [_outcome("hostile", check, dict(_hostile_items(spec))[check])]


def _registered_modules(given) -> list[str]:
    """``given`` plus every plugin module registered here under its own name (a module a caller
    registered in this process), so that the worker process registers the same ones."""
    import types

    from ..registry import get_plugin_manager

    names = list(given)
    for name, plugin in get_plugin_manager().list_name_plugin():
        if isinstance(plugin, types.ModuleType) and name == plugin.__name__ and name not in names:
            names.append(name)
    return names


def _isolated(runner, timeout, plugins, name, group, check) -> list[CheckResult]:
    """:func:`_checks_in_worker` under ``runner`` with ``timeout``: a fit that never returns or
    that ends its process fails that check, naming why, and the next check gets a new worker."""
    from ..isolation import TrialTimeout, WorkerDied

    what = check or "estimator checks"
    try:
        return runner.call(_checks_in_worker, list(plugins), name, group, check, timeout=timeout)
    except TrialTimeout:
        return [CheckResult(group, what, "fail", f"{_NO_RESULT} {timeout:g} s (a fit that never "
                                                 f"returns?); the worker was killed")]
    except WorkerDied as exc:
        return [CheckResult(group, what, "fail", f"WorkerDied: {exc}")]
    except Exception as exc:  # noqa: BLE001 - e.g. the method does not load in the worker
        return [CheckResult(group, what, "fail", _first_line(exc))]


# --------------------------------------------------------------------------- config

#: Keys of a method file that are not passed to the estimator as written.
RESERVED_KEYS = ("name", "n_clusters")


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    return a == b


def config_problems(spec, composed: dict, own: dict, parents: dict | None = None, file: str = "") -> list[str]:
    """Problems of a method config, ``[]`` when it is right.

    ``composed``: the group node after Hydra composed it; ``own``: the values the file
    writes itself (its ``defaults`` list left out); ``parents``: what its parent configs
    contribute. The file must name real parameters only, build an estimator whose
    ``get_params()`` is the defaults plus the declared values, repeat no default, and
    set ``n_clusters`` when the method needs k.
    """
    from ..registry import make_method

    file = file or f"method/{spec.name}.yaml"
    problems = []
    if composed.get("name") != spec.name:
        problems.append(f"{file}: name is {composed.get('name')!r}, expected {spec.name!r}")
    defaults = spec.estimator().get_params()
    declared = {k: v for k, v in composed.items() if k not in RESERVED_KEYS}
    unknown = sorted(set(declared) - set(defaults))
    if unknown:
        return problems + [f"{file}: {unknown} are not parameters of {spec.estimator.__name__}"]
    try:
        est = make_method(spec.name, **declared)
    except Exception as exc:  # noqa: BLE001 - reported as the problem
        return problems + [f"{file}: building the estimator failed: {_first_line(exc)}"]
    if est.get_params() != {**defaults, **declared}:
        problems.append(f"{file}: get_params() differs from the defaults plus the file's values")
    baseline = {**defaults, **{k: v for k, v in (parents or {}).items() if k not in RESERVED_KEYS}}
    repeated = sorted(k for k, v in own.items() if k not in RESERVED_KEYS and k in baseline and _same(v, baseline[k]))
    if repeated:
        problems.append(f"{file} repeats the default(s) {repeated}; keep only values that differ from "
                        f"{spec.estimator.__name__}'s defaults (or its parent config)")
    if spec.needs_n_clusters:
        if "n_clusters" not in composed:
            problems.append(f"{file} lacks n_clusters (true_k, an int or from_method)")
        if "n_clusters" not in inspect.signature(spec.estimator).parameters:
            problems.append(f"{spec.estimator.__name__} needs k but has no n_clusters parameter")
    return problems


def default_searchpath(spec) -> list[str]:
    """Where a plugin's configs are looked for by default: ``pkg://<top package>.conf``
    (README's layout), unless the method is a built-in."""
    if is_builtin(spec):
        return []
    return [f"pkg://{estimator_module(spec).split('.', 1)[0]}.conf"]


def grid_problems(spec) -> list[str]:
    """What is wrong with ``spec.grid`` (the model-selection grid, ``tune=cvcp``): a parameter the
    estimator does not take, a default missing from its values, a combination that does not build."""
    if not spec.grid:
        return []
    params = inspect.signature(spec.estimator).parameters
    problems = []
    for key, values in spec.grid.items():
        if key not in params:
            problems.append(f"grid parameter {key!r} is not a parameter of {spec.estimator.__name__}")
        elif key == "n_clusters":  # relative to the trial's k (MethodSpec checks the form): "k" is the default
            if "k" not in values:
                problems.append(f"grid['n_clusters'] = {values!r} lacks 'k', the k the trial is given "
                                f"(tuning must be able to keep it)")
        elif params[key].default is not inspect.Parameter.empty and params[key].default not in values:
            problems.append(f"grid[{key!r}] = {values!r} lacks the default {params[key].default!r} "
                            f"(tuning must be able to keep the defaults)")
    if not problems:
        for combo in spec.grid_combinations():
            if "n_clusters" in combo:
                combo = {**combo, "n_clusters": resolve_relative_k(combo["n_clusters"], 3)}
            try:
                spec.estimator(**combo)
            except Exception as exc:  # noqa: BLE001 - any refusal is the finding
                problems.append(f"grid combination {combo} does not build: {_first_line(exc)}")
    return problems


def config_check(spec, searchpath: Iterable[str] | None = None) -> list[CheckResult]:
    """Compose ``method=<name>`` (with ``searchpath`` added to Hydra's) and check it."""
    import yaml
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra

    from . import app  # noqa: F401  (registers the structured configs and the ccbench sweeper)

    searchpath = list(default_searchpath(spec) if searchpath is None else searchpath)
    overrides = [f"hydra.searchpath=[{','.join(searchpath)}]"] if searchpath else []

    def run():
        GlobalHydra.instance().clear()
        with initialize_config_module("ccbench_conf", version_base="1.3"):
            try:
                cfg = compose("config", overrides=[*overrides, f"method={spec.name}"])
            except Exception as exc:  # noqa: BLE001 - Hydra's MissingConfigException and the like
                where = f" (searched ccbench's conf and {searchpath})" if searchpath else ""
                raise AssertionError(f"no method/{spec.name}.yaml found{where}: {_first_line(exc)}") from None
            composed = dict(cfg.method)
            own, parents = _file_values(spec.name, overrides, searchpath, compose, yaml)
        GlobalHydra.instance().clear()
        problems = config_problems(spec, composed, own, parents)
        assert not problems, "; ".join(problems)

    def grid():
        problems = grid_problems(spec)
        assert not problems, "; ".join(problems)

    checks = [_outcome("config", f"method/{spec.name}.yaml", run)]
    return [*checks, _outcome("config", "grid", grid)] if spec.grid else checks


def _file_values(name: str, overrides: list[str], searchpath: list[str], compose, yaml) -> tuple[dict, dict]:
    """The values ``method/<name>.yaml`` writes itself and those of its parent configs."""
    data = yaml.safe_load(_read_method_file(name, searchpath)) or {}
    own = {k: v for k, v in data.items() if k != "defaults"}
    parents = {}
    for parent in [d for d in data.get("defaults", []) if isinstance(d, str) and d != "_self_"]:
        parents.update(dict(compose("config", overrides=[*overrides, f"method={parent}"]).method))
    return own, parents


def _read_method_file(name: str, searchpath: list[str]) -> str:
    """Text of ``method/<name>.yaml`` from where Hydra takes it: ccbench's own conf (the
    primary config's folder comes first), else the first search-path entry that has it."""
    from importlib import resources
    from pathlib import Path

    candidates = [resources.files("ccbench_conf").joinpath("method", f"{name}.yaml")]
    for entry in searchpath:
        scheme, _, where = entry.partition("://")
        try:
            if scheme == "pkg":
                candidates.append(resources.files(where).joinpath("method", f"{name}.yaml"))
            elif scheme == "file":
                candidates.append(Path(where) / "method" / f"{name}.yaml")
        except ModuleNotFoundError:  # Hydra skips such an entry too
            continue
    for path in candidates:
        if path.is_file():
            return path.read_text()
    raise FileNotFoundError(f"method/{name}.yaml is in none of ccbench's conf and {searchpath}")


# --------------------------------------------------------------------------- the command


def check_method(name: str, groups: Iterable[str] = GROUPS, searchpath: Iterable[str] | None = None,
                 plugins: Iterable[str] = (), timeout: float | None = None,
                 on_result: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
    """Run the check ``groups`` on the registered method ``name``.

    With ``timeout`` (seconds; ``ccbench check-plugin`` passes ``--timeout``) every fitting
    check runs in an isolated worker process (:class:`~ccbench.isolation.IsolatedRunner`): one
    hostile check per call, the estimator checks as one call; a check that hangs or ends its
    process is a ``fail`` naming the time limit or the exit code, and the others still run, until
    :data:`MAX_HUNG_IN_A_ROW` checks in a row hang: the remaining fitting checks are then skipped,
    naming why (the whole command is bounded by about that many times ``timeout``).
    ``on_result`` is called with each result as it comes (the command prints it at once).
    """
    from ..registry import get_method_spec, get_query_strategy_spec, load_plugins

    load_plugins(list(plugins))
    out = _Results(on_result, timeout)
    if is_query_strategy(name):  # a query strategy (issue 53): its own group, whatever ``groups`` says
        out += strategy_checks(get_query_strategy_spec(name))
        return list(out)
    spec = get_method_spec(name)
    runner = None
    if timeout is not None and ({"estimator", "hostile"} & set(groups)):
        from ..isolation import IsolatedRunner

        runner = IsolatedRunner(preload=("ccbench.running.check_plugin",))
        plugins = _registered_modules(plugins)
    try:
        if "estimator" in groups:
            out += estimator_checks(spec) if runner is None else _isolated(runner, timeout, plugins, name,
                                                                          "estimator", None)
        if "hostile" in groups:
            if runner is None:
                out += hostile_checks(spec)
            else:
                for check in HOSTILE_CHECKS:
                    out += (_isolated(runner, timeout, plugins, name, "hostile", check) if not out.stuck
                            else [out.skipped("hostile", check)])
    finally:
        if runner is not None:
            runner.close(kill=True)
    if "config" in groups:
        out += config_check(spec, searchpath)
    return list(out)


def main(args) -> int:
    """``ccbench check-plugin NAME``: one line per check, a summary, exit 1 on any failure."""
    import sys

    groups = [g.strip() for g in (args.only or ",".join(GROUPS)).split(",") if g.strip()]
    bad = sorted(set(groups) - set(GROUPS))
    if bad:
        raise ValueError(f"unknown check group(s) {bad}; choose from {list(GROUPS)}")
    results = check_method(args.name, groups, args.searchpath, args.plugin or (), timeout=args.timeout,
                           on_result=lambda r: print(r.line(), flush=True))  # each line as it comes
    counts = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "xfail", "skip")}
    summary = (f"{args.name}: {counts['pass']} passed, {counts['fail']} failed, "
               f"{counts['xfail']} expected failures, {counts['skip']} skipped")
    print(summary)
    if counts["fail"]:
        print(f"ccbench check-plugin: {args.name} FAILED {counts['fail']} check(s)", file=sys.stderr)
        return 1
    return 0


def add_parser(sub) -> None:
    """The ``check-plugin`` subcommand of ``ccbench`` (see :mod:`ccbench.running.cli`)."""
    p = sub.add_parser("check-plugin", help="run ccbench's estimator, hostile-input and config checks on one method")
    p.add_argument("name", help="registered method name")
    p.add_argument("--only", default=None, help=f"comma-separated subset of {','.join(GROUPS)}")
    p.add_argument("--searchpath", action="append", default=None, metavar="PATH",
                   help="Hydra search-path entry holding method/NAME.yaml (default for a plugin: "
                        "pkg://<its top package>.conf)")
    p.add_argument("--plugin", action="append", metavar="MODULE", help="extra plugin module to load first")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="each check's time limit; the fits run in a worker process that is killed past it "
                        "(a hang or a dead worker fails that check, naming why; default 300)")
    p.set_defaults(func=main)
