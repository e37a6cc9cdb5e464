"""The leaderboard (``ccbench report DIR --leaderboard``): one ranking page per supervision kind (pairs, labels) over many data sets.

``ccbench report DIR --leaderboard --out reports/leaderboard`` writes, per kind,
``<kind>.md`` (with PNG figures beside it) and ``<kind>.html`` (figures embedded,
opens offline), plus ``index.md`` and ``leaderboard.parquet`` (every number of the
pages in long form, and the per-cell means the ranks start from: table ``cell_means``,
:func:`cell_table`). Each page holds:

0. the **headline** (:func:`headline_effects`, :mod:`.effects`): paired effect sizes over data sets of every
   main method against plain ``kmeans`` and against the kind's best (mean difference with a data-set
   bootstrap interval, wins/losses, Wilcoxon with Holm over the family, the Bayesian signed-rank posterior
   with a ROPE, leave-one-data-set-out stability), P(best), the flagged data sets, under both failure
   conventions (:data:`CONVENTIONS`: a refused or skipped cell missing, or every failure last) and, beside
   ``ari``, for ``ari_unconstrained``; tables ``effects``, ``p_best``, ``flags``;
1. (the secondary view) average ranks over *cells* (data set x budget x noise x setting) on one metric
   (default ``ari``), ranked two ways (see *Scale honesty*) over the *main* methods
   (:func:`main_methods`: every method at its defaults), with a critical-difference diagram
   (:func:`ccbench.cd_diagram`: Friedman blocks are the data sets, :func:`dataset_blocks`; the
   per-cell view is a secondary table); 1b. each tuned variant against its own default
   (:func:`tuned_vs_default`);
2. a win/tie/loss matrix over all pairs of main methods (:func:`win_tie_loss_cells`, by the one
   verdict rule :func:`ccbench.reporting.stats.decide`), and the cells
   where nothing beats a method (:func:`unbeaten`; for ``cobs``: where no semi-supervised method
   is better than choosing among unsupervised clusterings by the constraints);
3. per data set, the gain of every supervised method over the best unsupervised
   baseline, with a bootstrap 95 % confidence interval (:func:`gains`; completed cells only);
4. the share of trials in which the supervision made a method worse than its own
   unconstrained run (:func:`hurt_share`, joined on :data:`TRIAL_KEYS`; the methods of
   :data:`NO_UNCONSTRAINED_REFERENCE` left out with the reason);
5. what noise does: each noisy cell against the method's noiseless twin, per method and
   family, with bootstrap intervals (:func:`noise_effect`);
6. fit time and peak memory beside quality, and a quality-vs-time scatter plot;
7. per method the count of every status, and the ranking both ways;

then the failure messages and the provenance (machines, code) of the kind's rows.
Plain ``ccbench report DIR`` writes the leaderboard when the cells' ``paper`` block
holds ``leaderboard: {metric: ..., margin: ...}`` (:func:`config_request`).

Definitions (every one is stated on the page as well):

- *kind*: the constraint scheme's: ``random_pairs`` and ``per_class_pairs`` are
  pairs, ``labeled_subsets`` labels. The *budget* is the scheme's size key
  (:data:`BUDGET`).
- *unconstrained run*: a row with ``constraints=none`` or budget 0 (``n_constraints=0``,
  ``per_class=0``); ``constraints=none`` rows serve both kinds. These rows are no
  ranking cell (nothing supervises them): they are the reference of item 4.
- *method*: the report's method label (:func:`ccbench.method_labels`, with a
  tuned variant as ``name+tuner``, e.g. ``pck_means+cvcp``).
- *completed cell*: every trial of the method in that cell has status ``ok`` (a
  mean over the trials that survived a time limit would be over easier draws).
- *unsupervised*: a method whose :class:`~ccbench.specs.MethodSpec` declares no
  supervision (``kmeans``, ``ap``, ``ncuts``, ``kmedoids``, ``scap``).
"""

from ._frame import (BUDGET, CONVENTIONS, DEFAULT_CONVENTION, DEFAULT_METRIC, KINDS, MEASURED_FAILURES, NOT_MEASURED,
                     TRIAL_KEYS, attempted_cells, cell_means, cell_table, completed, long_frame, main_methods,
                     unmeasured_cells)
from .effects import cell_scores, headline_effects, headlines_remembered
from .gains import (NO_UNCONSTRAINED_REFERENCE, best_baseline, bootstrap_ci, cost_table, gains, hurt_exclusions,
                    hurt_share, noise_effect, status_counts)
from .coverage import recorded_grids, sweep_coverage
from .pages import config_request, write_leaderboard
from .ranks import dataset_blocks, k_free_vs_given, kept_default, rank_table, ranks_by_condition, tuned_vs_default, unbeaten, win_tie_loss_cells
from .site import write_site

__all__ = [
    "KINDS", "BUDGET", "DEFAULT_METRIC", "long_frame", "cell_means", "completed", "attempted_cells",
    "rank_table", "win_tie_loss_cells", "unbeaten", "ranks_by_condition", "bootstrap_ci", "best_baseline",
    "noise_effect", "gains", "hurt_share", "status_counts", "cost_table", "config_request", "sweep_coverage", "recorded_grids",
    "write_leaderboard", "TRIAL_KEYS", "cell_table", "main_methods", "NO_UNCONSTRAINED_REFERENCE", "hurt_exclusions",
    "dataset_blocks", "kept_default", "tuned_vs_default", "k_free_vs_given", "write_site",
    "MEASURED_FAILURES", "NOT_MEASURED", "CONVENTIONS", "DEFAULT_CONVENTION", "unmeasured_cells", "headline_effects",
    "headlines_remembered",
    "cell_scores",
]
