"""Checks behind the differences between ``reports/srcp_fig3_digits`` and the SRCP paper's Figs. 3-4
(Fu et al. 2011), on the sweep's own trials (constraints re-drawn from each job's ``cell.json``).

    python tests/scripts/srcp_digits_checks.py RUN_DIR [--x 2400] [--trials 5] [--mu 0.2]
    python tests/scripts/srcp_digits_checks.py RUN_DIR --fig4 1,2,3

RUN_DIR is the sweep of ``experiment=srcp_fig3_digits``. For each of the first ``--trials`` trials at
``constraints.n_constraints = --x`` it prints:

1. spectral learning as Kamvar, Klein & Manning (2003) define it (additive normalisation
   N = (A + d_max I - D) / d_max, the k largest eigenvectors of N, rows normalised, k-means) beside
   ours (``spectral_learning``: the family's normalised spectral clustering of the same A): does
   our SL do better than the paper's because of that choice?
2. SRCP's propagated F: its largest |F|, its mean on must-linked and cannot-linked pairs, and the
   share of same-class / different-class unconstrained pairs whose sign F gets right, and how much
   W* moves from W (mean |W* - W| over W's edges) against SL's overwrite of the constrained entries:
   how strongly does SRCP's propagation act on this graph? And two ablations of SRCP's F, each
   through the same eq. (9) and spectral clustering: F kept only on the constrained pairs
   ("pairs only") and F with the constrained pairs zeroed ("propagation only").

With ``--fig4 T,...`` it prints instead Fig. 4's block scores (block AUC, within / between) of each
method for trials T at ``--x``, through the report's own route
(:func:`ccbench.reporting.paper_figures.figure_panels`): is trial 0's ordering of the panels typical?
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import eigsh
from sklearn.cluster import KMeans

from ccbench import registry
from ccbench.datasets import load_dataset
from ccbench.metrics import adjusted_rand
from ccbench.running import protocol
from ccbench.base import check_random_state
from ccbench_plugins.spectral.core import adjust_similarity, gaussian_knn_graph, spectral_clustering


def _cell(run_dir: Path, method: str, x: int) -> dict:
    for path in sorted(run_dir.glob(f"*method={method}*/cell.json")):
        cell = json.loads(path.read_text())
        if int(cell["constraints"]["n_constraints"]) == x:
            return cell
    raise SystemExit(f"no {method} job at n_constraints={x} under {run_dir}")


def kamvar_sl(A, k: int, rng: int) -> np.ndarray:
    """Kamvar et al.'s spectral learning step on the constrained affinity ``A``."""
    A = sparse.csr_matrix(A)
    d = np.asarray(A.sum(axis=1)).ravel()
    d_max = d.max()
    N = (A + sparse.diags(d_max - d)) / d_max
    _, V = eigsh(N, k=k, which="LA")
    V /= np.linalg.norm(V, axis=1, keepdims=True).clip(1e-12)
    return KMeans(k, n_init=10, random_state=rng).fit_predict(V)


def fig4_scores(run_dir: Path, x: int, trials: list[int]) -> None:
    from ccbench.reporting import load
    from ccbench.reporting.paper_figures import figure_panels, figure_requests

    data = load(run_dir)
    for t in trials:
        request = figure_requests({"figures": [{"kind": "distance_matrices", "file": "check", "x": x, "trial": t,
                                                "methods": ["ncuts", "spectral_learning", "e2cp", "srcp"]}]})[0]
        panels, _ = figure_panels(data, request, "constraints.n_constraints")
        print(f"trial {t}: " + "; ".join(f"{p['label']} AUC {p['block_auc']:.4f}, within/between "
                                         f"{p['within_between']:.3f}, ARI {p['rescored']['ari'][0]:.3f}"
                                         f"{'' if p['reproduced'] else ' (refit differs)'}" for p in panels), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--x", type=int, default=2400)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--mu", type=float, default=0.2, help="SRCP's mu (the paper's 0.2; the sweep's default)")
    ap.add_argument("--fig4", default=None, help="comma-separated trials: print Fig. 4's block scores for them")
    args = ap.parse_args()
    if args.fig4:
        return fig4_scores(args.run_dir, args.x, [int(t) for t in args.fig4.split(",")])
    cell = _cell(args.run_dir, "ncuts", args.x)  # a trial's seed never depends on the method
    ds = load_dataset("digits")
    k = ds.n_classes
    same = ds.y[:, None] == ds.y[None, :]
    out = {"ours_sl": [], "kamvar_sl": [], "srcp": []}
    for t in range(args.trials):
        rng, seed = protocol.trial_streams(protocol.trial_seed(cell, t))
        cons, _ = protocol.draw_supervision(ds.y, cell["constraints"], cell["noise"], rng)
        params = {"n_clusters": k, "sigma": None, "random_state": seed}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sl = registry.make_method("spectral_learning", **params).fit(ds.X, constraints=cons)
            srcp = registry.make_method("srcp", solver="eig", mu=args.mu, **params).fit(ds.X, constraints=cons)
        ari_ours = adjusted_rand(ds.y, sl.labels_)
        ari_kamvar = adjusted_rand(ds.y, kamvar_sl(sl.affinity_matrix_, k, seed))
        ari_srcp = adjusted_rand(ds.y, srcp.labels_)
        F = srcp.propagated_constraints_
        W = gaussian_knn_graph(ds.X, 20, sigma=None, symmetrize="mean")
        ml, cl = cons.must_link, cons.cannot_link
        constrained = np.zeros_like(same)
        for pairs in (ml, cl):
            constrained[pairs[:, 0], pairs[:, 1]] = constrained[pairs[:, 1], pairs[:, 0]] = True
        free = ~constrained & ~np.eye(len(same), dtype=bool)
        edges = W.nonzero()
        moved_srcp = np.abs(np.asarray(srcp.affinity_matrix_)[edges] - np.asarray(W[edges]).ravel()).mean()
        moved_sl = np.abs(np.asarray(sl.affinity_matrix_[edges]).ravel() - np.asarray(W[edges]).ravel()).mean()
        ablations = {}
        for name, F_part in (("pairs only", np.where(constrained, F, 0.0)), ("propagation only", np.where(constrained, 0.0, F))):
            labels, _ = spectral_clustering(adjust_similarity(W, F_part), k, n_init=10, rng=check_random_state(seed))
            ablations[name] = adjusted_rand(ds.y, labels)
            out.setdefault(name, []).append(ablations[name])
        print(f"trial {t}: {len(ml)} ML, {len(cl)} CL | ARI ours SL {ari_ours:.3f}, Kamvar SL {ari_kamvar:.3f}, "
              f"SRCP {ari_srcp:.3f} | max|F| {np.abs(F).max():.3f}, F on ML {F[ml[:, 0], ml[:, 1]].mean():.3f}, "
              f"on CL {F[cl[:, 0], cl[:, 1]].mean():.3f}; unconstrained pairs: sign right on same-class "
              f"{(F[free & same] > 0).mean():.3f}, different-class {(F[free & ~same] < 0).mean():.3f}, "
              f"median |F| {np.median(np.abs(F[free])):.2e} | mean |W*-W| on W's edges: SRCP {moved_srcp:.4f}, "
              f"SL {moved_sl:.4f} | SRCP's F {', '.join(f'{n}: ARI {a:.3f}' for n, a in ablations.items())}", flush=True)
        out["ours_sl"].append(ari_ours)
        out["kamvar_sl"].append(ari_kamvar)
        out["srcp"].append(ari_srcp)
    for name, values in out.items():
        print(f"{name}: ARI {np.mean(values):.3f} ± {np.std(values, ddof=1):.3f} over {len(values)} trials")


if __name__ == "__main__":
    main()
