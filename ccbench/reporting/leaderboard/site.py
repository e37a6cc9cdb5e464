"""The leaderboard as a static, offline site (``ccbench report DIR --leaderboard --site SITE``).

Why: the leaderboard pages are long documents, one per supervision kind; a researcher asking "how does
my kind of data set behave" or "where does this method fail" must read them all. The site answers
those questions one page each, from the same rows and the same definitions (:mod:`._frame`):

- ``index.html``: the kinds, every data set and every method, with links;
- every number is the base seed's, as the pages rank it (the pages give a second seed's spread);
- ``kind-<kind>.html``: the kind's average ranks (failures last; the data sets are the Friedman
  blocks, :func:`dataset_blocks`) as a table and an inline SVG chart;
- ``dataset-<name>.html``: every method's mean and 95 % interval (Student's t over the trials) per
  cell, its status and fit time, the cell's winners marked;
- ``method-<name>.html``: where the method wins, fails and is refused, and its cost (fit time and
  peak memory per data set, a fit-time curve against the data set's size).

Every table sorts by clicking a column header and filters by typing (a few dozen lines of inline
JavaScript, :data:`._site_html.SCRIPT`; no CDN, no framework). Every text from the rows is escaped and
every file is written by replacing, never through a symlink (:mod:`ccbench.reporting._safe`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._safe import output_dir, write_text
from ..stats import _sign
from ._frame import CELL, DEFAULT_METRIC, KINDS, _cells, _of_kind, attempted_cells, cell_means, long_frame, main_methods
from ._site_html import bar_svg, esc, page, scatter_svg, slug, table
from .ranks import dataset_blocks, rank_over_data_sets, rank_table
from .seeds import base_seed

__all__ = ["write_site"]

_FAILED = ("error", "timeout", "not_found", "infeasible")


def _cell_stats(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per (kind, cell, method): trials, ok, mean, the 95 % t interval, status, fit time, peak memory, winner."""
    from scipy import stats

    g = frame.groupby(["kind", *CELL, "method"], sort=True)
    out = pd.DataFrame({"trials": g.size(), "ok": g["status"].agg(lambda s: int((s == "ok").sum())),
                        "mean": g["value"].mean(), "sd": g["value"].std(ddof=1),
                        "fit_time_s": g["fit_time"].mean(), "peak_rss_mb": g["peak_rss_mb"].max(),
                        "status": g["status"].agg(lambda s: "completed" if (s == "ok").all()
                                                  else s[s != "ok"].mode().iloc[0])}).reset_index()
    done = out["status"] == "completed"
    out["mean"] = out["mean"].where(done)
    half = stats.t.ppf(0.975, (out["ok"] - 1).clip(lower=1)) * out["sd"] / np.sqrt(out["ok"].clip(lower=1))
    out["ci_low"] = (out["mean"] - half).where(out["ok"] > 1)
    out["ci_high"] = (out["mean"] + half).where(out["ok"] > 1)
    sign = _sign(metric)
    # crowned among the ranked methods only, as the pages rank them: a tuned variant or a k-free run is
    # shown beside them, compared with its own default (sections 1b, 1c), never the cell's winner
    ranked = out["method"].isin(main_methods(frame))
    best = (out["mean"] * sign).where(ranked).groupby([out[c] for c in ["kind", *CELL]]).transform("max")
    out["winner"] = done & ranked & np.isclose(out["mean"] * sign, best)
    return out


def _nav(kinds, index: str = "index.html") -> list[tuple[str, str]]:
    return [(index, "ccbench leaderboard")] + [(slug("kind", k), k) for k in kinds]


def _kind_page(kind: str, frame: pd.DataFrame, metric: str, nav) -> tuple[str, pd.DataFrame]:
    cells = _cells(_of_kind(frame, kind))
    means, attempted = cell_means(cells), attempted_cells(cells)
    main = [m for m in main_methods(cells) if m in means.columns]
    ranks = rank_table(means[main], metric, attempted[main]).reset_index()
    by_set = rank_over_data_sets(dataset_blocks(means[main], metric, attempted[main]))
    ranks["rank_over_data_sets"] = ranks["method"].map(by_set)
    ranks = ranks.sort_values("rank_over_data_sets", kind="stable")
    sets = sorted(cells["dataset"].unique())
    body = (f'<p>{len(main)} methods at their defaults ranked over {len(sets)} data sets and '
            f'{len(means)} cells (data set x setting x budget x noise) on <code>{esc(metric)}</code>. '
            f'<b>rank_over_data_sets</b>: a method\'s per-cell ranks (failures last) averaged within each data set, '
            f'the methods ranked within each data set on that average (a data set is one Friedman block of the '
            f'pages\' CD diagram), then averaged over the data sets; 1 is best. The same numbers as the pages.</p>'
            + bar_svg(ranks.set_index("method")["rank_over_data_sets"], f"Average rank on {metric} ({kind}), lower is better")
            + "<h2>Ranks</h2>" + table(ranks, links={"method": lambda m: slug("method", m)}, table_id="ranks")
            + "<h2>Data sets</h2><p>" + ", ".join(f'<a href="{esc(slug("dataset", d))}">{esc(d)}</a>' for d in sets)
            + "</p>")
    return page(f"{kind}: average ranks", body, nav), ranks


def _dataset_page(name: str, stats: pd.DataFrame, info: dict, metric: str, nav) -> str:
    rows = stats[stats["dataset"] == name]
    shown = rows[["kind", "setting", "budget", "noise", "method", "mean", "ci_low", "ci_high", "status", "ok",
                  "trials", "fit_time_s", "winner"]].rename(columns={"mean": metric})
    shown = shown.assign(setting=shown["setting"].replace("", "-"))
    winners = rows[rows["winner"]].groupby("method").size().sort_values(ascending=False)
    def count(key):  # a size column is float after its NaN-tolerant max: 150 points, not 150.0
        value = pd.to_numeric(info.get(key), errors="coerce")
        return f"{int(value):,}" if pd.notna(value) else "?"

    body = (f'<p>{count("n")} points, {count("d")} features, {count("k")} '
            f'classes. Per cell (kind, setting, budget, noise) every method\'s mean of <code>{esc(metric)}</code> over '
            f'its trials with a 95 % t interval (completed cells only: every trial ok), its status (completed or '
            f'the most common other status), mean fit time; the cell\'s best completed method among the ranked '
            f'ones is marked <b>winner</b> (green; a tuned variant or a k-free run is shown, not crowned).</p><p>Cells won: '
            + (", ".join(f'<a href="{esc(slug("method", m))}">{esc(m)}</a> {int(n)}' for m, n in winners.items())
               or "none completed") + "</p>"
            + table(shown, links={"method": lambda m: slug("method", m)},
                    row_class=shown["winner"].map(lambda w: "win" if w else ""), table_id="cells"))
    return page(f"Data set {name}", body, nav)


def _method_page(name: str, stats: pd.DataFrame, frame: pd.DataFrame, sizes: pd.Series, metric: str, nav) -> str:
    rows = stats[stats["method"] == name]
    mine = frame[frame["method"] == name]
    per_set = rows.groupby("dataset").agg(cells=("winner", "size"), wins=("winner", "sum"),
                                          completed=("status", lambda s: int((s == "completed").sum())),
                                          failed=("status", lambda s: int(s.isin(_FAILED).sum())),
                                          refused=("status", lambda s: int((s == "refused").sum())),
                                          mean=("mean", "mean"))
    cost = mine[mine["status"] == "ok"].groupby("dataset").agg(median_fit_time_s=("fit_time", "median"),
                                                               peak_rss_mb=("peak_rss_mb", "max"))
    per_set = per_set.join(cost).reset_index()
    per_set.insert(1, "n_points", per_set["dataset"].map(sizes).round().astype("Int64"))  # counts, not 336.000
    per_set = per_set.rename(columns={"mean": f"mean {metric} (completed cells)"})
    failures = rows[rows["status"].isin([*_FAILED, "refused"])][["kind", "dataset", "setting", "budget", "noise",
                                                                 "status", "ok", "trials"]]
    curve = per_set.set_index("dataset")[["n_points", "median_fit_time_s"]].dropna()
    statuses = mine["status"].value_counts()
    body = (f'<p>Trials: {", ".join(f"{esc(s)} {int(n)}" for s, n in statuses.items())}. Cells won: '
            f'{int(rows["winner"].sum())} of {len(rows)}; failed (error, timeout, not found, infeasible): '
            f'{int(rows["status"].isin(_FAILED).sum())}; refused by the time or memory budget: '
            f'{int((rows["status"] == "refused").sum())}.</p>'
            + scatter_svg(curve, "n_points", "median_fit_time_s", f"{name}: median fit time per data set",
                          "data set size (points)", "fit time (s)")
            + "<h2>Per data set</h2>" + table(per_set, links={"dataset": lambda d: slug("dataset", d)}, table_id="sets")
            + "<h2>Where it fails or is refused</h2>"
            + (table(failures, links={"dataset": lambda d: slug("dataset", d)}, table_id="failures")
               if len(failures) else "<p>Nowhere: every cell it ran completed or was skipped by design.</p>"))
    return page(f"Method {name}", body, nav)


def _index(kinds: dict, stats: pd.DataFrame, frame: pd.DataFrame, info: pd.DataFrame, metric: str,
           command: str, nav) -> str:
    methods = frame.groupby("method").agg(trials=("status", "size"), ok=("status", lambda s: int((s == "ok").sum())),
                                          family=("family", "first"))
    wins = stats.groupby("method")["winner"].sum().astype(int)
    methods["cells_won"] = wins.reindex(methods.index).fillna(0).astype(int)
    for kind, ranks in kinds.items():
        methods[f"rank {kind}"] = ranks.set_index("method")["rank_over_data_sets"].reindex(methods.index)
    methods = methods.reset_index()
    kind_list = "".join(f'<li><a href="{esc(slug("kind", k))}">{esc(k)}</a>: {len(r)} ranked methods</li>'
                        for k, r in kinds.items())
    body = (f"<p>Constrained clustering methods ranked on <code>{esc(metric)}</code> over "
            f"{frame['dataset'].nunique()} data sets, {len(frame):,} trials. Generated by "
            f"<code>{esc(command)}</code>. The definitions are those of the leaderboard pages "
            f"(docs/leaderboard.md): ranks over completed cells, failures ranked last.</p>"
            f"<h2>Supervision kinds</h2><ul>{kind_list}</ul>"
            "<h2>Methods</h2>" + table(methods, links={"method": lambda m: slug("method", m)}, table_id="methods")
            + "<h2>Data sets</h2>" + table(info, links={"dataset": lambda d: slug("dataset", d)}, table_id="datasets"))
    return page("ccbench leaderboard", body, nav)


def write_site(data: pd.DataFrame, out, metric: str = DEFAULT_METRIC, margin: float = 0.03,
               command: str = "ccbench report --site") -> Path:
    """Write the site into ``out`` (created; a symlink there is refused); return the index's path."""
    out = output_dir(out)
    frame = long_frame(data, metric)
    if "seed" in frame:  # the base seed, as the pages rank it (a second seed only measures their spread)
        frame = frame[frame["seed"] == base_seed(frame)]
    kinds_present = [k for k in KINDS if (frame["kind"] == k).any()]
    nav = _nav(kinds_present)
    stats = _cell_stats(frame[~frame["unconstrained"]], metric)
    sizes = (pd.to_numeric(data["n_samples"], errors="coerce").groupby(data["dataset.name"].astype(str)).max()
             if "n_samples" in data else pd.Series(dtype=float))
    info = pd.DataFrame({"dataset": sorted(frame["dataset"].unique())})
    for col, name in (("n_samples", "n"), ("n_features", "d"), ("n_classes", "k")):
        values = (pd.to_numeric(data[col], errors="coerce").groupby(data["dataset.name"].astype(str)).max()
                  if col in data else pd.Series(dtype=float))
        info[name] = info["dataset"].map(values)
    kinds = {}
    for kind in kinds_present:
        text, kinds[kind] = _kind_page(kind, frame, metric, nav)
        write_text(out / slug("kind", kind), text, out)
    for _, rec in info.iterrows():
        write_text(out / slug("dataset", rec["dataset"]),
                   _dataset_page(rec["dataset"], stats, rec.to_dict(), metric, nav), out)
    for method in sorted(frame["method"].unique()):
        write_text(out / slug("method", method), _method_page(method, stats, frame, sizes, metric, nav), out)
    info = info.assign(methods_completed=info["dataset"].map(
        stats[stats["status"] == "completed"].groupby("dataset")["method"].nunique()).fillna(0).astype(int))
    return write_text(out / "index.html", _index(kinds, stats, frame, info, metric, command, nav), out)
