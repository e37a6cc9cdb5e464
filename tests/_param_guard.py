"""Shared by the per-family parameter guards (tests/test_<family>_params.py, issue 54 item 20):
every constructor parameter of every method a family registers reaches the fit.

:func:`parameter_guard_tests` builds the three tests from a family's own tables; a test file
binds them to module-level ``test_*`` names so pytest collects them there.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import warnings

import pytest


def family_estimators(ccbench_methods) -> dict:
    """name -> estimator class of every method a family's ``ccbench_methods`` hook registers
    (read from that hook alone, so no other plugin is loaded)."""
    out = {}
    for spec in ccbench_methods():
        module, cls = spec.estimator.split(":")
        out[spec.name] = getattr(importlib.import_module(module), cls)
    return out


def documented_defaults(cls) -> dict:
    """``name : type, default=VALUE`` lines of the class docstring's Parameters section."""
    doc = cls.__doc__.split("Parameters", 1)[1].split("Attributes", 1)[0]
    found = re.findall(r"^\s{4}(\w+) : .*?default=(.+?)\s*$", doc, flags=re.M)
    return {name: ast.literal_eval(value) for name, value in found}


def parameter_guard_tests(*, ccbench_methods, data, fingerprint, changes, inert):
    """The family's three tests.

    ``changes``: method -> parameter -> (context: other parameters set in both fits, the changed
    value, the ``data`` key); ``inert``: (method, parameter) -> why changing it cannot change a
    fit; ``data(key)`` -> ``(X, constraints)``; ``fingerprint(estimator)`` -> what a fit produced.
    """

    def family():
        return family_estimators(ccbench_methods)

    def fit(name, params, key):
        X, cons = data(key)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return family()[name](**params).fit(X, constraints=cons)

    @functools.lru_cache(maxsize=None)
    def reference(name, base_items, key):
        """The fingerprint of a fit with ``base_items``, checked once against a refit (a refit
        must be the same fit, else comparing fits proves nothing); shared by the parameters' tests."""
        first = fingerprint(fit(name, dict(base_items), key))
        assert fingerprint(fit(name, dict(base_items), key)) == first, f"{name}: two fits of {base_items} differ"
        return first

    def test_every_parameter_of_the_family_is_checked_or_declared_inert():
        for name, cls in family().items():
            params = set(cls().get_params())
            listed = set(changes.get(name, {})) | {p for (m, p) in inert if m == name}
            assert params == listed, f"{name}: parameters {sorted(params ^ listed)} are not in CHANGES or INERT"

    cases = [(m, p) for m, ps in changes.items() for p in ps]

    @pytest.mark.parametrize("name, param", cases, ids=[f"{m}-{p}" for m, p in cases])
    def test_changing_a_parameter_changes_the_fit(name, param):
        context, value, key = changes[name][param]
        base = {"n_clusters": 3, "random_state": 0, **context}
        default = base.get(param, family()[name]().get_params()[param])  # the value the first fit runs
        assert value != default
        first = reference(name, tuple(sorted(base.items())), key)
        changed = fingerprint(fit(name, {**base, param: value}, key))
        assert changed != first, f"{name}: {param}={value!r} fits exactly as {param}={default!r}"

    def test_every_default_is_the_documented_one():
        """Two routes to a default: the constructor's signature and the docstring a reader of a
        results table consults (the defaults are what an untuned row ran with)."""
        for name, cls in family().items():
            assert documented_defaults(cls) == cls().get_params(), name

    return (test_every_parameter_of_the_family_is_checked_or_declared_inert,
            test_changing_a_parameter_changes_the_fit, test_every_default_is_the_documented_one)
