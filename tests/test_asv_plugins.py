"""asv for plugin authors (issue 39, item 6).

- ``bench_registered.RegisteredMethodFit`` is parametrised over the registry when asv imports
  it, so an installed plugin's method is benchmarked with no file in ``tests/benchmarks/``;
- ``run_quick.py --store`` keeps its results (a first dashboard in minutes, not the full
  ~23.5 minute suite);
- ``publish.py`` inlines the page's JSON so the dashboard opens as ``file://`` (asv's page
  fetches it with XMLHttpRequest, which browsers refuse for local files: "Error fetching content").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks import publish
from test_leaderboard_recipe import NAME, install
import _proc  # on time-out, the command's whole process group is killed (issue 54)

ROOT = Path(__file__).resolve().parents[1]


def test_the_registered_methods_benchmark_includes_an_installed_plugins_method(tmp_path):
    site = install(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT / "tests"),
                                                        os.environ.get("PYTHONPATH", "")])}
    env.pop("CCBENCH_BENCH_METHODS", None)
    code = ("import json; from benchmarks.bench_registered import RegisteredMethodFit as R; "
            "print(json.dumps([R.param_names, R.params[0]]))")
    out = _proc.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                    timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    names, methods = json.loads(out.stdout.strip().splitlines()[-1])
    assert names == ["method", "n"]
    assert NAME in methods and {"kmeans", "scssap", "nnc"} <= set(methods)
    # and the benchmark runs it (in process: what one asv benchmark process does)
    code = ("from benchmarks.bench_registered import RegisteredMethodFit as R; b = R(); "
            f"b.setup('{NAME}', 200); b.time_fit('{NAME}', 200); print(b.track_ari('{NAME}', 200))")
    run = _proc.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                    timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert -1 <= float(run.stdout.strip().splitlines()[-1]) <= 1


def test_ccbench_bench_methods_keeps_the_named_methods(monkeypatch):
    from benchmarks.bench_registered import registered_methods

    monkeypatch.setenv("CCBENCH_BENCH_METHODS", "scssap, kmeans")
    assert registered_methods() == ["kmeans", "scssap"]


def _page(tmp_path: Path) -> Path:
    asv = pytest.importorskip("asv")
    html = tmp_path / "html"
    html.mkdir()
    shutil.copy(Path(asv.__file__).parent / "www" / "index.html", html / "index.html")
    (html / "info.json").write_text(json.dumps({"timestamp": 1}))
    (html / "index.json").write_text(json.dumps({"project": "ccbench", "benchmarks": {}}))
    (html / "graphs" / "machine-vm").mkdir(parents=True)
    (html / "graphs" / "machine-vm" / "bench_x.F.time_fit(n=1).json").write_text("[[1, 0.5]]")
    return html


def test_the_published_page_carries_its_data_for_file_urls(tmp_path):
    html = _page(tmp_path)
    publish.install(html)
    text = (html / "index.html").read_text()
    jquery = text.index('src="vendor/jquery-3.3.1/dist/jquery.min.js"')
    data_tag = text.index(f'<script src="{publish.OFFLINE_DATA}"></script>')
    assert jquery < data_tag < text.index('src="asv.js"')
    payload = (html / publish.OFFLINE_DATA).read_text()
    prefix = "window.ASV_OFFLINE_DATA = "
    assert payload.startswith(prefix)
    data = json.loads(payload[len(prefix):].rstrip().rstrip(";"))
    assert data == {"info.json": {"timestamp": 1}, "index.json": {"project": "ccbench", "benchmarks": {}},
                    "graphs/machine-vm/bench_x.F.time_fit(n=1).json": [[1, 0.5]]}
    publish.install(html)  # publishing again leaves one shim
    assert (html / "index.html").read_text().count(publish.OFFLINE_DATA) == 1


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page's shim")
def test_the_shim_answers_asvs_requests_from_the_inlined_data_on_file_pages_only(tmp_path):
    """asv's requests as asv.js makes them (URI-encoded graph paths, ?timestamp=), through the shim."""
    html = _page(tmp_path)
    publish.install(html)
    shim = publish.OFFLINE_SHIM.split("<script>", 1)[1].rsplit("</script>", 1)[0]
    script = tmp_path / "shim.js"
    script.write_text(f"""
        var answered = [];
        function fake(protocol) {{
          global.location = {{protocol: protocol}};
          global.window = global;
          {(html / publish.OFFLINE_DATA).read_text()}
          global.jQuery = {{
            ajax: function (o) {{ answered.push("network:" + o.url); return null; }},
            Deferred: function () {{  // done() callbacks run when it resolves (the shim resolves from a timer)
              var args = null, waiting = [];
              var d = {{resolve: function () {{ args = arguments; waiting.forEach(function (f) {{ f.apply(null, args); }});
                                              return d; }},
                       promise: function () {{ var p = {{done: function (f) {{ if (args) f.apply(null, args);
                                                                         else waiting.push(f); return p; }}}};
                                             return p; }}}};
              return d;
            }}
          }};
          {shim}
        }}
        fake("file:");
        jQuery.ajax({{url: "info.json", dataType: "json", cache: false}}).done(function (d) {{ answered.push(d.timestamp); }});
        jQuery.ajax({{url: "graphs/machine-vm/" + encodeURIComponent("bench_x.F.time_fit(n=1)") + ".json?timestamp=1"}})
          .done(function (d) {{ answered.push(JSON.stringify(d)); }});
        jQuery.ajax({{url: "swallow.ico", dataType: "text"}}).done(function () {{ answered.push("ico"); }});
        jQuery.ajax({{url: "missing.json"}});
        fake("http:");
        jQuery.ajax({{url: "info.json"}});
        setTimeout(function () {{ console.log(JSON.stringify(answered)); }}, 20);
    """)
    out = _proc.run(["node", str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    # the network's answers are the fake's, at once; the shim's come later, as an XHR's do
    assert json.loads(out.stdout) == ["network:missing.json", "network:info.json", 1, "[[1,0.5]]", "ico"]


@pytest.mark.slow  # one asv benchmark process plus discovery: about 1 minute on the loaded 2-core machine
def test_run_quick_store_writes_a_results_file(tmp_path):
    conf = (ROOT / "asv.conf.json").read_text()
    for key, value in {"repo": ROOT, "benchmark_dir": ROOT / "tests" / "benchmarks", "results_dir": tmp_path / "results",
                       "html_dir": tmp_path / "html", "env_dir": tmp_path / "env"}.items():
        old = json.loads(conf.split(f'"{key}": ', 1)[1].split(",", 1)[0])
        conf = conf.replace(f'"{key}": {json.dumps(old)}', f'"{key}": {json.dumps(str(value))}', 1)
    config = tmp_path / "asv.conf.json"
    config.write_text(conf)
    env = {**os.environ, "CCBENCH_BENCH_METHODS": "kmeans"}
    run = _proc.run([sys.executable, str(ROOT / "tests" / "benchmarks" / "run_quick.py"), "--store",
                     "--config", str(config), "--bench", r"RegisteredMethodFit\.time_fit"],
                    env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    files = publish.stored_results(tmp_path / "results")
    assert [f.name.split("-")[0] for f in files] == [head[:8]], files
    results = json.loads(files[0].read_text())["results"]
    (value, params, *_) = results["bench_registered.RegisteredMethodFit.time_fit"]
    assert params[0] == ["'kmeans'"] and value[0] is not None and value[0] > 0
