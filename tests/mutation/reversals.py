"""Reversal check (issue 41, section 2): named, hand-written formula breaks that random
mutation sampling misses, each paired with the tests that must notice it.

Two classes of site:

- **choice**: an estimator runs several starts (``n_init``, restarts, a pool, a grid) and keeps
  the best by a score. Breaks: the comparison reversed (keeps the worst) and the first start
  kept regardless (``n_init`` not passed on, or the first index returned).
- **passed on**: a learned metric, kernel, propagated matrix or similarity is handed to the next
  step. Break: the next step silently receives the raw input instead.

Every break is applied to a *copy* of the checkout (a temporary directory, put on
``PYTHONPATH`` ahead of the editable install), never to the checkout itself, so an interrupted
run leaves nothing behind; the copy is deleted at the end. For each break the named tests run
against the broken copy and must FAIL; an unbroken copy is run first and must pass.

    python tests/mutation/reversals.py                 # every break
    python tests/mutation/reversals.py --only sdp nnc  # breaks whose file is under these families
    python tests/mutation/reversals.py --list          # print the breaks, run nothing
    python tests/mutation/reversals.py --out table.md  # also write the table
    python tests/mutation/reversals.py --head          # the committed tree (while run.py mutates the checkout)
    python tests/mutation/reversals.py --issue 54 --suite --head 0b600ae  # that commit's whole suite per break
    python tests/mutation/reversals.py --tag seed20261130   # the second round of issue 54 only

Exit status 1 when a break survives (a test passed on it), when a break's text is no longer in
the source (STALE: the site was edited; update ``BREAKS``), or when the unbroken copy fails.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

KM = "tests/test_kmeans_choices.py"
SDP = "tests/test_sdp_choices.py"
SPEC = "tests/test_spectral_choices.py"
NNC = "tests/test_nnc_passed_on.py"
NREV = "tests/test_nnc_reversals.py"
NPAR = "tests/test_nnc_params.py"
SPAR = "tests/test_spectral_params.py"
SPECTRAL_METHODS = ("ncuts", "spectral_learning", "srcp", "e2cp")


@dataclasses.dataclass
class Break:
    site: str  # path:function
    kind: str  # "choice" or "passed on"
    edit: str  # what the break does, in words
    old: str  # exact text (must occur once in the file)
    new: str
    tests: list[str]
    issue: int = 41  # the issue that named the break (``--issue`` selects them)
    tag: str = ""  # a round of an issue (``--tag`` selects them), e.g. "seed20261130"

    @property
    def path(self) -> str:
        return self.site.split(":")[0]


def _restarts(path, func, old, reversed_, first, tests):
    """The two breaks of a keep-the-best loop: comparison reversed, first start kept."""
    return [
        Break(f"{path}:{func}", "choice", "comparison reversed (keeps the worst)", old, reversed_, tests),
        Break(f"{path}:{func}", "choice", "first start kept", old, first, tests),
    ]


BREAKS: list[Break] = [
    # ------------------------------------------------------------------ choice among starts
    *_restarts("plugins/kmeans/pck_means.py", "PCKMeans.fit", "if best is None or obj < best[0]:",
               "if best is None or obj > best[0]:", "if best is None:",
               [f"{KM}::test_restarts_keep_the_best_start[pck_means]"]),
    *_restarts("plugins/kmeans/mpck_means.py", "MPCKMeans.fit", "if best is None or run[0] < best[0]:",
               "if best is None or run[0] > best[0]:", "if best is None:",
               [f"{KM}::test_restarts_keep_the_best_start[mpck_means]"]),
    *_restarts("plugins/kmeans/cop_kmeans.py", "COPKMeans.fit", "if best is None or inertia < best[0]:",
               "if best is None or inertia > best[0]:", "if best is None:",
               [f"{KM}::test_restarts_keep_the_best_start[cop_kmeans]"]),
    *_restarts("plugins/kmeans/constrained_em.py", "ConstrainedEM.fit",
               'if best is None or run["loglik"] > best["loglik"]:',
               'if best is None or run["loglik"] < best["loglik"]:', "if best is None:",
               [f"{KM}::test_restarts_keep_the_best_start[constrained_em]"]),
    Break("plugins/kmeans/kmeans.py:KMeansClusterer.fit", "choice", "n_init not passed on (first start kept)",
          "KMeans(self.n_clusters, n_init=self.n_init,", "KMeans(self.n_clusters, n_init=1,",
          [f"{KM}::test_kmeans_wrapper_passes_n_init_on"]),
    *_restarts("plugins/sdp/core.py", "run_kmedoids", "if best is None or cost < best[2]:",
               "if best is None or cost > best[2]:", "if best is None:",
               [f"{SDP}::test_run_kmedoids_keeps_the_lowest_cost_start",
                f"{SDP}::test_kmedoids_estimator_keeps_the_lowest_cost_start",
                f"{SDP}::test_rn_sdp_keeps_the_lowest_cost_start_on_its_kernel"]),
    Break("plugins/sdp/kmedoids.py:KMedoids.fit", "choice", "n_init not passed on (first start kept)",
          "method=self.method, n_init=self.n_init,", "method=self.method, n_init=1,",
          [f"{SDP}::test_kmedoids_estimator_keeps_the_lowest_cost_start"]),
    Break("plugins/sdp/rn_sdp.py:RNSDP.fit", "choice", "n_init not passed on (first start kept)",
          "n_init=self.n_init, max_iter=300", "n_init=1, max_iter=300",
          [f"{SDP}::test_rn_sdp_keeps_the_lowest_cost_start_on_its_kernel"]),
    Break("plugins/nnc/xing_kmeans.py:_MetricKMeans._delegate_params", "choice",
          "n_init not passed on to the k-means delegate (its own default instead)",
          "return dict(init=self.init, n_init=self.n_init, max_iter=self.max_iter)",
          "return dict(init=self.init, max_iter=self.max_iter)",
          [f"{NNC}::test_xing_baselines_hand_their_restarts_and_parameters_to_the_delegate[{n}]"
           for n in ("cop_kmeans_xing", "pck_means_xing")]),
    Break("plugins/spectral/core.py:spectral_clustering", "choice", "k-means n_init not passed on (first start kept)",
          "KMeans(n_clusters, n_init=n_init,", "KMeans(n_clusters, n_init=1,",
          [f"{SPEC}::test_spectral_kmeans_keeps_the_best_start[ncuts]",
           f"{SPEC}::test_spectral_kmeans_keeps_the_best_start[srcp]"]),
    Break("plugins/spectral/core.py:SpectralBase.fit", "choice", "n_init not passed on (first start kept)",
          "self.n_clusters, n_init=self.n_init, rng=rng", "self.n_clusters, n_init=1, rng=rng",
          [f"{SPEC}::test_spectral_kmeans_keeps_the_best_start[ncuts]",
           f"{SPEC}::test_spectral_kmeans_keeps_the_best_start[srcp]"]),
    Break("plugins/selection/cvcp.py:select", "choice", "comparison reversed (keeps the worst)",
          "best = means.max()\n    tied = [c for c in range(len(combos)) if means[c] >= best - _TIE]",
          "best = means.min()\n    tied = [c for c in range(len(combos)) if means[c] <= best + _TIE]",
          ["tests/test_selection_choices.py::test_cvcp_keeps_the_combination_with_the_best_mean_score"]),
    Break("plugins/selection/cvcp.py:select", "choice", "first combination kept",
          "chosen = next((c for c in tied if combos[c] == default), tied[0])", "chosen = 0",
          ["tests/test_selection_choices.py::test_cvcp_keeps_the_combination_with_the_best_mean_score"]),
    Break("plugins/cobs/core.py:select", "choice", "comparison reversed (keeps the worst)",
          "-scores))", "scores))",
          ["tests/test_cobs_choices.py::test_cobs_keeps_the_member_with_the_most_satisfied_constraints"]),
    Break("plugins/cobs/core.py:select", "choice", "first member kept",
          "return int(order[0])", "return 0",
          ["tests/test_cobs_choices.py::test_cobs_keeps_the_member_with_the_most_satisfied_constraints"]),
    Break("plugins/cobs/cobs.py:COBS.fit", "choice", "the first pool member's labels kept",
          'self.labels_ = winner["labels"]', 'self.labels_ = pool[0]["labels"]',
          ["tests/test_cobs_choices.py::test_cobs_keeps_the_member_with_the_most_satisfied_constraints"]),
    Break("ccbench/similarity.py:bisect_preference", "choice", "first preference giving k kept (not the plateau's end)",
          "        if exact is not None and high - low <= rtol * abs(exact):", "        if exact is not None:",
          ["tests/test_ap_n_clusters.py::test_the_search_keeps_the_highest_preference_of_the_plateau_not_the_first_hit",
           "tests/test_ap_n_clusters.py::test_ssap_l_given_k_with_labels_keeps_the_data_partition_not_the_forced_one"]),
    Break("ccbench/similarity.py:fit_for_n_clusters", "choice", "the first fit giving k kept, not the last",
          'if found == n_clusters or ("found" not in best or',
          'if (found == n_clusters and best.get("found") != n_clusters) or ("found" not in best or',
          ["tests/test_ap_n_clusters.py::test_ssap_l_given_k_with_labels_keeps_the_data_partition_not_the_forced_one"]),
    Break("ccbench/similarity.py:fit_for_n_clusters", "choice", "the first pass's closest fit kept (no second pass)",
          "        if not search.exact and any(unconverged):", "        if False:",
          ["tests/test_ap_n_clusters.py::test_a_fit_that_did_not_converge_does_not_steer_the_second_pass",
           "tests/test_ap_n_clusters.py::test_ap_finds_k_on_voting_where_its_first_pass_met_unconverged_fits"]),
    # ------------------------------------------------------------------ learned quantity passed on
    Break("plugins/nnc/core.py:fit_metric", "passed on", "raw X returned instead of the learned space",
          "Xt = learned.transform(X)", "Xt = X",
          [f"{NNC}::test_learned_metric_is_what_is_clustered[fpc-lp_diag]",
           f"{NNC}::test_learned_metric_is_what_is_clustered[nnc-xing_diag]",
           f"{NNC}::test_learned_metric_is_what_is_clustered[pck_means_xing-xing_diag]"]),
    Break("plugins/nnc/fpc.py:FarthestPointClustering.fit", "passed on", "grow_and_assign gets raw X",
          "grow_and_assign(\n            Xt,", "grow_and_assign(\n            X,",
          [f"{NNC}::test_learned_metric_is_what_is_clustered[fpc-{m}]" for m in ("lp_diag", "xing_diag", "sdp_full")]),
    Break("plugins/nnc/nnc.py:NearestNeighbourClustering.fit", "passed on", "grow_and_assign gets raw X",
          "grow_and_assign(\n            Xt, k,", "grow_and_assign(\n            X, k,",
          [f"{NNC}::test_learned_metric_is_what_is_clustered[nnc-{m}]" for m in ("lp_diag", "xing_diag", "sdp_full")]),
    Break("plugins/nnc/nnc.py:NearestNeighbourClustering.fit", "passed on", "enforce_cannot_links gets raw X",
          "enforce_cannot_links(\n            Xt, labels,", "enforce_cannot_links(\n            X, labels,",
          [f"{NNC}::test_nnc_places_cannot_linked_points_in_the_learned_metric[{m}]"
           for m in ("lp_diag", "xing_diag")]),
    Break("plugins/nnc/xing_kmeans.py:_MetricKMeans.fit", "passed on", "the k-means delegate gets raw X",
          "inner.fit(Xt, constraints=cons)", "inner.fit(X, constraints=cons)",
          [f"{NNC}::test_learned_metric_is_what_is_clustered[{n}-{m}]"
           for n in ("cop_kmeans_xing", "pck_means_xing") for m in ("xing_diag", "lp_diag")]),
    Break("plugins/nnc/xing_kmeans.py:PCKMeansXing._delegate_params", "passed on",
          "penalty not passed on to pck_means (its default instead)",
          'return {**super()._delegate_params(), "penalty": self.penalty}', "return super()._delegate_params()",
          [f"{NNC}::test_xing_baselines_hand_their_restarts_and_parameters_to_the_delegate[pck_means_xing]"]),
    Break("plugins/spectral/srcp.py:SRCP._affinity", "passed on", "W* replaced by the raw graph W (dense routes)",
          "self.propagated_constraints_ = F\n        return adjust_similarity(W, F)",
          "self.propagated_constraints_ = F\n        return W",
          [f"{SPEC}::test_propagated_similarities_are_what_is_clustered[srcp-{s}]"
           for s in ("eig", "spreading", "lyapunov")]),
    Break("plugins/spectral/srcp.py:SRCP._affinity", "passed on", "W* replaced by the raw graph W (low-rank route)",
          "return lowrank.adjust_similarity_lowrank(W, Z, C)", "return W",
          [f"{SPEC}::test_propagated_similarities_are_what_is_clustered[srcp-lowrank]"]),
    Break("plugins/spectral/e2cp.py:E2CP._affinity", "passed on", "W* replaced by the raw graph W (eig route)",
          "self.propagated_constraints_ = F\n        return adjust_similarity(W, F)",
          "self.propagated_constraints_ = F\n        return W",
          [f"{SPEC}::test_propagated_similarities_are_what_is_clustered[e2cp-eig]"]),
    Break("plugins/spectral/e2cp.py:E2CP._affinity", "passed on", "W* replaced by the raw graph W (low-rank route)",
          "return lowrank.adjust_similarity_lowrank(W, Z, C)", "return W",
          [f"{SPEC}::test_propagated_similarities_are_what_is_clustered[e2cp-lowrank]"]),
    Break("plugins/spectral/spectral_learning.py:SpectralLearning._affinity", "passed on",
          "the overwritten graph replaced by the raw graph W",
          "return (W - W.multiply(mask) + M).tocsr()", "return W",
          [f"{SPEC}::test_propagated_similarities_are_what_is_clustered[spectral_learning-None]"]),
    Break("plugins/spectral/core.py:SpectralBase.fit", "passed on", "spectral clustering gets the raw graph W, not A",
          "spectral_clustering(A, self.n_clusters", "spectral_clustering(W, self.n_clusters",
          [f"{SPEC}::test_propagated_similarities_are_what_is_clustered[{r}]"
           for r in ("srcp-eig", "e2cp-eig", "spectral_learning-None")]),
    Break("plugins/sdp/rn_sdp.py:RNSDP.fit", "passed on", "k-medoids gets the raw Gaussian similarity, not K",
          "dist = np.clip(2.0 - 2.0 * K, 0.0, None)",
          "dist = np.clip(2.0 - 2.0 * np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / self.sigma**2), 0.0, None)",
          [f"{SDP}::test_rn_sdp_clusters_the_learned_kernel_not_the_raw_similarity"]),
    Break("plugins/affinity/scssap.py:SCSSAPMetricLearning.fit", "passed on",
          "AP gets the raw (uniform-metric) similarity every outer iteration",
          "S = metric_similarity(X, point_metrics)", "S = metric_similarity(X, np.full((n, d), 1.0 / d))",
          [f"tests/test_scssap_passed_on.py::test_scssap_ml_clusters_with_its_learned_metrics[{m}]"
           for m in ("cluster", "single")]),
    Break("plugins/kmeans/mpck_means.py:MPCKMeans._single", "passed on",
          "the assignment step prices with the identity metric, not the learned A",
          "cost, ml_adj, cl_adj = assignment_terms(X, centres, A, far2,",
          "cost, ml_adj, cl_adj = assignment_terms(X, centres, np.ones_like(A), far2,",
          [f"{KM}::test_mpck_means_assigns_with_its_learned_metrics"]),
]

# Issue 54, item 20: the classes of the held-out breaks that survived in nnc and spectral, hunted
# across both families: (a) a choice reversed (repair step, search, accepted step), (b) a
# parameter or learned quantity not passed on, (c) a distance or sign swapped for its opposite.
_NNC_XING = ("cop_kmeans_xing", "pck_means_xing")
ISSUE54_BREAKS: list[Break] = [
    # ---- (a) choices: NNC's greedy cannot-link repair, farthest-point growth, accepted steps
    Break("plugins/nnc/core.py:enforce_cannot_links", "choice", "repair: farthest allowed cluster, not nearest",
          "labels[p] = int(np.argmin(np.where(allowed, dist[t], np.inf)))",
          "labels[p] = int(np.argmax(np.where(allowed, dist[t], -np.inf)))",
          [f"{NREV}::test_a_cannot_linked_point_moves_to_its_nearest_allowed_cluster"], 54),
    Break("plugins/nnc/core.py:enforce_cannot_links", "choice", "repair: least confident point placed first",
          "order = np.lexsort((touched, dist.min(axis=1)))", "order = np.lexsort((touched, dist.min(axis=1)))[::-1]",
          [f"{NREV}::test_the_repair_places_the_most_confident_point_first"], 54),
    Break("plugins/nnc/core.py:enforce_cannot_links", "choice", "repair: points placed in index order",
          "order = np.lexsort((touched, dist.min(axis=1)))", "order = np.arange(len(touched))",
          [f"{NREV}::test_the_repair_places_the_most_confident_point_first"], 54),
    Break("plugins/nnc/core.py:enforce_cannot_links", "choice", "repair: a stranded point joins its farthest cluster",
          "labels[p] = int(np.argmin(dist[t]))", "labels[p] = int(np.argmax(dist[t]))",
          [f"{NREV}::test_a_stranded_point_joins_its_nearest_cluster_counted_and_warned"], 54),
    Break("plugins/nnc/core.py:enforce_cannot_links", "choice", "repair: a stranded point is not counted",
          "n_stuck += 1", "n_stuck += 0",
          [f"{NREV}::test_a_stranded_point_joins_its_nearest_cluster_counted_and_warned",
           f"{NREV}::test_the_stuck_count_is_zero_exactly_when_every_cannot_link_holds[0-12]"], 54),
    Break("plugins/nnc/nnc.py:NearestNeighbourClustering.fit", "choice",
          "the stranded-point warning's condition reversed (warns '0 point(s)', silent when stranded)",
          "if n_stuck:", "if not n_stuck:",
          [f"{NREV}::test_a_stranded_point_joins_its_nearest_cluster_counted_and_warned",
           f"{NREV}::test_a_cannot_linked_point_moves_to_its_nearest_allowed_cluster",
           f"{NREV}::test_a_fit_whose_cannot_links_all_hold_warns_nothing_about_placement"], 54),
    Break("plugins/nnc/core.py:grow_and_assign", "choice", "the next centre is the nearest point left, not the farthest",
          "        nxt = int(np.argmax(mind))\n    return labels",
          "        nxt = int(np.argmin(np.where(mind > 0, mind, np.inf)))\n    return labels",
          ["tests/test_nnc.py::test_fpc_matches_direct_farthest_point_loop"], 54),
    Break("plugins/nnc/metric_learning.py:_xing_newton", "choice", "line search keeps the rejected (higher g) step",
          "            if gc >= best_g:\n                break",
          "            if gc >= best_g:\n                best_a = cand\n                break",
          [f"{NREV}::test_xing_newton_keeps_only_steps_that_lower_g"], 54),
    Break("plugins/nnc/metric_learning.py:_xing_bounded", "choice", "the first L-BFGS-B point kept though its gap rejects it",
          "        if gap <= XING_GAP_TOL:\n            break", "        if True:\n            break",
          ["tests/test_nnc_audit.py::test_xing_leaves_no_cannot_link_pair_at_distance_zero"], 54),
    Break("plugins/nnc/metric_learning.py:_min_norm_on_face", "choice", "a tie-break point that violates rows is kept",
          "        if len(violated) == 0:\n            return wv", "        return wv",
          [f"{NREV}::test_the_lp_tie_break_stays_on_the_optimal_face"], 54),
    Break("plugins/nnc/metric_learning.py:lp_diag_program", "choice", "the split minimised, not maximised",
          "    c[-1] = -1.0\n    A_cl = np.hstack([-dcl,", "    c[-1] = 1.0\n    A_cl = np.hstack([-dcl,",
          ["tests/test_nnc.py::test_lp_diag_satisfies_its_constraints_and_matches_cvxpy"], 54),
    Break("plugins/nnc/metric_learning.py:learn_sdp_full", "choice", "the split minimised, not maximised",
          "prob = cp.Problem(cp.Maximize(s), cons)", "prob = cp.Problem(cp.Minimize(s), cons)",
          ["tests/test_nnc.py::test_sdp_full_is_feasible_and_at_least_the_diagonal_split"], 54),
    # ---- (b) NNC parameters and learned quantities passed on
    Break("plugins/nnc/core.py:fit_metric", "passed on", "the metric parameter not passed on (always lp_diag)",
          "learn_metric(X, cons.must_link, cons.cannot_link, estimator.metric)",
          'learn_metric(X, cons.must_link, cons.cannot_link, "lp_diag")',
          [f"{NPAR}::test_changing_a_parameter_changes_the_fit[{m}-metric]" for m in ("fpc", "nnc", *_NNC_XING)], 54),
    Break("plugins/nnc/nnc.py:NearestNeighbourClustering.fit", "passed on", "random_state not passed on",
          "Xt, k, members=members, starts=starts, rng=check_random_state(self.random_state)",
          "Xt, k, members=members, starts=starts, rng=check_random_state(0)",
          [f"{NPAR}::test_changing_a_parameter_changes_the_fit[nnc-random_state]"], 54),
    Break("plugins/nnc/fpc.py:FarthestPointClustering.fit", "passed on", "random_state not passed on",
          "starts=empty, rng=check_random_state(self.random_state)", "starts=empty, rng=check_random_state(0)",
          [f"{NPAR}::test_changing_a_parameter_changes_the_fit[fpc-random_state]"], 54),
    Break("plugins/nnc/xing_kmeans.py:_MetricKMeans._delegate_params", "passed on", "init and max_iter not passed on",
          "return dict(init=self.init, n_init=self.n_init, max_iter=self.max_iter)",
          "return dict(n_init=self.n_init)",
          [f"{NPAR}::test_changing_a_parameter_changes_the_fit[{m}-{p}]" for m in _NNC_XING for p in ("init", "max_iter")],
          54),
    Break("plugins/nnc/xing_kmeans.py:_MetricKMeans.fit", "passed on", "random_state not passed on to the delegate",
          "n_clusters=self.n_clusters, random_state=seed,", "n_clusters=self.n_clusters, random_state=0,",
          [f"{NPAR}::test_changing_a_parameter_changes_the_fit[{m}-random_state]" for m in _NNC_XING], 54),
    # ---- (c) NNC distances and signs
    Break("plugins/nnc/core.py:enforce_cannot_links", "sign/distance", "repair ranks subsets by dMin, not dMax",
          '"sqeuclidean").max(axis=1) for a, b in zip(starts, ends)]', '"sqeuclidean").min(axis=1) for a, b in zip(starts, ends)]',
          [f"{NREV}::test_the_repair_ranks_clusters_by_dmax_not_dmin"], 54),
    Break("plugins/nnc/_kernels.py:dmax_assign", "sign/distance", "distance to a subset's first member, not dMax",
          "                if s > m:\n                    m = s", "                if s > m and m < 0:\n                    m = s",
          ["tests/test_nnc.py::test_nnc_matches_direct_dmax_assignment"], 54),
    Break("plugins/nnc/core.py:fit_metric", "sign/distance", "must-links and cannot-links swapped in metric learning",
          "learn_metric(X, cons.must_link, cons.cannot_link, estimator.metric)",
          "learn_metric(X, cons.cannot_link, cons.must_link, estimator.metric)",
          [f"{NNC}::test_learned_metric_is_what_is_clustered[nnc-lp_diag]",
           f"{NNC}::test_learned_metric_is_what_is_clustered[fpc-xing_diag]"], 54),
    Break("plugins/nnc/metric_learning.py:LearnedMetric.transform", "sign/distance", "X scaled by z, not sqrt(z)",
          "return X * np.sqrt(self.weights)", "return X * self.weights",
          ["tests/test_nnc.py::test_diag_transform_gives_the_learned_distance"], 54),
    # ---- (a) spectral choices
    Break("plugins/spectral/core.py:spectral_clustering", "choice", "dense route: the k smallest eigenvectors, not the leading",
          "subset_by_index=[n - n_clusters, n - 1]", "subset_by_index=[0, n_clusters - 1]",
          ["tests/test_spectral_guards.py::test_embedding_is_row_normalised_leading_eigenvectors_of_D_half_W_D_half"], 54),
    Break("plugins/spectral/lowrank.py:leading_eigenvectors", "choice", "LOBPCG's k smallest Ritz vectors kept",
          "order = np.argsort(lam)[::-1][:k]", "order = np.argsort(lam)[:k]",
          [f"tests/test_spectral_lowrank.py::test_lobpcg_embedding_equals_the_dense_one_even_with_repeated_eigenvalue_1[{k}]"
           for k in ("dense", "sparse")], 54),
    Break("plugins/spectral/lowrank.py:leading_eigenvectors", "choice", "LOBPCG asked for the smallest eigenpairs",
          "lam, V, res = lobpcg(M, X0, largest=True,", "lam, V, res = lobpcg(M, X0, largest=False,",
          [f"tests/test_spectral_lowrank.py::test_lobpcg_embedding_equals_the_dense_one_even_with_repeated_eigenvalue_1[{k}]"
           for k in ("dense", "sparse")], 54),
    # ---- (b) spectral parameters passed on
    Break("plugins/spectral/core.py:SpectralBase._graph", "passed on", "n_neighbors not passed on (20)",
          "k = min(self.n_neighbors, X.shape[0] - 1)", "k = min(20, X.shape[0] - 1)",
          [f"{SPAR}::test_changing_a_parameter_changes_the_fit[{m}-n_neighbors]" for m in SPECTRAL_METHODS], 54),
    Break("plugins/spectral/core.py:SpectralBase._graph", "passed on", "sigma not passed on (1.0)",
          "gaussian_knn_graph(X, k, sigma=self.sigma,", "gaussian_knn_graph(X, k, sigma=1.0,",
          [f"{SPAR}::test_changing_a_parameter_changes_the_fit[{m}-sigma]" for m in SPECTRAL_METHODS], 54),
    Break("plugins/spectral/core.py:SpectralBase._graph", "passed on", "symmetrize not passed on (mean)",
          "symmetrize=self.symmetrize)", 'symmetrize="mean")',
          [f"{SPAR}::test_changing_a_parameter_changes_the_fit[{m}-symmetrize]" for m in SPECTRAL_METHODS], 54),
    Break("plugins/spectral/core.py:SpectralBase.fit", "passed on", "random_state not passed on",
          "rng = check_random_state(self.random_state)", "rng = check_random_state(0)",
          [f"{SPAR}::test_changing_a_parameter_changes_the_fit[{m}-random_state]" for m in SPECTRAL_METHODS], 54),
    Break("plugins/spectral/srcp.py:SRCP._affinity", "passed on", "mu not passed on (0.2)",
          "mu = float(self.mu)", "mu = 0.2",
          [f"{SPAR}::test_changing_a_parameter_changes_the_fit[srcp-mu]"], 54),
    Break("plugins/spectral/srcp.py:SRCP._affinity", "passed on", "solver not passed on (auto)",
          "core.propagation_route(self.solver, Y, W.shape[0], max_share=1 / 16)",
          'core.propagation_route("auto", Y, W.shape[0], max_share=1 / 16)',
          [f"{SPAR}::test_changing_a_parameter_changes_the_fit[srcp-solver]"], 54),
    Break("plugins/spectral/srcp.py:SRCP._affinity", "passed on", "tol and max_iter not passed on to the spreading",
          "tol=float(self.tol), max_iter=int(self.max_iter)", "tol=1e-10, max_iter=1000",
          [f"{SPAR}::test_changing_a_parameter_changes_the_fit[srcp-{p}]" for p in ("tol", "max_iter")], 54),
    Break("plugins/spectral/e2cp.py:E2CP._affinity", "passed on", "alpha not passed on (0.8, eig route)",
          "F = propagate_e2cp(lam, U, Y, alpha=float(self.alpha))", "F = propagate_e2cp(lam, U, Y, alpha=0.8)",
          [f"{SPAR}::test_changing_a_parameter_changes_the_fit[e2cp-alpha]"], 54),
    Break("plugins/spectral/e2cp.py:E2CP._affinity", "passed on", "solver not passed on (auto)",
          "core.propagation_route(self.solver, Y, W.shape[0], max_share=1 / 4)",
          'core.propagation_route("auto", Y, W.shape[0], max_share=1 / 4)',
          [f"{SPAR}::test_changing_a_parameter_changes_the_fit[e2cp-solver]"], 54),
    # ---- (c) spectral distances and signs
    Break("plugins/spectral/core.py:gaussian_knn_graph", "sign/distance", "far neighbours weigh more (1 - Gaussian)",
          "weights = np.exp(-(dist**2) / (2.0 * sigma**2))", "weights = 1.0 - np.exp(-(dist**2) / (2.0 * sigma**2))",
          [f"tests/test_spectral_guards.py::test_default_fit_uses_the_papers_graph[{m}]" for m in ("srcp", "ncuts")], 54),
    Break("plugins/spectral/core.py:constraint_matrix", "sign/distance", "must-links -1, cannot-links +1 in Y",
          "v = np.concatenate([ml_c, ml_c, -cl_c, -cl_c])", "v = np.concatenate([-ml_c, -ml_c, cl_c, cl_c])",
          ["tests/test_spectral.py::test_constraint_matrix_is_eq_2"], 54),
    Break("plugins/spectral/core.py:adjust_similarity", "sign/distance", "eq. 9's two branches swapped",
          "factor = np.where(Fc >= 0, 1.0 - Wd, Wd)", "factor = np.where(Fc >= 0, Wd, 1.0 - Wd)",
          ["tests/test_spectral.py::test_adjust_similarity_eq9_by_hand_and_in_unit_interval"], 54),
    Break("plugins/spectral/lowrank.py:adjust_similarity_lowrank", "sign/distance", "eq. 9's two branches swapped (graph entries)",
          "value = wb + f * np.where(f >= 0, 1.0 - wb, wb)", "value = wb + f * np.where(f >= 0, wb, 1.0 - wb)",
          ["tests/test_spectral_lowrank.py::test_lowrank_adjusted_similarity_is_eq9"], 54),
    Break("plugins/spectral/spectral_learning.py:SpectralLearning._affinity", "sign/distance",
          "the cannot-links set to 1 and the must-links to 0", "ml = constraints.must_link", "ml = constraints.cannot_link",
          ["tests/test_spectral.py::test_spectral_learning_sets_constrained_entries"], 54),
]
BREAKS += ISSUE54_BREAKS

# Issue 54, item 20, second round (mutation seed 20261130): the two classes sampling misses, hunted
# again across nnc and spectral at sites no break above covers: (a) a choice among candidates
# reversed or reduced to the first/last candidate, (b) a learned quantity or its status dropped
# before the next step or the fitted attribute.
NMUT, SMUT = "tests/test_nnc_mutants.py", "tests/test_spectral_mutants.py"
_R2 = "seed20261130"
ISSUE54_ROUND2: list[Break] = [
    # ---- (a) choices
    Break("plugins/nnc/_kernels.py:dmax_assign", "choice", "a point joins the subset of LARGEST dMax (the worst group)",
          "            if m < bi:\n                bi = m\n                ai = g",
          "            if g == 0 or m > bi:\n                bi = m\n                ai = g",
          ["tests/test_nnc.py::test_nnc_matches_direct_dmax_assignment"], 54, _R2),
    Break("plugins/nnc/metric_learning.py:learn_lp_diag", "choice",
          "the LP vertex kept, not the least-norm optimum (the tie-break's answer dropped)",
          "    w = _min_norm_on_face(Dc, float(res.x[-1]), res.x[:-1], dml=Dm)", "    w = res.x[:-1]",
          ["tests/test_nnc_audit.py::test_lp_tie_break_is_the_least_norm_optimum_of_an_independent_qp",
           "tests/test_nnc_audit.py::test_lp_tie_break_splits_interchangeable_features_evenly"], 54, _R2),
    Break("plugins/nnc/metric_learning.py:_xing_newton", "choice",
          "Newton's line search result not taken (the start a = 1 kept every iteration)",
          "        a = best_a\n", "        a = a\n",
          [f"{NREV}::test_xing_newton_keeps_only_steps_that_lower_g",
           f"{NMUT}::test_xing_newton_gives_a_feature_varied_only_inside_must_links_zero_weight"], 54, _R2),
    Break("plugins/spectral/lowrank.py:zolotarev_shifts", "choice",
          "the last candidate set kept (63 shifts), not the smallest J that meets tol",
          "        if rho**2 <= tol:\n            return q", "        if False:\n            return q",
          [f"{SMUT}::test_zolotarev_shifts_known_answers"], 54, _R2),
    Break("plugins/spectral/core.py:propagation_route", "choice",
          "auto's route reversed (the dense eigenbasis for large n, the low-rank one for small)",
          'return "lowrank" if large and n_constrained <= max_share * n_samples else "eig"',
          'return "eig" if large and n_constrained <= max_share * n_samples else "lowrank"',
          ["tests/test_spectral_lowrank.py::test_auto_propagates_low_rank_from_lowrank_min_n_but_embeds_densely_up_to_dense_max_n"],
          54, _R2),
    # ---- (b) a learned quantity (or its status) not passed on
    Break("plugins/nnc/metric_learning.py:_xing_bounded", "passed on",
          "L-BFGS-B's point not passed on (every restart starts again from the uniform b)",
          "            b = np.clip(res.x, 0.0, None)", "            b = b",
          [f"{NMUT}::test_xing_bounded_starts_from_the_uniform_point_on_gs_optimal_scale",
           "tests/test_nnc_audit.py::test_xing_bounded_program_reaches_the_optimum_on_badly_scaled_features[7]"],
          54, _R2),
    Break("plugins/nnc/metric_learning.py:learn_xing_diag", "passed on", "eq. 13's scaling of a dropped",
          "    a = a / h**2  # eq. 13", "    a = a  # eq. 13",
          ["tests/test_nnc_audit.py::test_xing_bounded_program_reaches_the_optimum_on_badly_scaled_features[7]",
           f"{NMUT}::test_xing_newton_gives_a_feature_varied_only_inside_must_links_zero_weight"], 54, _R2),
    Break("plugins/nnc/metric_learning.py:learn_metric", "passed on", "the solver's convergence not passed on (True)",
          "return LearnedMetric(kind, w, status, split, dropped, converged)",
          "return LearnedMetric(kind, w, status, split, dropped)",
          ["tests/test_nnc_audit.py::test_xing_gap_certifies_and_a_short_solve_says_so",
           f"{NMUT}::test_xing_not_converged_warning_states_the_objectives_factor_from_the_gap"], 54, _R2),
    Break("plugins/nnc/metric_learning.py:learn_metric", "passed on", "the dropped-pair count not passed on (0)",
          "return LearnedMetric(kind, w, status, split, dropped, converged)",
          "return LearnedMetric(kind, w, status, split, 0, converged)",
          ["tests/test_nnc.py::test_identical_cannot_link_points_are_dropped_and_no_pairs_is_an_error",
           "tests/test_nnc_audit.py::test_dropped_cannot_links_are_counted"], 54, _R2),
    Break("plugins/nnc/core.py:fit_metric", "passed on", "the metric's convergence not passed on to converged_ (True)",
          "estimator.converged_ = bool(learned.converged)", "estimator.converged_ = True",
          ["tests/test_nnc_audit.py::test_xing_gap_certifies_and_a_short_solve_says_so"], 54, _R2),
    Break("plugins/nnc/xing_kmeans.py:_MetricKMeans.fit", "passed on",
          "the metric's convergence dropped from the baseline's converged_ (the delegate's only)",
          "self.converged_ = bool(self.converged_ and inner.converged_)", "self.converged_ = bool(inner.converged_)",
          ["tests/test_nnc_audit.py::test_xing_gap_certifies_and_a_short_solve_says_so"], 54, _R2),
    Break("plugins/spectral/core.py:spectral_clustering", "passed on", "the k-means seed drawn from rng not passed on (0)",
          "km = KMeans(n_clusters, n_init=n_init, random_state=seed)", "km = KMeans(n_clusters, n_init=n_init, random_state=0)",
          [f"{SPAR}::test_changing_a_parameter_changes_the_fit[{m}-random_state]" for m in SPECTRAL_METHODS], 54, _R2),
    Break("plugins/spectral/core.py:spectral_clustering", "passed on", "the rows' unit scaling dropped before k-means",
          "    V = V / norms\n", "    V = V\n",
          ["tests/test_spectral_guards.py::test_embedding_is_row_normalised_leading_eigenvectors_of_D_half_W_D_half"],
          54, _R2),
    Break("plugins/spectral/srcp.py:SRCP._affinity", "passed on", "the low-rank factors of F not kept (propagated_factors_ None)",
          "            self.propagated_factors_ = (Z, C)", "            self.propagated_factors_ = None",
          ["tests/test_spectral_lowrank.py::test_lowrank_solver_gives_the_eig_solvers_clustering[srcp]"], 54, _R2),
    Break("plugins/spectral/e2cp.py:E2CP._affinity", "passed on", "the low-rank factors of F not kept (propagated_factors_ None)",
          "            self.propagated_factors_ = (Z, C)", "            self.propagated_factors_ = None",
          ["tests/test_spectral_lowrank.py::test_lowrank_solver_gives_the_eig_solvers_clustering[e2cp]"], 54, _R2),
]
BREAKS += ISSUE54_ROUND2

#: Issue 53: the CPU a peer library spends in its worker process reaches the anytime rows' costs.
BREAKS += [
    Break("plugins/active/anytime.py:_worker_seconds", "passed on",
          "the CPU a fit spent in a worker process (peer_fit_seconds_) not passed on to the curve's costs",
          'return float(getattr(estimator, "peer_fit_seconds_", 0.0) or 0.0)', "return 0.0",
          ["tests/test_active_anytime.py::test_the_cpu_a_fit_spent_in_a_worker_is_charged",
           "tests/test_active_anytime.py::test_the_cpu_a_self_asking_method_spent_in_a_worker_is_charged"], 53),
    Break("ccbench/running/active_cells.py:_curve_row", "passed on",
          "the curve's worker seconds left out of curve_cpu_time",
          'out["curve_cpu_time"] = _cpu() - start + float(curve["worker_seconds"].sum())',
          'out["curve_cpu_time"] = _cpu() - start',
          ["tests/test_active_cells.py::test_the_curves_cpu_counts_what_its_fits_spent_in_a_worker"], 53),
]

COPIED = ("ccbench", "plugins", "conf", "tests", "pyproject.toml")
#: import name -> directory of the copy (the editable install's mapping, mirrored)
PACKAGES = {"ccbench": "ccbench", "ccbench_plugins": "plugins", "ccbench_conf": "conf"}


def _copy_checkout(dest: Path, head: str | None = None) -> dict:
    if head:  # a committed tree: safe while run.py has a mutant written into the checkout
        archive = subprocess.run(["git", "archive", head, *COPIED], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    else:
        ignore = shutil.ignore_patterns("__pycache__", ".state", "results", "*.pyc")
        for name in COPIED:
            src = ROOT / name
            if src.is_dir():
                shutil.copytree(src, dest / name, ignore=ignore, symlinks=True)
            elif src.exists():
                shutil.copy2(src, dest / name)
    shim = dest / "_shim"
    shim.mkdir()
    for mod, folder in PACKAGES.items():
        (shim / mod).symlink_to(dest / folder, target_is_directory=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(shim), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("CCBENCH_DATA_DIR", "/work/shared/datasets")
    env.update(COLUMNS="400", MPLBACKEND="Agg", PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def _run_tests(copy: Path, env: dict, tests: list[str], timeout: float) -> dict[str, tuple[str, str]]:
    """{test id: ("passed" | "FAILED" | "ERROR", why)}; ``why`` is pytest's one-line reason
    (an ``ERROR`` or an exception other than ``AssertionError`` means the break crashed the
    code rather than changed its answer: worth a look)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-rA", "--tb=line", "-p", "no:cacheprovider", "-W", "ignore", *tests]
    try:
        out = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout).stdout
    except subprocess.TimeoutExpired:
        return {t: ("ERROR", f"timeout after {timeout:.0f} s") for t in tests}  # pragma: no cover
    res = {}
    for t in tests:
        m = re.search(rf"^(PASSED|FAILED|ERROR) {re.escape(t)}(?: - (.*))?$", out, re.M)
        if m is None:
            res[t] = ("ERROR", "no result (collection error?)")
        else:
            res[t] = ("passed" if m.group(1) == "PASSED" else m.group(1), (m.group(2) or "").strip()[:90])
    return res


def _family_tests(copy: Path, family: str) -> list[str]:
    """The test files ``run.py`` runs for ``family`` (its globs), found in the copy."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_mutation_run", ROOT / "tests" / "mutation" / "run.py")
    run = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = run  # its dataclasses look their module up
    spec.loader.exec_module(run)
    fam = run.FAMILIES[family]
    return sorted({os.path.relpath(f, copy) for pattern in fam.tests for f in glob.glob(str(copy / pattern))})


def _run_suite(copy: Path, env: dict, files: list[str], timeout: float) -> tuple[str, str]:
    """("FAILED", first failing test) or ("passed", "") for the family's whole suite (``-x``)."""
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-W", "ignore", *files]
    try:
        proc = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "FAILED", f"timeout after {timeout:.0f} s"
    if proc.returncode == 0:
        return "passed", ""
    first = next((line for line in proc.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))), "")
    return "FAILED", first[:120]


def _check_imports_copy(copy: Path, env: dict) -> None:
    code = "import ccbench, ccbench_plugins; print(ccbench.__file__); print(ccbench_plugins.__file__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=copy, env=env, capture_output=True, text=True).stdout
    if not all(line.startswith(str(copy)) for line in out.split()):
        raise SystemExit(f"the copy is not what gets imported:\n{out}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=None, help="families (plugins/<family>/) to check")
    ap.add_argument("--issue", type=int, default=None, help="only the breaks this issue named (41, 54)")
    ap.add_argument("--tag", default=None, help="only the breaks of this round (e.g. seed20261130)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--suite", action="store_true",
                    help="run each break against its family's whole suite (run.py's test globs), not its named "
                         "tests: does anything in the suite notice it? (with --head: the committed suite)")
    ap.add_argument("--head", nargs="?", const="HEAD", default=None, metavar="REV",
                    help="copy the committed tree (git HEAD, or REV), not the working tree: use it while run.py "
                         "runs; with --suite and an older REV, which breaks that commit's suite noticed")
    args = ap.parse_args(argv)
    breaks = [b for b in BREAKS if (args.only is None or b.path.split("/")[1] in args.only)
              and (args.issue is None or b.issue == args.issue) and (args.tag is None or b.tag == args.tag)]
    stale = []
    def source(path):
        if args.head:
            return subprocess.run(["git", "show", f"{args.head}:{path}"], cwd=ROOT, capture_output=True, text=True,
                                  check=True).stdout
        return (ROOT / path).read_text()

    for b in breaks:
        n = source(b.path).count(b.old)
        if n != 1:  # the site was edited since the break was written: say so, check the others
            stale.append(b)
            print(f"STALE  {b.site} [{b.edit}]: the text to break occurs {n} times, not once; update BREAKS:\n"
                  f"       {b.old!r}")
    breaks = [b for b in breaks if b not in stale]
    if args.list:
        for b in breaks:
            print(f"{b.site} [{b.kind}] {b.edit}: {len(b.tests)} test(s)")
        return 0
    rows, survived = [], 0
    with tempfile.TemporaryDirectory(prefix="ccbench-reversals-") as tmp:
        copy = Path(tmp)
        env = _copy_checkout(copy, head=args.head)
        _check_imports_copy(copy, env)
        if args.suite:  # every break against its family's whole suite
            suites = {b.path.split("/")[1] for b in breaks}
            files = {fam: _family_tests(copy, fam) for fam in suites}
            breaks = [dataclasses.replace(b, tests=["suite"]) for b in breaks]
        every = sorted({t for b in breaks for t in b.tests})
        if args.suite:
            clean = {f"suite {fam}": _run_suite(copy, env, files[fam], args.timeout) for fam in sorted(suites)}
        else:
            clean = _run_tests(copy, env, every, args.timeout)
        bad = [f"{t}: {r} {why}" for t, (r, why) in clean.items() if r != "passed"]
        if bad:
            print("the unbroken copy fails:", *bad, sep="\n  ")
            return 1
        print(f"unbroken copy: {len(every)} tests pass", flush=True)
        for b in breaks:
            target = copy / b.path
            original = target.read_text()
            tic = time.perf_counter()
            try:
                target.write_text(original.replace(b.old, b.new))
                if args.suite:
                    res = {"suite": _run_suite(copy, env, files[b.path.split("/")[1]], args.timeout)}
                else:
                    res = _run_tests(copy, env, b.tests, args.timeout)
            finally:
                target.write_text(original)
            for t, (r, why) in res.items():
                survived += r == "passed"
                rows.append((b, t, r, why))
                print(f"{r:6s} {b.site} [{b.edit}] {t.split('::')[-1]} ({time.perf_counter() - tic:.0f}s) {why}",
                      flush=True)
    lines = ["| site | class | break | test | result | reason |", "| --- | --- | --- | --- | --- | --- |"]
    for b, t, r, why in rows:
        why = why.replace("|", "\\|")
        lines.append(f"| `{b.site}` | {b.kind} | {b.edit} | `{t.split('/')[-1]}` | {r} | {why} |")
    table = "\n".join(lines)
    print()
    print(table)
    asserted = ("assert", "AssertionError", "Failed")
    crashed = sum(r == "ERROR" or (r == "FAILED" and not why.startswith(asserted)) for _, _, r, why in rows)
    print(f"\n{len(rows) - survived} of {len(rows)} (break, test) pairs failed as they must ({crashed} by an "
          f"error other than a failed assertion); {survived} passed")
    if stale:
        print(f"{len(stale)} break(s) not applied: their text is gone from the source (STALE above)")
    if args.out:
        args.out.write_text(table + "\n")
    return 1 if survived or stale else 0


if __name__ == "__main__":
    sys.exit(main())
