"""Provenance: every row records the code and machine that made it; stale rows are re-run.

The end-to-end story (issue 27): a sweep, an edit to one method's source, the same
command -> only that method's trials re-run, it says so, every row carries the
provenance columns, and a report over two code versions warns.
"""

from __future__ import annotations

import json
import logging
import textwrap

import pandas as pd
import pytest

from ccbench import registry
from ccbench.reporting import origins as rorigins
from ccbench.reporting import summary as rsummary
from ccbench.running import provenance
from ccbench.running.harness import run_job
from ccbench.running.results import read_results
import _proc  # on time-out, the command's whole process group is killed (issue 54)

PLUGIN = """
import numpy as np
from ccbench import ConstrainedClusterer, MethodSpec, hookimpl
{extra_import}

class FirstHalf(ConstrainedClusterer):
    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y=None, *, constraints=None):
        self.labels_ = (np.arange(len(X)) >= len(X) // {divisor}).astype(int)
        return self

@hookimpl
def ccbench_methods():
    return [MethodSpec("{name}", FirstHalf, "first half vs the rest")]
"""


def _cell(method, plugins, **extra):
    method = method if isinstance(method, dict) else {"name": method}
    return {"dataset": {"name": "iris"}, "method": method, "constraints": {"name": "none"},
            "noise": {"name": "none"}, "n_trials": 3, "plugins": plugins, "metrics": ["ari"], **extra}


KMEANS = {"name": "kmeans", "n_clusters": 3}


@pytest.fixture
def two_plugins(tmp_path, monkeypatch):
    """Two third-party plugin modules (loaded with plugins=[...]), one importing a helper module."""
    pkg = tmp_path / "thirdparty"
    pkg.mkdir()
    (pkg / "helper_mod.py").write_text("SCALE = 1\n")
    (pkg / "plugin_a.py").write_text(PLUGIN.format(name="half_a", divisor=2, extra_import="import helper_mod"))
    (pkg / "plugin_b.py").write_text(PLUGIN.format(name="half_b", divisor=3, extra_import=""))
    monkeypatch.syspath_prepend(str(pkg))
    yield pkg
    import sys

    for name in ("plugin_a", "plugin_b"):
        registry.unregister_plugin(name)
        sys.modules.pop(name, None)
    sys.modules.pop("helper_mod", None)


def _touch(path, text):
    import os
    import time

    path.write_text(text)
    later = time.time() + 5  # a new mtime even on coarse file-system clocks
    os.utime(path, (later, later))


def test_every_row_carries_provenance_computed_once_per_job(tmp_path, monkeypatch):
    calls = []
    real = provenance.method_code
    monkeypatch.setattr(provenance, "method_code", lambda spec: calls.append(spec.name) or real(spec))
    rows = run_job(_cell(KMEANS, []), out_dir=tmp_path)
    assert calls == ["kmeans"]  # once per job, not per trial
    expected = ["code.ccbench_version", "code.git_commit", "code.git_dirty", "code.plugin_dist",
                "code.plugin_version", "code.method_hash", "code.method_files", "env.python", "env.numpy",
                "env.scipy", "env.scikit-learn", "env.numba", "env.cvxpy", "env.pandas", "env.blas",
                "env.blas_threads", "env.cpu", "env.n_cores", "env.memory_gb", "env.hostname"]
    stored = read_results(tmp_path)
    for col in expected:
        assert col in stored and stored[col].notna().all(), col
    assert set(stored["code.plugin_dist"]) == {"ccbench"}
    files = json.loads(stored["code.method_files"].iloc[0])
    # the estimator module and the family core it imports, nothing from other families
    assert list(files) == ["ccbench_plugins.kmeans.kmeans"]  # it imports no family core module
    cop = json.loads(provenance.method_code(registry.get_method_spec("cop_kmeans"))["code.method_files"])
    assert set(cop) == {"ccbench_plugins.kmeans.cop_kmeans", "ccbench_plugins.kmeans.core",
                        "ccbench_plugins.kmeans.local_search", "ccbench_plugins.kmeans._kernels"}
    assert not any(m.startswith(("ccbench_plugins.affinity", "ccbench.")) for m in files)
    assert len(rows) == 3


def test_method_code_follows_imports_and_declared_compositions():
    files = json.loads(provenance.method_code(registry.get_method_spec("cop_kmeans_xing"))["code.method_files"])
    assert "ccbench_plugins.nnc.metric_learning" in files  # imported by the estimator module
    assert "ccbench_plugins.kmeans.cop_kmeans" in files  # MethodSpec.uses: built through make_method
    ap = json.loads(provenance.method_code(registry.get_method_spec("ap"))["code.method_files"])
    assert "ccbench_plugins.affinity.scssap" not in ap  # a sibling estimator is not ap's code


def test_editing_one_plugin_reruns_only_its_trials_and_says_why(two_plugins, tmp_path, caplog):
    a, b = _cell("half_a", ["plugin_a"]), _cell("half_b", ["plugin_b"])
    run_job(a, out_dir=tmp_path / "a")
    run_job(b, out_dir=tmp_path / "b")
    first_a, first_b = read_results(tmp_path / "a"), read_results(tmp_path / "b")

    _touch(two_plugins / "helper_mod.py", "SCALE = 2  # edited\n")  # a module plugin_a imports
    with caplog.at_level(logging.WARNING, logger="ccbench"):
        run_job(a, out_dir=tmp_path / "a")
        run_job(b, out_dir=tmp_path / "b")
    again_a, again_b = read_results(tmp_path / "a"), read_results(tmp_path / "b")
    assert (again_a["timestamp"] > first_a["timestamp"].max()).all()  # all of a's trials re-ran
    assert again_b["timestamp"].tolist() == first_b["timestamp"].tolist()  # b untouched
    assert again_a["code.method_hash"].nunique() == 1
    assert again_a["code.method_hash"].iloc[0] != first_a["code.method_hash"].iloc[0]
    assert again_a["rerun_reason"].str.contains("helper_mod").all()
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "re-running 3 stale trial(s)" in said and "helper_mod" in said and "half_b" not in said


def test_rerun_errors_false_keeps_failures_of_this_code_and_reruns_those_of_changed_code(two_plugins, tmp_path):
    # a CPU-time kill repeats under the same code: a resumed sweep need not pay the budget again,
    # but a failure made by code that has changed since says nothing about the code that runs now
    _touch(two_plugins / "plugin_b.py", PLUGIN.format(name="half_b", divisor=0, extra_import=""))
    cell = _cell("half_b", ["plugin_b"], rerun_errors=False)
    assert set(run_job(cell, out_dir=tmp_path)["status"]) == {"error"}  # len(X) // 0
    first = read_results(tmp_path)
    run_job(cell, out_dir=tmp_path)
    assert read_results(tmp_path)["timestamp"].tolist() == first["timestamp"].tolist()  # kept, not retried
    _touch(two_plugins / "plugin_b.py", PLUGIN.format(name="half_b", divisor=3, extra_import=""))
    run_job(cell, out_dir=tmp_path)
    again = read_results(tmp_path)
    assert (again["timestamp"] > first["timestamp"].max()).all()  # re-ran (this process keeps the old module)
    assert again["rerun_reason"].str.startswith("stale: method code changed").all()


def test_an_infeasible_verdict_of_changed_code_is_rerun(two_plugins, tmp_path):
    # 'infeasible' and 'skipped' are verdicts of the method's code like 'ok': the leaderboard's resume kept
    # NNC's infeasible trials of the old code beside the re-run ok ones, 36 cells mixing two code versions
    infeasible = PLUGIN.replace("self.labels_ =", "raise InfeasibleConstraintsError('too many chunklets')\n        self.labels_ =")
    _touch(two_plugins / "plugin_b.py", infeasible.format(
        name="half_b", divisor=3, extra_import="from ccbench.base import InfeasibleConstraintsError"))
    cell = _cell("half_b", ["plugin_b"], rerun_errors=False)
    assert set(run_job(cell, out_dir=tmp_path)["status"]) == {"infeasible"}
    first = read_results(tmp_path)
    run_job(cell, out_dir=tmp_path)
    assert read_results(tmp_path)["timestamp"].tolist() == first["timestamp"].tolist()  # same code: kept
    _touch(two_plugins / "plugin_b.py", PLUGIN.format(name="half_b", divisor=3, extra_import=""))
    run_job(cell, out_dir=tmp_path)
    again = read_results(tmp_path)
    assert (again["timestamp"] > first["timestamp"].max()).all()
    assert again["rerun_reason"].str.startswith("stale: method code changed").all()
    assert again["code.method_hash"].nunique() == 1


def test_keep_stale_keeps_and_the_report_marks_and_warns(two_plugins, tmp_path, caplog):
    cell = _cell("half_a", ["plugin_a"])
    run_job(cell, out_dir=tmp_path)
    _touch(two_plugins / "plugin_a.py", (two_plugins / "plugin_a.py").read_text() + "\n# edited\n")
    with caplog.at_level(logging.WARNING, logger="ccbench"):
        rows = run_job({**cell, "keep_stale": True, "n_trials": 5}, out_dir=tmp_path)
    assert "keeping 3 stale trial(s)" in " ".join(r.getMessage() for r in caplog.records)
    assert rows["code.method_hash"].nunique() == 2  # 3 kept old rows + 2 new trials
    data = rsummary.load(tmp_path)
    assert rorigins.stale_rows(data).sum() == 3
    warnings = rorigins.provenance_warnings(data)
    assert any("mixes 2 code versions" in w for w in warnings)
    assert any("3 ok row(s) were made by code other than the installed one" in w for w in warnings)


def test_rows_without_provenance_are_stale_with_a_clear_reason(tmp_path, caplog):
    cell = _cell(KMEANS, [])
    run_job(cell, out_dir=tmp_path)
    old = read_results(tmp_path)
    legacy = old.drop(columns=[c for c in old if c.startswith(("code.", "env.", "rerun_reason"))])
    from ccbench.running.results import write_results

    write_results(legacy, tmp_path / "results.parquet")
    with caplog.at_level(logging.WARNING, logger="ccbench"):
        rows = run_job(cell, out_dir=tmp_path)
    assert rows["code.method_hash"].notna().all()
    assert rows["rerun_reason"].str.contains("before ccbench kept provenance").all()
    assert "before ccbench kept provenance" in caplog.text


def test_report_lists_the_machines_found_in_rows_and_warns_on_a_mixed_cell(tmp_path):
    """Rows gathered from two machines (e.g. a SLURM sweep): the report names both, per job."""
    cell = _cell(KMEANS, [], n_trials=4)
    run_job(cell, out_dir=tmp_path / "node1")
    frame = read_results(tmp_path / "node1")
    other = frame.assign(**{"env.hostname": "node-b", "env.cpu": "Other CPU"})
    other.loc[:1, "env.hostname"] = frame.loc[:1, "env.hostname"]  # one cell from two machines
    from ccbench.running.results import write_results

    write_results(other, tmp_path / "node2" / "results.parquet")
    data = pd.concat([rsummary.load(tmp_path / "node1"), rsummary.load(tmp_path / "node2")], ignore_index=True)
    table = rorigins.provenance_table(data)
    assert set(table["hostname"]) == {frame["env.hostname"].iloc[0], "node-b"}
    assert table["rows"].sum() == len(data)
    assert any("mixes 2 machines" in w for w in rorigins.provenance_warnings(rsummary.load(tmp_path / "node2")))
    out = rsummary.write_report(rsummary.load(tmp_path), tmp_path / "rep", metrics=["ari"])
    text = out["summary_md"].read_text()
    assert "## Provenance" in text and "node-b" in text
    from ccbench.reporting import html as report_html

    page = report_html.html_page(rsummary.load(tmp_path), metrics=["ari"])
    assert "node-b" in page and "read from the rows themselves" in page
    assert "Of the machine that wrote this report" not in page


def test_git_dirty_flag_and_commit_are_recorded():
    code = provenance.ccbench_code()
    assert set(code) == {"code.ccbench_version", "code.git_commit", "code.git_dirty"}
    if code["code.git_commit"]:  # a git checkout (not a wheel)
        assert len(code["code.git_commit"]) == 40 and code["code.git_dirty"] in (True, False)


def test_changed_files_names_added_removed_and_edited_modules():
    old = json.dumps({"a": "1", "b": "2", "c": "3"})
    new = json.dumps({"a": "1", "b": "9", "d": "4"})
    assert provenance.changed_files(old, new) == ["b", "c", "d"]
    assert provenance.changed_files(None, new) == ["a", "b", "d"]


def test_the_import_graph_resolves_relative_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "fampkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "est.py").write_text(textwrap.dedent("""
        from . import core
        from .sub.deep import thing
        from ..outside import nothing  # noqa
        import numpy
    """))
    (pkg / "core.py").write_text("from .sub import deep\n")
    (pkg / "sub" / "deep.py").write_text("thing = 1\n")
    (pkg / "unused.py").write_text("x = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = provenance._implementation("fampkg.est")
    assert set(graph) == {"fampkg.est", "fampkg.core", "fampkg.sub.deep"}


def test_the_command_reruns_only_the_edited_plugins_trials_and_says_so(two_plugins, tmp_path):
    """Issue 27's 'done when', through the real command: sweep, edit one plugin's module, same command."""
    import os
    import subprocess
    import sys

    conf = two_plugins / "conf" / "method"
    conf.mkdir(parents=True)
    for name in ("half_a", "half_b"):
        (conf / f"{name}.yaml").write_text(f"name: {name}\n")
    sweep = tmp_path / "sweep"
    cmd = [sys.executable, "-c", "import sys; from ccbench.running.cli import main; sys.exit(main())", "-m",
           "method=half_a,half_b", "constraints=none", "n_trials=2", "metrics=[ari]", "plugins=[plugin_a,plugin_b]",
           f"hydra.searchpath=[file://{two_plugins / 'conf'}]", f"hydra.sweep.dir={sweep}"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(two_plugins), os.environ.get("PYTHONPATH", "")])}

    def run():
        proc = _proc.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        rows = pd.concat([read_results(f) for f in sweep.rglob("results.parquet")], ignore_index=True)
        return proc, rows.set_index(["method.name", "trial"]).sort_index()

    _, before = run()
    _touch(two_plugins / "plugin_b.py", (two_plugins / "plugin_b.py").read_text() + "\n# edited\n")
    proc, after = run()
    assert "re-ran 2 stale trial(s)" in proc.stderr and "half_b" in proc.stderr and "plugin_b" in proc.stderr
    assert (after.loc["half_a", "timestamp"] == before.loc["half_a", "timestamp"]).all()
    assert (after.loc["half_b", "timestamp"] > before.loc["half_b", "timestamp"]).all()
    assert after.filter(like="code.").notna().all().all() and after.filter(like="env.").notna().all().all()


def test_the_ccbench_commit_is_the_source_trees():
    """The module moved into ``ccbench/running/``: the tree it looks for ``.git`` in must still be the repository's."""
    import subprocess
    from pathlib import Path

    import ccbench
    from ccbench.running.provenance import ccbench_code

    root = Path(ccbench.__file__).resolve().parent.parent
    if not (root / ".git").exists():
        pytest.skip(f"{root} is not a git checkout (an installed wheel): no commit to record")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True).stdout
    assert ccbench_code()["code.git_commit"] == head.strip()


def test_a_kept_stale_verdict_is_marked_by_the_report_as_the_harness_says(two_plugins, tmp_path, caplog):
    # keep_stale=true says "reports mark them": an infeasible row of changed code is one of them too
    infeasible = PLUGIN.replace("self.labels_ =", "raise InfeasibleConstraintsError('too many chunklets')\n        self.labels_ =")
    _touch(two_plugins / "plugin_b.py", infeasible.format(
        name="half_b", divisor=3, extra_import="from ccbench.base import InfeasibleConstraintsError"))
    cell = _cell("half_b", ["plugin_b"])
    run_job(cell, out_dir=tmp_path)
    _touch(two_plugins / "plugin_b.py", (two_plugins / "plugin_b.py").read_text() + "\n# edited\n")
    with caplog.at_level(logging.WARNING, logger="ccbench"):
        run_job({**cell, "keep_stale": True}, out_dir=tmp_path)
    assert "keeping 3 stale trial(s)" in " ".join(r.getMessage() for r in caplog.records)
    data = rsummary.load(tmp_path)
    assert rorigins.stale_rows(data).sum() == 3
    assert any(w.startswith("3 skipped/infeasible/not_found row(s) were made by code other than the installed")
               for w in rorigins.provenance_warnings(data))
