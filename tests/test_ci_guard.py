"""`.ci/run` fails loudly, naming the phase, once the whole run passes its time limit (issue 56).

The limit is lowered to a few seconds and the venv's python replaced by a program that only sleeps,
so the first phase that runs it (the install) is killed: no real install, no real test run.
"""

import os
import shutil
import sys
import time
from pathlib import Path

import pytest
import _proc  # on time-out, the command's whole process group is killed (issue 54)

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("timeout") is None or sys.platform != "linux", reason="needs coreutils' timeout")
def test_ci_run_names_the_phase_that_passes_the_limit(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    fake = venv / "bin" / "python"
    fake.write_text("#!/bin/sh\nexec sleep 120\n")
    fake.chmod(0o755)
    env = {**os.environ, "CI_VENV": str(venv), "CI_LIMIT_SECONDS": "6"}
    start = time.monotonic()
    proc = _proc.run(["bash", str(ROOT / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=180)
    elapsed = time.monotonic() - start
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "CI FAILED" in proc.stderr and "phase '" in proc.stderr and "CI_LIMIT_SECONDS" in proc.stderr
    assert elapsed < 120  # killed at the limit, not after the sleeping program ended


def test_ci_runs_readmes_test_command():
    """CI must run README's test command: the pytest arguments of README's second quick-start command
    (parallel workers, a file's tests on one worker) are those `.ci/run` passes (issue 56)."""
    import re

    readme = (ROOT / "README.md").read_text()
    install = re.search(r'^python -m pip install -e "\.\[test,bench\]" && python -m pytest(.*)$', readme, re.M)
    ci = re.search(r'-m pytest(.*?) 2>&1', (ROOT / ".ci" / "run").read_text())
    assert install and ci, "README's test command or .ci/run's pytest line is missing"
    assert install.group(1).split() == ci.group(1).split()
