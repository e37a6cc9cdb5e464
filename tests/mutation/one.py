"""One mutant of a run, by its draw: show the sample's diffs, or apply one draw, run the given
tests and restore the file (issue 41: proving a new test on the survivor it was written for).

The sample is ``run.py``'s own (``enumerate_mutants`` / ``sample_mutants`` / ``mutated_source``
with the default sample of 40), so draw k is byte for byte the runner's draw k::

    python tests/mutation/one.py . nnc 20261126 show [draws...]
    python tests/mutation/one.py . nnc 20261126 apply 28 -- tests/test_nnc_issue41.py

Like ``run.py`` it writes the mutant into the source file and puts it back (old bytes and
mtime) in a ``finally``; do not run it while a ``run.py`` run uses the same checkout.
"""
import os, sys, subprocess, importlib.util
from pathlib import Path
root = Path(sys.argv[1]).resolve(); fam = sys.argv[2]; seed = int(sys.argv[3]); cmd = sys.argv[4]
spec = importlib.util.spec_from_file_location("mrun", root / "tests/mutation/run.py")
R = importlib.util.module_from_spec(spec); sys.modules["mrun"] = R; spec.loader.exec_module(R)
F = R.FAMILIES[fam]
mut = R.enumerate_mutants(F.modules(), root=R.REPO)
drawn, _ = R.sample_mutants(mut, 40, seed, valid=R.compiles())
if cmd == "show":
    want = {int(x) for x in sys.argv[5:]} or set(range(1, len(drawn) + 1))
    for i, m in enumerate(drawn, 1):
        if i in want:
            src = (root / m.path).read_text()
            print(f"#{i} {m.where} {m.operator}\n{R._diff(src, R.mutated_source(src, m), m.path)}\n")
elif cmd == "apply":
    i = int(sys.argv[5]); m = drawn[i - 1]; rest = sys.argv[sys.argv.index("--") + 1:]
    p = root / m.path; src = p.read_text(); st = p.stat()
    print(f"#{i} {m.where} {m.operator}\n{R._diff(src, R.mutated_source(src, m), m.path)}", flush=True)
    try:
        p.write_text(R.mutated_source(src, m))
        env = R.family_env(F, Path("/tmp/d-mut-numba-" + fam))
        rc = subprocess.call([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *rest], cwd=root, env=env)
        print("MUTANT", "KILLED" if rc else "SURVIVED", "rc", rc)
    finally:
        p.write_text(src); os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
