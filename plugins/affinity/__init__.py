"""Affinity-propagation family: ``ap``, ``scssap``, ``scssap_ml``, ``ssap_g``.

All four run on one message core (:mod:`.core`, numba kernels in :mod:`._kernels`).
Each finds the number of clusters itself (``needs_n_clusters=False``) and accepts an
optional ``n_clusters``: the preference is then searched by bisection
(:func:`ccbench.similarity.bisect_preference`, issue 38).
"""

from ccbench.hookspecs import hookimpl
from ccbench.registry import K_AROUND, MemoryModel, MethodSpec, TimeModel

_ARZENO = "Arzeno & Vikalo, IEEE TPAMI 2015"
_PAIRS = ("must_link", "cannot_link")


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="ap",
            grid={"n_clusters": K_AROUND},  # CVCP chooses k from the constraints (issue 38)
            estimator=f"{__name__}.ap:AffinityPropagationClusterer",
            needs_n_clusters=False,
            accepts_n_clusters=True,  # n_clusters=k searches the preference (bisection)
            search_fits=10,  # the search's typical fits; not charged: the time model below holds the search
            summary="affinity propagation on negative squared Euclidean similarities (unsupervised)",
            paper="Frey & Dueck, Science 2007",
            # CPU per trial, calibrated on reports/leaderboard/rows.parquet by
            # `ccbench time-models reports/leaderboard` (issue 50; docs/harness.md, time budget)
            time=TimeModel(n=1000, seconds=3.53, exponent=2.15, pairs_exponent=-0.04, k_exponent=0.33, features_exponent=0.15, tuned=0.293,
                           k_free=TimeModel(n=1000, seconds=0.699, exponent=2.32, pairs_exponent=-0.18, features_exponent=-0.05)),
            memory=MemoryModel(dense=5, alternative="subsample, or use scap with memory='linear' (O(N) memory)"),
        ),
        MethodSpec(
            name="scssap",
            grid={"confidence": (None, 0.1, 0.5), "n_clusters": K_AROUND},
            estimator=f"{__name__}.scssap:SCSSAP",
            needs_n_clusters=False,
            accepts_n_clusters=True,  # n_clusters=k searches the preference (bisection)
            search_fits=10,  # the search's typical fits; not charged: the time model below holds the search
            summary="soft-constraint semi-supervised affinity propagation (penalised must/cannot-link factors)",
            paper=_ARZENO,
            supervision=_PAIRS,
            constraint_kind="soft",
            # CPU per trial, calibrated on reports/leaderboard/rows.parquet by
            # `ccbench time-models reports/leaderboard` (issue 50; docs/harness.md, time budget)
            time=TimeModel(n=1000, seconds=5.21, exponent=2.71, pairs_exponent=0.85, k_exponent=-0.06, features_exponent=-0.21, tuned=1.04,
                           k_free=TimeModel(n=1000, seconds=0.664, exponent=2.42, pairs_exponent=0.82, features_exponent=-0.04)),
            memory=MemoryModel(dense=5, alternative="subsample, or use scap with memory='linear' (O(N) memory)"),
        ),
        MethodSpec(
            name="scssap_ml",
            grid={"confidence": (None, 0.1, 0.5), "n_clusters": K_AROUND},
            estimator=f"{__name__}.scssap:SCSSAPMetricLearning",
            needs_n_clusters=False,
            accepts_n_clusters=True,  # n_clusters=k searches the preference (bisection)
            search_fits=10,  # the search's typical fits; not charged: the time model below holds the search
            summary="SCSSAP alternated with closed-form diagonal metric learning (Algorithm 2)",
            paper=_ARZENO,
            supervision=_PAIRS,
            constraint_kind="soft",
            # CPU per trial, calibrated on reports/leaderboard/rows.parquet by
            # `ccbench time-models reports/leaderboard` (issue 50; docs/harness.md, time budget)
            time=TimeModel(n=1000, seconds=28.4, exponent=2.08, pairs_exponent=0.46, k_exponent=1.15, features_exponent=0.28, tuned=0.507,
                           k_free=TimeModel(n=1000, seconds=14.2, exponent=2.8, pairs_exponent=1.19, features_exponent=-0.37)),
            memory=MemoryModel(dense=5, alternative="subsample, or use scap with memory='linear' (O(N) memory)"),
        ),
        MethodSpec(
            name="ssap_g",
            grid={"n_clusters": K_AROUND},  # CVCP chooses k from the constraints (issue 38)
            estimator=f"{__name__}.ssap_g:SSAPG",
            needs_n_clusters=False,
            accepts_n_clusters=True,  # n_clusters=k searches the preference (bisection)
            search_fits=10,  # the search's typical fits; not charged: the time model below holds the search
            summary="semi-supervised AP with must-link meta-points and hard cannot-link factors",
            paper="Givoni & Frey, AISTATS 2009",
            supervision=_PAIRS,
            constraint_kind="hard",
            # CPU per trial, calibrated on reports/leaderboard/rows.parquet by
            # `ccbench time-models reports/leaderboard` (issue 50; docs/harness.md, time budget)
            time=TimeModel(n=1000, seconds=6.78, exponent=1.97, k_exponent=0.58, features_exponent=-0.06, tuned=0.958,
                           k_free=TimeModel(n=1000, seconds=0.669, exponent=2.37, pairs_exponent=-0.1, features_exponent=-0.03)),
            memory=MemoryModel(dense=6, alternative="subsample, or use scap with memory='linear' (O(N) memory)"),
        ),
    ]
