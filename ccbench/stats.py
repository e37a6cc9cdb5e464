"""Paired statistics over a results DataFrame: comparisons users can trust.

Every trial in ccbench is paired: for one data set, setting and x value, all
methods see the same constraint sets (the same ``trial_seed``). The mean ± std
of the report ignores that pairing; these small functions use it.

Within one cell (data set, setting, x):

- :func:`paired_tests`: Wilcoxon signed-rank test between every two methods over
  their paired trials (:func:`scipy.stats.wilcoxon`), Holm-corrected within the
  cell (:func:`holm`), with per-trial win/tie/loss counts under a margin.

Across data sets (Demšar 2006; Benavoli et al. 2017), on the per-data-set means
of :func:`block_means` (one block per data set and setting, the metric averaged
over trials and, unless ``at`` picks one, over the x values):

- :func:`win_tie_loss`: the NNC paper's convention (Yang et al. 2015, Sect. 5.3):
  A beats B on a data set when its mean is better by at least ``margin`` (0.03
  there), a smaller difference is a tie;
- :func:`average_ranks`, :func:`friedman` (:func:`scipy.stats.friedmanchisquare`),
  :func:`nemenyi` (scikit-posthocs) and :func:`cd_diagram` (scikit-posthocs'
  ``critical_difference_diagram``);
- :func:`bayesian_signed_rank`: baycomp's Bayesian signed-rank test with a
  region of practical equivalence (ROPE); :func:`compare` prints a verdict.

Only ``ok`` trials enter. Direction comes from the metric's registry entry
(``greater_is_better``); unknown columns count as "higher is better" except
``fit_time``.

References
----------
J. Demšar, "Statistical comparisons of classifiers over multiple data sets", JMLR 7, 2006.
A. Benavoli, G. Corani, J. Demšar, M. Zaffalon, "Time for a change: a tutorial for
comparing multiple classifiers through Bayesian analysis", JMLR 18, 2017.
S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Stat. 6, 1979.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

__all__ = [
    "greater_is_better",
    "holm",
    "paired_frame",
    "paired_tests",
    "block_means",
    "win_tie_loss",
    "average_ranks",
    "friedman",
    "nemenyi",
    "cd_diagram",
    "bayesian_signed_rank",
    "compare",
    "coherence",
    "trial_coherence",
    "utility",
]

CELL = ["dataset", "setting", "x"]
BLOCK = ["dataset", "setting"]
# A posterior probability above this makes a Bayesian verdict (Benavoli et al. 2017 use 0.95).
DECISION = 0.95


def greater_is_better(metric: str) -> bool:
    """Which way is up for ``metric``: its registry entry, else True (``fit_time``: False)."""
    from . import registry

    try:
        return bool(registry.get_metric_spec(metric).greater_is_better)
    except Exception:  # a results column that is no registered metric
        return metric not in ("fit_time",)


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN stays NaN and does not count as a test).

    Sorted ascending, ``p_(i) * (m - i + 1)`` (i from 1), made non-decreasing by a
    running maximum and clipped at 1; reject where the adjusted value is ≤ alpha.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = order.size
    scaled = p[order] * (m - np.arange(m))
    out[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return out


def _prepare(data: pd.DataFrame, metric: str, x: str | None, pool=()) -> pd.DataFrame:
    """``ok`` rows with ``dataset, setting, x, method_label, pair, value`` columns."""
    from . import report

    if data.empty:
        raise ValueError("no results to compare")
    if metric not in data:
        known = [c for c in data.columns if pd.api.types.is_numeric_dtype(data[c])]
        raise ValueError(f"metric {metric!r} is not a results column; numeric columns: {known}")
    x = report.resolve_x(data, x)
    data = data.reset_index(drop=True)  # concatenated sweeps can repeat index labels
    frame = pd.DataFrame({
        "dataset": data["dataset.name"],
        "method_label": report.method_labels(data, x),
        "setting": report._settings(data, x, pool),
        "x": data[x] if x in data else np.nan,
        "value": pd.to_numeric(data[metric], errors="coerce"),
    })
    # trial_seed is the same for every method of a (data set, setting, x, trial): the pairing key
    if "trial_seed" in data and data["trial_seed"].notna().all():
        frame["pair"] = data["trial_seed"].astype("int64")
    else:
        frame["pair"] = data[["trial", *pool]].astype(str).agg("/".join, axis=1)
    frame["x"] = frame["x"].map(lambda v: "n/a" if pd.isna(v) else v)
    return frame[data["status"].eq("ok") & frame["value"].notna()]


def paired_frame(data: pd.DataFrame, metric: str, x: str | None = None, pool=()) -> pd.DataFrame:
    """Wide table of paired trials: index (dataset, setting, x, pair), one column per method label."""
    frame = _prepare(data, metric, x, pool)
    dup = frame.duplicated([*CELL, "pair", "method_label"])
    if dup.any():
        raise ValueError(
            f"{int(dup.sum())} rows share (data set, setting, x, trial, method): pass the replicate "
            f"columns as pool (e.g. --pool dataset.seed) or report the sweeps separately"
        )
    return frame.pivot(index=[*CELL, "pair"], columns="method_label", values="value")


def _wilcoxon(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    from scipy.stats import wilcoxon

    d = a - b
    if d.size == 0:
        return np.nan, np.nan
    if np.all(d == 0):  # no evidence either way: scipy would refuse
        return 0.0, 1.0
    res = wilcoxon(a, b)
    return float(res.statistic), float(res.pvalue)


def _wtl(diff: np.ndarray, margin: float) -> tuple[int, int, int]:
    """Wins, ties, losses of A over B from A-minus-B differences already oriented "higher is better"."""
    return int((diff >= margin).sum()), int((np.abs(diff) < margin).sum()), int((diff <= -margin).sum())


def paired_tests(data: pd.DataFrame, metric: str, x: str | None = None, pool=(), margin: float = 0.03,
                 alpha: float = 0.05) -> pd.DataFrame:
    """Wilcoxon signed-rank test for every two methods in every cell, Holm-corrected per cell.

    One row per (dataset, setting, x, A, B) with the trials both completed:
    ``n_pairs``, ``mean_diff`` (A - B, in the metric's units), ``wins``, ``ties``,
    ``losses`` (per trial, "better" in the metric's direction, a difference under
    ``margin`` being a tie), ``statistic``, ``p``, ``p_holm`` (the family is all
    pairs of the cell) and ``verdict`` (``A better``, ``B better`` or ``no
    difference`` at ``alpha`` after Holm).
    """
    wide = paired_frame(data, metric, x, pool)
    sign = 1.0 if greater_is_better(metric) else -1.0
    out = []
    for cell, rows in wide.groupby(level=CELL, sort=True):
        recs = []
        methods = sorted(rows.columns[rows.notna().any()])
        for a, b in itertools.combinations(methods, 2):
            both = rows[[a, b]].dropna()
            va, vb = both[a].to_numpy(float), both[b].to_numpy(float)
            stat, p = _wilcoxon(va, vb)
            w, t, lo = _wtl(sign * (va - vb), margin)
            recs.append(dict(zip(CELL, cell), A=a, B=b, n_pairs=len(both),
                             mean_diff=float(np.mean(va - vb)) if len(both) else np.nan,
                             wins=w, ties=t, losses=lo, statistic=stat, p=p))
        if not recs:
            continue
        adjusted = holm([r["p"] for r in recs])
        for r, ph in zip(recs, adjusted):
            r["p_holm"] = ph
            better = sign * r["mean_diff"] > 0
            r["verdict"] = ("no difference" if not ph <= alpha else
                            f"{r['A'] if better else r['B']} better")
        out.extend(recs)
    cols = [*CELL, "A", "B", "n_pairs", "mean_diff", "wins", "ties", "losses", "statistic", "p", "p_holm", "verdict"]
    return pd.DataFrame(out, columns=cols)


def block_means(data: pd.DataFrame, metric: str, x: str | None = None, pool=(), at=None,
                complete: bool = True) -> pd.DataFrame:
    """Mean ``metric`` per block (data set, setting) and method: index blocks, columns method labels.

    ``at`` keeps one x value (compared as text, so ``--at 40`` matches 40 and 40.0);
    without it each block averages the cell means over its x values (a learning
    curve's mean height). ``complete`` drops blocks where some method has no ok trial
    (the rank tests need every method on every block).
    """
    frame = _prepare(data, metric, x, pool)
    if at is not None:
        keep = frame["x"].map(_same(at))
        if not keep.any():
            raise ValueError(f"no ok trial at x = {at!r}; x values: {sorted(map(str, frame['x'].unique()))}")
        frame = frame[keep]
    cells = frame.groupby([*CELL, "method_label"])["value"].mean()
    means = cells.groupby(level=[*BLOCK, "method_label"]).mean().unstack("method_label")
    return means.dropna() if complete else means


def _same(at):
    def match(v):
        try:
            return float(v) == float(at)
        except (TypeError, ValueError):
            return str(v) == str(at)
    return match


def win_tie_loss(means: pd.DataFrame, metric: str, margin: float = 0.03) -> pd.DataFrame:
    """``wins/ties/losses`` of the row method against the column method over blocks.

    A block is a win when the row's mean is better by at least ``margin`` (the NNC
    paper's 0.03 on the Rand index), a loss when worse by at least ``margin``.
    """
    sign = 1.0 if greater_is_better(metric) else -1.0
    methods = list(means.columns)
    table = pd.DataFrame("", index=methods, columns=methods)
    for a, b in itertools.permutations(methods, 2):
        both = means[[a, b]].dropna()
        w, t, lo = _wtl(sign * (both[a] - both[b]).to_numpy(float), margin)
        table.loc[a, b] = f"{w}/{t}/{lo}"
    return table


def _ranks(means: pd.DataFrame, metric: str) -> pd.DataFrame:
    return means.rank(axis=1, ascending=not greater_is_better(metric), method="average")


def average_ranks(means: pd.DataFrame, metric: str) -> pd.Series:
    """Mean rank per method over blocks (1 = best; ties share the average rank), best first."""
    return _ranks(means, metric).mean().sort_values()


def friedman(means: pd.DataFrame) -> dict:
    """Friedman's chi-square over complete blocks (:func:`scipy.stats.friedmanchisquare`)
    and the Iman-Davenport F statistic Demšar recommends beside it."""
    from scipy.stats import f as f_dist
    from scipy.stats import friedmanchisquare

    n, k = means.shape
    if k < 3 or n < 2:
        raise ValueError(f"the Friedman test needs at least 3 methods and 2 data sets, got {k} and {n}")
    chi2, p = friedmanchisquare(*(means[c].to_numpy(float) for c in means.columns))
    denom = n * (k - 1) - chi2
    ff = (n - 1) * chi2 / denom if denom > 0 else np.inf
    p_ff = float(f_dist.sf(ff, k - 1, (k - 1) * (n - 1))) if np.isfinite(ff) else 0.0
    return {"statistic": float(chi2), "pvalue": float(p), "iman_davenport": float(ff),
            "pvalue_iman_davenport": p_ff, "n_blocks": n, "n_methods": k}


def nemenyi(means: pd.DataFrame) -> pd.DataFrame:
    """Nemenyi post-hoc p-values between methods (scikit-posthocs), blocks as Friedman blocks."""
    import scikit_posthocs as sp

    return sp.posthoc_nemenyi_friedman(means.to_numpy(float)).set_axis(means.columns, axis=0).set_axis(
        means.columns, axis=1)


def critical_difference(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of average ranks: q_alpha * sqrt(k (k+1) / (6 n)) (Demšar eq. 5)."""
    from scipy.stats import studentized_range

    q = studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2)
    return float(q * np.sqrt(k * (k + 1) / (6.0 * n)))


def cd_diagram(means: pd.DataFrame, metric: str, alpha: float = 0.05, title: str | None = None):
    """Critical-difference diagram (scikit-posthocs): average ranks, bars join methods that the
    Nemenyi test does not tell apart at ``alpha``. Returns a matplotlib Figure (no pyplot state)."""
    import scikit_posthocs as sp
    from matplotlib.figure import Figure

    ranks = average_ranks(means, metric)
    n, k = means.shape
    fig = Figure(figsize=(10.0, 1.8 + 0.3 * k))
    ax = fig.subplots()
    # the method names sit outside the axes, left and right: leave them room (no layout engine sees them)
    side = min(0.42, 0.06 + 0.0085 * max(len(str(m)) + 6 for m in ranks.index))
    fig.subplots_adjust(left=side, right=1 - side, top=1 - 0.75 / fig.get_figheight(), bottom=0.02)
    sp.critical_difference_diagram(ranks, nemenyi(means), ax=ax, alpha=alpha)
    cd = critical_difference(k, n, alpha)
    fig.suptitle(title or f"{metric}: average ranks over {n} data sets (1 = best)\na bar joins methods the "
                 f"Nemenyi test does not separate (CD = {cd:.2f}, alpha = {alpha})", fontsize="medium")
    return fig


def bayesian_signed_rank(a, b, rope: float = 0.01, *, greater: bool = True, nsamples: int = 20000,
                         random_state: int = 0) -> dict:
    """Posterior probabilities that A is better, practically equivalent (|diff| < ``rope``), B better.

    baycomp's Bayesian signed-rank test (Benavoli et al. 2014, 2017) over paired
    values ``a``, ``b`` (per-data-set means, or per-trial values of one cell).
    The verdict names the outcome with probability ≥ 0.95, else ``inconclusive``.
    """
    from baycomp import SignedRankTest

    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.size < 2:
        raise ValueError(f"the Bayesian signed-rank test needs at least 2 paired values, got {a.size}")
    # baycomp's "left" is P(x - y > rope): x better when higher is better, so swap for lower
    x, y = (a, b) if greater else (b, a)
    p_a, p_rope, p_b = SignedRankTest.probs(x, y, rope=rope, nsamples=nsamples, random_state=random_state)
    probs = {"A better": float(p_a), "equivalent": float(p_rope), "B better": float(p_b)}
    best = max(probs, key=probs.get)
    return {"p_a_better": probs["A better"], "p_rope": probs["equivalent"], "p_b_better": probs["B better"],
            "verdict": best if probs[best] >= DECISION else "inconclusive", "n": int(a.size)}


def _text_table(rows: list[list], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    return "\n".join(line.rstrip() for line in lines + [fmt.format(*map(str, r)) for r in rows])


def _verdict_text(res: dict, a: str, b: str) -> str:
    v = res["verdict"].replace("A better", f"{a} better").replace("B better", f"{b} better")
    return v.replace("equivalent", "practically equivalent")


def compare(data: pd.DataFrame, a: str, b: str, metric: str, x: str | None = None, rope: float = 0.01,
            margin: float = 0.03, pool=(), at=None, alpha: float = 0.05) -> str:
    """Text verdict for methods ``a`` and ``b`` (method labels): per data set, Bayesian signed-rank
    over paired trials and Wilcoxon (Holm over the cells); across data sets, the Bayesian
    signed-rank test over per-data-set means, Wilcoxon over them and win/tie/loss."""
    from . import report

    labels = set(report.method_labels(data, report.resolve_x(data, x)))
    missing = [m for m in (a, b) if m not in labels]
    if missing:
        raise ValueError(f"no method labelled {missing} in these results; labels: {sorted(labels)}")
    if a == b:
        raise ValueError("--compare needs two different methods")
    greater = greater_is_better(metric)
    wide = paired_frame(data, metric, x, pool)
    if at is not None:
        wide = wide[wide.index.get_level_values("x").map(_same(at))]
    wide = wide[[a, b]].dropna()
    if wide.empty:
        raise ValueError(f"{a} and {b} share no ok paired trial{'' if at is None else f' at x = {at}'}")
    direction = "higher" if greater else "lower"
    lines = [f"{a} (A) vs {b} (B) on {metric} ({direction} is better); ROPE ±{rope:g}, "
             f"win margin {margin:g}, alpha {alpha:g}", ""]
    cells = []
    for cell, rows in wide.groupby(level=CELL, sort=True):
        va, vb = rows[a].to_numpy(float), rows[b].to_numpy(float)
        _, p = _wilcoxon(va, vb)
        bay = bayesian_signed_rank(va, vb, rope, greater=greater) if len(rows) >= 2 else None
        cells.append((cell, va, vb, p, bay))
    p_holm = holm([c[3] for c in cells])
    header = ["dataset", "setting", "x", "n", "mean A", "mean B", "W/T/L", "p Holm",
              "P(A>B)", "P(rope)", "P(B>A)", "verdict"]
    rows_out = []
    for (cell, va, vb, _, bay), ph in zip(cells, p_holm):
        w, t, lo = _wtl((1 if greater else -1) * (va - vb), margin)
        rows_out.append([cell[0], cell[1] or "-", report._fmt(cell[2]), len(va), f"{va.mean():.3f}",
                         f"{vb.mean():.3f}", f"{w}/{t}/{lo}", f"{ph:.3g}",
                         *(["-"] * 4 if bay is None else
                           [f"{bay['p_a_better']:.2f}", f"{bay['p_rope']:.2f}", f"{bay['p_b_better']:.2f}",
                            _verdict_text(bay, "A", "B")])])
    lines += ["Per cell (paired trials; W/T/L per trial, Wilcoxon p Holm-corrected over the cells):",
              _text_table(rows_out, header), ""]
    means = block_means(data, metric, x, pool, at=at, complete=False)[[a, b]].dropna()
    where = "" if at is None else f" at x = {at}"
    if len(means) >= 2:
        bay = bayesian_signed_rank(means[a], means[b], rope, greater=greater)
        _, p = _wilcoxon(means[a].to_numpy(float), means[b].to_numpy(float))
        w, t, lo = _wtl((1 if greater else -1) * (means[a] - means[b]).to_numpy(float), margin)
        lines += [f"Across {len(means)} data sets{where} (per-data-set means over trials and x values):",
                  f"  Bayesian signed-rank: P(A better) = {bay['p_a_better']:.3f}, P(practically equivalent) = "
                  f"{bay['p_rope']:.3f}, P(B better) = {bay['p_b_better']:.3f}",
                  f"  Wilcoxon signed-rank p = {p:.3g}; win/tie/loss of A (margin {margin:g}) = {w}/{t}/{lo}",
                  f"  Verdict: {_verdict_text(bay, a, b)} (decision at posterior probability {DECISION})."]
    else:
        only = bayesian_signed_rank(wide[a], wide[b], rope, greater=greater)
        lines += [f"One data set{where}: Bayesian signed-rank over its {len(wide)} paired trials: "
                  f"P(A better) = {only['p_a_better']:.3f}, P(equivalent) = {only['p_rope']:.3f}, "
                  f"P(B better) = {only['p_b_better']:.3f}",
                  f"  Verdict: {_verdict_text(only, a, b)} (decision at posterior probability {DECISION})."]
    return "\n".join(lines)


# -- constraint-set utility (Davidson, Wagstaff & Basu 2006) ---------------------------


def _overlap(p0, p1, q0, q1) -> np.ndarray:
    """Length of the overlap between segment p (m_p, d) and the projection of segment q (m_q, d)
    onto p's line, measured along p: an (m_p, m_q) matrix."""
    v = p1 - p0
    length = np.linalg.norm(v, axis=1)
    u = v / np.where(length > 0, length, 1.0)[:, None]
    t0 = np.einsum("pd,pqd->pq", u, q0[None, :, :] - p0[:, None, :])
    t1 = np.einsum("pd,pqd->pq", u, q1[None, :, :] - p0[:, None, :])
    lo, hi = np.minimum(t0, t1), np.maximum(t0, t1)
    return np.clip(np.minimum(hi, length[:, None]) - np.maximum(lo, 0.0), 0.0, None)


def coherence(X, must_link, cannot_link) -> float:
    """Coherence of a constraint set in the Euclidean metric of ``X`` (Davidson, Wagstaff & Basu 2006).

    Each constraint is the segment between its two points. A must-link ``a`` and a
    cannot-link ``r`` agree when neither projects onto the other with a positive
    overlap (``over_r a = over_a r = 0``): a cannot-link lying along a must-link
    says "far apart" where the must-link says "close". Coherence is the share of
    (must-link, cannot-link) pairs that agree, in [0, 1]; NaN without both kinds.
    """
    X = np.asarray(X, dtype=float)
    ml, cl = np.asarray(must_link, dtype=np.intp).reshape(-1, 2), np.asarray(cannot_link, dtype=np.intp).reshape(-1, 2)
    if len(ml) == 0 or len(cl) == 0:
        return float("nan")
    a0, a1, r0, r1 = X[ml[:, 0]], X[ml[:, 1]], X[cl[:, 0]], X[cl[:, 1]]
    incoherent = (_overlap(a0, a1, r0, r1) > 0) | (_overlap(r0, r1, a0, a1) > 0).T
    return float(1.0 - incoherent.mean())


def trial_coherence(data: pd.DataFrame) -> pd.Series:
    """Coherence of each row's constraint set, re-drawn from its job's ``cell.json`` and ``trial_seed``
    (the draw is deterministic); NaN where the row has no seed or the job no ``cell.json``."""
    import json
    from pathlib import Path

    from . import protocol
    from .config import CELL_FILE
    from .datasets import load_dataset

    out = pd.Series(np.nan, index=data.index)
    cache, datasets = {}, {}
    for idx, row in data.iterrows():
        cell_file = Path(str(row.get("source", ""))) / CELL_FILE
        if pd.isna(row.get("trial_seed")) or not cell_file.exists():
            continue
        cell = json.loads(cell_file.read_text())
        key = (json.dumps([cell["dataset"], cell["constraints"], cell["noise"]], sort_keys=True), int(row["trial_seed"]))
        if key not in cache:
            dkey = json.dumps(cell["dataset"], sort_keys=True)
            if dkey not in datasets:
                datasets[dkey] = load_dataset(cell["dataset"]["name"],
                                              **protocol.report_safe_dataset_params(cell["dataset"]))
            ds = datasets[dkey]
            rng, _ = protocol.trial_streams(int(row["trial_seed"]))
            cons, _ = protocol.draw_supervision(ds.y, cell["constraints"], cell["noise"], rng)
            cache[key] = coherence(ds.X, cons.must_link, cons.cannot_link)
        out[idx] = cache[key]
    return out


def utility(data: pd.DataFrame, baseline: str, metric: str, x: str | None = None, pool=(),
            with_coherence: bool = False) -> pd.DataFrame:
    """Did the constraints help? Each method against its unconstrained ``baseline`` on the same trials.

    The baseline runs on the same constraint sets (same ``trial_seed``) without
    using them, so its ``constraint_violations`` on a trial is the set's
    *informativeness* (Davidson et al. 2006: the share of the constraints the
    unconstrained algorithm violates; 0 when it satisfies them already). One row
    per (dataset, setting, x, method): ``n_pairs``, ``informativeness`` (mean),
    ``coherence`` (mean, with ``with_coherence``), ``gain`` (mean method minus
    baseline, in the metric's units), ``share_worse`` (share of paired trials in
    which the constraints made the method *worse* than the baseline) and
    ``corr_informativeness_gain`` (Spearman, NaN when either is constant).
    """
    from scipy.stats import spearmanr

    if "constraint_violations" not in data:
        raise ValueError("utility needs the constraint_violations metric in the runs (metrics=[..., constraint_violations])")
    wide = paired_frame(data, metric, x, pool)
    if baseline not in wide.columns:
        raise ValueError(f"no method labelled {baseline!r} in these results; labels: {sorted(wide.columns)}")
    info = paired_frame(data, "constraint_violations", x, pool)[baseline].rename("informativeness")
    sign = 1.0 if greater_is_better(metric) else -1.0
    coh = None
    if with_coherence:  # one re-draw per paired trial: the baseline's rows
        data = data.reset_index(drop=True)
        ok = _prepare(data, metric, x, pool)
        ok = ok[ok["method_label"] == baseline]
        values = trial_coherence(data.loc[ok.index])
        coh = pd.Series(values.to_numpy(), index=pd.MultiIndex.from_frame(ok[[*CELL, "pair"]]))
    out = []
    for cell, rows in wide.groupby(level=CELL, sort=True):
        for method in sorted(rows.columns):
            if method == baseline:
                continue
            both = rows[[method, baseline]].dropna().join(info, how="left")
            if both.empty:
                continue
            gain = (both[method] - both[baseline]).to_numpy(float)
            inf = both["informativeness"].to_numpy(float)
            varied = np.ptp(inf) > 0 and np.ptp(gain) > 0
            rec = dict(zip(CELL, cell), method=method, baseline=baseline, n_pairs=len(both),
                       informativeness=float(np.nanmean(inf)) if np.isfinite(inf).any() else np.nan,
                       gain=float(gain.mean()), share_worse=float(np.mean(sign * gain < 0)),
                       corr_informativeness_gain=float(spearmanr(inf, gain).statistic) if varied else np.nan)
            if coh is not None:
                rec["coherence"] = float(coh.reindex(both.index).mean())
            out.append(rec)
    return pd.DataFrame(out)
