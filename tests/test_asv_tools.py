"""Fast tests of the asv helper scripts (publish.py, check_regressions.py); none runs asv."""

import base64
import hashlib
import re
from pathlib import Path

import pytest

from benchmarks import publish

ASV_INDEX = None
try:
    import asv

    ASV_INDEX = Path(asv.__file__).parent / "www" / "index.html"
except ImportError:  # pragma: no cover - asv is in the bench extra
    pass

FIXTURE = """<html><head>
<script src="https://code.jquery.com/jquery-3.3.1.min.js" integrity="sha256-abc" crossorigin="anonymous" onerror="js_load_failure()"></script>
<script language="javascript" type="text/javascript" src="asv.js"></script>
<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css" integrity="sha256-x" crossorigin="anonymous">
<a href="https://github.com/airspeed-velocity/asv/">asv</a>
</head></html>"""


def test_rewrite_points_cdn_tags_at_vendor_and_leaves_the_rest():
    out = publish.rewrite_html(FIXTURE)
    assert '<script src="vendor/jquery-3.3.1/dist/jquery.min.js" onerror="js_load_failure()"></script>' in out
    assert '<link rel="stylesheet" href="vendor/bootstrap-3.1.1/dist/css/bootstrap.min.css">' in out
    assert 'src="asv.js"' in out
    assert '<a href="https://github.com/airspeed-velocity/asv/">' in out  # a link, not a resource
    assert "integrity" not in out and "crossorigin" not in out


def test_rewrite_refuses_an_unknown_cdn_file():
    html = FIXTURE + '<script src="https://cdn.example.org/new-lib.js"></script>'
    with pytest.raises(ValueError, match=r"new-lib\.js.*ASSETS"):
        publish.rewrite_html(html)


@pytest.mark.skipif(ASV_INDEX is None, reason="asv not installed")
def test_installed_asv_page_is_fully_rewritten():
    out = publish.rewrite_html(ASV_INDEX.read_text())
    resources = re.findall(r"<(?:script|link)\b[^>]*\b(?:src|href)=\"([^\"]+)\"", out)
    assert not [r for r in resources if "://" in r]
    for asset in publish.ASSETS:
        assert f"vendor/{asset.local}" in out


def test_vendored_files_match_their_recorded_sums():
    publish.check_vendor()


def test_vendored_files_marked_identical_have_the_cdn_integrity_hash():
    if ASV_INDEX is None:
        pytest.skip("asv not installed")
    html = ASV_INDEX.read_text()
    checked = 0
    for asset in publish.ASSETS:
        if not asset.same_as_cdn:
            continue
        match = re.search(re.escape(asset.url) + r"\" integrity=\"(sha\d+)-([^\"]+)\"", html)
        algo, digest = match.group(1), match.group(2)
        data = (publish.VENDOR / asset.local).read_bytes()
        assert base64.b64encode(hashlib.new(algo, data).digest()).decode() == digest, asset.local
        checked += 1
    assert checked == 5


def test_install_copies_vendor_and_rewrites(tmp_path):
    (tmp_path / "index.html").write_text(FIXTURE)
    publish.install(tmp_path)
    assert (tmp_path / "vendor/jquery-3.3.1/dist/jquery.min.js").is_file()
    assert "vendor/jquery-3.3.1" in (tmp_path / "index.html").read_text()
