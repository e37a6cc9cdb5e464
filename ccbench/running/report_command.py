"""``ccbench report DIR ...``: the report subcommand's arguments and what each mode writes (the report and
report.html, ``--compare``, ``--compare-sweeps``, ``--leaderboard`` with ``--with`` and ``--site``,
``--utility``). Split from :mod:`ccbench.running.cli`, which dispatches to it."""

from __future__ import annotations

import sys

__all__ = ["add_parser"]


def add_parser(sub) -> None:
    """The ``report`` subcommand of ``ccbench`` (see :mod:`ccbench.running.cli`)."""
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
                          "or a sweep): refused when made under another protocol; newest row per (config_hash, trial) within each "
                          "side, and DIR's row wherever both have one (a shipped row never replaces yours)")
    rep.add_argument("--site", default=None, metavar="SITE",
                     help="with --leaderboard: also write a static, offline site (index, one page per supervision "
                          "kind, data set and method; sortable tables) into SITE; on the active track's rows: its "
                          "site (headline, one page per data set and entry)")
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
                     help="extra plugin module to load first (a report never imports the modules a results "
                          "folder's plugins column names: name the ones you trust here)")
    rep.add_argument("--converged-only", action="store_true",
                     help="leave out ok trials whose method did not converge (by default they count, marked 'nc')")
    rep.set_defaults(func=_report)


def _report(args) -> int:
    from pathlib import Path

    from .. import reporting as report

    if args.compare_sweeps:
        return _compare_sweeps(args)
    for folder, option in ((args.out, "--out"), (args.site, "--site")):
        if folder:  # before anything is written: a refused site must not leave a fresh page behind
            report.check_output_dir(folder, option)
    data = report.load(*args.dirs)
    args.own_rows = data  # the coverage line is about these dirs' grid, not the shipped rows'
    active = report.is_active_rows(data)  # anytime curves (issue 53): their own page, docs/active.md
    if args.with_:  # rank these rows against shipped ones: refused under another protocol (reporting.merge_with)
        merge = report.merge_active_with if active else report.merge_with
        data, notes = merge(data, report.load(*args.with_), new_name=" ".join(args.dirs),
                            shipped_name=" ".join(args.with_))
        for line in notes:
            print(f"ccbench report: warning: {line}", file=sys.stderr)
        args.shipped_counts = (data.attrs.get("shipped_rows", 0), data.attrs.get("shipped_clashes", 0))
    if args.converged_only:
        kept = report.drop_not_converged(data)
        print(f"--converged-only: {len(data) - len(kept)} non-converged trial(s) left out", file=sys.stderr)
        data = kept
    if active and not args.leaderboard:
        return _active(args, data)
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


def _active(args, data) -> int:
    """The active track's page and shipped rows (``ccbench.reporting.write_active_report``)."""
    from pathlib import Path

    from ..reporting import write_active_report, write_shipped

    out = Path(args.out) if args.out else Path(args.dirs[0]) / "report"
    command = "ccbench report " + " ".join([*map(str, args.dirs), f"--out {out}"]
                                           + [f"--with {w}" for w in (args.with_ or [])]
                                           + ([f"--site {args.site}"] if args.site else []))
    paths = write_active_report(data, out, command=command, margin=args.margin, figures=not args.no_figures,
                                site=Path(args.site) if args.site else None)
    paths.update(write_shipped(data, out, dirs=[*args.dirs, *(args.with_ or [])]))
    print(paths["md"].read_text())
    print("wrote:", ", ".join(str(p) for p in paths.values()))
    return 0


def _load_row_plugins(data, given) -> None:
    """Register the ``--plugin`` modules the user named; never a module a results folder names.

    The rows' ``plugins`` column is written by whoever made the rows (a shipped folder may come from
    a stranger, its checksums valid): importing what it names runs that module's code on the
    reader's machine (``plugins=["antigravity"]`` opened a web browser). So a report imports only
    what the user's own command (``--plugin``) or environment (installed entry points) registers;
    a module the rows name that is not registered here is a warning naming ``--plugin`` as the fix
    (what then needs its data set or method says so)."""
    from .. import registry

    registry.load_plugins(given)
    loaded = {n for name, plugin in registry.get_plugin_manager().list_name_plugin()
              for n in (name, getattr(plugin, "__name__", name))}
    missing = [name for name in row_plugin_names(data) if name not in loaded and name not in given]
    if missing:
        print(f"ccbench report: warning: the rows name plugin module(s) {', '.join(map(repr, missing))}, not "
              f"loaded: a report never imports what a results folder names; if you trust the module, pass "
              f"--plugin MODULE", file=sys.stderr)


def row_plugin_names(data) -> list[str]:
    """The module names the rows' ``plugins`` column lists (JSON lists, or ``[a, b]`` text), in order, once
    each; only read, never imported."""
    import json

    named: list[str] = []
    if "plugins" in data:
        for text in data["plugins"].dropna().unique():
            try:
                value = json.loads(text) if isinstance(text, str) else list(text)
            except (ValueError, TypeError):
                value = [p.strip() for p in str(text).strip("[]").split(",")]
            named += [str(p) for p in (value if isinstance(value, list) else [value]) if p]
    return list(dict.fromkeys(named))


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
    coverage = leaderboard.sweep_coverage(args.dirs, own, shipped=(args.with_, *args.shipped_counts) if args.with_ else None)
    new_rows = own if args.with_ else None  # a partial new method is placed apart, on the pages as on the site
    with leaderboard.headlines_remembered():  # the pages and the site share each kind's headline
        paths = leaderboard.write_leaderboard(data, out, metric=metric, margin=args.margin, command=command,
                                              coverage=coverage, new_rows=new_rows)
        from ..reporting import write_shipped  # the per-trial rows, so others can re-rank, add metrics, join
        sources = [*args.dirs, *(args.with_ or [])]
        paths.update(write_shipped(data, out, dirs=sources, grids=leaderboard.recorded_grids(sources)))
        if args.site:
            paths["site"] = leaderboard.write_site(data, Path(args.site), metric=metric, margin=args.margin,
                                                   command=command, coverage=coverage, pages=out,
                                                   new_rows=new_rows)
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
