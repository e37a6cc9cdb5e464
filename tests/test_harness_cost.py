"""The harness's own cost per job (issue 54): what a job asks again and again is worked out once."""

from __future__ import annotations

from ccbench.running import provenance


def test_a_modules_imports_are_parsed_once_while_its_file_is_unchanged(tmp_path, monkeypatch):
    """Every job asked which modules its method's modules import (``code.inputs``), and each asking
    parsed the files again (a twentieth of the quick start); an edited file is parsed anew."""
    module = tmp_path / "some_method.py"
    module.write_text("import os\nfrom . import helper\n")
    parsed = []
    parse = provenance.ast.parse
    monkeypatch.setattr(provenance.ast, "parse", lambda source, **kw: parsed.append(kw) or parse(source, **kw))
    first = provenance._imported_modules("pkg.some_method", module)
    again = provenance._imported_modules("pkg.some_method", module)
    parsed_twice = len(parsed)
    module.write_text("import os\nimport json  # a new input\n")
    edited = provenance._imported_modules("pkg.some_method", module)
    monkeypatch.undo()  # pytest's own reporting parses source too
    assert first == again == {"os", "pkg", "pkg.helper"}
    assert parsed_twice == 1
    assert edited == {"os", "json"} and len(parsed) == 2


def test_a_joblib_worker_scans_hydra_plugins_once_not_before_every_job(monkeypatch):
    """Hydra's ``Singleton.set_state`` (what a joblib worker ran before each job) rebuilds ``Plugins``:
    a scan of every installed Hydra plugin, each time. The launcher keeps the worker's own."""
    from hydra.core.plugins import Plugins
    from hydra.core.singleton import Singleton

    from hydra_plugins.ccbench_sweeper import joblib_launcher

    scans = []
    initialize = Plugins._initialize
    monkeypatch.setattr(Plugins, "_initialize", lambda self: scans.append(1) or initialize(self))
    monkeypatch.setattr(Singleton, "_instances", dict(Singleton._instances))  # restored after the test
    state = Singleton.get_state()  # as the launcher ships it: without Plugins
    Singleton._instances.pop(Plugins, None)
    shipped = joblib_launcher._pickled_once(state)  # each job unpickles its own copy
    for _ in range(3):
        Singleton.set_state(joblib_launcher._unpickled(shipped))
    hydras = len(scans)
    scans.clear()
    Singleton._instances.pop(Plugins, None)  # a fresh worker
    for _ in range(3):  # three jobs, the state pickled once by the launcher
        joblib_launcher._set_singleton_state(shipped)
    ours = len(scans)
    found = Plugins.instance().plugin_type_to_subclass_list
    monkeypatch.undo()
    assert hydras == 3
    assert ours == 1 and found  # the plugins were found, once
