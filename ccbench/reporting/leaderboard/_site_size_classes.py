"""The site's page per size class (issue 51, item 7): the headline of each kind over the data sets of one
class (:mod:`.pooling`'s :data:`~.pooling.SIZE_CLASSES`), as the kind pages' fold holds it, with the
class's data sets; "not measured" for a method with no measured cell there (not ranked last in it)."""

from __future__ import annotations

from ._site_html import esc, interval_svg, page, slug, table
from .pooling import SIZE_CLASSES

__all__ = ["size_class_members", "size_class_page"]

_COLS = ["method", "reference_name", "n_sets", "mean_diff", "ci_low", "ci_high", "wins", "ties", "losses",
         "p_holm", "verdict", "loo_flips", "loo_n"]


def size_class_members(results: dict) -> dict:
    """{class label: its data sets} for the size classes the headlines of ``results`` ({kind: headline})
    have as subsets, in :data:`~.pooling.SIZE_CLASSES` order: the members each headline compared (its
    ``subsets``), joined over the kinds, so a page lists the data sets its numbers come from."""
    out = {}
    for label, _, _ in SIZE_CLASSES:
        members = set()
        for result in results.values():
            members |= set(result["subsets"].get(label, ()))
        if members:
            out[label] = sorted(members)
    return out


def size_class_page(label: str, members: list, results: dict, metric: str, nav, banner: str) -> str:
    """The page of one size class: per kind, each method against k-means and against the class's best over
    the class's data sets (convention ``missing``), P(best) there, and the data sets with their links."""
    parts = [f"<p>{len(members)} data sets with {esc(label)}: "
             + ", ".join(f'<a href="{esc(slug("dataset", d))}">{esc(d)}</a>' for d in members)
             + f". Per kind, the headline of the kind page over these data sets only, on <code>{esc(metric)}</code>: "
               "each method minus the reference per data set, the mean over the data sets with its 95 % "
               "interval (data sets and their seeds resampled), Holm over the methods compared with that "
               "reference in this class, the verdict (<i>undetermined</i> where dropping one data set flips it). "
               "A method with <b>n_sets</b> 0 was refused or skipped on every data set of the class: not "
               "measured here, not ranked last.</p>"]
    for kind, result in results.items():
        effects = result["effects"]
        view = effects[(effects["subset"] == label) & (effects["convention"] == "missing")]
        if view.empty:
            continue
        parts.append(f'<h2><a href="{esc(slug("kind", kind))}">{esc(kind)}</a></h2>')
        for reference in ("kmeans", "best"):
            rows = view[view["reference"] == reference].sort_values("mean_diff", ascending=False, kind="stable")
            if rows.empty:
                continue
            rows = rows.assign(verdict=rows["verdict"].where(rows["n_sets"] > 0, "not measured"))
            measured = rows[rows["n_sets"] > 0]
            if len(measured):
                parts.append(interval_svg(measured.set_index("method"), f"{metric} difference against "
                                          f"{rows['reference_name'].iloc[0]} ({kind}, {label})", colour_by="verdict"))
            parts.append(table(rows[_COLS], links={"method": lambda m: slug("method", m)},
                               table_id=f"size-{kind}-{reference}", digits={"p_holm": 3}))
        p_best = result["p_best"]
        head = p_best[(p_best["subset"] == label) & (p_best["convention"] == "missing")]
        if len(head):
            parts.append("<p>P(best) over the class's data sets (bootstrap resamples of them):</p>"
                         + table(head.sort_values("p_best", ascending=False)[["method", "p_best", "mean", "n_sets"]],
                                 links={"method": lambda m: slug("method", m)}, table_id=f"size-{kind}-p-best"))
    return page(f"Size class {label}", "".join(parts), nav, banner=banner)
