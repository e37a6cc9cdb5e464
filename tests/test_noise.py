import numpy as np
import pytest

from ccbench import constraints as cgen
from ccbench.data import noise


@pytest.mark.parametrize("rate", [0.0, 0.05, 0.1, 0.2, 1.0])
def test_label_noise_changes_exactly_the_asked_fraction(rate):
    y = np.repeat([0, 1, 2], 50)
    noisy = noise.label_noise(y, rate=rate, rng=np.random.default_rng(3))
    assert np.sum(noisy != y) == round(rate * len(y))
    assert set(np.unique(noisy)) <= {0, 1, 2}
    assert noisy is not y


def test_label_noise_refuses_bad_rates():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        noise.label_noise([0, 1], rate=1.5, rng=np.random.default_rng(0))


@pytest.mark.parametrize("rate", [0.05, 0.1, 0.5])
def test_constraint_flip_moves_exactly_the_asked_fraction(rate):
    y = np.repeat([0, 1, 2], 40)
    clean = cgen.random_pairs(y, 200, rng=np.random.default_rng(1))
    flipped = noise.constraint_flip(clean, rate=rate, rng=np.random.default_rng(2))
    assert len(flipped) == len(clean)
    clean_ml = {tuple(p) for p in clean.must_link}
    flipped_ml = {tuple(p) for p in flipped.must_link}
    moved = len(clean_ml ^ flipped_ml)  # pairs that changed set
    assert moved == round(rate * len(clean))
    # a flipped must-link is now between same-label points in the cannot-link set
    wrong_cl = y[flipped.cannot_link[:, 0]] == y[flipped.cannot_link[:, 1]]
    wrong_ml = y[flipped.must_link[:, 0]] != y[flipped.must_link[:, 1]]
    assert wrong_cl.sum() + wrong_ml.sum() == moved


def test_constraint_flip_keeps_confidences_with_their_pairs():
    from ccbench import Constraints

    c = Constraints([[0, 1]], [[2, 3]], n_samples=4,
                    must_link_weight=[0.3], cannot_link_weight=[0.9])
    f = noise.constraint_flip(c, rate=1.0, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(f.must_link, [[2, 3]])
    np.testing.assert_allclose(f.must_link_weight, [0.9])
    np.testing.assert_allclose(f.cannot_link_weight, [0.3])


def test_the_protocol_applies_each_noise_at_its_stage():
    # label noise corrupts the labels the scheme draws from; constraint noise flips drawn pairs and leaves
    # the labels alone (ccbench.running.protocol.draw_supervision)
    from ccbench.running.protocol import draw_supervision

    y = np.repeat([0, 1, 2], 20)
    scheme = {"name": "random_pairs", "n_constraints": 40}

    def disagreeing(cons, labels):
        ml, cl = cons.must_link, cons.cannot_link
        return int(np.sum(labels[ml[:, 0]] != labels[ml[:, 1]]) + np.sum(labels[cl[:, 0]] == labels[cl[:, 1]]))

    cons, used = draw_supervision(y, scheme, {"name": "constraint_flip", "rate": 0.25}, np.random.default_rng(0))
    assert np.array_equal(used, y) and len(cons) == 40 and disagreeing(cons, y) == 10
    cons, used = draw_supervision(y, scheme, {"name": "label_noise", "rate": 0.25}, np.random.default_rng(0))
    assert np.sum(used != y) == 15 and len(cons) == 40 and disagreeing(cons, used) == 0
