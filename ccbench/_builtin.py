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
def ccbench_constraint_schemes():
    from . import constraints

    return [
        SchemeSpec("none", lambda y, *, rng: constraints.Constraints.empty(len(y)), "no supervision"),
        SchemeSpec("random_pairs", constraints.random_pairs, "n random pairs, ML iff same label"),
        SchemeSpec("labeled_subsets", constraints.labeled_subsets, "per_class labeled points per class"),
        SchemeSpec("per_class_pairs", constraints.per_class_pairs, "j ML per class, j CL per class pair"),
    ]


@hookimpl
def ccbench_noise_injectors():
    from . import noise

    return [
        NoiseSpec("none", lambda y, *, rng, rate=0.0: y, "labels", "no noise"),
        NoiseSpec("label_noise", noise.label_noise, "labels", "relabel a fraction of points before drawing"),
        NoiseSpec("constraint_flip", noise.constraint_flip, "constraints", "move a fraction of pairs ML<->CL"),
    ]


@hookimpl
def ccbench_metrics():
    from . import metrics

    return [
        MetricSpec("modified_rand", metrics.modified_rand, "SCSSAP eq. 27"),
        MetricSpec("rand", metrics.rand, "Rand index, SCSSAP eq. 26"),
        MetricSpec("ari", metrics.adjusted_rand, "adjusted Rand index"),
        MetricSpec("nmi", metrics.nmi, "NMI, geometric normalisation (RN-SDP eq. 7)"),
        MetricSpec("errors", metrics.majority_errors, "points outside their cluster's majority class",
                   greater_is_better=False),
        MetricSpec("n_clusters_found", metrics.n_clusters, "number of clusters found", greater_is_better=False),
        MetricSpec(
            "constraint_violations",
            metrics.constraint_violations,
            "fraction of given constraints violated",
            greater_is_better=False,
            needs_constraints=True,
        ),
    ]
