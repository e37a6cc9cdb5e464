"""``constrained_em``: Gaussian-mixture EM with equivalence constraints (Shental et al. 2003)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ccbench.base import (
    ConstrainedClusterer,
    ConvergenceWarning,
    InfeasibleConstraintsError,
    Interval,
    Options,
    check_random_state,
)

from .core import COLOUR_BUDGET, Units, colour_units, group_sums, initial_centres, sq_dists

COVARIANCE_TYPES = ("full", "diag", "spherical")


def logsumexp(a, axis=None, keepdims=False):
    """log sum exp (scipy's has a per-call overhead that dominates the small calls here)."""
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else (out.item() if axis is None else np.squeeze(out, axis=axis))


# --------------------------------------------------------------------------- Gaussians


def log_gauss(X, means, covs, cov_type):
    """log N(x_i | mu_h, Sigma_h), shape (n, k)."""
    n, d = X.shape
    k = len(means)
    if cov_type == "full":
        out = np.empty((n, k))
        for h in range(k):  # one Cholesky per component, vectorised over points
            L = np.linalg.cholesky(covs[h])
            z = np.linalg.solve(L, (X - means[h]).T)
            out[:, h] = -0.5 * (z * z).sum(0) - np.log(np.diag(L)).sum()
    else:
        var = covs if cov_type == "diag" else np.repeat(covs[:, None], d, axis=1)
        prec = 1.0 / var
        out = -0.5 * ((X * X) @ prec.T - 2 * X @ (means * prec).T + (means * means * prec).sum(1))
        out -= 0.5 * np.log(var).sum(1)
    return out - 0.5 * d * np.log(2 * np.pi)


def m_step(X, R, unit_resp, cov_type, reg_covar):
    """Means and covariances from point weights ``R`` (n, k); mixing weights from the
    units' posteriors (each chunklet counts once, Shental et al. eq. 5)."""
    nk = R.sum(0) + 10 * np.finfo(float).eps
    means = (R.T @ X) / nk[:, None]
    d = X.shape[1]
    if cov_type == "full":
        covs = np.empty((len(nk), d, d))
        for h in range(len(nk)):
            diff = X - means[h]
            covs[h] = (R[:, h, None] * diff).T @ diff / nk[h]
            covs[h].flat[:: d + 1] += reg_covar
    else:
        var = (R.T @ (X * X)) / nk[:, None] - means**2
        var = np.maximum(var, 0.0) + reg_covar
        covs = var if cov_type == "diag" else var.mean(1)
    weights = unit_resp.sum(0) / len(unit_resp)
    return np.maximum(weights, np.finfo(float).tiny), means, covs


# --------------------------------------------------------------------------- cannot-link network


class CannotLinkNetwork:
    """The cannot-link Markov network over units, split into connected components.

    Components with at most ``max_configurations`` labelings (k ** size) are
    enumerated (exact marginals, MAP and prior normaliser); the rest go to loopy
    belief propagation (exact on trees, approximate on loops). Their colourability
    is checked once by :func:`core.colour_units` (an exhausted search raises
    :class:`InfeasibleConstraintsError`), and their decoded labels are checked
    against the cannot-links (:meth:`_decode`).
    """

    def __init__(self, edges, n_units, k, max_configurations, search_budget=COLOUR_BUDGET):
        self.k = k
        self.search_budget = search_budget
        self.free = np.ones(n_units, dtype=bool)
        self.exact = []  # (unit ids, feasible configurations (m, s))
        bp_nodes = []
        if len(edges):
            g = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n_units, n_units))
            _, comp = connected_components(g, directed=False)
            involved = np.unique(edges)
            self.free[involved] = False
            ecomp = comp[edges[:, 0]]
            for c in np.unique(comp[involved]):
                nodes = involved[comp[involved] == c]
                if int(k) ** len(nodes) <= max_configurations:  # exact: float(k) ** 182 overflowed at k = 50
                    local = {u: j for j, u in enumerate(nodes)}
                    e = np.array([[local[a], local[b]] for a, b in edges[ecomp == c]])
                    conf = np.indices((k,) * len(nodes)).reshape(len(nodes), -1).T
                    ok = np.all(conf[:, e[:, 0]] != conf[:, e[:, 1]], axis=1)
                    if not ok.any():
                        raise InfeasibleConstraintsError(
                            f"the cannot-links among points of {len(nodes)} chunklets cannot be "
                            f"met with n_clusters={k}; raise n_clusters"
                        )
                    self.exact.append((nodes, conf[ok]))
                else:
                    bp_nodes.append(nodes)
        self.bp_nodes = np.concatenate(bp_nodes) if bp_nodes else np.empty(0, np.intp)
        bp_mask = np.zeros(n_units, dtype=bool)
        bp_mask[self.bp_nodes] = True
        e = edges[bp_mask[edges[:, 0]]] if len(edges) else np.empty((0, 2), np.intp)
        self.bp_edges = e
        if len(e):
            # too large to enumerate, but an exhausted colouring search is still a proof
            _, status = colour_units(np.zeros((n_units, k)), e, budget=search_budget)
            if status == "infeasible":
                raise InfeasibleConstraintsError(
                    f"the cannot-links among points of {len(self.bp_nodes)} chunklets cannot be met with "
                    f"n_clusters={k} (an exhaustive search found no {k}-colouring); raise n_clusters"
                )
        self.n_violated = 0  # cannot-links (between units) the last decoding breaks
        self.src = np.concatenate([e[:, 0], e[:, 1]])
        self.dst = np.concatenate([e[:, 1], e[:, 0]])
        m = len(e)
        self.rev = np.concatenate([np.arange(m, 2 * m), np.arange(m)])
        self.n_units = n_units

    @property
    def is_exact(self) -> bool:
        return len(self.bp_nodes) == 0

    def log_prior_norm(self, log_w):
        """sum over components of log sum_{feasible labelings} prod alpha (singletons: 0)."""
        return sum(logsumexp(log_w[conf].sum(1)) for _, conf in self.exact)

    def infer(self, phi, *, bp_max_iter=300, bp_tol=1e-7, damping=0.5):
        """Posterior marginals (n_units, k), MAP-style labels, and the data log-likelihood
        part ``sum log sum_L prod exp(phi)`` (exact components; BP ones: see Notes)."""
        resp = np.exp(phi - logsumexp(phi, axis=1, keepdims=True))
        labels = np.argmax(phi, axis=1)
        ll = logsumexp(phi[self.free], axis=1).sum()
        for nodes, conf in self.exact:
            score = phi[nodes[None, :], conf].sum(1)
            lse = logsumexp(score)
            p = np.exp(score - lse)
            for j, u in enumerate(nodes):
                resp[u] = np.bincount(conf[:, j], weights=p, minlength=self.k)
            labels[nodes] = conf[np.argmax(score)]
            ll += lse
        if len(self.bp_nodes):
            beliefs, ll_bp = self._bp(phi, bp_max_iter, bp_tol, damping)
            resp[self.bp_nodes] = beliefs[self.bp_nodes]
            labels[self.bp_nodes] = self._decode(beliefs)
            ll += ll_bp
        return resp, labels, ll

    def _decode(self, beliefs):
        """Labels of the BP nodes meeting the cannot-links whenever a search finds them.

        Greedy first: most confident node first, each the most probable label no
        cannot-linked node already decoded holds (the plain argmax when every label
        is taken). Loopy beliefs can strand a node this way although a colouring
        exists, so the labels are then checked and, if some cannot-link is broken,
        searched by :func:`core.colour_units` with cost ``-log belief``. What the
        search cannot mend (budget) is counted in ``n_violated`` (the caller warns).
        """
        lab = self._greedy_decode(beliefs)
        e = self.bp_edges
        full = np.zeros(self.n_units, dtype=np.intp)
        full[self.bp_nodes] = lab
        broken = int(np.sum(full[e[:, 0]] == full[e[:, 1]]))
        if broken:
            cost = -np.log(np.maximum(beliefs, 1e-300))
            found, _ = colour_units(cost, e, budget=self.search_budget)
            if found is not None:
                lab, broken = found[self.bp_nodes], 0
        self.n_violated = broken
        return lab

    def _greedy_decode(self, beliefs):
        nodes = self.bp_nodes
        if not hasattr(self, "_adj"):
            order = np.argsort(self.src, kind="stable")
            self._adj = (np.searchsorted(self.src[order], np.arange(self.n_units + 1)), self.dst[order])
        indptr, nbr = self._adj
        lab = np.full(self.n_units, -1)
        for u in nodes[np.argsort(-beliefs[nodes].max(1), kind="stable")]:
            row = beliefs[u].copy()
            taken = lab[nbr[indptr[u] : indptr[u + 1]]]
            row[taken[taken >= 0]] = -1.0
            lab[u] = int(np.argmax(row)) if row.max() >= 0 else int(np.argmax(beliefs[u]))
        return lab[nodes]

    def _bp(self, phi, max_iter, tol, damping):
        """Damped loopy BP for the "different labels" pair potential, in the log domain.

        Message i -> j: m(h) = sum_{h' != h} cavity_i(h') = 1 - cavity_i(h), taken as
        log1p(-p) except at each row's largest entry, where the sum of the others is
        exact (1 - p loses all digits as p -> 1). Messages warm-start from the previous
        call (EM moves phi little between iterations).
        """
        k, E = self.k, len(self.src)
        logm = getattr(self, "_logm", None)
        if logm is None or logm.shape != (E, k):
            logm = np.full((E, k), -np.log(k))
        rows = np.arange(E)
        for _ in range(max_iter):
            total = phi + group_sums(self.dst, logm, self.n_units)
            cav = total[self.src] - logm[self.rev]
            cav -= logsumexp(cav, axis=1, keepdims=True)
            top = np.argmax(cav, axis=1)
            with np.errstate(divide="ignore"):  # log1p(-1) = -inf at a certain entry: replaced just below
                new = np.log1p(-np.exp(np.minimum(cav, -1e-300)))
            others = cav.copy()
            others[rows, top] = -np.inf
            new[rows, top] = logsumexp(others, axis=1)
            new -= logsumexp(new, axis=1, keepdims=True)
            new = np.logaddexp(np.log(1 - damping) + new, np.log(damping) + logm)
            delta = np.max(np.abs(np.exp(new) - np.exp(logm)))
            logm = new
            if delta < tol:
                break
        self._logm = logm
        total = phi + group_sums(self.dst, logm, self.n_units)
        b = np.exp(total - logsumexp(total, axis=1, keepdims=True))
        nodes = self.bp_nodes
        # mean-field style estimate: E_b[phi] + H(b) (not a bound; only used to stop)
        ll = float((b[nodes] * phi[nodes]).sum() - (b[nodes] * np.log(np.maximum(b[nodes], 1e-300))).sum())
        return b, ll


# --------------------------------------------------------------------------- EM


def constrained_em_single(
    X, units, net, weights, means, covs, *, cov_type, reg_covar, max_iter, tol
):
    """EM from the given parameters. Returns a dict with labels, parameters, history."""
    history = []
    converged = False
    for it in range(1, max_iter + 1):
        phi = group_sums(units.unit_of, log_gauss(X, means, covs, cov_type), units.n_units) + np.log(weights)
        resp, labels, ll = net.infer(phi)
        ll -= net.log_prior_norm(np.log(weights))
        history.append(ll)
        if it > 1 and abs(history[-1] - history[-2]) < tol * len(X):
            converged = True
            break
        new_w, means, covs = m_step(X, resp[units.unit_of], resp, cov_type, reg_covar)
        weights = _alpha_step(net, resp, weights, new_w)
    return dict(
        labels=labels[units.unit_of], weights=weights, means=means, covs=covs,
        loglik=history[-1], history=history, n_iter=it, converged=converged,
    )


def _alpha_step(net, resp, old, new):
    """Mixing weights: the unconstrained update, backtracked towards the old weights
    until the expected complete log-likelihood (with the cannot-link prior's
    normaliser, exact components only) does not decrease -- a generalised EM step."""
    if not net.exact or not net.is_exact:
        return new
    counts = resp.sum(0)

    def q(w):
        return counts @ np.log(w) - net.log_prior_norm(np.log(w))

    q_old = q(old)
    for t in (1.0, 0.5, 0.25, 0.1, 0.01):
        w = t * new + (1 - t) * old
        if q(w) >= q_old:
            return w
    return old


class ConstrainedEM(ConstrainedClusterer):
    """Gaussian mixture EM with must-link and cannot-link equivalence constraints.

    Must-link chunklets (transitive closure) are single points weighted by their
    size: their posterior is ``alpha_h prod_{i in chunklet} N(x_i | mu_h, Sigma_h)``
    normalised (exact), and each chunklet counts once in the mixing weights
    (Shental et al.'s chunklet sampling assumption). Cannot-links make the
    chunklet labels a Markov network with "different label" pair potentials;
    each connected component of it with at most ``max_configurations``
    labelings is enumerated (exact posterior marginals, MAP labels and prior
    normaliser), larger ones use damped loopy belief propagation (exact on
    trees, approximate on loops).

    Parameters
    ----------
    n_clusters : int, default=2
    covariance_type : {"full", "diag", "spherical"}, default="full"
    reg_covar : float, default=1e-6
        Added to the covariance diagonals (as scikit-learn's ``GaussianMixture``).
    init : {"kmeans", "random", "supervision"}, default="kmeans"
        Starting responsibilities: k-means labels, random (scikit-learn's
        ``"random"``), or nearest of the supervision seeds (labeled class means
        or must-link chunklet centroids).
    n_init : int, default=1
        Restarts; the highest log-likelihood wins.
    max_iter : int, default=100
    tol : float, default=1e-3
        Stop when the log-likelihood per sample changes by less than ``tol``.
    max_configurations : int, default=4096
        Largest ``n_clusters ** size`` of a cannot-link component enumerated exactly.
    search_budget : int, default=20000
        Label assignments the colouring search (:func:`core.colour_units`) may try
        when checking a BP component's colourability or mending its decoded labels.
    inconsistent : {"raise", "drop"}, default="raise"
        A cannot-link between two points of one must-link chunklet (noisy
        constraints) raises :class:`ccbench.base.InfeasibleConstraintsError`, or
        is dropped (``"drop"``: the Markov network has no edge from a chunklet to
        itself, as SSAP-G ignores such cannot-links).
    random_state : int, Generator or None, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        MAP labeling of each exactly solved component; in BP components the
        chunklets are decoded most confident first, each taking its most probable
        label not held by a cannot-linked chunklet decoded before it; when that
        greedy pass breaks a cannot-link, a backtracking search (cost ``-log``
        belief) finds labels meeting them all.
    n_violated_ : int
        Cannot-links the labels break (0 unless the search ran out of
        ``search_budget``; then a warning says so).
    weights_, means_, covariances_ : ndarray
    lower_bound_ : float
        Final log-likelihood ``log p(X | constraints, theta)`` (exact when every
        component is enumerated; with BP components their part is the
        estimate ``E_b[phi] + H(b)``).
    exact_ : bool
        Whether the E-step was exact.
    n_iter_ : int
    converged_ : bool

    Notes
    -----
    Shental et al. (2003): positive constraints, section 3.1 (chunklet
    posteriors and the M-step with chunklets weighted by size, mixing weights
    counting chunklets once); negative constraints, section 3.2 (the Markov
    network ``p(L | Omega) = prod alpha_{l_j} prod_{CL}(1 - delta(l_a, l_b)) / Z``).
    The means and covariances have the usual closed forms because ``Z`` does
    not depend on them; the mixing weights use the unconstrained update,
    backtracked while it lowers the exact objective (a generalised EM step, so
    the log-likelihood never decreases when the E-step is exact). Without
    constraints this is scikit-learn's ``GaussianMixture`` EM.

    References
    ----------
    N. Shental, A. Bar-Hillel, T. Hertz and D. Weinshall, "Computing Gaussian
    mixture models with EM using equivalence constraints", NIPS 16, 2003.
    N. M. Arzeno and H. Vikalo, IEEE TPAMI 2015, section 4.1 (the comparison
    with n_clusters from SCSSAP with infinite penalty).

    Examples
    --------
    >>> import numpy as np
    >>> from ccbench import Constraints, make_method
    >>> X = np.array([[0.0], [0.3], [0.1], [5.0], [5.2], [4.9]])
    >>> cons = Constraints(must_link=[[0, 1]], cannot_link=[[2, 3]], n_samples=6)
    >>> est = make_method("constrained_em", n_clusters=2, random_state=0).fit(X, constraints=cons)
    >>> est.labels_.tolist() in ([0, 0, 0, 1, 1, 1], [1, 1, 1, 0, 0, 0])
    True
    """

    _parameter_constraints = {
        "n_clusters": [Interval(numbers.Integral, 1, None)],
        "covariance_type": [Options(*COVARIANCE_TYPES)],
        "reg_covar": [Interval(numbers.Real, 0, None)],
        "init": [Options("kmeans", "random", "supervision")],
        "n_init": [Interval(numbers.Integral, 1, None)],
        "max_iter": [Interval(numbers.Integral, 1, None)],
        "tol": [Interval(numbers.Real, 0, None)],
        "max_configurations": [Interval(numbers.Integral, 1, None)],
        "search_budget": [Interval(numbers.Integral, 1, None)],
        "inconsistent": [Options("raise", "drop")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters=2,
        *,
        covariance_type="full",
        reg_covar=1e-6,
        init="kmeans",
        n_init=1,
        max_iter=100,
        tol=1e-3,
        max_configurations=4096,
        search_budget=COLOUR_BUDGET,
        inconsistent="raise",
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.covariance_type = covariance_type
        self.reg_covar = reg_covar
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.max_configurations = max_configurations
        self.search_budget = search_budget
        self.inconsistent = inconsistent
        self.random_state = random_state

    def _start(self, X, cons, units, rng):
        k, n = self.n_clusters, len(X)
        if self.init == "random":
            R = rng.uniform(size=(n, k))
            R /= R.sum(1, keepdims=True)
        else:
            if self.init == "kmeans":
                from sklearn.cluster import KMeans

                seed = int(rng.integers(2**31 - 1))
                lab = KMeans(k, n_init=1, random_state=seed).fit(X).labels_
            else:
                lab = np.argmin(sq_dists(X, initial_centres(X, cons, "supervision", k, rng)), axis=1)
            R = np.zeros((n, k))
            R[np.arange(n), lab] = 1.0
        # units start from their members' average responsibility
        unit_resp = group_sums(units.unit_of, R, units.n_units) / units.size[:, None]
        return m_step(X, R, unit_resp, self.covariance_type, self.reg_covar)

    def fit(self, X, y=None, *, constraints=None):
        X, cons = self._validate_fit(X, constraints)
        rng = check_random_state(self.random_state)
        units = Units.build(X, cons, drop_inconsistent=self.inconsistent == "drop")
        if self.n_clusters == 1 and len(units.cannot):
            raise InfeasibleConstraintsError("cannot-links need n_clusters >= 2")
        net = CannotLinkNetwork(
            units.cannot, units.n_units, self.n_clusters, self.max_configurations, self.search_budget
        )
        best = None
        for _ in range(self.n_init):
            weights, means, covs = self._start(X, cons, units, rng)
            run = constrained_em_single(
                X, units, net, weights, means, covs,
                cov_type=self.covariance_type, reg_covar=self.reg_covar, max_iter=self.max_iter, tol=self.tol,
            )
            if best is None or run["loglik"] > best["loglik"]:
                best = run
        self.labels_ = best["labels"].astype(np.intp)
        self.weights_, self.means_, self.covariances_ = best["weights"], best["means"], best["covs"]
        self.lower_bound_ = float(best["loglik"])
        self.n_iter_, self.converged_ = best["n_iter"], best["converged"]
        self.exact_ = net.is_exact
        cl = cons.cannot_link[units.unit_of[cons.cannot_link[:, 0]] != units.unit_of[cons.cannot_link[:, 1]]]
        self.n_violated_ = int(np.sum(self.labels_[cl[:, 0]] == self.labels_[cl[:, 1]]))  # dropped ones aside
        if self.n_violated_:
            warnings.warn(
                f"constrained EM's labels break {self.n_violated_} of {cons.n_cannot_link} cannot-links: the "
                f"loopy-BP decoding and the colouring search (search_budget={self.search_budget}) found no "
                f"labelling meeting them; raise search_budget or max_configurations",
                UserWarning,
                stacklevel=2,
            )
        if not self.converged_:
            warnings.warn(
                f"constrained EM did not converge in max_iter={self.max_iter} iterations",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self
