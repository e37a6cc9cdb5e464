"""Anytime cells (issue 53, item 4): one harness row per (strategy, method, data set, oracle noise, trial) curve.

A cell whose constraint scheme is :data:`ACTIVE_SCHEME` (``constraints=active_queries``, registered by the
active plugin) draws no pairs: :func:`run_curve` hands the trial to the active plugin's
``anytime_curve`` (the query loop, the oracle and the refits are the plugin's; this module only maps the
cell's config onto its arguments and its curve onto one row). The cell's keys:

- ``constraints.strategy``: the query strategy (``cobras``: the method asks its own questions);
- ``constraints.budget``, ``constraints.step``: the curve's budgets q = 0, step, ..., budget;
- ``constraints.persistent``, ``constraints.confidence``: the oracle's options;
- ``noise``: the oracle's wrong-answer rate: ``none`` (exact) or ``constraint_flip`` with ``rate`` in
  [0, 0.5] (a rate outside is the oracle's error, recorded in the row); ``label_noise`` is refused
  (a recorded error row): noisy labels are not an oracle model of this protocol.

**Seeds: paired trials.** Trial ``t``'s curve seed is :func:`ccbench.running.protocol.fit_seed` of the
cell: the base seed, the data set and ``t``, without the constraints, noise and method configs. Every
strategy, method and noise rate of one (data set, trial) therefore shares the oracle's draws: the
persistent oracle keys a pair's draw by ``(seed, i, j)``, so two strategies asking the same pair get the
same answer, and a pair flipped at 10 % is flipped at 20 % (the plugin's docstring). The row's
``trial_seed`` is that seed.

**The row** (beside the harness's usual columns): ``ari_all_q<q>`` and ``ari_unqueried_q<q>`` for each
budget q (ARI on all points, and on the points in no asked pair); ``auc_ari`` and ``auc_ari_unqueried``
(the normalised trapezoid area over the budgets: a mean ARI); ``ari``, ``ari_unqueried``,
``n_clusters_found``, ``n_must_link``, ``n_cannot_link`` at the largest budget; ``n_questions`` (answers
given); ``strategy_cpu_per_query`` (the strategy's CPU seconds over its questions; NaN for a method that
asks itself); ``refit_cpu_mean`` (CPU seconds of one refit, the mean over the budgets; for a method that
asks itself, its one run's CPU divided by the budgets after q = 0); ``curve_cpu_time`` (the whole trial's
CPU seconds: this process's, plus those its fits spent in a worker process, the curve's ``worker_seconds``:
a peer library run isolated, whose CPU this process's clock does not see). Status: ``ok`` when every
budget's row is; ``skipped`` when the method and the strategy do not go together (a method that asks its own questions under a strategy, or the
reverse: nothing to measure); else ``error`` with the first failing budget's cause; the ARIs of the
budgets before it are kept, the areas are NaN; ``timeout`` when the curve passed ``trial_timeout`` (it
then runs in the harness's trial worker: :func:`run_curve`). Nothing fails silently.
"""

from __future__ import annotations

import json
import time
import traceback
import types

import numpy as np

from .. import registry
from . import protocol, provenance

__all__ = ["ACTIVE_SCHEME", "CURVE_FUNCTION", "SELF_ASKING", "is_active", "curve_seed", "oracle_options",
           "curve_budgets", "run_curve", "curve_in_worker", "curve_columns", "curve_inputs",
           "with_curve_inputs"]

#: The constraint scheme of an anytime cell (``ccbench_plugins.active``).
ACTIVE_SCHEME = "active_queries"
#: The plugin function that runs one trial's curve, imported when the first anytime cell runs.
CURVE_FUNCTION = "ccbench_plugins.active.anytime:anytime_curve"
_BUDGETS_FUNCTION = "ccbench_plugins.active.scheme:curve_budgets"
_AREA_FUNCTION = "ccbench_plugins.active.anytime:area_under_curve"
#: ``constraints.strategy`` of a method that asks its own questions (COBRAS).
SELF_ASKING = "cobras"
_ERROR_TAIL = 2000


def is_active(cell: dict) -> bool:
    """Whether ``cell`` is an anytime cell (its scheme is :data:`ACTIVE_SCHEME`)."""
    return cell["constraints"]["name"] == ACTIVE_SCHEME


def curve_seed(cell: dict, trial: int) -> int:
    """Trial ``trial``'s curve seed: shared by every strategy, method and noise rate (module docstring)."""
    return protocol.fit_seed(cell, trial)


def oracle_options(cell: dict) -> dict:
    """The oracle's keyword arguments from the cell's ``noise`` and ``constraints`` groups."""
    noise = cell["noise"]
    if noise["name"] == "none":
        rate = 0.0
    elif noise["name"] == "constraint_flip":
        rate = noise.get("rate", 0.0)
    else:
        raise ValueError(f"an anytime cell's oracle takes noise=none or noise=constraint_flip (its rate: the "
                         f"share of wrong answers), got noise={noise['name']!r}")
    cons = cell["constraints"]
    return {"noise_rate": rate, "persistent": cons.get("persistent", True), "confidence": cons.get("confidence")}


def curve_budgets(cell: dict) -> list[int]:
    """The cell's budgets q = 0, step, ..., budget (the plugin's rule; a bad value is its ValueError)."""
    cons = cell["constraints"]
    return registry.lazy_function(_BUDGETS_FUNCTION)(cons.get("budget", 100), cons.get("step", 10))


def curve_columns(budgets) -> list[str]:
    """The per-budget columns of a row, in order."""
    return [f"{kind}_q{q}" for kind in ("ari_all", "ari_unqueried") for q in budgets]


def _cpu() -> float:
    return time.process_time()


def run_curve(cell: dict, dataset, trial: int, runner=None) -> dict:
    """One trial of an anytime cell as the row fields above (module docstring); never raises.

    With ``runner`` (the harness's trial worker, :class:`ccbench.isolation.IsolatedRunner`: the cell sets
    ``trial_timeout``, or the job runs in a launcher's worker) the whole curve runs in that worker process,
    as a method's fit does: ``trial_timeout`` limits the curve's CPU seconds (the strategy's questions and
    every refit together), and a curve killed at the limit is a ``timeout`` row (its budgets' ARIs are
    lost with the worker), one that kills its process an ``error`` row; the row gets the call's
    ``trial_cpu_time`` and ``trial_wall_time``. Without it the curve runs in this process.
    """
    if runner is None:
        return _curve_row(cell, dataset.X, dataset.y, trial)
    from ..isolation import TrialTimeout, WorkerDied

    timeout = float(cell["trial_timeout"]) if cell.get("trial_timeout") else None
    out = {"trial_seed": curve_seed(cell, trial)}
    try:
        out.update(runner.call(curve_in_worker, cell, dataset.X, dataset.y, trial, timeout=timeout))
    except TrialTimeout as exc:
        out.update(status="timeout", error=f"TrialTimeout: {exc} (the curve of trial {trial}: its questions and "
                                           f"refits share the limit)")
    except WorkerDied as exc:  # the curve ended its process: this trial's error, the sweep goes on
        out.update(status="error", error=f"WorkerDied: {exc} during the curve of trial {trial}")
    except Exception as exc:  # e.g. the cell or the data could not be sent to the worker
        out.update(status="error", error=getattr(exc, "worker_traceback", None)
                   or traceback.format_exc()[-_ERROR_TAIL:])
    finally:
        out.update(trial_cpu_time=runner.last_cpu, trial_wall_time=runner.last_wall)
    return out


def curve_in_worker(cell: dict, X, y, trial: int) -> dict:
    """:func:`run_curve`'s work in the trial worker: the cell's plugins loaded there first (a plugin
    loaded with ``plugins=[...]`` in the harness's process is not registered in the worker's)."""
    registry.load_plugins(cell.get("plugins") or [])
    return _curve_row(cell, X, y, trial)


def _curve_row(cell: dict, X, y, trial: int) -> dict:
    seed = curve_seed(cell, trial)
    out = {"trial_seed": seed}
    start = _cpu()
    try:
        budgets = curve_budgets(cell)
        oracle = oracle_options(cell)
        strategy = cell["constraints"].get("strategy", "random")
        method = cell["method"]["name"]
        params = {k: v for k, v in protocol.group_params(cell["method"]).items() if k != "n_clusters"}
        reason = _mismatch(strategy, method)
        if reason is not None:
            return {**out, "status": "skipped", "error": reason}
        curve = registry.lazy_function(CURVE_FUNCTION)(
            X, y, strategy=None if strategy == SELF_ASKING else strategy, method=method,
            budgets=budgets, oracle_kwargs=oracle, seed=seed, method_params=params)
    except Exception:  # a bad budget, rate or strategy name: the trial's recorded error
        return {**out, "status": "error", "error": traceback.format_exc()[-_ERROR_TAIL:],
                "curve_cpu_time": _cpu() - start}
    out.update(_summary(curve, budgets, registry.lazy_function(_AREA_FUNCTION)))
    out["curve_cpu_time"] = _cpu() - start + float(curve["worker_seconds"].sum())
    return out


def curve_inputs(cell: dict) -> dict[str, str]:
    """The code of an anytime row besides its method's (``code.inputs`` entries, module docstring):
    ``curve``, the hash of the plugin's curve (:data:`CURVE_FUNCTION`'s module, the oracle and the
    budgets' rule, with the modules of their package they import), and ``strategy:<name>``, the hash of
    the query strategy's module and those of its package it imports (none for ``cobras``: the method's
    own hash covers it). A strategy that is not registered adds nothing (the trial records that error)."""
    out = {"curve": _modules_hash(CURVE_FUNCTION.partition(":")[0], _BUDGETS_FUNCTION.partition(":")[0])}
    strategy = cell["constraints"].get("strategy", "random")
    if strategy != SELF_ASKING:
        try:
            spec = registry.get_query_strategy_spec(strategy)
        except Exception:  # noqa: BLE001 - an unknown strategy is the trial's recorded error
            return out
        module = spec.strategy.partition(":")[0] if isinstance(spec.strategy, str) else spec.strategy.__module__
        out[f"strategy:{strategy}"] = _modules_hash(module)
    return out


def with_curve_inputs(cell: dict, code: dict) -> dict:
    """``code`` (the harness's ``code.*`` of the cell's method) with :func:`curve_inputs` added to its
    ``code.inputs``: a row is then stale when the strategy's or the curve's code changes, as when the
    method's does (:mod:`ccbench.running._resume`). A row recorded before these inputs existed lacks them:
    it is kept, reported as untracked, not re-run."""
    inputs = json.loads(code.get(provenance.INPUTS) or "{}")
    inputs.update(curve_inputs(cell))
    return {**code, provenance.INPUTS: json.dumps(dict(sorted(inputs.items())), sort_keys=True)}


def _modules_hash(root: str, *also: str) -> str:
    """The hash :func:`ccbench.running.provenance.method_code` gives modules ``root`` and ``also`` and the
    modules of their own package they import (the same rule as a method's code)."""
    shim = types.SimpleNamespace(estimator=types.SimpleNamespace(__module__=root), uses=())
    return provenance.method_code(shim, also=also)[provenance.METHOD_HASH]


def _asks_its_own_questions(method: str) -> bool:
    """Whether the method's ``fit`` takes an ``oracle`` (COBRAS): it chooses its own pairs."""
    import inspect

    return "oracle" in inspect.signature(registry.get_method_spec(method).loaded().estimator.fit).parameters


def _mismatch(strategy: str, method: str) -> str | None:
    """Why ``strategy`` and ``method`` make no curve together, or None."""
    asks = _asks_its_own_questions(method)
    if asks and strategy != SELF_ASKING:
        return (f"method {method!r} asks its own questions (its fit takes an oracle): its curve is the cell with "
                f"constraints.strategy={SELF_ASKING}, not {strategy!r}")
    if not asks and strategy == SELF_ASKING:
        return (f"constraints.strategy={SELF_ASKING} is for a method that asks its own questions; {method!r} "
                f"needs a query strategy ({', '.join(s.name for s in registry.list_query_strategies())})")
    return None


def _summary(curve, budgets, area) -> dict:
    """The row fields of one curve frame (module docstring)."""
    out = {f"ari_all_q{q}": float(v) for q, v in zip(curve["budget"], curve["ari_all"])}
    out.update({f"ari_unqueried_q{q}": float(v) for q, v in zip(curve["budget"], curve["ari_unqueried"])})
    last = curve.iloc[-1]
    failed = curve[curve["status"] != "ok"]
    asked = int(last["n_must_link"] + last["n_cannot_link"])
    strategy_cpu = curve["strategy_seconds"].sum(min_count=1)
    refits = curve["refit_seconds"].to_numpy(float)
    self_asking = bool(curve["strategy_seconds"].isna().all())
    out.update(
        auc_ari=area(budgets, curve["ari_all"]) if failed.empty else np.nan,
        auc_ari_unqueried=area(budgets, curve["ari_unqueried"]) if failed.empty else np.nan,
        ari=float(last["ari_all"]), ari_unqueried=float(last["ari_unqueried"]),
        n_clusters_found=float(last["n_clusters_found"]), n_must_link=int(last["n_must_link"]),
        n_cannot_link=int(last["n_cannot_link"]), n_questions=asked,
        strategy_cpu_per_query=float(strategy_cpu / asked) if asked and not self_asking else np.nan,
        refit_cpu_mean=float(np.nansum(refits) / max(len(budgets) - 1, 1)) if self_asking
        else float(np.nanmean(refits)),
        status="ok" if failed.empty else "error",
        error=None if failed.empty else f"at q = {int(failed.iloc[0]['budget'])}: {failed.iloc[0]['status']}",
    )
    return out
