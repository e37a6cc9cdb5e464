"""The report's section against the certified k-means lower bound (ccbench/reporting/bound_gap.py),
on hand-made rows: the gap's formula, the loud flag for a feasible objective below the bound, missing
bounds shown as missing, text escaped, and the section wired into the HTML page."""

import numpy as np
import pandas as pd
import pytest
from ccbench.reporting.bound_gap import BELOW_TOLERANCE, bound_section_html, bound_table, gap_figure, has_bound

BUG = "BUG: feasible objective below the certified bound"


def _rows(**columns):
    n = len(next(iter(columns.values())))
    base = {"status": ["ok"] * n, "dataset.name": ["d"] * n, "constraints.configuration": list(range(n)),
            "constraints.replicate": [0] * n, "method_label": ["m"] * n, "fit_time": [1.0] * n,
            "violated_constraints": [0] * n}
    return pd.DataFrame({**base, **columns})


def test_the_gap_is_inertia_minus_bound_over_bound():
    data = _rows(inertia=[110.0, 84.0, 10.0], lower_bound=[100.0, 80.0, 8.0])
    table = bound_table(data)
    np.testing.assert_allclose(table["gap"], [0.10, 0.05, 0.25])
    # independent route: the ratio inertia / bound minus one
    np.testing.assert_allclose(table["gap"], data["inertia"] / data["lower_bound"] - 1)
    assert (table["flag"] == "").all()


def test_a_feasible_objective_below_the_bound_is_flagged_as_a_bug_loudly():
    data = _rows(inertia=[99.0, 100.0], lower_bound=[100.0, 100.0], method_label=["broken", "tight"])
    table = bound_table(data)
    assert table.set_index("method")["flag"].to_dict() == {"broken": BUG, "tight": ""}  # equal is not below
    page = bound_section_html(table)
    assert "1 feasible objective(s) below the certified lower bound" in page
    assert "broken: inertia 99 &lt; bound 100" in page


def test_only_a_real_shortfall_is_a_bug_not_rounding():
    bound = 1e4
    data = _rows(inertia=[bound * (1 - BELOW_TOLERANCE / 10), bound * (1 - 10 * BELOW_TOLERANCE)],
                 lower_bound=[bound, bound])
    assert list(bound_table(data)["flag"]) == ["", BUG]


def test_an_infeasible_row_below_the_bound_is_not_a_bug_and_stays_out_of_the_figure():
    # the bound holds over clusterings meeting every constraint: unconstrained k-means may undercut it
    data = _rows(inertia=[90.0, 105.0], lower_bound=[100.0, 100.0], violated_constraints=[6, 0],
                 method_label=["kmeans", "pccc"])
    table = bound_table(data)
    assert table.set_index("method")["flag"].to_dict() == {"kmeans": "infeasible", "pccc": ""}
    assert "below the certified" not in bound_section_html(table)
    ax = gap_figure(table).axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["kmeans\n(no feasible row)", "pccc"]


def test_unknown_feasibility_is_never_called_a_bug():
    data = _rows(inertia=[90.0], lower_bound=[100.0]).drop(columns="violated_constraints")
    assert list(bound_table(data)["flag"]) == ["violations unknown"]


def test_a_missing_bound_is_shown_as_missing_not_as_a_number():
    data = _rows(inertia=[110.0, 50.0], lower_bound=[np.nan, 0.0])
    table = bound_table(data)
    assert table["gap"].isna().all()  # no bound, and a zero bound gives no relative gap
    assert list(table["flag"]) == ["no bound", ""]
    page = bound_section_html(table)
    assert page.count("<em>missing</em>") == 3  # bound of row 1, gap of rows 1 and 2
    assert "nan" not in page.lower()


def test_text_from_rows_is_escaped():
    data = _rows(inertia=[110.0], lower_bound=[100.0], method_label=["<script>alert(1)</script>"])
    data["dataset.name"] = ["<b>x</b>&"]
    page = bound_section_html(bound_table(data))
    assert "<script>" not in page and "<b>x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;b&gt;x&lt;/b&gt;&amp;" in page


def test_failed_trials_are_left_out_and_no_bound_column_means_no_section():
    data = _rows(inertia=[110.0, np.nan], lower_bound=[100.0, np.nan])
    data.loc[1, "status"] = "error"
    assert len(bound_table(data)) == 1
    assert not has_bound(data.drop(columns="lower_bound"))
    assert not has_bound(data.assign(lower_bound=np.nan))
    assert has_bound(data)


@pytest.mark.slow  # ~5 s loaded: the whole generic page; pytest -m slow tests/test_pcsos_report.py
def test_the_html_page_carries_the_section_with_its_figure():
    from ccbench.reporting.html import html_page

    data = _rows(inertia=[110.0, 104.0], lower_bound=[100.0, 100.0], method_label=["a", "b"])
    data = data.assign(**{"method.name": ["a", "b"], "constraints.n_constraints": 10, "trial": 0})
    page = html_page(data, metrics=("inertia",), x="constraints.n_constraints")
    section = page.split('<h2 id="lower-bound">', 1)[1].split("<h2", 1)[0]
    assert "<td>0.1</td>" in section and "<td>0.04</td>" in section
    assert 'src="data:image/png;base64,' in section
