"""The static site's building blocks: page frame, sortable tables, inline SVG figures, file names.

Everything that comes from rows (method, data set and setting names, error messages) is escaped here
(:func:`esc`): a results folder may come from a stranger. The one script is inline, hashed into the
page's Content-Security-Policy (no other script runs, nothing is fetched: the site opens offline from
``file://`` and from any static host).
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
import re

import numpy as np
import pandas as pd

from .._format import clean_text

__all__ = ["esc", "slug", "page", "table", "interval_svg", "scatter_svg", "SCRIPT"]

#: Click a column header to sort by it (again: the other way); type in the box above a table to keep the
#: rows that contain the text. Numbers sort as numbers (a cell's ``data-v`` holds the exact value).
SCRIPT = """
(function () {
  function key(cell) {
    var v = cell.getAttribute('data-v');
    if (v === null) { v = cell.textContent.trim(); }
    var n = parseFloat(v);
    return (v !== '' && isFinite(n) && String(n) !== 'NaN' && /^[-+0-9.eE]+$/.test(v)) ? n : v.toLowerCase();
  }
  function compare(a, b) {
    var an = typeof a === 'number', bn = typeof b === 'number';
    if (an && bn) { return a - b; }
    if (an !== bn) { return an ? -1 : 1; }
    return a < b ? -1 : (a > b ? 1 : 0);
  }
  document.querySelectorAll('table.sortable').forEach(function (t) {
    var body = t.tBodies[0], heads = t.tHead.rows[0].cells;
    var box = document.createElement('input');
    box.type = 'search'; box.className = 'filter'; box.placeholder = 'filter rows (any text)';
    t.parentNode.insertBefore(box, t);
    box.addEventListener('input', function () {
      var q = box.value.toLowerCase();
      Array.prototype.forEach.call(body.rows, function (r) {
        r.style.display = r.textContent.toLowerCase().indexOf(q) < 0 ? 'none' : '';
      });
    });
    Array.prototype.forEach.call(heads, function (th, i) {
      th.title = 'click to sort';
      th.addEventListener('click', function () {
        var asc = th.getAttribute('aria-sort') !== 'ascending';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) { var c = compare(key(a.cells[i]), key(b.cells[i])); return asc ? c : -c; });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
"""

_SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()

_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header{background:#23395d;color:#fff;padding:.8em 1.5em}header a{color:#cfe0ff;margin-right:1.2em}
main{padding:1em 1.5em;max-width:1200px}h1{font-size:1.5em;margin:.3em 0}h2{font-size:1.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.4em 0 1em;background:#fff;font-size:13.5px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef2f8;cursor:pointer;user-select:none;white-space:nowrap}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
td.n{text-align:right;font-variant-numeric:tabular-nums}tr.win td{background:#eaf7ea}tr.tie td{background:#e9eff9}
.banner{background:#fff4d6;border:1px solid #e0b84a;padding:.5em .8em}details{margin:.6em 0 1.2em}
.filter{margin:.2em 0;padding:3px 6px;width:20em}.note{color:#555;font-size:.92em}
.bad{color:#a40000}.ok{color:#1a6b1a}code{background:#eee;padding:0 3px}
"""


def esc(value) -> str:
    """Text from rows as inert HTML (control characters become spaces, markup is escaped)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return html.escape(clean_text(value), quote=True)


def slug(kind: str, name) -> str:
    """A page's file name: ``<kind>-<name>.html`` with only ``[A-Za-z0-9_.+-]`` kept; a name changed by
    that (or empty) gets a short hash, so two names never share a page and none leaves the folder."""
    name = str(name)
    safe = re.sub(r"[^A-Za-z0-9_.+-]", "_", name).strip(".")[:60]
    if safe != name or not safe:
        safe = f"{safe}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    return f"{kind}-{safe}.html"


def page(title: str, body: str, nav: list[tuple[str, str]], banner: str = "") -> str:
    """A whole page: the title, the navigation (href, label), ``banner`` (markdown text, escaped here, its
    `code` and **bold** rendered: a partial run's coverage, atop every page), ``body`` (already escaped HTML)
    and the script."""
    from ..html import _inline

    links = "".join(f'<a href="{esc(href)}">{esc(label)}</a>' for href, label in nav)
    csp = (f"default-src 'none'; script-src 'sha256-{_SCRIPT_HASH}'; style-src 'unsafe-inline'; "
           f"img-src data: 'self'")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{_STYLE}</style></head><body>"
            f"<header>{links}</header><main><h1>{esc(title)}</h1>\n"
            + (f'<p class="banner" role="note">{_inline(banner)}</p>' if banner else "")
            + f"{body}\n</main>"
            f"<script>{SCRIPT}</script></body></html>\n")


def _cell(value, link: str | None = None, digits: int = 3) -> str:
    if value is pd.NA:  # a missing count of an Int64 column
        return '<td class="n" data-v="">-</td>'
    if isinstance(value, (bool, np.bool_)):
        return f"<td>{'yes' if value else 'no'}</td>"
    if isinstance(value, (int, np.integer)):
        return f'<td class="n" data-v="{int(value)}">{int(value)}</td>'
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            return '<td class="n" data-v="">-</td>'
        return f'<td class="n" data-v="{float(value)!r}">{float(value):.{digits}f}</td>'
    text = esc(value)
    return f'<td><a href="{esc(link)}">{text}</a></td>' if link else f"<td>{text}</td>"


def table(frame: pd.DataFrame, links: dict | None = None, row_class: pd.Series | None = None,
          table_id: str = "", digits: dict | None = None) -> str:
    """``frame`` as a sortable, filterable HTML table; ``links``: {column: function(value) -> href}."""
    links, digits = links or {}, digits or {}
    head = "".join(f"<th>{esc(c)}</th>" for c in frame.columns)
    rows = []
    for i, rec in enumerate(frame.itertuples(index=False)):
        cls = f' class="{esc(row_class.iloc[i])}"' if row_class is not None and row_class.iloc[i] else ""
        cells = "".join(_cell(v, links[c](v) if c in links and v is not None else None, digits.get(c, 3))
                        for c, v in zip(frame.columns, rec))
        rows.append(f"<tr{cls}>{cells}</tr>")
    ident = f' id="{esc(table_id)}"' if table_id else ""
    return f'<table class="sortable"{ident}><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


#: a verdict's colour on the interval chart (ahead and behind are the method's place against the reference)
VERDICT_COLOURS = {"ahead": "#1a6b1a", "behind": "#a40000", "tied": "#4a4a4a", "undetermined": "#9a6a00"}


def interval_svg(rows: pd.DataFrame, title: str, colour_by: str = "verdict") -> str:
    """A forest plot as inline SVG: one line per index label, its ``mean_diff`` as a dot and its interval
    (``ci_low`` to ``ci_high``) as a bar, a vertical line at 0 (no difference), in the order given; the
    dot and bar coloured by ``colour_by`` (:data:`VERDICT_COLOURS`) and labelled with the value, the verdict
    and, where given, ``n_sets`` (a difference over fewer data sets says so)."""
    rows = rows[np.isfinite(rows["mean_diff"].astype(float))]
    if rows.empty:
        return ""
    # the labels' column fits the longest label (about 7 px a character at 12 px), at least 170 px
    left = max(170, int(7 * max(len(str(label)) for label in rows.index)) + 10)
    width, right, line = 590 + left, 190, 18
    height = 50 + line * len(rows)
    lo = float(np.nanmin(rows[["ci_low", "mean_diff"]].to_numpy(float)))
    hi = float(np.nanmax(rows[["ci_high", "mean_diff"]].to_numpy(float)))
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    span = (hi - lo) or 1.0
    sx = lambda v: left + (v - lo) / span * (width - left - right)  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
             f'aria-label="{esc(title)}"><text x="4" y="16" font-size="13" font-weight="bold">{esc(title)}</text>'
             f'<line x1="{sx(0):.1f}" y1="24" x2="{sx(0):.1f}" y2="{height - 18}" stroke="#999" stroke-dasharray="3,3"/>'
             f'<text x="{sx(0):.1f}" y="{height - 4}" font-size="11" text-anchor="middle">0</text>']
    parts += [f'<text x="{sx(v):.1f}" y="{height - 4}" font-size="11" text-anchor="{anchor}">{v:+.2f}</text>'
              for v, anchor in ((lo, "start"), (hi, "end")) if abs(v) > 0.15 * span]  # not over the 0
    for i, (label, rec) in enumerate(rows.iterrows()):
        y = 32 + i * line
        verdict = str(rec.get(colour_by, ""))
        colour = VERDICT_COLOURS.get(verdict, "#4a78b5")
        a, b = rec.get("ci_low"), rec.get("ci_high")
        bar = (f'<line x1="{sx(float(a)):.1f}" y1="{y}" x2="{sx(float(b)):.1f}" y2="{y}" stroke="{colour}" '
               f'stroke-width="3"/>' if pd.notna(a) and pd.notna(b) else "")
        parts.append(f'<text x="{left - 6}" y="{y + 4}" font-size="12" text-anchor="end">{esc(label)}</text>{bar}'
                     f'<circle cx="{sx(float(rec["mean_diff"])):.1f}" cy="{y}" r="4" fill="{colour}"/>'
                     f'<text x="{width - right + 8}" y="{y + 4}" font-size="11" fill="{colour}">'
                     f'{float(rec["mean_diff"]):+.3f} {esc(verdict)}'
                     + (f' ({int(rec["n_sets"])} sets)' if pd.notna(rec.get("n_sets")) else "") + "</text>")
    return "".join(parts) + "</svg>"


def scatter_svg(points: pd.DataFrame, x: str, y: str, title: str, xlabel: str, ylabel: str) -> str:
    """A log-log line of points (``x``, ``y`` columns, sorted by x), e.g. fit time against data set size."""
    pts = points[[x, y]].astype(float)
    pts = pts[(pts[x] > 0) & (pts[y] > 0)].sort_values(x)
    if len(pts) < 1:
        return ""
    width, height, pad = 520, 300, 50
    lx, ly = np.log10(pts[x].to_numpy()), np.log10(pts[y].to_numpy())
    x0, x1 = lx.min() - 0.1, lx.max() + 0.1
    y0, y1 = ly.min() - 0.3, ly.max() + 0.3
    sx = lambda v: pad + (v - x0) / (x1 - x0) * (width - 2 * pad)  # noqa: E731
    sy = lambda v: height - pad - (v - y0) / (y1 - y0) * (height - 2 * pad)  # noqa: E731
    line = " ".join(f"{sx(a):.1f},{sy(b):.1f}" for a, b in zip(lx, ly))
    dots = "".join(f'<circle cx="{sx(a):.1f}" cy="{sy(b):.1f}" r="3.5" fill="#c0392b"><title>{esc(lbl)}: '
                   f'{10 ** b:.3g}</title></circle>' for a, b, lbl in zip(lx, ly, pts.index))
    # decades where the range spans one, else the data's own extremes
    ys = list(range(math.ceil(y0), math.floor(y1) + 1)) or sorted({ly.min(), ly.max()})
    xs = list(range(math.ceil(x0), math.floor(x1) + 1)) or sorted({lx.min(), lx.max()})
    ticks = "".join(f'<text x="{pad - 6}" y="{sy(t) + 4:.1f}" font-size="11" text-anchor="end">{10.0 ** t:.3g}</text>'
                    for t in ys)
    ticks += "".join(f'<text x="{sx(t):.1f}" y="{height - pad + 16}" font-size="11" text-anchor="middle">'
                     f"{10.0 ** t:.3g}</text>" for t in xs)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
            f'aria-label="{esc(title)}"><text x="4" y="16" font-size="13" font-weight="bold">{esc(title)}</text>'
            f'<rect x="{pad}" y="{pad}" width="{width - 2 * pad}" height="{height - 2 * pad}" fill="none" stroke="#999"/>'
            f'<polyline points="{line}" fill="none" stroke="#c0392b"/>{dots}{ticks}'
            f'<text x="{width / 2}" y="{height - 10}" font-size="12" text-anchor="middle">{esc(xlabel)}</text>'
            f'<text x="14" y="{height / 2}" font-size="12" transform="rotate(-90 14 {height / 2})" '
            f'text-anchor="middle">{esc(ylabel)}</text></svg>')
