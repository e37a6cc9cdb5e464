"""The active track's site (ccbench/reporting/active_site.py): pages per data set and entry, from the page's numbers."""

import re

import numpy as np
import pandas as pd
import pytest

from ccbench.reporting import write_active_report
from test_active_report import _rows

EVIL = "<b>evil</b>"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base = np.array([0.3, 0.4, 0.5, 0.6, 0.2, 0.45])
    sets = ("a", "b", "c", "d", "e", EVIL)
    rows = pd.concat([_rows({("random", "pck_means"): base, ("npu", "pck_means"): base + np.arange(1, 7) / 100},
                            sets, noise=rate) for rate in (0.0, 0.1)], ignore_index=True)
    root = tmp_path_factory.mktemp("active")
    paths = write_active_report(rows, root / "page", figures=True, site=root / "site")
    return root, paths


def test_the_index_links_every_data_set_and_entry_page_and_each_exists(site):
    root, paths = site
    index = paths["site"].read_text()
    pages = set(re.findall(r'href="((?:dataset|entry)-[^"]+\.html)"', index))
    assert {p.split("-", 1)[0] for p in pages} == {"dataset", "entry"}
    assert len([p for p in pages if p.startswith("dataset-")]) == 6
    assert len([p for p in pages if p.startswith("entry-")]) == 2
    for name in pages:
        assert (root / "site" / name).is_file(), name


def test_the_site_prints_the_page_s_effect_and_a_row_s_text_is_escaped(site):
    root, paths = site
    index = paths["site"].read_text()
    # npu is ahead of random by 0.01..0.06 on the six sets: the mean difference 0.035, as on the page
    assert "0.035" in index and "0.035" in (root / "page" / "index.md").read_text()
    entry = next((root / "site").glob("entry-npu*.html")).read_text()
    assert "random/pck_means" in entry and "0.035" in entry
    assert "&lt;b&gt;evil&lt;/b&gt;" in index
    for page in (root / "site").glob("*.html"):
        assert EVIL not in page.read_text()
        assert "<" not in page.name and ">" not in page.name
    # the comparison with random at each noise rate reaches the entry's page: one row per rate
    assert "Against random at each noise rate" in entry
    section = entry.split("Against random at each noise rate", 1)[1].split("</table>", 1)[0]
    assert section.count("<tr>") == 3  # the header and the rates 0 % and 10 %


def test_a_data_set_page_links_its_figure_and_a_partial_track_says_so_on_every_page(site):
    root, paths = site
    page = (root / "site" / "dataset-a.html").read_text()
    href = re.search(r'href="([^"]+\.png)"', page).group(1)
    assert (root / "site" / href).resolve().is_file() and href.startswith("../page/curves_")
    # these rows are not experiment=active's grid: the page estimates the track's cost, the site's banner says so
    for html in (root / "site").glob("*.html"):
        assert "Estimate, not a measurement" in html.read_text()
