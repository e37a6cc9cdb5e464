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
