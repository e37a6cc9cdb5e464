"""The asv suite on a fresh machine (issue 30, items 1 and 10); none of these runs asv's
benchmarks except the slow smoke run of the peer benchmark."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest
from benchmarks import publish
import _proc  # on time-out, the command's whole process group is killed (issue 54)

BENCH_DIR = Path(__file__).resolve().parent / "benchmarks"
ROOT = BENCH_DIR.parents[1]


def test_peer_benchmark_without_the_extra_skips_in_setup_not_setup_cache(monkeypatch):
    """asv 0.6 reports a NotImplementedError from setup_cache as a failure (exit 2) and
    skips only one raised by setup; without the optional extra 'peers' the benchmark
    must take the second route."""
    from benchmarks import bench_kmeans

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, **k: None if name == "active_semi_clustering" else real(name, *a, **k))
    bench = bench_kmeans.KMeansVsPeer()
    cache = bench.setup_cache()  # must not raise
    with pytest.raises(NotImplementedError, match=r"optional extra 'peers' not installed.*pip install"):
        bench.setup(cache, bench.params[0][0], "cop_kmeans")


def collect_grids() -> dict:
    """``{module.Class: [number of parameter combinations, largest n]}`` of the suite as
    asv discovers it in this process's environment."""
    import inspect
    import itertools
    import pkgutil

    import benchmarks

    out = {}
    for m in pkgutil.iter_modules(benchmarks.__path__):
        if not m.name.startswith("bench_"):
            continue
        mod = importlib.import_module("benchmarks." + m.name)
        for name, cls in inspect.getmembers(mod, inspect.isclass):
            if cls.__module__ == mod.__name__ and not name.startswith("_") and hasattr(cls, "params"):
                sizes = [v for key, vals in zip(cls.param_names, cls.params) if key == "n" for v in vals]
                out[f"{m.name}.{name}"] = [len(list(itertools.product(*cls.params))), max(sizes, default=0)]
    return out


def _grids_in(env: dict) -> dict:
    code = "import json, test_asv_fresh_machine as t; print(json.dumps(t.collect_grids()))"
    run = _proc.run([sys.executable, "-c", code], cwd=ROOT / "tests", env=env, capture_output=True,
                    text=True, check=True, timeout=300)
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_smoke_run_declares_tiny_grids_and_full_runs_keep_theirs():
    """run_quick.py sets CCBENCH_BENCH_SMOKE=1: one small size per class (the full grids took
    23.5 min in CI); without it (asv run, check_regressions, --history) the grids stay."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("CCBENCH_BENCH_")}
    smoke = _grids_in({**base, "CCBENCH_BENCH_QUICK": "1", "CCBENCH_BENCH_SMOKE": "1"})
    from benchmarks import common

    assert not common.SMOKE, "run the tests without CCBENCH_BENCH_SMOKE"
    full = collect_grids()
    assert smoke.keys() == full.keys()
    # COBSFit and RNSDPDefaultFit came with issues 29/31, ReportScale with issue 40 (its smoke size:
    # 20 job directories); issue 52's PCCCFit and KMeansBound and issue 54's QuickStart came with 3 more;
    # issue 53's COBRASFit (1) and QueryStrategyCost (6 strategies at n = 200, 6 s in all) with 7;
    # issue 51's ICMPassCompiled (n = 100, well under a second) with 1, FarthestPairsCompiled (n = 200, d = 30,
    # milliseconds) with 1; the smoke phase takes a few minutes
    assert sum(c for c, _ in smoke.values()) <= 64, smoke
    big = {k: n for k, (_, n) in smoke.items() if n > 1000}
    assert not big, f"smoke-run sizes above 1000: {big}"
    assert full["bench_ap.APFit"] == [6, 5000] and full["bench_scssap.SCSSAPVsAP"][1] == 2000
    src = (BENCH_DIR / "run_quick.py").read_text()
    assert 'CCBENCH_BENCH_SMOKE="1"' in src


@pytest.mark.slow
def test_smoke_run_of_the_peer_benchmark_passes_without_the_extra():
    """The CI failure itself: `run_quick.py --bench KMeansVsPeer` exited 2 without 'peers'."""
    if importlib.util.find_spec("active_semi_clustering") is not None:
        pytest.skip("the optional extra 'peers' is installed here")
    run = _proc.run([sys.executable, str(BENCH_DIR / "run_quick.py"), "--bench", "KMeansVsPeer"],
                    cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "skipped" in run.stdout and "optional extra 'peers' not installed" in run.stdout


def test_publish_without_stored_results_says_what_to_run_first(tmp_path, capsys):
    conf = {"version": 1, "project": "x", "repo": ".", "results_dir": "results", "html_dir": "html",
            "benchmark_dir": "benchmarks"}
    (tmp_path / "asv.conf.json").write_text(json.dumps(conf))
    (tmp_path / "results" / "vm").mkdir(parents=True)
    (tmp_path / "results" / "vm" / "machine.json").write_text("{}")
    (tmp_path / "results" / "benchmarks.json").write_text("{}")
    assert publish.main(["--config", str(tmp_path / "asv.conf.json")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("publish.py: no benchmark results stored in")
    assert "asv run --python=same --set-commit-hash $(git rev-parse HEAD)" in err[0]
    assert not (tmp_path / "html").exists()


def test_stored_results_are_result_files_only(tmp_path):
    (tmp_path / "vm").mkdir()
    for name in ("machine.json", "abc123-existing-py.json"):
        (tmp_path / "vm" / name).write_text("{}")
    (tmp_path / "benchmarks.json").write_text("{}")
    assert publish.stored_results(tmp_path) == [tmp_path / "vm" / "abc123-existing-py.json"]
