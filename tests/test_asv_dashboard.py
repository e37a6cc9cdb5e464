"""The asv dashboard that ``tests/benchmarks/publish.py`` writes renders when opened from ``file://`` (issue 54).

It was blank in headless Chromium (no console error; served over http it rendered): the offline shim
answered asv's ``$.ajax`` calls at once, inside the call, so ``asv.js``'s ``$(document).ready`` handler showed
the page before the later scripts' ready handlers had registered it. The shim now answers later, as an XHR
does. Two checks: the order itself (node, the page's shim against a jQuery-like Deferred), and the page a
user opens (a tiny published dashboard, opened from ``file://`` in the Chromium the site tests drive).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest

import _proc
from benchmarks import publish
from test_leaderboard_site import CHROMIUM, Browser

ROOT = Path(__file__).resolve().parents[1]
BENCH = "bench_x.F.time_fit"


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page's shim")
def test_the_shim_answers_after_the_call_returns_as_an_xhr_does(tmp_path):
    shim = publish.OFFLINE_SHIM.split("<script>", 1)[1].rsplit("</script>", 1)[0]
    script = tmp_path / "order.js"
    script.write_text(f"""
        var seen = [];
        global.location = {{protocol: "file:"}};
        global.window = global;
        window.ASV_OFFLINE_DATA = {{"info.json": {{"timestamp": 7}}}};
        function Deferred() {{  // jQuery's contract: done() callbacks run when (or, if already, as) it resolves
          var args = null, waiting = [];
          var d = {{resolve: function () {{ args = arguments; waiting.forEach(function (f) {{ f.apply(null, args); }});
                                          return d; }},
                   promise: function () {{ var p = {{done: function (f) {{ if (args) f.apply(null, args);
                                                                     else waiting.push(f); return p; }}}};
                                         return p; }}}};
          return d;
        }}
        global.jQuery = {{ajax: function () {{ seen.push("network"); }}, Deferred: Deferred}};
        {shim}
        jQuery.ajax({{url: "info.json", dataType: "json"}}).done(function (d) {{ seen.push("answer " + d.timestamp); }});
        seen.push("call returned");  // asv.js's other ready handlers run here
        setTimeout(function () {{ console.log(JSON.stringify(seen)); }}, 20);
    """)
    out = _proc.run(["node", str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == ["call returned", "answer 7"]


def _git(repo: Path, *args: str) -> str:
    done = _proc.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                     capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def _publish_tiny_dashboard(root: Path) -> Path:
    """asv publish of one benchmark (two parameter values) at the one commit of a throw-away repository,
    then publish.install, as ``python tests/benchmarks/publish.py`` does; returns the html directory."""
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "one commit")
    commit = _git(repo, "rev-parse", "HEAD")
    results = root / "results"
    (results / "vm").mkdir(parents=True)
    machine = {"arch": "x86_64", "cpu": "cpu", "machine": "vm", "num_cpu": "2", "os": "Linux", "ram": "1"}
    (results / "vm" / "machine.json").write_text(json.dumps({**machine, "version": 1}))
    (results / "benchmarks.json").write_text(json.dumps({BENCH: {
        "code": "def time_fit(self, n): pass", "name": BENCH, "param_names": ["n"], "params": [["1", "2"]],
        "type": "time", "unit": "seconds", "version": "v1", "timeout": 60}, "version": 2}))
    (results / "vm" / f"{commit[:8]}-virtualenv-py3.11.json").write_text(json.dumps({
        "commit_hash": commit, "env_name": "virtualenv-py3.11", "date": 1764000000000, "python": "3.11",
        "params": {**machine, "python": "3.11"}, "requirements": {}, "env_vars": {},
        "result_columns": ["result", "params", "version", "started_at", "duration"],
        "results": {BENCH: [[0.5, 0.25], [["1", "2"]], "v1", 1764000000000, 1.0]}, "durations": {}, "version": 2}))
    config = root / "asv.conf.json"
    config.write_text(json.dumps({
        "version": 1, "project": "tinybench", "project_url": "https://example.org", "repo": str(repo),
        "branches": ["main"], "dvcs": "git", "environment_type": "virtualenv", "pythons": ["3.11"],
        "benchmark_dir": "bench", "results_dir": str(results), "html_dir": str(root / "html"),
        "env_dir": str(root / "env")}))
    _proc.run([sys.executable, "-m", "asv", "publish", "--config", str(config)], cwd=root, capture_output=True,
              text=True, timeout=300, check=True)
    publish.install(root / "html")
    return root / "html"


@pytest.mark.slow  # asv publish and a Chromium start: about 10 s on the loaded 2-core machine
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed: apt-get install chromium "
                                             "(Debian; .ci/run does it as root)")
def test_the_published_dashboard_renders_from_file_in_chromium(tmp_path):
    """Run it with: ``/work/venv/bin/python -m pytest -q -m slow tests/test_asv_dashboard.py``."""
    html = _publish_tiny_dashboard(tmp_path)
    browser = Browser(tmp_path / "profile")
    try:
        browser.open((html / "index.html").as_uri())
        probe = ("JSON.stringify({title: document.title, names: Array.from(document.querySelectorAll("
                 "'#summarygrid-display .benchmark-container')).map(b => b.textContent.trim()), "
                 "plots: document.querySelectorAll('#summarygrid-display .benchmark-container canvas').length, "
                 "error: document.body.innerText.includes('Error fetching content')})")
        seen = json.loads(browser.js(probe))
        for _ in range(300):  # the grid is drawn from timers: wait for its plot, not for a set time
            if seen["plots"] or seen["error"]:
                break
            time.sleep(0.1)
            seen = json.loads(browser.js(probe))
    finally:
        browser.close()
    assert not seen["error"], seen
    assert seen["title"] == "airspeed velocity of an unladen tinybench"
    assert seen["names"] == ["F.time_fit"] and seen["plots"] >= 1, seen
