"""``ccbench report DIR --compare A B``: a text verdict for two methods, per cell and across data sets.

The tests are :mod:`ccbench.reporting.stats`'; this module only chooses them and words their answer.
"""

from __future__ import annotations

import pandas as pd

from ._format import fmt, is_ranked, method_labels, resolve_x
from .stats import (
    CELL,
    _bayes_min_n,
    _holm_floor,
    _largest_x_of_each_block,
    _same,
    _sign,
    _wilcoxon,
    _wtl,
    bayesian_signed_rank,
    block_means,
    decide,
    holm,
    min_pairs,
    paired_frame,
    resolve_at,
    wilcoxon_min_p,
)

__all__ = ["compare"]


def _text_table(rows: list[list], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    return "\n".join(line.rstrip() for line in lines + [fmt.format(*map(str, r)) for r in rows])


def _rule_text(said: str, a: str, b: str, word: str, n: int, need: int, what: str) -> str:
    """A verdict of :func:`ccbench.reporting.stats.decide` as text."""
    if said == "too few":
        return f"too few {what} (n = {n} < {need})"
    return {"A": f"{a} {word}", "B": f"{b} {word}"}.get(said, "no difference")


def compare(data: pd.DataFrame, a: str, b: str, metric: str, x: str | None = None, rope: float = 0.01,
            margin: float = 0.03, pool=(), at=None, alpha: float = 0.05) -> str:
    """Text verdict for methods ``a`` and ``b`` (method labels): per cell, Wilcoxon over paired trials
    (Holm over the cells) beside the Bayesian signed-rank posterior; across data sets at one x value
    (``at``, default the largest), Wilcoxon over per-data-set means beside the Bayesian signed-rank
    test and win/tie/loss.

    Every verdict follows the one rule of :func:`ccbench.reporting.stats.decide`: A is better only
    when the Wilcoxon p-value (Holm-adjusted over the cells, per cell) is at most ``alpha`` AND the
    mean difference is at least ``margin`` (any difference for a metric that is not ranked); no
    verdict is printed at a p-value above ``alpha``. The Bayesian posteriors are shown, not a verdict.

    Below the minimum sample (:func:`min_pairs`: 6 paired values for one test at
    alpha 0.05) a verdict reads "too few trials" / "too few data sets", and the
    smallest p-value the sample could give is printed beside the p-value.
    """

    labels = set(method_labels(data, resolve_x(data, x)))
    missing = [m for m in (a, b) if m not in labels]
    if missing:
        raise ValueError(f"no method labelled {missing} in these results; labels: {sorted(labels)}")
    if a == b:
        raise ValueError("--compare needs two different methods")
    ranked = is_ranked(metric)
    greater = _sign(metric) > 0 if ranked else True
    word = "better" if ranked else "higher"
    wide = paired_frame(data, metric, x, pool)
    if at is not None:
        wide = wide[wide.index.get_level_values("x").map(_same(at))]
    wide = wide[[a, b]].dropna()
    if wide.empty:
        raise ValueError(f"{a} and {b} share no ok paired trial{'' if at is None else f' at x = {at}'}")
    min_n = _bayes_min_n()
    direction_text = f"{'higher' if greater else 'lower'} is better" if ranked else "not ranked: differences only"
    lines = [f"{a} (A) vs {b} (B) on {metric} ({direction_text}); ROPE ±{rope:g}, "
             f"win margin {margin:g}, alpha {alpha:g}", ""]
    cells = []
    for cell, rows in wide.groupby(level=CELL, sort=True):
        va, vb = rows[a].to_numpy(float), rows[b].to_numpy(float)
        _, p = _wilcoxon(va, vb)
        # below the minimum no verdict is given, so no posterior is drawn either (baycomp: ~1 s per call)
        bay = bayesian_signed_rank(va, vb, rope, greater=greater) if len(rows) >= min_n else None
        cells.append((cell, va, vb, p, bay))
    p_holm = holm([c[3] for c in cells])
    floors = _holm_floor([len(c[1]) for c in cells])
    header = ["dataset", "setting", "x", "n", "mean A", "mean B", "W/T/L", "p Holm", "min p",
              "P(A>B)", "P(rope)", "P(B>A)", "verdict"]
    rows_out = []
    orient = 1.0 if greater else -1.0
    need_cell = min_pairs(alpha, len(cells))
    for (cell, va, vb, _, bay), ph, floor in zip(cells, p_holm, floors):
        wtl = "/".join(map(str, _wtl(orient * (va - vb), margin))) if ranked else "-"
        said = decide(orient * float((va - vb).mean()), ph, floor, margin if ranked else 0.0, alpha)
        verdict = _rule_text(said, "A", "B", word, len(va), need_cell, "trials")
        rows_out.append([cell[0], cell[1] or "-", fmt(cell[2]), len(va), f"{va.mean():.3f}",
                         f"{vb.mean():.3f}", wtl, f"{ph:.3g}", f"{floor:.3g}",
                         *(["-"] * 3 if bay is None else
                           [f"{bay['p_a_better']:.2f}", f"{bay['p_rope']:.2f}", f"{bay['p_b_better']:.2f}"]),
                         verdict])
    lines += [f"Per cell (paired trials; W/T/L per trial; Wilcoxon p Holm-corrected over the {len(cells)} "
              f"cell(s), 'min p' the smallest value these trials can give; verdict: {word} only when p Holm <= "
              f"{alpha:g}" + (f" AND the mean difference is at least {margin:g}" if ranked else "") + ", which needs "
              f"{need_cell} paired trials per cell here; the Bayesian posteriors are shown beside it):",
              _text_table(rows_out, header), ""]
    chosen = resolve_at(data, metric, x, pool, at)
    where = (" at each data set's largest x (--at picks one x)" if chosen is None else
             f" at x = {fmt(chosen)}" + ("" if at is not None else " (the largest x; --at picks another)"))
    means = block_means(data, metric, x, pool, at=chosen, complete=False)[[a, b]].dropna()
    if len(means) >= 2:
        _, p = _wilcoxon(means[a].to_numpy(float), means[b].to_numpy(float))
        wtl = ("/".join(map(str, _wtl((1 if greater else -1) * (means[a] - means[b]).to_numpy(float), margin)))
               if ranked else "-")
        lines += [f"Across {len(means)} data sets{where} (per-data-set means over trials):"]
        if len(means) >= min_n:
            bay = bayesian_signed_rank(means[a], means[b], rope, greater=greater)
            lines += [f"  Bayesian signed-rank: P(A {word}) = {bay['p_a_better']:.3f}, P(practically equivalent) "
                      f"= {bay['p_rope']:.3f}, P(B {word}) = {bay['p_b_better']:.3f} (shown, not the verdict)"]
        diff = orient * float((means[a] - means[b]).mean())
        said = decide(diff, p, wilcoxon_min_p(len(means)), margin if ranked else 0.0, alpha)
        verdict = _rule_text(said, a, b, word, len(means), min_pairs(alpha), "data sets")
        lines += [f"  Wilcoxon signed-rank p = {p:.3g} (smallest possible with {len(means)} data sets: "
                  f"{wilcoxon_min_p(len(means)):.3g}); mean difference {diff:+.3f}; win/tie/loss of A "
                  f"(margin {margin:g}, counts) = {wtl}",
                  f"  Verdict: {verdict} ({word} only when p <= {alpha:g}"
                  + (f" AND the mean difference is at least {margin:g})." if ranked else ").")]
    else:
        if chosen is None:
            one = _largest_x_of_each_block(wide.reset_index()).set_index(wide.index.names)
        else:
            one = wide[wide.index.get_level_values("x").map(_same(chosen))]
        only = bayesian_signed_rank(one[a], one[b], rope, greater=greater) if len(one) >= min_n else None
        va, vb = one[a].to_numpy(float), one[b].to_numpy(float)
        _, p = _wilcoxon(va, vb)
        nonzero = int((va != vb).sum())
        diff = orient * float((va - vb).mean())
        said = decide(diff, p, wilcoxon_min_p(nonzero), margin if ranked else 0.0, alpha)
        verdict = _rule_text(said, a, b, word, len(one), min_pairs(alpha), "trials")
        lines += [f"One data set{where}: Wilcoxon signed-rank over its {len(one)} paired trials p = {p:.3g} "
                  f"(smallest possible: {wilcoxon_min_p(nonzero):.3g}); mean difference {diff:+.3f}"
                  + ("" if only is None else
                     f"; Bayesian signed-rank: P(A {word}) = {only['p_a_better']:.3f}, P(equivalent) = "
                     f"{only['p_rope']:.3f}, P(B {word}) = {only['p_b_better']:.3f} (shown, not the verdict)"),
                  f"  Verdict: {verdict} ({word} only when p <= {alpha:g}"
                  + (f" AND the mean difference is at least {margin:g})." if ranked else ").")]
    return "\n".join(lines)
