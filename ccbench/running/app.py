"""The Hydra side of ccbench: the app (one job = one cell) and the sweep callback.

Thin on purpose: :func:`hydra_app` passes Hydra's output directory to
:func:`ccbench.running.harness.run_job`; :class:`SweepSummaryCallback` shows progress,
prints the summary at the end of a sweep (the same text as ``ccbench report``)
and records whether any trial failed, so the command can exit non-zero.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from hydra.types import RunMode

from .config import canonical_json, register_configs
from .sweep_progress import DONE_FILE, RUN_ENV, TOTAL_FILE, forget_progress, jobs_of_run, note_job
from .worker_deaths import forget_lost_jobs, lost_jobs

__all__ = ["hydra_app", "SweepSummaryCallback", "last_sweep_outcome", "register_method_configs",
           "command_line_searchpaths"]


register_configs()


def _register_sweeper() -> None:
    """Register ``hydra/sweeper=ccbench`` (see :mod:`hydra_plugins.ccbench_sweeper`).

    Hydra finds plugins by walking the ``hydra_plugins`` namespace package,
    which an editable install's import hook does not list; registering the
    class here makes the sweeper available however ccbench was installed.
    Hydra's first plugin scan re-executes its core plugin modules, which
    rebinds ``BasicSweeper``; the scan therefore runs before the subclass is
    defined.
    """
    from hydra.core.plugins import Plugins

    plugins = Plugins.instance()
    from hydra_plugins.ccbench_sweeper.ccbench_sweeper import CCBenchSweeper

    plugins.register(CCBenchSweeper)
    from hydra_plugins.ccbench_sweeper.slurm_launcher import CCBenchSlurmLauncher

    plugins.register(CCBenchSlurmLauncher)
    from hydra_plugins.ccbench_sweeper.joblib_launcher import CCBenchJoblibLauncher

    plugins.register(CCBenchJoblibLauncher)


_register_sweeper()


def command_line_searchpaths(args) -> list[str]:
    """The ``hydra.searchpath=[...]`` entries of a command line (none when it has a syntax error:
    Hydra reports that with its own message)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    searchpaths: list[str] = []
    try:
        for o in OverridesParser.create().parse_overrides([a for a in args if a.startswith("hydra.searchpath=")]):
            value = o.value()
            searchpaths += [str(v) for v in (value if isinstance(value, list) else [value])]
    except Exception:  # noqa: BLE001
        pass
    return searchpaths


def register_method_configs(searchpaths=()) -> list[str]:
    """A ``method/<name>`` config for every registered method that has none in the search path.

    ``method=<name>`` then works for any method ``ccbench plugins`` lists, an installed
    plugin's included, without ``hydra.searchpath``: the config is the YAML the plugin
    ships at the conventional place (``<its top-level package>.conf``, ``method/<name>.yaml``,
    README's layout) when there is one, else ``{name: <name>}`` (the estimator's defaults; a
    method that needs k gets the true number of classes). Stored in Hydra's ConfigStore, which
    comes last in the search path, so a YAML found in ``searchpaths`` (``hydra.searchpath``)
    is left alone. Returns the names it stored.
    """
    from importlib.resources import files

    from hydra.core.config_store import ConfigStore
    from omegaconf import OmegaConf

    from .. import registry
    from .validate import _group_options

    known = set(_group_options([str(s) for s in searchpaths])("method"))
    stored = []
    for spec in registry.list_methods(load=False):
        if spec.name in known:
            continue
        target = spec.estimator if isinstance(spec.estimator, str) else spec.estimator.__module__
        node = {"name": spec.name}
        try:  # the plugin's own YAML, when it follows README's layout
            own = files(f"{target.split(':')[0].split('.')[0]}.conf") / "method" / f"{spec.name}.yaml"
            loaded = OmegaConf.create(own.read_text()) if own.is_file() else None
            if loaded is not None and "defaults" not in loaded and loaded.get("name") == spec.name:
                node = OmegaConf.to_container(loaded)
        except (ImportError, OSError, ValueError, TypeError):
            pass
        ConfigStore.instance().store(group="method", name=spec.name, node=node, provider="ccbench")
        stored.append(spec.name)
    return stored

_TOTAL_FILE, _DONE_FILE, _RUN_ENV = TOTAL_FILE, DONE_FILE, RUN_ENV
#: Every grid run into a sweep directory, one YAML each (Hydra's multirun.yaml keeps only the last):
#: ``<sweep>/.ccbench_grids/<run>.yaml``; the leaderboard's coverage reads them all.
GRIDS_DIR = ".ccbench_grids"
# Set by the callback at the end of a sweep (same process as the command).
_outcome: dict = {}


#: Report processes forked by the callback (:meth:`SweepSummaryCallback._start_worker`): a sweep refused
#: before its first job never reaches ``on_multirun_end``, so the command stops them
#: (:func:`stop_report_workers`).
_report_workers: list = []


def stop_report_workers() -> None:
    """End and reap every report process a sweep of this process forked and did not use."""
    while _report_workers:
        _report_workers.pop().stop()


def last_sweep_outcome() -> dict:
    """``{"sweep": dir, "failed": n_error_rows, "errors": [line per distinct error], "timeouts":
    n_timeout_rows, "timeout_cells": [line per cell with a timeout], "problems": text, "job_errors": [line
    per job that could not run], "lost_jobs": [line per job whose launcher worker died], "callback_error":
    text or None}``. A ``timeout`` row is a trial that reached its budget (a measured result, ranked), not a
    failure of the run: it is counted apart from the ``error`` rows (:func:`ccbench.running.cli._exit_status`)."""
    lost = lost_jobs()  # noted by the joblib launcher (:func:`.worker_deaths.note_lost_job`)
    return {**_outcome, "lost_jobs": lost} if lost else dict(_outcome)


@hydra.main(version_base="1.3", config_path="pkg://ccbench_conf", config_name="config")
def hydra_app(cfg) -> dict:
    """Compose the config (Hydra) and run one job into Hydra's job output directory."""
    from .harness import run_job
    from .results import ResultsCorruptError

    hc = HydraConfig.get()
    out = hc.runtime.output_dir
    # shared unsupervised fits live beside the sweep's jobs, whatever the job directories' depth
    fits = Path(hc.sweep.dir) / ".fits" if hc.mode == RunMode.MULTIRUN else None
    try:
        rows = run_job(cfg, out_dir=out, fits_dir=fits)
    except ResultsCorruptError as exc:  # one damaged job directory must not stop the others
        print(f"ccbench: {exc}", file=sys.stderr)
        _outcome.setdefault("job_errors", []).append(str(exc))
        return {}
    return rows["status"].value_counts().to_dict() if len(rows) else {}


def _count_jobs(config) -> int | None:
    """Number of jobs a basic sweep will launch (product of the sweep lists)."""
    try:
        import numpy as np
        from hydra.core.override_parser.overrides_parser import OverridesParser

        from ..datasets import expand_suites

        from hydra_plugins.ccbench_sweeper.ccbench_sweeper import append_values

        params, args = append_values(config.hydra.sweeper.get("params"), list(config.hydra.overrides.task),
                                     config.hydra.sweeper.get("append"))
        params = expand_suites([f"{k}={v}" for k, v in params.items()])
        args = expand_suites(args)
        lengths = {}
        for o in OverridesParser.create().parse_overrides(params + args):
            key = o.get_key_element()
            lengths[key] = len(list(o.sweep_string_iterator())) if o.is_sweep_override() else 1
        return int(np.prod(list(lengths.values()))) if lengths else 1
    except Exception:
        return None


def _count_done(sweep: Path, run: str) -> int:
    """Jobs this sweep command (``run``) finished: one byte appended per finished job to
    ``<sweep>/.ccbench_done.<run>`` (an ``O_APPEND`` write, whole from any process or node), counted
    by the file's size. Constant time per job (globbing the job directories made a sweep's progress
    lines grow with its square), and two commands into one directory count their own jobs."""
    fd = os.open(sweep / f"{_DONE_FILE}.{run}", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, b"\n")
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def _timeout_cells(data) -> list[str]:
    """One line per cell with ``timeout`` rows: ``dataset / method[+tune] / constraints[, noise] (job <its
    directory>): t of n trial(s)`` (what the exit message names; every row of the sweep directory, earlier
    runs' too)."""
    import pandas as pd

    timed_out = data["status"] == "timeout"
    if not timed_out.any():
        return []

    def column(name, default="none"):
        if name not in data:
            return pd.Series(default, index=data.index, dtype=object)
        return data[name].astype(object).where(data[name].notna(), default)

    tune = column("tune")
    method = column("method.name", "?").astype(str) + tune.map(lambda t: "" if t in ("none", None) else f"+{t}")
    noise = column("noise.name").map(lambda n: "" if n in ("none", None) else f", noise {n}")
    budget = pd.Series("", index=data.index)
    for option in ("per_point", "fraction", "per_class", "n_constraints"):  # the supervision's size
        if f"constraints.{option}" in data:
            value = data[f"constraints.{option}"]
            text = value.map(lambda v: f" {option}={v:g}" if isinstance(v, float) else f" {option}={v}")
            budget = budget.where(budget.ne("") | value.isna(), text)
    cell = (column("dataset.name", "?").astype(str) + " / " + method + " / "
            + column("constraints.name", "?").astype(str) + budget + noise)
    # the job directory tells apart two cells that differ in a method option the label leaves out
    job = column("source", "").map(lambda s: f" (job {Path(s).name})" if s else "")
    counts = data.assign(cell=cell + job, timed_out=timed_out).groupby("cell", sort=True)["timed_out"].agg(["sum", "size"])
    return [f"{c}: {int(t)} of {n} trial(s)" for c, (t, n) in counts[counts["sum"] > 0].iterrows()]


class SweepSummaryCallback(Callback):
    """Multirun progress (jobs done / total, on a terminal) and a summary at the end.

    ``on_multirun_end`` gathers the sweep directory, prints mean ± std of
    ``metric`` per method and x value and the problems (errors with their real
    message, non-converged runs, violated hard constraints), and writes the full
    report (``summary.md``, ``summary.parquet``, PNG) to ``<sweep dir>/report``.

    Parameters
    ----------
    metric : str, default="modified_rand"
    write_report : bool, default=True
        False: no report, and the summary, the counts and the exit status are of the directories this run's
        jobs wrote, not of every row of the sweep directory (a block of a folder shared with other runs).
    """

    def __init__(self, metric: str = "modified_rand", write_report: bool = True):
        self.metric = metric
        self.write_report = write_report
        self._worker = None  # the report's forked process (ccbench.reporting.ReportWorker), basic launcher only

    def on_multirun_start(self, config, **kwargs):
        _outcome.clear()
        forget_lost_jobs()
        sweep = Path(config.hydra.sweep.dir)
        _outcome["sweep"] = str(sweep.resolve())
        _outcome["start"] = time.time()
        sweep.mkdir(parents=True, exist_ok=True)
        total = _count_jobs(config)
        run = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{os.urandom(3).hex()}"
        os.environ[_RUN_ENV] = run
        _outcome["run"] = run
        (sweep / f"{_TOTAL_FILE}.{run}").write_text(canonical_json({"total": total, "start": time.time()}))
        try:  # this grid, kept beside the others run into the same directory
            from omegaconf import OmegaConf

            (sweep / GRIDS_DIR).mkdir(exist_ok=True)
            (sweep / GRIDS_DIR / f"{run}.yaml").write_text(OmegaConf.to_yaml(config, resolve=False))
        except Exception:  # noqa: BLE001 - the record of the grid must never stop a sweep
            pass
        self._start_worker(config)

    def _start_worker(self, config) -> None:
        """Fork the process that will write the report (it imports matplotlib while the jobs run):
        with the basic launcher only, whose jobs run in this process; a SLURM or joblib sweep's
        process would keep it waiting for hours, or hand its pipe to the launcher's workers."""
        self._stop_worker()
        try:
            launcher = str(config.hydra.launcher._target_)
        except Exception:  # noqa: BLE001 - no launcher named: the report is written here
            return
        if self.write_report and launcher.endswith(".BasicLauncher"):
            from ..reporting import ReportWorker

            self._worker = ReportWorker.start()
            if self._worker is not None:
                _report_workers.append(self._worker)

    def _stop_worker(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()

    def on_job_end(self, config, job_return, **kwargs):
        """``jobs done d/total, elapsed, ETA``: one whole line per finished job, on a terminal or
        not (SLURM logs), written at once so lines from parallel workers do not interleave."""
        from .harness import _duration

        try:
            run = os.environ[_RUN_ENV]
            sweep = Path(config.hydra.sweep.dir)
            note_job(sweep, run, config.hydra.runtime.output_dir)
            info = json.loads((sweep / f"{_TOTAL_FILE}.{run}").read_text())
            done = _count_done(sweep, run)
            elapsed = time.time() - info["start"]
            total = info["total"]
            eta = f", ETA {_duration(elapsed / done * (total - done))}" if total and 0 < done < total else ""
            sys.stderr.write(f"[ccbench] jobs done {done}/{total or '?'}, {_duration(elapsed)} elapsed{eta}\n")
            sys.stderr.flush()
        except Exception:  # progress must never break a sweep
            pass

    def on_multirun_end(self, config, **kwargs):
        """Count failures first (from the raw rows), then summarise; Hydra turns an exception
        raised here into a warning, so none escapes: a failed summary is recorded and the
        command exits non-zero (:func:`ccbench.running.cli._run_sweep`)."""
        sweep = Path(config.hydra.sweep.dir)
        run = _outcome.get("run")
        # without the folder's report, this run's own cells: a block of a shared folder neither reads every
        # other block's rows (5-6 min a block at the board's 42,000 cells) nor exits 1 for their errors
        jobs = None if self.write_report else jobs_of_run(sweep, run)
        if run:  # this run's progress markers have served
            forget_progress(sweep, run)
        try:
            data = self._count(sweep, jobs)
        except Exception as exc:  # noqa: BLE001 - see the docstring
            _outcome["callback_error"] = f"{type(exc).__name__}: {exc}"
            self._stop_worker()
            return
        if data is None:
            self._stop_worker()
            return
        try:
            self._summarise(sweep, data)
        except Exception as exc:  # noqa: BLE001 - see the docstring
            from ..reporting import ReportFailed

            if isinstance(exc, ReportFailed):  # raised in the report's process: its traceback, its name
                sys.stderr.write(exc.trace)
                kind = exc.kind
            else:
                import traceback

                traceback.print_exc(file=sys.stderr)
                kind = type(exc).__name__
            _outcome["callback_error"] = f"the end-of-sweep report failed: {kind}: {exc}"
        finally:
            self._stop_worker()

    def _count(self, sweep: Path, jobs: list[Path] | None = None):
        """Failed and stale-re-run rows of the sweep, or of its directories ``jobs`` (read once, for the
        summary too); damaged results files are problems, not crashes."""
        import pandas as pd

        from .results import FAILED_STATUSES, gather

        damaged: list[str] = []
        try:
            data = gather(*([sweep] if jobs is None else [j for j in jobs if j.is_dir()]), damaged=damaged)
        except FileNotFoundError:  # no results file at all
            data = pd.DataFrame()
        _outcome.update(damaged=damaged, failed=0, errors=[], timeouts=0, timeout_cells=[],
                        problems="no results were written")
        if data.empty:
            return None
        failed = data[data["status"].isin(FAILED_STATUSES) & (data["status"] != "timeout")]
        _outcome["failed"] = len(failed)
        _outcome["errors"] = [f"{n} trial(s) with status {s}" for s, n in failed["status"].value_counts().items()]
        _outcome["timeouts"] = int((data["status"] == "timeout").sum())
        _outcome["timeout_cells"] = _timeout_cells(data)
        if "rerun_reason" in data and "timestamp" in data:
            new = data[pd.to_datetime(data["timestamp"], utc=True, errors="coerce")
                       >= pd.Timestamp(_outcome.get("start", 0), unit="s", tz="UTC")]
            stale = new[new["rerun_reason"].fillna("").str.startswith("stale: ")]
            if len(stale):
                lines = [f"{n} x {m}: {r[7:]}" for (m, r), n in
                         stale.groupby(["method.name", "rerun_reason"]).size().items()]
                print(f"ccbench: re-ran {len(stale)} stale trial(s) made by other code:\n  " + "\n  ".join(lines),
                      file=sys.stderr)
        return data

    def _summarise(self, sweep: Path, data) -> None:
        """Print the table and problems; write the report (in the forked process when there is one,
        while this one prints: the same calls, the same files)."""
        from .. import reporting as report

        data = report.prepare(data, [sweep])
        x = report.resolve_x(data)
        metric = self.metric if self.metric in data else report.first_metric(data)
        worker, self._worker = self._worker, None
        handed = False
        kwargs = {"metrics": [metric], "x": x, "paper": report.paper_reference(data)} if self.write_report else {}
        if worker is not None and self.write_report:  # the report is drawn while the summary is printed
            handed = worker.submit(data, sweep / "report", **kwargs)
        try:
            self._print_summary(report, data, metric, x)
        except BaseException:  # a report is kept only once the summary was printed, as before
            if worker is not None:
                worker.stop()
            raise
        if self.write_report:
            written = worker.result() if handed else None
            if written is None:  # no forked process, or it gave no answer: written here
                paths = report.write_report(data, sweep / "report", **kwargs)
                written = paths["summary_md"], report.write_html(data, sweep / "report", **kwargs)
            print(f"report: {written[0]}\nreport: {written[1]}")

    def _print_summary(self, report, data, metric: str, x: str) -> None:
        print(f"\n{report.markdown_table(report.summarise(data, metric, x), metric, x)}")
        problems = report.problems_table(data)
        print(f"\n{problems}")
        for line in report.provenance_warnings(data):
            print(f"warning: {line}", file=sys.stderr)
        errors = report.error_summary(data, statuses=("error",))
        _outcome.update(errors=errors or _outcome["errors"], problems=problems)
