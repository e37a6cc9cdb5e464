"""The active page ranks the area on the points in no asked pair (``auc_ari_unqueried``) with the
headline's statistics (issue 53): paired differences against ``random/<method>`` and the best entry, data
sets as blocks. Rows made by hand, so the page's numbers are checked against differences computed here
from the values the rows were built from."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from ccbench.reporting import active as act
from ccbench.reporting.active_page import write_active_report
from ccbench.reporting.leaderboard.gains import bootstrap_ci

SETS = [f"s{d}" for d in range(8)]
#: the oracle noise rates of a data set: two cells on s0 (a per-data-set difference is the mean over its
#: cells), one elsewhere (each cell costs the page bootstrap intervals: the test stays small)
NOISES = {"s0": (0.0, 0.1)}
TRIALS = 3
#: per data set, npu's unqueried area minus random's (ahead on all 8 sets) and COBRAS's (4 up, 4 down)
NPU_AHEAD = np.arange(1, 9) / 100
COBRAS_MIXED = np.array([0.03, -0.03, 0.01, -0.01, 0.02, -0.02, 0.04, -0.04])
#: npu's all-points area minus random's on every set: behind, so the two rankings disagree
NPU_ALL = -0.05


def _random_area(d: int, noise: float, t: int) -> float:
    return 0.3 + 0.05 * d + 0.01 * t - 0.5 * noise


def _rows() -> pd.DataFrame:
    """Anytime rows: 8 data sets (s0 at two noise rates) x 3 trials for random/pck_means, npu/pck_means and
    COBRAS, plus a data set ``tiny`` where every unqueried area is NaN (too few points left unasked).
    npu's offset varies with the noise rate and the trial (+-0.01, +-0.02) but averages to NPU_AHEAD per
    data set, so a per-data-set difference is right only if cells and trials are averaged as documented."""
    out = []

    def add(dataset, strategy, method, noise, t, area, unqueried):
        out.append({"dataset.name": dataset, "method.name": method, "constraints.name": "active_queries",
                    "constraints.strategy": strategy, "constraints.budget": 20, "noise.name": "constraint_flip",
                    "noise.rate": noise, "trial": t, "status": "ok", "error": None, "auc_ari": area,
                    "auc_ari_unqueried": unqueried, "ari_all_q0": 0.0, "ari_all_q20": 2 * area,
                    "ari_unqueried_q0": 0.0, "ari_unqueried_q20": 2 * unqueried, "n_samples": 100,
                    "strategy_cpu_per_query": 0.01, "refit_cpu_mean": 0.1, "curve_cpu_time": 1.0})

    for d, dataset in enumerate(SETS):
        rates = NOISES.get(dataset, (0.0,))
        for noise in rates:
            for t in range(TRIALS):
                base = _random_area(d, noise, t)
                # +-0.01 between the two cells of s0, +-0.02 between trials: both average out per data set
                wobble = ((0.01 if noise == 0.0 else -0.01) if len(rates) > 1 else 0.0) + 0.02 * (t - 1)
                add(dataset, "random", "pck_means", noise, t, base + 0.1, base)
                add(dataset, "npu", "pck_means", noise, t, base + 0.1 + NPU_ALL, base + NPU_AHEAD[d] + wobble)
                add(dataset, "cobras", "cobras", noise, t, base, base + COBRAS_MIXED[d])
    for strategy, method, area in (("random", "pck_means", 0.5), ("npu", "pck_means", 0.5 + NPU_ALL),
                                   ("cobras", "cobras", 0.4)):
        for t in range(TRIALS):
            add("tiny", strategy, method, 0.0, t, area, np.nan)
    rows = pd.DataFrame(out)
    # one COBRAS trial with an undefined unqueried area: its cell (s0, 10 %) is missing, not averaged over two
    hole = (rows["dataset.name"] == "s0") & (rows["method.name"] == "cobras") & (rows["noise.rate"] == 0.1) \
        & (rows["trial"] == 0)
    rows.loc[hole, "auc_ari_unqueried"] = np.nan
    return rows


def _section(md: str, heading: str) -> str:
    start = md.index(f"## {heading}")
    end = md.find("\n## ", start + 1)
    return md[start:end if end >= 0 else None]


def _line(section: str, entry: str, reference: str, kind: str = "random") -> str:
    [line] = [x for x in section.splitlines() if x.startswith(f"- `{entry}` vs `{reference}` ({kind})")]
    return line


def _numbers(line: str) -> list[float]:
    return [float(x) for x in re.findall(r"[-+]?\d+\.\d+(?:e[-+]?\d+)?", line)]


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    paths = write_active_report(_rows(), tmp_path_factory.mktemp("active") / "page", figures=False)
    return paths["md"].read_text(), pd.read_parquet(paths["parquet"])


def test_the_page_ranks_the_unqueried_area_against_random_with_the_differences_of_the_rows(page):
    md, _ = page
    section = _section(md, "Points in no asked pair")
    npu = _line(section, "npu/pck_means", "random/pck_means")
    mean, lo, hi, p, p_holm = _numbers(npu)[:5]
    expected_lo, expected_hi = bootstrap_ci(NPU_AHEAD)
    assert mean == pytest.approx(NPU_AHEAD.mean(), abs=5e-4)
    assert (lo, hi) == pytest.approx((expected_lo, expected_hi), abs=5e-4) and 0 < lo < mean < hi
    # 8 data sets (``tiny`` is left out), all 8 ahead: the exact two-sided signed-rank p is 2 / 2**8,
    # Holm doubles the smaller p of the family of two (npu and COBRAS against random)
    assert "over 8 data sets (8 wins, 0 losses)" in npu
    assert p == pytest.approx(2 / 256, rel=5e-3) and p_holm == pytest.approx(4 / 256, rel=5e-3)
    assert npu.endswith("**ahead**")
    cobras = _line(section, "cobras", "random/pck_means")
    # COBRAS on s0 has its noise-0 cell only (the 10 % cell is missing): its difference there is still +0.03
    assert _numbers(cobras)[0] == pytest.approx(COBRAS_MIXED.mean(), abs=5e-4)
    assert "(4 wins, 4 losses)" in cobras and cobras.endswith("**a tie (Holm p > 0.05)**")
    assert "Left out: tiny" in section


def test_the_unqueried_best_is_its_own_and_the_headline_still_ranks_all_points(page):
    md, long = page
    section = _section(md, "Points in no asked pair")
    # npu has the highest unqueried mean: it is the best reference there, random trails it by NPU_AHEAD
    behind = _line(section, "random/pck_means", "npu/pck_means", "best")
    assert _numbers(behind)[0] == pytest.approx(-NPU_AHEAD.mean(), abs=5e-4)
    # the all-points headline is unchanged: npu behind random by 0.05 on all 9 data sets (tiny included)
    headline = _section(md, "Headline")
    assert _numbers(_line(headline, "npu/pck_means", "random/pck_means"))[0] == pytest.approx(NPU_ALL, abs=5e-4)
    assert "over 9 data sets" in _line(headline, "npu/pck_means", "random/pck_means")
    # the missing COBRAS cell is "-" in the unqueried per-cell table; its noise-0 cell has a value
    [s0_10] = [x for x in section.splitlines() if x.startswith("| s0 | 10% |")]
    assert s0_10.split(" | ")[2] == "-"
    effects = long[long["table"] == "effects_unqueried"].set_index(["reference_name", "method"])
    assert effects.loc[("random/pck_means", "npu/pck_means"), "mean_diff"] == pytest.approx(NPU_AHEAD.mean())


def test_a_data_set_no_entry_scores_is_left_out_so_a_best_entry_exists():
    frame = act.active_frame(_rows())
    ranking = act.effects(frame, "auc_ari_unqueried")
    # with ``tiny`` (no scores) among the blocks no entry would be on every data set: no best at all
    assert ranking["best"] == "npu/pck_means"
    assert ranking["unscored"] == ["tiny"] and "tiny" not in ranking["set_means"].index
    p_best = ranking["p_best"].set_index("method")["p_best"]
    assert np.isfinite(p_best).all() and p_best.sum() == pytest.approx(1.0)


def test_a_strategy_is_read_against_random_on_the_method_it_feeds():
    """Two methods: random/pck_means's family is the PCK-means entries and COBRAS, not MPCK-means's, so
    Holm doubles (family of two), not triples, the exact p of 8 wins in 8 (2 / 2**8)."""
    rows = _rows()
    rows = rows[rows["dataset.name"] != "tiny"]
    mpck = rows[rows["method.name"] == "pck_means"].assign(**{"method.name": "mpck_means"})
    mpck["auc_ari"] += 0.2  # MPCK-means far ahead: in the best entry's family, not in random/pck_means's
    ranking = act.effects(act.active_frame(pd.concat([rows, mpck], ignore_index=True)))
    table = ranking["effects"]
    random = table[table["reference"] == "random"]
    family = random[random["reference_name"] == "random/pck_means"].set_index("method")
    assert sorted(family.index) == ["cobras", "npu/pck_means"]
    assert family.loc["npu/pck_means", "p_holm"] == pytest.approx(2 * 2 / 256)
    assert sorted(random.loc[random["reference_name"] == "random/mpck_means", "method"]) == ["cobras", "npu/mpck_means"]
    assert ranking["best"] == "random/mpck_means"
    best = table[table["reference"] == "best"]
    assert sorted(best["method"]) == ["cobras", "npu/mpck_means", "npu/pck_means", "random/pck_means"]
