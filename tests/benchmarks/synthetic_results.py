"""Synthetic sweep output for measuring ``ccbench report`` at scale (issue 40, item 6).

Writes ``n_jobs`` job directories, each with a ``results.parquet`` of ``rows_per_job`` trials,
through ccbench's own writer (:func:`ccbench.running.results.write_results`: the checksums, the
normalised column types) and with ccbench's own row layout: the cell's keys flattened as the
harness flattens them (:func:`ccbench.running.config.to_cell`, :func:`~ccbench.running.results.flatten`),
its ``config_hash``, the provenance and measurement columns of a real row, and metrics drawn at
random. Cells are the leaderboard's shape (data sets x methods x supervisions), with as many
synthetic data sets (``syn_0``, ``syn_1``, ...) as the size needs.

    python tests/benchmarks/synthetic_results.py OUT_DIR --jobs 100000 --rows-per-job 10 --processes 2

Why not real runs: a 100k-job sweep is days of fits; the report's cost depends on the number of
files and rows and their columns, not on how the numbers were obtained.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

METHODS = ("kmeans", "pck_means", "mpck_means", "cop_kmeans", "scssap", "ap", "spectral", "kmedoids",
           "rn_sdp", "cobs", "ssap_g", "nnc", "lcvqe", "mip", "cvqe", "scap", "c_dbscan", "ccsr", "dcsc",
           "tvclust", "sc_ml", "ck_means")
SUPERVISIONS = (("random_pairs", "none", 0.05), ("random_pairs", "none", 0.1), ("random_pairs", "none", 0.2),
                ("random_pairs", "constraint_flip", 0.1), ("fraction_pairs", "none", 0.05),
                ("fraction_pairs", "none", 0.1), ("fraction_pairs", "none", 0.2),
                ("labeled_classes", "none", 5), ("labeled_classes", "label_noise", 5), ("none", "none", 0))

# columns a real row has besides the cell and the metrics (values of a run on the 2-core machine)
_PROVENANCE = {
    "code.ccbench_version": "0.1.0", "code.git_commit": "8c3707a4704369ff863ae1143ebc20f46a6e30d5",
    "code.git_dirty": False, "code.plugin_dist": "ccbench", "code.plugin_version": "0.1.0",
    "code.method_hash": "1a781981cf89382f", "code.method_files": '{"ccbench_plugins.kmeans.kmeans": "d6122d5c0fa86a0f"}',
    "env.python": "3.11.7", "env.numpy": "2.4.6", "env.scipy": "1.17.1", "env.scikit-learn": "1.9.1",
    "env.numba": "0.68.1", "env.cvxpy": "1.9.3", "env.pandas": "3.1.1", "env.pyarrow": "26.0.1",
    "env.blas": "openblas 0.3.30 (SkylakeX)", "env.blas_threads": 1, "env.omp_num_threads": "1",
    "env.cpu": "Intel(R) Xeon(R) Processor", "env.n_cores": 2, "env.memory_gb": 23.5, "env.hostname": "vm",
    "env.platform": "Linux-6.18-x86_64-with-glibc2.36", "rerun_reason": None,
}


def job_cell(job: int) -> dict:
    """The ``job``-th cell of the grid: methods vary fastest, then supervisions, then data sets."""
    method = METHODS[job % len(METHODS)]
    scheme, noise, amount = SUPERVISIONS[(job // len(METHODS)) % len(SUPERVISIONS)]
    dataset = f"syn_{job // (len(METHODS) * len(SUPERVISIONS))}"
    constraints = {"name": scheme}
    if scheme in ("random_pairs", "fraction_pairs"):
        constraints["per_point" if scheme == "random_pairs" else "fraction"] = amount
    elif scheme == "labeled_classes":
        constraints["per_class"] = amount
    return {"dataset": {"name": dataset, "preprocess": "standardize"},
            "method": {"name": method, "n_clusters": "true_k"},
            "constraints": constraints,
            "noise": {"name": noise, "rate": 0.1 if noise != "none" else 0.0},
            "n_trials": 10, "metrics": ["ari", "nmi", "n_clusters_found", "constraint_violations"],
            "evaluate_on": "both", "share_unsupervised_fits": True, "trial_timeout": 10.0,
            "time_budget": 10.0, "timeout_stops_cell": True}


def job_rows(job: int, rows_per_job: int) -> "pd.DataFrame":  # noqa: F821
    import numpy as np
    import pandas as pd

    from ccbench.running.config import cell_hash, to_cell
    from ccbench.running.results import flatten

    cell = to_cell(job_cell(job))
    flat = {**flatten(cell), "config_hash": cell_hash(cell), **_PROVENANCE}
    rng = np.random.default_rng(job)
    n = rows_per_job
    status = np.where(rng.random(n) < 0.02, "error", np.where(rng.random(n) < 0.03, "timeout", "ok"))
    ok = status == "ok"
    frame = pd.DataFrame({
        **{k: [v] * n for k, v in flat.items()},
        "trial": np.arange(n), "trial_seed": rng.integers(0, 2**62, n), "n_samples": 150 + job % 900,
        "n_features": 4 + job % 60, "n_classes": 2 + job % 8, "status": status,
        "error": [None if s == "ok" else "ValueError: synthetic failure" for s in status],
        "constraints_hash": [f"{h:016x}" for h in rng.integers(0, 2**62, n)],
        "n_must_link": rng.integers(0, 100, n), "n_cannot_link": rng.integers(0, 100, n), "n_labeled": 0,
        "constraints_consistent": True, "method_seed": rng.integers(0, 2**31, n), "n_clusters_given": 3,
        "fit_time": rng.exponential(0.5, n), "fit_cpu_time": rng.exponential(0.5, n),
        "peak_rss_mb": 250 + rng.random(n) * 50, "fit_rss_mb": rng.random(n) * 10,
        "n_iter": rng.integers(1, 50, n), "converged": rng.random(n) < 0.95, "n_evaluated": 150,
        "ari": np.where(ok, rng.random(n), np.nan), "ari_unconstrained": np.where(ok, rng.random(n), np.nan),
        "nmi": np.where(ok, rng.random(n), np.nan), "n_clusters_found": np.where(ok, 3.0, np.nan),
        "constraint_violations": np.where(ok, rng.random(n) * 0.2, np.nan), "n_violated": rng.integers(0, 9, n),
        "constraint_kind": "pairs", "fit_reused": False,
        "timestamp": [f"2026-11-26T{(job // 3600) % 24:02d}:{(job // 60) % 60:02d}:{job % 60:02d}.{t:06d}+00:00"
                      for t in range(n)],
    })
    return frame


def job_dir(root: Path, job: int) -> Path:
    cell = job_cell(job)
    return root / (f"dataset={cell['dataset']['name']},method={cell['method']['name']},"
                   f"supervision={(job // len(METHODS)) % len(SUPERVISIONS)}")


def write_jobs(root, jobs, rows_per_job: int) -> int:
    """Write the given job numbers' results files under ``root``; returns how many."""
    from ccbench.running.results import RESULTS_FILE, write_results

    root = Path(root)
    count = 0
    for job in jobs:
        write_results(job_rows(job, rows_per_job), job_dir(root, job) / RESULTS_FILE)
        count += 1
    return count


def generate(root, n_jobs: int, rows_per_job: int = 10, processes: int = 1) -> Path:
    """``n_jobs`` job directories under ``root`` (``processes`` writers, each every n-th job)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    if processes <= 1:
        write_jobs(root, range(n_jobs), rows_per_job)
        return root
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(processes) as pool:
        list(pool.map(write_jobs, [root] * processes, [range(i, n_jobs, processes) for i in range(processes)],
                      [rows_per_job] * processes))
    return root


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="directory to write the job directories into")
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--rows-per-job", type=int, default=10)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    generate(args.out, args.jobs, args.rows_per_job, args.processes)
    print(f"wrote {args.jobs} job directories x {args.rows_per_job} rows under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
