"""Model selection inside a trial (``tune=cvcp``): the tuner chooses among a method's grid from the
supervision alone, and the trial refits with the choice (:func:`tune_trial`)."""

from __future__ import annotations

import time

from .. import registry
from ..similarity import SharedPreferenceFits
from ..specs import resolve_relative_k
from . import protocol
from .config import canonical_json

__all__ = ["tune_trial"]


def tune_trial(tune, n_folds, spec, params, method_seed, n_clusters, X, cons) -> tuple[dict, int | None, dict]:
    """The tuner's choice over ``spec.grid`` (the true labels are not among its inputs) and its row fields.

    A grid parameter the method config sets explicitly is fixed, not tuned (``scssap_expq_0_1``
    stays at its confidence). Returns the parameters to refit with and ``tuned_params`` (JSON of
    the chosen combination, ``{}`` when nothing was tuned), ``tune_fits``, ``tune_time``,
    ``tune_score`` (the chosen combination's mean held-out score) and ``tune_note``; and the k to refit
    with: the trial's, or the one CVCP chose among k-1, k, k+1 (a relative grid value, issue 38). A k-free
    run of a method that needs k (``n_clusters`` None) chooses k by CVCP over
    :func:`~ccbench.running.protocol.k_free_range` (``protocol.free_grid``), k alone; the chosen k is in
    ``tuned_params`` and is the k the trial refits with.

    The AP family's searches for k (issue 55): the tuner's folds each hold a
    :class:`~ccbench.similarity.SharedPreferenceFits` (cvcp), so a fold's searches at k-1, k, k+1 start
    from one another; for a method that uses no supervision the whole tuning shares one record (its
    folds fit the same problem), so it costs about one search per k. ``tune_fits`` still counts the
    grid's fits (folds x combinations), each of which may have run fewer preference fits.
    """
    tuner = registry.get_tuner_spec(tune)
    grid = protocol.free_grid(spec, params, n_clusters, X.shape[0])
    fixed = sorted(set(spec.grid) - set(grid) - {"n_clusters"})
    # k: the k the trial is given; k-free (CVCP over k, an absolute grid), the smallest k: a tie or a
    # tuning with nothing to hold out keeps the fewest clusters, never a k read from the classes
    k_default = "k" if n_clusters is not None else grid.get("n_clusters", (None,))[0]
    defaults = {**protocol.estimator_defaults(spec), "n_clusters": k_default}
    default = {k: defaults.get(k) for k in grid}

    def make_estimator(**combination):
        k = combination.pop("n_clusters", None)
        k = n_clusters if k is None else _k(k, n_clusters)
        return protocol.build_estimator(spec, {**params, **combination}, method_seed, n_clusters=k)

    tic = time.perf_counter()
    # a method that uses no supervision fits the same problem on every fold: its searches for k are
    # shared across the folds, not only within one (SharedPreferenceFits, issue 55)
    with SharedPreferenceFits(covers_nested=not spec.supervision):
        sel = tuner.select(make_estimator, X, cons, grid, default=default, n_folds=int(n_folds),
                           random_state=method_seed)
    chosen = dict(sel.params) if grid else {}
    notes = [sel.note] if sel.note else []
    if not spec.grid:
        notes = [f"method {spec.name!r} declares no grid: its defaults are fitted, nothing tuned"]
    elif "n_clusters" in spec.grid and "n_clusters" not in grid and n_clusters is None:
        notes.append("k-free run: n_clusters is not tuned (its grid is relative to a given k)")
    elif n_clusters is None and spec.needs_n_clusters:
        ks = grid["n_clusters"]
        notes.append(f"k-free: CVCP over k in {ks[0]}..{ks[-1]} alone"
                     + (f"; {', '.join(fixed)} at the method config's values" if fixed else ""))
    elif fixed:
        notes.append(f"fixed by the method config, not tuned: {', '.join(fixed)}")
    score = dict((canonical_json(c), s) for c, s in sel.scores).get(canonical_json(chosen))
    fields = {"tuned_params": canonical_json(chosen), "tune_fits": int(sel.n_fits),
              "tune_time": time.perf_counter() - tic, "tune_score": score, "tune_note": "; ".join(notes) or None}
    params = {**params, **chosen}
    if "n_clusters" in params:
        n_clusters = _k(params.pop("n_clusters"), n_clusters)
    return params, n_clusters, fields


def _k(value, given: int | None) -> int:
    """A grid's k: relative to the given k (``"k+1"``), or absolute in a k-free run (CVCP over k,
    :func:`~ccbench.running.protocol.k_free_range`)."""
    return int(value) if given is None else resolve_relative_k(value, given)
