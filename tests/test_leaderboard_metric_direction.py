"""The leaderboard resolves its metric's direction once, where the frame is built, and passes it on (issue 54,
item 21): every ranking reads ``RankedMetric.sign`` instead of looking the direction up again by name.

The pages themselves are unchanged by this (checked when it was made: the leaderboard and the site of a
two-data-set sweep on ``ari`` and on the lower-is-better ``constraint_violations``, byte for byte); the
rankings' numbers are covered by ``tests/test_leaderboard*.py``.
"""

from __future__ import annotations

import pytest

from ccbench.reporting import leaderboard as lb
from ccbench.reporting import stats
from ccbench.reporting.leaderboard._frame import RankedMetric, _cells, ranked_long_frame, ranked_metric
from test_leaderboard import _rows

VALUES = {("iris", 20, "pck_means"): [0.9, 0.8], ("iris", 20, "cop_kmeans"): [0.7, 0.6],
          ("iris", 20, "kmeans"): [0.8, 0.7],
          ("wine", 20, "pck_means"): [0.5, 0.4], ("wine", 20, "cop_kmeans"): [0.3, 0.2],
          ("wine", 20, "kmeans"): [0.6, 0.5]}


def _count_lookups(monkeypatch) -> list:
    """Every look-up of a metric's direction by name (the registry's, through ``stats.direction``)."""
    asked = []
    real = stats.direction

    def counted(metric):
        asked.append(str(metric))
        return real(metric)

    monkeypatch.setattr(stats, "direction", counted)
    return asked


def test_the_rankings_take_the_direction_resolved_with_the_frame(monkeypatch):
    """The chain of section 1 and the gains, given the metric resolved where the frame is built: no look-up."""
    asked = _count_lookups(monkeypatch)
    frame, metric = ranked_long_frame(_rows(VALUES), "ari")
    assert asked == ["ari"] and metric.sign == 1.0
    cells = _cells(frame)
    means = lb.cell_means(cells)
    lb.rank_table(means, metric)
    lb.ranks_by_condition(means, metric)
    lb.dataset_blocks(means, metric)
    lb.win_tie_loss_cells(cells, metric)
    lb.gains(frame, metric)
    lb.hurt_share(frame, metric)
    assert asked == ["ari"]


@pytest.mark.slow  # every page of a small board: about 10 s on the loaded 2-core machine
def test_the_pages_look_up_the_metrics_direction_once(tmp_path, monkeypatch):
    """Run it with: ``/work/venv/bin/python -m pytest -q -m slow tests/test_leaderboard_metric_direction.py``."""
    asked = _count_lookups(monkeypatch)
    paths = lb.write_leaderboard(_rows(VALUES), tmp_path, metric="ari")
    assert asked.count("ari") == 1, asked
    assert "metric `ari` (higher is better)" in paths["pairs_md"].read_text()


def test_a_ranked_metric_is_its_name_with_its_direction():
    higher, lower = RankedMetric("ari"), RankedMetric("constraint_violations")
    assert (higher.sign, lower.sign) == (1.0, -1.0)
    # the name, for every text and key made from it
    assert higher == "ari" and {"ari": 1}[higher] == 1 and f"`{lower}`" == "`constraint_violations`"
    assert ranked_metric(higher) is higher and ranked_metric("ari") == higher


def test_a_metric_without_a_direction_is_refused_as_before():
    with pytest.raises(ValueError, match=r"metric 'n_clusters_found' is not ranked \(direction 'none'"):
        RankedMetric("n_clusters_found")


def test_rankings_take_a_name_or_a_ranked_metric_alike():
    """Two routes to one ranking: the name (resolved by the function) and the metric resolved once."""
    means = lb.cell_means(lb.long_frame(_rows(VALUES), "ari"))
    by_name = lb.rank_table(means, "ari")
    by_ranked = lb.rank_table(means, RankedMetric("ari"))
    assert by_name.equals(by_ranked)
    assert by_name["rank_completed"].to_dict() == pytest.approx({"pck_means": 1.5, "kmeans": 1.5, "cop_kmeans": 3.0})
