"""``ap``: unsupervised affinity propagation (Frey & Dueck 2007) on the shared message core."""

from __future__ import annotations

from ccbench.base import ConstrainedClusterer, Options, check_random_state
from ccbench.similarity import preference_bracket

from .core import (
    AP_PARAMETER_CONSTRAINTS,
    N_CLUSTERS_CONSTRAINTS,
    PreferenceSearchMixin,
    affinity_propagation,
    ap_similarity,
    similarity_assignment,
)

class AffinityPropagationClusterer(PreferenceSearchMixin, ConstrainedClusterer):
    """Affinity propagation on s(i, j) = -||x_i - x_j||^2 or a given S (constraints are ignored).

    Parameters
    ----------
    preference : float or None, default=None
        s(k, k) for every k; ``None`` is the median off-diagonal similarity
        (Frey & Dueck; SCSSAP Section 4.1).
    n_clusters : int or None, default=None
        ``None``: one fit at ``preference`` (unchanged behaviour). An int: the
        preference is searched by bisection (R apcluster's ``apclusterK``;
        :func:`ccbench.similarity.bisect_preference`) on
        :func:`ccbench.similarity.preference_bracket` (``[low, s_max]``: at or below
        ``low`` one exemplar is optimal, apcluster's ``preferenceRange`` bound), each
        step a whole fit at the midpoint (at most ``n_clusters`` clusters: the
        midpoint becomes the lower end, else the upper). It goes on past the first
        preference that gives ``n_clusters`` to the upper end of that plateau
        (within 5 %: where the data, not the constraints, decide the partition) and
        stops there or after ``core.PREFERENCE_SEARCH_FITS`` = 20 fits: a search
        costs at most 20 fits. If the count is never hit, the closest fit is kept,
        ``n_clusters_exact_`` is False and a ``ConvergenceWarning`` says so.
        Give ``preference`` or ``n_clusters``, not both.
    damping : float in [0.5, 1), default=0.75
        mu of Algorithm 1 (the SCSSAP paper's value; scikit-learn's default is 0.5).
    max_iter : int, default=1000
    convergence_iter : int or None, default=100
        Stop when the exemplar set has been unchanged (and non-empty) for this
        many iterations (scikit-learn's rule); ``None`` runs exactly ``max_iter``
        iterations. The defaults 1000 / 100 are those of Frey & Dueck's
        reference code (apcluster.m); scikit-learn uses 200 / 15.
    backend : {"auto", "numba", "numpy"}, default="auto"
        Message-passing implementation (:mod:`ccbench_plugins.affinity.core`).
    dtype : {"float64", "float32"}, default="float64"
        Precision of the messages (S, alpha, rho), on both back-ends
        (:func:`ccbench_plugins.affinity.core.affinity_propagation`). ``"float32"``
        halves their memory and the memory traffic of an iteration; the tie noise
        is then drawn at float32's eps.
    assignment : {"messages", "similarity"}, default="messages"
        How points join exemplars: ``"messages"`` is Algorithm 1 of Arzeno &
        Vikalo (argmax_k a_ik + r_ik over the exemplars, the rule SCSSAP uses, so
        SCSSAP with q = 0 equals this estimator); ``"similarity"`` is Frey &
        Dueck's / scikit-learn's (argmax_k s(i, k), then each cluster is
        re-centred on its medoid), which reproduces scikit-learn's labels.
    similarity : {"sqeuclidean", "precomputed"}, default="sqeuclidean"
        ``"sqeuclidean"``: s(i, j) = -||x_i - x_j||^2 from the rows of X.
        ``"precomputed"``: X is the (N, N) similarity matrix S itself (as ``scap``'s
        option of the same name; e.g. the SCAP paper's random similarities,
        dataset ``scap_gaussian_similarity``); it must be square, its diagonal is
        ignored (replaced by the preference) and it need not be symmetric. The
        ``preference`` default and the ``n_clusters`` search bounds are then taken
        from S's off-diagonal entries.
    random_state : int, Generator or None, default=None
        Seeds the tie-breaking noise added to S (as scikit-learn does): tiny
        (relative 1e-16) so it only matters for exactly tied similarities.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster index 0..K-1 (ordered by exemplar index); all -1 if no exemplar emerged.
    cluster_centers_indices_ : ndarray of shape (K,)
        Exemplar indices.
    preference_ : float
        The preference of the kept fit (the one found with ``n_clusters``).
    n_preference_fits_ : int
        Fits run (1 without ``n_clusters``; the search's bisection steps with it).
    n_clusters_exact_ : bool
        Whether the kept fit has ``n_clusters`` clusters (True without a search).
    n_iter_ : int
    converged_ : bool

    Notes
    -----
    Exemplars are Psi = {k : a_kk + r_kk > 0} (Algorithm 1 of Arzeno & Vikalo
    2015), the same set scikit-learn finds on the same S. The two ``assignment``
    rules agree on well-separated data and may differ on points between clusters.
    If Psi is empty: ``ConvergenceWarning``, all labels -1, no centres (as scikit-learn).

``dtype="float32"`` runs the messages in single precision: at N = 2,000 an iteration
takes 0.72x the CPU time of float64 with the numba back-end and 0.63x with numpy
(median of 7 paired repeats, one thread, ``bench_ap.APFloat32``; docs/benchmarks.md),
and S, alpha, rho take half the memory (the fit's peak falls less, 104 -> 92 MB with
numba: S is built in float64 before it is rounded). Labels equal float64's on iris, wine and the
asv blobs; only a point tied between two exemplars may fall the other way
(``tests/test_ap_dtype.py``).

    References
    ----------
    B. J. Frey and D. Dueck, Science 315 (2007). N. M. Arzeno and H. Vikalo,
    IEEE TPAMI 37(5) (2015), eqs. 14, 25 and Algorithm 1 with no constraints.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.r_[np.zeros((5, 2)), np.ones((5, 2)) * 10] + np.arange(10)[:, None] * 0.01
    >>> AffinityPropagationClusterer(random_state=0).fit(X).labels_
    array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])

    Asking for a number of clusters searches the preference (three groups, two asked):

    >>> X3 = np.r_[X, np.ones((5, 2)) * 30]
    >>> est = AffinityPropagationClusterer(n_clusters=2, random_state=0).fit(X3)
    >>> est.labels_
    array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    >>> est.n_clusters_exact_, est.n_preference_fits_
    (True, 3)
    """

    _parameter_constraints = {
        **AP_PARAMETER_CONSTRAINTS, **N_CLUSTERS_CONSTRAINTS, "assignment": [Options("messages", "similarity")],
        "similarity": [Options("sqeuclidean", "precomputed")],
    }

    def __init__(
        self,
        *,
        preference=None,
        n_clusters=None,
        damping=0.75,
        max_iter=1000,
        convergence_iter=100,
        backend="auto",
        assignment="messages",
        dtype="float64",
        similarity="sqeuclidean",
        random_state=None,
    ):
        self.preference = preference
        self.n_clusters = n_clusters
        self.damping = damping
        self.max_iter = max_iter
        self.convergence_iter = convergence_iter
        self.backend = backend
        self.assignment = assignment
        self.dtype = dtype
        self.similarity = similarity
        self.random_state = random_state

    def _check_similarity_input(self, X):
        if self.similarity == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(
                f"similarity='precomputed' needs a square (N, N) similarity matrix, got shape {X.shape}"
            )

    def _preference_bracket(self, X):
        self._check_similarity_input(X)
        return preference_bracket(X, kind=self.similarity)

    def _fit(self, X, constraints, preference):
        X, _ = self._validate_fit(X, constraints)
        self._check_similarity_input(X)
        rng = check_random_state(self.random_state)
        S, self.preference_ = ap_similarity(X, preference, rng, self.dtype, kind=self.similarity)
        result = affinity_propagation(
            S,
            damping=float(self.damping),
            max_iter=int(self.max_iter),
            convergence_iter=self.convergence_iter,
            backend=self.backend,
            dtype=self.dtype,
        )
        if self.assignment == "similarity":
            self.labels_, self.cluster_centers_indices_ = similarity_assignment(S, result.exemplars)
        else:
            self.labels_, self.cluster_centers_indices_ = result.labels, result.exemplars
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        return self
