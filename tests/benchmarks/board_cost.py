"""The reference board's compute, PROJECTED before anything runs (issue 51): core-hours per track and size class.

    python tests/benchmarks/board_cost.py [--rows reports/leaderboard] [--experiment board ...] [--memory-gib G] [--cuts]

Every number this prints is a **prediction** from the calibrated time models, never a measurement: the
measured cost of a sweep is ``tests/benchmarks/leaderboard_costs.py`` on its rows.

The grid is read from the committed experiments (``conf/experiment/board*.yaml``, composed by Hydra as the
sweep composes them): methods x data sets (suites expanded) x supervision cells x base seeds, ``n_trials``
trials each, each data set's ``trial_timeout`` / ``time_budget`` resolved as its job resolves them (the
board's per-size-class budget). Per cell:

- ``n, d, k`` are the registry's (:class:`~ccbench.registry.DatasetSpec`: after encoding), ``k`` given when
  the method config gives it (``true_k``, or a method that needs k), none when the run is k-free;
- ``p``, the supervision pairs the time models read: ``round(per_point n)`` random pairs; PCCC's
  ``C(ceil(f n), 2)``; for labels ``C(L, 2)`` with ``L = k min(per_class, n // k)`` revealed points (classes
  taken as balanced: the pairs term is a small factor for labels); 0 unconstrained;
- **refused** (cost 0) when the harness would refuse it before fitting: the method's *declared* models
  (``MethodSpec.time``, ``MethodSpec.memory``) through :func:`ccbench.running.protocol.size_refusal`, the
  one check the harness makes, with the budget and ``--memory-gib`` available;
- otherwise the CPU per trial ``c`` is the *calibrated* model's (:func:`ccbench.running.time_models.predict_cells`
  with the models :func:`~ccbench.running.time_models.calibrate` fits to ``--rows``): the harness refuses by
  the declared models, the projection costs by the calibrated ones (today they agree where both exist);
- a cell with ``c > B`` (its budget) is charged **one killed trial**, ``B`` (``timeout_stops_cell``: its
  later trials are recorded without fitting); else ``T c`` for its ``T`` trials; under ``timeout_stops_seeds``
  only the first base seed of such a cell is charged (the other seeds' jobs find the sweep's marker and record
  their trials without fitting, :mod:`ccbench.running.seed_timeouts`): the prediction is the same at every seed;
- a fit that uses no supervision (an unsupervised method, or any method's unconstrained cell) is shared
  (``share_unsupervised_fits``): one group per (method config, data set, seed), charged ``T c`` once, to its
  first cell in the grid's order; a group predicted over its budget is charged ``B`` in every cell (the
  killed fit is not stored, so each cell's first trial tries again);
- a method with no calibrated model (no rows in ``--rows``: ``pccc``) is charged, where ``--provisional``
  gives it a measured time (``pccc``: the largest mean fit time of ``reports/pccc_col1``, 0.97 s on n = 47-569,
  taken as 1 s a trial for n < 1,000), that time; elsewhere ``T B`` per cell (what the kill allows at most: an
  upper bound), and it is listed as unmodelled.

Core function: :func:`cell_costs` (tested on a hand-sized grid in tests/test_board_design.py). The models
were calibrated on n = 47-3,175: beyond that they extrapolate, which is why the n > 5,000 class is printed
on its own.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = ("board", "board_noise", "board_noise_large", "board_pccc", "board_k_free", "board_k_free_cvcp")
#: track of a supervision option (the unconstrained baseline is a track of its own); k-free by experiment
TRACKS = {"pairs_p02": "curves pairs", "pairs_low": "curves pairs", "pairs_mid": "curves pairs",
          "pairs_high": "curves pairs", "pairs_p40": "curves pairs",
          "labels_1": "curves labels", "labels_2": "curves labels", "labels": "curves labels",
          "labels_10": "curves labels", "labels_20": "curves labels",
          "pccc_pairs_f05": "PCCC scheme", "pccc_pairs_f10": "PCCC scheme", "pccc_pairs_f15": "PCCC scheme",
          "pccc_pairs_f20": "PCCC scheme",
          "pairs_mid_flip05": "noise", "pairs_mid_flip": "noise", "pairs_mid_flip20": "noise",
          "labels_noisy05": "noise", "labels_noisy": "noise", "labels_noisy20": "noise",
          "pairs_mid_conf08": "noise", "pairs_mid_conf06": "noise", "unconstrained": "unconstrained"}
SIZE_CLASSES = ("n < 1,000", "1,000-5,000", "n > 5,000")
#: method -> (seconds per trial, largest n it applies to): measured times of methods without shipped rows
#: (pccc: reports/pccc_col1/summary.parquet, fit_time_mean at most 0.97 s over n = 47-569, f = 5-20 %)
PROVISIONAL = {"pccc": (1.0, 999)}
ISSUE_BUDGET_CORE_HOURS = 20.0
#: CPU a job costs beyond its trials (composition, data loading, worker hand-off, rows, labels), measured by
#: ``tests/benchmarks/job_overhead.py`` (two grids of 12 and 48 jobs, the difference per job; 2026-11-30, AMD EPYC,
#: beside a running sweep): 0.23 s (kmeans, shared fits) and 0.25 s (pck_means, 10 trials a job). The figure used
#: before, 1.9 s, divided the shipped board's whole wall time on 2 cores (6.8 h) less its trials over its 7,632
#: jobs: it counted idle cores (a block waiting on its slowest cell), not work a job does.
JOB_OVERHEAD_S = 0.25


def size_class(n: int) -> str:
    """The issue's size classes: n < 1,000; 1,000 <= n <= 5,000; n > 5,000."""
    return SIZE_CLASSES[0] if n < 1000 else SIZE_CLASSES[1] if n <= 5000 else SIZE_CLASSES[2]


def cell_costs(cells: pd.DataFrame) -> pd.Series:
    """Projected CPU seconds of each cell (the rules of the module docstring).

    ``cells`` columns: ``method`` (the method config), ``dataset``, ``seed``, ``trials`` T, ``budget`` B (s),
    ``predicted`` c (s per trial; NaN: no model, charged T B), ``refused`` (bool), ``shared`` (bool: the fit
    uses no supervision), optional ``stops_seeds`` (bool: ``timeout_stops_seeds``; a predicted timeout is then
    charged at the first seed of its (method, data set, supervision, budget) only) and ``supervision``. Rows are
    in the grid's order (a shared group, and a family of seeds, is charged to its first cell).
    """
    T, B = cells["trials"].to_numpy(float), cells["budget"].to_numpy(float)
    c = cells["predicted"].to_numpy(float)
    own = np.where(np.isnan(c), T * B, np.where(c > B, B, T * c))
    refused = cells["refused"].to_numpy(bool)
    shared = cells["shared"].to_numpy(bool) & ~np.isnan(c) & (c <= B) & ~refused
    first = ~cells[["method", "dataset", "seed"]].assign(_s=shared).duplicated(keep="first").to_numpy()
    cost = np.where(shared & ~first, 0.0, own)
    if "stops_seeds" in cells:
        killed = ~np.isnan(c) & (c > B) & ~refused
        family = cells[["method", "dataset", "supervision", "budget"]].assign(_k=killed)
        later_seed = family.duplicated(keep="first").to_numpy() & killed & cells["stops_seeds"].to_numpy(bool)
        cost = np.where(later_seed, 0.0, cost)
    return pd.Series(np.where(refused, 0.0, cost), index=cells.index, name="cpu_s")


def _labels_pairs(n: int, k: int, per_class) -> int:
    per = max(1, int(round(per_class * n / k))) if isinstance(per_class, float) and per_class < 1 else int(per_class)
    revealed = k * min(per, n // k)
    return revealed * (revealed - 1) // 2


def supervision_pairs(constraints: dict, n: int, k: int) -> int:
    """The pairs ``p`` of a cell's supervision on an n-point, k-class set (module docstring)."""
    name = constraints["name"]
    if name == "none":
        return 0
    if name == "random_pairs":
        per = constraints.get("per_point")
        return int(round(per * n)) if per is not None else int(constraints["n_constraints"])
    if name == "pccc_random_pairs":
        n_f = math.ceil(n * float(constraints["fraction"]))
        return n_f * (n_f - 1) // 2
    if name == "labeled_subsets":
        return _labels_pairs(n, k, constraints["per_class"])
    raise ValueError(f"board_cost: no pair count for constraints={name!r}; add it to supervision_pairs")


def _compose_grid(experiments, replace=None) -> pd.DataFrame:
    """One row per (experiment, seed, data set, supervision, method) of the committed experiments; ``replace``:
    experiment -> {sweeper key: list of options} to project a design other than the committed one."""
    import copy

    from hydra import compose, initialize_config_module
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    from ccbench import registry
    from ccbench.datasets import suites
    from ccbench.running import app  # noqa: F401 - registers the schema and the sweeper
    from ccbench.running.config import to_cell

    parser, rows = OverridesParser.create(), []
    with initialize_config_module("ccbench_conf", version_base="1.3"):
        for experiment in experiments:
            master = compose("config", overrides=[f"experiment={experiment}"], return_hydra_config=True)
            params = {o.key_or_group: (list(o.sweep_string_iterator()) if o.is_sweep_override()
                                       else [o.get_value_element_as_str()])
                      for o in parser.parse_overrides([f"{k}={v}" for k, v in master.hydra.sweeper.params.items()])}
            params.update((replace or {}).get(experiment, {}))
            named = suites()
            datasets = list(dict.fromkeys(m for d in params["dataset"] for m in named.get(d, (d,))))
            seeds = [int(s) for s in params.get("seed", [master.seed])]
            supervisions = {s: to_cell(compose("config", overrides=[f"experiment={experiment}", f"supervision={s}",
                                                                    f"dataset={datasets[0]}"]))
                            for s in params["supervision"]}
            methods = {m: to_cell(compose("config", overrides=[f"experiment={experiment}", f"method={m}",
                                                               f"dataset={datasets[0]}"]))["method"]
                       for m in params["method"]}
            if "method.n_clusters" in params:  # a k-free grid (method.n_clusters=free) sets it on every method
                (k_value,) = params["method.n_clusters"]  # one value: a list would be another grid axis
                for method in methods.values():
                    method["n_clusters"] = k_value
            budgets = {}
            for d in datasets:  # the job's own interpolation of trial_timeout / time_budget for this data set
                cfg = copy.deepcopy(master)
                cfg.dataset.name = d
                budgets[d] = (float(OmegaConf.select(cfg, "trial_timeout")), float(OmegaConf.select(cfg, "time_budget")))
            for seed in seeds:
                for d in datasets:
                    spec = registry.get_dataset_spec(d)
                    for s, cell in supervisions.items():
                        for m, method in methods.items():
                            rows.append({"experiment": experiment, "seed": seed, "dataset": d, "n": spec.n_samples,
                                         "d": spec.n_features, "classes": spec.n_classes, "supervision": s,
                                         "constraints": cell["constraints"], "noise": cell["noise"]["name"],
                                         "tune": cell.get("tune", "none"), "tune_folds": int(cell.get("tune_folds", 3)),
                                         "method": m, "method_name": method["name"],
                                         "method_params": {k: v for k, v in method.items()
                                                           if k not in ("name", "n_clusters")},
                                         "n_clusters": method.get("n_clusters"), "trials": int(cell["n_trials"]),
                                         "stops_seeds": bool(cell.get("timeout_stops_seeds")),
                                         "budget": budgets[d][0], "time_budget": budgets[d][1]})
    return pd.DataFrame(rows)


def _k_given(spec, value, classes: int):
    if not (spec.needs_n_clusters or spec.accepts_n_clusters):
        return None
    if value is None or (isinstance(value, float) and math.isnan(value)):  # not set (NaN in a frame)
        return classes if spec.needs_n_clusters else None
    if value == "true_k":
        return classes
    if value == "free":
        return None
    return int(value)


def project(grid: pd.DataFrame, models, available_bytes: float, speedups: dict | None = None) -> pd.DataFrame:
    """The grid with ``p``, ``k``, ``size_class``, ``track``, ``refused`` (and why), ``predicted`` and ``cpu_s``;
    ``speedups`` ({registered method: factor}) divides that method's predicted CPU per trial (a code change measured
    elsewhere, whose rows do not exist yet), before the budget decides fit or time-out."""
    from ccbench import registry
    from ccbench.constraints import Constraints
    from ccbench.running import protocol, time_models

    specs = {m: registry.get_method_spec(m) for m in grid["method_name"].unique()}
    g = grid.copy()
    g["k"] = pd.array([_k_given(specs[m], v, c) for m, v, c in zip(g["method_name"], g["n_clusters"], g["classes"])],
                      dtype="Int64")
    g["p"] = [supervision_pairs(c, n, k) for c, n, k in zip(g["constraints"], g["n"], g["classes"])]
    g["size_class"] = g["n"].map(size_class)
    g["track"] = np.select([g["experiment"].str.endswith("k_free"), g["experiment"].str.endswith("k_free_cvcp")],
                           ["k-free", "k-free CVCP"], g["supervision"].map(TRACKS).fillna("other"))
    # a tuned cell (the k-free CVCP track: CVCP over 2..sqrt(n)) costs its fits, as the harness charges it
    tune = g["tune"] if "tune" in g else pd.Series("none", index=g.index)
    folds = g["tune_folds"] if "tune_folds" in g else pd.Series(3, index=g.index)
    g["fits"] = [protocol.tuning_fits(specs[m], params, t, int(f), None if pd.isna(k) else int(k), int(n))
                 for m, params, t, f, k, n in zip(g["method_name"], g["method_params"], tune, folds, g["k"], g["n"])]
    empty = Constraints.empty(2)
    # a tuned cell fits its own grid: never the one shared unsupervised fit
    g["shared"] = [t == "none" and (protocol.fit_is_unsupervised(specs[m], empty) if p == 0 and c["name"] == "none"
                                    else not specs[m].supervision)
                   for m, p, c, t in zip(g["method_name"], g["p"], g["constraints"], tune)]
    cells = pd.DataFrame({"method": g["method_name"], "n": g["n"], "d": g["d"], "p": g["p"],
                          "k": g["k"].astype("Float64").to_numpy(float, na_value=np.nan), "fits": g["fits"]})
    g["predicted"] = time_models.predict_cells(cells, models).to_numpy()
    g["provisional"] = False
    for method, (seconds, n_max) in PROVISIONAL.items():
        use = (g["method_name"] == method) & g["predicted"].isna() & (g["n"] <= n_max)
        g.loc[use, ["predicted", "provisional"]] = seconds, True
    for method, factor in (speedups or {}).items():
        g.loc[g["method_name"] == method, "predicted"] /= factor
    return priced(g, available_bytes)


def _speedup(text: str) -> tuple[str, float]:
    method, sep, factor = text.partition("=")
    try:
        value = float(factor)
    except ValueError:
        value = float("nan")
    if not sep or not method or not value > 0:
        raise argparse.ArgumentTypeError(f"--speedup takes METHOD=FACTOR with FACTOR > 0 (e.g. srcp=3.0), got {text!r}")
    return method, value


def priced(g: pd.DataFrame, available_bytes: float) -> pd.DataFrame:
    """``g`` with ``refusal`` (the harness's size_refusal at each cell's ``time_budget``: ``TimeModel`` or
    ``MemoryModel``), ``refused``, ``cpu_s`` (:func:`cell_costs`) and ``status`` from its ``budget``,
    ``time_budget`` and ``trials`` columns."""
    from ccbench import registry
    from ccbench.running import protocol

    g = g.copy()
    specs = {m: registry.get_method_spec(m) for m in g["method_name"].unique()}
    k = [None if pd.isna(v) else int(v) for v in g["k"]]
    fits = g["fits"] if "fits" in g else pd.Series(1, index=g.index)
    keys = list(zip(g["method"], g["n"], g["d"], g["p"], k, g["time_budget"], fits))
    refusals = {}  # one check per distinct (method config, n, d, p, k, budget): seeds and data sets repeat them
    for key, r in zip(keys, g.itertuples()):
        if key not in refusals:
            reason = protocol.size_refusal(specs[r.method_name], r.method_params, int(r.n), int(r.d),
                                           available=available_bytes, time_budget=r.time_budget, fits=int(key[6]),
                                           n_pairs=int(r.p), n_clusters=key[4])
            refusals[key] = None if reason is None else reason.split(":", 1)[0]
    g["refusal"] = [refusals[key] for key in keys]
    g["refused"] = g["refusal"].notna()
    g["cpu_s"] = cell_costs(g).to_numpy()  # g["method"]: the method config (ap_k and ap are two groups)
    g["status"] = np.select([g["refused"], g["predicted"].isna(), g["predicted"] > g["budget"]],
                            ["refused", "unmodelled", "timeout"], "fits")
    return g


#: the design before the cuts: every track on all 71 sets with 3 seeds x 3 trials, every noise level everywhere,
#: trial_timeout = time_budget = 10 / 30 / 60 s per size class
UNCUT = {"experiments": ("board", "board_noise", "board_pccc", "board_k_free"),
         "replace": {e: {"seed": ["0", "1", "2"], "dataset": ["board_all"]} for e in
                     ("board", "board_noise", "board_pccc", "board_k_free")},
         "trials": 3, "budget": {SIZE_CLASSES[0]: 10.0, SIZE_CLASSES[1]: 30.0, SIZE_CLASSES[2]: 60.0}}


def _with_budget(g, budget: dict, third: bool) -> pd.DataFrame:
    g = g.assign(budget=g["size_class"].map(budget))
    return g.assign(time_budget=g["budget"] / 3 if third else g["budget"])


def cut_ladder(uncut: pd.DataFrame, available_bytes: float) -> list[tuple[str, pd.DataFrame]]:
    """The uncut design (:data:`UNCUT`, already enriched by :func:`project`'s columns) and the cuts applied one
    after another, each priced: (label, frame). The last is the committed design."""
    side = uncut["track"].isin(["noise", "PCCC scheme", "k-free"])
    g = uncut.assign(trials=UNCUT["trials"], stops_seeds=False)
    steps = [("uncut: every track, 71 sets, S = 3, T = 3, budget 10/30/60 s", _with_budget(g, UNCUT["budget"], False))]
    g = g[~side | (g["seed"] == 0)]
    steps.append(("noise, PCCC scheme and k-free at one base seed (seed 0)", _with_budget(g, UNCUT["budget"], False)))
    budget = {SIZE_CLASSES[0]: 10.0, SIZE_CLASSES[1]: 20.0, SIZE_CLASSES[2]: 30.0}
    steps.append(("budget 10/20/30 s per size class", _with_budget(g, budget, False)))
    # refusing at the budget itself (time_budget = budget / 3) would save more, but issue 50 refuses only far
    # beyond it (a refusal is a prediction); the committed design keeps time_budget = trial_timeout
    g = g.assign(trials=2)
    steps.append(("T = 2 trials per cell", _with_budget(g, budget, False)))
    large = g["size_class"] == SIZE_CLASSES[2]
    g = g[~(large & g["supervision"].isin(["pairs_mid_flip05", "labels_noisy05"]))]
    steps.append(("n > 5,000: the 5 % noise levels dropped", _with_budget(g, budget, False)))
    g = g[~((g["size_class"] == SIZE_CLASSES[2]) & (g["track"] == "PCCC scheme"))]
    steps.append(("PCCC's scheme on n <= 5,000 only", _with_budget(g, budget, False)))
    # the power analysis: a base seed is just more trials, and data sets, not draws per cell, buy power
    g = g.assign(trials=1)
    steps.append(("T = 1 trial per cell (S = 3 on the curves: 3 draws per cell)", _with_budget(g, budget, False)))
    g = g.assign(stops_seeds=True)
    steps.append(("a timeout at one base seed stops the cell's other seeds", _with_budget(g, budget, False)))
    return [(label, priced(frame, available_bytes)) for label, frame in steps]


def tables(g: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Core-hours per track x size class, cell statuses, and the refused cells per method and size class."""
    hours = g.pivot_table(index="track", columns="size_class", values="cpu_s", aggfunc="sum", fill_value=0) / 3600
    hours = hours.reindex(columns=[c for c in SIZE_CLASSES if c in hours.columns])
    hours["all"] = hours.sum(axis=1)
    hours.loc["all"] = hours.sum()
    status = g.pivot_table(index="size_class", columns="status", values="seed", aggfunc="count", fill_value=0)
    refused = g[g["refused"]].pivot_table(index="method", columns="size_class", values="seed", aggfunc="count",
                                          fill_value=0)
    timeouts = g[g["status"] == "timeout"].pivot_table(index="method", columns="size_class", values="seed",
                                                       aggfunc="count", fill_value=0)
    return {"hours": hours, "status": status, "refused": refused, "timeouts": timeouts}


def per_set(g: pd.DataFrame) -> pd.DataFrame:
    """Per (experiment, data set): the projected core-hours of trials (``cpu_h``) and its cells (``cells``)."""
    return g.groupby(["experiment", "dataset"]).agg(cpu_h=("cpu_s", lambda s: s.sum() / 3600),
                                                    cells=("cpu_s", "size"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", default=[str(ROOT / "reports" / "leaderboard")],
                        help="rows the time models are calibrated on (rows .parquet files, shipped folders or sweep "
                             "folders; several are read together, e.g. the board and a pilot)")
    parser.add_argument("--experiment", action="append", help=f"experiments to project (default: {', '.join(EXPERIMENTS)})")
    parser.add_argument("--memory-gib", type=float, default=None, help="memory available to a trial (default: this "
                                                                       "machine's available memory now)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--cuts", action="store_true", help="also project the uncut design and each cut in turn")
    parser.add_argument("--speedup", type=_speedup, action="append", default=[], metavar="METHOD=FACTOR",
                        help="divide a registered method's predicted CPU by FACTOR (a speed-up measured on code whose "
                             "rows do not exist yet), e.g. --speedup srcp=3.0; repeatable")
    parser.add_argument("--per-set", type=Path, metavar="CSV",
                        help="also write the projection per experiment and data set (core-hours, cells): what "
                             "leaderboard_costs.py --projection sets the measured rows beside")
    args = parser.parse_args(argv)
    speedups = dict(args.speedup)
    from ccbench import registry

    for method in speedups:
        try:
            registry.get_method_spec(method)
        except registry.UnknownNameError as exc:
            parser.error(f"--speedup {method}=...: {exc}")
    from ccbench.base import available_memory
    from ccbench.running import time_models

    available = args.memory_gib * 2**30 if args.memory_gib else available_memory()
    rows = pd.concat([time_models.read_rows(p) for p in args.rows], ignore_index=True)
    models = time_models.calibrate(time_models.cell_times(rows))
    g = project(_compose_grid(args.experiment or EXPERIMENTS), models, available, speedups)
    t = tables(g)
    if args.per_set:
        per_set(g).to_csv(args.per_set)
    pd.set_option("display.width", 200)
    print(f"PROJECTED (calibrated time models from {', '.join(args.rows)}; memory available {available / 2**30:.1f} GiB); "
          f"a prediction, not a measurement")
    for method, (seconds, n_max) in PROVISIONAL.items():
        if g.loc[g["method_name"] == method, "provisional"].any():  # only where its rows left it unmodelled
            print(f"provisional (no rows): {method} at {seconds:g} s a trial for n <= {n_max:,}")
    if speedups:
        print("speed-ups applied to the predictions (measured elsewhere, not in these rows): "
              + ", ".join(f"{m} / {f:g}" for m, f in speedups.items()))
    print(f"cells {len(g):,} (method x data set x supervision x seed), trials {int(g['trials'].sum()):,}")
    print("\nprojected core-hours per track and size class:")
    print(t["hours"].round(2).to_string())
    total = t["hours"].loc["all", "all"]
    print(f"\nprojected total {total:.2f} core-hours against the issue's {ISSUE_BUDGET_CORE_HOURS:g} "
          f"({total / ISSUE_BUDGET_CORE_HOURS:.2f} x); wall on {args.cores} cores at least {total / args.cores:.1f} h")
    jobs = len(g)  # one job per cell (method x data set x supervision x seed)
    print(f"jobs {jobs:,}: beyond the trials, at the measured {JOB_OVERHEAD_S:.2f} s of CPU a job (composition, data, rows; "
          f"tests/benchmarks/job_overhead.py), about {jobs * JOB_OVERHEAD_S / 3600:.1f} core-hours more of CPU (not trials: outside the "
          f"issue's count)")
    print("\nprojected cell statuses per size class:")
    print(t["status"].to_string())
    print("\nrefused cells per method and size class (cost 0):")
    print(t["refused"].to_string() if len(t["refused"]) else "none")
    print("\ncells predicted to time out per method and size class (charged one killed trial):")
    print(t["timeouts"].to_string() if len(t["timeouts"]) else "none")
    unmodelled = sorted(g.loc[g["status"] == "unmodelled", "method_name"].unique())
    if unmodelled:
        print(f"\nno calibrated model (charged T x budget per cell, an upper bound): {', '.join(unmodelled)}; "
              f"{g.loc[g['status'] == 'unmodelled', 'cpu_s'].sum() / 3600:.2f} core-hours of the total")
    if args.cuts:
        uncut = project(_compose_grid(UNCUT["experiments"], UNCUT["replace"]), models, available, speedups)
        print("\nthe cuts, in turn (projected core-hours: total, per size class; saving of each cut):")
        before = None
        for label, frame in cut_ladder(uncut, available):
            total = frame["cpu_s"].sum() / 3600
            per = frame.groupby("size_class")["cpu_s"].sum().reindex(list(SIZE_CLASSES), fill_value=0) / 3600
            saving = "" if before is None else f"  (saves {before - total:.2f})"
            print(f"  {label}: {total:.2f} [{', '.join(f'{v:.2f}' for v in per)}]{saving}")
            before = total
    top = g.groupby(["method", "size_class"])["cpu_s"].sum().sort_values(ascending=False).head(12) / 3600
    print("\nlargest projected costs (core-hours, method config x size class):")
    print(top.round(2).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
