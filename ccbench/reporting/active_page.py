"""The active track's page: ``ccbench report DIR --out reports/active`` on anytime rows (issue 53).

Writes ``index.md`` and ``index.html`` (the same blocks; every text read from the rows escaped:
:func:`md_text` in markdown, :func:`html.escape` in HTML), one figure per data set (``curves_<i>.png``:
ARI against q, the mean over the trials with its 95 % bootstrap interval, one panel per oracle noise rate,
top row on all points, bottom row on the points in no asked pair; file names are numbered, never made
from a row's text) and ``active.parquet`` (the curves, areas, effects and costs in long form; ``table`` is
``curves``, ``auc``, ``effects``, ``effects_by_noise`` (against random at each noise rate), ``costs``, and ``auc_unqueried``, ``effects_unqueried`` for the
unqueried area). The page ranks the all-points area (the headline) and, in a section of its own by the
same statistics, the area on the points in no asked pair (:data:`.active.UNQUERIED`). The numbers
are :mod:`.active`'s. The full track's cost is an **estimate** (:func:`estimate_core_hours`), printed
apart from the measured core-hours and labelled so.
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from . import active as act
from ._format import md_text, method_colors
from ._safe import output_dir, save_figure, write_table, write_text

__all__ = ["write_active_report", "estimate_core_hours", "FULL_TRACK"]

#: experiment=active's grid (conf/experiment/active.yaml): the 24 UCI sets with their sizes (points, as
#: loaded with preprocess=standardize), 4 noise rates, 21 budgets (q = 0..200 by 10), 10 trials.
FULL_TRACK = {
    "points": {"soybean_small": 47, "zoo": 101, "promoters": 106, "iris_uci": 150, "hepatitis": 80, "wine_uci": 178,
               "parkinsons": 195, "glass": 214, "spectf": 267, "ecoli": 336, "ionosphere": 351, "voting": 232,
               "housing": 506, "wdbc": 569, "balance": 625, "credit": 653, "breast_cancer_wisconsin": 683,
               "pima": 768, "yeast": 1484, "mfeat_fac": 2000, "mfeat_pix": 2000, "segmentation": 2310, "sick": 1947,
               "splice": 3175},
    "noise_rates": 4, "budgets": 21, "trials": 10,
}


def estimate_core_hours(frame: pd.DataFrame, track: dict = FULL_TRACK) -> tuple[float, pd.DataFrame]:
    """An **estimate** (not a measurement) of the full track's core-hours for the entries in ``frame``.

    Model: a curve's CPU time is proportional to the points ``n`` times the budgets scored; the rate of
    an entry is the median over its ok rows of ``curve_cpu_time / (n_samples x budgets)``; the estimate is
    ``sum over entries and data sets of rate x n_d x budgets x noise rates x trials``. It ignores that
    a strategy's cost grows with the questions asked and that some refits grow faster than n (a
    k-means-type fit is about linear in n; NPU's forest n log n), so it is a lower-side guess."""
    ok = frame[frame["status"] == "ok"]
    n_budgets = ok[[c for c in ok.columns if c.startswith("ari_all_q")]].notna().sum(axis=1).clip(lower=1)
    rate = (ok["curve_cpu_time"] / (ok["n_samples"] * n_budgets)).groupby(ok["entry"]).median()
    per_entry = rate * sum(track["points"].values()) * track["budgets"] * track["noise_rates"] * track["trials"] / 3600
    return float(per_entry.sum()), per_entry.rename("core_hours").reset_index()


def _missing_cells(frame: pd.DataFrame, trials: int) -> int:
    """How many (entry, data set, noise rate) cells of the rows' own grid hold fewer than ``trials`` rows
    (a sweep stopped part-way: every entry is expected on every set and rate the rows name)."""
    if frame.empty:
        return 0
    held = frame.groupby(["entry", "dataset", "noise"]).size()
    grid = frame["entry"].nunique() * frame["dataset"].nunique() * frame["noise"].nunique()
    return int(grid - (held >= trials).sum())


def _is_full_track(datasets, noises, budgets, trials: int, missing: int = 0) -> bool:
    """Whether the rows hold experiment=active's whole grid (every set, rate and budget, all trials, and
    every entry's every cell: ``missing`` cells short of trials make it a part)."""
    track = FULL_TRACK
    return (set(datasets) == set(track["points"]) and len(noises) == track["noise_rates"]
            and len(budgets) == track["budgets"] and trials >= track["trials"] and missing == 0)


def _cost_text(datasets, noises, budgets, trials: int, estimate: float, missing: int = 0) -> str:
    """The full track's cost: the measurement above when these rows are that track, else an estimate."""
    if _is_full_track(datasets, noises, budgets, trials, missing):
        return ("These rows are the full track (experiment=active's every data set, noise rate, budget and "
                "trial): its cost is the measurement above, not an estimate.")
    short = (f" These rows are not all of it: {missing} (entry, data set, noise rate) cell(s) hold fewer than "
             f"{trials} trials (a sweep stopped part-way, or an entry left off some sets or rates)." if missing else "")
    return (f"**Estimate, not a measurement**: the full track (experiment=active: "
            f"{len(FULL_TRACK['points'])} UCI sets, {FULL_TRACK['noise_rates']} noise rates, "
            f"{FULL_TRACK['budgets']} budgets to q = 200, {FULL_TRACK['trials']} trials) for "
            f"these entries: about {estimate:.1f} core-hours, from each entry's CPU per point "
            f"and budget in these rows scaled linearly to the full grid (a lower-side guess: "
            f"costs that grow faster than n, or with q, are not modelled); entries not in these "
            f"rows (e.g. MPCK-means when left out) are not in it.{short}")


def _track_text(frame: pd.DataFrame) -> tuple[bool, str]:
    """Whether ``frame`` is the full track, and the page's sentence on the track's cost (:func:`_cost_text`)."""
    datasets, noises, budgets = sorted(frame["dataset"].unique()), sorted(frame["noise"].unique()), act.budgets_of(frame)
    trials = int(frame.groupby(["dataset", "noise", "entry"]).size().max()) if len(frame) else 0
    missing = _missing_cells(frame, trials)
    text = _cost_text(datasets, noises, budgets, trials, estimate_core_hours(frame)[0], missing)
    return _is_full_track(datasets, noises, budgets, trials, missing), text


def _code_versions_text(data: pd.DataFrame) -> str | None:
    """Which code made the rows, where a method's rows come from more than one version of it (a sweep
    resumed on changed code with ``keep_stale=true``): each version's rows, and the jobs holding two."""
    if "code.method_hash" not in data or "method.name" not in data:
        return None
    rows = data[data["code.method_hash"].notna()]
    parts = []
    for method, per in rows.groupby("method.name", sort=True):
        counts = per["code.method_hash"].astype(str).value_counts()
        if len(counts) < 2:
            continue
        cell = [c for c in ("dataset.name", "constraints.strategy", "noise.rate") if c in per]
        mixed = int((per.groupby(cell)["code.method_hash"].nunique() > 1).sum()) if cell else 0
        versions = ", ".join(f"`{md_text(h[:12])}` {n} rows" for h, n in counts.items())
        held = "1 cell holds" if mixed == 1 else f"{mixed} cells hold"
        parts.append(f"`{md_text(method)}` from {len(counts)} code versions ({versions}; {held} more than one)")
    if not parts:
        return None
    return ("**Code versions** (the rows' `code.method_hash`): " + "; ".join(parts) + ". A sweep resumed on changed "
            "code with `keep_stale=true` keeps the rows the old code made; whether the versions give the same "
            "answers is not shown by these rows (sweeps/README.md says what changed).")


def _ci(mean, lo, hi) -> str:
    return "-" if not np.isfinite(mean) else f"{mean:.3f} [{lo:.3f}, {hi:.3f}]"


def _sign(v: float) -> str:
    return f"{v:+.3f}"


def _headline(ranking: dict, margin: float, label: str = "AUC") -> list[str]:
    """One sentence per (reference, entry): the difference in ``label`` with its interval, the test, the verdict."""
    table = ranking["effects"]
    if table.empty:
        return ["No pair of entries shares a data set: nothing to rank."]
    out = []
    for (kind, ref), rows in table.groupby(["reference", "reference_name"], sort=False):
        for _, r in rows.sort_values("mean_diff", ascending=False).iterrows():
            verdict = r["verdict"] if r["verdict"] != "tied" else "a tie (Holm p > 0.05)"
            out.append(f"`{md_text(r['method'])}` vs `{md_text(ref)}` ({kind}): {_sign(r['mean_diff'])} {label} "
                       f"[{_sign(r['ci_low'])}, {_sign(r['ci_high'])}] over {int(r['n_sets'])} data sets "
                       f"({int(r['wins'])} wins, {int(r['losses'])} losses), Wilcoxon p = {r['p_wilcoxon']:.3g}, "
                       f"Holm p = {r['p_holm']:.3g}, P(ahead/ROPE {margin:g}/behind) = {r['p_ahead']:.2f}/"
                       f"{r['p_rope']:.2f}/{r['p_behind']:.2f}: **{verdict}**")
    return out


def _figures(curves: pd.DataFrame, out: Path) -> list[tuple[str, str]]:
    """One PNG per data set; returns ``[(dataset, file name)]``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = method_colors(sorted(curves["entry"].unique()))
    made = []
    for i, (dataset, rows) in enumerate(curves.groupby("dataset", sort=True)):
        noises = sorted(rows["noise"].unique())
        fig, axes = plt.subplots(2, len(noises), figsize=(4.2 * len(noises), 6.4), squeeze=False, sharey="row")
        for c, noise in enumerate(noises):
            for r, view in enumerate(("all", "unqueried")):
                ax = axes[r][c]
                for entry, line in rows[(rows["noise"] == noise) & (rows["view"] == view)].groupby("entry"):
                    line = line.sort_values("q")
                    ax.plot(line["q"], line["mean"], label=entry, color=colors.get(entry))
                    ax.fill_between(line["q"], line["ci_low"], line["ci_high"], alpha=0.15, color=colors.get(entry))
                ax.set_title(f"{dataset}, oracle noise {noise:.0%}, ARI on {view} points", fontsize=9)
                ax.set_xlabel("questions asked q")
                ax.set_ylabel("ARI (mean, 95 % CI)")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        name = f"curves_{i:02d}.png"
        save_figure(fig, out / name, out, dpi=90)
        plt.close(fig)
        made.append((dataset, name))
    return made


def _table(header: list[str], rows: list[list[str]]) -> dict:
    return {"kind": "table", "header": header, "rows": rows}


def _p_best_table(ranking: dict, label: str) -> dict:
    """Per entry: its mean over the data sets, P(best) and its data sets."""
    pb = ranking["p_best"].sort_values("mean", ascending=False)
    return _table(["entry", f"mean {label} over data sets", "P(best)", "data sets"],
                  [[md_text(r["method"]), f"{r['mean']:.3f}", "-" if not np.isfinite(r["p_best"]) else
                    f"{r['p_best']:.2f}", str(int(r["n_sets"]))] for _, r in pb.iterrows()])


def _cell_table(aucs: pd.DataFrame) -> dict:
    """Per (data set, noise rate), each entry's mean area with its interval over the trials."""
    entries = sorted(aucs["entry"].unique())
    rows = []
    for (dataset, noise), cell in aucs.groupby(["dataset", "noise"], sort=True):
        by = cell.set_index("entry")
        rows.append([md_text(dataset), f"{noise:.0%}"] + [
            _ci(by.loc[e, "mean"], by.loc[e, "ci_low"], by.loc[e, "ci_high"]) if e in by.index else "-"
            for e in entries])
    return _table(["data set", "noise", *[md_text(e) for e in entries]], rows)


def _noise_blocks(by_noise: pd.DataFrame, aucs: pd.DataFrame, label: str = "AUC") -> list[dict]:
    """Each entry against random on its method at each noise rate alone: difference [interval], verdict;
    and each entry's mean area over the data sets at each rate (with how many sets it is over)."""
    if by_noise.empty:
        return []
    noises = sorted(by_noise["noise"].unique())
    rows = []
    for (ref, entry), per in by_noise.groupby(["reference_name", "method"], sort=True):
        at = per.set_index("noise")
        rows.append([md_text(entry), md_text(ref)] + [
            f"{_sign(at.loc[n, 'mean_diff'])} [{_sign(at.loc[n, 'ci_low'])}, {_sign(at.loc[n, 'ci_high'])}] "
            f"{int(at.loc[n, 'n_sets'])} sets, {md_text(at.loc[n, 'verdict'])}" if n in at.index else "-"
            for n in noises])
    return [
        {"kind": "h2", "text": f"{label} against random at each oracle noise rate"},
        {"kind": "p", "text": f"The headline's comparison with `random/<method>` on the cells of one noise rate at a "
                              f"time (paired over the data sets, 95 % bootstrap interval, Wilcoxon with Holm over "
                              f"each random family at that rate, leave-one-data-set-out stability): whether a "
                              f"strategy's lead over random survives wrong answers. Each cell: difference in "
                              f"{label} [interval], data sets, verdict (*tied* is not significant after Holm)."},
        _table(["entry", "against", *[f"{n:.0%} wrong answers" for n in noises]], rows),
        {"kind": "p", "text": f"Each entry's mean {label} over the data sets at each noise rate (a level, not a "
                              f"comparison: entries over different sets are not paired; the data sets in brackets):"},
        _table(["entry", *[f"{n:.0%}" for n in noises]],
               [[md_text(entry)] + [f"{per.loc[n, 'mean']:.3f} ({int(per.loc[n, 'count'])})" if n in per.index
                                    else "-" for n in noises]
                for entry, per in ((e, g.groupby("noise")["mean"].agg(["mean", "count"]))
                                   for e, g in aucs.dropna(subset=["mean"]).groupby("entry", sort=True))]),
    ]


def _unqueried_blocks(ranking: dict, aucs: pd.DataFrame, margin: float) -> list[dict]:
    """The ranking of the area on the points in no asked pair, by the headline's statistics."""
    left_out = ranking["unscored"]
    why = (f" Left out: {', '.join(md_text(d) for d in left_out)} (no entry has a score there: at some budget "
           "fewer than two points are in no asked pair)." if left_out else "")
    return [
        {"kind": "h2", "text": "Points in no asked pair: area under the unqueried curve (unqueried AUC)"},
        {"kind": "p", "text": "`auc_ari_unqueried`: the area under ARI on the points in no asked pair (answers "
                              "cannot simply be copied onto them), ranked by the headline's statistics: paired "
                              "differences against `random/<method>` and against the best entry (and an entry "
                              "against its reference implementation), data sets as blocks, bootstrap interval, Wilcoxon with Holm, the Bayesian signed-rank "
                              f"posterior with ROPE {margin:g}; not significant after Holm is a tie. The area is "
                              "undefined when, at some budget, fewer than two points are left unasked: such a "
                              "trial makes its cell missing (shown as - below), and the best entry is chosen "
                              "among those on every data set that is scored." + why},
        {"kind": "ul", "items": _headline(ranking, margin, "unqueried AUC")},
        _p_best_table(ranking, "unqueried AUC"),
        {"kind": "p", "text": "Unqueried AUC per data set and noise rate (mean over trials, 95 % bootstrap CI):"},
        _cell_table(aucs),
    ]


def _blocks(data: pd.DataFrame, frame: pd.DataFrame, ranking: dict, aucs: pd.DataFrame, costs: pd.DataFrame,
            figures: list, margin: float, command: str,
            unqueried: tuple[dict, pd.DataFrame] | None = None,
            by_noise: pd.DataFrame | None = None) -> list[dict]:
    """The page as blocks (heading, text, table, image); every value from the rows as plain text.
    ``unqueried``: the ranking and the per-cell areas of the unqueried area, or None (no such section)."""
    datasets = sorted(frame["dataset"].unique())
    noises = sorted(frame["noise"].unique())
    budgets = act.budgets_of(frame)
    trials = int(frame.groupby(["dataset", "noise", "entry"]).size().max()) if len(frame) else 0
    hours = act.measured_core_hours(data)
    estimate, per_entry = estimate_core_hours(frame)
    blocks = [
        {"kind": "h1", "text": "The active track: ARI against the number of questions asked"},
        {"kind": "p", "text": f"Made by `{md_text(command)}`. What these rows are: {len(datasets)} data set(s) "
                              f"({', '.join(md_text(d) for d in datasets)}), {frame['entry'].nunique()} entries "
                              f"({', '.join(md_text(e) for e in sorted(frame['entry'].unique()))}), oracle noise "
                              f"{', '.join(f'{n:.0%}' for n in noises)}, q = {budgets[0] if budgets else '-'}.."
                              f"{budgets[-1] if budgets else '-'} ({len(budgets)} budgets), up to {trials} paired "
                              f"trials per cell; {len(data)} rows in all."},
        {"kind": "p", "text": f"**Measured**: {hours:.3f} core-hours ({hours * 3600:.0f} CPU seconds) inside the curves (the rows' "
                              f"`curve_cpu_time`: CPU time of the strategy, the oracle and the refits, with what a "
                              f"refit spent in a worker process, a peer library's; the harness's own start-up per "
                              f"job is not in it)."},
        {"kind": "p", "text": _track_text(frame)[1]},
        *([{"kind": "p", "text": versions}] if (versions := _code_versions_text(data)) else []),
        {"kind": "h2", "text": "Headline: area under the curve (AUC, a mean ARI over q)"},
        {"kind": "p", "text": "Each entry against `random/<method>` (the baseline every curve is read against: "
                              "a strategy against random on the method it feeds, COBRAS, which asks its own "
                              "questions, against each `random/<method>`) and against the best entry (among "
                              "the entries on every data set; its family is every other entry); a reference "
                              "implementation (`peer_<name>`, its authors' package) is not ranked: the entry it "
                              "implements is read against it (reference implementation): the mean over "
                              "data sets of the per-data-set paired difference with its 95 % bootstrap interval over the data sets, the Wilcoxon "
                              "signed-rank test over the data sets with Holm over each reference's family, the "
                              "Bayesian signed-rank posterior with ROPE "
                              f"{margin:g}; a verdict changed by dropping one data set is *undetermined*. Not "
                              "significant after Holm is called a tie. A failed curve scores 0; a cell with a "
                              "skipped trial is missing."},
        {"kind": "ul", "items": _headline(ranking, margin)},
    ]
    blocks.append(_p_best_table(ranking, "AUC"))
    blocks.append({"kind": "h2", "text": "AUC per data set and noise rate (mean over trials, 95 % bootstrap CI)"})
    blocks.append(_cell_table(aucs))
    if by_noise is not None:
        blocks += _noise_blocks(by_noise, aucs)
    if unqueried is not None:
        blocks += _unqueried_blocks(*unqueried, margin)
    blocks.append({"kind": "h2", "text": "Curves"})
    blocks.append({"kind": "p", "text": "ARI after q answers, mean over the ok trials with its 95 % bootstrap "
                                        "interval; top: all points, bottom: the points in no asked pair."})
    for dataset, name in figures:
        blocks.append({"kind": "img", "src": name, "alt": f"curves on {dataset}"})
    blocks.append({"kind": "h2", "text": "Costs (CPU seconds, this machine)"})
    blocks.append(_table(["entry", "strategy per question (median)", "refit (median of the mean)",
                          "curves in all", "trials", "full-track estimate (core-hours)"],
                         [[md_text(r["entry"]), f"{r['strategy_cpu_per_query']:.4f}", f"{r['refit_cpu_mean']:.4f}",
                           f"{r['curve_cpu_seconds']:.1f}", str(int(r["trials"])),
                           f"{per_entry.set_index('entry')['core_hours'].get(r['entry'], np.nan):.2f}"]
                          for _, r in costs.iterrows()]))
    statuses = act.status_table(data)
    blocks.append({"kind": "h2", "text": "Statuses"})
    blocks.append(_table([md_text(c) for c in statuses.columns],
                         [[md_text(v) for v in r] for r in statuses.itertuples(index=False)]))
    failed = data[~data["status"].isin(["ok"])]
    if len(failed):
        first = failed.assign(entry=act.entry_labels(failed)).groupby(["entry", "status"])["error"].first()
        blocks.append(_table(["entry", "status", "first message"],
                             [[md_text(e), md_text(s), md_text(str(m).strip().splitlines()[-1] if m else "")]
                              for (e, s), m in first.items()]))
    return blocks


def _markdown(blocks: list[dict]) -> str:
    out = []
    for b in blocks:
        if b["kind"] == "h1":
            out.append(f"# {b['text']}")
        elif b["kind"] == "h2":
            out.append(f"## {b['text']}")
        elif b["kind"] == "p":
            out.append(b["text"])
        elif b["kind"] == "ul":
            out.append("\n".join(f"- {item}" for item in b["items"]))
        elif b["kind"] == "table":
            out.append("\n".join(["| " + " | ".join(b["header"]) + " |", "|" + "---|" * len(b["header"])]
                                 + ["| " + " | ".join(r) + " |" for r in b["rows"]]))
        elif b["kind"] == "img":
            out.append(f"![{md_text(b['alt'])}]({b['src']})")
    return "\n\n".join(out) + "\n"


def _inline(text: str) -> str:
    """Markdown-escaped text (already :func:`md_text`) as HTML: entities undone once and escaped again
    (so a row's ``<script>`` stays text), backticks and ``**`` as code and bold."""
    import re

    plain = html.unescape(text.replace("\\|", "|"))
    escaped = html.escape(plain)
    escaped = re.sub(r"`([^`]*)`", r"<code>\1</code>", escaped)
    return re.sub(r"\*\*([^*]*)\*\*", r"<b>\1</b>", escaped)


def _html(blocks: list[dict]) -> str:
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>The active track</title>"
           "<style>body{font-family:sans-serif;max-width:75em;margin:auto}table{border-collapse:collapse}"
           "td,th{border:1px solid #ccc;padding:2px 6px;font-size:90%}img{max-width:100%}</style></head><body>"]
    for b in blocks:
        if b["kind"] in ("h1", "h2"):
            out.append(f"<{b['kind']}>{_inline(b['text'])}</{b['kind']}>")
        elif b["kind"] == "p":
            out.append(f"<p>{_inline(b['text'])}</p>")
        elif b["kind"] == "ul":
            out.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in b["items"]) + "</ul>")
        elif b["kind"] == "table":
            out.append("<table><tr>" + "".join(f"<th>{_inline(h)}</th>" for h in b["header"]) + "</tr>"
                       + "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in b["rows"])
                       + "</table>")
        elif b["kind"] == "img":
            out.append(f"<img src='{html.escape(b['src'], quote=True)}' alt='{html.escape(b['alt'], quote=True)}'>")
    return "".join(out) + "</body></html>\n"


def write_active_report(data: pd.DataFrame, out, *, command: str = "ccbench report", metric: str = act.METRIC,
                        margin: float = 0.03, figures: bool = True, site=None) -> dict:
    """Write the active track's page into ``out`` (module docstring); return {name: path}. ``site``: also
    write the static site there (:mod:`.active_site`, from the same numbers; its figures link to ``out``'s)."""
    out = output_dir(out)
    out.mkdir(parents=True, exist_ok=True)
    frame = act.active_frame(data)
    if frame.empty:
        raise ValueError("no anytime curve in these rows: every (strategy, method) pair was skipped")
    ranking = act.effects(frame, metric, margin=margin)
    aucs = act.auc_table(frame, metric)
    curves = act.curve_frame(frame)
    costs = act.cost_table(frame)
    # the unqueried area gets its own ranking unless it is already the headline's metric
    unqueried = None
    if metric != act.UNQUERIED and act.UNQUERIED in frame:
        unqueried = (act.effects(frame, act.UNQUERIED, margin=margin), act.auc_table(frame, act.UNQUERIED))
    by_noise = act.effects_by_noise(frame, metric, margin=margin) if frame["noise"].nunique() > 1 else None
    made = _figures(curves, out) if figures else []
    command = str(command)
    blocks = _blocks(data, frame, ranking, aucs, costs, made, margin, command, unqueried, by_noise)
    paths = {"md": write_text(out / "index.md", _markdown(blocks), out),
             "html": write_text(out / "index.html", _html(blocks), out)}
    parts = [curves.assign(table="curves"), aucs.assign(table="auc"),
             ranking["effects"].assign(table="effects"), costs.assign(table="costs")]
    if by_noise is not None and len(by_noise):
        parts.append(by_noise.assign(table="effects_by_noise"))
    if unqueried is not None:
        parts += [unqueried[1].assign(table="auc_unqueried"), unqueried[0]["effects"].assign(table="effects_unqueried")]
    long = pd.concat(parts, ignore_index=True)
    paths["parquet"] = write_table(long, out / "active.parquet", out)
    paths.update({f"figure_{i}": out / name for i, (_, name) in enumerate(made)})
    if site is not None:
        from .active_site import write_active_site

        full, cost = _track_text(frame)
        paths["site"] = write_active_site(
            site, ranking=ranking, aucs=aucs, costs=costs, title_note=blocks[1]["text"], by_noise=by_noise,
            unqueried=None if unqueried is None else unqueried[1], figures=dict(made), figure_dir=out,
            banner="" if full else cost)
    return paths
