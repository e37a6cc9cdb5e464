"""PCCC's collection-1 constraint sets as a constraint scheme, ``pccc_file`` (a plugin loaded on request:
``plugins=[ccbench_plugins.datasets.pccc]``, as ``conf/experiment/pccc_col1.yaml`` does).

Baumann & Hochbaum, "PCCC: the pairwise-confidence constrained clustering algorithm"
(arXiv:2212.14437), collection 1: per data set and level f (5, 10, 15, 20 %), one noise-free set of
``C(ceil(f n), 2)`` random pairs over all ``n`` points (not every pair among ``ceil(f n)`` points: that
is ``fraction_pairs``, the leaderboard's dense track). The files are external and never part of this repository: they are
read from ``$CCBENCH_PCCC_DIR``, else ``<parent of the data dir>/pccc`` (``$CCBENCH_DATA_DIR/../pccc``;
``shared/pccc/`` beside ``shared/datasets/``), whose README and PROVENANCE describe them. When the
directory or a file is absent the scheme raises :class:`~ccbench.base.InsufficientSupervisionError`, so
the harness records the trial as ``skipped`` with that reason.

Row order. The constraint matrices of ``breast_cancer``, ``soybean`` and ``spectfheart`` index ccbench's
rows of ``breast_cancer``, ``soybean_small`` and ``spectf``. PCCC ran its own iris and wine sets, on
KEEL's row order: ``pccc_iris_wine_keel.json`` holds them with the map ``keel_to_ccbench_row`` to
``iris_uci`` / ``wine_uci``. ``ecoli``, ``glass``, ``ionosphere`` and ``zoo`` index KEEL row orders no
faithful copy of which was found (their pairs disagree with our labels): refused, by name. Every pair
is checked against the labels the scheme is given, so a wrong row order cannot pass silently.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from ccbench.hookspecs import hookimpl
from ccbench.registry import SchemeSpec

PCCC_DIR_ENV = "CCBENCH_PCCC_DIR"

#: ccbench data set -> PCCC's name, for the sets whose row order is known
PCCC_NAMES = {"breast_cancer": "breast_cancer", "soybean_small": "soybean", "spectf": "spectfheart",
              "iris_uci": "iris", "wine_uci": "wine"}
#: PCCC sets in a KEEL row order we cannot reproduce (shared/pccc/README.md)
KEEL_ONLY = {"ecoli": "ecoli", "glass": "glass", "ionosphere": "ionosphere", "zoo": "zoo"}
LEVELS = (0.05, 0.1, 0.15, 0.2)


def pccc_dir() -> Path | None:
    """``$CCBENCH_PCCC_DIR``, else ``<parent of $CCBENCH_DATA_DIR>/pccc``; None when neither is set."""
    if os.environ.get(PCCC_DIR_ENV):
        return Path(os.environ[PCCC_DIR_ENV]).expanduser()
    data = os.environ.get("CCBENCH_DATA_DIR")
    return Path(data).expanduser().resolve().parent / "pccc" if data else None


def _missing(reason: str):
    from ccbench.base import InsufficientSupervisionError

    return InsufficientSupervisionError(f"pccc_file: {reason} (set {PCCC_DIR_ENV} to shared/pccc; "
                                        f"PCCC's files are external and not in the repository)")


@functools.lru_cache(maxsize=16)
def _pairs(root: str, dataset: str, fraction: float, n: int):
    """(must-link, cannot-link) index arrays of the set, in ccbench's row order of ``dataset``."""
    import gzip
    import json

    import numpy as np

    root_path = Path(root)
    name = PCCC_NAMES[dataset]
    if name in ("iris", "wine"):
        path = root_path / "pccc_iris_wine_keel.json"
        if not path.exists():
            raise _missing(f"{path} not found")
        entry = json.loads(path.read_text())[name]
        sets = {float(k): v for k, v in entry["constraint_sets_keel_index"].items()}
        if fraction not in sets:
            raise ValueError(f"pccc_file: no {name} set at fraction {fraction}; levels: {sorted(sets)}")
        to_row = np.asarray(entry["keel_to_ccbench_row"], dtype=np.intp)
        if len(to_row) != n:
            raise ValueError(f"pccc_file: {name}'s KEEL order has {len(to_row)} rows, {dataset} {n}")
        pairs = {kind: np.asarray(sets[fraction][kind], dtype=np.intp).reshape(-1, 2) for kind in ("ml", "cl")}
        for kind, index in pairs.items():  # numpy would wrap -1 to the last row: a wrong pair, silently
            bad = index[(index < 0) | (index >= n)]
            if bad.size:
                raise ValueError(f"pccc_file: {path.name} {name} {kind} at fraction {fraction} holds the index "
                                 f"{int(bad[0])}, outside 0..{n - 1} (0-based KEEL rows); the file is damaged")
        return to_row[pairs["ml"]], to_row[pairs["cl"]]
    path = root_path / "constraint_sets" / f"{name}({fraction:.2f}).txt.gz"
    if not path.exists():
        raise _missing(f"{path} not found")
    with gzip.open(path, "rt") as fh:
        matrix = np.loadtxt(fh)
    if matrix.shape != (n, n):
        raise ValueError(f"pccc_file: {path.name} is {matrix.shape[0]} x {matrix.shape[1]}, {dataset} has {n} rows")
    upper = np.triu(matrix, k=1)  # as PCCC-Data reads it
    return np.argwhere(upper == 1), np.argwhere(upper == -1)


def pccc_file(y, dataset: str, fraction: float, *, rng=None):
    """PCCC's collection-1 constraint set of ``dataset`` (a ccbench name) at level ``fraction``
    (0.05, 0.1, 0.15 or 0.2), in ccbench's row order. ``rng`` is not used: the set is fixed, so every
    trial of a cell sees the same pairs and only the method's seed varies."""
    import numpy as np

    from ccbench.constraints import Constraints

    if dataset in KEEL_ONLY:
        raise _missing(f"{dataset}: PCCC's file indexes KEEL's row order of {KEEL_ONLY[dataset]}, which no "
                       f"faithful copy reproduces (shared/pccc/README.md); not run")
    if dataset not in PCCC_NAMES:
        raise ValueError(f"pccc_file: no PCCC collection-1 set for {dataset!r}; sets: {sorted(PCCC_NAMES)}")
    fraction = float(fraction)
    if not any(abs(fraction - lv) < 1e-9 for lv in LEVELS):
        raise ValueError(f"pccc_file: fraction must be one of {LEVELS}, got {fraction!r}")
    fraction = min(LEVELS, key=lambda lv: abs(lv - fraction))
    root = pccc_dir()
    if root is None or not root.is_dir():
        raise _missing(f"the PCCC directory {root} is absent")
    y = np.asarray(y)
    ml, cl = _pairs(str(root.resolve()), dataset, fraction, len(y))
    wrong_ml = int((y[ml[:, 0]] != y[ml[:, 1]]).sum()) if len(ml) else 0
    wrong_cl = int((y[cl[:, 0]] == y[cl[:, 1]]).sum()) if len(cl) else 0
    if wrong_ml or wrong_cl:
        raise ValueError(f"pccc_file: {dataset} at {fraction}: {wrong_ml} must-links and {wrong_cl} cannot-links "
                         f"disagree with the labels: not this data set's row order (or labels under noise)")
    return Constraints(ml, cl, n_samples=len(y))


@hookimpl
def ccbench_constraint_schemes():
    return [SchemeSpec("pccc_file", pccc_file, "PCCC's collection-1 constraint file for (dataset, fraction), "
                       "in ccbench's row order (external files, CCBENCH_PCCC_DIR)")]
