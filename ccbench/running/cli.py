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


def _report(args) -> int:
    from pathlib import Path

    from .. import reporting as report

    if args.compare_sweeps:
        return _compare_sweeps(args)
    data = report.load(*args.dirs)
    args.own_rows = data  # the coverage line is about these dirs' grid, not the shipped rows'
    if args.with_:  # rank these rows against shipped ones: refused under another protocol (reporting.merge_with)
        data, notes = report.merge_with(data, report.load(*args.with_), new_name=" ".join(args.dirs),
                                        shipped_name=" ".join(args.with_))
        for line in notes:
            print(f"ccbench report: warning: {line}", file=sys.stderr)
    if args.converged_only:
        kept = report.drop_not_converged(data)
        print(f"--converged-only: {len(data) - len(kept)} non-converged trial(s) left out", file=sys.stderr)
        data = kept
    from ..reporting import leaderboard

    request = leaderboard.config_request(data)
    if args.leaderboard or request is not None:
        return _leaderboard(args, data, request or {})
    if args.utility or args.plugin:  # the utility re-draws constraints from each row's data set
        _load_row_plugins(data, args.plugin or [])
    args.metric = args.metric or report.DEFAULT_METRIC
    x = report.resolve_x(data, args.x)
    metrics = [m.strip() for m in args.metric.split(",") if m.strip()]
    pool = [c.strip() for c in (args.pool or "").split(",") if c.strip()]
    if args.compare:
        return _compare(args, data, x, metrics, pool)
    out = Path(args.out) if args.out else Path(args.dirs[0]) / "report"
    command = "ccbench report " + " ".join(
        [*map(str, args.dirs), f"--metric {args.metric}", f"--x {x}"] + ([f"--pool {args.pool}"] if pool else [])
        + (["--converged-only"] if args.converged_only else []) + ([f"--at {args.at}"] if args.at is not None else [])
    )
    from ..reporting import parse_formats

    sections, figures = "", {}
    if not args.no_figures:  # refits one trial per panel (the paper block's figures)
        sections, figures = report.write_paper_figures(data, out, report.paper_reference(data), x)
    paths = report.write_report(data, out, metrics=metrics, x=x, pool=pool,
                                paper=report.paper_reference(data), command=command,
                                formats=parse_formats(args.format), sections=[sections])
    paths.update(figures)
    if not args.no_html:
        from ..reporting import write_html

        paths["html"] = write_html(data, out, metrics=metrics, x=x, pool=pool,
                                               paper=report.paper_reference(data), command=command,
                                               margin=args.margin, baseline=args.utility, at=args.at)
    print(paths["summary_md"].read_text())
    for line in report.provenance_warnings(data):
        print(f"ccbench report: warning: {line}", file=sys.stderr)
    if args.utility:
        _print_utility(data, args.utility, metrics, x, pool)
    print("wrote:", ", ".join(str(p) for p in paths.values()))
    return 0


def _load_row_plugins(data, given) -> None:
    """Register the plugins the rows' ``plugins`` column names (a data set or method of a
    ``plugins=[...]`` module), then ``--plugin`` ones. Only when a report needs them (``--utility``
    loads data sets); a row's plugin that is not importable here is a warning naming the fix,
    a ``--plugin`` one an error."""
    import json

    from .. import registry

    named: list[str] = []
    if "plugins" in data:
        for text in data["plugins"].dropna().unique():
            try:
                value = json.loads(text) if isinstance(text, str) else list(text)
            except ValueError:
                value = [p.strip() for p in str(text).strip("[]").split(",")]
            named += [str(p) for p in (value if isinstance(value, list) else [value]) if p]
    for name in dict.fromkeys(named):
        if name in given:
            continue
        try:
            registry.load_plugins([name])
        except Exception as exc:  # noqa: BLE001 - the report goes on; what needs the plugin says so
            print(f"ccbench report: warning: plugin {name!r} named by the rows could not be loaded "
                  f"({type(exc).__name__}: {exc}); install it or put it on PYTHONPATH, or pass --plugin MODULE",
                  file=sys.stderr)
    registry.load_plugins(given)


def _leaderboard(args, data, request: dict) -> int:
    """``--leaderboard``, or cells whose ``paper`` block asks for it (``request``: its metric and
    margin; the command line's ``--metric`` wins): one ranking page per supervision kind."""
    from pathlib import Path

    from ..reporting import leaderboard

    metric = args.metric or request.get("metric") or leaderboard.DEFAULT_METRIC
    args.margin = float(request.get("margin", args.margin))
    if "," in metric:
        raise ValueError(f"--leaderboard ranks on one metric, got {metric!r}; pass one, e.g. --metric ari")
    out = Path(args.out) if args.out else Path(args.dirs[0]) / "leaderboard"
    command = "ccbench report " + " ".join([*map(str, args.dirs), "--leaderboard", f"--metric {metric}",
                                            f"--margin {args.margin:g}"]
                                           + [f"--with {w}" for w in (args.with_ or [])]
                                           + (["--converged-only"] if args.converged_only else []))
    own = getattr(args, "own_rows", data)
    coverage = leaderboard.sweep_coverage(args.dirs, own, shipped=(args.with_, len(data) - len(own)) if args.with_ else None)
    paths = leaderboard.write_leaderboard(data, out, metric=metric, margin=args.margin, command=command,
                                          coverage=coverage)
    from ..reporting import write_shipped  # the per-trial rows, so others can re-rank, add metrics, join
    sources = [*args.dirs, *(args.with_ or [])]
    paths.update(write_shipped(data, out, dirs=sources, grids=leaderboard.recorded_grids(sources)))
    if args.site:
        paths["site"] = leaderboard.write_site(data, Path(args.site), metric=metric, margin=args.margin,
                                               command=command, coverage=coverage, pages=out,
                                               new_rows=own if args.with_ else None)
    print(paths["index"].read_text())
    print("wrote:", ", ".join(str(p) for p in paths.values()))
    return 0


def _compare_sweeps(args) -> int:
    """``A B --compare-sweeps``: where two sweeps' rows of the same config disagree (printed and written)."""
    from pathlib import Path

    from ..reporting import compare_sweeps

    if len(args.dirs) != 2:
        raise ValueError(f"--compare-sweeps compares two sweeps, got {len(args.dirs)} director(ies); "
                         f"pass two: ccbench report A B --compare-sweeps")
    out = Path(args.out) if args.out else None
    text, paths = compare_sweeps(*args.dirs, metric=args.metric, out=out)
    print(text)
    if paths:
        print("wrote:", ", ".join(str(p) for p in paths.values()))
    return 0


def _print_utility(data, baseline, metrics, x, pool) -> None:
    """``--utility BASE``: each method against its unconstrained baseline on the same trials."""
    from .. import reporting as stats

    for metric in metrics:
        table = stats.utility(data, baseline, metric, x=x, pool=pool)
        print(f"Constraint-set utility on {metric} against {baseline} (informativeness = share of the "
              f"constraints the baseline violates; share_worse = trials the constraints made worse):")
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"), end="\n\n")


def _compare(args, data, x, metrics, pool) -> int:
    """``--compare A B``: print the paired verdict for each metric; write nothing."""
    from .. import reporting as stats

    for metric in metrics:
        print(stats.compare(data, *args.compare, metric=metric, x=x, rope=args.rope, margin=args.margin,
                            pool=pool, at=args.at))
        print()
    return 0


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
    rep = sub.add_parser("report", help="gather results.parquet files and write tables and plots")
    rep.add_argument("dirs", nargs="+", metavar="DIR", help="a run or multirun output directory")
    rep.add_argument("--metric", default=None,
                     help="metric column(s), comma-separated (default modified_rand; ari with --leaderboard)")
    rep.add_argument("--x", default=None, help="x-axis column (default: the runs' x_axis, else constraints.n_constraints)")
    rep.add_argument("--out", default=None, help="output directory (default: DIR/report)")
    rep.add_argument("--pool", default=None,
                     help="setting columns to average over as replicates (e.g. dataset.seed), comma-separated")
    rep.add_argument("--compare", nargs=2, metavar=("A", "B"), default=None,
                     help="print the paired verdict of method labels A and B (Wilcoxon-Holm per cell, "
                          "Bayesian signed-rank across data sets) instead of writing the report")
    rep.add_argument("--rope", type=float, default=0.01,
                     help="region of practical equivalence for --compare, in metric units (default 0.01)")
    rep.add_argument("--margin", type=float, default=0.03,
                     help="win/tie/loss margin: a smaller difference is a tie (default 0.03, the NNC paper's)")
    rep.add_argument("--at", default=None,
                     help="x value at which methods are ranked and compared across data sets (report.html and "
                          "--compare; default: the largest x; x values are never pooled)")
    rep.add_argument("--leaderboard", action="store_true",
                     help="write the leaderboard instead (one page per supervision kind, pairs and labels, as "
                          "<kind>.md and <kind>.html; default --out DIR/leaderboard): ranks with a CD diagram, "
                          "win/tie/loss, gains over the best unsupervised baseline, share hurt, cost, status counts")
    rep.add_argument("--with", dest="with_", action="append", metavar="SHIPPED",
                     help="rank DIR's rows against these (a shipped leaderboard folder, e.g. reports/leaderboard, "
                          "or a sweep): refused when made under another protocol; newest row per (config_hash, trial)")
    rep.add_argument("--site", default=None, metavar="SITE",
                     help="with --leaderboard: also write a static, offline site (index, one page per supervision "
                          "kind, data set and method; sortable tables) into SITE")
    rep.add_argument("--compare-sweeps", action="store_true",
                     help="DIR is two sweeps A B of the same protocol: per cell, where their rows of the same config "
                          "disagree beyond the trial spread, and which machines and code made each (--out: also "
                          "write compare.md and compare.csv)")
    rep.add_argument("--no-html", action="store_true", help="do not write report.html")
    rep.add_argument("--no-figures", action="store_true",
                     help="do not draw the figures the runs' paper block asks for (paper.figures: each panel "
                          "refits one recorded trial, e.g. the SRCP paper's distance matrices)")
    rep.add_argument("--format", default=None, metavar="latex,csv",
                     help="also export the tables: summary_<metric>.tex (booktabs) and/or summary.csv")
    rep.add_argument("--utility", metavar="BASE", default=None,
                     help="constraint-set utility: compare every method with the unconstrained method label "
                          "BASE on the same trials (informativeness, coherence in report.html, share made worse)")
    rep.add_argument("--plugin", action="append", metavar="MODULE",
                     help="extra plugin module to load first (--utility also loads those the rows' plugins "
                          "column names, when importable)")
    rep.add_argument("--converged-only", action="store_true",
                     help="leave out ok trials whose method did not converge (by default they count, marked 'nc')")
    rep.set_defaults(func=_report)
    plg = sub.add_parser("plugins", help="list registered methods (and, with --all, everything else)")
    plg.add_argument("--all", action="store_true", help="also list data sets, schemes, noise and metrics")
    plg.add_argument("--plugin", action="append", metavar="MODULE", help="extra plugin module to load first")
    plg.set_defaults(func=_plugins)
    from . import check_plugin, time_models  # subcommands that add their own parsers
    for module in (check_plugin, time_models):
        module.add_parser(sub)
    return parser


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

    problems = check_command_line(overrides)
    for o in overrides:
        key = o.key_or_group
        if key not in protocol.VALUE_CHECKS or o.is_delete():
            continue
        values = list(o.sweep_iterator()) if o.is_sweep_override() else [o.value()]
        for value in map(_unquoted, values):
            message = protocol.check_value(key, value)
            if message and message not in problems:
                problems.append(message)
    return problems


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


def _run_sweep() -> int:
    """Run the Hydra app; non-zero when a trial failed or the run was interrupted."""
    import atexit
    import gc

    from .. import registry
    from .app import hydra_app, last_sweep_outcome

    args = sys.argv[1:]
    if not any(a.startswith(("--cfg", "-c", "--info", "--hydra-help", "--help", "-h")) for a in args):
        plugins = [a.split("=", 1)[1].strip("[]") for a in args if a.startswith("plugins=")]
        try:
            registry.load_plugins([p for p in ",".join(plugins).split(",") if p])
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
        # a caller that goes on (tests, notebooks) gets its collector back as it was
        gc.set_threshold(*thresholds)
        gc.unfreeze()
    return _exit_status(last_sweep_outcome(), args)


def _exit_status(outcome: dict, args: list[str]) -> int:
    """1 when any trial failed (error, timeout), a job could not run or lost its worker, a results file
    is damaged or the end-of-sweep summary failed; each cause is printed. 0 otherwise."""
    status = 0
    resume = _resume_command(args, outcome.get("sweep"))
    if outcome.get("failed"):
        lines = "\n  ".join(outcome.get("errors") or [])
        print(f"ccbench: {outcome['failed']} trial(s) failed (status error or timeout):\n  {lines}\n"
              f"Fix the cause (a timeout: raise trial_timeout) and re-run; failed trials are retried, "
              f"finished ones kept: {resume}", file=sys.stderr)
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
