"""How much of an experiment's grid a sweep's rows cover: the pages' "Sweep coverage" line.

The grid is what the commands asked for, not what ran: every grid file a sweep directory records
(ccbench's ``.ccbench_grids/<run>.yaml``, Hydra's ``multirun.yaml``) and, for a shipped folder, the
grids its ``grid.json`` carries (:func:`recorded_grids`, written when the rows are shipped), so pages
regenerated from the shipped rows state the coverage the sweep's pages stated.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .._safe import read_yaml
from ..shipped import check_grid_size, is_shipped, read_shipped_grids


def _grid_files(directory: Path) -> list[Path]:
    """Every grid a sweep directory records: ccbench's ``.ccbench_grids/<run>.yaml`` (one per command) and
    every Hydra ``multirun.yaml`` below it (Hydra keeps only the last command's), found without following
    symlinks (a results folder may come from a stranger)."""
    import os

    found = sorted((directory / ".ccbench_grids").glob("*.yaml")) if (directory / ".ccbench_grids").is_dir() else []
    for root, dirs, files in os.walk(directory, followlinks=False):
        dirs[:] = [d for d in dirs if d != ".ccbench_grids"]
        found += [Path(root) / "multirun.yaml"] if "multirun.yaml" in files else []
    return [p for p in found if p.is_file() and not p.is_symlink()]


def _grid_axes(path: Path) -> tuple[dict, dict]:
    """({key: [values]}, config) of one grid file: its sweeper params with the command line's overrides
    (a command-line value replaces the sweeper's list, Hydra's rule; a single value is an axis of one),
    suites expanded. Read with :func:`read_yaml` (no aliases, at most 1 MB); a grid of more than
    10,000,000 jobs is refused (ValueError naming the file)."""
    from ...datasets import SUITES

    from ...running.config import NON_IDENTITY_KEYS  # rerun_errors=false on a resume names no other job

    conf = read_yaml(path)
    params = dict(conf["hydra"]["sweeper"].get("params") or {})
    for override in map(str, conf["hydra"]["overrides"].get("task") or []):
        key, _, value = override.partition("=")
        if key and not key.startswith(("hydra", "+", "~")):
            params[key] = value
    params = {k: v for k, v in params.items() if k not in NON_IDENTITY_KEYS}
    axes = {}
    for key, value in sorted(params.items()):
        values = str(value).split(",")
        if key == "dataset":
            values = [m for v in values for m in SUITES.get(v, [v])]
        axes[key] = values
    check_grid_size(axes, path)
    return axes, conf


def _value_in(conf: dict, key: str) -> str | None:
    """The value a grid file's job had for ``key`` without choosing it: a group's choice
    (``hydra.runtime.choices``) or a config value at the dotted path."""
    choices = ((conf.get("hydra") or {}).get("runtime") or {}).get("choices") or {}
    if key in choices:
        return str(choices[key])
    node = conf
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return None if isinstance(node, (dict, list)) else str(node)


def _method_name(choice: str) -> str:
    """The method a ``method=<choice>`` config runs (its ``name``): ``ap_k`` (ap given k) runs ``ap``. A
    choice ccbench does not ship (a plugin's) is its own name."""
    import re
    from importlib import resources

    import yaml

    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", choice) or ".." in choice:
        return choice  # the grid file may be a stranger's: never a path
    try:
        text = resources.files("ccbench_conf").joinpath("method", f"{choice}.yaml").read_text()
        name = (yaml.safe_load(text) or {}).get("name")
    except (OSError, ValueError, yaml.YAMLError, AttributeError):
        return choice
    return name if isinstance(name, str) and name else choice


def sweep_coverage(dirs, data: pd.DataFrame, shipped: tuple | None = None) -> str | None:
    """One line on how much of the experiment's grid the rows cover, or None when no directory holds a
    grid file. The experiment's grid is the union of every grid recorded under the directories
    (:func:`_grid_files`, :func:`_grid_axes`) and of the jobs found in the rows outside them (an earlier
    command into the same directory ran them), not the last command's grid alone; a job is done when
    every trial has a row. A grid file that is refused (an alias, too large, not a Hydra multirun.yaml)
    is left out with a warning naming it. A partial sweep says so on its pages. ``shipped``: ``(folders,
    n_rows[, n_clashes])`` of shipped rows ranked with these (``--with``): named, their coverage left to
    their pages; ``n_clashes`` shipped rows that had the identity of one of these and were left out
    (:func:`ccbench.reporting.merge_with`) are named too."""
    line = _grid_coverage(dirs, data)
    if shipped:
        clashes = int(shipped[2]) if len(shipped) > 2 else 0
        line = ((line + " " if line else "") + f"Ranked with the shipped rows of {', '.join(map(str, shipped[0]))} "
                f"({max(int(shipped[1]), 0):,} rows, not re-run; their coverage is on their own pages).")
        if clashes:
            line += (f" {clashes:,} of their rows had the (config_hash, trial) of rows of this sweep and were left "
                     f"out: this sweep's rows are kept, never replaced by shipped ones.")
    return line


def _grids(dirs) -> list[tuple[dict, dict]]:
    """(axes, config) of every grid the directories record; a shipped folder's grids come with every
    key filled in (their config is empty). A refused grid is left out with a warning naming it."""
    import warnings

    grids = []
    for d in map(Path, dirs):
        if is_shipped(d):
            try:
                grids += [(axes, {}) for axes in read_shipped_grids(d)]
            except ValueError as exc:
                warnings.warn(f"sweep coverage left out {exc}", stacklevel=3)
            continue
        for path in _grid_files(d):
            try:
                grids.append(_grid_axes(path))
            except ValueError as exc:  # refused: the message names the file
                warnings.warn(f"sweep coverage left out {exc}", stacklevel=3)
            except (KeyError, TypeError, AttributeError) as exc:
                warnings.warn(f"sweep coverage left out {path}: not a Hydra multirun.yaml "
                              f"({type(exc).__name__}: {exc})", stacklevel=3)
    return grids


def recorded_grids(dirs) -> list[dict]:
    """The grids the directories record, each as {key: [values]} over the keys any of them sweeps (a
    key a grid does not sweep has the one value its jobs had): what a shipped folder carries in
    ``grid.json`` so its coverage survives shipping."""
    grids = _grids(dirs)
    keys = sorted({k for axes, _ in grids for k in axes})
    return [{k: list(axes.get(k, [_value_in(conf, k)])) for k in keys} for axes, conf in grids]


def _grid_coverage(dirs, data: pd.DataFrame) -> str | None:
    import itertools

    grids = _grids(dirs)
    # one identity for a job across grids: a key one grid sweeps and another leaves at its default
    # takes, in the latter, the value its config had (dataset=wine on one command, iris by default on another)
    keys = sorted({k for axes, _ in grids for k in axes})
    jobs = set()
    for axes, conf in grids:
        full = [[(k, v) for v in axes.get(k, [_value_in(conf, k)])] for k in keys]
        jobs |= set(itertools.product(*full)) if full else set()
    if not jobs:
        return None
    grid = {}
    for job in jobs:
        for key, value in job:
            if key in ("dataset", "method"):
                grid.setdefault(f"{key}.name", set()).add(_method_name(value) if key == "method" else value)
    trials = pd.to_numeric(data.get("n_trials"), errors="coerce")
    counts = data.groupby("config_hash")["trial"].nunique()
    wanted = trials.groupby(data["config_hash"]).max()
    full = counts >= wanted.reindex(counts.index)
    in_grid = pd.Series(True, index=full.index)
    for column, values in grid.items():
        if column in data:
            in_grid &= data.groupby("config_hash")[column].first().reindex(full.index).isin(values)
    outside = int((~in_grid).sum())  # jobs of the experiment that no grid file here lists any more
    asked = len(jobs) + outside
    done = int(full.sum())
    share = done / asked
    line = (f"Sweep coverage: {done:,} of the {asked:,} jobs of the experiment's grid have every trial recorded "
            f"({share:.0%})" + ("." if done >= asked else "; **the sweep is incomplete**: resume it with the "
                                                            "same command, then regenerate this page."))
    line += (" The grid is the union of every grid recorded here"
             + (f" and {outside:,} job(s) found in the rows outside them (an earlier command into the same "
                "directory)" if outside else "") + ", not the last command's alone.")
    per_set = {}
    for job in jobs:
        for key, value in job:
            if key == "dataset":
                per_set[value] = per_set.get(value, 0) + 1
    if "dataset.name" in data:
        names = data.groupby("config_hash")["dataset.name"].first()
        for name, n in names[~in_grid.reindex(names.index).fillna(False).astype(bool)].value_counts().items():
            per_set[name] = per_set.get(name, 0) + int(n)
    per_set = dict(sorted(per_set.items(), key=lambda item: str(item[0])))  # jobs are a set: no order of their own
    if per_set and done < asked and "dataset.name" in data:
        done_per_set = names[full[full].index].value_counts()
        complete = [d for d, n in per_set.items() if done_per_set.get(d, 0) >= n]
        partial = [f"{d} ({done_per_set[d]} of {n} jobs)" for d, n in per_set.items() if 0 < done_per_set.get(d, 0) < n]
        missing = [d for d in per_set if done_per_set.get(d, 0) == 0]
        line += (f" Data sets complete: {len(complete)} of {len(per_set)}"
                 + (f"; partly done: {', '.join(partial)}" if partial else "")
                 + (f"; not started: {', '.join(missing)}" if missing else "") + ".")
    return line
