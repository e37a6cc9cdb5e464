"""Reports from hand-made result tables: labels, mean ± std, markdown, plots, the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccbench.cli import main
from ccbench.report import load, markdown_table, method_labels, plot_metric, summarise, write_report
from ccbench.results import ResultsStore, gather, write_results

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
    from ccbench import report

    data = _replicate_rows()
    split = report.summarise(data, "errors", "method.p")
    assert split["setting"].nunique() == 2  # one line per seed without pooling
    pooled = report.summarise(data, "errors", "method.p", pool=["dataset.seed"])
    assert pooled["setting"].nunique() == 1
    assert pooled.set_index("x")["mean"].to_dict() == {1.0: 1.5, 2.0: 2.5}


def test_paper_numbers_sit_beside_ours():
    from ccbench import report

    summary = report.summarise(_replicate_rows(), "errors", "method.p", pool=["dataset.seed"])
    paper = {"source": "Table 1", "metric": "errors", "method": "scap", "values": {1: 7, 2: 3}}
    table = report.paper_table(summary, paper)
    assert "| g | 1 | 1.500 ± 0.707 | 7 |" in table
    assert "| g | 2 | 2.500 ± 0.707 | 3 |" in table


def test_many_lines_share_one_legend_with_colour_by_method_and_marker_by_setting():
    import pandas as pd

    from ccbench import report

    rows = [
        {"dataset.name": "d", "method.name": "m", "method.c": c, "noise.rate": r,
         "constraints.n_constraints": n, "status": "ok", "modified_rand": c + r + n / 100}
        for c in (0.0, 0.1, 0.5, 0.9) for r in (0.05, 0.1) for n in (50, 100)
    ]
    summary = report.summarise(pd.DataFrame(rows), "modified_rand", "constraints.n_constraints")
    fig = report.plot_metric(summary, "modified_rand", "constraints.n_constraints")
    assert len(fig.legends) == 1 and fig.axes[0].get_legend() is None
    assert len(fig.legends[0].get_texts()) == 8
    lines = {c.get_label(): c.lines[0] for c in fig.axes[0].containers}
    a, b = lines["m(c=0.1) [noise.rate=0.05]"], lines["m(c=0.1) [noise.rate=0.1]"]
    from matplotlib.colors import to_hex

    assert to_hex(a.get_color()) == to_hex(b.get_color()) and a.get_marker() != b.get_marker()


def test_report_on_a_missing_directory_is_one_clear_line(capsys, tmp_path):
    from ccbench.cli import main

    assert main(["report", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert "no such results file or directory" in err and "Traceback" not in err


def test_a_parameter_left_at_its_default_is_labelled_with_the_default():
    import pandas as pd

    from ccbench.report import method_labels

    data = pd.DataFrame({"method.name": ["ap", "ap", "kmeans"], "method.damping": [None, 0.9, None]})
    assert method_labels(data).tolist() == ["ap(damping=0.75)", "ap(damping=0.9)", "kmeans"]
