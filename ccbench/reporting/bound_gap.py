"""The k-means objective against its certified lower bound (issue 52): one line per trial, a figure.

For rows that carry ``inertia`` (the k-means objective, the sum of squared distances of the points
to their cluster means) and ``lower_bound`` (a certified lower bound ``L`` on that objective over
every clustering that meets the instance's constraints, ``plugins/sdp/kmeans_bound.py``), the
relative gap is

    gap = (inertia - L) / L

computed here from the two columns (not read from a ``bound_gap`` column), missing where ``L`` is
missing or not positive. The bound holds only for clusterings that meet every given constraint, so:

- a row that violates constraints (``violated_constraints`` > 0) may lie below ``L`` (unconstrained
  k-means does): its gap is shown but marked *infeasible* and left out of the figure;
- a row that meets every constraint and lies below ``L`` by more than the rounding allowance
  :data:`BELOW_TOLERANCE` (relative) is impossible: a bug in the objective, the constraints or the
  bound. It is flagged in the table and in a banner above it, never hidden.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from ._format import method_labels

__all__ = ["BELOW_TOLERANCE", "bound_table", "bound_section_html", "gap_figure", "has_bound"]

#: A feasible objective counts as below the bound when ``inertia < L - BELOW_TOLERANCE * |L|``: the
#: bound already subtracts its own floating-point allowance, so this only absorbs the inertia's
#: summation error (about n eps relative), far below any real disagreement.
BELOW_TOLERANCE = 1e-9

#: Instance columns shown when present (PC-SOS-SDP's configuration and replicate); else the hash of
#: the constraint set names the instance.
_INSTANCE = ("constraints.configuration", "constraints.replicate")
_BUG = "BUG: feasible objective below the certified bound"


def has_bound(data: pd.DataFrame) -> bool:
    """Whether ``data`` has a ``lower_bound`` column with at least one value (the section is shown)."""
    return "lower_bound" in data and "inertia" in data and pd.to_numeric(data["lower_bound"], errors="coerce").notna().any()


def bound_table(data: pd.DataFrame) -> pd.DataFrame:
    """One line per ok trial: ``dataset``, the instance columns, ``method``, ``lower_bound``,
    ``inertia``, ``gap`` = (inertia - lower_bound) / lower_bound, ``fit_time``, ``violations``
    (given pairs the labels break) and ``flag`` (``""``, ``"no bound"``, ``"violations unknown"``
    (no ``violated_constraints`` column: feasibility cannot be judged), ``"infeasible"`` or the bug text), sorted by instance then method."""
    ok = data[data["status"] == "ok"] if "status" in data else data
    labels = ok["method_label"] if "method_label" in ok else method_labels(ok)
    instance = [c for c in _INSTANCE if c in ok] or [c for c in ("constraints_hash",) if c in ok]

    def numbers(name):
        return pd.to_numeric(ok[name], errors="coerce") if name in ok else pd.Series(np.nan, index=ok.index)

    bound, inertia, violations = numbers("lower_bound"), numbers("inertia"), numbers("violated_constraints")
    gap = (inertia - bound) / bound.where(bound > 0)
    below = inertia < bound - BELOW_TOLERANCE * bound.abs()
    flag = np.select([bound.isna(), violations.isna(), violations > 0, below],
                     ["no bound", "violations unknown", "infeasible", _BUG], default="")
    table = pd.DataFrame({"dataset": ok["dataset.name"].astype(str), **{c.split(".")[-1]: ok[c] for c in instance},
                          "method": labels.astype(str), "lower_bound": bound, "inertia": inertia, "gap": gap,
                          "fit_time": numbers("fit_time"), "violations": violations, "flag": flag})
    keys = ["dataset", *(c.split(".")[-1] for c in instance), "method"]
    return table.sort_values(keys, kind="stable").reset_index(drop=True)


def _cell(value, digits: int = 6) -> str:
    if isinstance(value, str):
        return html.escape(value)
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "<em>missing</em>"
    if isinstance(value, (float, np.floating)):
        return f"{value:.{digits}g}"
    return html.escape(str(value))


def bound_section_html(table: pd.DataFrame) -> str:
    """The table of :func:`bound_table` as HTML, every text escaped, missing numbers shown as
    *missing*, with a banner naming every feasible row below the bound (a bug)."""
    parts = ['<p class="note">gap = (inertia - lower bound) / lower bound; the bound holds for clusterings '
             'that meet every constraint, so an <em>infeasible</em> row (violations &gt; 0) may lie below '
             'it and is left out of the figure.</p>']
    bugs = table[table["flag"] == _BUG]
    if len(bugs):
        rows = "".join(f"<li>{html.escape(str(r.dataset))} / {html.escape(str(r.method))}: inertia "
                       f"{r.inertia:.9g} &lt; bound {r.lower_bound:.9g}</li>" for r in bugs.itertuples())
        parts.append(f'<p style="color:#b00020;font-weight:bold">{len(bugs)} feasible objective(s) below the '
                     f'certified lower bound: a bug in the objective, the constraints or the bound.</p><ul>{rows}</ul>')
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>"
                   for row in table.itertuples(index=False, name=None))
    parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    return "".join(parts)


def gap_figure(table: pd.DataFrame):
    """Box plot of the gap per method over the feasible rows with a bound (one box per method;
    a method with no such row is named with 'no feasible row' on the axis)."""
    from matplotlib.figure import Figure

    feasible = table[(table["flag"] == "") | (table["flag"] == _BUG)]
    methods = sorted(table["method"].unique())
    gaps = [feasible.loc[feasible["method"] == m, "gap"].dropna().to_numpy() for m in methods]
    fig = Figure(figsize=(max(4.0, 1.2 * len(methods) + 1.5), 3.5))
    ax = fig.add_subplot()
    shown = [i for i, g in enumerate(gaps) if len(g)]
    if shown:
        ax.boxplot([gaps[i] for i in shown], positions=[i + 1 for i in shown], showmeans=True)
    ax.set_xticks(range(1, len(methods) + 1),
                  [m if len(g) else f"{m}\n(no feasible row)" for m, g in zip(methods, gaps)])
    ax.axhline(0.0, color="#888", lw=0.8)
    ax.set_ylabel("(inertia - lower bound) / lower bound")
    ax.set_title("gap to the certified lower bound, feasible trials")
    fig.tight_layout()
    return fig
