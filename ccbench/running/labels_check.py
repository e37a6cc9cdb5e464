"""A fitted method's labels checked where they enter the harness (:func:`checked_labels`), part of the trial protocol
(re-exported by :mod:`ccbench.running.protocol`)."""

from __future__ import annotations

import numpy as np

from .. import registry

__all__ = ["MethodOutputError", "checked_labels"]


class MethodOutputError(ValueError):
    """A method's ``labels_`` is not a clustering of the points it was given (harness status ``error``)."""


def checked_labels(spec: registry.MethodSpec, labels, n_samples: int) -> np.ndarray:
    """A fitted method's ``labels_`` as integer labels, checked where they enter the harness.

    A clustering of ``n_samples`` points is a 1-d array of ``n_samples`` whole numbers >= 0; ``-1``
    (a point left unclustered, noise) only when the method declares it (``MethodSpec.noise_label``).
    Whole floats (``2.0``) are accepted and cast; NaN, infinities, fractions, text, another length or
    another negative number raise :class:`MethodOutputError` naming the method and the problem. Why here:
    the metrics would otherwise count NaN as one more cluster and score it (the row said ``ok``), or fail
    on a short array with a message that names no method.
    """
    name = spec.name
    arr = np.asarray(labels)
    if arr.ndim != 1 or arr.shape[0] != int(n_samples):
        raise MethodOutputError(f"method {name!r} returned labels_ of shape {arr.shape} for {int(n_samples)} points; "
                                f"a clustering gives one label per point: shape ({int(n_samples)},)")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise MethodOutputError(f"method {name!r} returned labels_ of dtype {arr.dtype}; a clustering's labels "
                                f"are whole numbers (cluster indices)")
    if np.issubdtype(arr.dtype, np.floating):
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise MethodOutputError(f"method {name!r} returned {int(bad.sum())} label(s) that are not whole numbers "
                                    f"(NaN, infinite or fractional; the first, point {first}: {float(arr[first])!r}); a "
                                    f"clustering's labels are cluster indices")
    out = arr.astype(np.intp)
    lowest = -1 if getattr(spec, "noise_label", False) else 0
    below = out < lowest
    if below.any() and (out == -1).all():  # the AP family's answer when no exemplar emerged: a fit, not a bug
        raise MethodOutputError(f"method {name!r} returned no clustering: every label is -1 (affinity propagation's "
                                f"answer when no exemplar emerged, a fit that did not converge)")
    if below.any():
        allowed = "-1 (noise, which it declares) or more" if lowest == -1 else (
            "0 or more (-1 for noise only when its MethodSpec declares noise_label=True)")
        raise MethodOutputError(f"method {name!r} returned {int(below.sum())} label(s) below {lowest} (the first: "
                                f"{int(out[below][0])}); its labels must be {allowed}")
    return out
