"""Seed to seed: how much a method's rank moves when only the base seed changes (issue 38, item 11).

The leaderboard ranks the rows of its base seed (the smallest ``seed`` in the rows). A second base seed
draws other constraint sets, noise and method seeds for the same cells; ranking each seed's rows over
the cells both seeds have shows how much of an ordering is the draw. Two methods whose average ranks
differ by less than the seed-to-seed spread are a tie: the pages say so instead of ordering them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._frame import CELL, _worst_filled, attempted_cells, cell_means, ranked_metric, unmeasured_cells

__all__ = ["base_seed", "seed_spread", "seed_blocks", "split_at_best", "headline", "SEED_COLUMNS", "SECONDARY_VIEW"]

#: How the rank paragraph starts: the ranks are the pages' secondary view, the headline is the paired
#: effect sizes over data sets (:mod:`.effects`, issue 50).
SECONDARY_VIEW = "**Secondary view, average ranks (what they support):**"

SEED_COLUMNS = ["method", "cells", "avg_rank_shift", "mean_abs_shift", "cell_rank_sd"]


def base_seed(frame: pd.DataFrame) -> int:
    """The seed the pages rank: the smallest in the rows (0 unless a sweep chose another)."""
    return int(frame["seed"].min()) if "seed" in frame and len(frame) else 0


def _cell_ranks(frame: pd.DataFrame, methods: list, metric: str) -> pd.DataFrame:
    """Cells x methods: per-cell ranks (1 = best; a cell not completed by a measured failure ranks last),
    NaN outside a method's grid and where it was refused or skipped (the pages' ``missing`` convention)."""
    means = cell_means(frame).reindex(columns=methods)
    attempted = attempted_cells(frame).reindex(index=means.index, columns=methods).fillna(False).astype(bool)
    unmeasured = unmeasured_cells(frame).reindex(index=means.index, columns=methods).fillna(False).astype(bool)
    return _worst_filled(means, metric, attempted, unmeasured).rank(axis=1, ascending=metric.sign < 0, method="average")


def seed_spread(frame: pd.DataFrame, methods: list, metric: str) -> tuple[pd.DataFrame, dict]:
    """Per method, over the cells every seed has: its average rank under each seed (``rank_seed<s>``),
    ``mean_abs_shift`` (the mean over those cells of |rank under one seed - rank under the other|; with
    more than two seeds, the range), ``cell_rank_sd`` (the mean over cells of the sample SD of its rank
    across seeds), ``avg_rank_shift`` (the range of its average ranks across seeds); and a summary: ``seeds``, ``cells`` (common),
    ``winner_changes`` (common cells whose best method differs between seeds), ``avg_rank_shift``
    (the largest change of a method's average rank between seeds: orderings closer than it are ties).

    Empty table (and ``cells`` 0) when the rows have one seed, or no cell has rows under every seed.
    """
    metric = ranked_metric(metric)
    seeds = sorted(pd.unique(frame["seed"])) if "seed" in frame else []
    empty = pd.DataFrame(columns=SEED_COLUMNS)
    if len(seeds) < 2:
        return empty, {"seeds": seeds, "cells": 0}
    ranks = {s: _cell_ranks(frame[frame["seed"] == s], methods, metric) for s in seeds}
    common = ranks[seeds[0]].index
    for s in seeds[1:]:
        common = common.intersection(ranks[s].index)
    if not len(common):
        return empty, {"seeds": seeds, "cells": 0}
    stack = np.stack([ranks[s].loc[common, methods].to_numpy(float) for s in seeds])  # seeds x cells x methods
    both = np.isfinite(stack).all(axis=0)
    spread = np.where(both, stack.max(axis=0) - stack.min(axis=0), np.nan)
    # only where every seed ranks the method (elsewhere NaN): nanstd over fewer than two values warned
    sd = np.where(both, np.std(np.where(both, stack, 0.0), axis=0, ddof=1), np.nan)
    table = pd.DataFrame({"method": methods, "cells": both.sum(axis=0)})
    for s, r in zip(seeds, stack):
        table[f"rank_seed{s}"] = np.where(both, r, np.nan).sum(axis=0) / np.maximum(both.sum(axis=0), 1)
    table["avg_rank_shift"] = table[[f"rank_seed{s}" for s in seeds]].max(axis=1) - \
        table[[f"rank_seed{s}" for s in seeds]].min(axis=1)
    with np.errstate(invalid="ignore"):
        table["mean_abs_shift"] = np.nanmean(spread, axis=0)
        table["cell_rank_sd"] = np.nanmean(sd, axis=0)
    table = table[table["cells"] > 0].sort_values(f"rank_seed{seeds[0]}").reset_index(drop=True)
    best = [np.where(np.isfinite(r), r, np.inf).argmin(axis=1) for r in stack]  # per cell, per seed
    changed = int(sum((b != best[0]).sum() for b in best[1:]))
    return table, {"seeds": seeds, "cells": int(len(common)), "winner_changes": changed,
                   "avg_rank_shift": float(table["avg_rank_shift"].max()) if len(table) else float("nan"),
                   "datasets": sorted(pd.Index(common.get_level_values("dataset")).unique())}


def seed_blocks(frame: pd.DataFrame, methods: list, metric: str, md_frame) -> tuple[list, pd.DataFrame, dict]:
    """The page's section 1d, its table and the summary of :func:`seed_spread` (``md_frame`` renders a
    table as the page's markdown)."""
    table, summary = seed_spread(frame, methods, metric)
    blocks = [("h", 2, "1d. Seed to seed")]
    if not summary["cells"]:
        blocks.append(("md", "One base seed in these rows: no seed-to-seed spread is measured, so the ranks above "
                             "carry no estimate of how much of an ordering is the draw of constraints and seeds."))
        return blocks, table, summary
    s0 = summary["seeds"][0]
    blocks += [("md", f"The ranks above use base seed {s0}. Base seeds {', '.join(map(str, summary['seeds']))} were "
                      f"both run on {summary['cells']} cells ({len(summary['datasets'])} data sets: "
                      f"{', '.join(summary['datasets'])}); ranked per seed over those cells (measured failures "
                      f"last, refused and skipped cells missing), a "
                      f"method's average rank moves by up to {summary['avg_rank_shift']:.2f} (`avg_rank_shift`), "
                      f"its rank in a cell by {np.nanmean(table['mean_abs_shift']):.2f} on average "
                      f"(`mean_abs_shift`; `cell_rank_sd`: the SD across seeds), and the best method of "
                      f"{summary['winner_changes']} of {summary['cells']} cells changes. **Two methods whose "
                      f"average ranks in section 1 differ by less than the larger of their `avg_rank_shift` are "
                      f"a tie**: their order is within what a second draw changes."),
               ("md", md_frame(table.set_index("method"), floats="{:.2f}"))]
    return blocks, table, summary


def split_at_best(ranks: pd.Series, threshold: float) -> tuple[list[str], list[str]]:
    """Methods in rank order (``ranks``: average rank, 1 = best): those less than ``threshold`` behind the
    best (a tie with it) and those at least ``threshold`` behind it (an ordering the data support). Two
    methods of one list are not ordered by it: only their own gap says whether they are a tie."""
    order = ranks.sort_values()
    behind = order - order.iloc[0] >= threshold
    return list(order.index[~behind]), list(order.index[behind])


def headline(ranks: pd.Series, cd: float | None, shift: float | None, n_sets: int) -> str:
    """One paragraph: which methods the data put level with the best (average rank over data sets) and
    which behind it, under the larger of the Nemenyi CD over data sets and the seed-to-seed shift: the
    pages' secondary view (:data:`SECONDARY_VIEW`), below the headline of paired effect sizes
    (:mod:`.effects`), as mean-rank tests change their verdicts with the pool of methods (Benavoli,
    Corani & Mangili, JMLR 17, 2016).

    Only orderings against the best are stated: a chain "a = b > c" would also claim b ahead of c,
    which the data need not support (b and c may be closer than the threshold)."""
    limits = [x for x in (cd, shift) if x is not None and np.isfinite(x)]
    if not limits or not len(ranks):
        return (f"{SECONDARY_VIEW} no critical difference could be computed (too few data sets for "
                "Friedman's test) and no second seed was run, so no ordering below is a supported claim.")
    threshold = max(limits)
    named = {}
    if cd is not None and np.isfinite(cd):
        named[f"the Nemenyi CD over {n_sets} data sets"] = cd
    if shift is not None and np.isfinite(shift):
        named["the largest seed-to-seed move of an average rank"] = shift
    (larger, _), *other = sorted(named.items(), key=lambda kv: -kv[1])
    why_text = larger + "".join(f"; {name} is {value:.2f}" for name, value in other)
    level, behind = split_at_best(ranks, threshold)
    listed = lambda names: ", ".join(f"`{m}` ({ranks[m]:.2f})" for m in names)  # noqa: E731
    best, rest = level[0], level[1:]
    text = (f"{SECONDARY_VIEW} average ranks over data sets of the {len(ranks)} methods of the CD diagram "
            f"(1 = best); two methods whose average "
            f"ranks differ by less than {threshold:.2f} ({why_text}) are a tie. The best, `{best}` "
            f"({ranks[best]:.2f}), is tied with " + (listed(rest) if rest else "no other method") + ". ")
    if behind:
        return text + (f"Behind it by at least {threshold:.2f}: {listed(behind)}. Any other two methods are ordered "
                       f"only where their average ranks differ by at least {threshold:.2f}.")
    return text + "No method is behind it by that much: the data support no ordering."
