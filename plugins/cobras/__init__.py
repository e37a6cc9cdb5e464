"""COBRAS family: ``cobras``, clustering by asking pairwise questions (Van Craenendonck, Dumancic,
Van Wolputte & Blockeel, IDA 2018), and the scheme ``oracle_labels`` its provisional harness route needs.

Loaded on request (``plugins: [ccbench_plugins.cobras]``; the method and scheme configs with
``'hydra.searchpath=[pkg://ccbench_plugins.cobras.conf]'``), not an entry point yet: until issue 53's
anytime protocol hands a method an oracle, COBRAS in the harness asks the exact oracle of the labels
the scheme ``oracle_labels`` reveals (all of them), at most ``max_questions`` times. The algorithm is
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
