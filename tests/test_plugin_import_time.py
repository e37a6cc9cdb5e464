"""A plugin's import time limit is counted by the importing thread's clocks, not the wall's (issue 54, item 18).

``ccbench.registry._load_with_time_limit`` gives up on an import after ``L`` seconds of CPU (a loop) or ``L``
seconds of wall spent neither running nor waiting for a CPU (a hang); the time a healthy import spends waiting
for a CPU on a busy machine counts against neither. The busy machine is simulated by the kernel's figures
(``_thread_times``), so no test loads the machine or asserts on the wall clock.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

from ccbench import registry


def _busy_machine(monkeypatch):
    """The kernel says: the importing thread used 10 ms of CPU and was ready to run, waiting for a CPU,
    the rest of its life (a machine whose cores are all taken)."""
    born = time.monotonic()
    # raising=False: were the hook renamed, the real clocks would see a sleep, and the test would fail
    monkeypatch.setattr(registry, "_thread_times", lambda thread: (0.01, time.monotonic() - born), raising=False)


def test_a_healthy_import_on_a_busy_machine_is_not_dropped(monkeypatch):
    _busy_machine(monkeypatch)
    monkeypatch.setenv(registry.PLUGIN_IMPORT_TIMEOUT_ENV, "0.2")
    released = threading.Event()
    threading.Timer(0.6, released.set).start()  # the import ends after 3 limits of wall

    plugin = registry._load_with_time_limit(None, lambda: released.wait(5) and "the plugin", "slow_but_healthy")
    assert plugin == "the plugin"


def test_a_plugins_module_imported_on_a_busy_machine_is_registered(tmp_path, monkeypatch):
    _busy_machine(monkeypatch)
    (tmp_path / "ccbench_test_slow_import.py").write_text("import time\ntime.sleep(0.6)\nx = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(registry.PLUGIN_IMPORT_TIMEOUT_ENV, "0.2")
    try:
        registry.load_plugins(["ccbench_test_slow_import"])
        assert registry.get_plugin_manager().get_plugin("ccbench_test_slow_import") is not None
    finally:
        registry.unregister_plugin("ccbench_test_slow_import")


def test_an_import_that_waits_without_a_cpu_is_given_up_as_a_hang(monkeypatch):
    monkeypatch.setenv(registry.PLUGIN_IMPORT_TIMEOUT_ENV, "0.2")
    released = threading.Event()
    try:
        with pytest.raises(TimeoutError, match=r"did not finish within 0.2 s \(it waited 0\.\d s without running or "
                                               r"waiting for a CPU: it hangs at import\?\).*CCBENCH_PLUGIN_IMPORT"):
            registry._load_with_time_limit(None, lambda: released.wait(30), "hangs")
    finally:
        released.set()


def test_an_import_that_loops_is_given_up_by_its_cpu(monkeypatch):
    monkeypatch.setenv(registry.PLUGIN_IMPORT_TIMEOUT_ENV, "0.2")
    released = threading.Event()

    def loop():
        while not released.is_set() and time.thread_time() < 30:
            pass

    try:
        with pytest.raises(TimeoutError, match=r"did not finish within 0.2 s of CPU \(a loop at import\?\)"):
            registry._load_with_time_limit(None, loop, "loops")
    finally:
        released.set()


def test_a_busy_machine_does_not_hide_a_loop(monkeypatch):
    """The runnable time is set aside, the CPU is not: a loop is caught by its CPU however long it waited."""
    born = time.monotonic()
    monkeypatch.setattr(registry, "_thread_times",
                        lambda thread: ((time.monotonic() - born) / 2, (time.monotonic() - born) / 2))
    monkeypatch.setenv(registry.PLUGIN_IMPORT_TIMEOUT_ENV, "0.2")
    released = threading.Event()
    try:
        with pytest.raises(TimeoutError, match=r"within 0.2 s of CPU"):
            registry._load_with_time_limit(None, lambda: released.wait(30), "half_cpu")
    finally:
        released.set()


def test_without_the_kernels_figures_the_limit_is_the_wall(monkeypatch):
    monkeypatch.setattr(registry, "_thread_times", lambda thread: None)
    monkeypatch.setenv(registry.PLUGIN_IMPORT_TIMEOUT_ENV, "0.2")
    released = threading.Event()
    try:
        with pytest.raises(TimeoutError, match=r"did not finish within 0.2 s"):
            registry._load_with_time_limit(None, lambda: released.wait(30), "no_schedstat")
    finally:
        released.set()


@pytest.mark.skipif(not os.path.exists(f"/proc/self/task/{threading.get_native_id()}/schedstat"),
                    reason="no per-thread schedstat here (not Linux)")
def test_thread_times_agree_with_the_threads_own_cpu_clock_and_with_the_wall():
    """Two routes to the CPU time (the kernel's schedstat read by path, the thread's CPU clock); and a sleep
    is neither CPU nor waiting for a CPU: the measure that catches a hang sees it."""
    seen = {}

    def work():
        start = time.thread_time()
        while time.thread_time() - start < 0.1:
            pass
        seen["clock"] = time.thread_time()
        seen["schedstat"] = registry._thread_times(threading.current_thread())
        time.sleep(0.2)
        seen["slept"] = registry._import_budget_used(threading.current_thread(), born, time.monotonic())

    worker = threading.Thread(target=work)
    born = time.monotonic()
    worker.start()
    worker.join()
    cpu, runnable = seen["schedstat"]
    assert cpu == pytest.approx(seen["clock"], abs=0.02) and cpu >= 0.1 and runnable >= 0
    # the 0.2 s sleep is neither CPU nor waiting for one: all of it is stalled time; the loop's CPU is not
    slept_cpu, stalled = seen["slept"]
    assert slept_cpu == pytest.approx(cpu, abs=0.02)
    assert stalled >= 0.2 - 0.02
