"""Did the constraints help? Each method against its unconstrained baseline on the same trials, with the
constraint sets' informativeness and coherence (Davidson, Wagstaff & Basu, PKDD 2006).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._format import is_ranked
from .stats import CELL, _prepare, _sign, paired_frame

__all__ = ["coherence", "trial_coherence", "utility"]


def _overlap(p0, p1, q0, q1) -> np.ndarray:
    """Length of the overlap between segment p (m_p, d) and the projection of segment q (m_q, d)
    onto p's line, measured along p: an (m_p, m_q) matrix."""
    v = p1 - p0
    length = np.linalg.norm(v, axis=1)
    u = v / np.where(length > 0, length, 1.0)[:, None]
    t0 = np.einsum("pd,pqd->pq", u, q0[None, :, :] - p0[:, None, :])
    t1 = np.einsum("pd,pqd->pq", u, q1[None, :, :] - p0[:, None, :])
    lo, hi = np.minimum(t0, t1), np.maximum(t0, t1)
    return np.clip(np.minimum(hi, length[:, None]) - np.maximum(lo, 0.0), 0.0, None)


def coherence(X, must_link, cannot_link) -> float:
    """Coherence of a constraint set in the Euclidean metric of ``X`` (Davidson, Wagstaff & Basu 2006).

    Each constraint is the segment between its two points. A must-link ``a`` and a
    cannot-link ``r`` agree when neither projects onto the other with a positive
    overlap (``over_r a = over_a r = 0``): a cannot-link lying along a must-link
    says "far apart" where the must-link says "close". Coherence is the share of
    (must-link, cannot-link) pairs that agree, in [0, 1]; NaN without both kinds.
    """
    X = np.asarray(X, dtype=float)
    ml, cl = np.asarray(must_link, dtype=np.intp).reshape(-1, 2), np.asarray(cannot_link, dtype=np.intp).reshape(-1, 2)
    if len(ml) == 0 or len(cl) == 0:
        return float("nan")
    a0, a1, r0, r1 = X[ml[:, 0]], X[ml[:, 1]], X[cl[:, 0]], X[cl[:, 1]]
    incoherent = (_overlap(a0, a1, r0, r1) > 0) | (_overlap(r0, r1, a0, a1) > 0).T
    return float(1.0 - incoherent.mean())


def trial_coherence(data: pd.DataFrame) -> pd.Series:
    """Coherence of each row's constraint set, re-drawn from its job's ``cell.json`` and ``trial_seed``
    (the draw is deterministic); NaN where the row has no seed or the job no ``cell.json``.

    ``cell.json`` may come from anyone: only data sets :func:`ccbench.running.protocol.report_redraw_refusal`
    allows are loaded (local, bundled, bounded generators); for any other cell the rows stay NaN and a
    warning names the job directory and why."""
    import json
    import warnings
    from pathlib import Path

    from ..datasets import load_dataset
    from ..running import protocol
    from ..running.config import CELL_FILE
    from .summary import read_cell

    out = pd.Series(np.nan, index=data.index)
    cache, datasets = {}, {}
    for idx, row in data.iterrows():
        cell_file = Path(str(row.get("source", ""))) / CELL_FILE
        if pd.isna(row.get("trial_seed")) or not cell_file.exists():
            continue
        cell = read_cell(cell_file)  # checked: a regular file of bounded size, never a FIFO or a link
        key = (json.dumps([cell["dataset"], cell["constraints"], cell["noise"]], sort_keys=True), int(row["trial_seed"]))
        if key not in cache:
            dkey = json.dumps(cell["dataset"], sort_keys=True)
            if dkey not in datasets and (refusal := protocol.report_redraw_refusal(cell["dataset"])):
                datasets[dkey] = None
                warnings.warn(f"coherence not computed for the cell in {cell_file.parent}: {refusal}", stacklevel=2)
            if datasets.get(dkey, ...) is None:
                cache[key] = np.nan
                continue
            if dkey not in datasets:
                datasets[dkey] = load_dataset(cell["dataset"]["name"],
                                              **protocol.report_safe_dataset_params(cell["dataset"]))
            ds = datasets[dkey]
            rng, _ = protocol.trial_streams(int(row["trial_seed"]))
            cons, _ = protocol.draw_supervision(ds.y, cell["constraints"], cell["noise"], rng)
            cache[key] = coherence(ds.X, cons.must_link, cons.cannot_link)
        out[idx] = cache[key]
    return out


def utility(data: pd.DataFrame, baseline: str, metric: str, x: str | None = None, pool=(),
            with_coherence: bool = False) -> pd.DataFrame:
    """Did the constraints help? Each method against its unconstrained ``baseline`` on the same trials.

    The baseline runs on the same constraint sets (same ``trial_seed``) without
    using them, so its ``constraint_violations`` on a trial is the set's
    *informativeness* (Davidson et al. 2006: the share of the constraints the
    unconstrained algorithm violates; 0 when it satisfies them already). One row
    per (dataset, setting, x, method): ``n_pairs``, ``informativeness`` (mean),
    ``coherence`` (mean, with ``with_coherence``), ``gain`` (mean method minus
    baseline, in the metric's units), ``share_worse`` (share of paired trials in
    which the constraints made the method *worse* than the baseline) and
    ``corr_informativeness_gain`` (Spearman, NaN when either is constant).
    """
    from scipy.stats import spearmanr

    if "constraint_violations" not in data:
        raise ValueError("utility needs the constraint_violations metric in the runs (metrics=[..., constraint_violations])")
    wide = paired_frame(data, metric, x, pool)
    if baseline not in wide.columns:
        raise ValueError(f"no method labelled {baseline!r} in these results; labels: {sorted(wide.columns)}")
    info = paired_frame(data, "constraint_violations", x, pool)[baseline].rename("informativeness")
    sign = _sign(metric) if is_ranked(metric) else np.nan  # "worse" needs a direction
    coh = None
    if with_coherence:  # one re-draw per paired trial: the baseline's rows
        data = data.reset_index(drop=True)
        ok = _prepare(data, metric, x, pool)
        ok = ok[ok["method_label"] == baseline]
        values = trial_coherence(data.loc[ok.index])
        coh = pd.Series(values.to_numpy(), index=pd.MultiIndex.from_frame(ok[[*CELL, "pair"]]))
    out = []
    for cell, rows in wide.groupby(level=CELL, sort=True):
        for method in sorted(rows.columns):
            if method == baseline:
                continue
            both = rows[[method, baseline]].dropna().join(info, how="left")
            if both.empty:
                continue
            gain = (both[method] - both[baseline]).to_numpy(float)
            inf = both["informativeness"].to_numpy(float)
            varied = np.ptp(inf) > 0 and np.ptp(gain) > 0
            rec = dict(zip(CELL, cell), method=method, baseline=baseline, n_pairs=len(both),
                       informativeness=float(np.nanmean(inf)) if np.isfinite(inf).any() else np.nan,
                       gain=float(gain.mean()),
                       share_worse=float(np.mean(sign * gain < 0)) if np.isfinite(sign) else np.nan,
                       corr_informativeness_gain=float(spearmanr(inf, gain).statistic) if varied else np.nan)
            if coh is not None:
                rec["coherence"] = float(coh.reindex(both.index).mean())
            out.append(rec)
    return pd.DataFrame(out)
