"""CVCP: cross-validation over constraints (Pourrajabi, Moulavi, Campello, Zimek & Sander, EDBT 2014).

Model selection for semi-supervised clustering without the true labels: the supervision
itself is split into folds; for each candidate hyper-parameter combination the method is
fitted on the training folds and scored by how well its clustering satisfies the held-out
constraints; the combination with the best mean score over folds is refitted on all the
supervision (by the caller).

Folds (:func:`pair_folds`, :func:`label_folds`):

- pairs (``random_pairs``, ``per_class_pairs``): the must-links and the cannot-links are
  shuffled separately and dealt round-robin into ``n_folds`` folds, so every fold keeps the
  must-link / cannot-link proportion (counts differ by at most one per kind);
- labels (``labeled_subsets``, any supervision with partial labels): the labeled points are
  shuffled per given label and dealt round-robin (stratified by the *given* labels, which are
  supervision, not the truth). Fold f trains on the labels of the other points and on the
  pairs with no end in fold f; its held-out constraints are the pairs with at least one end
  among fold f's points (the paper's "constraints involving test objects").

Score (the paper's constraint-satisfaction F-measure, read as follows; the paper was not at
hand in this repository, so the reading is ours and pinned by a known-answer test): each
held-out pair is a two-class classification instance, its class must-link or cannot-link,
predicted must-link when the clustering puts its two points together. F_ML = 2 TP / (2 TP + FP + FN) with
must-link the positive class, F_CL likewise with cannot-link positive, and the fold's score
is their mean. A class absent from a fold's held-out pairs has no F-measure there; the
fold's score is then the F of the class present (documented choice; the paper does not
discuss it). The score of a combination is the mean over folds.

Choices (documented, tested):

- Ties (scores within 1e-12) go to the default combination (the cell's configuration), else
  to the first in grid order (:meth:`ccbench.registry.MethodSpec.grid_combinations`).
- A candidate whose fit raises on a fold scores -inf there (counted in ``n_failed`` and named
  in ``note``); when every candidate fails, the default is kept.
- Fewer held-out units than ``n_folds`` (pairs, or labeled points): the folds drop to one per
  unit; fewer than two units: nothing can be held out, the default is kept and ``note`` says so.
- The fits of one fold share its data and constraints: a method that searches its preference for
  ``n_clusters`` (the AP family, SCAP) starts each search from the fold's earlier ones
  (:class:`ccbench.similarity.SharedPreferenceFits`; issue 55), so the grid over k does not repeat it.
- Transitive closure: a held-out must-link may be implied by training must-links (a chain
  through a third point); such pairs are kept (removing them would leave few pairs at small
  budgets), so a method that enforces the closure satisfies them under every candidate.
"""

from __future__ import annotations

import dataclasses
import itertools
import warnings

import numpy as np

from ccbench.constraints import Constraints
from ccbench.similarity import SharedPreferenceFits

__all__ = ["Selection", "select", "pair_folds", "label_folds", "constraint_f_measure", "split"]

_TIE = 1e-12


@dataclasses.dataclass
class Selection:
    """What :func:`select` chose and what it cost."""

    params: dict
    scores: list = dataclasses.field(default_factory=list)  # (combination, mean score) in grid order
    n_fits: int = 0
    n_failed: int = 0
    n_folds: int = 0
    note: str = ""


def pair_folds(constraints: Constraints, n_folds: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Fold index of every must-link and every cannot-link (stratified by kind, round-robin)."""
    def deal(m: int) -> np.ndarray:
        folds = np.empty(m, dtype=np.intp)
        folds[rng.permutation(m)] = np.arange(m) % n_folds
        return folds

    # cannot-links continue where the must-links stopped, so small folds get one pair of either kind first
    ml = deal(constraints.n_must_link)
    cl = (deal(constraints.n_cannot_link) + constraints.n_must_link) % n_folds
    return ml, cl


def label_folds(labels: np.ndarray, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold index per point (-1 for unlabeled): labeled points dealt round-robin within each given label."""
    folds = np.full(len(labels), -1, dtype=np.intp)
    labeled = np.flatnonzero(labels >= 0)
    order = labeled[rng.permutation(len(labeled))]
    order = order[np.argsort(labels[order], kind="stable")]  # grouped by label, shuffled within
    folds[order] = np.arange(len(order)) % n_folds
    return folds


def split(constraints: Constraints, n_folds: int, rng: np.random.Generator) -> list[tuple[Constraints, Constraints]]:
    """``(train, held_out)`` constraint sets per fold (labels route when ``constraints.labels`` is set)."""
    n = constraints.n_samples
    ml, cl = constraints.must_link, constraints.cannot_link
    mlw, clw = constraints.must_link_weight, constraints.cannot_link_weight
    out = []
    if constraints.labels is not None and constraints.n_labeled:
        point_fold = label_folds(constraints.labels, n_folds, rng)
        for f in range(n_folds):
            held = point_fold == f
            ml_out, cl_out = held[ml].any(axis=1), held[cl].any(axis=1)
            labels = np.where(held, -1, constraints.labels)
            train = Constraints(ml[~ml_out], cl[~cl_out], n_samples=n, must_link_weight=mlw[~ml_out],
                                cannot_link_weight=clw[~cl_out], labels=labels)
            out.append((train, Constraints(ml[ml_out], cl[cl_out], n_samples=n)))
        return out
    ml_fold, cl_fold = pair_folds(constraints, n_folds, rng)
    for f in range(n_folds):
        ml_out, cl_out = ml_fold == f, cl_fold == f
        train = Constraints(ml[~ml_out], cl[~cl_out], n_samples=n, must_link_weight=mlw[~ml_out],
                            cannot_link_weight=clw[~cl_out])
        out.append((train, Constraints(ml[ml_out], cl[cl_out], n_samples=n)))
    return out


def constraint_f_measure(labels: np.ndarray, held_out: Constraints) -> float:
    """Mean of the must-link and cannot-link F-measures of ``labels`` on ``held_out`` (NaN: no pair).

    Each pair is predicted must-link when its two points share a cluster. With must-link
    positive: TP = satisfied must-links, FN = split must-links, FP = joined cannot-links;
    with cannot-link positive: TP = satisfied cannot-links, FN = joined cannot-links,
    FP = split must-links. A kind with no held-out pair is left out of the mean.
    """
    labels = np.asarray(labels)
    ml, cl = held_out.must_link, held_out.cannot_link
    ml_kept = int(np.sum(labels[ml[:, 0]] == labels[ml[:, 1]]))
    cl_kept = int(np.sum(labels[cl[:, 0]] != labels[cl[:, 1]]))
    ml_split, cl_joined = len(ml) - ml_kept, len(cl) - cl_kept
    scores = []
    if len(ml):
        scores.append(2 * ml_kept / (2 * ml_kept + cl_joined + ml_split))
    if len(cl):
        scores.append(2 * cl_kept / (2 * cl_kept + ml_split + cl_joined))
    return float(np.mean(scores)) if scores else float("nan")


def _n_units(constraints: Constraints) -> int:
    """How many things the folds deal out: labeled points (labels route) or pairs."""
    if constraints.labels is not None and constraints.n_labeled:
        return constraints.n_labeled
    return len(constraints)


def select(make_estimator, X, constraints: Constraints, grid: dict, *, default: dict, n_folds: int = 3,
           random_state=None) -> Selection:
    """Choose among ``grid``'s combinations by CVCP; the caller refits the choice on all constraints.

    Parameters
    ----------
    make_estimator : callable
        ``make_estimator(**combination)`` -> an unfitted estimator (the cell's method with
        ``combination`` over its configuration). It receives no labels, and nor does ``fit``.
    X : array of shape (n_samples, n_features)
    constraints : Constraints
        All the supervision of the trial.
    grid : dict of str to tuple
        Candidate values per parameter (``MethodSpec.grid``, minus parameters the
        configuration fixed).
    default : dict
        The combination the cell would use untuned (wins ties).
    n_folds : int, default=3
    random_state : int or None
        Seeds the fold assignment.
    """
    keys = list(grid)
    combos = [dict(zip(keys, values)) for values in itertools.product(*grid.values())] if grid else []
    if not combos:
        return Selection(params={}, note="no grid: the defaults are fitted, nothing tuned")
    default = {k: default.get(k) for k in keys}
    units = _n_units(constraints)
    if units < 2:
        return Selection(params=default, note=f"CVCP needs at least 2 constraints (or labeled points) to hold "
                                               f"one out, got {units}: the defaults are fitted, nothing tuned")
    folds_used = min(int(n_folds), units)
    notes = [] if folds_used == n_folds else [f"only {units} constraint units: {folds_used} folds, not {n_folds}"]
    splits = split(constraints, folds_used, np.random.default_rng(random_state))
    kept = [(tr, te) for tr, te in splits if len(te)]  # labels route: a fold of lone points holds out no pair
    if not kept:
        return Selection(params=default, note="no fold holds out a constraint: the defaults are fitted")
    if len(kept) < len(splits):
        notes.append(f"{len(splits) - len(kept)} fold(s) held out no constraint and were left out")
    splits = kept
    table = np.full((len(combos), len(splits)), -np.inf)
    n_fits = n_failed = 0
    first_error = None
    # a fold's fits share its data and constraints: a search for k reuses the fold's earlier ones (issue 55)
    shared = [SharedPreferenceFits() for _ in splits]
    for c, combo in enumerate(combos):
        for f, (train, held_out) in enumerate(splits):
            n_fits += 1
            try:
                est = make_estimator(**combo)
                with warnings.catch_warnings(), shared[f]:
                    warnings.simplefilter("ignore")  # a candidate's warnings are not the trial's
                    est.fit(X, constraints=train)
                table[c, f] = constraint_f_measure(est.labels_, held_out)
            except Exception as exc:  # a candidate that cannot fit a fold loses there; the trial goes on
                n_failed += 1
                first_error = first_error or f"{combo}: {type(exc).__name__}: {exc}"
    means = table.mean(axis=1)
    scores = [(combo, float(m)) for combo, m in zip(combos, means)]
    if n_failed:
        notes.append(f"{n_failed} of {n_fits} candidate fits failed (scored -inf), first: {first_error}"[:500])
    if not np.isfinite(means).any():
        notes.append("every candidate failed: the defaults are fitted")
        return Selection(default, scores, n_fits, n_failed, len(splits), "; ".join(notes))
    best = means.max()
    tied = [c for c in range(len(combos)) if means[c] >= best - _TIE]
    chosen = next((c for c in tied if combos[c] == default), tied[0])
    return Selection(combos[chosen], scores, n_fits, n_failed, len(splits), "; ".join(notes))
