"""ccbench: a declarative benchmark suite for constrained (semi-supervised) clustering.

>>> import numpy as np
>>> from ccbench import load_dataset, make_method, constraints as cgen, metrics
>>> ds = load_dataset("iris")
>>> cons = cgen.random_pairs(ds.y, n_constraints=60, rng=np.random.default_rng(0))
>>> labels = make_method("scssap", penalty=np.inf).fit_predict(ds.X, constraints=cons)
>>> score = metrics.modified_rand(ds.y, labels)

Names are imported on first use (PEP 562), so ``ccbench --help`` and
``ccbench plugins`` do not pay for scikit-learn, scipy or numba.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS = {
    "Constraints": "constraints",
    "ConstrainedClusterer": "base",
    "InfeasibleConstraintsError": "base",
    "Dataset": "datasets",
    "load_dataset": "datasets",
    "hookimpl": "hookspecs",
    "DatasetSpec": "registry",
    "MethodSpec": "registry",
    "MetricSpec": "registry",
    "NoiseSpec": "registry",
    "SchemeSpec": "registry",
    "TunerSpec": "registry",
    "UnknownNameError": "registry",
    "get_plugin_manager": "registry",
    "list_methods": "registry",
    "make_method": "registry",
    "register_plugin": "registry",
}
# public submodule -> its module (the noise injectors live in the data room)
_SUBMODULES = {"constraints": "constraints", "metrics": "metrics", "noise": "data.noise", "similarity": "similarity",
               "datasets": "datasets", "reporting": "reporting", "running": "running", "data": "data"}

__all__ = sorted([*_EXPORTS, *_SUBMODULES])


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{_SUBMODULES[name]}", __name__)
    else:
        raise AttributeError(f"module 'ccbench' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted([*globals(), *_EXPORTS, *_SUBMODULES])
