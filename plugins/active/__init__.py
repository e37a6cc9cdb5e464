"""Active query strategies: which pair to ask an oracle next (issue 53).

The pluggy plugin of the strategies (hook ``ccbench_query_strategies``); it names them as
``"module:Class"`` strings, so ``ccbench plugins`` imports no numerical code. A strategy's
``next_pair(X, asked, answers, labels, rng) -> (i, j)`` is the interface
(:class:`ccbench.registry.QueryStrategySpec`); the simulated oracle is :mod:`.oracle`, the loop
that asks is :mod:`.loop`.
"""

from ccbench.hookspecs import hookimpl
from ccbench.registry import QueryStrategySpec, SchemeSpec, lazy_function


def _active_queries_keywords(y, *, rng=None, strategy="random", budget=100, step=10, persistent=True,
                             confidence=None):
    """The keywords of ``scheme.active_queries`` (a test checks that they agree): the sweep's check reads a
    scheme's keywords from its signature (through ``__wrapped__``), and a lazy function's own takes any."""


def _lazy_active_queries():
    func = lazy_function(f"{__name__}.scheme:active_queries")
    func.__wrapped__ = _active_queries_keywords
    return func


@hookimpl
def ccbench_query_strategies() -> list[QueryStrategySpec]:
    return [
        QueryStrategySpec(
            name="random",
            strategy=f"{__name__}.strategies:RandomPairs",
            summary="a pair drawn uniformly among the pairs not asked yet (the baseline)",
        ),
        QueryStrategySpec(
            name="explore_consolidate",
            strategy=f"{__name__}.strategies:ExploreConsolidate",
            summary="farthest-first to k disjoint neighbourhoods, then random points against them, nearest "
                    "centroid first",
            paper="Basu, Banerjee & Mooney, SDM 2004",
            needs_n_clusters=True,
        ),
        QueryStrategySpec(
            name="min_max",
            strategy=f"{__name__}.strategies:MinMax",
            summary="Explore, then consolidate the point least similar to every neighbourhood point",
            paper="Mallapragada, Jin & Jain, ICPR 2008",
            needs_n_clusters=True,
        ),
        QueryStrategySpec(
            name="npu",
            strategy=f"{__name__}.npu:NPU",
            summary="the point of most neighbourhood-membership entropy per expected query, random-forest "
                    "similarity from the current partition",
            paper="Xiong, Azimi & Fern, IEEE TKDE 2014",
        ),
        QueryStrategySpec(
            name="cobra",
            strategy=f"{__name__}.cobra:COBRA",
            summary="COBRA's queries: representatives of k-means super-instances, closest centroids first, "
                    "pairs implied by the answers (must-link transitivity, entailed cannot-links) skipped",
            paper="Van Craenendonck, Dumancic & Blockeel, IJCAI 2017",
        ),
    ]


@hookimpl
def ccbench_constraint_schemes() -> list[SchemeSpec]:
    return [
        SchemeSpec("active_queries", _lazy_active_queries(),
                   "an anytime cell: pairs asked one at a time by constraints.strategy of an oracle "
                   "(ccbench.running.active_cells), scored at q = 0, step, ..., budget"),
    ]
