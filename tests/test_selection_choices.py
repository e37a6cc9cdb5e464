"""CVCP keeps the best-scoring combination of its grid (issue 41, section 2).

The grid is built so that the combinations' mean held-out scores all differ and the best
is neither the first in grid order, nor the last, nor the default: keeping the worst, the
first, the last or the default would each be noticed. ``tests/mutation/reversals.py``
proves the test by reversing the comparison.
"""

import numpy as np
import pytest

from ccbench.constraints import random_pairs
from ccbench_plugins.selection import cvcp


class Threshold:
    """Cluster 1-D points by ``x > threshold``."""

    def __init__(self, threshold=5.0):
        self.threshold = threshold

    def fit(self, X, y=None, *, constraints=None):
        self.labels_ = (np.asarray(X)[:, 0] > self.threshold).astype(int)
        return self


def test_cvcp_keeps_the_combination_with_the_best_mean_score():
    X = np.r_[np.arange(20) / 2.0, 20 + np.arange(20) / 2.0][:, None]
    group = (np.arange(40) >= 20).astype(int)
    cons = random_pairs(group, 40, rng=np.random.default_rng(0))
    grid = {"threshold": (2.0, 7.0, 15.0, 23.0, 28.0)}
    sel = cvcp.select(lambda **p: Threshold(**p), X, cons, grid, default={"threshold": 23.0}, n_folds=3,
                      random_state=0)
    means = np.array([s for _, s in sel.scores])
    # the scores disagree: the best is unique, and not the first, the last or the default
    best = int(np.argmax(means))
    assert np.sum(means >= means[best] - 1e-9) == 1
    assert grid["threshold"][best] not in (grid["threshold"][0], grid["threshold"][-1], 23.0)
    assert sel.params == {"threshold": grid["threshold"][best]}
    assert dict(sel.scores[best][0]) == sel.params and means[best] == pytest.approx(means.max())
