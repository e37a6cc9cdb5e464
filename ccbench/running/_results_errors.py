"""The errors of a results file that cannot be read back: :class:`ResultsCorruptError` (damaged) and
:class:`ResultsSchemaError` (not a ccbench results table). Each names the file and the fix.

Re-exported by :mod:`ccbench.running.results` (import them from there); kept apart so that the
journal (:mod:`ccbench.running._results_journal`) raises them without importing the results store.
"""

from __future__ import annotations

from pathlib import Path


class ResultsCorruptError(ValueError):
    """A results file cannot be read back exactly as it was written (truncated, damaged)."""

    def __init__(self, path, reason: str):
        self.path = Path(path)
        super().__init__(
            f"results file {self.path} is damaged ({reason}); move it aside "
            f"(mv '{self.path}' '{self.path}.damaged') and run the same command again: its trials will re-run"
        )


class ResultsSchemaError(ResultsCorruptError):
    """A results file reads as Parquet but is not a ccbench results table (another tool's table, a
    summary, a key column of the wrong type): handled as a damaged file, named with the fix."""

    def __init__(self, path, reason: str):
        self.path = Path(path)
        ValueError.__init__(
            self,
            f"results file {self.path} is not a ccbench results table ({reason}); move it aside "
            f"(mv '{self.path}' '{self.path}.foreign') and run the same command again: its trials will re-run",
        )
