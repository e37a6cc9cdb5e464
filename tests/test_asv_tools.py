"""Fast tests of the asv helper scripts (publish.py, check_regressions.py); none runs asv."""

import base64
import hashlib
import json
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


# --------------------------------------------------------------------------- check_regressions

from benchmarks import check_regressions as cr  # noqa: E402

RATIO = "bench_ap.APVsSklearn.track_ratio_vs_sklearn"
MEM = "bench_ap.APFit.track_fit_peak_mb"


def result_file(tmp_path, name, ratios, mem):
    """An asv 0.6 result file (``result_columns`` layout) with two stable benchmarks."""
    data = {
        "commit_hash": "0" * 40, "version": 2, "result_columns": ["result", "params", "version"],
        "results": {
            RATIO: [ratios, [["500", "2000"], ["'numba'", "'numpy'"]], "v"],
            MEM: [mem, [["500", "2000"], ["'numba'"]], "v"],
            "bench_ap.APFit.time_fit": [[1.0, 9.0], [["500", "2000"], ["'numba'"]], "v"],
        },
    }
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def test_load_values_expands_parameter_grid_in_asv_order(tmp_path):
    values = cr.load_values(result_file(tmp_path, "a", [0.2, 1.0, 0.3, 1.0], [10.0, None]))
    assert values[(RATIO, ("2000", "'numba'"))] == 0.3
    assert values[(RATIO, ("500", "'numpy'"))] == 1.0
    assert (MEM, ("2000", "'numba'")) not in values  # None: skipped / failed


def test_compare_flags_only_changes_beyond_the_factor(tmp_path):
    factor = cr.FACTORS["ratio"]
    base = cr.load_values(result_file(tmp_path, "b", [0.2, 1.0, 0.3, 1.0], [10.0, 100.0]))
    head = cr.load_values(result_file(tmp_path, "h", [0.2 * 5, 1.0, 0.3 * factor * 1.01, 1.0 * factor * 0.99],
                                      [10.0, 100.0]))
    rows, status = cr.compare(base, head)
    states = {(r[0], r[1]): r[-1] for r in rows}
    assert status == 1
    assert states[(RATIO, ("2000", "'numpy'"))] == "ok"
    assert states[(RATIO, ("2000", "'numba'"))] == "SLOWER"
    assert (RATIO, ("500", "'numba'")) not in states  # n = 500 is not checked
    assert not any(r[0].endswith("time_fit") for r in rows)  # absolute times are not checked


def test_compare_memory_and_failures(tmp_path):
    base = cr.load_values(result_file(tmp_path, "b", [0.2, 1.0, 0.3, 1.0], [10.0, 100.0]))
    larger = cr.load_values(result_file(tmp_path, "h", [0.2, 1.0, 0.3, 1.0], [10.0, 100.0 * cr.FACTORS["memory"] + 1]))
    assert cr.compare(base, larger)[1] == 1
    failed = cr.load_values(result_file(tmp_path, "f", [0.2, 1.0, None, 1.0], [10.0, 100.0]))
    rows, status = cr.compare(base, failed)
    assert status == 2 and ("failed" in [r[-1] for r in rows])
    assert cr.compare(base, base)[1] == 0


def test_main_compare_mode_exit_status(tmp_path, capsys):
    base = result_file(tmp_path, "b", [0.2, 1.0, 0.3, 1.0], [10.0, 100.0])
    slow = result_file(tmp_path, "h", [0.2, 1.0, 0.9, 1.0], [10.0, 100.0])
    assert cr.main(["--compare", str(base), str(base)]) == 0
    assert cr.main(["--compare", str(base), str(slow)]) == 1
    assert "SLOWER" in capsys.readouterr().out


def test_noise_reports_largest_spread_per_kind(tmp_path):
    runs = [result_file(tmp_path, f"r{i}", [0.2, 1.0, 0.2 + 0.01 * i, 1.0], [10.0, 100.0]) for i in range(3)]
    out = cr.noise(runs)
    assert "largest max/min of kind 'ratio': 1.100" in out
    assert "largest max/min of kind 'memory': 1.000" in out


def test_checked_benchmarks_are_the_stable_ones():
    assert cr.kind_of(RATIO, ("2000", "'numba'")) == "ratio"
    assert cr.kind_of("bench_scssap.SCSSAPVsAP.track_ratio_scssap_vs_ap", ("2000", "'numpy'")) == "ratio"
    assert cr.kind_of(RATIO, ("500", "'numba'")) is None  # too short to time on a loaded machine
    assert cr.kind_of("bench_ap.APFit.peakmem_fit", ("2000", "'numpy'")) == "memory"
    assert cr.kind_of("bench_scssap.SCSSAPFit.track_fit_peak_mb", ("2000", "0.1")) == "memory"
    assert cr.kind_of("bench_ap.APFit.peakmem_fit", ("500", "'numpy'")) is None
    assert cr.kind_of("bench_scap.SCAPFit.peakmem_fit", ("2000", "'dense'")) is None  # not "APFit"
    assert cr.kind_of("bench_ap.APFit.time_fit", ("2000", "'numba'")) is None
    assert cr.kind_of("bench_ap.APVsSklearn.track_ms_per_iteration", ("2000", "'numba'")) is None


def test_confirmation_keeps_a_regression_only_if_every_run_shows_it(tmp_path):
    base = cr.load_values(result_file(tmp_path, "b", [0.2, 1.0, 0.3, 1.0], [10.0, 100.0]))
    outlier = cr.load_values(result_file(tmp_path, "o", [0.2, 1.0, 0.6, 1.0], [10.0, 100.0]))
    normal = cr.load_values(result_file(tmp_path, "n", [0.2, 1.0, 0.31, 1.0], [10.0, 100.0]))
    slow = cr.load_values(result_file(tmp_path, "s", [0.2, 1.0, 0.55, 1.0], [10.0, 100.0]))
    assert cr.compare(base, outlier)[1] == 1
    assert cr.compare(base, cr.best_of(outlier, normal))[1] == 0
    assert cr.compare(base, cr.best_of(outlier, slow))[1] == 1
