"""Every constructor parameter of the spectral family reaches the fit (issue 54, item 20).

A parameter validated and recorded but not passed on to the step that uses it (the graph's
``n_neighbors`` / ``sigma`` / ``symmetrize``, SRCP's ``mu``, E2CP's ``alpha``, the spreading's
``tol`` / ``max_iter``, k-means' ``n_init``) is invisible in a results table: a tuned value is
published under its name while another ran. For every registered method of the family and
every parameter of its constructor, this fits the method at the default and with one other
value, in a context where the parameter acts (``tol`` with ``solver="spreading"``; ``n_init``
and ``random_state`` on six overlapping blobs where k-means' starts disagree), and requires
the *fitted result* to change: labels, embedding, affinity, propagated constraints, iteration
counts, the solver used. A refit at the default must give the same result (else the
comparison proves nothing). A parameter may instead be declared inert with its reason; a new
parameter must be listed in one of the two tables (the completeness test fails otherwise).
"""

from __future__ import annotations


import numpy as np
from ccbench_plugins.spectral import ccbench_methods
from scipy import sparse

from _param_guard import parameter_guard_tests

from ccbench import constraints as cgen

_GRAPH = {
    "n_clusters": ({}, 2, "three"),
    "n_neighbors": ({}, 5, "three"),
    "sigma": ({}, None, "three"),
    "symmetrize": ({}, "max", "three"),
    # six overlapping blobs, one k-means start against ten (a seed where they differ)
    "n_init": ({"n_clusters": 6, "n_neighbors": 8, "sigma": None}, 1, "six"),
    "random_state": ({"n_clusters": 6, "n_neighbors": 8, "sigma": None, "n_init": 1}, 1, "six"),
}

#: method -> parameter -> (context: other parameters set in both fits, the changed value, data)
CHANGES = {
    "ncuts": dict(_GRAPH),
    "spectral_learning": dict(_GRAPH),
    "srcp": {
        **_GRAPH,
        "mu": ({}, 5.0, "three"),
        "solver": ({}, "spreading", "three"),
        "tol": ({"solver": "spreading"}, 1e-3, "three"),
        "max_iter": ({"solver": "spreading"}, 5, "three"),
    },
    "e2cp": {
        **_GRAPH,
        "alpha": ({}, 0.3, "three"),
        "solver": ({}, "lowrank", "three"),
    },
}

#: (method, parameter) -> why changing it cannot change a fit (none so far)
INERT: dict[tuple[str, str], str] = {}


def _data(which):
    """``three``: three blobs in 2-D (45 points); ``six``: six overlapping blobs (90 points,
    tests/test_spectral_choices.py's), with 6 random pairs either way."""
    rng = np.random.default_rng(0)
    if which == "three":
        y = np.repeat([0, 1, 2], 15)
        X = np.array([[0, 0], [3, 0], [0, 3]])[y] + rng.normal(0, 0.8, (45, 2))
    else:
        centres = rng.normal(scale=2.5, size=(6, 2))
        X = np.concatenate([c + rng.normal(size=(15, 2)) for c in centres])
        y = np.repeat(np.arange(6), 15)
    return X, cgen.random_pairs(y, 6, rng=np.random.default_rng(0))


def _plain(value):
    if sparse.issparse(value):
        value = value.toarray()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _fingerprint(est) -> list:
    """Every public fitted attribute (name ending in ``_``) as plain values."""
    return [(name, repr(_plain(getattr(est, name))))
            for name in sorted(vars(est)) if name.endswith("_") and not name.startswith("_")]


(test_every_parameter_of_the_family_is_checked_or_declared_inert, test_changing_a_parameter_changes_the_fit,
 test_every_default_is_the_documented_one) = parameter_guard_tests(
    ccbench_methods=ccbench_methods, data=_data, fingerprint=_fingerprint, changes=CHANGES, inert=INERT)
