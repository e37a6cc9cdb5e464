"""COBS keeps the pool member that satisfies the most constraints (issue 41, section 2).

On data whose pool members satisfy different numbers of constraints, with the first
member not the best, the winner must be the member of the highest score (keeping the
worst, or the first, would be noticed). ``tests/mutation/reversals.py`` proves the test by
reversing the comparison.
"""

import warnings

import numpy as np

from ccbench import make_method
from ccbench import constraints as cgen


def test_cobs_keeps_the_member_with_the_most_satisfied_constraints():
    rng = np.random.default_rng(0)
    centres = np.array([[0, 0], [6, 0], [0, 6], [6, 6]], float)
    X = np.concatenate([c + rng.normal(0, 0.7, (15, 2)) for c in centres])
    y = np.repeat(np.arange(4), 15)
    cons = cgen.random_pairs(y, 30, rng=np.random.default_rng(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make_method("cobs", members=("kmeans",), k_max=6, random_state=0).fit(X, constraints=cons)
    scores = np.array([e["score"] for e in est.pool_])
    best = int(np.argmax(scores))
    assert np.sum(scores == scores[best]) == 1 and scores[0] < scores[best]  # members disagree
    assert est.selected_["score"] == scores.max()
    assert est.selected_["grid"] == est.pool_[best]["grid"]
    np.testing.assert_array_equal(est.labels_, est.pool_[best]["labels"])
