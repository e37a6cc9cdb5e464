"""What tests/test_harness_cost.py runs in a process forked by a fork server (importable there, and light:
only ccbench.isolation, which imports the standard library)."""


def _whoami():
    import os

    return os.getpid(), os.getppid()


def _exit_now():
    import os

    os._exit(3)


def _spin():
    while True:
        pass


def probe(conn):
    """In a process forked by the fork server: who forks the trial worker, and the isolation guarantees there."""
    import os

    from ccbench.isolation import IsolatedRunner, TrialTimeout, WorkerDied

    runner = IsolatedRunner()
    out = {"me": os.getpid(), "server": os.getppid(), "first": runner.call(_whoami, timeout=None)}
    try:
        runner.call(_exit_now, timeout=None)
    except WorkerDied as exc:  # a fit that ends its process: one error, the next call gets a new worker
        out["died"] = str(exc)
    try:
        runner.call(_spin, timeout=0.3)
    except TrialTimeout as exc:
        out["timeout"] = str(exc)
    out["after"] = runner.call(_whoami, timeout=None)
    runner.close()
    conn.send(out)
