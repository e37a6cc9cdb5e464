"""Running: from a command line to recorded rows.

Owns the cell schema (:mod:`.config`), the trial protocol (:mod:`.protocol`: seeds, supervision
draws, the estimator a cell builds), the harness that runs one cell's trials (:mod:`.harness`),
shared unsupervised fits (:mod:`.shared_fits`), the Parquet results store (:mod:`.results`), the
provenance columns of every row (:mod:`.provenance`), the check of a whole sweep before it starts
(:mod:`.validate`), the job of a launcher's worker that died (:mod:`.worker_deaths`), the Hydra app and
sweeper glue (:mod:`.app`), ``ccbench fetch``
(:mod:`.fetch`), ``ccbench check-plugin`` (:mod:`.check_plugin`) and the ``ccbench`` command
(:mod:`.cli`). It may import the plugin API and the data room; it reaches the reporting room only
through ``ccbench.reporting``'s public names (the end-of-sweep summary, ``ccbench report``), never
its modules. Only :mod:`.app`, :mod:`.validate`, :mod:`.fetch` and :mod:`.check_plugin` import Hydra,
and the harness and protocol never do (a cell runs the same from Python, Hydra or SLURM).
"""

from __future__ import annotations

from .. import _lazy_attributes

# public name -> module of this package that defines it
_EXPORTS = {
    "run_job": "harness",
    "CellConfig": "config",
    "cell_hash": "config",
    "gather": "results",
    "read_results": "results",
    "write_results": "results",
    "main": "cli",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = _lazy_attributes(__name__, _EXPORTS)
