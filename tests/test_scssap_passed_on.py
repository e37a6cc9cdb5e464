"""SCSSAP-ML runs AP on the similarity of the metrics it learned (issue 41, section 2).

Algorithm 2 alternates SCSSAP on s'(i, j) = -0.5 ||x_i - x_j||^2_{A_i} - 0.5 ||x_i - x_j||^2_{A_j}
with the metric update. At convergence (the clustering unchanged), the labels are SCSSAP's on
s' built from the returned metrics (``metrics_``, A_i that of i's cluster). The test builds
that similarity explicitly, runs the same SCSSAP on it, and checks the fit equals that route
and differs from SCSSAP on the raw similarity (the uniform metric I / d), on data where
feature 1 is wide noise. ``tests/mutation/reversals.py`` proves it by handing the raw metric on.
"""

import warnings

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from ccbench import make_method
from ccbench import constraints as cgen
from ccbench_plugins.affinity.core import set_preference
from ccbench_plugins.affinity.scssap import metric_similarity


@pytest.mark.parametrize("metric", ["cluster", "single"])
def test_scssap_ml_clusters_with_its_learned_metrics(metric):
    rng = np.random.default_rng(0)
    n = 40
    y = np.repeat([0, 1], n // 2)
    X = np.c_[y + rng.normal(0, 0.05, n), rng.uniform(0, 10, n)]
    cons = cgen.random_pairs(y, 10, rng=np.random.default_rng(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_method("scssap_ml", metric=metric, random_state=0).fit(X, constraints=cons)
    assert est.converged_ and est.n_outer_iter_ > 2
    point_metrics = est.metrics_[est.labels_] if metric == "cluster" else np.repeat(est.metrics_, n, axis=0)

    def scssap_on(pm):
        S = metric_similarity(X, pm)
        set_preference(S, None, np.random.default_rng(0))
        return est._run(S, cons, warn=False).labels

    learned = scssap_on(point_metrics)
    raw = scssap_on(np.full(X.shape, 1.0 / X.shape[1]))
    assert adjusted_rand_score(learned, raw) < 0.5  # the learned metrics change the answer
    assert adjusted_rand_score(est.labels_, learned) == 1.0
    assert adjusted_rand_score(est.labels_, y) == 1.0
