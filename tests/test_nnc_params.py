"""Every constructor parameter of the NNC family reaches the fit (issue 54, item 20).

A parameter that is validated and recorded but not passed on to the step that uses it is
invisible in a results table: a tuned value is published under its name while the default
ran. For every registered method of the family and every parameter of its constructor, this
fits the method at the default and with one other value, in a context where the parameter
acts (e.g. ``random_state`` without supervision for ``nnc``, ``n_init`` with a random seeding
for the k-means baselines), and requires the *fitted result* to change: the labels, every
fitted array or number (timings left out) and the fitted delegate's parameters and results.
A refit at the default must give the same result (else the comparison proves nothing). A
parameter may instead be declared inert, with the reason; a new parameter must be listed in
one of the two tables (the completeness test fails otherwise).
"""

from __future__ import annotations


import numpy as np

from _param_guard import parameter_guard_tests

from ccbench import constraints as cgen
from ccbench_plugins.nnc import ccbench_methods

#: method -> parameter -> (context: other parameters set in both fits, the changed value,
#: data: "labeled" | "none" supervision)
CHANGES = {
    "fpc": {
        "n_clusters": ({}, 4, "labeled"),
        "metric": ({}, "lp_diag", "labeled"),
        "random_state": ({}, 1, "labeled"),
    },
    "nnc": {
        "n_clusters": ({}, 4, "labeled"),
        "metric": ({}, "lp_diag", "labeled"),
        # the first farthest-point centre is the only random draw, made without supervision
        "random_state": ({}, 1, "none"),
    },
    "cop_kmeans_xing": {
        "n_clusters": ({}, 4, "labeled"),
        "metric": ({}, "lp_diag", "labeled"),
        "init": ({}, "k-means++", "labeled"),
        "n_init": ({"init": "k-means++"}, 3, "labeled"),
        "max_iter": ({}, 1, "labeled"),
        "random_state": ({"init": "k-means++"}, 1, "labeled"),
    },
    "pck_means_xing": {
        "n_clusters": ({}, 4, "labeled"),
        "metric": ({}, "lp_diag", "labeled"),
        "penalty": ({}, 100.0, "labeled"),
        "init": ({}, "k-means++", "labeled"),
        "n_init": ({"init": "k-means++"}, 3, "labeled"),
        "max_iter": ({}, 1, "labeled"),
        "random_state": ({"init": "k-means++"}, 1, "labeled"),
    },
}

#: (method, parameter) -> why changing it cannot change a fit (none so far)
INERT: dict[tuple[str, str], str] = {}

#: fitted attributes that are measurements, not results
_NOT_RESULTS = ("metric_time_",)


def _data(supervision):
    """Three noisy classes in 3-D (feature 2 is noise), 12 points each."""
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1, 2], 12)
    X = np.c_[y + rng.normal(0, 0.35, 36), rng.normal(0, 0.6, 36), rng.uniform(0, 3, 36)]
    if supervision == "none":
        return X, None
    return X, cgen.labeled_subsets(y, 2, rng=np.random.default_rng(1))


def _fingerprint(est) -> list:
    """What a fit produced: every public fitted attribute (name ending in ``_``) except
    timings, as plain values; a fitted delegate by its parameters and its own attributes."""
    out = []
    for name in sorted(vars(est)):
        if not name.endswith("_") or name.startswith("_") or name in _NOT_RESULTS:
            continue
        value = getattr(est, name)
        if hasattr(value, "get_params"):
            out.append((name, sorted(value.get_params().items(), key=str), _fingerprint(value)))
        elif hasattr(value, "__dataclass_fields__"):  # LearnedMetric
            out.append((name, repr(value)))
        else:
            out.append((name, repr(np.asarray(value).tolist()) if isinstance(value, np.ndarray) else repr(value)))
    return out


(test_every_parameter_of_the_family_is_checked_or_declared_inert, test_changing_a_parameter_changes_the_fit,
 test_every_default_is_the_documented_one) = parameter_guard_tests(
    ccbench_methods=ccbench_methods, data=_data, fingerprint=_fingerprint, changes=CHANGES, inert=INERT)
