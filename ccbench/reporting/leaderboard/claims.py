"""What a leaderboard page's tables support, in sentences for the index: the tuned and k-free variants
whose difference from their default survives the multiplicity correction over the section's variants
(:func:`~.ranks._variant_verdicts`: Holm over a Wilcoxon test per variant, and the pages' margin)."""

from __future__ import annotations

import pandas as pd

__all__ = ["MIN_VERDICT_CELLS", "variant_verdicts", "index_summary"]

#: fewest cells behind a variant's verdict for the index to state it (a bootstrap over one cell is [x, x];
#: with fewer than 6 cells no Wilcoxon test can reach 0.05 anyway)
MIN_VERDICT_CELLS = 5


def variant_verdicts(versus: pd.DataFrame, helped: str, hurt: str) -> str | None:
    """One sentence on the variants whose ``verdict`` (:func:`~.ranks._variant_verdicts`) is ``helped`` or
    ``hurt`` over at least :data:`MIN_VERDICT_CELLS` cells: the Holm-adjusted p over the table's family
    of variants at most alpha and the mean difference at least the margin. An uncorrected 95 % interval
    that excludes 0 is no verdict (the others: no supported difference)."""
    if versus is None or versus.empty:
        return None
    fmt = lambda r: (f"`{r.variant}` {r.mean_diff:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}] over {r.cells} cells, "  # noqa: E731
                     f"Holm p = {r.p_holm:.2g}")
    enough = [r for r in versus.itertuples() if r.cells >= MIN_VERDICT_CELLS]
    up = [fmt(r) for r in enough if r.verdict == "helped"]
    down = [fmt(r) for r in enough if r.verdict == "hurt"]
    rest = int(len(versus) - len(up) - len(down))
    parts = ([f"{helped}: {'; '.join(up)}"] if up else []) + ([f"{hurt}: {'; '.join(down)}"] if down else [])
    return ". ".join(parts + [f"{rest} other(s) of {len(versus)}: no supported difference after Holm's correction "
                              f"over the {len(versus)} variants (or a difference under the margin, or fewer than "
                              f"{MIN_VERDICT_CELLS} cells completed by both)"]) + "."


def index_summary(blocks: list, tables: dict) -> list[str]:
    """What a kind's page supports, for the index: its headline sentences (paired effect sizes over data
    sets against k-means and the best, P(best), what the failure convention and the flagged data sets
    change: :data:`~.headline_text.SENTENCE_PREFIXES`, every metric of the headline), and the tuned and
    k-free variants whose difference from their default survives Holm's correction over the section's
    variants (:func:`variant_verdicts`). The average ranks'
    paragraph is the pages' secondary view and is not quoted."""
    from .headline_text import SENTENCE_PREFIXES

    out = [str(b[1]) for b in blocks if b[0] == "md" and str(b[1]).startswith(SENTENCE_PREFIXES)]
    tuned = variant_verdicts(tables.get("tuned_vs_default"), "CVCP tuning helped", "It hurt")
    k_free = variant_verdicts(tables.get("k_free_vs_given"), "Finding k itself did better than being given it",
                               "It did worse")
    out += ([f"**Tuned (section 1b):** {tuned}"] if tuned else []) + ([f"**k-free (section 1c):** {k_free}"] if k_free else [])
    return out
