"""How the headline (:mod:`.effects`) pools a data set's cells into its one value (issue 51, items 2, 3, 5).

- **Over budgets, the area under the curve.** A *curve* is one (data set, setting, noise, seed) followed
  over its supervision budgets. Its score is the trapezoid area under (log budget, cell score), divided by
  the log budget range: the curve's mean height over the budgets it spans, on the metric's own scale (a
  method at 0.8 at every budget has 0.8). The axis is logarithmic because the board's budgets are geometric
  (pairs at 0.02-0.4 n, labels at 1-20 per class, about x2 a step): each doubling of the supervision weighs
  alike, where a linear axis would give the richest step half the area and the scarce end, where methods
  differ most, almost none. (A budget of 0 or less has no logarithm: a curve with one is read on the linear
  axis.) The active track's curves (q = 0, 10, ..., 200 answers) are equally spaced and have their own area
  (:mod:`ccbench.reporting.active`). A curve of one budget scores its one cell. A
  method missing any budget of a curve misses the curve (the curve's budgets are those any method has:
  an area over fewer budgets is another quantity); under the ``last`` convention a refusal is a 0 there,
  so the area is still measured.
- **Over seeds, a two-stage bootstrap.** A base seed draws other constraints, noise and method seeds for
  the same cells, and every method sees the same draws under one seed: the paired difference of a data
  set is the mean over its seeds of each seed's mean over its cells (or curves). The interval resamples
  the data sets, then, within each drawn data set, its seeds (:func:`two_stage_ci`), so the
  seed-to-seed spread is part of it. With one seed per data set it is :func:`~.gains.bootstrap_ci`
  itself: the same resamples, the same interval. The tests (Wilcoxon, the Bayesian signed rank, Holm,
  leave one out) and P(best) stay on the data-set values: the data sets are the independent units, a
  seed is not.
- **Size classes** (:data:`SIZE_CLASSES`: n < 1,000; 1,000 to 5,000; n > 5,000) on the data set's
  ``n_samples``: the headline again over each class's data sets, with its own Holm family.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._frame import CI, N_BOOT
from .gains import bootstrap_ci

__all__ = ["curve_scores", "set_values", "two_stage_ci", "SIZE_CLASSES", "size_classes", "has_curves"]

#: The board's size classes on ``n_samples`` (issue 51, item 5): (label, low inclusive, high inclusive).
SIZE_CLASSES = (("n < 1,000", 0, 999), ("1,000 <= n <= 5,000", 1000, 5000), ("n > 5,000", 5001, np.inf))

_CURVE = ["dataset", "setting", "noise", "seed"]


def has_curves(scores: pd.DataFrame) -> bool:
    """Whether any curve of ``scores`` (cells x methods, a ``budget`` level) spans two budgets or more."""
    index = scores.index.to_frame(index=False)
    keys = [k for k in _CURVE if k in index]
    return bool(len(index)) and bool((index.groupby(keys)["budget"].nunique() > 1).any())


def _trapezoid_weights(index: pd.MultiIndex) -> np.ndarray:
    """Per cell of ``index``: its weight in its curve's normalised trapezoid area over log budget (the
    weights of a curve sum to 1; a one-budget curve's cell weighs 1)."""
    cells = index.to_frame(index=False)
    keys = [k for k in _CURVE if k in cells]
    budget = cells["budget"].astype(float)
    positive = (budget > 0).groupby([cells[k] for k in keys], dropna=False).transform("all")
    budget = budget.where(~positive, np.log(budget.where(positive, 1.0)))  # log axis where every budget is > 0
    order = cells.assign(_b=budget).sort_values([*keys, "_b"]).index
    b = budget[order]
    grouped = b.groupby([cells.loc[order, k] for k in keys], sort=False, dropna=False)
    before, after = grouped.shift(1), grouped.shift(-1)
    width = (after.fillna(b) - before.fillna(b)) / 2.0
    span = grouped.transform("max") - grouped.transform("min")
    weights = (width / span.where(span > 0)).fillna(1.0)  # a one-budget curve: its cell
    return weights.reindex(cells.index).to_numpy(float)


def curve_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """Curves x methods: the normalised area under each curve (module docstring) from ``scores`` (cells x
    methods with the levels ``dataset, setting, budget, noise`` and optionally ``seed``; NaN: missing).
    A method with NaN at any budget of a curve is NaN there."""
    keys = [k for k in _CURVE if k in scores.index.names]
    weights = _trapezoid_weights(scores.index)
    groups = [scores.index.get_level_values(k) for k in keys]
    area = scores.mul(weights, axis=0).groupby(groups).sum()
    gaps = scores.isna().groupby(groups).any()
    area = area.mask(gaps)
    area.index.names = keys
    return area


def set_values(scores: pd.DataFrame) -> pd.DataFrame:
    """Data sets x methods: the mean over a data set's seeds of each seed's mean over its cells or curves
    (one seed, or no ``seed`` level: the mean over its cells)."""
    if "seed" not in scores.index.names:
        return scores.groupby(level="dataset").mean()
    return scores.groupby(level=["dataset", "seed"]).mean().groupby(level="dataset").mean()


def two_stage_ci(by_seed: pd.Series, level: float = CI, n_boot: int = N_BOOT, seed: int = 0) -> tuple[float, float]:
    """Percentile interval of the mean over data sets of ``by_seed`` (indexed ``dataset, seed``; NaN
    dropped): each resample draws the data sets with replacement, then each drawn data set's seeds with
    replacement. With one seed per data set: :func:`~.gains.bootstrap_ci` (the same draws)."""
    values = by_seed.dropna()
    if values.empty:
        return np.nan, np.nan
    table = values.unstack("seed")
    counts = table.notna().sum(axis=1).to_numpy()
    if (counts == 1).all():
        return bootstrap_ci(table.mean(axis=1).to_numpy(float), level=level, n_boot=n_boot, seed=seed)
    raw = table.to_numpy(float)
    packed = np.take_along_axis(raw, np.argsort(np.isnan(raw), axis=1, kind="stable"), axis=1)  # present first
    rng = np.random.default_rng(seed)
    n_sets, width = packed.shape
    sets = rng.integers(0, n_sets, size=(n_boot, n_sets))
    drawn_counts = counts[sets]
    picks = (rng.random((n_boot, n_sets, width)) * drawn_counts[..., None]).astype(int)
    drawn = packed[sets[..., None], picks]
    used = np.arange(width) < drawn_counts[..., None]  # a data set of c seeds: c draws among them
    means = (np.where(used, drawn, 0.0).sum(axis=-1) / drawn_counts).mean(axis=1)
    q = (1.0 - level) / 2.0
    return float(np.quantile(means, q)), float(np.quantile(means, 1.0 - q))


def size_classes(n_samples: pd.Series) -> dict:
    """{class label: sorted data sets} of ``n_samples`` (indexed by data set) for each class of
    :data:`SIZE_CLASSES` with a data set; a data set without ``n_samples`` is in none."""
    n = pd.to_numeric(n_samples, errors="coerce")
    out = {}
    for label, low, high in SIZE_CLASSES:
        members = sorted(n.index[(n >= low) & (n <= high)].astype(str))
        if members:
            out[label] = members
    return out
