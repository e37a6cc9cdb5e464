"""The certified k-means SDP lower bound (``ccbench_plugins.sdp.kmeans_bound``, issue 52): time of
each route, and the bound's distance from the relaxation's value (``track_``).

Data: the suite's blobs (d = 8, 5 centres, seed 0) with ``0.2 n`` random pairs; k = 5. The ADMM runs
a fixed number of iterations (``tol`` out of reach), so its time is work per iteration x a constant.
"""

from __future__ import annotations

import warnings

from .common import blobs, random_constraints, smoke_or

#: fixed ADMM work per run
ADMM_ITERATIONS = 100


def _instance(n):
    X, _ = blobs(n)
    return X, random_constraints(n, max(1, n // 5))


class KMeansBoundADMM:
    """``kmeans_lower_bound(method="admm")``, 100 iterations, no cache."""

    param_names = ["n"]
    params = (smoke_or([100, 300], [40]),)
    timeout = 300

    def setup(self, n):
        self.X, self.cons = _instance(n)

    def _run(self):
        from ccbench_plugins.sdp.kmeans_bound import kmeans_lower_bound

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return kmeans_lower_bound(self.X, self.cons, 5, method="admm", tol=1e-12,
                                      max_iter=ADMM_ITERATIONS, cache=False)

    def time_bound(self, n):
        self._run()

    def track_relative_gap(self, n):
        """``(relaxation value at Z - certified bound) / value`` after the fixed iterations."""
        return self._run().relative_gap

    track_relative_gap.unit = "relative"


class KMeansBoundCvxpy:
    """``kmeans_lower_bound(method="cvxpy")`` (Clarabel, interior point) on small n."""

    param_names = ["n"]
    params = (smoke_or([30, 40], [20]),)
    timeout = 300

    def setup(self, n):
        self.X, self.cons = _instance(n)

    def time_bound(self, n):
        from ccbench_plugins.sdp.kmeans_bound import kmeans_lower_bound

        kmeans_lower_bound(self.X, self.cons, 5, method="cvxpy", cache=False)
