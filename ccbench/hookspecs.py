"""Hook specifications for ccbench plugins (pluggy project name ``ccbench``).

Every extension point is one hook returning a list of specs. Built-in methods,
data sets, constraint schemes, noise injectors and metrics are registered
through these same hooks, exactly as a third-party package would be.

A plugin is any module (or object) with functions decorated by
:data:`ccbench.hookimpl`. A third-party package advertises it in its
``pyproject.toml``::

    [project.entry-points.ccbench]
    my_method = "my_package.ccbench_plugin"
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .specs import DatasetSpec, MethodSpec, MetricSpec, NoiseSpec, QueryStrategySpec, SchemeSpec, TunerSpec

hookspec = pluggy.HookspecMarker("ccbench")
hookimpl = pluggy.HookimplMarker("ccbench")


# -- algorithms ---------------------------------------------------------------


@hookspec
def ccbench_methods() -> list[MethodSpec]:
    """Return the clustering methods this plugin provides.

    :return: a list of :class:`ccbench.registry.MethodSpec`.

    All implementations are called; their lists are concatenated.
    """


@hookspec
def ccbench_tuners() -> list[TunerSpec]:
    """Return model-selection procedures (the ``tune`` cell option: ``tune=cvcp``).

    :return: a list of :class:`ccbench.registry.TunerSpec`.

    All implementations are called; their lists are concatenated. A tuner chooses
    among a method's :attr:`~ccbench.registry.MethodSpec.grid` from the supervision
    alone (never the true labels).
    """


@hookspec
def ccbench_query_strategies() -> list[QueryStrategySpec]:
    """Return active query strategies (which pair to ask an oracle next).

    :return: a list of :class:`ccbench.registry.QueryStrategySpec`.

    All implementations are called; their lists are concatenated. A strategy proposes
    pairs; the oracle that answers them and the loop that asks are the harness's.
    """


# -- data and supervision -----------------------------------------------------


@hookspec
def ccbench_datasets() -> list[DatasetSpec]:
    """Return the data sets this plugin provides.

    :return: a list of :class:`ccbench.registry.DatasetSpec`.

    All implementations are called; their lists are concatenated.
    """


@hookspec
def ccbench_dataset_suites() -> dict[str, tuple[str, ...]]:
    """Return named suites of data sets: ``{name: (data set, ...)}``.

    A sweep's ``dataset=<suite>`` runs one job per member (:func:`ccbench.datasets.expand_suites`):
    ``uci_all`` (built in, the manifest's 24 UCI sets), ``board_all`` (the KEEL plugin, the reference
    board's distinct sets). All implementations are called; a later registration overrides an earlier
    suite of the same name.
    """


@hookspec
def ccbench_constraint_schemes() -> list[SchemeSpec]:
    """Return constraint schemes (how supervision is drawn from true labels).

    :return: a list of :class:`ccbench.registry.SchemeSpec`.

    All implementations are called; their lists are concatenated.
    """


@hookspec
def ccbench_noise_injectors() -> list[NoiseSpec]:
    """Return noise injectors (label noise before drawing, or constraint flips after).

    :return: a list of :class:`ccbench.registry.NoiseSpec`.

    All implementations are called; their lists are concatenated.
    """


# -- evaluation ---------------------------------------------------------------


@hookspec
def ccbench_metrics() -> list[MetricSpec]:
    """Return evaluation metrics.

    :return: a list of :class:`ccbench.registry.MetricSpec`.

    All implementations are called; their lists are concatenated.
    """
