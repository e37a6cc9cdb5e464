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
