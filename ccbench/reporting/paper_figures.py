"""Figures a paper draws from what a method *learns*, not from its scores: drawn by ``ccbench report``
by refitting one recorded trial through the public estimator API.

An experiment asks for them in its ``paper`` block (so they travel in every job's ``cell.json``)::

    paper:
      figures:
        - kind: distance_matrices      # the SRCP paper's Fig. 4 (the only kind so far)
          file: fig4_distance_matrices # PNG name in the report folder (letters, digits, _ . -)
          title: "..."                 # optional
          attribute: embedding_        # the fitted attribute to draw: one row per point
          methods: [ncuts, srcp]       # method labels of the rows, one panel each, in this order
          x: 2400                      # the rows' x value (the report's x axis) to refit
          trial: 0                     # which trial (default 0)

Why refit rather than store: rows hold scores, not n x n matrices (26 MB per trial of 1,797 points), and
a trial is deterministic: its supervision is re-drawn from ``trial_seed`` and the cell's constraints and
noise, the estimator rebuilt from the cell's method group with the trial's ``random_state``, exactly as
the harness did (:mod:`ccbench.running.protocol`). The report checks that it rebuilt *that* fit: the
re-drawn constraints must hash to the row's ``constraints_hash`` (else it refuses), and the refit's
labels are scored again and put beside the row's scores (a difference, e.g. another BLAS, is printed
and warned about, never hidden).

``distance_matrices``: the Euclidean distances between the rows of the learned representation (for the
spectral family ``embedding_``, the row-normalised spectral embedding k-means clusters: the paper's "low-
dimensional representations generated during spectral clustering"), points ordered by true class, dark
= near. Two numbers per panel say how block-like it is, so the comparison with the paper is checked,
not eyeballed: ``within / between`` (mean distance of same-class pairs over that of different-class
pairs; lower is more block-like) and ``block AUC`` (the probability that a random same-class pair is
nearer than a random different-class pair; 1 = perfect blocks, 0.5 = no structure).

A ``cell.json`` may come from anyone: only registered methods are fitted, only data sets
:func:`ccbench.running.protocol.report_redraw_refusal` allows are loaded, the attribute must be a public
fitted attribute name (``name_``), and the file name cannot leave the output folder. Its method parameters
are checked by name (:func:`ccbench.registry.make_method` refuses one the estimator does not take) and the
refit is *bounded*: its fit runs in a worker process (:class:`ccbench.isolation.IsolatedRunner`) killed after
:func:`refit_cpu_limit` seconds of CPU (a k-means with ``n_init = 10**7`` in a stranger's ``cell.json`` ran
for minutes inside the report). The choice: validating each value is impossible in general (a spec does not
declare ranges, and ``n_init = 10**7`` is a valid int), so the parameters are checked by name and the cost is
bounded by time, whatever they are. A refit stopped at the limit is an error naming the method, its
parameters, the limit and the ways out (``--no-figures``, ``CCBENCH_REFIT_TIMEOUT``).
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ._format import clean_text, fmt, md_plain, md_text
from ._safe import output_dir, save_figure

__all__ = ["figure_requests", "figure_panels", "refit_trial", "bounded_fit", "refit_cpu_limit", "distance_matrix",
           "block_scores", "write_paper_figures", "MAX_FIGURE_POINTS", "REFIT_CPU_SECONDS"]

KINDS = ("distance_matrices",)
_KEYS = {"kind", "file", "title", "attribute", "methods", "x", "trial"}
_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,80}$")
_ATTRIBUTE = re.compile(r"^[a-z][a-z0-9_]{0,60}_$")  # scikit-learn's fitted-attribute convention
#: An n x n float64 matrix per panel: 5,000 points is 200 MB each; larger sets are refused.
MAX_FIGURE_POINTS = 5000
#: The most CPU seconds one refit may use (environment ``CCBENCH_REFIT_TIMEOUT`` overrides it).
REFIT_CPU_SECONDS = 120.0
REFIT_TIMEOUT_ENV = "CCBENCH_REFIT_TIMEOUT"
#: A refit redoes the row's fit, so it may use ``REFIT_SLACK_SECONDS + REFIT_FACTOR x`` the row's
#: ``fit_cpu_time`` (another machine, a busy one), never more than the ceiling above: a row's time is
#: self-attested, so it can only lower the limit.
REFIT_FACTOR = 3.0
REFIT_SLACK_SECONDS = 10.0
_runner = None


def figure_requests(paper: dict | None) -> list[dict]:
    """The ``figures`` entries of a ``paper`` block, checked; ValueError naming the entry and the fix."""
    figures = (paper or {}).get("figures")
    if figures is None:
        return []
    if not isinstance(figures, list):
        raise ValueError(f"paper.figures must be a list of figure requests, got {figures!r}")
    out = []
    for i, req in enumerate(figures):
        where = f"paper.figures[{i}]"
        if not isinstance(req, dict):
            raise ValueError(f"{where} must be a mapping (kind, file, attribute, methods, x, trial), got {req!r}")
        unknown = set(req) - _KEYS
        if unknown:
            raise ValueError(f"{where} has unknown key(s) {sorted(unknown)}; the keys are {sorted(_KEYS)}")
        if req.get("kind") not in KINDS:
            raise ValueError(f"{where}.kind is {req.get('kind')!r}; the kinds a report draws are {list(KINDS)}")
        if not isinstance(req.get("file"), str) or not _FILE.match(req["file"]):
            raise ValueError(f"{where}.file is {req.get('file')!r}: give a plain file name (letters, digits, _ . -), "
                             f"no folder; the report adds .png")
        attribute = req.get("attribute", "embedding_")
        if not isinstance(attribute, str) or not _ATTRIBUTE.match(attribute):
            raise ValueError(f"{where}.attribute is {attribute!r}: name a public fitted attribute such as "
                             f"embedding_ (lower case, ending in _)")
        methods = req.get("methods")
        if not isinstance(methods, list) or not methods or not all(isinstance(m, str) for m in methods):
            raise ValueError(f"{where}.methods must be a non-empty list of method labels, got {methods!r}")
        x, trial = req.get("x"), req.get("trial", 0)
        if isinstance(x, bool) or not isinstance(x, (int, float, str)):
            raise ValueError(f"{where}.x must be the x value of the rows to refit, got {x!r}")
        if isinstance(trial, bool) or not isinstance(trial, int) or trial < 0:
            raise ValueError(f"{where}.trial must be a trial number >= 0, got {trial!r}")
        out.append({**req, "attribute": attribute, "trial": trial, "title": clean_text(req.get("title", ""))})
    return out


def _row_for(data: pd.DataFrame, label: str, x: str, value, trial: int) -> pd.Series:
    """The one ok row of method label ``label`` at ``x == value`` and ``trial``; ValueError naming what exists."""
    rows = data[data["method_label"] == label]
    if rows.empty:
        raise ValueError(f"paper figure: no rows of method {label!r}; labels here: {sorted(data['method_label'].unique())}")
    if x not in rows:
        raise ValueError(f"paper figure: the rows have no column {x!r} (the report's x axis)")
    at = rows[rows[x].map(fmt) == fmt(value)] if isinstance(value, str) else rows[pd.to_numeric(rows[x], errors="coerce") == float(value)]
    at = at[at["trial"] == trial]
    if at.empty:
        raise ValueError(f"paper figure: no row of {label!r} at {x}={fmt(value)}, trial {trial}; its {x} values: "
                         f"{sorted(rows[x].dropna().unique().tolist())}, trials {sorted(rows['trial'].unique().tolist())}")
    if len(at) > 1:
        raise ValueError(f"paper figure: {len(at)} rows of {label!r} at {x}={fmt(value)}, trial {trial} (from "
                         f"{', '.join(sorted(map(str, at['source'].unique())))}); report one sweep's cells, or give "
                         f"the setting in the method label")
    row = at.iloc[0]
    if row.get("status") != "ok":
        raise ValueError(f"paper figure: the row of {label!r} at {x}={fmt(value)}, trial {trial} has status "
                         f"{row.get('status')!r}, no fit to draw; choose another trial")
    return row


def refit_trial(cell: dict, trial_seed: int, limit: float | None = None):
    """Rebuild and fit the estimator of one trial of ``cell`` (a job's ``cell.json``) as the harness did.

    Returns ``(estimator, dataset, constraints)``. Refuses (ValueError) a data set a report must not load,
    a method not registered here, a parameter its estimator does not take, a tuned cell (its grid choice is
    not recorded) and sets above :data:`MAX_FIGURE_POINTS` points. Everything but the fit runs here; the fit
    runs in a worker process stopped after ``limit`` seconds of CPU (default: :func:`refit_cpu_limit`'s
    ceiling), so a stranger's parameters cannot hold the report (:func:`bounded_fit`). A parameter the
    estimator does not take is refused by name (:func:`ccbench.registry.make_method`'s TypeError).
    """
    from .. import registry
    from ..datasets import load_dataset
    from ..running import protocol

    refusal = protocol.report_redraw_refusal(cell.get("dataset"))
    if refusal:
        raise ValueError(f"paper figure: {refusal}")
    if cell.get("tune", "none") != "none":
        raise ValueError(f"paper figure: the cell is tuned (tune={cell['tune']!r}); a refit cannot know the grid "
                         f"point the tuner chose; draw an untuned cell")
    spec = registry.get_method_spec(str(cell["method"]["name"]))
    params = {k: v for k, v in protocol.group_params(cell["method"]).items() if k != "n_clusters"}
    ds = load_dataset(cell["dataset"]["name"], **protocol.report_safe_dataset_params(cell["dataset"]))
    if ds.n_samples > MAX_FIGURE_POINTS:
        raise ValueError(f"paper figure: {ds.name} has {ds.n_samples} points; a distance matrix figure is drawn "
                         f"up to {MAX_FIGURE_POINTS} (n x n floats per panel)")
    rng, method_seed = protocol.trial_streams(int(trial_seed))
    cons, _ = protocol.draw_supervision(ds.y, cell["constraints"], cell["noise"], rng)
    if cell.get("share_unsupervised_fits") and protocol.fit_is_unsupervised(spec, cons):
        raise ValueError("paper figure: the cell shares unsupervised fits (share_unsupervised_fits=true), "
                         "seeded per data set; run the figure's cells without it")
    k = protocol.resolve_n_clusters(cell["method"].get("n_clusters"), spec=spec, n_classes=ds.n_classes,
                                    X=ds.X, constraints=cons, random_state=method_seed)
    est = protocol.build_estimator(spec, params, method_seed, n_clusters=k)
    est = bounded_fit(est, ds.X, cons, refit_cpu_limit() if limit is None else float(limit), spec.name)
    return est, ds, cons


def refit_cpu_limit(row=None) -> float:
    """CPU seconds a refit of ``row``'s trial may use: ``min(ceiling, REFIT_SLACK_SECONDS + REFIT_FACTOR x
    fit_cpu_time)`` with the row's ``fit_cpu_time`` when it is a number >= 0, else the ceiling; the ceiling
    is ``CCBENCH_REFIT_TIMEOUT`` when set, else :data:`REFIT_CPU_SECONDS`."""
    import os

    text = os.environ.get(REFIT_TIMEOUT_ENV, "").strip()
    try:
        ceiling = float(text) if text else float(REFIT_CPU_SECONDS)
    except ValueError:
        raise ValueError(f"{REFIT_TIMEOUT_ENV}={text!r} is not a number of seconds; set e.g. "
                         f"{REFIT_TIMEOUT_ENV}=300") from None
    if not ceiling > 0:
        raise ValueError(f"{REFIT_TIMEOUT_ENV}={text!r}: give a positive number of seconds")
    recorded = pd.to_numeric(pd.Series([None if row is None else row.get("fit_cpu_time")]), errors="coerce")[0]
    if pd.notna(recorded) and recorded >= 0:
        return min(ceiling, REFIT_SLACK_SECONDS + REFIT_FACTOR * float(recorded))
    return ceiling


def _fit(est, X, cons):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the harness recorded the fit's warnings in the row already
        return est.fit(X, constraints=cons)


def _import(module: str) -> None:
    import importlib

    importlib.import_module(module)


def bounded_fit(est, X, cons, limit: float, method: str = ""):
    """``est.fit(X, constraints=cons)`` in a worker process killed after ``limit`` seconds of CPU; the fitted
    estimator comes back. A fit stopped so, or a worker that died, is a ValueError naming the method, its
    parameters, the limit and the ways out. One worker serves the process's refits (started on first use);
    it imports only the estimator's module (no registry, no data), outside the limit: the limit is the fit's,
    like the row's ``fit_cpu_time``."""
    global _runner
    from ..isolation import IsolatedRunner, TrialTimeout, WorkerDied

    if _runner is None:
        _runner = IsolatedRunner()
    try:
        _runner.call(_import, type(est).__module__, timeout=None)
        return _runner.call(_fit, est, X, cons, timeout=float(limit))
    except (TrialTimeout, WorkerDied) as exc:
        params = json.dumps(est.get_params(deep=False) if hasattr(est, "get_params") else vars(est), default=str)
        raise ValueError(f"paper figure: the refit of method {clean_text(method)!r} with parameters "
                         f"{clean_text(params)[:300]} was stopped ({exc}); a report bounds a refit to {limit:g} s "
                         f"of CPU ({REFIT_FACTOR:g} x the row's fit_cpu_time + {REFIT_SLACK_SECONDS:g} s, at most "
                         f"{REFIT_TIMEOUT_ENV} or {REFIT_CPU_SECONDS:g} s): check the cell.json's parameters, raise "
                         f"{REFIT_TIMEOUT_ENV} if you trust them, or pass --no-figures") from None


def distance_matrix(representation, y) -> tuple[np.ndarray, np.ndarray]:
    """Euclidean distances between the rows of ``representation``, points ordered by class ``y``
    (stable: within a class in data order). Returns ``(D, order)``."""
    from scipy.spatial.distance import cdist

    R = np.asarray(representation.toarray() if hasattr(representation, "toarray") else representation, dtype=float)
    R = R.reshape(len(R), -1)
    order = np.argsort(np.asarray(y), kind="stable")
    R = R[order]
    return cdist(R, R), order


def block_scores(D: np.ndarray, y_sorted) -> dict:
    """How block-like a class-ordered distance matrix is: ``within_between`` (mean same-class distance
    over mean different-class distance) and ``block_auc`` (Mann-Whitney: the probability that a random
    same-class pair is nearer than a random different-class pair, ties counting half); over pairs i < j."""
    from scipy.stats import rankdata

    y_sorted = np.asarray(y_sorted)
    i, j = np.triu_indices(len(y_sorted), k=1)
    d, same = D[i, j], y_sorted[i] == y_sorted[j]
    n_same, n_diff = int(same.sum()), int((~same).sum())
    if n_same == 0 or n_diff == 0:
        return {"within_between": float("nan"), "block_auc": float("nan")}
    ranks = rankdata(d)  # rank 1 = nearest
    u = ranks[~same].sum() - n_diff * (n_diff + 1) / 2  # different-class pairs ranked above same-class ones
    between = d[~same].mean()
    return {"within_between": float(d[same].mean() / between) if between > 0 else float("nan"),
            "block_auc": float(u / (n_same * n_diff))}


def _rescore(row: pd.Series, labels, ds, cons) -> dict:
    """{metric: (row's value, refit's value)} for the row's metrics, scored as the harness scores them
    (label metrics on every point: only rows with ``evaluate_on=all`` are compared)."""
    from .. import registry

    if isinstance(row.get("evaluate_on"), str) and row["evaluate_on"] != "all":
        return {}
    names = json.loads(row["metrics"]) if isinstance(row.get("metrics"), str) else []
    out = {}
    for name in names:
        try:
            spec = registry.get_metric_spec(name)
        except Exception:  # noqa: BLE001 - a plugin's metric not loaded here: nothing to compare
            continue
        if name not in row or pd.isna(row[name]) or spec.needs_features:
            continue
        value = spec.func(ds.y, labels, constraints=cons) if spec.needs_constraints else spec.func(ds.y, labels)
        out[name] = (float(row[name]), float(value))
    return out


def figure_panels(data: pd.DataFrame, request: dict, x: str) -> tuple[list[dict], object]:
    """One panel per method of a checked ``distance_matrices`` request (:func:`figure_requests`): the refit's
    class-ordered distance matrix ``D``, ``y_sorted``, the block scores, the row's and the refit's scores
    (``rescored``: {metric: (row, refit)}) and ``reproduced`` (every score equal to 1e-9). Returns
    ``(panels, dataset)``."""
    from ..running.config import CELL_FILE
    from ..running.protocol import constraints_hash
    from .summary import read_cell

    panels, ds = [], None
    for label in request["methods"]:
        row = _row_for(data, label, x, request["x"], request["trial"])
        cell = read_cell(Path(str(row["source"])) / CELL_FILE)
        if not cell:
            raise ValueError(f"paper figure: {row['source']} has no {CELL_FILE}; re-run its sweep command, which writes it")
        est, ds, cons = refit_trial(cell, int(row["trial_seed"]), limit=refit_cpu_limit(row))
        recorded = row.get("constraints_hash")
        if isinstance(recorded, str) and constraints_hash(cons) != recorded:
            raise ValueError(f"paper figure: the constraints re-drawn for {label!r} (trial {request['trial']}) are "
                             f"not the row's (constraints_hash differs): the cell's constraint scheme or data "
                             f"changed since the sweep; re-run it")
        learned = getattr(est, request["attribute"], None)
        if learned is None or getattr(learned, "shape", (0,))[0] != ds.n_samples:
            raise ValueError(f"paper figure: {label!r} ({type(est).__name__}) has no fitted attribute "
                             f"{request['attribute']!r} with one row per point; name one it has")
        D, order = distance_matrix(learned, ds.y)
        rescored = _rescore(row, np.asarray(est.labels_), ds, cons)
        reproduced = all(np.isclose(a, b, rtol=0, atol=1e-9) for a, b in rescored.values())
        if not reproduced:
            warnings.warn(f"paper figure {request['file']}: the refit of {label!r} scores "
                          f"{', '.join(f'{m} {b:.4f} (row {a:.4f})' for m, (a, b) in rescored.items())}: the "
                          f"panel is of a refit that differs from the recorded fit", stacklevel=2)
        panels.append({"label": clean_text(label), "D": D, "y_sorted": ds.y[order], "rescored": rescored,
                       "reproduced": reproduced, **block_scores(D, ds.y[order])})
    return panels, ds


def _draw(panels: list[dict], title: str, classes):
    from matplotlib.figure import Figure

    n = len(panels)
    fig = Figure(figsize=(3.4 * n, 4.0))
    axes = fig.subplots(1, n, squeeze=False)[0]
    for ax, p in zip(axes, panels):
        D = p["D"]
        # antialiased: thousands of points drawn on a few hundred pixels average, not alias
        ax.imshow(D, cmap="gray", interpolation="antialiased", vmin=0.0, vmax=float(D.max()) or 1.0)
        edges = np.flatnonzero(np.diff(p["y_sorted"])) + 0.5
        centres = (np.r_[-0.5, edges] + np.r_[edges, len(D) - 0.5]) / 2
        ax.set_xticks(centres, [str(c) for c in classes], fontsize=6)
        ax.set_yticks(centres, [str(c) for c in classes], fontsize=6)
        ax.tick_params(length=0)
        ax.set_title(f"{p['label']}\nAUC {p['block_auc']:.3f}, within/between {p['within_between']:.2f}", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def write_paper_figures(data: pd.DataFrame, out_dir, paper: dict | None, x: str) -> tuple[str, dict]:
    """Draw every figure ``paper["figures"]`` asks for into ``out_dir``; return ``(markdown, paths)``.

    The markdown (a section per figure: what was refitted, each panel's block scores, the row's scores
    and whether the refit reproduced them) goes into ``summary.md`` (``write_report(sections=...)``);
    ``paths`` maps ``fig_<file>`` to each PNG. Empty markdown when nothing is asked for.
    """
    from .summary import plain_text

    parts, paths = [], {}
    for req in figure_requests(paper):
        out = output_dir(out_dir)
        panels, ds = figure_panels(data, req, x)
        classes = (ds.meta or {}).get("classes") or list(range(ds.n_classes))
        with plain_text():
            fig = _draw(panels, req["title"], classes)
            path = save_figure(fig, out / f"{req['file']}.png", out, dpi=150)
        paths[f"fig_{req['file']}"] = path
        rows = []
        for p in panels:
            scores = ", ".join(f"{m} {a:.3f}" + ("" if p["reproduced"] else f" (refit {b:.3f})")
                               for m, (a, b) in p["rescored"].items())
            rows.append(f"| {md_plain(p['label'])} | {p['block_auc']:.3f} | {p['within_between']:.3f} | "
                        f"{md_text(scores)} | {'yes' if p['reproduced'] else 'no (see the warning)'} |")
        title = f"{md_plain(req['title'])}\n\n" if req["title"] else ""
        parts.append(
            f"## Paper figure: {md_plain(req['file'])}\n\n{title}"
            f"Each panel: Euclidean distances between the rows of the fitted `{md_text(req['attribute'])}` of one "
            f"method, refitted by `ccbench report` on trial {req['trial']} at `{md_text(x)}` = "
            f"{md_text(fmt(req['x']))} (the row's constraints, checked by their hash, and its random_state); "
            f"points ordered by true class, dark = near. Block AUC: the probability that a same-class pair is "
            f"nearer than a different-class pair (1 = perfect blocks, 0.5 = none); within / between: mean "
            f"same-class over mean different-class distance (lower = more block-like).\n\n"
            f"| method | block AUC | within / between | row's scores | refit reproduces the row |\n"
            f"|---|---|---|---|---|\n" + "\n".join(rows) + f"\n\n![{md_plain(req['file'])}]({path.name})\n")
    return "\n".join(parts), paths
