"""The leaderboard's headline (issue 50): paired effect sizes over data sets, against plain k-means and
against the kind's best method, under both failure conventions, with and without the flagged data sets.

Definitions (each is stated on the pages and in docs/leaderboard.md):

- A trial's **score** is its metric when ``ok``; a *measured* failure (:data:`~._frame.MEASURED_FAILURES`,
  or a status in neither list) scores the value of the one-cluster partition (:data:`FAILURE_SCORE`: 0
  for ARI and NMI: a single cluster shares no information with the classes). A trial that is no
  measurement (:data:`~._frame.NOT_MEASURED`: refused by a prediction, a skipped draw) makes its
  (cell, method) **missing** under the ``missing`` convention and scores as a failure under ``last``.
  An ``ok`` trial with no metric value makes the cell missing under both.
- A method's **cell score** is the mean of its trials' scores in the cell (missing as above), per base seed.
- The **unit** compared: where a kind has curves (a data set, setting, noise and seed followed over two
  budgets or more), each curve's area under the cell scores over log budget, divided by its range
  (:func:`~.pooling.curve_scores`; issue 51, item 2); else each cell. :func:`per_budget` keeps the
  curve's points beside the area.
- **Paired difference** of method M against reference R on a data set: the mean over the data set's base
  seeds of the mean over the units both have of (M's score - R's score) (issue 51, item 3: every seed,
  :func:`~.pooling.set_values`). The data sets are the independent units (the cells of a data set share its
  points; a seed redraws the supervision of the same points).
- ``mean_diff``: the mean of those differences over the data sets, with a percentile bootstrap interval
  that resamples the data sets and, within each, its seeds (:func:`~.pooling.two_stage_ci`, seed
  ``seed``; with one seed, the data-set bootstrap); ``wins``/``losses``/``ties``: data sets
  where the difference is > 0, < 0, = 0 (differences rounded to :data:`TIE_TOL`, so floating-point noise
  in a mean neither breaks a tie in the signed-rank test nor makes a 0 a win).
- ``p_wilcoxon``: two-sided Wilcoxon signed-rank test over the data sets; ``p_holm``: Holm over the
  **family** of every method compared with that reference (per convention, subset and metric);
  ``p_ahead``/``p_rope``/``p_behind``: the Bayesian signed-rank posterior (baycomp) with ROPE = ``margin``.
- ``verdict``: ahead/behind where ``p_holm <= alpha``, else tied; **undetermined** where dropping any one
  data set (Holm recomputed) changes it (``loo_flips`` of ``loo_n`` drops), or with no data set in common.
- **best**: the method with the highest mean score over the data sets (its per-data-set means averaged),
  among the methods with a value on every data set of the subset (ties: the first by name).
- **P(best)**: the share of data-set bootstrap resamples (``n_boot``, the same resamples for every
  method) in which a method has the highest mean over the resampled sets; among the methods eligible
  to be best, over every data set of the subset (ties share the credit).
- **flags** (item 12): a data set where the best method's mean score is below :data:`UNINFORMATIVE_BELOW`
  ("no method recovers the classes"), or where at least :data:`SATURATED_MIN_METHODS` methods share the
  top value in every one of its cells ("saturated"); computed under the ``missing`` convention, for a
  higher-is-better metric only. The ``informative`` subset leaves the flagged data sets out (no such
  subset when nothing is flagged).
- **Size classes** (issue 51, item 5): where the data sets' ``n_samples`` fall in more than one class of
  :data:`~.pooling.SIZE_CLASSES`, each class is a subset too, with its own Holm family and its own best; a
  method with no measured cell in a class has no verdict there (``n_sets`` 0: "not measured"), it is not
  ranked last in it.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import inspect

import numpy as np
import pandas as pd

from ._effect_stats import bayes_signed_rank, family_verdicts, leave_one_out
from ._frame import CELL, CONVENTIONS, N_BOOT, NOT_MEASURED, _cells, main_methods, ranked_metric
from .headline_text import headline_sentences
from .pooling import curve_scores, has_curves, set_values, size_classes, two_stage_ci

__all__ = ["headline_effects", "headlines_remembered", "cell_scores", "per_budget", "FAILURE_SCORE",
           "UNINFORMATIVE_BELOW", "SATURATED_MIN_METHODS",
           "REFERENCE", "EFFECT_COLUMNS"]

#: The score of a measured failure: the metric's value for the one-cluster partition.
FAILURE_SCORE = {"ari": 0.0, "ari_unconstrained": 0.0, "nmi": 0.0, "nmi_unconstrained": 0.0}

#: The fixed reference every method is compared with, beside the kind's best.
REFERENCE = "kmeans"

#: A data set whose best method's mean score is below this recovers no classes (ARI 0 is chance level).
UNINFORMATIVE_BELOW = 0.1

#: A data set where this many methods share the top value in every cell separates nobody.
SATURATED_MIN_METHODS = 5

#: Two values this close are equal (a tie of two means, a difference of 0).
TIE_TOL = 1e-12
DECIMALS = 12  # the paired differences are rounded to TIE_TOL

EFFECT_COLUMNS = ["convention", "subset", "reference", "reference_name", "method", "n_sets", "mean_diff", "ci_low",
                  "ci_high", "wins", "losses", "ties", "p_wilcoxon", "p_holm", "p_ahead", "p_rope", "p_behind",
                  "verdict", "loo_flips", "loo_n"]
P_BEST_COLUMNS = ["convention", "subset", "method", "p_best", "mean", "n_sets"]
FLAG_COLUMNS = ["dataset", "flag", "why"]


def _failure_score(metric: str, failure_score: float | None) -> float:
    if failure_score is not None:
        return float(failure_score)
    if metric not in FAILURE_SCORE:
        raise ValueError(f"the headline scores a measured failure as the one-cluster partition's {metric!r}, which "
                         f"is known for {sorted(FAILURE_SCORE)} only; pass failure_score= (the value a failed "
                         f"trial should count as) or rank on one of those metrics")
    return FAILURE_SCORE[metric]


def _ranked_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows the headline ranks: every seed (pooled: :mod:`.pooling`), supervised cells, main methods."""
    cells = _cells(frame)
    return cells[cells["method"].isin(main_methods(cells))]


def cell_scores(frame: pd.DataFrame, metric: str, convention: str, failure_score: float | None = None,
                seeds: bool = False) -> pd.DataFrame:
    """Index cells, columns methods: each method's cell score under ``convention`` (module docstring),
    NaN where missing or where the method has no row. ``frame['value']`` holds ``metric``
    (:func:`~._frame.long_frame` built on it). ``seeds``: one row per (cell, base seed), a ``seed`` level
    last in the index (the frame's ``seed`` column; all one seed without it)."""
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    fail = _failure_score(metric, failure_score)
    ok = frame["status"].eq("ok")
    not_measured = frame["status"].isin(NOT_MEASURED) & (convention == "missing")
    score = frame["value"].where(ok, np.where(not_measured, np.nan, fail))
    frame = frame.assign(score=score)
    if seeds and "seed" not in frame:
        frame = frame.assign(seed=0)
    grouped = frame.groupby([*CELL, *(["seed"] if seeds else []), "method"])["score"]
    means = grouped.mean().where(grouped.count() == grouped.size())  # one missing trial: the cell is missing
    return means.unstack("method")


def _set_means(scores: pd.DataFrame) -> pd.DataFrame:
    """Data sets x methods: a method's mean cell score over the data set's cells it has (with a ``seed``
    level: the mean over its seeds of each seed's mean, :func:`~.pooling.set_values`)."""
    return set_values(scores)


def flags(scores: pd.DataFrame) -> pd.DataFrame:
    """The flagged data sets (module docstring) from the ``missing`` convention's cell scores."""
    out = []
    per_set = _set_means(scores)
    for dataset, row in per_set.iterrows():
        if row.notna().any() and row.max() < UNINFORMATIVE_BELOW:
            out.append((dataset, "no method recovers the classes",
                        f"the best method's mean is {row.max():.3g} (`{row.idxmax()}`), below {UNINFORMATIVE_BELOW}"))
    top = scores.max(axis=1)
    sharing = (scores.sub(top, axis=0).abs() <= TIE_TOL).sum(axis=1)
    for dataset, counts in sharing.groupby(level="dataset"):
        if counts.min() >= SATURATED_MIN_METHODS:
            values = top.xs(dataset, level="dataset")
            out.append((dataset, "saturated", f"{counts.min()} to {counts.max()} methods share the top value "
                                              f"({values.min():.3f} to {values.max():.3f}) in each of its "
                                              f"{len(counts)} cells"))
    return pd.DataFrame(out, columns=FLAG_COLUMNS).sort_values(["dataset", "flag"]).reset_index(drop=True)


def _best(set_means: pd.DataFrame) -> tuple[str | None, pd.Index]:
    """The best method (highest mean over the data sets) among those with a value on every data set."""
    eligible = set_means.columns[set_means.notna().all()]
    if not len(eligible) or set_means.empty:
        return None, eligible
    means = set_means[eligible].mean()
    return str(means[means >= means.max() - TIE_TOL].index.sort_values()[0]), eligible


def p_best(set_means: pd.DataFrame, n_boot: int, seed: int) -> pd.DataFrame:
    """Per method: ``p_best`` (module docstring; NaN for a method missing a data set), ``mean`` (over the
    data sets it has) and ``n_sets``."""
    _, eligible = _best(set_means)
    out = pd.DataFrame({"method": set_means.columns, "p_best": np.nan, "mean": set_means.mean().to_numpy(),
                        "n_sets": set_means.notna().sum().to_numpy()}).set_index("method")
    if len(eligible) and len(set_means):
        values = set_means[eligible].to_numpy(float)
        idx = np.random.default_rng(seed).integers(0, len(values), size=(n_boot, len(values)))
        boot = values[idx].mean(axis=1)  # resamples x methods
        top = np.abs(boot - boot.max(axis=1, keepdims=True)) <= TIE_TOL
        out.loc[eligible, "p_best"] = (top / top.sum(axis=1, keepdims=True)).mean(axis=0)
    return out.reset_index()


def _pair_table(diffs: pd.DataFrame, margin: float, alpha: float, seed: int, n_boot: int,
                by_seed: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per method of ``diffs`` (data sets x methods, the paired differences from one reference):
    the columns of :data:`EFFECT_COLUMNS` from ``n_sets`` on. ``by_seed``: the same differences per
    (data set, seed), for the interval's seed-to-seed spread (:func:`~.pooling.two_stage_ci`); without
    it, one value per data set."""
    family = family_verdicts(diffs, alpha)
    flips, n_drops = leave_one_out(diffs, family["verdict"], alpha)
    if by_seed is None:
        by_seed = diffs.set_index(pd.Index(np.zeros(len(diffs), int), name="seed"), append=True)
    rows = []
    for method in diffs.columns:
        d = diffs[method].dropna().to_numpy(float)
        lo, hi = two_stage_ci(by_seed[method], n_boot=n_boot, seed=seed)
        p_ahead, p_rope, p_behind = bayes_signed_rank(d, margin, seed=seed)
        fam = family.loc[method]
        verdict = "undetermined" if flips[method] else fam["verdict"]  # one data set decides it: no verdict
        rows.append(dict(method=method, n_sets=d.size, mean_diff=float(d.mean()) if d.size else np.nan,
                         ci_low=lo, ci_high=hi, wins=int((d > TIE_TOL).sum()), losses=int((d < -TIE_TOL).sum()),
                         ties=int((np.abs(d) <= TIE_TOL).sum()), p_wilcoxon=fam["p_wilcoxon"],
                         p_holm=fam["p_holm"], p_ahead=p_ahead, p_rope=p_rope, p_behind=p_behind,
                         verdict=verdict, loo_flips=int(flips[method]), loo_n=n_drops))
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS[EFFECT_COLUMNS.index("method"):])  # none: a board of one


def _differences(scores: pd.DataFrame, name: str, keep: list) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every other method minus ``name``: per (data set, seed) the mean over the cells (or curves) both
    have, and per data set the mean over its seeds; rounded to TIE_TOL (floating-point noise in a mean
    neither breaks a tie nor turns a 0, the same value, into a win). Data sets outside ``keep`` and
    those where no pair has a value are dropped."""
    diff = scores.drop(columns=name).sub(scores[name], axis=0)
    by_seed = diff.groupby(level=["dataset", "seed"]).mean().round(DECIMALS)
    per_set = set_values(diff).reindex(keep).dropna(how="all").round(DECIMALS)
    by_seed = by_seed[by_seed.index.get_level_values("dataset").isin(per_set.index)]
    return per_set, by_seed


def _subsets(rows: pd.DataFrame, datasets: list, flagged: pd.DataFrame) -> dict:
    """{subset: its data sets}: ``all``; ``informative`` (without the flagged ones) where any is flagged;
    each size class (:data:`~.pooling.SIZE_CLASSES`) where the data sets fall in more than one."""
    subsets = {"all": datasets}
    if len(flagged):
        subsets["informative"] = [d for d in datasets if d not in set(flagged["dataset"])]
    if "n_samples" in rows:
        classes = size_classes(rows.groupby("dataset")["n_samples"].max().reindex(datasets))
        if len(classes) > 1:
            subsets.update(classes)
    return subsets


def per_budget(scores: pd.DataFrame, reference: str, seed: int = 0, n_boot: int = N_BOOT) -> pd.DataFrame:
    """The per-budget view beside an area headline: per (setting, budget, method), each method minus
    ``reference`` over the data sets that have the budget (``scores``: cells x methods with a ``seed``
    level, one convention): ``n_sets``, ``mean_diff`` with its two-stage interval, ``wins``/``losses``."""
    cols = ["setting", "budget", "method", "n_sets", "mean_diff", "ci_low", "ci_high", "wins", "losses"]
    if reference not in scores.columns:
        return pd.DataFrame(columns=cols)
    rows = []
    for (setting, budget), block in scores.groupby(level=["setting", "budget"]):
        keep = sorted(block.index.get_level_values("dataset").unique())
        per_set, by_seed = _differences(block, reference, keep)
        for method in per_set.columns:
            d = per_set[method].dropna().to_numpy(float)
            if not d.size:
                continue
            lo, hi = two_stage_ci(by_seed[method], n_boot=n_boot, seed=seed)
            rows.append((setting, budget, method, d.size, float(d.mean()), lo, hi, int((d > TIE_TOL).sum()),
                         int((d < -TIE_TOL).sum())))
    return pd.DataFrame(rows, columns=cols)


def _content_key(frame: pd.DataFrame) -> tuple:
    """A key equal for two frames of equal values, index, columns and dtypes (else a TypeError)."""
    hashed = pd.util.hash_pandas_object(frame, index=True).to_numpy()
    return (hashlib.sha256(hashed.tobytes()).hexdigest(), tuple(map(str, frame.columns)),
            tuple(map(str, frame.dtypes)))


_MEMO: dict | None = None  # set inside :func:`headlines_remembered` only


@contextlib.contextmanager
def headlines_remembered():
    """Within the block, :func:`headline_effects` computes each distinct (rows, arguments) once: a report asks
    for one kind's headline up to three times (its page, the page's budget-sensitivity section, the site's
    kind page), each a minute of CPU at the reference board's scale. Rows are keyed by content, so a frame
    built again equal is found and a changed one is not; each caller gets its own copy. Entered by
    ``ccbench report --leaderboard`` for one report; outside it every call computes."""
    global _MEMO
    outer, _MEMO = _MEMO, ({} if _MEMO is None else _MEMO)
    try:
        yield
    finally:
        _MEMO = outer


def _once_per_content(fn):
    """``fn(frame, ...)`` through :data:`_MEMO` when :func:`headlines_remembered` is active."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _MEMO is None:
            return fn(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        frame, *rest = bound.arguments.values()
        try:
            key = (fn.__name__, _content_key(frame), tuple(rest))
            hash(key)
        except TypeError:  # a value pandas cannot hash: no memo, the same answer
            return fn(*args, **kwargs)
        if key not in _MEMO:
            _MEMO[key] = fn(*args, **kwargs)
        return copy.deepcopy(_MEMO[key])

    return wrapper


@_once_per_content
def headline_effects(frame: pd.DataFrame, metric: str = "ari", margin: float = 0.03, alpha: float = 0.05,
                     seed: int = 0, n_boot: int = N_BOOT, failure_score: float | None = None,
                     curves: bool | None = None) -> dict:
    """The headline of one kind's page (module docstring for every definition).

    ``frame``: one kind's :func:`~._frame.long_frame` rows built on ``metric`` (its ``value`` column);
    every seed, the supervised cells and the main methods are selected here. ``curves``: score each
    (data set, setting, noise, seed) by its area under the curve over the budgets (:mod:`.pooling`) instead
    of cell by cell; by default wherever a curve spans two budgets or more. Returns ``{"effects",
    "p_best", "flags", "text", "per_budget", "unit", "subsets"}``: one row per (convention, subset, reference,
    method) (:data:`EFFECT_COLUMNS`; the reference itself has no row), P(best) per (convention, subset,
    method), the flagged data sets, the headline's sentences (markdown), the per-budget view against
    ``kmeans`` (:func:`per_budget`, with curves only), the unit compared (``"curve"`` or ``"cell"``) and
    ``subsets`` ({subset: its data sets}, the one place the size classes' members are derived).
    ``failure_score``: the score of a measured failure for a metric :data:`FAILURE_SCORE` does not know
    (else a ValueError). Subsets: ``all``, ``informative`` (without the flagged data sets) and the size
    classes (:func:`_subsets`).
    """
    metric = ranked_metric(metric)
    sign = metric.sign
    rows = _ranked_rows(frame)
    if rows.empty:
        raise ValueError("no ranking cell in these rows: the headline needs supervised cells of the main methods")
    cells = {c: sign * cell_scores(rows, metric, c, failure_score, seeds=True) for c in CONVENTIONS}
    curves = has_curves(cells["missing"]) if curves is None else curves
    scores = {c: curve_scores(s) for c, s in cells.items()} if curves else cells
    # "recovers the classes" is a floor on a higher-is-better score; a lower-is-better metric is not flagged
    flagged = flags(cells["missing"]) if sign > 0 else pd.DataFrame(columns=FLAG_COLUMNS)
    datasets = sorted(cells["missing"].index.get_level_values("dataset").unique())
    subsets = _subsets(rows, datasets, flagged)
    effects, bests = [], []
    for convention, score in scores.items():
        for subset, keep in subsets.items():
            score_in = score[score.index.get_level_values("dataset").isin(keep)]
            set_means = _set_means(score_in).reindex(keep)
            best, _ = _best(set_means)
            bests.append(p_best(set_means, n_boot, seed).assign(convention=convention, subset=subset))
            for reference, name in (("kmeans", REFERENCE if REFERENCE in score.columns else None), ("best", best)):
                if name is None:
                    continue
                diffs, by_seed = _differences(score_in, name, keep)
                effects.append(_pair_table(diffs, margin, alpha, seed, n_boot, by_seed).assign(
                    convention=convention, subset=subset, reference=reference, reference_name=name))
    effects = pd.concat(effects, ignore_index=True)[EFFECT_COLUMNS] if effects else pd.DataFrame(columns=EFFECT_COLUMNS)
    p_best_table = pd.concat(bests, ignore_index=True)[P_BEST_COLUMNS]
    # back to the metric's own direction for the means (a higher-is-better metric: unchanged)
    p_best_table["mean"] = sign * p_best_table["mean"]
    # in the ranking's direction, as the effects are: positive is ahead of kmeans
    budget_view = per_budget(cells["missing"], REFERENCE, seed, n_boot) if curves else None
    unit = "curve" if curves else "cell"
    text = headline_sentences(effects, p_best_table, flagged, metric=metric, alpha=alpha, margin=margin,
                              n_boot=n_boot, unit=unit)
    return {"effects": effects, "p_best": p_best_table, "flags": flagged, "text": text, "per_budget": budget_view,
            "unit": unit, "subsets": subsets}
