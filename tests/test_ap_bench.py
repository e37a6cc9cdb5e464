"""The load-robust ratio of the AP asv benchmarks (``bench_ap.paired_ratio``), on a fake clock."""

import types

import pytest
from benchmarks import bench_ap


class FakeMachine:
    """A clock that fits advance: ``cost`` seconds per iteration times the current load.

    ``bursts`` maps a call number (0, 1, ... over all fits) to a load factor for that call
    only, i.e. another job that slows one fit and not the next.
    """

    def __init__(self, bursts=()):
        self.now = 0.0
        self.calls = []
        self.bursts = dict(bursts)

    def fit(self, name, cost):
        def run(i):
            load = self.bursts.get(len(self.calls), 1.0)
            self.calls.append(name)
            self.now += 0.5 + cost * i * load  # 0.5 s of set-up that the slope cancels

        return run

    def clock(self):
        return self.now


@pytest.fixture
def machine(monkeypatch):
    def make(bursts=()):
        m = FakeMachine(bursts)
        fake_time = types.SimpleNamespace(perf_counter=m.clock, process_time=m.clock)
        monkeypatch.setattr(bench_ap, "time", fake_time)
        return m

    return make


def test_quiet_machine_gives_the_true_ratio(machine):
    m = machine()
    out = bench_ap.paired_ratio(m.fit("num", 2e-3), m.fit("den", 1e-3), iters=(5, 20), repeat=5)
    assert out["ratio"] == pytest.approx(2.0)
    assert out["num"] == pytest.approx(2e-3) and out["den"] == pytest.approx(1e-3)


def test_bursts_on_one_side_of_a_few_repeats_do_not_move_the_median(machine):
    # 7 repeats x 2 sides x 2 fits = 28 calls; a 5x burst hits the second fit (the one
    # with more iterations) of num in repeat 0, of den in repeats 1 and 3
    m = machine({1: 5.0, 4 + 1: 5.0, 12 + 1: 5.0})
    out = bench_ap.paired_ratio(m.fit("num", 2e-3), m.fit("den", 1e-3), iters=(5, 20), repeat=7)
    assert out["ratio"] == pytest.approx(2.0)
    assert sum(r != pytest.approx(2.0) for r in out["ratios"]) == 3  # they were hit, and dropped


def test_sides_alternate_which_goes_first(machine):
    m = machine()
    bench_ap.paired_ratio(m.fit("num", 1e-3), m.fit("den", 1e-3), iters=(1, 2), repeat=3)
    first_of_each_repeat = m.calls[0::4]
    assert first_of_each_repeat == ["num", "den", "num"]
    assert len(m.calls) == 12  # 3 repeats x 2 sides x 2 iteration counts


def test_smoke_run_uses_one_repeat():
    """The CI smoke run (CCBENCH_BENCH_QUICK) must stay one repeat; a full run several."""
    assert bench_ap.REPEATS == (1 if bench_ap.QUICK else 7)
    assert 2000 in bench_ap.RATIO_SIZES  # the size the goals are stated for
