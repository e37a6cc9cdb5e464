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
_SUBMODULES = {"constraints": "constraints", "metrics": "metrics", "noise": "data.noise", "similarity": "similarity"}

__all__ = sorted([*_EXPORTS, *_SUBMODULES])


def _lazy_attributes(package: str, exports: dict, submodules: dict | None = None):
    """PEP 562 ``__getattr__`` and ``__dir__`` for ``package``: ``exports`` maps a public name to the
    module (relative to ``package``) that defines it, ``submodules`` a public submodule name to its
    module. A name is imported on first use and then cached in the package, so ``ccbench --help``
    and ``ccbench plugins`` never pay for scikit-learn, pandas or matplotlib."""
    import sys

    submodules = submodules or {}

    def __getattr__(name: str):
        if name in exports:
            value = getattr(importlib.import_module(f".{exports[name]}", package), name)
        elif name in submodules:
            value = importlib.import_module(f".{submodules[name]}", package)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted([*vars(sys.modules[package]), *exports, *submodules])

    return __getattr__, __dir__


__getattr__, __dir__ = _lazy_attributes(__name__, _EXPORTS, _SUBMODULES)
