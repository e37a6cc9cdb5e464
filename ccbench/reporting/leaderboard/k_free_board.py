"""The k-free board (issue 50, item 5): a second leaderboard of the runs in which the method chose k itself.

On the main board every method that can take k is given the true number of classes; users do not know it.
Here every method must choose k: the affinity-propagation family and COBS by their own rule
(``experiment=leaderboard_k_free``, labelled ``ap[k-free]``), every method that needs k by CVCP over k in
:func:`ccbench.running.protocol.k_free_range` (``experiment=leaderboard_k_free_cvcp``, ``method.n_clusters=free``
with ``tune=cvcp``, labelled ``kmeans[k-free]+cvcp``). The board is ranked with the main board's machinery:
the headline (:func:`~.effects.headline_effects`: paired effect sizes over data sets against the reference and
the best) and the average ranks as the secondary view (:func:`~.ranks.rank_table`).

Naming (a choice): on this page every entry chose k, so each is named by its **method name** alone; the
reference ``kmeans`` is k-means choosing k by CVCP (``kmeans[k-free]+cvcp`` on the main pages). A method with
both an own-rule and a CVCP k-free run is entered with its own rule (the untuned run).

A row is on the board when its method chose k: labelled ``[k-free]`` (beside the same method given k), or
run with ``method.n_clusters=free``, or with no k by a method that finds k itself (a sweep of k-free runs
alone). A main-board method with no such row is **missing**, named on the page with the command that runs it.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from ..origins import _frame_markdown
from .._safe import write_text
from ._frame import (N_BOOT, NOT_FITTED_STATUS, _cells, _of_kind, attempted_cells, cell_means, main_methods,
                     not_fitted_frame, unmeasured_cells)
from .effects import FAILURE_SCORE, headline_effects
from .headline_text import headline_blocks
from .ranks import rank_table

__all__ = ["k_free_frame", "missing_methods", "k_choice_table", "failure_table", "k_free_blocks", "write_k_free_board", "PAGE"]

#: The page's file stem (``k_free.md``, ``k_free.html``).
PAGE = "k_free"

#: The kinds the k-free track runs (the middle pair budget is a ``pairs`` cell; labels is ``labels``).
KINDS = ("pairs", "labels")

_COMMANDS = {True: "ccbench experiment=leaderboard_k_free_cvcp hydra.sweep.dir=runs/leaderboard",
             False: "ccbench experiment=leaderboard_k_free hydra.sweep.dir=runs/leaderboard"}


def _chose_k(frame: pd.DataFrame, data: pd.DataFrame | None) -> pd.Series:
    """Which rows' method chose k itself: labelled k-free (``ap[k-free]``, ``kmeans[k-free]+cvcp``), or, read
    from the config (``data``'s ``method.n_clusters``), run with ``free`` or with no k by a method that finds k
    itself -- a sweep of k-free runs alone, with no given-k run to pair the label with."""
    chose = frame["k_free"].astype(bool) if "k_free" in frame else pd.Series(False, index=frame.index)
    if data is None or "method.n_clusters" not in data or frame.empty:
        return chose
    value = data["method.n_clusters"].iloc[frame["row"].to_numpy()].to_numpy(object)
    finds = frame["method_name"].map(lambda m: _needs_k(m) is False).to_numpy()
    by_config = np.array([v == "free" for v in value]) | (pd.isna(value) & finds)
    return chose | by_config


def k_free_frame(frame: pd.DataFrame, data: pd.DataFrame | None = None) -> pd.DataFrame:
    """The long frame's rows whose method chose k itself (:func:`_chose_k`) named by method name (module
    docstring), as main methods: not tuned, not k-free relative to anything on this board."""
    rows = frame[_chose_k(frame, data)]
    if rows.empty:
        return rows
    # one entry per method name: its own rule (untuned) where it has one, else its CVCP run
    chosen = rows.sort_values("tuned", kind="stable").groupby("method_name")["method"].first()
    rows = rows[rows["method"].isin(set(chosen))]
    return rows.assign(variant=rows["method"], method=rows["method_name"], tuned=False, k_free=False,
                       default_method=rows["method_name"], k_free_of=None)


@functools.lru_cache(maxsize=None)
def _needs_k(name: str) -> bool | None:
    """True: needs k; False: finds k itself (accepts one); None: takes no k, or not installed here."""
    from ... import registry

    try:
        spec = registry.get_method_spec(name)
    except Exception:  # noqa: BLE001 - a report opens without the method's package
        return None
    return True if spec.needs_n_clusters else (False if spec.accepts_n_clusters else None)


def missing_methods(frame: pd.DataFrame, board: pd.DataFrame) -> pd.DataFrame:
    """The main board's methods (by name) with no row on the k-free board, and why: ``method``, ``chooses_k_by``
    (its own rule, or CVCP over k), ``run_with`` (the command that adds it)."""
    main = frame[frame["method"].isin(main_methods(frame))] if len(frame) else frame
    expected = sorted(set(main["method_name"])) if len(main) else []
    present = set(board["method"]) if len(board) else set()
    out = []
    for name in expected:
        if name in present:
            continue
        needs = _needs_k(name)
        out.append({"method": name,
                    "chooses_k_by": {True: "CVCP over k (needs k)", False: "its own rule (finds k itself)"}.get(
                        needs, "unknown (takes no k, or not installed here)"),
                    "run_with": f"`{_COMMANDS[needs is not False]}`"})
    return pd.DataFrame(out, columns=["method", "chooses_k_by", "run_with"])


def k_choice_table(board: pd.DataFrame, data: pd.DataFrame) -> pd.DataFrame:
    """Per (kind, method): how the chosen k compares with the true one over the ok trials (``data``'s
    ``n_clusters_found`` and ``n_classes``): ``trials``, ``k_exact`` (share with k found = the number of
    classes), ``k_median_abs_error`` (median of |k found - classes|), ``k_found_median``."""
    cols = ["kind", "method", "variant", "trials", "k_exact", "k_median_abs_error", "k_found_median"]
    if board.empty or not {"n_clusters_found", "n_classes"} <= set(data.columns):
        return pd.DataFrame(columns=cols)
    ok = board[(board["status"] == "ok") & ~board["unconstrained"]]
    src = data.iloc[ok["row"].to_numpy()]
    found = pd.to_numeric(src["n_clusters_found"], errors="coerce").to_numpy()
    classes = pd.to_numeric(src["n_classes"], errors="coerce").to_numpy()
    t = ok[["kind", "method", "variant"]].assign(found=found, err=np.abs(found - classes))
    g = t.groupby(["kind", "method", "variant"])
    return pd.DataFrame({"trials": g.size(), "k_exact": g["err"].agg(lambda e: float((e == 0).mean())),
                         "k_median_abs_error": g["err"].median(),
                         "k_found_median": g["found"].median()}).reset_index()[cols]


def failure_table(board: pd.DataFrame) -> pd.DataFrame:
    """Per (kind, method) with any ranked trial not ``ok``: its ranked trials per status (``ok`` included);
    the ranked trials are the kind's supervised cells (:func:`~._frame._cells`: an unconstrained run ranks nothing)."""
    ranked = pd.concat([_cells(_of_kind(board, kind)).assign(kind=kind) for kind in KINDS], ignore_index=True)
    if ranked.empty:
        return pd.DataFrame(columns=["kind", "method", "ok"])
    counts = ranked.groupby(["kind", "method", "status"]).size().unstack("status", fill_value=0)
    failed = counts.drop(columns="ok", errors="ignore").sum(axis=1) > 0
    return counts[failed].reset_index().rename_axis(columns=None)


def _md(table: pd.DataFrame) -> str:
    table = table if isinstance(table.index, pd.RangeIndex) else table.reset_index()
    f = table.map(lambda v: f"{v:.3g}" if isinstance(v, (float, np.floating)) and np.isfinite(v) else
                  ("" if isinstance(v, (float, np.floating)) else v))
    return _frame_markdown(f)


#: The kind pages' headline wording and this page's: the reference is k-means choosing k, no CD diagram here.
_REWORDED = {"plain `kmeans`": "`kmeans` (here: k-means choosing k by CVCP)",
             "The average ranks and the CD diagram (section 1) are the secondary view.":
                 "The average ranks below are the secondary view."}


def _demote(blocks: list) -> list:
    """The headline's blocks one heading level down (under the page's per-kind heading), in this page's words."""
    out = []
    for b in blocks:
        if b[0] == "md":
            text = b[1]
            for old, new in _REWORDED.items():
                text = text.replace(old, new)
            b = ("md", text)
        out.append(("h", b[1] + 1, b[2]) if b[0] == "h" else b)
    return out


def k_free_blocks(frame: pd.DataFrame, data: pd.DataFrame, metric: str, margin: float = 0.03,
                  alpha: float = 0.05, unfitted: pd.DataFrame | None = None) -> tuple[list, dict]:
    """The k-free page as blocks (``("h", level, text)``, ``("md", text)``) and its tables; ``([], {})`` when
    the rows hold no k-free run. ``frame``: every kind's :func:`~._frame.long_frame` rows on ``metric``;
    ``unfitted``: its not-fitted rows (:func:`~._frame.not_fitted_frame`, made from ``data`` when None)."""
    board = k_free_frame(frame, data)
    if board.empty or _cells(board).empty:
        return [], {}
    missing = missing_methods(frame, board)
    variants = board.drop_duplicates("method").sort_values("method")
    blocks = [("h", 1, "ccbench leaderboard: the k-free board"),
              ("md", "Every method here **chose k itself**, as a user must: the affinity-propagation family and "
                     "COBS by their own rule (`name[k-free]` on the kind pages), every method that needs k by "
                     "CVCP over k (`name[k-free]+cvcp`: k chosen among 2..max(2, min(50, floor(sqrt(n)), n-1)) "
                     "by cross-validation over the supervision alone, the true k never read; its other "
                     "parameters at their defaults). Entries are named by method name: **`kmeans` is k-means "
                     "choosing k by CVCP**, the headline's reference. The same data sets, trials and seeds as "
                     "the main board, at the middle pair budget and on labels, so each entry pairs with the "
                     "same method given k on the kind pages (section 1c)."),
              ("md", "Entries: " + ", ".join(f"`{m}` (`{v}`)" for m, v in
                                             variants[["method", "variant"]].itertuples(index=False)) + ".")]
    if len(missing):
        blocks += [("md", f"**Not on this board ({len(missing)} of the main board's methods): not run k-free in "
                          f"these rows.** Each is ranked once its k-free rows are added (same sweep dir):"),
                   ("md", _md(missing))]
    tables = {"k_free_missing": missing}
    effects, ranks = [], []
    for kind in KINDS:
        rows = _of_kind(board, kind)
        cells = _cells(rows[rows["kind"].isin([kind])])
        if cells.empty:
            continue
        blocks.append(("h", 2, f"{kind}"))
        if metric in FAILURE_SCORE and cells["method"].nunique() > 1:
            result = headline_effects(rows, metric, margin=margin, alpha=alpha, n_boot=N_BOOT)
            blocks += _demote(headline_blocks({metric: result}, alpha, margin, N_BOOT, _md))
            effects.append(result["effects"].assign(kind=kind))
        else:
            blocks.append(("md", f"No headline: it needs two methods and a metric with a known failure score "
                                 f"({', '.join(sorted(FAILURE_SCORE))})."))
        base = cells[cells["seed"] == cells["seed"].min()]
        means = cell_means(base)
        attempted = attempted_cells(base).reindex_like(means).fillna(False).astype(bool)
        table = rank_table(means, metric, attempted, unmeasured_cells(base)).reset_index()
        blocks += [("h", 3, "Average ranks (the secondary view)"),
                   ("md", f"Per cell, ranks among this board's entries (1 = best); `rank_failed_last`: a measured "
                          f"failure ranks last, a refused or skipped cell is missing; over {len(means)} cells."),
                   ("md", _md(table))]
        ranks.append(table.assign(kind=kind))
    # the kills recorded without fitting, which no score counts, are counted here too (timeout_not_fitted)
    if unfitted is None:
        unfitted = not_fitted_frame(data, metric) if data is not None else board.iloc[:0]
    unfitted = k_free_frame(unfitted, data) if len(unfitted) else board.iloc[:0]
    failures = failure_table(pd.concat([board, unfitted], ignore_index=True) if len(unfitted) else board)
    failures = failures.rename(columns={NOT_FITTED_STATUS: "timeout_not_fitted"})
    if len(failures):
        blocks += [("h", 2, "Trials that did not finish"),
                   ("md", "Per kind and entry, its trials by status where any did not end `ok` (a measured failure, "
                          "`timeout`, `error`, `infeasible`, ranks last in its cell; `refused` and `skipped` leave "
                          "the cell missing). `infeasible` here is the method refusing the k chosen for it: CVCP "
                          "validates each k on folds that hold part of the constraints, so it can choose a k the "
                          "whole set rules out (fewer clusters than chunklets that cannot-links make mutually "
                          "exclusive), which a method that keeps every constraint (NNC) refuses. A k-free user "
                          "of that method meets the same refusal: it is scored, not excused."
                          + (" `timeout_not_fitted`: recorded as `timeout` without fitting after another trial's "
                             "kill; no score counts it." if "timeout_not_fitted" in failures else "")),
                   ("md", _md(failures))]
    choice = k_choice_table(board, data)
    if len(choice):
        blocks += [("h", 2, "The k chosen"),
                   ("md", "Per kind and entry, over its ok trials: `k_exact`, the share whose number of clusters "
                          "found equals the number of classes; `k_median_abs_error`, the median of |found - "
                          "classes|; `k_found_median`."),
                   ("md", _md(choice))]
    tables.update(k_free_effects=pd.concat(effects, ignore_index=True) if effects else pd.DataFrame(),
                  k_free_ranks=pd.concat(ranks, ignore_index=True) if ranks else pd.DataFrame(), k_free_k=choice,
                  k_free_failures=failures)
    return blocks, tables


def write_k_free_board(frame, data, out, metric, margin, alpha, to_markdown, to_html,
                       unfitted=None) -> tuple[dict, list, list]:
    """Write ``k_free.md`` and ``k_free.html`` into ``out`` with the pages' renderers; return (paths, tables
    for leaderboard.parquet, index lines). Nothing when the rows hold no k-free run."""
    blocks, tables = k_free_blocks(frame, data, metric, margin, alpha, unfitted)
    if not blocks:
        return {}, [], []
    paths = {f"{PAGE}_md": out / f"{PAGE}.md", f"{PAGE}_html": out / f"{PAGE}.html"}
    write_text(paths[f"{PAGE}_md"], to_markdown(blocks, out), out)
    write_text(paths[f"{PAGE}_html"], to_html(blocks, "ccbench leaderboard: the k-free board"), out)
    parts = [t.assign(kind=t["kind"] if "kind" in t else PAGE, table=name).astype(
        {c: str for c in t.columns if t[c].dtype == object}) for name, t in tables.items() if len(t)]
    missing = tables["k_free_missing"]
    index = [f"- the k-free board (every method chooses k itself): [{PAGE}.md]({PAGE}.md), [{PAGE}.html]({PAGE}.html)"
             + (f"; not run k-free in these rows: {', '.join(f'`{m}`' for m in missing['method'])}" if len(missing)
                else "")]
    return paths, parts, index
