"""ccbench: a declarative benchmark suite for constrained (semi-supervised) clustering.

>>> import numpy as np
>>> from ccbench import load_dataset, make_method, constraints as cgen, metrics
>>> ds = load_dataset("iris")
>>> cons = cgen.random_pairs(ds.y, n_constraints=60, rng=np.random.default_rng(0))
>>> labels = make_method("scssap", penalty=np.inf).fit_predict(ds.X, constraints=cons)
>>> score = metrics.modified_rand(ds.y, labels)
"""

from . import constraints, metrics, noise, similarity
from .base import ConstrainedClusterer, InfeasibleConstraintsError
from .constraints import Constraints
from .datasets import Dataset, load_dataset
from .hookspecs import hookimpl
from .registry import (
    DatasetSpec,
    MethodSpec,
    MetricSpec,
    NoiseSpec,
    SchemeSpec,
    UnknownNameError,
    get_plugin_manager,
    list_methods,
    make_method,
    register_plugin,
)

__version__ = "0.1.0"

__all__ = [
    "Constraints",
    "ConstrainedClusterer",
    "Dataset",
    "DatasetSpec",
    "InfeasibleConstraintsError",
    "MethodSpec",
    "MetricSpec",
    "NoiseSpec",
    "SchemeSpec",
    "UnknownNameError",
    "constraints",
    "get_plugin_manager",
    "hookimpl",
    "list_methods",
    "load_dataset",
    "make_method",
    "metrics",
    "noise",
    "register_plugin",
    "similarity",
]
