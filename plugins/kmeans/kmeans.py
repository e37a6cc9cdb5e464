"""``kmeans``: unsupervised k-means (scikit-learn), the baseline that ignores supervision."""

from __future__ import annotations

import numbers

from sklearn.cluster import KMeans
from threadpoolctl import ThreadpoolController

from ccbench.base import ConstrainedClusterer, Interval, check_random_state


_THREADED_FROM = 5_000  # points; below this KMeans runs on one thread
_controller: ThreadpoolController | None = None


def _thread_limit(n_threads):
    """``threadpoolctl`` limits through one controller: building one scans the loaded
    libraries (3.5 ms, a third of a k-means fit on iris)."""
    global _controller
    if _controller is None:
        _controller = ThreadpoolController()
    return _controller.limit(limits=n_threads)


class KMeansClusterer(ConstrainedClusterer):
    """Lloyd's k-means with k-means++ seeding (``sklearn.cluster.KMeans``).

    Parameters
    ----------
    n_clusters : int, default=2
    n_init : int, default=10
    max_iter : int, default=300
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    n_iter_ : int
    """

    _parameter_constraints = {
        "n_clusters": [Interval(numbers.Integral, 1, None)],
        "n_init": [Interval(numbers.Integral, 1, None)],
        "max_iter": [Interval(numbers.Integral, 1, None)],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=2, *, n_init=10, max_iter=300, random_state=None):
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y=None, *, constraints=None):
        X, _ = self._validate_fit(X, constraints)
        seed = int(check_random_state(self.random_state).integers(2**31 - 1))
        km = KMeans(self.n_clusters, n_init=self.n_init, max_iter=self.max_iter, random_state=seed)
        # scikit-learn's Lloyd loop works in chunks of 256 points: below a few thousand points
        # there is one chunk per thread at most, and waking the OpenMP pool costs more than it
        # saves (iris, n_init=10: 160 ms on 2 threads, 19 ms on one; same labels)
        with _thread_limit(1 if len(X) < _THREADED_FROM else None):
            km.fit(X)
        self.labels_ = km.labels_.astype(int)
        self.cluster_centers_ = km.cluster_centers_
        self.n_iter_ = int(km.n_iter_)
        self.converged_ = km.n_iter_ < self.max_iter
        return self
