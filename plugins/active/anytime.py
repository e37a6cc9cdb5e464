"""The anytime protocol, first slice (issue 53, item 4): ARI against the number of questions asked.

:func:`anytime_curve` runs one (strategy, method) trial on one data set and returns its curve as a
tidy frame, one row per budget ``q``:

- ``budget``: ``q``, the answers the method was given;
- ``ari_all``: the adjusted Rand index of the method's partition after ``q`` answers, on all points;
- ``ari_unqueried``: the same on the points in none of the ``q`` pairs asked (NaN with fewer than two
  such points): the answers cannot simply be copied onto these points;
- ``n_must_link``, ``n_cannot_link``: the answers (True = must-link) among the ``q``;
- ``n_clusters_found``: the number of clusters of the method's partition after ``q`` answers;
- ``strategy_seconds``: CPU seconds (``time.process_time``, this process's) the strategy spent proposing the pairs
  since the previous budget; ``refit_seconds``: CPU seconds of the method's fit at ``q``, those it spent in a
  worker process included; ``worker_seconds``: that worker part alone (a peer library run isolated, e.g.
  ``peer_cobras``, reports it as ``peer_fit_seconds_``; this process's clock does not see it; 0 without one;
  the first row also carries that of the unsupervised fit made for the strategy when ``budgets`` leave out 0);
- ``status``: ``"ok"``, or ``"<where> error: <Exception>: <message>"`` (``where`` = ``method``,
  ``strategy`` or ``oracle``); a failed row's ARIs are NaN. A method that raises at one budget
  fails that row only; a strategy that raises or proposes an invalid pair (out of range, a point
  with itself, asked before), or an oracle that raises, ends the asking, so the row of that budget
  and every later one carry the error, and count the answers actually given. Nothing is dropped.

**Protocol.** ``q = 0`` is the method's unsupervised fit (no constraints). The strategy then
proposes pairs one at a time; the oracle answers each; at each budget ``q`` the method is refitted,
from scratch, on the ``q`` answers as hard-coded pairs (must-link = ``asked[answers]``, cannot-link
= ``asked[~answers]``, every weight 1: an answer's confidence is not passed on in this slice), with
``n_clusters`` = the number of classes of ``y``. The strategy sees the partition of the latest
successful fit (the one at the previous budget; not a refit after every answer, which would cost
``max(budgets)`` fits per trial); when ``budgets`` leave out 0, the unsupervised fit is still made
for the strategy's first partition (a failure there: the strategy starts with none, ``labels=None``).

A method whose ``fit`` takes an ``oracle`` (COBRAS) asks its own questions: ``strategy`` must be
None (or ``"cobras"``); it is run once with ``max_questions = max(budgets)`` and the partition at
``q`` is row ``q`` of its ``labels_history_`` (row 0: its starting partition, every point in one
cluster). When it stops early (nothing left to split), later rows repeat its last partition and
``n_must_link + n_cannot_link`` says how many questions it asked. Its one run's CPU time is the
``refit_seconds`` (and ``worker_seconds``) of the largest budget (0 on the other rows); ``strategy_seconds`` is
NaN.

**Seeds and paired trials.** ``seed`` seeds three independent streams: the oracle
(``Oracle(seed=seed)``), the strategy (``SeedSequence([seed, 1])``) and the method's
``random_state`` (``SeedSequence([seed, 2])``, the same at every budget, so the curve moves with
the answers, not with the restarts). Two trials with the same ``seed`` share the oracle's noise:
with a persistent oracle (the default) the draw of a pair is keyed by ``(seed, i, j)``, so two
strategies asking the same pair get the same answer, and a pair flipped at a rate is flipped at
every higher rate; with ``persistent=False`` the ``t``-th question of either trial takes the same
draw ``u_t``.

:func:`area_under_curve` is the headline number of a curve.
"""

from __future__ import annotations

import inspect
import numbers
from time import process_time as _cpu_seconds

import numpy as np
import pandas as pd

from ccbench import registry
from ccbench.constraints import Constraints
from ccbench.metrics import adjusted_rand

from .oracle import Oracle

__all__ = ["anytime_curve", "area_under_curve", "check_budgets", "COLUMNS"]

#: The columns of :func:`anytime_curve`'s frame, in order.
COLUMNS = ("budget", "ari_all", "ari_unqueried", "n_must_link", "n_cannot_link", "n_clusters_found",
           "strategy_seconds", "refit_seconds", "worker_seconds", "status")

#: Longest exception message kept in a row's status.
_MAX_MESSAGE = 300


def check_budgets(budgets) -> np.ndarray:
    """``budgets`` as a strictly increasing int array of at least one budget >= 1, or a ``ValueError``."""
    values = list(budgets) if budgets is not None and not isinstance(budgets, (str, bytes)) else None
    if not values:
        raise ValueError(f"anytime_curve: budgets must be a non-empty list of question counts, e.g. [0, 10, 20], "
                         f"got {budgets!r}")
    if any(isinstance(b, bool) or not isinstance(b, numbers.Integral) or b < 0 for b in values):
        raise ValueError(f"anytime_curve: budgets must be ints >= 0 (questions asked), got {values!r}")
    arr = np.asarray(values, dtype=np.int64)
    if np.any(np.diff(arr) <= 0):
        raise ValueError(f"anytime_curve: budgets must be strictly increasing (each a number of questions asked "
                         f"so far), got {values!r}; sort them and drop repeats")
    if arr[-1] < 1:
        raise ValueError(f"anytime_curve: budgets {values!r} ask no question; give at least one budget >= 1 "
                         f"(q = 0, the unsupervised fit, is the curve's start)")
    return arr


def area_under_curve(budgets, values) -> float:
    """The normalised area under a curve: the trapezoid rule over the budgets, divided by their range.

        AUC = (1 / (q_m - q_1)) * sum_{t=1}^{m-1} (q_{t+1} - q_t) (v_t + v_{t+1}) / 2

    so a constant curve ``v`` has area ``v`` (an ARI curve's area is a mean ARI over the budget
    range). NaN when any value is NaN: a failed row leaves the area undefined rather than bridged.
    ``budgets`` must be strictly increasing, at least two of them.
    """
    q = np.asarray(budgets, dtype=float)
    v = np.asarray(values, dtype=float)
    if q.ndim != 1 or q.shape != v.shape:
        raise ValueError(f"area_under_curve: budgets and values must be 1-D and of one length, got shapes "
                         f"{q.shape} and {v.shape}")
    if len(q) < 2 or np.any(np.diff(q) <= 0):
        raise ValueError(f"area_under_curve: needs at least two strictly increasing budgets, got {q.tolist()}")
    if np.isnan(v).any():
        return float("nan")
    return float(np.sum(np.diff(q) * (v[1:] + v[:-1]) / 2.0) / (q[-1] - q[0]))


def _seed_int(seed: int, stream: int) -> int:
    return int(np.random.SeedSequence([seed, stream]).generate_state(1)[0])


def _error_status(where: str, exc: BaseException) -> str:
    return f"{where} error: {type(exc).__name__}: {str(exc)[:_MAX_MESSAGE]}"


def _asks_its_own_questions(estimator) -> bool:
    return "oracle" in inspect.signature(estimator.fit).parameters


def _build_method(method: str, n_clusters: int, random_state: int, params: dict):
    spec = registry.get_method_spec(method)
    params = dict(params)
    accepted = inspect.signature(spec.estimator).parameters
    if "random_state" in accepted:
        params.setdefault("random_state", random_state)
    if spec.needs_n_clusters:
        params.setdefault("n_clusters", n_clusters)
    return lambda **extra: registry.make_method(method, **params, **extra)


def _scores(y, labels, asked) -> tuple[float, float, int]:
    """``(ARI on all points, ARI on the points in no asked pair, clusters in labels)``."""
    labels = np.asarray(labels)
    if labels.shape != y.shape:
        raise ValueError(f"labels_ of shape {labels.shape} for {len(y)} points")
    unqueried = np.ones(len(y), dtype=bool)
    unqueried[asked.ravel()] = False
    rest = adjusted_rand(y[unqueried], labels[unqueried]) if unqueried.sum() >= 2 else float("nan")
    return adjusted_rand(y, labels), rest, len(np.unique(labels))


def _row(budget, given, scores=(np.nan, np.nan, np.nan), strategy_seconds=np.nan, refit_seconds=np.nan,
         status="ok", worker_seconds=0.0) -> dict:
    """One row; ``given`` the answers the row's partition had (fewer than ``budget`` when asking ended)."""
    return dict(budget=int(budget), ari_all=scores[0], ari_unqueried=scores[1],
                n_must_link=int(given.sum()), n_cannot_link=int(len(given) - given.sum()),
                n_clusters_found=scores[2], strategy_seconds=strategy_seconds, refit_seconds=refit_seconds,
                worker_seconds=worker_seconds, status=status)


def _worker_seconds(estimator) -> float:
    """CPU seconds ``estimator``'s fit spent in a worker process (``peer_fit_seconds_``; 0 without one)."""
    return float(getattr(estimator, "peer_fit_seconds_", 0.0) or 0.0)


def _fit_at(make, X, y, asked, answers):
    """``(labels, scores, seconds, worker_seconds, status)`` of a fresh fit on the answers to ``asked``
    (``seconds`` includes ``worker_seconds``)."""
    n = len(X)
    cons = Constraints(must_link=asked[answers], cannot_link=asked[~answers], n_samples=n)
    start, est = _cpu_seconds(), None
    try:
        est = make()
        labels = est.fit(X, constraints=cons).labels_
        scores = _scores(y, labels, asked)
    except Exception as exc:  # a failed fit is a row, never a crash (the curve goes on)
        worker = _worker_seconds(est)
        return None, (np.nan, np.nan, np.nan), _cpu_seconds() - start + worker, worker, _error_status("method", exc)
    worker = _worker_seconds(est)
    return np.asarray(labels), scores, _cpu_seconds() - start + worker, worker, "ok"


def _strategy_curve(X, y, strategy, make, budgets, oracle, seed) -> list[dict]:
    n, last = len(X), int(budgets[-1])
    asked = np.zeros((last, 2), dtype=np.int64)
    answers = np.zeros(last, dtype=bool)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    who = repr(strategy)
    rows, labels, q, spent, first_worker = [], None, 0, 0.0, 0.0
    if budgets[0] > 0:  # the unsupervised fit is the strategy's first partition even when not a row
        labels, _, _, first_worker, _ = _fit_at(make, X, y, asked[:0], answers[:0])
    for budget in budgets:
        stage = "strategy"
        try:
            while q < budget:
                stage, start = "strategy", _cpu_seconds()
                pair = strategy.next_pair(X, asked[:q], answers[:q], labels, rng)
                i, j = registry.checked_pair(pair, n, asked[:q], who=f"the query strategy {who} (question {q + 1})")
                spent += _cpu_seconds() - start
                stage = "oracle"
                answers[q] = oracle.ask(i, j)[0] if hasattr(oracle, "ask") else bool(oracle(i, j))
                asked[q] = i, j
                q += 1
        except Exception as exc:  # the asking ends: this budget and every later one record why
            status = _error_status(stage, exc)
            return rows + [_row(b, answers[:q], status=status) for b in budgets[len(rows):]]
        fitted, scores, seconds, worker, status = _fit_at(make, X, y, asked[:q], answers[:q])
        rows.append(_row(budget, answers[:q], scores, spent, seconds, status, worker + first_worker))
        first_worker = 0.0
        spent = 0.0
        if fitted is not None:
            labels = fitted
    return rows


def _self_asking_curve(X, y, make, budgets, oracle) -> list[dict]:
    last = int(budgets[-1])
    start = _cpu_seconds()
    try:
        est = make(max_questions=last).fit(X, oracle=oracle)
        history, pairs, said = est.labels_history_, est.queried_pairs_, est.answers_
    except Exception as exc:
        status = _error_status("method", exc)
        return [_row(b, np.zeros(0, dtype=bool), status=status) for b in budgets]
    worker = _worker_seconds(est)
    seconds = _cpu_seconds() - start + worker
    rows = []
    for budget in budgets:
        t = min(int(budget), len(said))
        try:
            scores, status = _scores(y, history[t], np.asarray(pairs[:t]).reshape(-1, 2)), "ok"
        except Exception as exc:
            scores, status = (np.nan, np.nan, np.nan), _error_status("method", exc)
        at_last = budget == last
        rows.append(_row(budget, said[:t], scores, np.nan, seconds if at_last else 0.0, status,
                         worker if at_last else 0.0))
    return rows


def anytime_curve(X, y, *, strategy, method: str, budgets, oracle_kwargs=None, seed: int = 0,
                  method_params=None, oracle=None) -> pd.DataFrame:
    """One trial's curve: ARI after ``q`` answers for each ``q`` of ``budgets`` (module docstring).

    Parameters
    ----------
    X : array of shape (n, d)
    y : array of shape (n,)
        The true labels: the oracle's answer key, the ARI's reference and the number of clusters.
    strategy : str, object with ``next_pair`` or None
        A registered query strategy's name (built with ``n_clusters`` when it takes it) or an
        instance; None (or ``"cobras"``) for a method that asks its own questions.
    method : str
        A registered method (``ccbench.make_method``).
    budgets : list of int
        Strictly increasing question counts, the largest >= 1; include 0 for the unsupervised fit.
    oracle_kwargs : dict, optional
        ``Oracle`` options (``noise_rate`` in [0, 0.5], ``persistent``, ``confidence``); its
        ``seed`` is ``seed``.
    seed : int >= 0
        Seeds the oracle, the strategy and the method (module docstring: paired trials).
    method_params : dict, optional
        Further parameters of the method (``penalty``, ...).
    oracle : object, optional
        Another oracle (``ask(i, j) -> (answer, confidence)`` or ``oracle(i, j) -> bool``), replacing
        the ``Oracle`` of ``y``; ``oracle_kwargs`` must then be empty.

    Returns
    -------
    pandas.DataFrame with the columns :data:`COLUMNS`, one row per budget.
    """
    budgets = check_budgets(budgets)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or y.shape != (len(X),):
        raise ValueError(f"anytime_curve: X must be (n, d) and y (n,), got shapes {X.shape} and {y.shape}")
    n = len(X)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"anytime_curve: seed must be an int >= 0 (it seeds the oracle, the strategy and the "
                         f"method), got {seed!r}")
    if budgets[-1] > n * (n - 1) // 2:
        raise ValueError(f"anytime_curve: a budget of {budgets[-1]} questions exceeds the {n * (n - 1) // 2} pairs "
                         f"of {n} points")
    oracle_kwargs = dict(oracle_kwargs or {})
    if "seed" in oracle_kwargs:
        raise ValueError("anytime_curve: give the oracle's seed as seed=, not in oracle_kwargs (one seed pairs "
                         "the oracle, the strategy and the method)")
    if oracle is None:
        oracle = Oracle(y, seed=seed, **oracle_kwargs)  # a rate outside [0, 0.5] is its ValueError
    elif oracle_kwargs:
        raise ValueError("anytime_curve: pass oracle= or oracle_kwargs=, not both")
    make = _build_method(method, len(np.unique(y)), _seed_int(seed, 2), method_params or {})
    if _asks_its_own_questions(make()):
        if strategy not in (None, "cobras"):
            raise ValueError(f"anytime_curve: method {method!r} asks its own questions (its fit takes an oracle); "
                             f"pass strategy=None, not {strategy!r}")
        rows = _self_asking_curve(X, y, make, budgets, oracle)
    else:
        if strategy is None:
            raise ValueError(f"anytime_curve: method {method!r} needs a query strategy to choose its pairs; pass "
                             f"strategy='random' or another of {[s.name for s in registry.list_query_strategies()]}")
        if isinstance(strategy, str):
            spec = registry.get_query_strategy_spec(strategy)
            kwargs = {"n_clusters": len(np.unique(y))} if spec.needs_n_clusters else {}
            strategy = registry.make_query_strategy(strategy, **kwargs)
        rows = _strategy_curve(X, y, strategy, make, budgets, oracle, seed)
    return pd.DataFrame(rows, columns=list(COLUMNS))
