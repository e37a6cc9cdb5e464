"""SCAP family: properties that the mutation run of issue 41 (seed 20261126) found unguarded.

Each test names the line it guards; see ``tests/mutation/issue41/README.md``. The
n_clusters search of scap/ssap_l is tested in ``tests/test_ap_n_clusters.py`` too, which is
outside this family's test globs (``tests/test_scap*.py``): the mutation runner does not run it.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from ccbench import make_method
from ccbench.base import ConvergenceWarning


def _four_blobs():
    rng = np.random.default_rng(0)
    return np.concatenate([c + 0.3 * rng.normal(size=(12, 2)) for c in ([0, 0], [6, 0], [0, 6], [6, 6])])


@pytest.mark.parametrize("k", [1, 3])
def test_scap_n_clusters_is_met_exactly(k):
    # scap.py fit: n_clusters >= 1 is accepted, and the search counts clusters as
    # labels_.max() + 1 (labels 0..K-1), so the fit it keeps has exactly k clusters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = make_method("scap", n_clusters=k, random_state=0).fit(_four_blobs())
    assert est.n_clusters_exact_
    assert np.unique(est.labels_).size == k and est.labels_.max() + 1 == k


def test_unreachable_n_clusters_warning_names_the_searched_interval_of_p():
    # scap.py fit: p is a penalty, searched in [-s_max, -low] (preference_bracket; both ends >= 0
    # for negative squared distances); the warning must print that interval, not its mirror.
    # Ten points of one blob cannot be ten clusters here (the search runs out of steps)
    X = _four_blobs()[:10]
    with pytest.warns(ConvergenceWarning, match="no p in") as rec:
        est = make_method("scap", n_clusters=10, random_state=0).fit(X)
    assert not est.n_clusters_exact_
    msg = next(str(w.message) for w in rec if "no p in" in str(w.message))
    a, b = (float(v) for v in re.search(r"no p in \[([^,]+), ([^\]]+)\]", msg).groups())
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    off = d2[~np.eye(10, dtype=bool)]
    assert a == pytest.approx(off.min(), rel=1e-3)
    from ccbench.similarity import preference_bracket

    assert b == pytest.approx(-preference_bracket(X)[0], rel=1e-3) and b > a


def test_only_dense_memory_is_checked_against_the_available_memory(monkeypatch):
    # scap.py _fit: memory='dense' holds S and two message arrays (3 x 8 N^2 bytes) and is
    # refused when they do not fit; memory='linear' (eqs. 16-20, O(N)) is the way out and
    # must run where dense is refused
    from ccbench import base
    from ccbench.base import InsufficientMemoryError

    monkeypatch.setattr(base, "available_memory", lambda: 10_000)  # bytes: 48 points need 55 kB dense
    X = _four_blobs()
    with pytest.raises(InsufficientMemoryError, match="use memory='linear'"):
        make_method("scap", memory="dense", random_state=0).fit(X)
    est = make_method("scap", memory="linear", random_state=0).fit(X)
    assert np.unique(est.labels_).size >= 1
