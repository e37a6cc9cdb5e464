"""``asv publish`` for a dashboard that opens without internet access.

Usage (from anywhere)::

    python tests/benchmarks/publish.py            # asv publish, then rewrite .asv/html
    python tests/benchmarks/publish.py --serve    # ... and serve it at http://127.0.0.1:8080
    python tests/benchmarks/publish.py --history main~20..main --steps 8   # fill history first
    python tests/benchmarks/publish.py --refresh-vendor   # re-fetch vendor/ with npm pack

asv 0.6's ``index.html`` loads jQuery, flot (+ time, selection, categories, orderBars),
stupidtable, blueimp-md5 and Bootstrap from public CDNs, so on a machine without internet
the dashboard is a blank page.  This script runs ``asv publish`` and then points those
``<script>`` / ``<link>`` tags at copies of the same packages taken from npm and committed
under ``tests/benchmarks/vendor/`` (with their licences, see ``vendor/README.md``).  A CDN
tag the table below does not know (a newer asv) stops the script with the URL to add.

The page reads its data (``index.json``, ``graphs/``) with XMLHttpRequest, which browsers
refuse for ``file://`` pages (asv's "Error fetching content"), so the script also inlines
that data into ``offline-data.js`` (:func:`inline_data`), answered to the page's requests when
it is opened as a file: ``xdg-open .asv/html/index.html`` works, as does a local web server
(``--serve``, ``asv preview``); nothing is fetched from the internet either way.

``--history RANGE`` first benchmarks the commits of ``RANGE`` (git range syntax, at most
``--steps`` of them, evenly spaced) on the regression check's stable benchmarks
(``check_regressions.CHECKS``), each commit built into asv's virtualenv; benchmarks that
already have results are skipped (``--skip-existing``), so it can be rerun to extend the
history.  ``CCBENCH_BENCH_QUICK=1`` (one repeat of the reference ratios, heavy sizes
skipped) keeps it to about 1.5 minutes per commit on a loaded 2-core machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENDOR = Path(__file__).resolve().parent / "vendor"


@dataclass(frozen=True)
class Asset:
    """One CDN file of asv's page and the npm file that replaces it."""

    url: str  #: as written in asv's index.html
    package: str  #: npm package name
    version: str
    path: str  #: file inside the npm package (``package/`` prefix dropped)
    same_as_cdn: bool = False  #: byte-identical to the CDN file (sha matches its ``integrity``)

    @property
    def local(self) -> str:
        """Path of the copy, relative to the html directory (and to ``vendor/``)."""
        return f"{self.package}-{self.version}/{self.path}"


_CDNJS = "https://cdnjs.cloudflare.com/ajax/libs"
#: Same versions as asv 0.6.x's index.html.  Where npm has the CDN's exact file the bytes
#: are identical (their sha256 equals the page's ``integrity`` hash: jQuery, orderBars,
#: blueimp-md5, Bootstrap); cdnjs's flot ``.min.js`` files are minified by cdnjs, so the
#: npm package's unminified sources of the same 0.8.3 release are used; stupidtable 1.0.1
#: was never published to npm, whose only release, 1.1.3, keeps the same API
#: (``$.fn.stupidtable``, ``$.fn.stupidsort``).
ASSETS = (
    Asset("https://code.jquery.com/jquery-3.3.1.min.js", "jquery", "3.3.1", "dist/jquery.min.js", True),
    Asset(f"{_CDNJS}/flot/0.8.3/jquery.flot.min.js", "flot", "0.8.3", "jquery.flot.js", False),
    Asset(f"{_CDNJS}/flot/0.8.3/jquery.flot.time.min.js", "flot", "0.8.3", "jquery.flot.time.js", False),
    Asset(f"{_CDNJS}/flot/0.8.3/jquery.flot.selection.min.js", "flot", "0.8.3", "jquery.flot.selection.js", False),
    Asset(f"{_CDNJS}/flot/0.8.3/jquery.flot.categories.min.js", "flot", "0.8.3", "jquery.flot.categories.js", False),
    Asset("https://cdn.jsdelivr.net/npm/flot-orderbars@1.0.0/js/jquery.flot.orderBars.js", "flot-orderbars",
          "1.0.0", "js/jquery.flot.orderBars.js", True),
    Asset(f"{_CDNJS}/stupidtable/1.0.1/stupidtable.min.js", "stupid-table-plugin", "1.1.3",
          "stupidtable.min.js", False),
    Asset(f"{_CDNJS}/blueimp-md5/2.19.0/js/md5.min.js", "blueimp-md5", "2.19.0", "js/md5.min.js", True),
    Asset("https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/js/bootstrap.min.js", "bootstrap", "3.1.1",
          "dist/js/bootstrap.min.js", True),
    Asset("https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css", "bootstrap", "3.1.1",
          "dist/css/bootstrap.min.css", True),
)
#: Files kept from each package besides the assets: licence and provenance.
SUMS = "SHA256SUMS.json"
LICENCE_FILES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "MIT-LICENSE.txt", "package.json")

_TAG = re.compile(r"<(script|link)\b[^>]*?\b(?:src|href)=\"(https?://[^\"]+)\"[^>]*>", re.IGNORECASE)
#: Attributes that only make sense for a cross-origin CDN request.
_CDN_ATTRS = re.compile(r"\s+(?:integrity|crossorigin|referrerpolicy)=\"[^\"]*\"")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rewrite_html(html: str, assets=ASSETS) -> str:
    """``html`` with every known CDN ``<script>`` / ``<link>`` pointing at ``vendor/``.

    Raises ``ValueError`` naming any remaining ``http(s)://`` script or stylesheet, so a
    new asv release that adds a library fails here instead of producing a blank page.
    """
    by_url = {a.url: a for a in assets}
    unknown = []

    def replace(match):
        tag, url = match.group(0), match.group(2)
        asset = by_url.get(url)
        if asset is None:
            unknown.append(url)
            return tag
        return _CDN_ATTRS.sub("", tag.replace(url, f"vendor/{asset.local}"))

    out = _TAG.sub(replace, html)
    if unknown:
        raise ValueError(
            "asv's page loads files this script does not vendor: " + ", ".join(unknown)
            + "; add them to ASSETS in tests/benchmarks/publish.py and run it with --refresh-vendor"
        )
    return out


def check_vendor(vendor: Path = VENDOR, assets=ASSETS) -> None:
    """Every asset is present under ``vendor`` and unchanged since it was fetched from npm
    (``vendor/SHA256SUMS.json``, written by :func:`refresh_vendor`)."""
    sums = json.loads((vendor / SUMS).read_text()) if (vendor / SUMS).is_file() else {}
    for asset in assets:
        path = vendor / asset.local
        if not path.is_file() or asset.local not in sums:
            raise FileNotFoundError(f"{path} is missing; run publish.py --refresh-vendor (needs npm)")
        if sha256(path) != sums[asset.local]:
            raise ValueError(f"{path} differs from the npm release it was taken from; run --refresh-vendor")


#: The page's data, inlined for ``file://`` (:func:`inline_data`).
OFFLINE_DATA = "offline-data.js"
#: Loaded after jQuery: on a ``file://`` page, asv's ``$.ajax`` requests of its own JSON files
#: (``info.json``, ``index.json``, ``graphs/...``, ``regressions.json``; browsers refuse
#: XMLHttpRequest for local files, hence asv's "Error fetching content") are answered from
#: ``window.ASV_OFFLINE_DATA``; over http(s) nothing changes. Answered later (a timer), as an XHR
#: is, never during the call: asv.js requests ``info.json`` in its ``$(document).ready`` handler
#: and shows the page when the answer comes, which must be after the other scripts' ready handlers
#: have registered their pages (answered at once, the grid page was not registered yet and the
#: dashboard stayed blank in Chromium, with no console error; issue 54).
OFFLINE_SHIM = f"""<script src="{OFFLINE_DATA}"></script>
<script>(function () {{
  if (location.protocol !== "file:" || !window.jQuery || !window.ASV_OFFLINE_DATA) return;
  var data = window.ASV_OFFLINE_DATA, ajax = jQuery.ajax;
  function later(value) {{
    var answer = jQuery.Deferred();
    setTimeout(function () {{ answer.resolve(value, "success"); }}, 0);
    return answer.promise();
  }}
  jQuery.ajax = function (options) {{
    var url = decodeURIComponent(String(typeof options === "string" ? options : options.url).split("?")[0]);
    if (Object.prototype.hasOwnProperty.call(data, url)) return later(data[url]);
    if (url === "swallow.ico") return later("");
    return ajax.apply(this, arguments);
  }};
}})();</script>
"""


def inline_data(html_dir: Path) -> Path:
    """Write ``html_dir/offline-data.js``: every JSON file of the page (``vendor/`` aside) as
    ``window.ASV_OFFLINE_DATA[<path relative to html_dir>]``, so the page opens from ``file://``."""
    data = {p.relative_to(html_dir).as_posix(): json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(html_dir.rglob("*.json")) if p.relative_to(html_dir).parts[0] != "vendor"}
    out = html_dir / OFFLINE_DATA
    # "</" never reaches the HTML parser from a .js file, but keep the payload inert anyway
    out.write_text("window.ASV_OFFLINE_DATA = " + json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
                   + ";\n", encoding="utf-8")
    return out


def add_offline_shim(html: str) -> str:
    """``html`` with :data:`OFFLINE_SHIM` right after the (vendored) jQuery tag."""
    if OFFLINE_DATA in html:
        return html
    match = re.search(r'<script[^>]*src="vendor/jquery-[^"]*"[^>]*></script>\s*', html)
    if match is None:
        raise ValueError("publish.py: no vendored jQuery <script> in index.html to put the offline data after")
    return html[:match.end()] + OFFLINE_SHIM + html[match.end():]


def install(html_dir: Path, vendor: Path = VENDOR) -> None:
    """Copy ``vendor`` into ``html_dir/vendor``, rewrite ``html_dir/index.html`` and inline
    the page's data (:func:`inline_data`), so it opens from a server or as ``file://``."""
    check_vendor(vendor)
    index = html_dir / "index.html"
    text = add_offline_shim(rewrite_html(index.read_text(encoding="utf-8")))
    shutil.copytree(vendor, html_dir / "vendor", dirs_exist_ok=True)
    inline_data(html_dir)
    index.write_text(text, encoding="utf-8")


def refresh_vendor(vendor: Path = VENDOR) -> None:
    """Re-create ``vendor`` from ``npm pack`` of each package (needs npm and the registry)
    and record the files' sha256 in ``vendor/SHA256SUMS.json``."""
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("publish.py --refresh-vendor needs npm (e.g. apt-get install npm)")
    packages = sorted({(a.package, a.version) for a in ASSETS})
    with tempfile.TemporaryDirectory() as tmp:
        for name, version in packages:
            out = subprocess.run([npm, "pack", f"{name}@{version}", "--silent"], cwd=tmp, check=True,
                                 capture_output=True, text=True).stdout.split()[-1]
            dest = vendor / f"{name}-{version}"
            shutil.rmtree(dest, ignore_errors=True)
            with tarfile.open(Path(tmp) / out) as tar:
                wanted = {f"package/{a.path}" for a in ASSETS if a.package == name}
                wanted |= {f"package/{f}" for f in LICENCE_FILES}
                for member in tar.getmembers():
                    if member.name in wanted and member.isfile():
                        target = dest / member.name.removeprefix("package/")
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(tar.extractfile(member).read())
    sums = {a.local: sha256(vendor / a.local) for a in ASSETS}
    (vendor / SUMS).write_text(json.dumps(sums, indent=1, sort_keys=True) + "\n")
    for local, digest in sums.items():
        print(f"{digest}  {local}")


def screenshot(html_dir: Path, out: Path, page: str = "", *, size=(1400, 1000), budget_ms=20000) -> None:
    """Render ``html_dir/index.html#page`` in headless Chromium into ``out`` (PNG).

    The page is served from 127.0.0.1; every other host is unreachable for the browser
    (all requests go to a dead proxy and every name resolves to nothing), so the picture
    shows what a machine without internet access sees.
    """
    import functools
    import threading

    browser = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if browser is None:
        sys.exit("--screenshot needs Chromium (Debian: apt-get install chromium)")
    handler = functools.partial(_QuietHandler, directory=str(html_dir))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/index.html" + (f"#{page}" if page else "")
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--window-size={size[0]},{size[1]}", "--proxy-server=127.0.0.1:9",
               "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
               f"--virtual-time-budget={budget_ms}", f"--screenshot={Path(out).resolve()}", url]
        subprocess.run(cmd, check=True, capture_output=True, timeout=180)
        server.shutdown()
    served = _QuietHandler.served
    vendored = sorted(p for p in served if p.startswith("/vendor/"))
    print(f"{url} -> {out}: served {len(served)} files, {len(vendored)} of {len(ASSETS)} vendored ones, "
          f"{sum(p.startswith('/graphs/') for p in served)} graph data files")
    missing = {f"/vendor/{a.local}" for a in ASSETS} - set(vendored)
    if missing:
        raise RuntimeError(f"the page did not load {sorted(missing)}")


import http.server  # noqa: E402  (only the screenshot needs it)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the dashboard and records which files the page asked for."""

    served: set = set()

    def do_GET(self):
        type(self).served.add(self.path.split("?")[0])
        super().do_GET()

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def fill_history(config: Path, commits: str, steps: int | None, bench: str | None = None,
                 kinds: str | None = None) -> None:
    """``asv run --skip-existing`` over ``commits`` of each regression-check group (those
    of ``kinds``, comma-separated, if given) or of the pattern ``bench``."""
    import os

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from check_regressions import CHECKS, Check

    groups = [c for c in CHECKS if kinds is None or c.kind in kinds.split(",")]
    for check in [Check("custom", bench)] if bench else groups:
        cmd = [sys.executable, "-m", "asv", "run", "--config", str(config), "--skip-existing", "--show-stderr",
               "--bench", check.bench, *check.asv_args, *(["--steps", str(steps)] if steps else []), commits]
        print("+", " ".join(cmd[2:]), flush=True)
        env = dict(os.environ, **dict(check.env), CCBENCH_BENCH_QUICK="1")
        # A commit that cannot be built or benchmarked leaves a gap in the graphs, not an error.
        subprocess.run(cmd, cwd=config.parent, env=env, check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", action="store_true", help="serve the dashboard at http://127.0.0.1:PORT")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--history", metavar="RANGE", help="first benchmark the commits of RANGE (e.g. main~20..main)")
    parser.add_argument("--steps", type=int, help="with --history: at most this many commits, evenly spaced")
    parser.add_argument("--bench", help="with --history: asv --bench pattern instead of the regression check's")
    parser.add_argument("--kinds", help="with --history: only these regression-check groups, e.g. ratio")
    parser.add_argument("--refresh-vendor", action="store_true", help="re-fetch vendor/ from npm and exit")
    parser.add_argument("--screenshot", metavar="PNG", help="render the published page offline in headless Chromium")
    parser.add_argument("--page", default="", help="with --screenshot: the page's #fragment, e.g. a benchmark name")
    parser.add_argument("--no-publish", action="store_true", help="use the html directory as it is")
    parser.add_argument("--config", default=str(ROOT / "asv.conf.json"), help="asv config (default: the repo's)")
    args, asv_args = parser.parse_known_args(argv)
    if args.refresh_vendor:
        refresh_vendor()
        return 0
    config = Path(args.config).resolve()
    subprocess.run([sys.executable, "-m", "asv", "machine", "--yes"], cwd=config.parent, check=True,
                   stdout=subprocess.DEVNULL)
    if args.history:
        fill_history(config, args.history, args.steps, args.bench, args.kinds)
    conf = json.loads(_strip_comments(config.read_text()))
    html_dir = config.parent / conf["html_dir"]
    if not args.no_publish:
        results_dir = config.parent / conf.get("results_dir", "results")
        if not stored_results(results_dir):
            print(NO_RESULTS.format(results_dir=results_dir), file=sys.stderr)
            return 1
        status = subprocess.run([sys.executable, "-m", "asv", "publish", "--config", str(config), *asv_args],
                                cwd=config.parent, check=False).returncode
        if status:
            print(f"publish.py: asv publish failed (exit status {status}); see its output above", file=sys.stderr)
            return status
        install(html_dir)
        print(f"dashboard written to {html_dir}: open {html_dir / 'index.html'} (no server, no internet needed)")
    if args.screenshot:
        screenshot(html_dir, Path(args.screenshot), args.page)
    if args.serve:
        import functools
        import http.server

        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(html_dir))
        with http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler) as server:
            print(f"serving http://127.0.0.1:{args.port}/ (Ctrl-C stops)", flush=True)
            server.serve_forever()
    return 0


#: What to run first when nothing is stored (``asv run --python=same`` and the smoke run
#: store nothing: asv cannot tell which commit an existing environment holds).
NO_RESULTS = ("publish.py: no benchmark results stored in {results_dir}; store some first with "
              "`asv run --python=same --set-commit-hash $(git rev-parse HEAD)` "
              "(or `python tests/benchmarks/publish.py --history main~5..main`)")


def stored_results(results_dir: Path) -> list[Path]:
    """asv result files under ``results_dir`` (``<machine>/<commit>-<env>.json``; the
    machine descriptions and ``benchmarks.json`` are not results)."""
    return sorted(p for p in Path(results_dir).glob("*/*.json") if p.name != "machine.json")


def _strip_comments(text: str) -> str:
    """asv.conf.json allows ``//`` comment lines."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


if __name__ == "__main__":
    sys.exit(main())
