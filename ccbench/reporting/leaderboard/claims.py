"""What a leaderboard page's tables support, in sentences for the index: the tuned and k-free variants
whose difference from their default has an interval (over enough cells) that excludes 0."""

from __future__ import annotations

import pandas as pd

__all__ = ["MIN_VERDICT_CELLS", "variant_verdicts", "index_summary"]

#: fewest cells behind a variant's interval for the index to call its difference supported (a bootstrap
#: over one cell is [x, x]; over a handful it is too narrow)
MIN_VERDICT_CELLS = 5


def variant_verdicts(versus: pd.DataFrame, helped: str, hurt: str) -> str | None:
    """One sentence on the variants whose interval over at least :data:`MIN_VERDICT_CELLS` cells excludes 0
    (the others: no supported difference)."""
    if versus is None or versus.empty:
        return None
    fmt = lambda r: f"`{r.variant}` {r.mean_diff:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}] over {r.cells} cells"  # noqa: E731
    enough = [r for r in versus.itertuples() if r.cells >= MIN_VERDICT_CELLS]
    up = [fmt(r) for r in enough if r.ci_low > 0]
    down = [fmt(r) for r in enough if r.ci_high < 0]
    rest = int(len(versus) - len(up) - len(down))
    parts = ([f"{helped}: {'; '.join(up)}"] if up else []) + ([f"{hurt}: {'; '.join(down)}"] if down else [])
    return ". ".join(parts + [f"{rest} other(s): the interval includes 0 (no supported difference), or fewer than "
                              f"{MIN_VERDICT_CELLS} cells were completed by both"]) + "."


def index_summary(blocks: list, tables: dict) -> list[str]:
    """What a kind's page supports, for the index: its headline (ties and orderings over data sets) and
    the tuned and k-free variants whose difference from their default has an interval excluding 0."""
    out = [str(b[1]) for b in blocks if b[0] == "md" and str(b[1]).startswith("**What these ranks support:**")]
    tuned = variant_verdicts(tables.get("tuned_vs_default"), "CVCP tuning helped", "It hurt")
    k_free = variant_verdicts(tables.get("k_free_vs_given"), "Finding k itself did better than being given it",
                               "It did worse")
    out += ([f"**Tuned (section 1b):** {tuned}"] if tuned else []) + ([f"**k-free (section 1c):** {k_free}"] if k_free else [])
    return out
