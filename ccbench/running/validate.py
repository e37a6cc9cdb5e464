"""Checks of a sweep before any job starts: every group key against its target, with a did-you-mean.

A typo (``method.penalti=3``, ``constraints.n_constraint=5``, ``method=scsap``)
would otherwise reach every trial and turn a whole sweep into ``error`` rows.
Two passes, both before the first job:

- :func:`check_command_line` (called by ``ccbench.running.cli.precheck``, before Hydra
  composes anything): every group option named on the command line
  (``method=scsap``, ``dataset=iris,irs``) exists in the config search path, and
  every root key is a :class:`~ccbench.running.config.CellConfig` field;
- :func:`refuse_bad_jobs` (called by the sweeper, ``hydra/sweeper=ccbench``, on
  the job configs its validation pass composes anyway): every key of every
  group is a parameter of its target (:func:`accepted_keys`), plus the value
  checks of :func:`ccbench.running.protocol.check_cell`.

Problems are one line each, deduplicated over the jobs of the sweep; the
command prints them and exits with status 2 (:class:`ConfigProblems`).
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
from collections.abc import Callable, Iterable, Sequence

from .. import registry
from .config import GROUPS, CellConfig

__all__ = [
    "ConfigProblems",
    "accepted_keys",
    "check_cell_keys",
    "check_cells",
    "check_command_line",
    "did_you_mean",
    "refuse_bad_jobs",
]

# Keys every group file may hold besides its target's parameters.
_RESERVED = {
    "dataset": {"name", "preprocess"},  # preprocess is applied by load_dataset, after the loader
    "method": {"name", "n_clusters"},  # n_clusters: true_k / int / from_method (protocol.resolve_n_clusters)
    "constraints": {"name"},
    "noise": {"name"},
}
_WHAT = {"dataset": "data set", "method": "method", "constraints": "constraint scheme", "noise": "noise injector"}
_LOOKUP = {
    "dataset": registry.get_dataset_spec,
    "method": registry.get_method_spec,
    "constraints": registry.get_scheme_spec,
    "noise": registry.get_noise_spec,
}
_LISTING = {
    "dataset": registry.list_datasets,
    "method": lambda: registry.list_methods(load=False),
    "constraints": registry.list_schemes,
    "noise": registry.list_noise,
}


class ConfigProblems(SystemExit):
    """The sweep was refused before any job started; ``problems`` holds one line each.

    A ``SystemExit`` (status 2), so it passes through Hydra's catch-all error
    report (which would print a traceback and exit 1) to ``ccbench.running.cli``.
    """

    def __init__(self, problems: Sequence[str]):
        super().__init__(2)
        self.problems = list(problems)

    def __str__(self) -> str:
        return "\n".join(self.problems)


def did_you_mean(word, options: Iterable[str], prefix: str = "") -> str:
    """``"; did you mean <prefix><closest>?"`` (difflib), or ``""`` when nothing is close."""
    close = difflib.get_close_matches(str(word), [str(o) for o in options], n=1, cutoff=0.6)
    return f"; did you mean {prefix}{close[0]}?" if close else ""


# -- group keys against their targets ----------------------------------------------


def _parameters(func: Callable, *, drop_first: bool = False) -> set[str] | None:
    """Keyword-passable parameter names of ``func``; None when it takes ``**kwargs`` (anything goes)."""
    params = list(inspect.signature(func).parameters.values())
    if drop_first and params and params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        params = params[1:]  # the labels or the constraint set the harness passes positionally
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def accepted_keys(group: str, name: str) -> set[str] | None:
    """The keys a ``group`` file naming ``name`` may hold (None: its target takes any keyword).

    - method: the estimator's ``__init__`` parameters (its ``get_params()`` keys), ``name``, ``n_clusters``;
    - dataset: the loader's keyword parameters (``missing``, ``data_dir``, ``manifest`` and the set's
      own options), ``name``, ``preprocess``;
    - constraints / noise: the scheme's / injector's keyword parameters except ``rng``, and ``name``.

    Raises :class:`~ccbench.registry.UnknownNameError` for an unregistered ``name``.
    """
    spec = _LOOKUP[group](name)
    if group == "method":
        keys = _parameters(spec.estimator)
    elif group == "dataset":
        keys = _parameters(spec.loader)
    else:
        keys = _parameters(spec.func, drop_first=True)
    if keys is None:
        return None
    return (keys - {"self", "rng"}) | _RESERVED[group]


def _unknown_name(group: str, name) -> str:
    known = [s.name for s in _LISTING[group]()]
    return (f"{group}.name: unknown {_WHAT[group]} {name!r}{did_you_mean(name, known, f'{group}=')} "
            f"(`ccbench plugins --all` lists them)")


def check_cell_keys(cell: dict) -> list[str]:
    """One line per group key that its target does not take, and per unknown target name."""
    problems = []
    for group in GROUPS:
        section = cell.get(group) or {}
        name = section.get("name")
        try:
            keys = accepted_keys(group, name)
        except registry.UnknownNameError:
            problems.append(_unknown_name(group, name))
            continue
        except ImportError as exc:  # an estimator module that does not import: the job would say the same
            problems.append(f"{group}.name: {exc}")
            continue
        problems += [f"{group}.{key}: has no value; set it: {group}.{key}=..." for key, value in section.items()
                     if isinstance(value, str) and value == "???"]
        if keys is None:
            continue
        for key in section:
            if key not in keys:
                problems.append(
                    f"{group}.{key}: {_WHAT[group]} {name!r} has no parameter {key!r}"
                    f"{did_you_mean(key, keys, f'{group}.')} (it takes: {', '.join(sorted(keys))})"
                )
    source = (cell.get("method") or {}).get("n_clusters")
    if isinstance(source, bool) or (isinstance(source, (int, float)) and not (
            isinstance(source, int) and source >= 2)):
        problems.append(f"method.n_clusters: {source!r} clusters is no clustering; give an int >= 2, true_k "
                        f"(the number of classes) or from_method=<name>")
    if isinstance(source, dict) and "from_method" in source:  # the keys belong to the other method
        sub = {"name": source["from_method"], **{k: v for k, v in source.items() if k != "from_method"}}
        problems += [p.replace("method.", "method.n_clusters.", 1) for p in check_cell_keys(
            {"method": sub, **{g: {"name": "none"} for g in ("constraints", "noise")},
             "dataset": {"name": "iris"}})]
    return problems


def check_cells(cells: Iterable[dict]) -> list[str]:
    """Every problem of these cells that needs no data, one line each, in order, without repeats."""
    from .protocol import check_cell

    problems: list[str] = []
    for cell in cells:
        try:
            registry.load_plugins(cell.get("plugins") or [])
        except Exception as exc:  # noqa: BLE001 - any import failure is the user's to fix
            problems.append(f"plugins: {exc}")
            continue
        own = check_cell_keys(cell)
        named = {p.split(".", 1)[0] for p in own if ".name: " in p}
        # protocol's value checks; its name checks are already said above, with a did-you-mean
        values = [p for p in check_cell(cell) if p.split(".", 1)[0] not in named or ".name " not in p]
        for p in own + values:
            if p not in problems:
                problems.append(p)
    return problems


def refuse_bad_jobs(compose: Callable[[Sequence[str]], object], batch: Sequence[Sequence[str]]) -> list:
    """Compose every job of ``batch`` and raise :class:`ConfigProblems` when any is bad.

    ``compose(overrides)`` returns a job's config (the sweeper's config loader);
    a missing group option (Hydra's ``MissingConfigException``) is one problem
    line with a did-you-mean instead of Hydra's list of every option.
    Returns the composed configs.
    """
    from hydra.errors import MissingConfigException

    from .config import to_cell

    problems, cells, configs = [], [], []
    for overrides in batch:
        try:
            cfg = compose(overrides)
        except MissingConfigException as exc:
            line = _missing_option(exc)
            if line not in problems:
                problems.append(line)
            continue
        configs.append(cfg)
        try:
            cells.append(to_cell(cfg))
        except ValueError as exc:
            problems.append(str(exc))
    for p in check_cells(cells):
        if p not in problems:
            problems.append(p)
    if problems:
        raise ConfigProblems(problems)
    return configs


def _missing_option(exc) -> str:
    missing = str(getattr(exc, "missing_cfg_file", None) or "")
    group, _, option = missing.rpartition("/")
    options = list(getattr(exc, "options", None) or [])
    if group and options:
        return f"{group}={option}: no such option{did_you_mean(option, options, f'{group}=')} " \
               f"(`ccbench --help` lists the options)"
    return str(exc).splitlines()[0]


# -- the command line, before Hydra --------------------------------------------------

_CHOOSABLE = (*GROUPS, "supervision", "experiment")


def _group_options(searchpaths: Sequence[str]) -> Callable[[str], list[str]]:
    """``options(group)``: the group's config names in Hydra's search path (ccbench_conf, plugins, extras)."""
    from hydra._internal.config_repository import ConfigRepository
    from hydra._internal.utils import create_config_search_path
    from hydra.core.object_type import ObjectType

    path = create_config_search_path("pkg://ccbench_conf")
    for extra in searchpaths:
        path.append("command-line", extra)
    repo = ConfigRepository(config_search_path=path)
    return lambda group: repo.get_group_options(group, results_filter=ObjectType.CONFIG)


def check_command_line(overrides) -> list[str]:
    """Problems of parsed Hydra ``overrides`` that composing would report as a long error.

    Unknown options of the five groups (``method=scsap``: one line with a
    did-you-mean instead of Hydra's list of every option; every value of a sweep
    list is checked) and unknown root keys (``n_trails=5``). Data-set suites
    (``dataset=uci_all``) are options like any other.
    """
    from hydra.errors import HydraException

    from ..datasets import suites

    searchpaths: list[str] = []
    for o in overrides:
        if o.key_or_group == "hydra.searchpath" and not o.is_delete():
            value = o.value()
            searchpaths += [str(v) for v in (value if isinstance(value, list) else [value])]
    problems: list[str] = []
    options = None
    roots = [f.name for f in dataclasses.fields(CellConfig)]
    for o in overrides:
        key = o.key_or_group
        if o.is_delete() or key.startswith("hydra") or o.package:
            continue
        if key in _CHOOSABLE:
            options = options or _group_options(searchpaths)
            known = options(key)
            try:
                values = list(o.sweep_string_iterator()) if o.is_sweep_override() else [o.get_value_element_as_str()]
            except HydraException:  # glob(...) matches existing options only: Hydra expands it later
                continue
            for value in values:
                if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
                    value = value[1:-1]  # method='kmeans': Hydra takes the quoted option as the option
                if value not in known and value != "null" and not (key == "dataset" and value in suites()):
                    problems.append(f"{key}={value}: no such option{did_you_mean(value, known, f'{key}=')} "
                                    f"(`ccbench --help` lists the options)")
        elif "/" not in key and key.split(".", 1)[0] not in roots and not o.is_add():
            root = key.split(".", 1)[0]
            problems.append(f"{key}: unknown root key {root!r}{did_you_mean(root, roots)} "
                            f"(the root keys: {', '.join(roots)})")
    return problems


def raised_for_the_user(exc: BaseException) -> bool:
    """Whether ``exc`` comes from a ``raise`` statement of ccbench's own code (a message written for
    the user), not from inside a library or from an operation that failed (an assignment, a call)."""
    import traceback
    from pathlib import Path

    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return True
    last = frames[-1]
    root = Path(__file__).resolve().parents[1]  # the ccbench package
    try:
        ours = Path(last.filename).resolve().is_relative_to(root)
    except OSError:
        ours = False
    return ours and (last.line or "").lstrip().startswith("raise")
