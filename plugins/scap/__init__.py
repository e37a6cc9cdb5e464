"""Soft-constraint affinity propagation family: ``scap`` and its semi-supervised form ``ssap_l``.

Both find the number of clusters themselves (``needs_n_clusters=False``) and accept an
optional ``n_clusters``: ``p`` is then searched by bisection on the preference ``-p``
(:func:`ccbench.similarity.bisect_preference`, shared with the AP family; issue 38).
"""

from ccbench.hookspecs import hookimpl
from ccbench.registry import K_AROUND, MemoryModel, MethodSpec, TimeModel

_LEONE = "Leone, Sumedha & Weigt, Eur. Phys. J. B 65 (2008)"


@hookimpl
def ccbench_methods() -> list[MethodSpec]:
    return [
        MethodSpec(
            name="scap",
            grid={"n_clusters": K_AROUND},  # CVCP chooses k from the constraints (issue 38)
            estimator=f"{__name__}.scap:SCAP",
            needs_n_clusters=False,
            accepts_n_clusters=True,  # n_clusters=k searches the preference (bisection)
            search_fits=12,  # the search's typical fits (11-14 on four UCI sets); the time model below holds them
            summary="soft-constraint affinity propagation: exemplar penalty p, no self-exemplars",
            paper=_LEONE,
            # CPU per trial, calibrated on reports/leaderboard/rows.parquet by
            # `ccbench time-models reports/leaderboard` (issue 50; docs/harness.md, time budget)
            time=TimeModel(n=1000, seconds=1.58, exponent=0.7, pairs_exponent=0.02, k_exponent=0.98, features_exponent=0.05, tuned=0.789,
                           k_free=TimeModel(n=1000, seconds=0.79, exponent=3, pairs_exponent=0.18, features_exponent=-0.32)),
            memory=MemoryModel(dense=2, alternative="use memory='linear' (O(N) memory, eqs. 16-20)", unless=(("memory", "linear"),)),
        ),
        MethodSpec(
            name="ssap_l",
            grid={"n_clusters": K_AROUND},  # CVCP chooses k from the constraints (issue 38)
            estimator=f"{__name__}.scap:SSAPL",
            needs_n_clusters=False,
            accepts_n_clusters=True,  # n_clusters=k searches the preference (bisection)
            search_fits=12,  # the search's typical fits (11-14 on four UCI sets); the time model below holds them
            summary="semi-supervised SCAP: labeled points / must-link chunklets as macro-nodes "
            "(cannot-links ignored)",
            paper=_LEONE + ", section 4",
            supervision=("must_link", "labels"),
            constraint_kind="hard",
            # CPU per trial, calibrated on reports/leaderboard/rows.parquet by
            # `ccbench time-models reports/leaderboard` (issue 50; docs/harness.md, time budget)
            time=TimeModel(n=1000, seconds=0.528, exponent=2.71, pairs_exponent=0.03, k_exponent=0.54, features_exponent=0.16, tuned=1.62,
                           k_free=TimeModel(n=1000, seconds=0.818, exponent=3, pairs_exponent=0.13, features_exponent=-0.32)),
            memory=MemoryModel(dense=2, alternative="use memory='linear' (O(N) memory, eqs. 16-20)", unless=(("memory", "linear"),)),
        ),
    ]
