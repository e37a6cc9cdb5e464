"""The memory one fit used: the process's peak resident set size around ``fit`` (Linux /proc).

Kept apart from :mod:`.harness` so the trial loop stays readable; the harness calls
:func:`reset_peak_rss` just before ``fit`` and :func:`peak_rss` right after.
"""

from __future__ import annotations

import numpy as np

__all__ = ["reset_peak_rss", "peak_rss"]


def _status_kb(field: str) -> float:
    """A ``kB`` field of /proc/self/status (``VmHWM``, ``VmRSS``), NaN where there is none."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return float(line.split()[1])
    except OSError:
        pass
    return float("nan")


def reset_peak_rss() -> float:
    """Reset this process's peak resident set size (Linux >= 4.0: ``5`` to /proc/self/clear_refs),
    return its current RSS in kB (NaN where the peak cannot be reset: no honest per-fit peak then)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:  # not Linux, or not allowed: getrusage's lifetime maximum would be the wrong number
        return float("nan")
    return _status_kb("VmRSS")


def peak_rss(rss_before: float) -> dict:
    """``peak_rss_mb``: the process's peak RSS during ``fit`` (VmHWM after the reset above: the worker's
    with ``trial_timeout``, else the whole job process's, data and imports included);
    ``fit_rss_mb``: that peak minus the RSS just before ``fit`` (what the fit itself added). NaN
    where the peak cannot be reset. Pages freed back to the allocator but kept by it do not count."""
    if np.isnan(rss_before):
        return {"peak_rss_mb": np.nan, "fit_rss_mb": np.nan}
    peak = _status_kb("VmHWM")
    return {"peak_rss_mb": peak / 1024.0, "fit_rss_mb": max(peak - rss_before, 0.0) / 1024.0}
