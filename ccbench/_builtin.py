"""Built-in data sets, constraint schemes, noise injectors and metrics.

Registered through the same hooks as any plugin (see :mod:`ccbench.hookspecs`).
Each hook imports what it needs, so listing methods loads none of it.
"""

from __future__ import annotations

from .hookspecs import hookimpl
from .registry import MetricSpec, NoiseSpec, SchemeSpec


@hookimpl
def ccbench_datasets():
    from .datasets import builtin_dataset_specs

    return builtin_dataset_specs()


@hookimpl
def ccbench_dataset_suites():
    from .datasets import UCI_SETS

    return {"uci_all": tuple(UCI_SETS)}


@hookimpl
def ccbench_constraint_schemes():
    from . import constraints

    return [
        SchemeSpec("none", lambda y, *, rng: constraints.Constraints.empty(len(y)), "no supervision"),
        SchemeSpec("random_pairs", constraints.random_pairs, "n random pairs, ML iff same label"),
        SchemeSpec("fraction_pairs", constraints.fraction_pairs,
                   "all pairs among round(fraction n) random points, ML iff same label"),
        SchemeSpec("labeled_subsets", constraints.labeled_subsets, "per_class labeled points per class"),
        SchemeSpec("per_class_pairs", constraints.per_class_pairs, "j ML per class, j CL per class pair"),
    ]


@hookimpl
def ccbench_noise_injectors():
    from .data import noise

    return [
        NoiseSpec("none", lambda y, *, rng, rate=0.0: y, "labels", "no noise"),
        NoiseSpec("label_noise", noise.label_noise, "labels", "relabel a fraction of points before drawing"),
        NoiseSpec("constraint_flip", noise.constraint_flip, "constraints", "move a fraction of pairs ML<->CL"),
    ]


@hookimpl
def ccbench_metrics():
    from . import metrics

    # Every metric declares its direction (ranked "higher"/"lower", or "none": shown, never ranked)
    # and its range (plots clip confidence intervals to it).
    unit, inf = (0.0, 1.0), float("inf")
    return [
        MetricSpec("modified_rand", metrics.modified_rand, "SCSSAP eq. 27", direction="higher", bounds=unit,
                   label="modified Rand index"),
        MetricSpec("rand", metrics.rand, "Rand index, SCSSAP eq. 26", direction="higher", bounds=unit,
                   label="Rand index"),
        # ARI >= -1/2 for any two clusterings (Chacon & Rastrojo 2023, Adv. Data Anal. Classif. 17)
        MetricSpec("ari", metrics.adjusted_rand, "adjusted Rand index", direction="higher", bounds=(-0.5, 1.0),
                   label="adjusted Rand index"),
        MetricSpec("nmi", metrics.nmi, "NMI, geometric normalisation (RN-SDP eq. 7)", direction="higher",
                   bounds=unit, label="NMI"),
        MetricSpec("errors", metrics.majority_errors, "points outside their cluster's majority class",
                   direction="lower", bounds=(0.0, inf), label="errors (points outside the majority class)"),
        # a count: fewer clusters is not better (SSAP-G "wins" by finding 1), so it is never ranked
        MetricSpec("n_clusters_found", metrics.n_clusters, "number of clusters found (not ranked)",
                   direction="none", bounds=(1.0, inf), label="clusters found"),
        MetricSpec("n_clusters_error", metrics.n_clusters_error, "|clusters found - true classes|",
                   direction="lower", bounds=(0.0, inf), label="|clusters found - classes|"),
        MetricSpec(
            "constraint_violations",
            metrics.constraint_violations,
            "fraction of given constraints violated",
            direction="lower",
            bounds=unit,
            label="share of constraints violated",
            needs_constraints=True,
        ),
        MetricSpec("violated_constraints", metrics.violated_constraints,
                   "number of given constraints violated (every kind; PCCC's violations)", direction="lower",
                   bounds=(0.0, inf), label="constraints violated", needs_constraints=True),
        MetricSpec("violated_cannot_links", metrics.violated_cannot_links, "number of given cannot-links violated",
                   direction="lower", bounds=(0.0, inf), label="cannot-links violated", needs_constraints=True),
        MetricSpec("inertia", metrics.inertia, "within-cluster sum of squares on the fitted features (k-means' "
                   "objective)", direction="lower", bounds=(0.0, inf), label="inertia", needs_features=True),
    ]
