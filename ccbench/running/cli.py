"""The ``ccbench`` command.

``ccbench report DIR ...`` and ``ccbench plugins [--all]`` are argparse
subcommands; ``ccbench fetch <overrides>`` checks the data a run needs
(:mod:`ccbench.running.fetch`); anything else goes to the Hydra app (``ccbench --help`` shows
Hydra's help, ``ccbench -m method=ap,kmeans ...`` runs a sweep). A command line
that chooses no dataset/method/constraints/noise/experiment runs the quick start
(:func:`with_default_experiment`).
"""

from __future__ import annotations

import argparse
import errno
import os
import sys

SUBCOMMANDS = ("report", "plugins", "check-plugin", "time-models")
DEFAULT_EXPERIMENT = "experiment=quickstart"
# Choosing any of these on the command line means "run what I say", not the quick start.
_CHOOSERS = ("dataset", "method", "constraints", "noise", "experiment")
# Flags that show Hydra's own help or information and compose no experiment.
_NO_EXPERIMENT_FLAGS = ("--hydra-help", "--info", "-i", "--shell-completion", "-sc", "--version")
_HYDRA_FLAGS_WITH_VALUE = {
    "--cfg", "-c", "--package", "-p", "--config-path", "-cp", "--config-name", "-cn",
    "--config-dir", "-cd", "--experimental-rerun",
}


def with_default_experiment(args: list[str]) -> list[str]:
    """Prepend ``experiment=quickstart`` unless ``args`` choose what to run.

    ``ccbench``, ``ccbench n_trials=3`` or ``ccbench hydra/launcher=local`` run the
    quick-start comparison; any override of a dataset, method, constraints,
    noise or experiment group (or of their keys, e.g. ``method.penalty=1``) runs
    exactly what the command line says.
    """
    if any(arg.split("=", 1)[0] in _NO_EXPERIMENT_FLAGS for arg in args):
        return list(args)
    skip = False
    for arg in args:
        if skip or arg in _HYDRA_FLAGS_WITH_VALUE:
            skip = not skip
            continue
        if arg.startswith("-"):
            continue
        key = arg.split("=", 1)[0].lstrip("+~")
        if key.split(".", 1)[0].split("/", 1)[0] in _CHOOSERS:
            return list(args)
    return [DEFAULT_EXPERIMENT, *args]


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*map(str, r)) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def plugins_table(all: bool = False) -> str:
    """The registered methods as a text table; with ``all``, data sets, schemes, noise, metrics."""
    from .. import registry

    methods = [
        [m.name, m.summary, "/".join(m.supervision) or "-", "yes" if m.needs_n_clusters else "optional" if m.accepts_n_clusters else "no",
         m.constraint_kind, m.paper]
        for m in registry.list_methods(load=False)
    ]
    parts = ["Methods\n" + _table(methods, ["name", "summary", "supervision", "needs k", "constraints", "paper"])]
    limits = [[m.name, m.memory.describe() if m.memory else "O(n d)", m.time.describe() if m.time else "not declared"]
              for m in registry.list_methods(load=False)]
    parts.append("Size limits (memory refused above what is available; time above 3 x time_budget: TIME_REFUSAL_FACTOR)\n"
                 + _table(limits, ["name", "memory", "time"]))
    grids = [[m.name, len(m.grid_combinations()),
              ", ".join(f"{k} in {'/'.join(map(str, v))}" for k, v in m.grid.items())]
             for m in registry.list_methods(load=False) if m.grid]
    parts.append("Model-selection grids (tune=cvcp fits each combination once per fold, then refits the choice)\n"
                 + _table(grids, ["name", "combinations", "grid"]))
    if all:
        datasets = [
            [d.name, d.summary, f"{d.n_samples}x{d.n_features}" if d.n_samples else "?", d.n_classes or "?", d.source]
            for d in registry.list_datasets()
        ]
        parts.append("Data sets\n" + _table(datasets, ["name", "summary", "n x d", "classes", "source"]))
        parts.append("Constraint schemes\n" + _table([[s.name, s.summary] for s in registry.list_schemes()], ["name", "summary"]))
        parts.append("Noise\n" + _table([[n.name, n.stage, n.summary] for n in registry.list_noise()], ["name", "stage", "summary"]))
        metrics = [[m.name, "not ranked" if m.direction == "none" else m.direction, m.summary]
                   for m in registry.list_metrics()]
        parts.append("Metrics\n" + _table(metrics, ["name", "better", "summary"]))
        tuners = [[t.name, t.summary, t.paper] for t in registry.list_tuners()]
        parts.append("Tuners (tune=...)\n" + _table(tuners, ["name", "summary", "paper"]))
        strategies = [[q.name, q.summary, "yes" if q.needs_n_clusters else "no", q.paper]
                      for q in registry.list_query_strategies()]
        parts.append("Query strategies (active constraint selection)\n"
                     + _table(strategies, ["name", "summary", "needs k", "paper"]))
    return "\n\n".join(parts)


def _plugins(args) -> int:
    from .. import registry

    registry.load_plugins(args.plugin or [])
    print(plugins_table(all=args.all))
    broken = registry.broken_plugins()
    for plugin in broken:
        print(f"ccbench plugins: {plugin}", file=sys.stderr)
    return 1 if broken else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ccbench",
        description="ccbench subcommands; run `ccbench --help` for the Hydra experiment runner.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    from . import report_command  # the report subcommand adds its own parser, as the others below

    report_command.add_parser(sub)
    plg = sub.add_parser("plugins", help="list registered methods (and, with --all, everything else)")
    plg.add_argument("--all", action="store_true", help="also list data sets, schemes, noise and metrics")
    plg.add_argument("--plugin", action="append", metavar="MODULE", help="extra plugin module to load first")
    plg.set_defaults(func=_plugins)
    from . import check_plugin, time_models  # subcommands that add their own parsers
    for module in (check_plugin, time_models):
        module.add_parser(sub)
    return parser


#: Errors of the storage written to, not of ccbench: a full disk or quota, a read-only or too-large file.
_STORAGE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})


def storage_problem(exc: OSError, out=None) -> str:
    """One line for a write the storage refused (:data:`_STORAGE_ERRORS`): the folder, the reason, the fix.
    Every file already written is whole (each is replaced in one rename)."""
    from pathlib import Path

    folder = Path(exc.filename).parent if exc.filename else (out or "the output folder")
    name = f" ({Path(exc.filename).name})" if exc.filename else ""
    return (f"cannot write into {folder}{name}: {exc.strerror or os.strerror(exc.errno)}; the files written "
            f"before are whole; free space there, or pass --out a folder on another disk, and run the command again")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ccbench`` console script."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] in SUBCOMMANDS:
        parsed = _parser().parse_args(args)
        try:
            return parsed.func(parsed)
        except (FileNotFoundError, ValueError, ImportError) as exc:
            from .validate import raised_for_the_user
            if isinstance(exc, ValueError) and not raised_for_the_user(exc):
                raise  # a bug's ValueError (numpy's, pandas'), not a user error: its traceback
            # a user error (wrong directory, metric, plugin): say it in one line, no traceback
            print(f"ccbench {args[0]}: error: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:
            if exc.errno not in _STORAGE_ERRORS:
                raise
            print(f"ccbench {args[0]}: error: {storage_problem(exc, getattr(parsed, 'out', None))}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:  # Ctrl-C: one line, not a traceback; every file is written whole or not at all
            print(f"\nccbench {args[0]}: interrupted; the files written so far are whole (each replaced in one "
                  f"rename, a shipped folder and a site as a whole); run the command again to finish",
                  file=sys.stderr)
            return 130
    if args and args[0] == "fetch":  # overrides, not argparse options: Hydra parses them
        from .fetch import fetch

        if {"-h", "--help"} & set(args[1:]):
            print("usage: ccbench fetch [OVERRIDES...]\n\nFetch and verify (sha256) every data set the run with "
                  "these overrides needs\n(experiment, comma lists, suites), ahead of it: exit status 0 when all "
                  "are present\nand intact, 1 naming each missing or corrupt file. Example:\n"
                  "  CCBENCH_DATA_DIR=/shared/data ccbench fetch experiment=scssap_fig3")
            return 0
        try:
            return fetch(with_default_experiment(args[1:]))
        except Exception as exc:  # noqa: BLE001 - a composition error: one line, no traceback
            print(f"ccbench fetch: error: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 2
    if args in (["--help"], ["-h"]):
        print(help_text())
        return 0
    sys.argv = [sys.argv[0] if sys.argv else "ccbench", *with_default_experiment(args)]
    return _run_sweep()


def help_text() -> str:
    """``ccbench --help``: config groups and root keys read from the files and the schema.

    Hydra's own help lists the same groups but composes every option first
    (seconds); ``ccbench --hydra-help`` and ``ccbench --help <overrides>`` still show it.
    """
    import dataclasses
    from importlib.util import find_spec
    from pathlib import Path

    from .config import CellConfig

    # the folder, without importing the package (its __init__ loads Hydra)
    conf = Path(find_spec("ccbench_conf").submodule_search_locations[0])
    lines = [
        "ccbench: a declarative benchmark for constrained clustering.",
        "",
        "usage: ccbench [OVERRIDES...]             run a sweep (no arguments: the quick start)",
        "       ccbench report DIR [--metric M]    tables and plots of a finished sweep (+ report.html)",
        "       ccbench report DIR --compare A B --metric ari --rope 0.01   paired verdict of two methods",
        "       ccbench report A B --compare-sweeps  where two sweeps' rows of the same configs disagree",
        "       ccbench report DIR --leaderboard --with reports/leaderboard --site SITE   rank against shipped rows",
        "       ccbench plugins [--all]            registered methods (and data sets, schemes, metrics)",
        "       ccbench fetch [OVERRIDES...]       fetch and verify (sha256) every data set the run needs",
        "       ccbench check-plugin NAME          ccbench's estimator, hostile-input and config checks on one method",
        "       ccbench --cfg job [OVERRIDES...]   the composed config; --hydra-help for Hydra's flags",
        "",
        "Config groups (choose one option each: group=option):",
    ]
    for group in ("dataset", "method", "constraints", "noise", "experiment"):
        options = sorted(f.stem for f in (conf / group).glob("*.yaml"))
        lines.append(f"  {group}: {', '.join(options)}")
    lines += ["", "Root keys (defaults from ccbench.running.config.CellConfig):"]
    for f in dataclasses.fields(CellConfig):
        if f.name in ("dataset", "method", "constraints", "noise"):
            continue
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        lines.append(f"  {f.name}={default}")
    lines += [
        "",
        "Examples:",
        "  ccbench -m method=ap,kmeans dataset=iris,wine constraints.n_constraints=20,40,80",
        "  ccbench experiment=scssap_fig3 hydra/launcher=local        # joblib, 2 workers",
        "  ccbench experiment=scssap_fig3 hydra/launcher=slurm        # submitit on a SLURM cluster",
        "  ccbench report multirun/<date>/<time> --metric ari,nmi",
        "",
        "A failed trial is recorded (status error) and makes the command exit 1; running the",
        "same command again retries it and keeps finished trials (Ctrl-C is safe too).",
    ]
    return "\n".join(lines)


def precheck(args: list[str]) -> list[str]:
    """Problems in the command line's own values (every value of a sweep), before any job starts.

    Only what needs no data and no composition: group options and root keys
    (:func:`ccbench.running.validate.check_command_line`), then values
    (:data:`ccbench.running.protocol.VALUE_CHECKS`). The sweeper checks every composed
    job's keys and values before the first job starts (:mod:`ccbench.running.validate`).
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from . import protocol

    candidates = [a for a in args if not a.startswith("-") and "=" in a]
    try:
        overrides = OverridesParser.create().parse_overrides(candidates)
    except Exception:  # a syntax error: Hydra reports it with its own message
        return []
    from .validate import check_command_line

    problems, flagged = check_command_line(overrides), set()
    for o in overrides:
        key = o.key_or_group
        own = [m for m in problems if _problem_key(m) == key]
        if key in protocol.VALUE_CHECKS and not o.is_delete():
            values = list(o.sweep_iterator()) if o.is_sweep_override() else [o.value()]
            found = [m for m in map(lambda v: protocol.check_value(key, v), map(_unquoted, values)) if m]
            problems += [m for m in found if m not in problems]
            own += found
        if own:
            flagged.add(o.input_line)
    if problems:  # the rest of the line may hold more (a group's key: constraints.n_constraint): one line each
        problems += [m for m in _composed_problems([o for o in overrides if o.input_line not in flagged])
                     if m not in problems]
    return problems


def _problem_key(line: str) -> str:
    """The override key a problem line of :func:`ccbench.running.validate.check_command_line` is about
    (``"method=scsap: no such option"`` -> ``method``, ``"n_trial: unknown root key"`` -> ``n_trial``)."""
    return line.split(":", 1)[0].split("=", 1)[0].strip()


def _composed_problems(overrides) -> list[str]:
    """The problems the sweeper would find in the first job of ``overrides`` (each sweep at its first value):
    composed once, its keys and values checked (:func:`ccbench.running.validate.check_cells`). Only when the
    command line already has a problem, so that every problem is one line, not the first alone; a
    composition that fails leaves the rest to the sweeper."""
    from hydra import compose, initialize_config_module

    from .config import to_cell
    from .validate import check_cells

    first = []
    for o in overrides:
        if o.key_or_group.startswith("hydra") and o.key_or_group != "hydra.searchpath":
            continue
        if o.is_sweep_override():
            value = next(iter(o.sweep_string_iterator()), None)
            if value is None:
                return []
            first.append(f"{'+' if o.is_add() else ''}{o.key_or_group}={value}")
        else:
            first.append(o.input_line)
    try:
        with initialize_config_module("ccbench_conf", version_base="1.3"):
            return check_cells([to_cell(compose("config", overrides=first))])
    except Exception:  # noqa: BLE001 - the sweeper composes again and says what is wrong
        return []


def _register_method_configs(args: list[str]) -> list[str]:
    """``method=<name>`` for every registered method, without ``hydra.searchpath``
    (:func:`ccbench.running.app.register_method_configs`; the command line's search path first)."""
    from .app import command_line_searchpaths, register_method_configs

    return register_method_configs(command_line_searchpaths(args))


def _unquoted(value):
    """A sweep element as the job will see it: Hydra keeps ``'kmeans'`` of ``method.name='kmeans','x'``
    as a ``QuotedString`` until composition, which turns it into the plain string."""
    from hydra.core.override_parser.types import QuotedString

    if isinstance(value, QuotedString):
        return value.text
    if isinstance(value, list):
        return [_unquoted(v) for v in value]
    if isinstance(value, dict):
        return {k: _unquoted(v) for k, v in value.items()}
    return value


def _experiment_plugins(args: list[str]) -> list[str]:
    """The plugins the command's ``experiment=NAME`` file lists (and the experiments it extends, by a
    plain name in its defaults): the precheck must know the methods they register, or
    ``experiment=active method.name=cobras`` is refused as an unknown method although the experiment
    loads ``ccbench_plugins.cobras`` itself. Only ccbench's own experiment files; an unreadable one is
    left to Hydra, which names it."""
    from importlib.resources import files

    import yaml

    names = [a.split("=", 1)[1] for a in args if a.startswith(("experiment=", "+experiment="))]
    found, seen = [], set()
    while names:
        name = names.pop()
        if name in seen or "," in name:
            continue
        seen.add(name)
        try:
            data = yaml.safe_load((files("ccbench_conf") / "experiment" / f"{name}.yaml").read_text()) or {}
        except (OSError, yaml.YAMLError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        found += [p for p in data.get("plugins") or [] if isinstance(p, str) and p not in found]
        names += [d for d in data.get("defaults") or [] if isinstance(d, str) and d != "_self_"]
    return found


def _run_sweep() -> int:
    """Run the Hydra app; non-zero when a trial failed or the run was interrupted."""
    import atexit
    import gc

    from .. import registry
    from .app import hydra_app, last_sweep_outcome, stop_report_workers

    args = sys.argv[1:]
    if not any(a.startswith(("--cfg", "-c", "--info", "--hydra-help", "--help", "-h")) for a in args):
        plugins = [a.split("=", 1)[1].strip("[]") for a in args if a.startswith("plugins=")]
        try:
            registry.load_plugins([p for p in ",".join(plugins).split(",") if p] + _experiment_plugins(args))
        except Exception:  # noqa: BLE001 - the job reports a bad plugin in its rows
            pass
        _register_method_configs(args)
        problems = precheck(args)
        if problems:
            print("ccbench: the sweep was not started:\n  " + "\n  ".join(problems), file=sys.stderr)
            return 2
    else:  # --cfg job method=<a plugin's method> composes too
        _register_method_configs(args)

    # The ~2,000 modules imported by now live until exit: freezing them keeps
    # the garbage collector from re-scanning them on every full collection
    # during the sweep. Hydra and OmegaConf allocate millions of small objects
    # per composition; a larger first-generation threshold collects them 70x
    # less often (cycles are still collected). Freezing again at exit spares
    # the collector's passes over every module during interpreter shutdown.
    # Together about 0.9 s of the 12-job quick start.
    import os

    from .harness import MAIN_PID_ENV

    os.environ[MAIN_PID_ENV] = str(os.getpid())  # joblib workers inherit it and draw no bars
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(50_000, 20, 20)
    atexit.unregister(gc.freeze)  # once per process, however often main() runs
    atexit.register(gc.freeze)
    from .validate import ConfigProblems

    try:
        hydra_app()
    except ConfigProblems as refused:  # raised by the sweeper before the first job
        print("ccbench: the sweep was not started:\n  " + "\n  ".join(refused.problems), file=sys.stderr)
        _remove_empty_sweep_dir(last_sweep_outcome().get("sweep"))
        return 2
    except KeyboardInterrupt:
        sweep = last_sweep_outcome().get("sweep")
        print(f"\nccbench: interrupted; {_saved_trials(sweep)} finished trial(s) are saved in {sweep}. "
              f"Resume with: {_resume_command(args, sweep)}", file=sys.stderr)
        return 130
    finally:
        stop_report_workers()  # a sweep refused or interrupted before its end never used its report process
        # a caller that goes on (tests, notebooks) gets its collector back as it was
        gc.set_threshold(*thresholds)
        gc.unfreeze()
    return _exit_status(last_sweep_outcome(), args)


def _exit_status(outcome: dict, args: list[str]) -> int:
    """1 when any trial failed (status error), a job could not run or lost its worker, a results file
    is damaged or the end-of-sweep summary failed; each cause is printed. 0 otherwise.

    A trial that reached its budget (status ``timeout``, killed at ``trial_timeout``) is a measured
    result of the protocol, ranked like any other (docs/harness.md, "Exit status"): the timeouts are
    counted and their cells named, and alone they leave the status 0."""
    status = 0
    resume = _resume_command(args, outcome.get("sweep"))
    if outcome.get("timeouts"):
        cells = "\n  ".join(outcome.get("timeout_cells") or [])
        print(f"ccbench: {outcome['timeouts']} trial(s) reached their budget (status timeout: a measured result, "
              f"ranked, not a failure of the run):\n  {cells}\nTo measure them past the budget, raise "
              f"trial_timeout and re-run; timed-out trials are retried, finished ones kept: {resume}", file=sys.stderr)
    if outcome.get("failed"):
        lines = "\n  ".join(outcome.get("errors") or [])
        print(f"ccbench: {outcome['failed']} trial(s) failed (status error):\n  {lines}\n"
              f"Fix the cause and re-run; failed trials are retried, finished ones kept: {resume}", file=sys.stderr)
        status = 1
    if outcome.get("lost_jobs"):  # each named when it happened
        print(f"ccbench: {len(outcome['lost_jobs'])} job(s) lost their joblib worker (named above); the same "
              f"command runs them again: {resume}", file=sys.stderr)
        status = 1
    for problem in [*(outcome.get("job_errors") or []), *(outcome.get("damaged") or [])]:
        print(f"ccbench: {problem}", file=sys.stderr)
        status = 1
    if outcome.get("callback_error"):
        print(f"ccbench: {outcome['callback_error']}", file=sys.stderr)
        status = 1
    return status


def _remove_empty_sweep_dir(sweep) -> None:
    """A refused sweep leaves no directory behind (unless it held something before)."""
    from pathlib import Path

    if not sweep or not Path(sweep).is_dir():
        return
    path = Path(sweep)

    def ours(p) -> bool:
        return p.name == "multirun.yaml" or p.name.startswith(".ccbench_jobs") or (
            p.name == ".ccbench_grids" and p.is_dir() and all(f.suffix == ".yaml" for f in p.iterdir()))

    entries = list(path.iterdir())
    if all(ours(p) for p in entries):
        for p in entries:
            if p.is_dir():
                for f in p.iterdir():
                    f.unlink()
                p.rmdir()
            else:
                p.unlink(missing_ok=True)
        path.rmdir()


def _saved_trials(sweep) -> int:
    from pathlib import Path

    import pandas as pd

    files = sorted(Path(sweep).rglob("results.parquet")) if sweep else []
    total = 0
    for f in files:
        try:
            total += len(pd.read_parquet(f, columns=["trial"]))
        except Exception:  # noqa: BLE001 - a damaged file is reported elsewhere
            pass
    return total


def _resume_command(args: list[str], sweep) -> str:
    """The same command, pinned to the same sweep directory (the default one is time-stamped)."""
    import shlex

    kept = [a for a in args if not a.startswith("hydra.sweep.dir=")]
    return "ccbench " + " ".join(map(shlex.quote, [*kept, f"hydra.sweep.dir={sweep}"]))


if __name__ == "__main__":
    sys.exit(main())
