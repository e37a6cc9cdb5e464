"""Formatting shared by every reporting module: numbers, method labels, settings, colours, axis labels,
the default x axis and metric, and what a metric is (direction, range).

One place for each, so a summary table, a CD diagram and a leaderboard page print a method, a number
and a metric the same way.
"""

from __future__ import annotations

import functools
import math
import re

import numpy as np
import pandas as pd

from ..running.config import DEFAULT_X_AXIS
from ..running.results import STATUSES

__all__ = ["DEFAULT_METRIC", "DEFAULT_X", "AXIS_LABELS", "resolve_x", "first_metric", "md_text", "md_plain", "clean_text", "clean", "fmt", "method_labels", "setting_labels", "sorted_values", "line_label", "cell_text", "axis_label", "method_colors", "direction", "is_ranked", "metric_bounds"]

DEFAULT_METRIC = "modified_rand"


DEFAULT_X = DEFAULT_X_AXIS


# Non-method column groups whose varying values make separate lines (settings) within a data set.
# evaluate_on: the same method scored on all points and on held-out points is two lines;
# share_unsupervised_fits: shared fits are seeded differently, so on and off are two lines too
_SETTING_PREFIXES = ("dataset.", "constraints.", "noise.", "evaluate_on", "share_unsupervised_fits")


def resolve_x(data: pd.DataFrame, x: str | None = None) -> str:
    """The x-axis column: ``x`` if given, else the runs' most common ``x_axis``, else the schema default."""
    if x is not None:
        return x
    if "x_axis" in data and data["x_axis"].notna().any():
        return str(data["x_axis"].mode().iloc[0])
    return DEFAULT_X


def first_metric(data: pd.DataFrame) -> str:
    """The first metric the runs asked for (their ``metrics`` column), else :data:`DEFAULT_METRIC`."""
    import json

    if "metrics" in data and data["metrics"].notna().any():
        names = json.loads(data["metrics"].dropna().iloc[0])
        if names:
            return names[0]
    return DEFAULT_METRIC


# C0 and C1 control characters (newline, carriage return, escape, ...) and the Unicode line and
# paragraph separators: in a name or message from a results folder they would start a line of their
# own in summary.md or drive the terminal that prints it
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def clean_text(value) -> str:
    """``value`` as one line of text: every control character (newline, tab, escape, ...) becomes a space.
    Every text a report takes from rows or ``cell.json`` passes through it."""
    return _CONTROL.sub(" ", str(value))


def clean(value):
    """:func:`clean_text` applied to every string inside ``value`` (mappings, lists, their keys)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(clean(v) for v in value)
    return value


_LINK_CLOSE = re.compile(r"\](?=[(\[])")  # a "]" that closes a link's or image's text: "[x](url)", "[x][ref]"


def md_text(value) -> str:
    """``value`` as text safe inside a markdown table cell: a ``|`` would start a new column, markup
    would render (``<b>``, a link, an image) and a newline would end the row; all are escaped (control
    characters become spaces). A link's closing ``](`` or ``][`` becomes ``&#93;(``: an entity is no
    markdown syntax (and cannot be forged: the value's own ``&`` is escaped), so ``[x](javascript:...)``
    stays text, while plain brackets (``[95% CI]``) are left as typed."""
    import html

    return _LINK_CLOSE.sub("&#93;", html.escape(clean_text(value), quote=False)).replace("|", "\\|")


def md_plain(value) -> str:
    """:func:`md_text` that also escapes ``[`` and ``]``: text from a results folder (a paper's source)
    cannot become a markdown link (``[x](javascript:...)``)."""
    return md_text(value).replace("[", "\\[").replace("]", "\\]")


def fmt(value) -> str:
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return "nan"
        return f"{value:g}"
    return str(value)


def _varying(frame: pd.DataFrame, columns) -> list[str]:
    return [c for c in columns if frame[c].astype(str).nunique(dropna=False) > 1]


@functools.lru_cache(maxsize=None)
def _estimator_defaults(name: str) -> dict:
    """The registered estimator's ``get_params()`` (empty when the method is not installed here)."""
    from .. import registry

    try:
        return registry.get_method_spec(name).estimator().get_params()
    except Exception:  # noqa: BLE001 - a report must open without the method's package
        return {}


def _fill_defaults(rows: pd.DataFrame, name: str, columns) -> pd.DataFrame:
    """Method files list only deviations: a parameter missing from some rows had its default there."""
    gaps = [c for c in columns if rows[c].isna().any()]
    defaults = _estimator_defaults(name) if gaps else {}
    filled = {c: rows[c].where(rows[c].notna(), defaults[c.removeprefix("method.")])
              for c in gaps if defaults.get(c.removeprefix("method.")) is not None}
    return rows.assign(**filled) if filled else rows


#: The suffix of a k-free run beside the same method given the true k (``ap[k-free]`` beside ``ap``).
K_FREE = "[k-free]"


def _k_free(rows: pd.DataFrame) -> pd.Series | None:
    """Which rows are the k-free run of a method that rows of the same name also run given the true k
    (``method.n_clusters`` null or ``free`` -- a method that needs k choosing it by CVCP -- beside
    ``true_k``), or None when the name has no such pair: then ``n_clusters`` labels like any other
    parameter (``kmeans(n_clusters=4)``)."""
    if "method.n_clusters" not in rows:
        return None
    given = rows["method.n_clusters"].notna() & rows["method.n_clusters"].astype(str).ne("free")
    if given.all() or not given.any() or set(rows.loc[given, "method.n_clusters"].astype(str)) != {"true_k"}:
        return None
    return ~given


def method_labels(data: pd.DataFrame, x: str | None = None) -> pd.Series:
    """``name`` or ``name(p=v, ...)`` with the method params that vary for that name.

    The x-axis column never enters a label (a sweep over ``method.p`` is one line).
    A parameter some rows leave out is read as the estimator's default there
    (``nnc`` beside ``nnc(metric=lp_diag)`` is ``nnc(metric=euclidean)``).
    A method run both given the true k (``n_clusters: true_k``) and k-free (no ``n_clusters``: it
    finds k itself) is ``name`` and ``name[k-free]`` (:data:`K_FREE`; issue 38's two tracks).
    """
    labels = pd.Series(index=data.index, dtype=object)
    params = [c for c in data.columns if c.startswith("method.") and c not in ("method.name", x)]
    for name, rows in data.groupby("method.name", sort=False):
        k_free = _k_free(rows)
        present = [c for c in params if rows[c].notna().any() and not (k_free is not None and c == "method.n_clusters")]
        rows = _fill_defaults(rows, name, present)
        varying = _varying(rows, present)
        if not varying:
            labels[rows.index] = name
        else:
            text = rows[varying].apply(
                lambda r: ", ".join(f"{c.removeprefix('method.')}={fmt(v)}" for c, v in r.items()), axis=1
            )
            labels[rows.index] = name + "(" + text + ")"
        if k_free is not None:
            labels[k_free[k_free].index] = labels[k_free[k_free].index] + K_FREE
    return _tuned_suffix(data, labels)


def _tuned_suffix(data: pd.DataFrame, labels: pd.Series) -> pd.Series:
    """``pck_means+cvcp`` for rows whose method was tuned (``tune`` other than none), so the
    defaults and the tuned variant of a method are two lines; ``+cvcp(folds=2)`` off the default folds."""
    if "tune" not in data:
        return labels
    tuned = (data["tune"].notna() & (data["tune"] != "none")).to_numpy()
    if not tuned.any():
        return labels
    folds = data["tune_folds"] if "tune_folds" in data else pd.Series(3, index=data.index)
    suffix = "+" + data["tune"].astype(str) + folds.map(
        lambda k: "" if pd.isna(k) or int(k) == 3 else f"(folds={int(k)})")
    labels = labels.copy()
    labels[tuned] = labels[tuned] + suffix[tuned]
    return labels


def setting_labels(data: pd.DataFrame, x: str, pool=()) -> pd.Series:
    """Non-method settings that vary within a data set's rows, as ``key=value`` text.

    Computed per data set: an option only some sets have (``dataset.missing``)
    does not split lines, nor does one that the x value determines.
    """
    cols = [
        c for c in data.columns
        if c.startswith(_SETTING_PREFIXES) and c not in ("dataset.name", x, *pool)
    ]
    settings = pd.Series("", index=data.index, dtype=object)
    for _, rows in data.groupby("dataset.name", sort=False):
        varying = _varying(rows, [c for c in cols if rows[c].notna().any()])
        if x in rows:  # a setting fixed by the x value (a scheme's own parameter) is no line of its own
            by_x = rows.astype({c: str for c in varying}).groupby(rows[x].astype(str))
            varying = [c for c in varying if by_x[c].nunique().max() > 1]
        if varying:
            settings[rows.index] = _labels_of_rows(rows[varying])
    return settings


def per_distinct_row(frame: pd.DataFrame, render) -> np.ndarray:
    """``render(row)`` for every row of ``frame`` (a row as ``DataFrame.apply(axis=1)`` passes it),
    called once per distinct row: a Python call per row took tens of seconds per report at 1M rows,
    and rows take a handful of distinct settings. Object columns are grouped by each value's
    ``repr`` (a list or dict is a value too; ``1`` and ``"1"`` stay apart)."""
    if frame.empty:
        return np.empty(0, dtype=object)
    keys = pd.DataFrame({i: (col.map(repr) if col.dtype == object else col)
                         for i, (_, col) in enumerate(frame.items())}, index=frame.index)
    group = keys.groupby(list(keys.columns), dropna=False, sort=False).ngroup().to_numpy()
    _, first = np.unique(group, return_index=True)
    by_group = np.empty(group.max() + 1, dtype=object)
    by_group[group[first]] = [render(frame.iloc[i]) for i in first]
    return by_group[group]


def key_values(row: pd.Series, skip_missing: bool = False) -> str:
    """``key=value, ...`` of one row (:func:`fmt` values); ``skip_missing``: without its missing values."""
    return ", ".join(f"{c}={fmt(v)}" for c, v in row.items() if not (skip_missing and pd.isna(v)))


def _labels_of_rows(frame: pd.DataFrame) -> np.ndarray:
    """``key=value, ...`` per row (:func:`per_distinct_row`)."""
    return per_distinct_row(frame, key_values)


def sorted_values(values: list) -> list:
    """Numbers in numeric order, anything else (scheme names, ...) as text."""
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=str)


def line_label(summary: pd.DataFrame) -> pd.Series:
    return summary["method_label"] + summary["setting"].map(lambda s: f" [{s}]" if s else "")


def cell_text(rec) -> str:
    if rec["n_ok"] == 0:
        worst = max((s for s in STATUSES if s != "ok"), key=lambda s: rec[f"n_{s}"])
        return worst
    text = f"{rec['mean']:.3f}" + ("" if pd.isna(rec["std"]) else f" ± {rec['std']:.3f}")
    if rec["n_ok"] < rec["n_trials"]:
        text += f" ({rec['n_ok']}/{rec['n_trials']})"
    if rec.get("n_not_converged", 0):
        text += f" (nc {rec['n_not_converged']})"
    return text


# Readable axis labels for the x keys the experiments use; any other key reads "name (group)".
AXIS_LABELS = {
    "constraints.n_constraints": "number of constraints",
    "constraints.n_pairs": "constraint pairs per class (ML) and class pair (CL)",
    "constraints.per_class": "labeled points per class",
    "constraints.name": "constraint scheme",
    "noise.rate": "noise rate",
    "noise.name": "noise",
    "dataset.name": "data set",
    "method.p": "preference p",
    "fit_time": "fit time (s)",
}


def axis_label(key: str) -> str:
    """A readable label for a results column: :data:`AXIS_LABELS`, a metric's registered label,
    else ``name (group)`` from ``group.name``."""
    if key in AXIS_LABELS:
        return AXIS_LABELS[key]
    from .. import registry
    from ..running.protocol import UNCONSTRAINED_SUFFIX

    base = key.removesuffix(UNCONSTRAINED_SUFFIX)
    try:  # <metric>_unconstrained (evaluate_on=both): the metric on the unconstrained points
        label = registry.get_metric_spec(base).label
        return label if base == key else f"{label}, unconstrained points"
    except Exception:  # noqa: BLE001 - not a registered metric
        pass
    group, _, name = key.rpartition(".")
    name = name.replace("_", " ")
    return f"{name} ({group})" if group else name


def method_colors(labels) -> dict:
    """One colour per method label, from the sorted set of labels: pass the whole page's labels so
    a method has the same colour in every line plot and CD diagram of the page. A palette colour too pale
    to read on white (a CD diagram's labels are drawn in it) is darkened to :data:`MIN_CONTRAST`."""
    from matplotlib import colormaps

    names = sorted({str(v) for v in labels})
    # tab10, then tab20 / tab20b + tab20c: qualitative palettes, distinct up to 60 labels
    palettes = ["tab10"] if len(names) <= 10 else ["tab20"] if len(names) <= 20 else ["tab20", "tab20b", "tab20c"]
    colours = [_readable(c) for name in palettes for c in colormaps[name].colors]
    return {name: colours[i % len(colours)] for i, name in enumerate(names)}


#: The least contrast a method's colour keeps against the white figure background: WCAG 2's minimum for
#: graphical objects and large text (1.4.11). tab20's pale half (srcp, cobs at 1.4-1.6) is below it.
MIN_CONTRAST = 3.0


def _contrast_on_white(rgb) -> float:
    """WCAG 2 contrast ratio of an sRGB colour (0..1) against white: 1.05 / (L + 0.05), L the relative
    luminance 0.2126 R + 0.7152 G + 0.0722 B of the linearised channels."""
    c = np.asarray(rgb[:3], dtype=float)
    lin = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return 1.05 / (float(lin @ [0.2126, 0.7152, 0.0722]) + 0.05)


def _readable(rgb, target: float = MIN_CONTRAST) -> tuple:
    """``rgb`` scaled toward black (hue kept) by the least factor, in steps of 1/100, that gives it
    ``target`` contrast against white; a colour dark enough already is returned unchanged. Deterministic:
    a function of the colour alone."""
    c = np.asarray(rgb[:3], dtype=float)
    for factor in np.arange(100, -1, -1) / 100:
        if _contrast_on_white(c * factor) >= target:
            return tuple(float(v) for v in c * factor)
    return (0.0, 0.0, 0.0)





# Results columns that are no registered metric but have a known direction and range.
_COLUMNS = {"fit_time": ("lower", (0.0, np.inf))}


def _spec(metric: str):
    """The registry entry of ``metric``; ``<metric>_unconstrained`` (``evaluate_on=both``: the same
    metric on the unconstrained points) has its base metric's direction and range."""
    from .. import registry
    from ..running.protocol import UNCONSTRAINED_SUFFIX

    for name in (metric, metric.removesuffix(UNCONSTRAINED_SUFFIX)):
        try:
            return registry.get_metric_spec(name)
        except Exception:  # noqa: BLE001 - a results column that is no registered metric
            continue
    return None


def direction(metric: str) -> str:
    """``"higher"``, ``"lower"`` or ``"none"`` (not ranked): the metric's registry entry; ``fit_time``
    is "lower"; any other column declares nothing and is not ranked."""
    spec = _spec(metric)
    if spec is not None:
        return spec.direction
    return _COLUMNS.get(metric, ("none",))[0]


def is_ranked(metric: str) -> bool:
    """Whether ranks, Friedman, CD diagrams, win/tie/loss and "better" verdicts apply to ``metric``."""
    return direction(metric) != "none"


def metric_bounds(metric: str) -> tuple[float, float]:
    """The range ``metric`` can take (registry entry; ``(-inf, inf)`` when unknown)."""
    spec = _spec(metric)
    if spec is not None:
        return spec.bounds
    return _COLUMNS.get(metric, (None, (-np.inf, np.inf)))[1]
