"""Property tests (hypothesis): Constraints, noise injectors, pairing."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ccbench import Constraints
from ccbench.constraints import random_pairs
from ccbench.data import noise
from ccbench.running.protocol import trial_seed

N = 9
pair = st.tuples(st.integers(0, N - 1), st.integers(0, N - 1)).filter(lambda p: p[0] != p[1])


def _components(n, edges):
    """Connected components by repeated relabelling (a second route to the chunklets)."""
    comp = list(range(n))
    changed = True
    while changed:
        changed = False
        for i, j in edges:
            low = min(comp[i], comp[j])
            if comp[i] != low or comp[j] != low:
                comp[i] = comp[j] = low
                changed = True
    return comp


@settings(max_examples=150, deadline=None)
@given(ml=st.lists(pair, max_size=12), cl=st.lists(pair, max_size=12))
def test_constraints_normalise_and_know_their_conflicts(ml, cl):
    ml_keys = {tuple(sorted(p)) for p in ml}
    cl_keys = {tuple(sorted(p)) for p in cl} - ml_keys  # a pair in both sets is refused; drop it here
    cons = Constraints(sorted(ml_keys) or None, sorted(cl_keys) or None, n_samples=N)
    assert {tuple(p) for p in cons.must_link} == ml_keys and {tuple(p) for p in cons.cannot_link} == cl_keys
    assert np.all(cons.must_link[:, 0] < cons.must_link[:, 1]) if len(cons.must_link) else True
    comp = _components(N, ml_keys)
    conflicts = sum(comp[i] == comp[j] for i, j in cl_keys)
    assert cons.n_conflicts() == conflicts
    assert cons.is_consistent() == (conflicts == 0)


@settings(max_examples=60, deadline=None)
@given(m=st.integers(0, 30), rate=st.floats(0, 1), seed=st.integers(0, 2**32 - 1))
def test_constraint_flip_moves_exactly_round_rate_m_pairs(m, rate, seed):
    y = np.repeat([0, 1, 2], 10)
    cons = random_pairs(y, n_constraints=m, rng=np.random.default_rng(seed))
    flipped = noise.constraint_flip(cons, rate=rate, rng=np.random.default_rng(seed + 1))
    before = {(tuple(p), True) for p in cons.must_link} | {(tuple(p), False) for p in cons.cannot_link}
    after = {(tuple(p), True) for p in flipped.must_link} | {(tuple(p), False) for p in flipped.cannot_link}
    assert len(after) == len(before) == m
    assert len(before - after) == int(round(rate * m))


@settings(max_examples=60, deadline=None)
@given(rate=st.floats(0, 1), seed=st.integers(0, 2**32 - 1))
def test_label_noise_changes_exactly_round_rate_n_labels(rate, seed):
    y = np.repeat([0, 1, 2], 7)
    noisy = noise.label_noise(y, rate=rate, rng=np.random.default_rng(seed))
    assert np.sum(noisy != y) == int(round(rate * len(y)))
    assert set(np.unique(noisy)) <= {0, 1, 2}


@settings(max_examples=40, deadline=None)
@given(method=st.sampled_from(["ap", "kmeans", "scssap", "srcp"]), params=st.dictionaries(
    st.sampled_from(["damping", "n_init", "p"]), st.integers(1, 9), max_size=2), trial=st.integers(0, 50))
def test_trial_seed_ignores_the_method(method, params, trial):
    cell = {"seed": 3, "dataset": {"name": "iris", "preprocess": "none"},
            "constraints": {"name": "random_pairs", "n_constraints": 30}, "noise": {"name": "none", "rate": 0.0}}
    base = trial_seed({**cell, "method": {"name": "kmeans"}}, trial)
    assert trial_seed({**cell, "method": {"name": method, **params}}, trial) == base
    scaled = {**cell, "dataset": {"name": "iris", "preprocess": "standardize"}}
    assert trial_seed({**scaled, "method": {"name": method}}, trial) == base  # scaling variants are paired
    assert trial_seed({**cell, "method": {"name": method}}, trial + 1) != base
