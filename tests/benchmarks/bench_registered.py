"""Every registered method, installed plugins included: fit time and peak memory.

The parameter list is read from the registry when asv imports this module
(:func:`registered_methods`), so a plugin package installed beside ccbench (the ``ccbench``
entry-point group, README's "Adding a method") is benchmarked with no file in this folder:

    pip install ./my-package
    CCBENCH_BENCH_METHODS=my_method python tests/benchmarks/run_quick.py --store --bench bench_registered

The scale table's protocol (``scale_table.py``) at one size: the suite's 8-D blobs
(``common.blobs``), 0.01 n random pairs, or 3 labeled points per class for a method whose
first supervision is labels (NNC and its Xing baselines), the true k where the method needs
it, default parameters (so the work is the method's own stopping rule, not fixed: compare a
method with itself across commits). A size the method's declared memory model refuses on this
machine is skipped. ``CCBENCH_BENCH_METHODS=a,b`` keeps those methods only.
"""

from __future__ import annotations

import os

from .common import SMOKE, BenchData, EstimatorBenchmark, blobs, labeled_constraints, random_constraints, smoke_or


def registered_methods() -> list[str]:
    """The registry's method names (``ccbench.list_methods``), or ``CCBENCH_BENCH_METHODS``'s."""
    from ccbench.registry import list_methods

    specs = list_methods(load=False)
    names = [spec.name for spec in specs]
    wanted = [n.strip() for n in os.environ.get("CCBENCH_BENCH_METHODS", "").split(",") if n.strip()]
    if wanted:
        return [n for n in names if n in wanted] + [n for n in wanted if n not in names]
    if SMOKE:  # CI's smoke run: the built-ins have their own benchmarks; keep one, plus every plugin's
        return ["kmeans"] + [s.name for s in specs if not _is_builtin(s) and s.name != "kmeans"]
    return names


def _is_builtin(spec) -> bool:
    estimator = spec.estimator if isinstance(spec.estimator, str) else spec.estimator.__module__
    return str(estimator).startswith("ccbench_plugins.")


class RegisteredMethodFit(EstimatorBenchmark):
    """``time_fit``, ``peakmem_fit``, ``track_fit_peak_mb`` and quality of every registered method."""

    param_names = ["method", "n"]
    params = (registered_methods(), smoke_or([500], [200]))

    def setup(self, *params):
        self.method = params[0]
        super().setup(*params)

    def skip(self, params) -> str:
        from ccbench.registry import UnknownNameError, get_method_spec
        from ccbench.running.protocol import size_refusal

        try:
            spec = get_method_spec(params[0])
        except UnknownNameError as exc:
            return f"method {params[0]!r} is not registered: {exc}"
        return size_refusal(spec, {}, params[1], blobs(params[1])[0].shape[1]) or super().skip(params)

    def make_data(self, params) -> BenchData:
        from ccbench.registry import get_method_spec

        name, n = params
        X, y = blobs(n)
        spec = get_method_spec(name)
        if spec.supervision and spec.supervision[0] == "labels":
            return BenchData(X, y, labeled_constraints(n, 3))
        return BenchData(X, y, random_constraints(n, max(1, n // 100)))

    def make_estimator(self, params):
        from ccbench.registry import get_method_spec, make_method

        name = params[0]
        kw = {"n_clusters": 5} if get_method_spec(name).needs_n_clusters else {}
        return make_method(name, random_state=0, **kw) if _takes(name, "random_state") else make_method(name, **kw)


def _takes(name: str, param: str) -> bool:
    import inspect

    from ccbench.registry import get_method_spec

    return param in inspect.signature(get_method_spec(name).estimator).parameters
