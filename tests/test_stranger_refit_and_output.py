"""A stranger's folder runs no code and no unbounded refit, its text is inert on the pages, a full disk is one
line, a method's bad output is caught where it enters, and every bad override is named (issue 54, items 12-17).
Hand-sized inputs only: every test here runs in well under 3 s."""

from __future__ import annotations

import json
import sys

import pandas as pd
import pytest

from ccbench import registry


# -- 12: a report never imports what a results folder names ------------------------------------------------------


_MARKS_ITS_IMPORT = """
from pathlib import Path
Path(__file__).with_suffix(".imported").write_text("ran")
"""


def test_a_report_does_not_import_the_modules_a_folders_plugins_column_names(throwaway_plugin, tmp_path, capsys):
    from ccbench.running.report_command import _load_row_plugins

    name = throwaway_plugin(_MARKS_ITS_IMPORT, register=False)  # importable here, never imported
    rows = pd.DataFrame({"plugins": [json.dumps([name]), json.dumps([name])], "status": ["ok", "ok"]})
    _load_row_plugins(rows, [])
    assert name not in sys.modules and not (tmp_path / f"{name}.imported").exists()
    err = capsys.readouterr().err
    assert repr(name) in err and "never imports what a results folder names" in err and "--plugin" in err


def test_a_module_the_user_names_with_plugin_is_loaded_and_not_warned_about(throwaway_plugin, tmp_path, capsys):
    from ccbench.running.report_command import _load_row_plugins

    name = throwaway_plugin(_MARKS_ITS_IMPORT, register=False)
    rows = pd.DataFrame({"plugins": [json.dumps([name])]})
    _load_row_plugins(rows, [name])
    assert (tmp_path / f"{name}.imported").read_text() == "ran"
    assert registry.get_plugin_manager().get_plugin(name) is not None
    assert capsys.readouterr().err == ""


# -- 13: a refit from a stranger's cell.json is checked by name and bounded in CPU time --------------------------


_SPINNER = """
import numpy as np
from ccbench import MethodSpec, hookimpl

class Spinner:  # no scikit-learn base: the refit worker imports only this module (a test under 3 s)
    '''Works ``n_init`` rounds per fit (a stranger's cell.json may ask for 10**7).'''
    def __init__(self, n_clusters=2, n_init=1, random_state=None):
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.random_state = random_state

    def fit(self, X, y=None, *, constraints=None):
        total = 0.0
        for _ in range(int(self.n_init)):
            total += float(np.sum(X))
        self.labels_ = np.arange(len(X)) % self.n_clusters
        self.embedding_ = np.asarray(X, dtype=float)
        return self

@hookimpl
def ccbench_methods():
    return [MethodSpec("spinner", Spinner, "works n_init rounds", needs_n_clusters=True)]
"""


def _cell(**method):
    return {"dataset": {"name": "iris"}, "method": {"name": "spinner", **method},
            "constraints": {"name": "random_pairs", "n_constraints": 10}, "noise": {"name": "none", "rate": 0.0}}


@pytest.mark.slow  # a real worker process (about 2-3 s of CPU): python -m pytest -m slow tests/test_stranger_refit_and_output.py
def test_a_refit_with_a_strangers_huge_parameter_is_stopped_at_its_cpu_limit_naming_it(throwaway_plugin):
    from ccbench.reporting import paper_figures as pf

    throwaway_plugin(_SPINNER)
    est, ds, _ = pf.refit_trial(_cell(n_init=3), trial_seed=1, limit=30)  # the worker refits a sane cell
    assert est.n_init == 3 and est.n_clusters == 3 and est.labels_.tolist() == (pd.RangeIndex(150) % 3).tolist()
    assert est.embedding_.shape == ds.X.shape  # fitted there, came back here
    with pytest.raises(ValueError) as info:
        pf.refit_trial(_cell(n_init=10**9), trial_seed=1, limit=0.5)
    text = str(info.value)
    assert "'spinner'" in text and "1000000000" in text and "0.5 s of CPU" in text and "--no-figures" in text


def test_a_refits_fit_goes_to_the_worker_under_the_limit_and_a_kill_is_named(throwaway_plugin, monkeypatch):
    """The fast route of the test above: a stand-in worker records what it is asked, and kills the fit when the
    parameters ask for more work than the limit allows (as the CPU clock would)."""
    from ccbench.isolation import TrialTimeout
    from ccbench.reporting import paper_figures as pf

    throwaway_plugin(_SPINNER)
    asked = []

    class Worker:
        def call(self, func, *args, timeout):
            asked.append((func.__name__, timeout))
            if func is pf._fit and args[0].n_init > 1000 * timeout:
                raise TrialTimeout(f"{timeout:g} s of CPU time reached; the worker was killed")
            return func(*args)

    monkeypatch.setattr(pf, "_runner", Worker())
    est, _, _ = pf.refit_trial(_cell(n_init=3), trial_seed=1, limit=7)
    assert est.n_init == 3 and asked == [("_import", None), ("_fit", 7.0)]  # only the fit counts against it
    with pytest.raises(ValueError) as info:
        pf.refit_trial(_cell(n_init=10**9), trial_seed=1)  # no limit given: the ceiling
    assert asked[-1] == ("_fit", pf.refit_cpu_limit())
    text = str(info.value)
    assert "'spinner'" in text and "1000000000" in text and "--no-figures" in text and "CCBENCH_REFIT_TIMEOUT" in text


def test_the_refit_limit_follows_the_rows_fit_time_and_never_passes_the_ceiling(monkeypatch):
    from ccbench.reporting import paper_figures as pf

    monkeypatch.delenv(pf.REFIT_TIMEOUT_ENV, raising=False)
    assert pf.refit_cpu_limit({"fit_cpu_time": 2.0}) == pf.REFIT_SLACK_SECONDS + pf.REFIT_FACTOR * 2.0
    assert pf.refit_cpu_limit({"fit_cpu_time": 1e9}) == pf.REFIT_CPU_SECONDS  # a stranger's claim cannot raise it
    assert pf.refit_cpu_limit({"fit_cpu_time": "lots"}) == pf.refit_cpu_limit({}) == pf.REFIT_CPU_SECONDS
    monkeypatch.setenv(pf.REFIT_TIMEOUT_ENV, "5")
    assert pf.refit_cpu_limit({"fit_cpu_time": 2.0}) == 5.0
    monkeypatch.setenv(pf.REFIT_TIMEOUT_ENV, "soon")
    with pytest.raises(ValueError, match="CCBENCH_REFIT_TIMEOUT='soon' is not a number"):
        pf.refit_cpu_limit({})


# -- 14: a method name cannot become a live link; a shipped folder's numbers are said to be as shipped ----------


_LINK = "[x](javascript:alert(1))"
_IMAGE = "![y](http://attacker.example/t.png)"


def _report_rows(label: str) -> pd.DataFrame:
    n = 4
    return pd.DataFrame({
        "dataset.name": ["iris"] * n, "method.name": [label] * n, "method_label": [label] * n,
        "constraints.name": ["random_pairs"] * n, "noise.name": ["none"] * n, "config_hash": ["h"] * n,
        "x_axis": ["constraints.n_constraints"] * n, "constraints.n_constraints": [10] * n,
        "status": ["ok", "ok", "error", "error"], "trial": [0, 1, 2, 3], "ari": [0.4, 0.6, float("nan"), float("nan")],
        "error": [None, None, f"ValueError: {_IMAGE}", f"ValueError: {_IMAGE}"], "source": ["a"] * n})


def _no_live_link(text: str) -> bool:
    """No markdown inline link or image: a "]" directly followed by "(" (escaped or not, since "\\](" would
    still close the text after an escaped backslash)."""
    return "](" not in text and "][" not in text


def test_a_method_name_that_is_a_markdown_link_stays_text_in_summary_md():
    from ccbench.reporting import summary as rsummary

    data = _report_rows(_LINK)
    x = "constraints.n_constraints"
    text = "\n".join([rsummary.markdown_table(rsummary.summarise(data, "ari", x), "ari", x),  # summary.md's parts
                      rsummary.problems_table(data)])
    assert "javascript:alert(1)" in text and "attacker.example" in text  # shown, as text
    assert _no_live_link(text)


def test_a_leaderboard_table_cell_keeps_a_link_as_text_and_the_html_page_shows_it_back():
    from ccbench.reporting.html import markdown_to_html
    from ccbench.reporting.origins import _frame_markdown  # every .md table of the leaderboard pages

    table = _frame_markdown(pd.DataFrame({"method": [_LINK, _IMAGE], "mean diff [95% CI]": ["+0.1 [0.0, 0.2]"] * 2}))
    assert _no_live_link(table) and "mean diff [95% CI]" in table and "+0.1 [0.0, 0.2]" in table
    page = markdown_to_html(table)
    assert "href" not in page and "<img" not in page
    assert "[x](javascript:alert(1))" in page and "![y](http://attacker.example/t.png)" in page  # as typed


def test_a_backslash_cannot_unescape_the_link():
    from ccbench.reporting._format import md_plain, md_text

    for text in (_LINK, "\\" + _LINK, "[x\\](javascript:alert(1))", "[x\\\\](javascript:alert(1))"):
        for escape in (md_text, md_plain):
            assert not re_link(escape(text)), (text, escape(text))
    assert re_link(_LINK) and re_link("[x\\\\](j)") and not re_link("[x\\](j)")  # the check itself


def re_link(text: str) -> bool:
    """A ``]`` that markdown reads as closing a link's text: preceded by an even number of backslashes (none,
    or escaped backslashes) and followed by ``(``."""
    import re

    return re.search(r"(?<!\\)(?:\\\\)*\]\(", text) is not None


def test_the_pages_say_a_shipped_folders_numbers_are_as_shipped_and_how_to_check_them():
    from ccbench.reporting.leaderboard import pages, sweep_coverage

    line = sweep_coverage([], _report_rows("kmeans"), shipped=(["STRANGER"], 3, 0))  # --with STRANGER
    assert "numbers of STRANGER are as shipped" in line and "ccbench report RERUN STRANGER --compare-sweeps" in line
    # every page closes with it (constant: a shipped folder regenerates its own pages unchanged)
    assert "are as shipped" in pages.AS_SHIPPED and "ccbench report RERUN SHIPPED --compare-sweeps" in pages.AS_SHIPPED


# -- 15: a report into a full disk is one line naming the folder -------------------------------------------------


def test_a_report_into_a_full_disk_is_one_line_naming_the_folder(tmp_path, monkeypatch, capsys):
    import contextlib
    import errno

    from ccbench.reporting import _safe
    from ccbench.running.cli import main
    from ccbench.running.results import write_results

    sweep = tmp_path / "sweep" / "job0"
    sweep.mkdir(parents=True)
    write_results(_report_rows("kmeans").assign(source=str(sweep)), sweep / "results.parquet")

    @contextlib.contextmanager
    def full_disk(path):  # what a write on a full disk raises: ENOSPC, no file name
        raise OSError(errno.ENOSPC, "No space left on device")
        yield  # pragma: no cover

    monkeypatch.setattr(_safe, "atomically", full_disk)
    out = tmp_path / "report"
    assert main(["report", str(tmp_path / "sweep"), "--metric", "ari", "--out", str(out), "--no-html",
                 "--no-figures"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"cannot write into {out} (" in err and "No space left on device" in err and "--out" in err


# -- 16: a method's bad output is caught where it enters, naming the method --------------------------------------


_BAD_OUTPUT = """
import numpy as np
from ccbench import MethodSpec, hookimpl

class Bad:
    '''Returns the labels ``kind`` names: a clustering that is not one.'''
    def __init__(self, kind="nan", n_clusters=2, random_state=None):
        self.kind, self.n_clusters, self.random_state = kind, n_clusters, random_state

    def fit(self, X, y=None, *, constraints=None):
        n = len(X)
        labels = (np.arange(n) % self.n_clusters).astype(float)
        if self.kind == "nan":
            labels[::7] = np.nan
        elif self.kind == "short":
            labels = labels[:-1]
        elif self.kind == "noise":
            labels[::5] = -1
        elif self.kind == "minus2":
            labels[3] = -2
        elif self.kind == "text":
            labels = labels.astype(str)
        self.labels_ = labels
        return self

@hookimpl
def ccbench_methods():
    return [MethodSpec("bad_output", Bad, "bad labels", needs_n_clusters=True),
            MethodSpec("noisy_output", Bad, "declares noise", needs_n_clusters=True, noise_label=True)]
"""


def _run_bad(module, tmp_path, method, kind):
    from ccbench.running.harness import run_job

    cell = {"dataset": {"name": "iris"}, "method": {"name": method, "kind": kind},
            "constraints": {"name": "random_pairs", "n_constraints": 10}, "noise": {"name": "none"},
            "n_trials": 1, "plugins": [module], "metrics": ["ari"]}
    return run_job(cell, out_dir=tmp_path / f"{method}_{kind}").iloc[0]


@pytest.mark.parametrize("kind, problem", [
    ("nan", "returned 22 label(s) that are not whole numbers (NaN, infinite or fractional; the first, point 0: nan)"),
    ("short", "returned labels_ of shape (149,) for 150 points"),
    ("minus2", "returned 1 label(s) below 0 (the first: -2)"),
    ("noise", "returned 30 label(s) below 0 (the first: -1)"),
    ("text", "returned labels_ of dtype <U32"),
])
def test_a_method_returning_no_clustering_is_an_error_row_naming_it_and_the_problem(throwaway_plugin, tmp_path,
                                                                                     kind, problem):
    module = throwaway_plugin(_BAD_OUTPUT).__name__
    row = _run_bad(module, tmp_path, "bad_output", kind)
    assert row["status"] == "error" and pd.isna(row.get("ari"))
    assert row["error"].startswith("MethodOutputError: method 'bad_output' ") and problem in row["error"]
    assert "Traceback" not in row["error"]


def test_minus_one_is_noise_only_for_a_method_that_declares_it(throwaway_plugin, tmp_path):
    import numpy as np

    from ccbench.running.protocol import MethodOutputError, checked_labels

    module = throwaway_plugin(_BAD_OUTPUT).__name__
    row = _run_bad(module, tmp_path, "noisy_output", "noise")
    assert row["status"] == "ok" and np.isfinite(row["ari"])
    with pytest.raises(MethodOutputError, match="below -1"):
        checked_labels(registry.get_method_spec("noisy_output"), [0, -2, 1], 3)
    assert checked_labels(registry.get_method_spec("bad_output"), np.array([0.0, 2.0, 1.0]), 3).tolist() == [0, 2, 1]
    assert checked_labels(registry.get_method_spec("bad_output"), [0, 2, 1], 3).dtype == np.intp


def test_every_label_minus_one_is_named_as_no_clustering_as_affinity_propagation_gives_it():
    import warnings

    import numpy as np

    from ccbench.registry import make_method
    from ccbench.running.protocol import MethodOutputError, checked_labels

    X = np.random.default_rng(0).normal(size=(30, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its ConvergenceWarning says the same
        fitted = make_method("ap", preference=-1e6, max_iter=1, convergence_iter=1).fit(X)
    assert (fitted.labels_ == -1).all() and not fitted.converged_
    with pytest.raises(MethodOutputError, match="returned no clustering: every label is -1 .*no exemplar emerged"):
        checked_labels(registry.get_method_spec("ap"), fitted.labels_, 30)
    with pytest.raises(MethodOutputError, match="below 0"):  # some -1 among clusters: the general message
        checked_labels(registry.get_method_spec("ap"), np.r_[-1, np.zeros(29, int)], 30)


# -- 17: every bad override is one line; a broken plugin's warning is one line -----------------------------------


def test_every_bad_override_is_named_not_only_the_first():
    from ccbench.running.cli import precheck

    problems = precheck(["constraints.n_constraint=5", "n_trial=3", "method=kmeans", "dataset=iris"])
    assert len(problems) == 2
    assert problems[0].startswith("n_trial: unknown root key 'n_trial'; did you mean n_trials?")
    assert problems[1].startswith("constraints.n_constraint: ") and "did you mean constraints.n_constraints?" in problems[1]
    assert precheck(["constraints.n_constraint=5", "method=kmeans"]) == []  # alone: left to the sweeper, as before


def test_a_broken_entry_point_warns_in_one_line_without_a_line_of_ccbench_code(monkeypatch):
    import importlib.metadata
    import warnings

    class BrokenEntryPoint:
        name, value, dist = "broken_thing", "broken_thing.plugin", None

        def load(self):
            raise ImportError("No module named 'broken_thing'")

    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda **kw: [BrokenEntryPoint()] if kw.get("group") == "ccbench" else real(**kw))
    monkeypatch.setattr(registry, "_pm", None)  # a fresh start-up; the real manager is put back afterwards
    monkeypatch.setattr(registry, "_broken", [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry.get_plugin_manager()
    (w,) = [w for w in caught if "broken_thing" in str(w.message)]
    shown = warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line)
    assert len(shown.strip().splitlines()) == 1 and "_new_plugin_manager" not in shown
    assert "plugin 'broken_thing.plugin' from the package '?' failed to load: ImportError" in shown
