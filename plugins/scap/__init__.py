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
            search_fits=12,  # the search's typical fits (11-14 on four UCI sets), charged to the time budget
            summary="soft-constraint affinity propagation: exemplar penalty p, no self-exemplars",
            paper=_LEONE,
            time=TimeModel(n=5000, seconds=5.2, exponent=1.43),  # scale table, docs/benchmarks.md
            memory=MemoryModel(dense=2, alternative="use memory='linear' (O(N) memory, eqs. 16-20)", unless=(("memory", "linear"),)),
        ),
        MethodSpec(
            name="ssap_l",
            grid={"n_clusters": K_AROUND},  # CVCP chooses k from the constraints (issue 38)
            estimator=f"{__name__}.scap:SSAPL",
            needs_n_clusters=False,
            accepts_n_clusters=True,  # n_clusters=k searches the preference (bisection)
            search_fits=12,  # the search's typical fits (11-14 on four UCI sets), charged to the time budget
            summary="semi-supervised SCAP: labeled points / must-link chunklets as macro-nodes "
            "(cannot-links ignored)",
            paper=_LEONE + ", section 4",
            supervision=("must_link", "labels"),
            constraint_kind="hard",
            time=TimeModel(n=5000, seconds=4.6, exponent=1.69),  # scale table, docs/benchmarks.md
            memory=MemoryModel(dense=2, alternative="use memory='linear' (O(N) memory, eqs. 16-20)", unless=(("memory", "linear"),)),
        ),
    ]
