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
