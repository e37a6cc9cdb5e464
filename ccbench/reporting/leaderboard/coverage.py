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
    from ...datasets import suites

    from ...running.config import NON_IDENTITY_KEYS  # rerun_errors=false on a resume names no other job

    conf = read_yaml(path)
    params = dict(conf["hydra"]["sweeper"].get("params") or {})
    for override in map(str, conf["hydra"]["overrides"].get("task") or []):
        key, _, value = override.partition("=")
        if key and not key.startswith(("hydra", "+", "~")):
            params[key] = value
    params = {k: v for k, v in params.items() if k not in NON_IDENTITY_KEYS}
    axes, named = {}, suites()
    for key, value in sorted(params.items()):
        values = str(value).split(",")
        if key == "dataset":
            values = [m for v in values for m in named.get(v, [v])]
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
        line += " " + as_shipped_note(shipped[0])
    return line


#: Every leaderboard page's closing words (constant, so a shipped folder regenerates its own pages unchanged):
#: pages read from a shipped folder carry its numbers as shipped, and this is how a reader checks them.
AS_SHIPPED = ("Read from a shipped folder (its manifest.jsonl), these numbers are as shipped: the manifest is "
              "self-attested (checksums show the rows are unchanged since shipping, not that a fit made them); "
              "to check them, re-run the sweep into RERUN and run `ccbench report RERUN SHIPPED --compare-sweeps`.")


def as_shipped_note(folders) -> str:
    """What a shipped folder's numbers are: as shipped. Its manifest is self-attested (its checksums show the
    rows are the ones shipped, not that a fit made them), so the pages say how to check them: re-run the
    folder's sweep and compare the two (``--compare-sweeps``)."""
    names = " ".join(map(str, folders)) or "SHIPPED"
    return (f"The numbers of {names} are as shipped: its manifest is self-attested (checksums show the rows are "
            f"unchanged since shipping, not that a fit made them); to check them, re-run its sweep into RERUN and "
            f"run `ccbench report RERUN {names} --compare-sweeps`.")


def _rerun_of(axes: dict, conf: dict) -> str | None:
    """The experiment whose cells a grid runs again (``rerun_of`` in its config, or in the experiment file
    ccbench ships under the name its ``experiment`` axis gives: grids recorded before the key existed), or
    None. Read from ccbench's own files only: a grid's experiment name is never a path."""
    import re
    from importlib import resources

    if conf.get("rerun_of"):
        return str(conf["rerun_of"])
    names = axes.get("experiment") or [_value_in(conf, "experiment")]
    if len(names) != 1 or not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_-]*", str(names[0] or "")):
        return None
    try:
        text = resources.files("ccbench_conf").joinpath("experiment", f"{names[0]}.yaml").read_text()
        found = re.search(r"^rerun_of:\s*([A-Za-z0-9_-]+)", text, flags=re.M)
    except (OSError, ValueError, AttributeError):
        return None
    return found.group(1) if found else None


def _without_reruns(grids: list[tuple[dict, dict]]) -> list[tuple[dict, dict]]:
    """``grids`` less those that run again the cells of an experiment whose own grid is among them (a
    budget-sensitivity or stale-row re-run names no new job; alone, its grid is what was asked)."""
    experiments = {str(v) for axes, conf in grids for v in (axes.get("experiment") or [_value_in(conf, "experiment")])}
    return [(axes, conf) for axes, conf in grids if _rerun_of(axes, conf) not in experiments]


def _grids(dirs) -> list[tuple[dict, dict]]:
    """(axes, config) of every grid the directories record; a shipped folder's grids come with every
    key filled in (their config is empty). A refused grid is left out with a warning naming it, a re-run
    of another recorded grid's cells too (:func:`_without_reruns`)."""
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
    return _without_reruns(grids)


def recorded_grids(dirs) -> list[dict]:
    """The grids the directories record, each as {key: [values]} over the keys any of them sweeps (a
    key a grid does not sweep has the one value its jobs had): what a shipped folder carries in
    ``grid.json`` so its coverage survives shipping."""
    import json

    grids = _grids(dirs)
    keys = sorted({k for axes, _ in grids for k in axes})
    filled = [{k: list(axes.get(k, [_value_in(conf, k)])) for k in keys} for axes, conf in grids]
    # each once: a folder regenerated from itself and the sweeps it was made from records their grids again,
    # and a union does not change with a repeated member (grid.json had grown to 57 grids, 10 distinct)
    unique = {json.dumps(g, sort_keys=True, default=str): g for g in filled}
    return list(unique.values())


#: the most steps :func:`count_jobs` takes to count the jobs of the grids recorded in a folder (a
#: stranger's grids may overlap in patterns whose union takes exponentially many steps to count)
MAX_COUNT_STEPS = 1_000_000


class _TooIntricate(ValueError):
    """The grids' union needs more than :data:`MAX_COUNT_STEPS` steps to count."""


def count_jobs(boxes: list[dict], keys: list, by: str | None = None) -> dict:
    """{value of ``by``: number of distinct jobs} of the union of the grids ``boxes`` ({key: set of
    values}, each a Cartesian product over ``keys``), counted without listing a job (``by`` None: the
    one entry None).

    Key by key, the grids still alive for a job prefix are a *state*; a key's values fall into classes by
    the set of alive grids that hold them, and each class leads to the state of that set, weighted by the
    class's size. A job belongs to the union when some grid holds every one of its values, so the count is
    the total weight of the states still non-empty after the last key: ``|A u B|`` for ``A = {a, b} x
    {x}`` and ``B = {b, c} x {x, y}`` is 1 (a: A) + 2 (b: A, B over x; B over y) + 2 (c: B) = 5 = 2 + 4 - 1.
    A ``_TooIntricate`` ValueError beyond :data:`MAX_COUNT_STEPS` steps (one per grid per value seen)."""
    keys = [k for k in keys if k != by]
    boxes = [b for b in boxes if all(b.get(k) for k in keys) and (by is None or b.get(by))]  # an empty axis: no job
    starts: dict = {}
    for i, box in enumerate(boxes):
        for value in (box[by] if by is not None else [None]):
            starts.setdefault(value, set()).add(i)
    states = {(value, frozenset(alive)): 1 for value, alive in starts.items()}
    steps = 0
    for key in keys:
        nxt: dict = {}
        for (tag, alive), weight in states.items():
            holders: dict = {}
            for i in alive:
                for value in boxes[i][key]:
                    holders.setdefault(value, set()).add(i)
                steps += len(boxes[i][key])
            if steps > MAX_COUNT_STEPS:
                raise _TooIntricate(f"the grids overlap in too intricate a way to count their jobs within "
                                    f"{MAX_COUNT_STEPS:,} steps (coverage.MAX_COUNT_STEPS)")
            sizes: dict = {}
            for alive_next in map(frozenset, holders.values()):
                sizes[alive_next] = sizes.get(alive_next, 0) + 1
            for alive_next, n in sizes.items():
                nxt[(tag, alive_next)] = nxt.get((tag, alive_next), 0) + weight * n
        states = nxt
    counts: dict = {}
    for (tag, _), weight in states.items():
        counts[tag] = counts.get(tag, 0) + weight
    return counts


def _grid_coverage(dirs, data: pd.DataFrame) -> str | None:
    import warnings

    grids = _grids(dirs)
    # one identity for a job across grids: a key one grid sweeps and another leaves at its default
    # takes, in the latter, the value its config had (dataset=wine on one command, iris by default on another)
    keys = sorted({k for axes, _ in grids for k in axes})
    boxes = [{k: set(axes.get(k, [_value_in(conf, k)])) for k in keys} for axes, conf in grids]
    boxes = [b for b in boxes if all(b.values())]
    if not boxes or not keys:
        return None
    try:  # counted, never listed: a grid file of 4 KB may claim ten million jobs
        per_set = count_jobs(boxes, keys, by="dataset") if "dataset" in keys else {}
        n_jobs = sum(per_set.values()) if per_set else count_jobs(boxes, keys)[None]
    except _TooIntricate as exc:
        warnings.warn(f"sweep coverage left out: {exc}", stacklevel=3)
        return None
    grid = {}
    for box in boxes:
        for key in ("dataset", "method"):
            for value in box.get(key, ()):
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
    asked = n_jobs + outside
    done = int(full.sum())
    share = done / asked
    line = (f"Sweep coverage: {done:,} of the {asked:,} jobs of the experiment's grid have every trial recorded "
            f"({share:.0%})" + ("." if done >= asked else "; **the sweep is incomplete**: resume it with the "
                                                            "same command, then regenerate this page."))
    line += (" The grid is the union of every grid recorded here"
             + (f" and {outside:,} job(s) found in the rows outside them (an earlier command into the same "
                "directory)" if outside else "") + ", not the last command's alone.")
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
