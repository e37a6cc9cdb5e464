"""COBRAS family: ``cobras``, clustering by asking pairwise questions (Van Craenendonck, Dumancic,
Van Wolputte & Blockeel, IDA 2018), and the scheme ``oracle_labels`` its provisional harness route needs.

Loaded on request (``plugins: [ccbench_plugins.cobras]``; the method and scheme configs with
``'hydra.searchpath=[pkg://ccbench_plugins.cobras.conf]'``), not an entry point. The anytime protocol
now hands it an oracle (``constraints=active_queries``, ``constraints.strategy=cobras``;
docs/active.md), but COBRAS cannot fit without one: every built-in method (an entry point) runs
scikit-learn's estimator checks and ccbench's hostile cases, which call ``fit(X)`` with no oracle
(``tests/test_estimator_checks.py``, ``tests/test_hostile.py``, ``ccbench check-plugin``); COBRAS fails
24 of the estimator checks and 3 hostile cases with ``InsufficientSupervisionError`` (measured
2026-11-29 with ``ccbench check-plugin cobras --plugin ccbench_plugins.cobras``). Registering it needs a
decision first: an oracle-only method's expected failures, or a fit without an oracle. Outside the
anytime protocol it asks the exact oracle of the labels the scheme ``oracle_labels`` reveals (all of
them), at most ``max_questions`` times. The package ships in the distribution (pyproject's package
list) like the other plugins. The algorithm is
in :mod:`.core`, the estimator in :mod:`.cobras`.
"""

from ccbench.hookspecs import hookimpl
from ccbench.registry import MethodSpec, SchemeSpec, lazy_function


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="cobras",
            estimator=f"{__name__}.cobras:COBRAS",
            summary="COBRAS: k-means super-instances split and merged by pairwise questions to an oracle "
                    "(provisional: the exact oracle of labels revealed by scheme oracle_labels)",
            paper="Van Craenendonck, Dumancic, Van Wolputte & Blockeel, IDA 2018",
            supervision=("labels",),
            needs_n_clusters=False,
            # every answer is obeyed (a must-link merges, a cannot-link keeps two clusters apart), but only
            # between the representatives asked about: points inside a super-instance are never asked
            constraint_kind="soft",
        ),
    ]


@hookimpl
def ccbench_constraint_schemes() -> list[SchemeSpec]:
    return [
        SchemeSpec("oracle_labels", lazy_function(f"{__name__}.core:oracle_labels"),
                   "every label revealed as an oracle's answer key, no pairs (COBRAS's provisional oracle)"),
    ]
