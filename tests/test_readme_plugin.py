"""README's "Adding a method" example, verbatim (issue 30, item 2).

The blocks are read from README.md, not copied here: the ``bash`` block with
``mkdir`` makes the layout, every block whose first line is ``# my-package/<path>``
is written to that path as it stands, the package is built into a wheel (what
``pip install ./my-package`` builds) whose contents are checked, the wheel is
unpacked onto ``PYTHONPATH`` (an installation without touching this environment),
and README's last block of commands is run against it: ``ccbench plugins``,
``ccbench check-plugin`` and the sweep (with ``n_trials=2``).

With the plugin installed, ccbench's own tests about its built-in methods still
pass (issue 30, item 3: they failed as soon as any plugin was installed).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import _proc  # on time-out, the command's whole process group is killed (issue 54)

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)
CCBENCH = [sys.executable, "-c", "import sys; from ccbench.running.cli import main; sys.exit(main())"]

pytestmark = pytest.mark.slow  # builds a wheel and runs four ccbench commands (about 40 s)


def readme_section(title: str = "## Adding a method") -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start:end if end > 0 else None]


def readme_blocks() -> list[tuple[str, str]]:
    """(language, text) of every fenced block of the section, in order."""
    return FENCE.findall(readme_section())


def write_package(root: Path) -> Path:
    """Make README's package under ``root``; returns ``root / "my-package"``."""
    blocks = readme_blocks()
    layout = [text for lang, text in blocks if lang == "bash" and "mkdir" in text]
    assert len(layout) == 1, "README's example has one bash block that makes the layout"
    subprocess.run(["bash", "-euc", layout[0]], cwd=root, check=True)
    files = [(text.splitlines()[0][2:].strip(), text) for lang, text in blocks
             if text.startswith("# my-package/")]
    assert {Path(f).name for f, _ in files} >= {"pyproject.toml", "plugin.py", "chunklet_kmeans.yaml"}
    for rel, text in files:
        path = root / rel
        assert path.parent.is_dir(), f"README's layout block does not make {path.parent.relative_to(root)}"
        path.write_text(text)
    return root / "my-package"


def readme_commands() -> list[str]:
    """The lines of README's last bash block (the commands after the files), comments dropped."""
    block = [text for lang, text in readme_blocks() if lang == "bash"][-1]
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def _run(cmd: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return _proc.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """README's package built into a wheel and unpacked into a site directory."""
    pytest.importorskip("setuptools", reason="building the wheel without build isolation needs setuptools")
    root = tmp_path_factory.mktemp("readme_plugin")
    package = write_package(root)
    dist = root / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(dist), str(package)], check=True, cwd=root)
    (wheel,) = dist.glob("my_method-0.1.0-*.whl")
    site = root / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    import os

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
               MPLBACKEND="Agg")
    return {"root": root, "wheel": wheel, "env": env}


def test_wheel_holds_the_module_the_config_and_the_entry_point(installed):
    with zipfile.ZipFile(installed["wheel"]) as zf:
        names = set(zf.namelist())
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        entry_points = zf.read(f"{info}/entry_points.txt").decode()
        metadata = zf.read(f"{info}/METADATA").decode()
    assert {"my_method/__init__.py", "my_method/plugin.py", "my_method/conf/__init__.py",
            "my_method/conf/method/chunklet_kmeans.yaml"} <= names
    assert re.search(r"^\[ccbench\]\nchunklet_kmeans = my_method.plugin$", entry_points, re.M), entry_points
    assert "Version: 0.1.0" in metadata


def test_readme_commands_run_against_the_installed_plugin(installed):
    commands = readme_commands()
    assert commands[0] == "pip install ./my-package"  # done above: wheel built and unpacked
    env, cwd = installed["env"], installed["root"]
    rest = [shlex.split(c) for c in commands[1:]]
    assert [c[:2] for c in rest] == [["ccbench", "plugins"], ["ccbench", "check-plugin"], ["ccbench", "-m"]]

    listed = _run(CCBENCH + rest[0][1:], env, cwd)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"^chunklet_kmeans\s+k-means on must-link chunklets", listed.stdout, re.M), listed.stdout

    checked = _run(CCBENCH + rest[1][1:], env, cwd)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
    assert "PASS  config    method/chunklet_kmeans.yaml" in checked.stdout
    assert re.search(r"^chunklet_kmeans: \d+ passed, 0 failed", checked.stdout, re.M)

    sweep_dir = cwd / "sweep"
    swept = _run(CCBENCH + rest[2][1:] + ["n_trials=2", f"hydra.sweep.dir={sweep_dir}"], env, cwd)
    assert swept.returncode == 0, swept.stdout[-3000:] + swept.stderr[-3000:]
    rows = pd.concat(pd.read_parquet(p) for p in sweep_dir.rglob("results.parquet"))
    assert sorted(rows["method.name"].unique()) == ["chunklet_kmeans", "kmeans"]
    assert (rows["status"] == "ok").all() and len(rows) == 4
    ours = rows[rows["method.name"] == "chunklet_kmeans"]
    assert ours["modified_rand"].between(0, 1).all()


def test_ccbench_own_tests_pass_with_the_plugin_installed(installed):
    """Issue 30, item 3: these two failed whenever a third-party plugin was installed."""
    tests = ["tests/test_hostile.py::test_contradictory_constraints_behave_as_docs_harness_says",
             "tests/test_method_configs.py::test_every_registered_method_has_a_config",
             "tests/test_benchmark_suite.py::test_every_registered_method_has_time_peakmem_and_quality_benchmarks"]
    env = dict(installed["env"])
    probe = _run(CCBENCH + ["plugins"], env, ROOT)
    assert re.search(r"^chunklet_kmeans ", probe.stdout, re.M)  # the plugin is installed for the runs below
    run = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], env, ROOT)
    assert run.returncode == 0, run.stdout[-3000:]
    # the per-method tests do not pick the plugin up either
    collected = _run([sys.executable, "-m", "pytest", "-q", "--co", "-p", "no:cacheprovider",
                      "tests/test_hostile.py", "tests/test_validation.py", "tests/test_estimator_checks.py"], env, ROOT)
    assert collected.returncode == 0 and "kmeans" in collected.stdout, collected.stdout[-2000:]
    assert "chunklet" not in collected.stdout.lower().replace("one_chunklet", "")
