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

Exit status 1 when a break survives (a test passed on it), when a break's text is no longer in
the source (STALE: the site was edited; update ``BREAKS``), or when the unbroken copy fails.
"""

from __future__ import annotations

import argparse
import dataclasses
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


@dataclasses.dataclass
class Break:
    site: str  # path:function
    kind: str  # "choice" or "passed on"
    edit: str  # what the break does, in words
    old: str  # exact text (must occur once in the file)
    new: str
    tests: list[str]

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

COPIED = ("ccbench", "plugins", "conf", "tests", "pyproject.toml")
#: import name -> directory of the copy (the editable install's mapping, mirrored)
PACKAGES = {"ccbench": "ccbench", "ccbench_plugins": "plugins", "ccbench_conf": "conf"}


def _copy_checkout(dest: Path, head: bool = False) -> dict:
    if head:  # the committed tree: safe while run.py has a mutant written into the checkout
        archive = subprocess.run(["git", "archive", "HEAD", *COPIED], cwd=ROOT, capture_output=True, check=True).stdout
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


def _check_imports_copy(copy: Path, env: dict) -> None:
    code = "import ccbench, ccbench_plugins; print(ccbench.__file__); print(ccbench_plugins.__file__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=copy, env=env, capture_output=True, text=True).stdout
    if not all(line.startswith(str(copy)) for line in out.split()):
        raise SystemExit(f"the copy is not what gets imported:\n{out}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=None, help="families (plugins/<family>/) to check")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--head", action="store_true",
                    help="copy the committed tree (git HEAD), not the working tree: use it while run.py runs")
    args = ap.parse_args(argv)
    breaks = [b for b in BREAKS if args.only is None or b.path.split("/")[1] in args.only]
    stale = []
    def source(path):
        if args.head:
            return subprocess.run(["git", "show", f"HEAD:{path}"], cwd=ROOT, capture_output=True, text=True,
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
        every = sorted({t for b in breaks for t in b.tests})
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
