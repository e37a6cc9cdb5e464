"""The journal of a results file (``<file>.journal``): the rows :class:`~ccbench.running.results.ResultsStore`
added since it last rewrote the file, one JSON line each, appended in one ``write``.

A row is on disk when :meth:`~ccbench.running.results.ResultsStore.add` returns, at the cost of its
own bytes; the store folds the journal into the Parquet file and removes it. A last line without
its newline (a writer killed mid-append) is left out with a warning; any other line that is not a
JSON object makes the journal damaged (:class:`~ccbench.running.results.ResultsCorruptError`).
Private to the results store, which re-exports :func:`journal_path` and :func:`read_journal`.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path

from ._results_errors import ResultsCorruptError

log = logging.getLogger("ccbench")


JOURNAL_SUFFIX = ".journal"


def journal_path(path) -> Path:
    """``<file>.journal``: the rows added to ``path`` since it was last rewritten (:class:`ResultsStore`)."""
    path = Path(path)
    return path.with_name(path.name + JOURNAL_SUFFIX)


def _json_value(value):
    """A row's numpy scalar as its Python value (the JSON line keeps ints, floats, NaN, bools, None, text)."""
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"a results row holds a {type(value).__name__} ({str(value)[:80]!r}), which a results file "
                    f"cannot store: give the row a number, text, a bool, None or a list of them")


def _journal_line(row: Mapping) -> bytes:
    return (json.dumps(dict(row), default=_json_value, separators=(",", ":")) + "\n").encode()


def _append(path: Path, data: bytes) -> None:
    """Append ``data`` in one ``write`` (``O_APPEND``); a symlink planted under the name is not followed."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def read_journal(path) -> list[dict]:
    """The rows of a journal (:func:`journal_path`), oldest first; empty when there is none.

    A last line without its newline is a row whose writer was killed mid-append: it is left out,
    with a warning (its trial runs again). Any other line that is not a JSON object is a damaged
    journal: :class:`ResultsCorruptError` naming it."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    lines = data.split(b"\n")
    if lines[-1]:
        log.warning("%s: its last row was cut off (a writer killed while appending it); left out, its "
                    "trial runs again", path)
    rows = []
    for number, line in enumerate(lines[:-1], 1):
        try:
            row = json.loads(line)
        except ValueError as exc:
            row = exc
        if not isinstance(row, dict):
            raise ResultsCorruptError(path, f"line {number} is not a row ({str(row)[:80]})")
        rows.append(row)
    return rows
