"""Reports from hand-made result tables: labels, mean ± std, markdown, plots, the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccbench.reporting import plots as rplots
from ccbench.reporting import summary as rsummary
from ccbench.reporting._format import method_labels
from ccbench.reporting.plots import plot_metric
from ccbench.reporting.summary import load, markdown_table, summarise, write_report
from ccbench.running.cli import main
from ccbench.running.results import ResultsStore, gather, write_results

X = "constraints.n_constraints"


def _rows(dataset, method, params, n_constraints, scores, status=None, noise_rate=0.0):
    status = status or ["ok"] * len(scores)
    out = []
    for t, (score, st) in enumerate(zip(scores, status)):
        row = {
            "dataset.name": dataset, "dataset.preprocess": "none", "method.name": method,
            **{f"method.{k}": v for k, v in params.items()},
            "constraints.name": "random_pairs", X: n_constraints,
            "noise.name": "none", "noise.rate": noise_rate, "seed": 0,
            "config_hash": f"{dataset}-{method}-{sorted(params.items())}-{n_constraints}-{noise_rate}",
            "trial": t, "status": st, "error": None if st == "ok" else f"{st}: something",
            "modified_rand": score if st == "ok" else np.nan, "fit_time": 0.1,
            "timestamp": f"2026-01-01T00:00:{t:02d}",
        }
        out.append(row)
    return out


@pytest.fixture
def data():
    rows = []
    for d in ("iris", "wine"):
        for n in (10, 40):
            rows += _rows(d, "kmeans", {"n_init": 10}, n, [0.80, 0.82, 0.84])
            rows += _rows(d, "scssap", {"confidence": 0.5}, n, [0.85, 0.90, 0.95])
            rows += _rows(d, "scssap", {"confidence": 1.0}, n, [0.70, 0.72, 0.74, 0.0],
                          status=["ok", "ok", "ok", "error"])
    return pd.DataFrame(rows)


def test_method_labels_name_only_the_varying_params(data):
    labels = set(method_labels(data))
    assert labels == {"kmeans", "scssap(confidence=0.5)", "scssap(confidence=1)"}


def test_summary_mean_std_over_ok_trials(data):
    s = summarise(data, "modified_rand", X)
    assert len(s) == 2 * 2 * 3
    row = s[(s.dataset == "wine") & (s.method_label == "scssap(confidence=1)") & (s.x == 40)].iloc[0]
    assert row["mean"] == pytest.approx(np.mean([0.70, 0.72, 0.74]))
    assert row["std"] == pytest.approx(np.std([0.70, 0.72, 0.74], ddof=1))
    assert (row["n_ok"], row["n_error"], row["n_trials"]) == (3, 1, 4)


def test_other_varying_settings_split_lines(data):
    noisy = pd.DataFrame(_rows("iris", "kmeans", {"n_init": 10}, 10, [0.5, 0.6], noise_rate=0.1))
    s = summarise(pd.concat([data, noisy], ignore_index=True), "modified_rand", X)
    assert set(s.loc[(s.method_label == "kmeans") & (s.dataset == "iris"), "setting"]) == {
        "noise.rate=0", "noise.rate=0.1"}
    assert set(s.loc[s.dataset == "wine", "setting"]) == {""}  # nothing varies in wine


def test_an_option_of_one_dataset_does_not_split_lines(data):
    data = data.copy()
    data["dataset.missing"] = np.where(data["dataset.name"] == "wine", "drop", None)
    s = summarise(data, "modified_rand", X)
    assert (s["setting"] == "").all()


def test_markdown_table_cells(data):
    table = markdown_table(summarise(data, "modified_rand", X), "modified_rand", X)
    lines = table.splitlines()
    assert f"| dataset | method | {X}=10 | {X}=40 |" in lines
    mean, std = np.mean([0.85, 0.90, 0.95]), np.std([0.85, 0.90, 0.95], ddof=1)
    cell = f"{mean:.3f} ± {std:.3f}"
    assert f"| iris | scssap(confidence=0.5) | {cell} | {cell} |" in lines
    assert any(line.startswith("| wine | scssap(confidence=1) |") and "(3/4)" in line for line in lines)


def test_plot_has_a_panel_per_dataset_and_a_line_per_label(data):
    fig = plot_metric(summarise(data, "modified_rand", X), "modified_rand", X)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["iris", "wine"]
    for ax in panels:
        assert len(ax.containers) == 3  # one errorbar line per method label
        legend = sorted(t.get_text() for t in ax.get_legend().get_texts())
        assert legend == ["kmeans", "scssap(confidence=0.5)", "scssap(confidence=1)"]
        # the plotted y values are the means
        means = sorted(float(np.mean(c.lines[0].get_ydata())) for c in ax.containers)
        assert means == pytest.approx(sorted([0.82, 0.90, 0.72]))


def test_categorical_x_axis(data):
    data = data.copy()
    data["constraints.name"] = np.where(data[X] == 10, "random_pairs", "per_class_pairs")
    s = summarise(data, "modified_rand", "constraints.name")
    assert "| dataset | method | constraints.name=per_class_pairs | constraints.name=random_pairs |" in \
        markdown_table(s, "modified_rand", "constraints.name")
    ax = plot_metric(s, "modified_rand", "constraints.name").axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["per_class_pairs", "random_pairs"]
    assert len(ax.containers) == 3


def test_gather_keeps_the_latest_row_of_a_duplicated_trial(data, tmp_path):
    old = data.iloc[:3].copy()
    new = old.copy()
    new["modified_rand"] = 0.1
    new["timestamp"] = "2027-01-01T00:00:00"
    write_results(new, tmp_path / "b" / "results.parquet")
    write_results(old, tmp_path / "a" / "results.parquet")
    got = gather(tmp_path)
    assert len(got) == 3
    assert (got["modified_rand"] == 0.1).all()


def test_rows_without_a_method_are_left_out_with_a_warning(data, tmp_path):
    """A directory that also holds foreign results files (e.g. a parent of several sweeps)."""
    write_results(data, tmp_path / "run" / "results.parquet")
    write_results(pd.DataFrame({"config_hash": ["h"], "trial": [0], "status": ["ok"]}),
                  tmp_path / "other" / "results.parquet")
    with pytest.warns(UserWarning, match="left out 1 row"):
        got = load(tmp_path)
    assert len(got) == len(data) and got["method_label"].notna().all()
    with pytest.raises(ValueError, match="not ccbench run results"):
        load(tmp_path / "other")


def test_store_replaces_rows_by_key(tmp_path):
    path = tmp_path / "results.parquet"
    store = ResultsStore(path)
    store.add({"config_hash": "h", "trial": 0, "status": "error"})
    store.add({"config_hash": "h", "trial": 1, "status": "ok"})
    store.flush(force=True)
    again = ResultsStore(path)
    assert again.rows_of("h")["status"].to_dict() == {0: "error", 1: "ok"}
    again.add({"config_hash": "h", "trial": 0, "status": "ok"})
    again.flush(force=True)
    assert ResultsStore(path).rows_of("h")["status"].to_dict() == {0: "ok", 1: "ok"}
    assert not list(tmp_path.glob(".*tmp"))  # no temporary file left behind


def test_report_cli_writes_files(data, tmp_path, capsys):
    for i, (_, part) in enumerate(data.groupby("config_hash")):
        write_results(part, tmp_path / "sweep" / str(i) / "results.parquet")
    out = tmp_path / "out"
    assert main(["report", str(tmp_path / "sweep"), "--x", X, "--out", str(out)]) == 0
    md = (out / "summary.md").read_text()
    assert "| iris | kmeans |" in md and "## Problems" in md and "error: something" in md
    summary = pd.read_parquet(out / "summary.parquet")
    pd.testing.assert_frame_equal(
        summary.reset_index(drop=True),
        summarise(load(tmp_path / "sweep"), "modified_rand", X).reset_index(drop=True),
        check_dtype=False,
    )
    import matplotlib.image

    img = matplotlib.image.imread(out / "modified_rand.png")
    assert img.ndim == 3 and img.shape[1] > img.shape[0]  # two panels side by side
    assert "summary.md" in capsys.readouterr().out


def test_report_rejects_unknown_metric(data, tmp_path):
    with pytest.raises(ValueError, match="not a results column"):
        write_report(data, tmp_path, metrics=["no_such_metric"], x=X)


def test_plugins_cli(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "kmeans" in out and "needs k" in out
    assert main(["plugins", "--all"]) == 0
    out = capsys.readouterr().out
    for name in ("iris", "random_pairs", "label_noise", "modified_rand"):
        assert name in out


def _replicate_rows():
    import pandas as pd

    rows = []
    for seed in (0, 1):
        for p in (1.0, 2.0):
            rows.append({"dataset.name": "g", "dataset.seed": seed, "method.name": "scap", "method.p": p,
                         "status": "ok", "errors": p + seed, "fit_time": 0.1})
    return pd.DataFrame(rows)


def test_pool_averages_replicate_settings_into_one_line():
    data = _replicate_rows()
    split = rsummary.summarise(data, "errors", "method.p")
    assert split["setting"].nunique() == 2  # one line per seed without pooling
    pooled = rsummary.summarise(data, "errors", "method.p", pool=["dataset.seed"])
    assert pooled["setting"].nunique() == 1
    assert pooled.set_index("x")["mean"].to_dict() == {1.0: 1.5, 2.0: 2.5}


def test_paper_numbers_sit_beside_ours():
    summary = rsummary.summarise(_replicate_rows(), "errors", "method.p", pool=["dataset.seed"])
    paper = {"source": "Table 1", "metric": "errors", "method": "scap", "values": {1: 7, 2: 3}}
    table = rsummary.paper_table(summary, paper)
    assert "| g | 1 | 1.500 ± 0.707 | 7 |" in table
    assert "| g | 2 | 2.500 ± 0.707 | 3 |" in table


def test_many_lines_share_one_legend_with_colour_by_method_and_marker_by_setting():
    import pandas as pd

    rows = [
        {"dataset.name": "d", "method.name": "m", "method.c": c, "noise.rate": r,
         "constraints.n_constraints": n, "status": "ok", "modified_rand": c + r + n / 100}
        for c in (0.0, 0.1, 0.5, 0.9) for r in (0.05, 0.1) for n in (50, 100)
    ]
    summary = rsummary.summarise(pd.DataFrame(rows), "modified_rand", "constraints.n_constraints")
    fig = rplots.plot_metric(summary, "modified_rand", "constraints.n_constraints")
    assert len(fig.legends) == 1 and fig.axes[0].get_legend() is None
    assert len(fig.legends[0].get_texts()) == 8
    lines = {c.get_label(): c.lines[0] for c in fig.axes[0].containers}
    a, b = lines["m(c=0.1) [noise.rate=0.05]"], lines["m(c=0.1) [noise.rate=0.1]"]
    from matplotlib.colors import to_hex

    assert to_hex(a.get_color()) == to_hex(b.get_color()) and a.get_marker() != b.get_marker()


def test_a_bug_in_the_report_is_a_traceback_not_a_user_error(monkeypatch, tmp_path):
    # numpy's ValueError from an assignment inside ccbench is no message for the user: it must not become
    # "ccbench report: error: assignment destination is read-only" with exit status 2 and no location
    from ccbench.running import cli

    def buggy(args):
        values = pd.Series([1.0, 2.0]).to_numpy()
        values[0] = 0.0  # pandas 3: read-only
        return 0

    monkeypatch.setattr(cli, "_parser", _parser_with(cli, buggy))
    with pytest.raises(ValueError, match="read-only"):
        cli.main(["report", str(tmp_path)])
    # a ValueError ccbench raises for the user stays one line, exit 2: test_report_export's unknown --format


def _parser_with(cli, func):
    original = cli._parser

    def parser():
        p = original()
        p.set_defaults(func=func)
        for action in p._subparsers._group_actions:
            for sub in action.choices.values():
                sub.set_defaults(func=func)
        return p
    return parser


def test_report_on_a_missing_directory_is_one_clear_line(capsys, tmp_path):
    from ccbench.running.cli import main

    assert main(["report", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert "no such results file or directory" in err and "Traceback" not in err


def test_a_parameter_left_at_its_default_is_labelled_with_the_default():
    import pandas as pd

    from ccbench.reporting._format import method_labels

    data = pd.DataFrame({"method.name": ["ap", "ap", "kmeans"], "method.damping": [None, 0.9, None]})
    assert method_labels(data).tolist() == ["ap(damping=0.75)", "ap(damping=0.9)", "kmeans"]


# -- issue 30 item 8: plots ------------------------------------------------------------------


def _summary(means: dict, stds: dict | None = None, n_ok: int = 10, xs=(50, 100), dataset="d") -> pd.DataFrame:
    """A summary table by hand: ``means[label] = [mean at each x]``."""
    rows = []
    for label, values in means.items():
        for x, mean in zip(xs, values):
            rows.append({"dataset": dataset, "method_label": label, "setting": "", "x": x, "metric": "modified_rand",
                         "mean": mean, "std": (stds or {}).get(label, 0.05), "n_ok": n_ok, "n_trials": n_ok})
    return pd.DataFrame(rows)


def _lines(ax) -> dict:
    return {c.get_label(): c for c in ax.containers}


def test_identical_curves_get_distinct_markers_line_styles_and_stay_visible():
    from matplotlib.colors import to_hex

    labels = [f"m{i}" for i in range(8)]
    fig = plot_metric(_summary({m: [0.6, 0.7] for m in labels}), "modified_rand", X)  # all on top of each other
    lines = {k: c.lines[0] for k, c in _lines(fig.axes[0]).items()}
    assert len({ln.get_marker() for ln in lines.values()}) == 8
    assert len({str(ln.get_linestyle()) + str(ln.get_dashes() if hasattr(ln, "get_dashes") else "")
                for ln in lines.values()}) >= 4
    assert len({(ln.get_marker(), ln.get_linestyle()) for ln in lines.values()}) == 8
    assert len({to_hex(ln.get_color()) for ln in lines.values()}) == 8
    # the data are the true values, but on screen each curve sits beside the others
    for ln in lines.values():
        assert ln.get_xdata().tolist() == [50, 100] and ln.get_ydata().tolist() == [0.6, 0.7]
    fig.canvas.draw()
    on_screen = {round(float(ln.get_transform().transform([[50, 0.6]])[0, 0]), 1) for ln in lines.values()}
    assert len(on_screen) == 8


def test_a_single_x_value_is_a_dot_chart_not_one_vertical_line():
    summary = _summary({"a": [0.6], "b": [0.7], "c": [0.8]}, xs=(5,))
    fig = plot_metric(summary, "modified_rand", "constraints.per_class")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]  # one row per method
    points = sorted((float(c.lines[0].get_xdata()[0]), float(c.lines[0].get_ydata()[0])) for c in ax.containers)
    assert points == [(0.6, 0.0), (0.7, 1.0), (0.8, 2.0)]  # the metric runs along the axis
    assert ax.get_xlabel() == "modified Rand index" and "labeled points per class = 5" in fig._suptitle.get_text()
    from ccbench.reporting.plots import _draw_paper

    _draw_paper(fig, {"method": "b", "values": {5: 0.75}})  # the paper's number on its method's row
    (cross,) = [ln for ln in ax.lines if ln.get_marker() == "x"]
    assert (cross.get_xdata().tolist(), cross.get_ydata().tolist()) == ([0.75], [1])
    # one x per data set but different between data sets (nnc_table2: 5 per class, 2 on ecoli) is dots too
    two = pd.concat([summary, _summary({"a": [0.5], "b": [0.4], "c": [0.3]}, xs=(2,), dataset="e")])
    fig = plot_metric(two, "modified_rand", "constraints.per_class")
    assert [ax.get_title() for ax in fig.axes if ax.get_visible()] == ["d (5)", "e (2)"]


def test_error_bars_are_a_confidence_interval_of_the_mean_clipped_to_the_metric_range():
    import scipy.stats

    summary = _summary({"low": [0.02, 0.5], "high": [0.97, 0.5]}, stds={"low": 0.2, "high": 0.2}, n_ok=5)
    fig = plot_metric(summary, "modified_rand", X)
    ax = fig.axes[0]
    half = scipy.stats.t.ppf(0.975, 4) * 0.2 / np.sqrt(5)  # 0.248, not the std
    for label, c in _lines(ax).items():
        (bars,) = c.lines[2]
        ends = {float(seg[0][0]): (float(seg[0][1]), float(seg[1][1])) for seg in bars.get_segments()}
        assert ends[100.0] == pytest.approx((0.5 - half, 0.5 + half))  # inside the range: the t interval
        lo, hi = ends[50.0]
        assert 0.0 <= lo and hi <= 1.0  # a Rand index is in [0, 1], so is its interval
    assert _lines(ax)["low"].lines[2][0].get_segments()[0][0][1] == 0.0
    assert _lines(ax)["high"].lines[2][0].get_segments()[0][1][1] == 1.0
    bottom, top = ax.get_ylim()
    assert bottom >= 0.0 and top <= 1.0


def test_axes_are_labelled_in_words():
    fig = plot_metric(_summary({"a": [0.6, 0.7]}), "modified_rand", X)
    assert fig.axes[0].get_xlabel() == "number of constraints"
    assert fig.axes[0].get_ylabel() == "modified Rand index"
    from ccbench.reporting._format import axis_label

    assert axis_label("noise.rate") == "noise rate" and axis_label("method.max_iter") == "max iter (method)"


def test_one_colour_per_method_on_the_whole_page(monkeypatch):
    """The CD diagram and the line plots of report.html give a method the same colour, even when a
    method is missing from the CD diagram (no complete block) and so shifts everyone's index."""
    from matplotlib.colors import to_hex

    from ccbench.reporting import html as report_html

    rng = np.random.default_rng(0)
    rows = []
    for d in ("d1", "d2", "d3", "d4"):
        for n in (10, 40):
            for m, shift in (("alpha", 0.0), ("beta", 0.1), ("gamma", 0.2), ("delta", 0.3), ("aaa", 0.05)):
                for t in range(6):
                    failed = m == "aaa" and n == 40  # aaa: in the plots (x = 10), not in the CD (at 40)
                    rows.append({"dataset.name": d, "method.name": m, "constraints.name": "random_pairs", X: n,
                                 "noise.name": "none", "x_axis": X, "trial": t, "trial_seed": 100 * n + t,
                                 "config_hash": f"{d}-{m}-{n}", "status": "error" if failed else "ok",
                                 "error": "boom" if failed else None,
                                 "ari": np.nan if failed else 0.3 + shift + rng.normal(0, 0.01)})
    figures = []
    monkeypatch.setattr(report_html, "_png", lambda fig: figures.append(fig) or "")
    report_html.html_page(pd.DataFrame(rows), metrics=["ari"], x=X)
    plot, cd = figures
    in_plot = {label: to_hex(c.lines[0].get_color()) for label, c in _lines(plot.axes[0]).items()}
    in_cd = {t.get_text().split(" (")[0].split(") ")[-1]: to_hex(t.get_color()) for t in cd.axes[0].texts
             if t.get_text().strip()}
    assert set(in_cd) == {"alpha", "beta", "gamma", "delta"}
    assert all(in_cd[m] == in_plot[m] for m in in_cd)
    assert len(set(in_plot.values())) == 5


def test_summary_counts_only_ok_trials_in_means_and_in_not_converged(data):
    """The grouped summary (one pass per quantity): a failed trial that still carries a metric value and a
    fit time is left out of the mean, the std and the fit time; a failed trial whose method also said
    it did not converge is not counted as a non-converged ok trial."""
    extra = pd.DataFrame(_rows("iris", "kmeans", {"n_init": 10}, 10, [0.1, 0.9, 0.5, 0.7],
                               status=["error", "ok", "ok", "ok"]))
    extra["config_hash"] += "-extra"
    extra["method.n_init"] = 20
    extra.loc[0, ["modified_rand", "fit_time"]] = [0.1, 50.0]  # a value on a failed row
    extra["converged"] = [False, False, True, None]
    s = summarise(pd.concat([data, extra], ignore_index=True), "modified_rand", X)
    row = s[s.method_label == "kmeans(n_init=20)"].iloc[0]
    assert row["mean"] == pytest.approx(np.mean([0.9, 0.5, 0.7]))
    assert row["std"] == pytest.approx(np.std([0.9, 0.5, 0.7], ddof=1))
    assert row["fit_time_mean"] == pytest.approx(0.1)
    assert (row["n_ok"], row["n_error"], row["n_trials"], row["n_not_converged"]) == (3, 1, 4, 1)
    assert s[s.method_label == "kmeans(n_init=10)"]["n_not_converged"].eq(0).all()  # no converged column there


def test_a_figure_of_many_data_sets_shows_the_first_ones_and_says_how_many_more(data):
    many = pd.concat([data.assign(**{"dataset.name": f"set_{i:03d}"}) for i in range(rplots.MAX_PANELS + 5)],
                     ignore_index=True)
    fig = plot_metric(summarise(many, "modified_rand", X), "modified_rand", X)
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert titles == [f"set_{i:03d}" for i in range(rplots.MAX_PANELS)]
    assert "5 more are in the tables" in fig.get_suptitle()


def test_a_dot_chart_of_one_method_on_many_data_sets_keeps_room_for_every_panel():
    # the PCCC pilot (one method, 23 data sets, one x): 8 rows of panels got 3.1 inches in all, constrained
    # layout collapsed the axes ("axes sizes collapsed to zero") and the report's figure was unreadable
    import io
    import warnings

    summary = pd.concat([_summary({"pccc": [0.5 + i / 100]}, xs=(5,), dataset=f"set{i:02d}") for i in range(23)])
    fig = plot_metric(summary, "modified_rand", "constraints.per_class")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # matplotlib warns when the layout collapses
        fig.savefig(io.BytesIO(), format="png", dpi=100)  # as the report draws it (the layout runs here)
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert len(shown) == 23
    dpi = fig.dpi
    assert min(ax.get_window_extent().height for ax in shown) >= 0.25 * dpi  # every panel at least 1/4 inch tall
