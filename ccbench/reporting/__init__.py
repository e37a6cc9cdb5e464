"""Reporting: everything made from a results folder's rows, and nothing else.

Owns the summary tables and plots (:mod:`.summary`, :mod:`.plots`), the shared formatting of numbers,
labels, colours and metrics (:mod:`._format`, the one place both the summary and the statistics
use), the figures a paper draws from what methods learn, by refitting a recorded trial
(:mod:`.paper_figures`), the provenance section (:mod:`.origins`), the paired statistics (:mod:`.stats`,
:mod:`.verdict`, :mod:`.constraint_utility`), the self-contained HTML page (:mod:`.html`), the exports
(:mod:`.export`) and the leaderboard (:mod:`.leaderboard`). It may import the plugin API
(``ccbench.registry``, ``ccbench.datasets``, ...) and the running room's store and schema
(``ccbench.running.results``, ``.config``, ``.protocol``, ``.provenance``); the running and data rooms
reach it only through the names below (``tests/test_architecture.py``). Names are imported on first
use (PEP 562), so the CLI pays for pandas and matplotlib only when it reports.
"""

from __future__ import annotations

from .. import _lazy_attributes

# public name -> module of this package that defines it
_EXPORTS = {
    "DEFAULT_METRIC": "_format",
    "resolve_x": "_format",
    "first_metric": "_format",
    "method_labels": "_format",
    "load": "summary",
    "prepare": "summary",
    "summarise": "summary",
    "drop_not_converged": "summary",
    "markdown_table": "summary",
    "problems_table": "summary",
    "error_summary": "summary",
    "paper_reference": "summary",
    "write_report": "summary",
    "write_paper_figures": "paper_figures",
    "plot_metric": "plots",
    "provenance_warnings": "origins",
    "parse_formats": "export",
    "write_html": "html",
    "ReportWorker": "background",
    "ReportFailed": "background",
    "compare": "verdict",
    "utility": "constraint_utility",
    "write_shipped": "shipped",
    "merge_with": "shipped",
    "compare_sweeps": "compare_sweeps",
    "is_active_rows": "active",
    "merge_active_with": "active",
    "write_active_report": "active_page",
    "check_output_dir": "_safe",
}
_SUBMODULES = {"leaderboard": "leaderboard"}

__all__ = sorted([*_EXPORTS, *_SUBMODULES])


__getattr__, __dir__ = _lazy_attributes(__name__, _EXPORTS, _SUBMODULES)
