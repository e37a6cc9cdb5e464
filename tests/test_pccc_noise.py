"""PCCC's confidence noise ``pccc_confidence`` (plugins/datasets/pccc_supervision.py, PCCC-Data's
``generate_noisy_constraints``): each pair right with probability p ~ U(l, 1), flipped otherwise, weight
2 (p - 1/2); the weights reach a method that reads them (PCCC)."""

from __future__ import annotations

import numpy as np
import pytest

from ccbench import registry
from ccbench.constraints import Constraints

MODULE = "ccbench_plugins.datasets.pccc_supervision"


@pytest.fixture(autouse=True)
def _plugin():
    registry.load_plugins([MODULE])  # also an entry point; named here so the tests never depend on the install


def _noise(constraints, low, rng):
    return registry.get_noise_spec("pccc_confidence").func(constraints, low=low, rng=rng)


def _random_constraints(n=400, m=20_000, seed=0):
    """m distinct pairs of n points, half must-links (types need not follow any labels here)."""
    rng = np.random.default_rng(seed)
    keys = rng.choice(n * n, size=3 * m, replace=False)
    i, j = np.divmod(keys, n)
    keep = i < j
    pairs = np.column_stack([i[keep], j[keep]])[:m]
    return Constraints(pairs[::2], pairs[1::2], n_samples=n)


def _types(cons):
    """{pair key: True for must-link} and {pair key: weight}."""
    n = cons.n_samples
    keys = np.r_[cons.must_link @ [n, 1], cons.cannot_link @ [n, 1]]
    is_ml = np.r_[np.ones(cons.n_must_link, bool), np.zeros(cons.n_cannot_link, bool)]
    weight = np.r_[cons.must_link_weight, cons.cannot_link_weight]
    order = np.argsort(keys)
    return keys[order], is_ml[order], weight[order]


@pytest.mark.parametrize("low", [0.5, 0.7, 0.9])
def test_flip_rate_is_the_mean_of_1_minus_p_and_the_flip_is_decided_by_p(low):
    clean = _random_constraints()
    noisy = _noise(clean, low, np.random.default_rng(1))
    keys0, ml0, _ = _types(clean)
    keys1, ml1, weight = _types(noisy)
    np.testing.assert_array_equal(keys0, keys1)  # the same pairs, some moved
    flipped = ml0 != ml1
    m, q = len(flipped), (1 - low) / 2  # E[1 - p] for p ~ U(low, 1): each flip is Bernoulli(q), independent
    assert abs(flipped.sum() - m * q) <= 4.5 * np.sqrt(m * q * (1 - q))
    # a flip with probability 1 - p of the pair's own p: E[w 1{flip}] = E[(2p - 1)(1 - p)]
    #   = -2 E[p^2] + 3 E[p] - 1 = -2 (1 + l + l^2) / 3 + 3 (1 + l) / 2 - 1
    # (a flip independent of p, at the same rate, gives E[w] q instead: 0.125 at l = 0.5, not 0.083)
    expected = -2 * (1 + low + low ** 2) / 3 + 3 * (1 + low) / 2 - 1
    w_flip = weight * flipped
    assert abs(w_flip.mean() - expected) <= 4.5 * w_flip.std() / np.sqrt(m) + 1e-12


def _reproduced(cons, low, rng):
    """The draws as the docstring states them, on the same stream: p for every pair in lexicographic
    order, then V; (keys, must-link after noise, weight)."""
    keys, is_ml, _ = _types(cons)
    p = low + (1 - low) * rng.random(len(keys))
    v = rng.random(len(keys))
    return keys, np.where(p >= v, is_ml, ~is_ml), 2 * (p - 0.5)


@pytest.mark.parametrize("low", [0.5, 0.8])
def test_weights_are_2_p_minus_half_of_the_drawn_p(low):
    from ccbench_plugins.datasets.pccc_supervision import pccc_random_pairs

    y = np.random.default_rng(2).integers(0, 3, size=200)
    rng = np.random.default_rng(7)
    noisy = _noise(pccc_random_pairs(y, fraction=0.1, rng=rng), low, rng)  # one stream, as the harness does
    again = np.random.default_rng(7)
    keys, is_ml, weight = _reproduced(pccc_random_pairs(y, fraction=0.1, rng=again), low, again)
    got_keys, got_ml, got_weight = _types(noisy)
    np.testing.assert_array_equal(got_keys, keys)
    np.testing.assert_array_equal(got_ml, is_ml)
    np.testing.assert_allclose(got_weight, weight, rtol=0, atol=1e-15)
    assert got_weight.min() >= 0 and got_weight.max() <= 1
    assert got_weight.min() < 0.1 + 2 * (low - 0.5) and got_weight.max() > 0.9  # spread over [2l - 1, 1]


def test_low_1_flips_nothing_and_gives_weight_1():
    clean = _random_constraints(m=2_000)
    noisy = _noise(clean, 1.0, np.random.default_rng(3))
    assert noisy == clean
    assert np.all(noisy.must_link_weight == 1) and np.all(noisy.cannot_link_weight == 1)


@pytest.mark.parametrize("low", [0.49, 1.01, -1, float("nan"), True, "0.7"])
def test_a_bad_low_names_the_valid_range(low):
    with pytest.raises(ValueError, match=r"low must lie in \[0\.5, 1\]"):
        _noise(_random_constraints(m=10), low, np.random.default_rng(0))


def test_labels_and_weighted_pairs_are_refused_by_name():
    labelled = Constraints.from_labels(np.array([0, 0, 1, -1]))
    with pytest.raises(ValueError, match="revealed labels"):
        _noise(labelled, 0.8, np.random.default_rng(0))
    weighted = Constraints([(0, 1)], [(1, 2)], n_samples=3, must_link_weight=[0.5])
    with pytest.raises(ValueError, match="weights other than 1"):
        _noise(weighted, 0.8, np.random.default_rng(0))


@pytest.fixture(scope="module")
def pccc_module():
    """The pccc method's module, imported once (scipy's MILP and scikit-learn: most of the test's time)."""
    from ccbench_plugins.kmeans import pccc

    return pccc


def test_the_confidences_reach_pccc_through_the_harness_draw(monkeypatch, pccc_module):
    """draw_supervision (the harness's draw) with scheme and noise from the registry, then the pccc method:
    the soft pairs and confidences its step 1 receives are the pairs with weight 2 (p - 1/2) of the drawn p."""
    from sklearn.datasets import make_blobs

    from ccbench.running.protocol import draw_supervision
    from ccbench_plugins.datasets.pccc_supervision import pccc_random_pairs

    X, y = make_blobs(60, centers=3, random_state=0)
    low, seed = 0.5, 4
    cons, _ = draw_supervision(y, {"name": "pccc_random_pairs", "fraction": 0.15},
                               {"name": "pccc_confidence", "low": low}, np.random.default_rng(seed))
    again = np.random.default_rng(seed)
    keys, is_ml, weight = _reproduced(pccc_random_pairs(y, fraction=0.15, rng=again), low, again)

    seen = {}
    split = pccc_module._split

    def spy(c, hard_weight):
        out = split(c, hard_weight)
        seen["split"] = out
        return out

    monkeypatch.setattr(pccc_module, "_split", spy)
    registry.make_method("pccc", n_clusters=3, random_state=0).fit(X, constraints=cons)
    hml, hcl, sml, sml_w, scl, scl_w = seen["split"]
    assert len(hml) == len(hcl) == 0  # every weight < 1: all soft, as PCCC-Data's sml / scl
    for pairs, w, kind in ((sml, sml_w, True), (scl, scl_w, False)):
        want = np.flatnonzero(is_ml == kind)
        np.testing.assert_array_equal(pairs @ [60, 1], keys[want])
        np.testing.assert_allclose(w, weight[want], rtol=0, atol=1e-15)
