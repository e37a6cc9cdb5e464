"""Proven equivalent mutants: changes no input can tell apart from the original code.

A survivor of ``run.py`` is either a test gap or an *equivalent* mutant. The equivalent ones are
listed here, each with the reason no input can tell it apart (the proof), so that a report can
give the kill rate without them (``run.py`` prints and writes both rates) and a later run does not
classify them again. An entry matches a mutant by file, operator and the exact line before and
after (stripped), not by line number, so it survives edits elsewhere in the file; when the line
itself changes, the entry no longer matches and the survivor shows up again, to be looked at anew.

Add an entry only with a proof; "a test would be hard to write" is not one (that is a gap).
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Equivalent:
    path: str  # relative to the repository root
    operator: str  # cosmic-ray's operator name, as in the report
    before: str  # the original line, stripped
    after: str  # the mutated line, stripped
    why: str  # the proof: why no input can tell the two apart
    seen: str = ""  # where it was classified (seed and draw)


EQUIVALENTS: list[Equivalent] = [
    # ---------------------------------------------------------------- seed_timeouts (seed 28)
    Equivalent(
        "ccbench/running/seed_timeouts.py", "core/NumberReplacer",
        '"method_hash": (method_code or {}).get(provenance.METHOD_HASH)}, length=24)',
        '"method_hash": (method_code or {}).get(provenance.METHOD_HASH)}, length= 25)',
        "the family key is only ever compared with (and names files by) keys made by this same function, "
        "so any fixed length of the sha256 prefix partitions the cells the same way (24 or 25 hex digits: "
        "no collision among a sweep's cells either way)",
        "seed 28 draw 12"),
    # ---------------------------------------------------------------- nnc (seed 20261130)
    Equivalent(
        "plugins/nnc/metric_learning.py", "core/ReplaceComparisonOperator_Gt_GtE",
        "if np.all(np.isfinite(res.x)) and res.x.sum() > 0:",
        "if np.all(np.isfinite(res.x)) and res.x.sum() >= 0:",
        "L-BFGS-B keeps x inside its bounds [0, inf), so sum(x) = 0 only at x = 0, where g = +inf "
        "(_xing_b_objective: no pair separated); L-BFGS-B only accepts steps that lower g from a finite "
        "start (sum 1/2, or the previous point), so it never returns x = 0: the two conditions agree",
        "seed 20261130 draw 12"),
    Equivalent(
        "plugins/nnc/core.py", "core/NumberReplacer",
        "same = (part[cl[:, 0]] >= 0) & (part[cl[:, 0]] == part[cl[:, 1]])",
        "same = (part[cl[:, -1]] >= 0) & (part[cl[:, 0]] == part[cl[:, 1]])",
        "cl has two columns, so cl[:, -1] is cl[:, 1]; where the second factor holds, part[a] == part[b], "
        "so part[a] >= 0 and part[b] >= 0 are the same test: `same` is unchanged element by element",
        "seed 20261130 draw 17"),
    Equivalent(
        "plugins/nnc/_kernels.py", "core/ReplaceTrueWithFalse",
        "@njit(cache=True)",
        "@njit(cache=False)",
        "numba's cache flag only decides whether the compiled code is kept on disk for the next process; "
        "the function compiled, and every result, is the same (and with NUMBA_DISABLE_JIT=1, as the nnc "
        "family runs, njit returns the Python function itself)",
        "seed 20261130 draw 20"),
    Equivalent(
        "plugins/nnc/metric_learning.py", "core/AddNot",
        "if eq is None and len(Ae) == 0:",
        "if not eq is None and len(Ae) == 0:",
        "with eq given, Ae = eq[None, :] has one row, so the mutant's guard never fires; without eq the "
        "original's never fires either: the first round's rows are those active at the LP vertex, and on "
        "the bounded route some must-link row is active at the optimum (else z could be scaled up and s "
        "with it), and later rounds only add rows; so neither version replaces Ae",
        "seed 20261129 draw 22; seed 20261130 draw 30"),
    Equivalent(
        "plugins/nnc/metric_learning.py", "core/NumberReplacer",
        "rank = int(np.sum(sv > sv.max() * max(ml_diff.shape) * np.finfo(float).eps)) if sv.size else 0",
        "rank = int(np.sum(sv > sv.max() * max(ml_diff.shape) * np.finfo(float).eps)) if sv.size else 1",
        "the line runs only when len(ml_diff) >= 1, and ml_diff has d >= 1 columns, so sv has "
        "min(m, d) >= 1 entries: the `else` branch is never taken",
        "seed 20261129 draw 24; seed 20261130 draw 36"),
    Equivalent(
        "plugins/nnc/core.py", "core/ReplaceComparisonOperator_Lt_NotEq",
        "if found < n_asked:",
        "if found != n_asked:",
        "found counts the distinct labels, and every estimator that calls it labels with 0..n_asked-1 "
        "(grow_and_assign's clusters, or the k-means delegate's n_clusters), so found <= n_asked",
        "seed 20261129 draw 5"),
    Equivalent(
        "plugins/nnc/metric_learning.py", "core/ReplaceTrueWithFalse",
        "s = cp.Variable(nonneg=True)",
        "s = cp.Variable(nonneg=False)",
        "s <= every cannot-link quadratic form, each >= 0 for M PSD, and s is maximised, so s* = min of "
        "them >= 0: the bound s >= 0 is implied and the program (its optimum and optimal set) is the same",
        "seed 20261129 draw 23"),
    # ---------------------------------------------------------------- spectral
    Equivalent(
        "plugins/spectral/lowrank.py", "core/NumberReplacer",
        "if idx.size == 0:",
        "if idx.size == -1:",
        "the early return of no constrained point is a shortcut: with idx empty every array of the general "
        "route has 0 columns (B is n x 0; solve_shifted returns at once as np.all of no residual is True; "
        "solve_multishift retires every shift after one step for the same reason), so Z is n x 0 and C is "
        "0 x 0, the very factors of the shortcut (both routes, srcp and e2cp; checked by running them)",
        "seed 20261130 draw 11"),
    Equivalent(
        "plugins/spectral/lowrank.py", "core/NumberReplacer",
        "X0[:, 0] = np.sqrt(np.maximum(deg, 0))",
        "X0[:, 0] = np.sqrt(np.maximum(deg, -1))",
        "deg is a row sum of the k-NN graph W (its only caller passes SpectralBase's Gaussian graph), "
        "whose weights are >= 0, so max(deg, 0) = max(deg, -1) = deg",
        "seed 20261129 draw 21"),
    Equivalent(
        "plugins/spectral/lowrank.py", "core/ReplaceComparisonOperator_NotEq_Gt",
        "P *= np.divide(rs_new, rs, out=np.zeros_like(rs), where=rs != 0)",
        "P *= np.divide(rs_new, rs, out=np.zeros_like(rs), where=rs > 0)",
        "rs is a column-wise sum of squares (einsum of R * R), so rs >= 0 or NaN: rs != 0 and rs > 0 "
        "agree on every value (both False on NaN)",
        "seed 20261129 draw 37"),
]


def _changed_lines(diff: str) -> tuple[str, str]:
    """The removed and the added line of a one-line mutant's diff, stripped."""
    minus = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("-")]
    plus = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("+")]
    return " ".join(minus), " ".join(plus)


def find(row: dict) -> Equivalent | None:
    """The entry proving ``row`` (a result of ``run.py``) equivalent, or None."""
    before, after = _changed_lines(row.get("diff", ""))
    for e in EQUIVALENTS:
        if (e.path, e.operator, e.before, e.after) == (row.get("path"), row.get("operator"), before, after):
            return e
    return None
