"""peer_cobras (plugins/cobras/peer.py): the COBRAS authors' cobras-ts 0.1.3 in a worker, on our estimator API.

Skipped without the package (the optional extra 'peers'; CI does not install it), except the test that
its absence names the fix, which runs everywhere (the worker starts without the package).
"""

import importlib.util
import os

import numpy as np
import pytest

from ccbench.metrics import adjusted_rand
from ccbench_plugins.active.oracle import Oracle
from ccbench_plugins.cobras import peer
from ccbench_plugins.cobras.cobras import COBRAS
from ccbench_plugins.cobras.core import oracle_labels
from ccbench_plugins.cobras.peer import PeerCOBRAS, PeerFailure
from test_cobras import THREE, _blobs

needs_cobras_ts = pytest.mark.skipif(importlib.util.find_spec("cobras_ts") is None,
                                     reason="cobras-ts not installed (optional extra: pip install -e '.[peers]')")




class _KillsItsProcess:
    """An oracle that ends the process asking it (the worker), as the out-of-memory killer would."""

    def __call__(self, i, j):
        os._exit(3)


class _AnswersMaybe:
    """An oracle answering other than a bool."""

    def __call__(self, i, j):
        return "maybe"


@needs_cobras_ts
@pytest.mark.parametrize("random_state", [0, 1])
def test_exact_oracle_recovers_separated_blobs_and_the_record_is_complete(random_state):
    X, y = THREE
    model = PeerCOBRAS(max_questions=20, random_state=random_state).fit(X, oracle=Oracle(y))
    assert adjusted_rand(y, model.labels_) == pytest.approx(1.0)
    assert model.n_questions_ == len(model.queried_pairs_) == len(model.answers_) <= 20
    assert model.labels_history_.shape == (model.n_questions_ + 1, len(y))
    assert np.all(model.labels_history_[0] == model.labels_history_[0, 0])  # row 0: one cluster
    np.testing.assert_array_equal(model.labels_history_[-1], model.labels_)  # run past its first iteration
    # the package may ask a pair again (module docstring); what it asked is counted, by a second route
    pairs = [tuple(p) for p in model.queried_pairs_.tolist()]
    assert model.n_repeated_questions_ == len(pairs) - len(set(pairs))
    assert np.all(model.queried_pairs_[:, 0] < model.queried_pairs_[:, 1])


@needs_cobras_ts
@pytest.mark.parametrize("random_state", [0, 1])
def test_each_row_is_what_the_package_returns_when_stopped_there(random_state):
    """Two routes to the partition after t answers: row t of one run, and the result of a run given a
    budget of t (same seed, so the same path up to question t). They agree where the t-th answer is a
    cannot-link after the first iteration (after a must-link the longer run may find its merging phase
    complete without another question). In the first iteration the rows stay one cluster while a run
    stopped there returns the k-means split: the difference the module docstring documents."""
    X, y = THREE
    full = PeerCOBRAS(max_questions=20, random_state=random_state).fit(X, oracle=Oracle(y))
    first_complete = int(np.flatnonzero([len(np.unique(row)) > 1 for row in full.labels_history_])[0])
    checked = 0
    for t in range(1, full.n_questions_ + 1):
        cut = PeerCOBRAS(max_questions=t, random_state=random_state).fit(X, oracle=Oracle(y))
        np.testing.assert_array_equal(cut.queried_pairs_, full.queried_pairs_[:t])
        if t < first_complete:
            assert len(np.unique(full.labels_history_[t])) == 1 < len(np.unique(cut.labels_))
        elif t > first_complete and not full.answers_[t - 1]:
            assert adjusted_rand(cut.labels_, full.labels_history_[t]) == pytest.approx(1.0), t
            checked += 1
    assert first_complete >= 2 and checked >= 5


@needs_cobras_ts
@pytest.mark.parametrize("random_state", [0, 3])
def test_peer_and_ours_agree_where_the_answer_is_forced(random_state):
    """Three tight blobs far apart, an exact oracle: both end on the three blobs."""
    X, y = _blobs([9, 7, 5], [[0, 0], [30, 0], [0, 30]], seed=random_state, spread=0.2)
    theirs = PeerCOBRAS(max_questions=25, random_state=random_state).fit(X, oracle=Oracle(y))
    ours = COBRAS(max_questions=25, random_state=random_state).fit(X, oracle=Oracle(y))
    assert len(np.unique(theirs.labels_)) == len(np.unique(ours.labels_)) == 3
    assert adjusted_rand(theirs.labels_, ours.labels_) == pytest.approx(1.0)


@needs_cobras_ts
@pytest.mark.parametrize("persistent", [True, False])
def test_its_answers_are_the_oracles(persistent):
    X, y = THREE
    asked = Oracle(y, noise_rate=0.3, persistent=persistent, seed=4)
    model = PeerCOBRAS(max_questions=30, random_state=0).fit(X, oracle=asked)
    replay = Oracle(y, noise_rate=0.3, persistent=persistent, seed=4)  # the same draws, asked in the same order
    expected = [replay(i, j) for i, j in model.queried_pairs_]
    np.testing.assert_array_equal(model.answers_, expected)
    truth = y[model.queried_pairs_[:, 0]] == y[model.queried_pairs_[:, 1]]
    assert np.any(model.answers_ != truth)  # the noise reached the package: not the labels' answers
    assert asked.n_queries == model.n_questions_  # the worker's oracle state came back


@needs_cobras_ts
def test_a_failure_inside_the_package_is_ours_and_a_row_status_never_a_crash(request):
    from ccbench import registry
    from ccbench_plugins.active.anytime import anytime_curve

    X, y = np.zeros((10, 2)), np.arange(10) % 2  # every point equal: the package's merge indexes an empty list
    with pytest.raises(PeerFailure, match="IndexError"):
        PeerCOBRAS(max_questions=5, random_state=0).fit(X, oracle=Oracle(y))
    registry.load_plugins(["ccbench_plugins.cobras.peer"])
    request.addfinalizer(lambda: registry.unregister_plugin("ccbench_plugins.cobras.peer"))
    rows = anytime_curve(X, y, strategy=None, method="peer_cobras", budgets=[0, 5])
    assert rows["status"].str.startswith("method error: PeerFailure").all()
    assert rows["ari_all"].isna().all()
    with pytest.raises(PeerFailure, match="died"):  # the worker killed in the middle of the fit
        PeerCOBRAS(max_questions=5, random_state=0).fit(*THREE[:1], oracle=_KillsItsProcess())
    # and the curve of a good fit through the registry, from a fresh worker
    X3, y3 = THREE
    good = anytime_curve(X3, y3, strategy=None, method="peer_cobras", budgets=[0, 20])
    assert list(good["status"]) == ["ok", "ok"] and good["ari_all"].iloc[-1] == pytest.approx(1.0)


@needs_cobras_ts
def test_an_oracle_that_cannot_reach_the_worker_and_the_labels_route():
    X, y = THREE
    with pytest.raises(TypeError, match="must pickle"):
        PeerCOBRAS(max_questions=5).fit(X, oracle=lambda i, j: True)
    with pytest.raises(TypeError, match="must return a bool"):  # the oracle's error, as ours raises it
        PeerCOBRAS(max_questions=5).fit(X, oracle=_AnswersMaybe())
    model = PeerCOBRAS(max_questions=20, random_state=0).fit(X, constraints=oracle_labels(y))
    assert adjusted_rand(y, model.labels_) == pytest.approx(1.0)


def test_without_the_package_the_error_names_the_fix(monkeypatch):
    X, y = THREE
    monkeypatch.setattr(PeerCOBRAS, "_module", "cobras_ts_not_installed_here")
    with pytest.raises(ImportError, match=r"pip install -e '\.\[peers\]'.*cobras-ts==0\.1\.3"):
        PeerCOBRAS(max_questions=5).fit(X, oracle=Oracle(y))
