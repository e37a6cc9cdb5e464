"""The mutation runner (tests/mutation/run.py): its sample is reproducible, it tells a killed
mutant from a surviving one, and it always puts the source back (content and mtime), also when a
run is interrupted or was killed outright."""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

import _proc  # on time-out, the command's whole process group is killed (issue 54)

RUNNER = Path(__file__).resolve().parent / "mutation" / "run.py"


def _load_runner():
    spec = importlib.util.spec_from_file_location("ccbench_mutation_run", RUNNER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


run = _load_runner()

# One line the check kills (x * 2 under any other arithmetic operator gives f(3) != 6), one it
# cannot (the branch at 100 is never reached from 3).
CALC = textwrap.dedent("""\
    def f(x):
        y = x * 2
        if x > 100:
            return 0
        return y
""")
CHECK = "from calc import f\nassert f(3) == 6\n"


def _synthetic(n_sites=40, variants=3):
    return [run.Mutant("m.py", line, 0, f"K{line % 3}", f"op{v}", v)
            for line in range(1, n_sites + 1) for v in range(variants)]


def test_sample_is_a_function_of_the_seed():
    mutants = _synthetic()
    a, n_sites = run.sample_mutants(mutants, 10, seed=28)
    b, _ = run.sample_mutants(list(reversed(mutants)), 10, seed=28)  # input order does not matter
    c, _ = run.sample_mutants(mutants, 10, seed=29)
    assert n_sites == 40 and a == b and a != c
    assert len(a) == 10 and len({m.site for m in a}) == 10  # n distinct sites, one mutant each
    assert run.sample_mutants(mutants, 4, seed=28)[0] == a[:4]  # --sample 4 = the first 4 draws of 10
    everything, _ = run.sample_mutants(mutants, None, seed=0)
    assert everything == sorted(mutants)


def test_a_rejected_draw_is_replaced_by_another_site():
    mutants = _synthetic()
    a, _ = run.sample_mutants(mutants, 10, seed=28, valid=lambda m: m.line % 2 == 0)
    assert len(a) == 10 and all(m.line % 2 == 0 for m in a)


def test_guard_restores_content_and_mtime_after_an_exception(tmp_path):
    path = tmp_path / "calc.py"
    path.write_text(CALC)
    os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    before = path.stat().st_mtime_ns
    guard = run.SourceGuard(tmp_path / "state")
    with pytest.raises(KeyboardInterrupt):
        with guard.apply(path, CALC.replace("x * 2", "x + 2")):
            assert "x + 2" in path.read_text() and path.stat().st_mtime_ns != before
            raise KeyboardInterrupt
    assert path.read_text() == CALC and path.stat().st_mtime_ns == before
    assert not guard.journal.exists()


def test_a_file_left_mutated_by_a_killed_run_is_restored_at_the_next_start(tmp_path):
    path = tmp_path / "calc.py"
    path.write_text(CALC)
    guard = run.SourceGuard(tmp_path / "state")
    guard.apply(path, CALC.replace("x * 2", "x + 2")).__enter__()  # SIGKILL: no __exit__
    assert "x + 2" in path.read_text()
    assert run.SourceGuard(tmp_path / "state").recover() == str(path)
    assert path.read_text() == CALC
    assert run.SourceGuard(tmp_path / "state").recover() is None


def _tiny_project(tmp_path, check=CHECK):
    (tmp_path / "calc.py").write_text(CALC)
    (tmp_path / "check.py").write_text(check)
    return tmp_path / "calc.py"


def test_runner_kills_what_the_check_sees_and_reports_what_it_does_not(tmp_path):
    pytest.importorskip("cosmic_ray")
    calc = _tiny_project(tmp_path)
    before = (calc.read_bytes(), calc.stat().st_mtime_ns)
    mutants = run.enumerate_mutants([calc], root=tmp_path)
    assert mutants == run.enumerate_mutants([calc], root=tmp_path)
    wanted = {(2, "core/ReplaceBinaryOperator_Mul_Add"), (2, "core/NumberReplacer"),
              (3, "core/ReplaceComparisonOperator_Gt_GtE")}
    sample = [m for m in mutants if (m.line, m.operator) in wanted]  # a few, to stay fast
    assert len(sample) == 4  # the number replacer gives two: 2 + 1 and 2 - 1
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    results = run.run_mutants(sample, root=tmp_path, test_cmd=[sys.executable, "check.py"], env=env,
                              timeout=20, state_dir=tmp_path / "state", log=lambda *a: None)
    outcome = {(r["line"], r["operator"]): r["outcome"] for r in results}
    assert outcome[(2, "core/ReplaceBinaryOperator_Mul_Add")] == "killed"  # 3 + 2 != 6
    assert outcome[(3, "core/ReplaceComparisonOperator_Gt_GtE")] == "survived"  # 100 is never reached
    assert outcome[(2, "core/NumberReplacer")] == "killed"
    survivor = next(r for r in results if r["operator"] == "core/ReplaceComparisonOperator_Gt_GtE")
    assert "-    if x > 100:" in survivor["diff"] and "+    if x >= 100:" in survivor["diff"]
    summary = run.summarise(results)
    assert 0 < summary["rate"] < 1 and summary["run"] == len(results)
    assert (calc.read_bytes(), calc.stat().st_mtime_ns) == before


def test_ctrl_c_during_a_test_run_restores_the_source(tmp_path):
    pytest.importorskip("cosmic_ray")
    calc = _tiny_project(tmp_path, check="import time\ntime.sleep(60)\n")
    before = (calc.read_bytes(), calc.stat().st_mtime_ns)
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(f"""\
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location("r", {str(RUNNER)!r})
        run = importlib.util.module_from_spec(spec); sys.modules["r"] = run; spec.loader.exec_module(run)
        root = {str(tmp_path)!r}
        m = [x for x in run.enumerate_mutants([root + "/calc.py"], root=root)
             if x.operator == "core/ReplaceBinaryOperator_Mul_Add"]
        run.run_mutants(m, root=root, test_cmd=[sys.executable, "check.py"], env=None, timeout=60,
                        state_dir=root + "/state")
    """))
    with _proc.started([sys.executable, str(driver)], cwd=tmp_path) as proc:  # its test run is killed with it
        deadline = time.monotonic() + 30
        while b"x + 2" not in calc.read_bytes():  # wait until the mutant is in place
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) != 0
    assert (calc.read_bytes(), calc.stat().st_mtime_ns) == before
    assert not (tmp_path / "state" / "journal.json").exists()
