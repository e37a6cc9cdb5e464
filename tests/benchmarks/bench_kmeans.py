"""k-means family: ``kmeans`` (scikit-learn's Lloyd iterations), ``cop_kmeans``,
``pck_means``, ``mpck_means``, ``constrained_em``; ``KMeansVsPeer`` is the speed ratio
against the reference package (goal: >= 10x for COP-k-means and MPCK-means)."""

import importlib.util
import statistics
import time
import warnings

from .common import (
    QUICK,
    BenchData,
    EstimatorBenchmark,
    blobs,
    make,
    pairs_data,
    require_extra,
    require_method,
    smoke_or,
)

#: The optional extra the peer benchmarks need, and the module that tells it is installed.
PEERS_EXTRA, PEERS_MODULE = "peers", "active_semi_clustering"


class KMeansFit(EstimatorBenchmark):
    """k-means on 8-D blobs; one initialisation and a fixed iteration count
    (``tol`` is scikit-learn's default, so a run may stop earlier on easy data: the
    time is a baseline for the suite, not a target)."""

    method = "kmeans"
    param_names = ["n"]
    params = (smoke_or([500, 2000, 20000], [200]),)

    def make_data(self, params):
        (n,) = params
        X, y = blobs(n)
        return BenchData(X, y)

    def make_estimator(self, params):
        return make("kmeans", n_clusters=5, n_init=1, max_iter=100, random_state=0)


class _PairsFit(EstimatorBenchmark):
    """Blobs (5 centres) with ``constraint_fraction * n`` random pairs, one
    initialisation, ``max_iter`` capped (the runs usually converge earlier, so the time
    is to convergence on these data, the same every commit)."""

    param_names = ["n", "constraint_fraction"]
    params = (smoke_or([500, 2000, 20000], [200]), [0.1])
    heavy_n = (20000,)
    fixed = {}

    def make_data(self, params):
        return pairs_data(*params)

    def make_estimator(self, params):
        return make(self.method, n_clusters=5, n_init=1, random_state=0, **self.fixed)


class COPKMeansFit(_PairsFit):
    method = "cop_kmeans"
    fixed = {"max_iter": 100}


class PCKMeansFit(_PairsFit):
    method = "pck_means"
    fixed = {"max_iter": 100}


class MPCKMeansFit(_PairsFit):
    method = "mpck_means"
    fixed = {"max_iter": 30}


class ConstrainedEMFit(_PairsFit):
    """Full covariances; the cannot-link network of 0.1 n random pairs has one large
    component, so this times the loopy-BP E-step."""

    method = "constrained_em"
    params = (smoke_or([500, 2000], [200]), [0.1])
    heavy_n = ()
    fixed = {"max_iter": 30}


class KMeansVsPeer:
    """Fit time of the reference package (``active-semi-supervised-clustering``, timed
    inside its worker process, no process overhead) over ours, on the same 8-D blobs
    (5 centres) with 0.3 n random pairs, k = 5, one initialisation each (the peer runs
    one; our ``cop_kmeans`` defaults to ``n_init=10``), default iteration limits;
    median of 3 fits (1 in the smoke run). Skipped when the optional extra ``peers`` is
    not installed: ``setup_cache`` then measures nothing and ``setup`` raises asv's skip
    (``NotImplementedError`` from ``setup_cache`` itself is a *failure* in asv 0.6)."""

    param_names = ["n", "method"]
    params = (smoke_or([300], [100]), ["cop_kmeans", "pck_means", "mpck_means"])
    timeout = 900

    def setup_cache(self):
        if importlib.util.find_spec(PEERS_MODULE) is None:
            return {}  # nothing to measure; setup() skips every benchmark, naming the extra
        from ccbench.registry import load_plugins

        from .common import random_constraints

        load_plugins(["ccbench_plugins.kmeans.peers"])
        out = {}
        for n in self.params[0]:
            X, _ = blobs(n)
            cons = random_constraints(n, int(0.3 * n))
            for name in self.params[1]:
                require_method(name)
                ours, peer = [], []
                for rep in range(1 if QUICK else 3):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        t0 = time.perf_counter()
                        make(name, n_clusters=5, n_init=1, random_state=rep).fit(X, constraints=cons)
                        ours.append(time.perf_counter() - t0)
                        try:
                            est = make("peer_" + name, n_clusters=5, random_state=rep).fit(X, constraints=cons)
                            peer.append(est.peer_fit_seconds_)
                        except Exception:  # a failed peer fit (infeasible, empty cluster) has no time
                            pass
                if peer:
                    out[(n, name)] = (statistics.median(ours), statistics.median(peer))
        return out

    setup_cache.timeout = 900

    def setup(self, times, n, method):
        require_extra(PEERS_MODULE, PEERS_EXTRA)
        if (n, method) not in times:
            raise NotImplementedError("every peer fit failed")

    def track_speedup_vs_peer(self, times, n, method):
        ours, peer = times[(n, method)]
        return peer / ours

    track_speedup_vs_peer.unit = "peer fit time / ours"

    def track_ms_ours(self, times, n, method):
        return 1e3 * times[(n, method)][0]

    track_ms_ours.unit = "ms per fit"


def _alternating_medians(routes: dict) -> dict:
    """Median CPU seconds of each route, timed in turn 5 times (once in the smoke run), so that both
    see the same state of a shared machine."""
    times = {b: [] for b in routes}
    for _ in range(1 if QUICK else 5):
        for b, route in routes.items():
            t0 = time.process_time()
            route()
            times[b].append(time.process_time() - t0)
    return {b: statistics.median(v) for b, v in times.items()}


class ICMPassCompiled:
    """The ICM pass of PCK-means / MPCK-means (``core.icm_sweep``): the compiled loop against the
    numpy per-point loop it replaced (kept as its reference), on the same pass in the same process:
    ``n`` points, k = 5, 0.3 n must-links and 0.3 n cannot-links, every point constrained; median
    of 5 alternating timings of each (1 in the smoke run). The labels are checked equal first."""

    param_names = ["n"]
    params = (smoke_or([500, 2000], [100]),)

    def setup_cache(self):
        import numpy as np
        from ccbench_plugins.kmeans import core as kcore

        out = {}
        for n in self.params[0]:
            rng = np.random.default_rng(0)
            k = 5
            cost = rng.random((n, k))
            adj = []
            for q in (True, False):
                pairs = rng.choice(n, size=(int(0.3 * n), 2))
                pairs = pairs[pairs[:, 0] != pairs[:, 1]]
                indptr, nbr, w = kcore.neighbours(pairs, n, rng.uniform(0.1, 1.0, len(pairs)))
                P = np.repeat(w[:, None], k, axis=1)
                adj.append((indptr, nbr, P, P if q else None))
            order = rng.permutation(n)
            start = np.argmin(cost, axis=1)
            routes = {b: lambda b=b: kcore.icm_sweep(cost, start.copy(), order, *adj, backend=b) for b in ("numba", "numpy")}
            if not np.array_equal(routes["numba"](), routes["numpy"]()):
                raise AssertionError("the compiled ICM pass and the numpy one disagree")
            out[n] = _alternating_medians(routes)
        return out

    def track_speedup(self, times, n):
        return times[n]["numpy"] / times[n]["numba"]

    track_speedup.unit = "numpy pass CPU / compiled pass CPU"

    def track_ms_compiled(self, times, n):
        return 1e3 * times[n]["numba"]

    track_ms_compiled.unit = "ms CPU per pass"


class FarthestPairsCompiled:
    """MPCK-means's farthest-pair sweeps (``mpck_means.farthest_pairs``, three O(n d) sweeps per
    cluster metric each iteration): the compiled sweep against the numpy one it replaced (kept as its
    reference) in the same process, on ``n`` x ``d`` standard normal data and k = 10 metrics; median of
    5 alternating timings of each (1 in the smoke run). The pairs are checked equal first."""

    param_names = ["n", "d"]
    params = (smoke_or([2000], [200]), smoke_or([30, 216], [30]))

    def setup_cache(self):
        import numpy as np
        from ccbench_plugins.kmeans.mpck_means import farthest_pairs

        out = {}
        for n in self.params[0]:
            for d in self.params[1]:
                rng = np.random.default_rng(0)
                X = rng.standard_normal((n, d))
                A = rng.uniform(0.2, 3.0, size=(10, d))
                routes = {b: lambda b=b: farthest_pairs(X, A, 0, backend=b) for b in ("numba", "numpy")}
                if not np.array_equal(routes["numba"](), routes["numpy"]()):
                    raise AssertionError("the compiled farthest-pair sweeps and the numpy ones disagree")
                out[f"{n}x{d}"] = _alternating_medians(routes)
        return out

    def track_speedup(self, times, n, d):
        return times[f"{n}x{d}"]["numpy"] / times[f"{n}x{d}"]["numba"]

    track_speedup.unit = "numpy sweeps CPU / compiled sweeps CPU"

    def track_ms_compiled(self, times, n, d):
        return 1e3 * times[f"{n}x{d}"]["numba"]

    track_ms_compiled.unit = "ms CPU per call (k = 10 metrics)"
