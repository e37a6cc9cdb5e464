"""Size limits checked before a trial fits: a method's declared memory and time models against the machine's
memory and the cell's ``time_budget`` (the harness records a ``refused`` row). Re-exported by
:mod:`ccbench.running.protocol`, the trial protocol they belong to."""

from __future__ import annotations

from .. import registry

__all__ = ["TIME_REFUSAL_FACTOR", "searches_for_k", "predicted_seconds", "size_refusal", "memory_refusal"]


#: A trial is refused by its time model only when the prediction exceeds this many times ``time_budget``:
#: the CPU kill at ``trial_timeout`` handles everything nearer the budget, so a refusal only saves the
#: time of a trial that would surely time out. 3 because the calibrated models predict within a factor 2
#: of the measured CPU for most cells (``ccbench time-models``), so a trial predicted at 3x the budget is
#: measured at 1.5x it or more, and a refused cell never hides one the rows show would fit (issue 50).
TIME_REFUSAL_FACTOR = 3.0


def searches_for_k(spec: registry.MethodSpec, n_clusters: int | None) -> bool:
    """Whether a fit of ``spec`` given ``n_clusters`` searches for it (an ``accepts_n_clusters`` method
    that finds k itself, the AP family's preference bisection)."""
    return n_clusters is not None and spec.accepts_n_clusters and not spec.needs_n_clusters


def predicted_seconds(spec: registry.MethodSpec, n_samples: int, n_pairs: int = 0,
                      n_clusters: int | None = None, fits: int = 1, n_features: int | None = None) -> float | None:
    """CPU seconds ``spec.time`` predicts for one trial (None: no model declared).

    The given-k trial of a searching method is the outer model when it has a ``k_free`` part (calibrated
    on given-k trials: the search is in it), else ``search_fits`` times the model (a model of one fit); its
    k-free trial is ``k_free`` (or the model). So is the k-free trial of a method that **needs** k (CVCP over
    :func:`~ccbench.running.protocol.k_free_range`, a grid in n whose fits grow with k: calibrated on those
    cells, not the given-k model at k = 2 times the fits). A tuned trial (``fits`` > 1, :func:`~ccbench.running.protocol.tuning_fits`) is
    ``tuned * fits`` untuned ones. Equation: :class:`~ccbench.specs.TimeModel`."""
    if spec.time is None:
        return None
    model, charge = _time_regime(spec, n_clusters)
    seconds = model.predict(n_samples, n_pairs, n_clusters, n_features) * charge
    return seconds * (model.tuned * fits if fits > 1 else 1.0)


def _time_regime(spec: registry.MethodSpec, n_clusters: int | None):
    """(the TimeModel that describes this trial, the fits it is charged per trial): see :func:`predicted_seconds`."""
    model = spec.time
    if n_clusters is None and spec.needs_n_clusters and model.k_free is not None:
        return model.k_free, 1  # CVCP over k_free_range: the k-free board's own regime (its tuned factor, its n)
    if spec.accepts_n_clusters and not spec.needs_n_clusters and model.k_free is not None:
        return (model if searches_for_k(spec, n_clusters) else model.k_free), 1
    return model, (spec.search_fits if searches_for_k(spec, n_clusters) else 1)


def size_refusal(spec: registry.MethodSpec, params: dict, n_samples: int, n_features: int,
                 available: float | None = None, time_budget: float | None = None, fits: int = 1,
                 n_pairs: int = 0, n_clusters: int | None = None) -> str | None:
    """Why ``spec`` must not fit an n x d problem here, or None: its declared
    :class:`~ccbench.registry.MemoryModel` exceeds the available memory, or its
    :class:`~ccbench.registry.TimeModel` predicts more than :data:`TIME_REFUSAL_FACTOR` times
    ``time_budget`` seconds for the trial (:func:`predicted_seconds`: ``fits`` fits when tuned, see
    :func:`~ccbench.running.protocol.tuning_fits`; ``n_pairs`` supervision pairs; ``n_clusters`` given, None when k-free; the
    given-k search charged only to a model of one fit, never on top of a model measured on given-k
    trials). A prediction between the budget and the factor is not refused: the CPU kill at
    ``trial_timeout`` decides it on what it measures.
    The one place size limits are checked (the harness records a ``refused`` row)."""
    if spec.memory is not None:
        from ..base import available_memory

        need = spec.memory.bytes(n_samples, n_features, params)
        free = available_memory() if available is None else available
        if free is not None and need > free:
            fix = f"; {spec.memory.alternative}" if spec.memory.alternative else ""
            return (f"MemoryModel: method {spec.name!r} needs about {need / 2**30:.1f} GiB for n={n_samples}, "
                    f"d={n_features} but {free / 2**30:.1f} GiB is available{fix}")
    if spec.time is not None and time_budget is not None:
        predicted = predicted_seconds(spec, n_samples, n_pairs, n_clusters, fits, n_features)
        limit = TIME_REFUSAL_FACTOR * time_budget
        if predicted > limit:
            searched = searches_for_k(spec, n_clusters)
            what = [f"{fits} fits: tuning over its grid" if fits > 1 else "",
                    "searching for n_clusters" if searched else ""]
            tuned = f" ({'; '.join(w for w in what if w)})" if any(what) else ""
            model, _ = _time_regime(spec, n_clusters)
            per_fit = predicted / model.predict(n_samples)  # the search, tuning, pairs, k and d factors at this n
            return (f"TimeModel: method {spec.name!r} is predicted to take about {predicted:,.0f} s for "
                    f"n={n_samples}, {n_pairs:,} pairs{tuned} ({model.describe()}), over "
                    f"{TIME_REFUSAL_FACTOR:g} x time_budget={time_budget:g} s (refused without fitting: a trial "
                    f"nearer the budget is run and killed at trial_timeout if it overruns); subsample to "
                    f"n <= {model.largest_n(limit / per_fit):,} or raise time_budget")
    return None


memory_refusal = size_refusal  # the name issue 27 introduced
