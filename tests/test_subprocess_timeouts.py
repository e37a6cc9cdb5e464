"""A test's command that reaches its time limit leaves no process behind (issue 54): ``tests/_proc.run``.

The probe: a shell that starts a grandchild (``sleep``) in the background, writes its pid and sleeps itself.
``subprocess.run`` kills the shell only (the grandchild is reparented and sleeps on: checked, so the probe
can tell); ``_proc.run`` kills the whole process group, the grandchild with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from _proc import run

LIMIT = 1.0  # the shell writes the pid in milliseconds; the limit only has to outlast that


def _probe(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    return ["sh", "-c", f"sleep 120 & echo $! > {pidfile}; sleep 120"], pidfile


def _alive(pid: int, wait: float = 10.0) -> bool:
    """Whether ``pid`` is a live process (not gone, not a zombie), given ``wait`` seconds to go: a killed
    orphan is reaped by init shortly after, not at the instant of the kill."""
    deadline = time.monotonic() + wait
    while True:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                state = fh.read().rpartition(")")[2].split()[0]
        except FileNotFoundError:
            return False
        if state == "Z" or time.monotonic() > deadline:
            return state != "Z"
        time.sleep(0.05)


def _grandchild(pidfile) -> int:
    assert pidfile.exists(), "the probe's shell did not start its grandchild within the limit (machine stalled?)"
    return int(pidfile.read_text())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_on_time_out_the_grandchild_is_killed_with_the_child(tmp_path):
    cmd, pidfile = _probe(tmp_path)
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        run(cmd, timeout=LIMIT, capture_output=True, text=True)
    assert raised.value.timeout == LIMIT and raised.value.cmd == cmd
    assert not _alive(_grandchild(pidfile))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_probe_sees_what_subprocess_run_leaves_behind(tmp_path):
    """The reference route: the same probe under ``subprocess.run`` leaves its grandchild sleeping."""
    cmd, pidfile = _probe(tmp_path)
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run(cmd, timeout=LIMIT, capture_output=True, start_new_session=True)
    pid = _grandchild(pidfile)
    try:
        assert _alive(pid, wait=0)
    finally:
        os.killpg(os.getpgid(pid), 9)


def test_a_command_that_ends_in_time_is_returned_as_subprocess_run_returns_it(tmp_path):
    done = run([sys.executable, "-c", "import sys; print(sys.stdin.read().upper()); sys.exit(3)"],
               timeout=60, input="abc", capture_output=True, text=True, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (3, "ABC\n", "")
    with pytest.raises(subprocess.CalledProcessError):
        run(["false"], timeout=60, check=True)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_started_kills_the_group_when_its_block_ends(tmp_path):
    """``_proc.started`` (a test that drives its child while it runs): leaving the block, by a time-out here,
    kills the child's grandchild too."""
    from _proc import started

    cmd, pidfile = _probe(tmp_path)
    with pytest.raises(subprocess.TimeoutExpired):
        with started(cmd) as proc:
            proc.wait(timeout=LIMIT)
    assert proc.returncode is not None
    assert not _alive(_grandchild(pidfile))
