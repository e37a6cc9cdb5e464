"""The trial protocol, free of Hydra: seeds, supervision draws, skips, ``n_clusters``, estimators.

Pairing: trial ``t`` of a cell draws its label noise, constraints and
constraint noise from :func:`trial_seed`, which hashes the base seed, the
dataset, constraints and noise configs and ``t`` but never the method, so every
method of a sweep sees the same constraint sets. The method's ``random_state``
is a second child of the same seed (identical across methods too). With
``share_unsupervised_fits``, a fit that uses no supervision takes its
``random_state`` from :func:`fit_seed` instead, which leaves out the constraints
and noise, so one fit serves every budget and noise level of a trial.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import math

import numpy as np

from .. import registry
from .config import stable_hash
from ..constraints import Constraints
from ..specs import resolve_relative_k

__all__ = [
    "trial_seed",
    "trial_streams",
    "fit_seed",
    "fit_is_unsupervised",
    "group_params",
    "draw_supervision",
    "constraints_hash",
    "skip_reason",
    "resolve_n_clusters",
    "k_free_range",
    "k_free_problem",
    "K_FREE_VALUE",
    "K_FREE_MAX",
    "build_estimator",
    "checked_labels",
    "MethodOutputError",
    "estimator_defaults",
    "size_refusal",
    "memory_refusal",
    "predicted_seconds",
    "searches_for_k",
    "TIME_REFUSAL_FACTOR",
    "report_safe_dataset_params",
    "LOCATION_OPTIONS",
    "check_cell",
    "check_value",
    "VALUE_CHECKS",
]


def trial_seed(conf: dict, trial: int) -> int:
    """The seed of trial ``trial`` of a cell: a 63-bit int, independent of the method.

    sha256 of the canonical JSON of (base seed, dataset config without the
    options its :class:`~ccbench.registry.DatasetSpec` declares ``not_in_seed``
    (for the built-in sets: ``preprocess``, ``data_dir``, ``manifest``),
    constraints config, noise config, trial). Scaling variants of one data set
    are thereby paired too; where the files live does not change the data.
    """
    excluded = registry.get_dataset_spec(conf["dataset"]["name"]).not_in_seed
    dataset = {k: v for k, v in conf["dataset"].items() if k not in excluded}
    key = {
        "seed": conf.get("seed", 0),
        "dataset": dataset,
        "constraints": conf["constraints"],
        "noise": conf["noise"],
        "trial": int(trial),
    }
    return int(stable_hash(key, length=16), 16) >> 1


def fit_seed(conf: dict, trial: int) -> int:
    """The seed of trial ``trial``'s *shared unsupervised* fit (``share_unsupervised_fits``).

    :func:`trial_seed` without the constraints and noise configs (plus a marker, so it never
    equals a trial seed): every budget and noise level of one (data set, trial) gets the same
    seed, hence the same ``random_state`` (``trial_streams(fit_seed(...))[1]``) and, for a fit
    that uses no supervision, the same clustering, which the harness then fits only once.
    Independent of the method, like :func:`trial_seed`.
    """
    excluded = registry.get_dataset_spec(conf["dataset"]["name"]).not_in_seed
    dataset = {k: v for k, v in conf["dataset"].items() if k not in excluded}
    key = {"seed": conf.get("seed", 0), "dataset": dataset, "trial": int(trial), "fit": "unsupervised"}
    return int(stable_hash(key, length=16), 16) >> 1


def fit_is_unsupervised(spec: registry.MethodSpec, cons: Constraints) -> bool:
    """Whether fitting ``spec`` on ``cons`` uses no supervision at all: the method declares none
    (``MethodSpec.supervision`` empty) or the set holds no pair and no label. Such a fit is the
    same for every constraint budget and noise level of a trial (``share_unsupervised_fits``)."""
    if not spec.supervision:
        return True
    return cons.n_must_link == 0 and cons.n_cannot_link == 0 and cons.n_labeled == 0


def trial_streams(seed: int) -> tuple[np.random.Generator, int]:
    """(generator for noise and constraints, int random_state for the method)."""
    supervision, method = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(supervision), int(method.generate_state(1, np.uint32)[0])


def group_params(section: dict) -> dict:
    return {k: v for k, v in section.items() if k != "name"}


def draw_supervision(y, constraints_conf: dict, noise_conf: dict, rng: np.random.Generator):
    """Draw one trial's supervision from labels ``y``.

    Label noise (``NoiseSpec.stage == "labels"``) corrupts ``y`` before the
    scheme draws; constraint noise (``"constraints"``) acts on the drawn set.

    Returns
    -------
    constraints : Constraints
    y_used : ndarray
        The labels the scheme saw (noisy under label noise). Evaluation uses
        the true labels, never these.
    """
    noise_spec = registry.get_noise_spec(noise_conf["name"])
    scheme = registry.get_scheme_spec(constraints_conf["name"])
    y_used = np.asarray(y)
    if noise_spec.stage == "labels":
        y_used = noise_spec.func(y_used, rng=rng, **group_params(noise_conf))
    cons = scheme.func(y_used, rng=rng, **group_params(constraints_conf))
    if noise_spec.stage == "constraints":
        cons = noise_spec.func(cons, rng=rng, **group_params(noise_conf))
    if not isinstance(cons, Constraints):
        raise TypeError(
            f"constraint scheme {scheme.name!r} returned {type(cons).__name__}; "
            f"schemes must return a ccbench.Constraints"
        )
    return cons, y_used


def constraints_hash(cons: Constraints) -> str:
    """A short fingerprint of a constraint set (pairs, confidences, partial labels)."""
    h = hashlib.sha256()
    h.update(str(cons.n_samples).encode())
    for arr in (cons.must_link, cons.cannot_link, cons.must_link_weight, cons.cannot_link_weight):
        h.update(np.ascontiguousarray(arr).tobytes())
        h.update(b"|")
    if cons.labels is not None:
        h.update(np.ascontiguousarray(cons.labels, dtype=np.int64).tobytes())
    return h.hexdigest()[:16]


def skip_reason(spec: registry.MethodSpec, cons: Constraints) -> str | None:
    """Why ``spec`` cannot use this supervision, or None when it can.

    Unsupervised methods always run. Pair-based methods run on any cell (an
    empty set is the unconstrained case). A method that uses only partial
    labels is skipped when the scheme revealed none.
    """
    if not spec.supervision:
        return None
    available = {"must_link", "cannot_link"}
    if cons.labels is not None:
        available.add("labels")
    if set(spec.supervision) & available:
        return None
    return (
        f"method {spec.name!r} uses {'/'.join(spec.supervision)} supervision but the "
        f"constraint scheme gives {'/'.join(sorted(available))}; use a labeled scheme "
        f"such as constraints=labeled_subsets"
    )


from .size_limits import (  # noqa: E402 - the size limits, re-exported as part of the protocol
    TIME_REFUSAL_FACTOR, memory_refusal, predicted_seconds, searches_for_k, size_refusal)
from .labels_check import MethodOutputError, checked_labels  # noqa: E402, F401 - re-exported likewise




#: The method config's ``n_clusters`` value of a k-free run (``method.n_clusters=free``): k is not given; a
#: method that finds k itself uses its own rule, one that needs k chooses it by CVCP over :func:`k_free_range`.
K_FREE_VALUE = "free"

#: The largest k CVCP over k considers (:func:`k_free_range`): the board's sets have 2-10 classes, the next
#: board's up to 50.
K_FREE_MAX = 50


def k_free_range(n_samples: int) -> tuple[int, ...]:
    """The k a k-free run of a method that needs k chooses among by CVCP: ``2 .. max(2, min(K_FREE_MAX,
    floor(sqrt(n)), n - 1))``.

    A rule in n alone, so the true number of classes is never read. ``sqrt(n)`` is the usual upper bound
    on the number of clusters worth considering; on every set of the leaderboard it is at least 1.5 times
    the true k (soybean_small: k = 4, n = 47, up to 6; yeast: 10 of 1,484, up to 38), so the true k is
    inside the range without being its edge. :data:`K_FREE_MAX` caps the grid (and its cost: one fit per
    fold and k) where sqrt(n) would exceed it (n > 2,500)."""
    if n_samples is None or n_samples < 3:
        raise ValueError(f"a k-free run chooses k among 2..sqrt(n); it needs n >= 3 points, got n={n_samples!r}")
    return tuple(range(2, max(2, min(K_FREE_MAX, math.isqrt(int(n_samples)), int(n_samples) - 1)) + 1))


def k_free_problem(spec: registry.MethodSpec, n_clusters_value, tune: str | None) -> str | None:
    """Why a k-free run (``method.n_clusters=free``) of ``spec`` cannot run, or None: a method that needs k
    can only choose it by a tuner (CVCP over :func:`k_free_range`), so ``tune`` must not be none."""
    if n_clusters_value != K_FREE_VALUE or not spec.needs_n_clusters or (tune or "none") != "none":
        return None
    return (f"method.n_clusters={K_FREE_VALUE}: method {spec.name!r} needs n_clusters and cannot find k itself; "
            f"in a k-free run it chooses k by CVCP over k in 2..sqrt(n): add tune=cvcp (its MethodSpec.grid "
            f"must list n_clusters), or give method.n_clusters=true_k")


def free_grid(spec: registry.MethodSpec, params: dict, n_clusters: int | None = None,
              n_samples: int | None = None) -> dict:
    """The grid a tuned trial searches: ``spec.grid`` less the parameters the method config sets.

    ``n_clusters``'s values are relative to the k the trial is given (``"k-1"``, ``"k"``,
    ``"k+1"``): those that give fewer than 2 or (with ``n_samples``) at least ``n_samples``
    clusters are left out, and the parameter with them when fewer than two remain or when the run is
    k-free (``n_clusters`` None: nothing to be relative to) of a method that finds k itself.

    A k-free run of a method that **needs** k (``method.n_clusters=free``; its grid lists ``n_clusters``)
    searches k alone, over the
    absolute :func:`k_free_range` (a rule in ``n_samples``, never the true k): CVCP over k (Pelleg &
    Baras 2007). Its other grid parameters stay at the method config's values, so the k-free board
    compares each method's defaults choosing k with the main board's defaults given k (the tuned
    variants are section 1b's comparison).
    """
    if n_clusters is None and spec.needs_n_clusters and "n_clusters" in spec.grid:
        return {"n_clusters": k_free_range(n_samples)}
    grid = {k: v for k, v in spec.grid.items() if k not in params}
    if "n_clusters" in grid:
        upper = n_samples - 1 if n_samples else None
        ks = () if n_clusters is None else tuple(
            v for v in grid["n_clusters"]
            if resolve_relative_k(v, n_clusters) >= 2 and (upper is None or resolve_relative_k(v, n_clusters) <= upper))
        if len(ks) >= 2:
            grid["n_clusters"] = ks
        else:
            del grid["n_clusters"]
    return grid


def tuning_fits(spec: registry.MethodSpec, params: dict, tune: str, n_folds: int, n_clusters: int | None = None,
                n_samples: int | None = None) -> int:
    """Fits one trial takes: 1, or under ``tune`` one per fold and combination of the grid
    parameters the method config leaves free (:func:`free_grid`), plus the refit (what the time
    budget is charged: ``TimeModel.tuned`` times this many untuned trials, :func:`predicted_seconds`)."""
    if tune == "none":
        return 1
    combinations = math.prod(len(v) for v in free_grid(spec, params, n_clusters, n_samples).values())
    return 1 + int(n_folds) * combinations * (combinations > 1)


# Dataset options that say *where* data lives, not what it is: never taken from a results
# directory (a report reads results, nothing else; a crafted cell.json must not choose files or URLs).
LOCATION_OPTIONS = ("data_dir", "manifest", "cache_dir", "url", "path", "data_home")


def report_safe_dataset_params(section: dict) -> dict:
    """A stored dataset group's options without file-system locations or URLs (:data:`LOCATION_OPTIONS`)."""
    return {k: v for k, v in group_params(section).items() if k not in LOCATION_OPTIONS}


# A report re-draws a generated data set (to recompute a trial's constraints) only up to this many
# points: a generator's memory can grow as n^2 (scap_gaussian_similarity holds an n x n matrix,
# 200 MB at this bound; n_samples=60000 would be 26.8 GiB).
REPORT_MAX_GENERATED_SAMPLES = 5000


def report_redraw_refusal(section: dict) -> str | None:
    """Why a report must not load the data set a stored ``dataset`` group names (None: it may).

    A results folder may come from anyone, so a report loads only what is already on this machine and
    bounded: scikit-learn's bundled sets, UCI sets of the manifest whose files are present and verified
    under the data directory (never downloaded), and generated sets of at most
    :data:`REPORT_MAX_GENERATED_SAMPLES` points. Anything else (``openml``, which downloads;
    ``csv``, a file the folder names; a plugin's loader) is refused.
    """
    name = section.get("name") if isinstance(section, dict) else None
    try:
        spec = registry.get_dataset_spec(str(name))
    except Exception:  # noqa: BLE001 - unknown or not installed here
        return f"data set {name!r} is not registered here"
    if spec.source == "sklearn":
        return None
    if spec.source == "UCI":
        from ..data._files import read_manifest, resolve_data_dir

        root = resolve_data_dir()
        missing = [e.file for e in read_manifest().get(spec.name, ()) if not (root / e.name / e.file).is_file()]
        if missing:
            return f"UCI set {spec.name!r} is not on this machine ({', '.join(missing)} absent under {root}); a report never downloads"
        return None
    if spec.source == "generated":
        n = group_params(section).get("n_samples", spec.n_samples)
        try:
            n = int(n)
        except (TypeError, ValueError):
            return f"generated set {spec.name!r} with n_samples={n!r}"
        if n > REPORT_MAX_GENERATED_SAMPLES:
            return (f"generated set {spec.name!r} with n_samples={n}, above the {REPORT_MAX_GENERATED_SAMPLES} "
                    f"a report re-draws (protocol.REPORT_MAX_GENERATED_SAMPLES)")
        return None
    return (f"data set {spec.name!r} ({spec.source or 'a plugin'}) is not a local, bundled or bounded generated "
            f"set; a report does not load data a results folder chooses")


@functools.lru_cache(maxsize=None)
def _accepts(estimator: type, name: str) -> bool:
    return name in inspect.signature(estimator).parameters


def estimator_defaults(spec: registry.MethodSpec) -> dict:
    """The estimator's ``__init__`` defaults (what a method config leaves out)."""
    return {k: p.default for k, p in inspect.signature(spec.estimator).parameters.items()
            if p.default is not inspect.Parameter.empty}


def build_estimator(spec: registry.MethodSpec, params: dict, random_state: int, n_clusters=None):
    params = dict(params)
    # random_state null (the method configs' default) = the trial's derived seed;
    # an explicit value in the config wins.
    if _accepts(spec.estimator, "random_state") and params.get("random_state") is None:
        params["random_state"] = random_state
    if n_clusters is not None:
        params["n_clusters"] = n_clusters
    elif spec.needs_n_clusters and "n_clusters" not in params:
        # k-free with nothing to choose k: never fit at the estimator's default k
        raise ValueError(k_free_problem(spec, K_FREE_VALUE, "none"))
    return registry.make_method(spec.name, **params)


def resolve_n_clusters(value, *, spec, n_classes, X, constraints, random_state) -> int | None:
    """The ``n_clusters`` a method receives (None when it needs none, or accepts one and is given none).

    ``value`` is the method config's reserved ``n_clusters`` key: ``"true_k"``
    (default; the number of true classes), an int, ``"from_method=<name>"`` or a
    mapping ``{from_method: <name>, <param>: ...}``: run that method on the same
    data and constraints and use the number of clusters it found (SCSSAP feeds
    constrained EM the count found by SCSSAP with infinite penalty).
    """
    if not (spec.needs_n_clusters or spec.accepts_n_clusters):
        return None
    if value is None:  # a method that can find k itself runs k-free unless its config gives k
        return int(n_classes) if spec.needs_n_clusters else None
    if value == "true_k":
        return int(n_classes)
    if value == K_FREE_VALUE:  # k-free: not given; chosen by the method's own rule or by CVCP (free_grid)
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and value.startswith("from_method="):
        source, params = value.split("=", 1)[1].strip(), {}
    elif isinstance(value, dict) and "from_method" in value:
        source, params = value["from_method"], {k: v for k, v in value.items() if k != "from_method"}
    else:
        raise ValueError(
            f"method.n_clusters={value!r} is not understood; use true_k, an int, "
            f"from_method=<name> or {{from_method: <name>, <param>: <value>}}, or {K_FREE_VALUE} (k-free: the "
            f"method chooses k)"
        )
    source_spec = registry.get_method_spec(source)
    if source_spec.needs_n_clusters:
        raise ValueError(
            f"n_clusters=from_method={source} needs a method that finds the number of "
            f"clusters itself, but {source!r} needs n_clusters"
        )
    est = build_estimator(source_spec, params, random_state)
    est.fit(X, constraints=constraints)
    return int(len(np.unique(est.labels_)))


def _positive_int(value) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        return f"must be a positive int, got {value!r}"
    return None


#: The most trials a cell may ask for: a paper's protocol is 10 to 100; a typo such as
#: ``n_trials=1000000000`` would otherwise run (and grow the job's memory) for days before any output.
MAX_TRIALS = 10_000
#: Seeds are stored in int64 Parquet columns: ``seed`` must fit (a larger one would run every trial
#: and then fail when writing them).
SEED_BOUNDS = (-(2**63), 2**63 - 1)


def _n_trials(value) -> str | None:
    problem = _positive_int(value)
    if problem is None and value > MAX_TRIALS:
        return f"must be at most {MAX_TRIALS:,} (protocol.MAX_TRIALS), got {value!r}"
    return problem


def _seed(value) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        return f"must be an int, got {value!r}"
    if not SEED_BOUNDS[0] <= value <= SEED_BOUNDS[1]:
        return f"must fit in 64 bits, between -2^63 and 2^63 - 1 (protocol.SEED_BOUNDS), got {value!r}"
    return None


def _rate(value) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        return f"must be a number in [0, 1], got {value!r}"
    return None


def _count(value) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        return f"must be >= 0, got {value!r}"
    if isinstance(value, float) and not value.is_integer():
        return (f"must be a whole number of pairs, got {value!r} (it would be drawn as {int(value)} "
                f"while the rows say {value!r}); give an integer")
    return None


def _per_class(value) -> str | None:
    if isinstance(value, float) and 0 < value < 1:
        return None  # a fraction of every class
    if isinstance(value, float) and not value.is_integer():
        return (f"must be a whole number of points per class or a fraction in (0, 1), got {value!r} "
                f"(it would be drawn as {int(value)} while the rows say {value!r})")
    return _count(value)


def _registered(lookup):
    def check(value) -> str | None:
        try:
            lookup(value)
        except (registry.UnknownNameError, ImportError) as exc:
            return str(exc)
        return None

    return check


def _metrics(value) -> str | None:
    names = [value] if isinstance(value, str) else list(value or ())
    if not names:
        return "is empty; name at least one metric (`ccbench plugins --all` lists them)"
    bad = [msg for msg in map(_registered(registry.get_metric_spec), names) if msg]
    return "; ".join(bad) or None


#: What a trial does with contradictory constraints (``inconsistent``).
INCONSISTENT = ("warn", "raise", "ignore")
#: Which points the label metrics score (``evaluate_on``; :func:`ccbench.running.harness.evaluation_mask`).
#: ``both`` writes the metrics on all points under their names and on the unconstrained points
#: as ``<metric>_unconstrained`` (:data:`UNCONSTRAINED_SUFFIX`), from one fit.
EVALUATE_ON = ("all", "unconstrained", "both")
UNCONSTRAINED_SUFFIX = "_unconstrained"
#: The fewest points a label metric scores: a pair-counting metric (ARI) is undefined on one point.
MIN_SCORED_POINTS = 2


def _tuner(value) -> str | None:
    if value == "none":
        return None
    try:
        registry.get_tuner_spec(value)
    except (registry.UnknownNameError, ImportError) as exc:
        return f"must be none or a registered tuner: {exc}"
    return None


def _folds(value) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 2:
        return f"must be an int >= 2 (folds of the supervision), got {value!r}"
    return None


def _one_of(options, value) -> str | None:
    return None if value in options else f"must be {', '.join(options[:-1])} or {options[-1]}, got {value!r}"


def _seconds(value) -> str | None:
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0):
        return None
    return f"must be a positive number of seconds, got {value!r}"


def _boolean(value) -> str | None:
    return None if isinstance(value, bool) else f"must be true or false, got {value!r}"


#: Checks of single values that need no data: ``key -> check(value) -> message or None``.
VALUE_CHECKS = {
    "n_trials": _n_trials,
    "seed": _seed,
    "metrics": _metrics,
    "dataset.name": _registered(registry.get_dataset_spec),
    "method.name": _registered(registry.get_method_spec),
    "constraints.name": _registered(registry.get_scheme_spec),
    "noise.name": _registered(registry.get_noise_spec),
    "noise.rate": _rate,
    "constraints.n_constraints": _count,
    "constraints.per_class": _per_class,
    "constraints.n_pairs": _count,
    "constraints.per_point": lambda v: None if v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0)
    else f"must be a number of pairs per point >= 0, got {v!r}",
    "dataset.nominal": lambda v: _one_of(("onehot", "codes"), v),
    "constraints.fraction": lambda v: None if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1
    else f"must be a share of the points in [0, 1], got {v!r}",
    "trial_timeout": _seconds,
    "time_budget": _seconds,
    "inconsistent": lambda v: _one_of(INCONSISTENT, v),
    "evaluate_on": lambda v: _one_of(EVALUATE_ON, v),
    "tune": _tuner,
    "tune_folds": _folds,
    "share_unsupervised_fits": _boolean,
    "timeout_stops_cell": _boolean,
    "timeout_stops_seeds": _boolean,
}


def check_value(key: str, value) -> str | None:
    """``"key: problem"`` when :data:`VALUE_CHECKS` refuses ``value`` for ``key``, else None."""
    check = VALUE_CHECKS.get(key)
    message = check(value) if check is not None else None
    return f"{key} {message}" if message else None


def check_cell(cell: dict) -> list[str]:
    """What is wrong with a cell that can be told without loading data (empty when nothing).

    Every value :data:`VALUE_CHECKS` knows, plus more random pairs than the data
    set has (from its spec's size). The command line runs the same value checks
    on its own overrides before Hydra starts any job (``ccbench.running.cli``).
    """
    flat = {k: cell.get(k) for k in ("n_trials", "seed", "metrics", "inconsistent", "trial_timeout", "time_budget",
                                     "evaluate_on", "tune", "tune_folds",
                                     "share_unsupervised_fits", "timeout_stops_cell", "timeout_stops_seeds")
            if k in cell}
    for group in ("dataset", "method", "constraints", "noise"):
        flat.update({f"{group}.{k}": v for k, v in cell[group].items()})
    problems = [msg for msg in (check_value(k, v) for k, v in flat.items()) if msg]
    try:
        k_free = k_free_problem(registry.get_method_spec(cell["method"]["name"]), cell["method"].get("n_clusters"),
                                cell.get("tune"))
    except (registry.UnknownNameError, KeyError):
        k_free = None  # an unknown method is reported by the key checks
    problems += [k_free] if k_free else []
    m = cell["constraints"].get("n_constraints")
    if cell["constraints"].get("per_point") is not None and m is not None:
        problems.append(
            f"constraints.per_point={cell['constraints']['per_point']!r} and constraints.n_constraints={m!r} "
            f"are both set: {cell['constraints'].get('name')} takes one budget; add constraints.n_constraints=null "
            f"to scale it with the data set (per_point), or drop per_point"
        )
    try:
        n_samples = registry.get_dataset_spec(cell["dataset"]["name"]).n_samples
    except registry.UnknownNameError:
        n_samples = None
    dropping = cell["dataset"].get("missing", "drop") == "drop"  # the spec's size is the "drop" size
    if isinstance(m, int) and n_samples and dropping and m > n_samples * (n_samples - 1) // 2:
        problems.append(
            f"constraints.n_constraints={m} is not possible with {n_samples} samples "
            f"(at most {n_samples * (n_samples - 1) // 2} distinct pairs)"
        )
    return problems
