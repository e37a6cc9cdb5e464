"""A real one-node SLURM cluster for the tests, in a fresh temporary directory.

    python tests/slurm/cluster.py start [DIR]   # prints DIR; `export SLURM_CONF=DIR/slurm.conf`
    python tests/slurm/cluster.py stop DIR

Debian's ``munge``, ``slurmctld`` and ``slurmd`` (``slurm-client`` for ``sbatch``/``sinfo``/...),
run as the current user (root in CI): a new munge key, a generated ``slurm.conf`` (the node is
``hostname -s`` with the CPUs and memory ``slurmd -C`` reports, ``proctrack/linuxproc``,
``task/none``, ``select/cons_tres`` with memory as a consumable), state, spool, logs, sockets
and pid files all under DIR, ports chosen free for this run. Nothing is written to ``/etc``.
Every daemon is stopped by its pid (``stop``, or :meth:`Cluster.stop`).

``tests/slurm/conftest.py`` starts one per test session when the binaries exist (``.ci/run``
installs them with ``apt-get`` when it runs as root); otherwise the SLURM tests skip and say why.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo", "scontrol", "squeue", "scancel")
# accounting (``sacct``, which submitit polls to learn that a task died): slurmdbd on a MariaDB
ACCOUNTING_BINARIES = ("slurmdbd", "mariadbd", "mariadb-install-db", "sacct")
PARTITION = "debug"


def missing_binaries(accounting: bool = True) -> list[str]:
    """The programs a cluster needs that are not on PATH (``/usr/sbin`` included)."""
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin" + os.pathsep + "/sbin"
    wanted = BINARIES + (ACCOUNTING_BINARIES if accounting else ())
    return [b for b in wanted if shutil.which(b, path=path) is None]


def _which(name: str) -> str:
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin" + os.pathsep + "/sbin"
    found = shutil.which(name, path=path)
    if found is None:
        raise FileNotFoundError(name)
    return found


def _free_ports(n: int) -> list[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def node_resources() -> dict:
    """``slurmd -C``'s CPUs and RealMemory (MB) of this machine, and its short host name."""
    out = subprocess.run([_which("slurmd"), "-C"], capture_output=True, text=True, check=True).stdout
    fields = dict(re.findall(r"(\w+)=(\S+)", out.splitlines()[0]))
    return {"name": subprocess.run(["hostname", "-s"], capture_output=True, text=True,
                                   check=True).stdout.strip() or fields["NodeName"],
            "cpus": int(fields["CPUs"]), "memory_mb": int(fields["RealMemory"])}


@dataclass
class Cluster:
    """A running one-node cluster: its directory, config file, node and daemon pids."""

    root: str
    conf: str
    node: str
    cpus: int
    memory_mb: int
    pids: dict = field(default_factory=dict)
    bring_up_s: float = 0.0

    @property
    def env(self) -> dict:
        """Environment for commands that talk to this cluster (``SLURM_CONF``)."""
        return {**os.environ, "SLURM_CONF": self.conf,
                "PATH": os.environ.get("PATH", "") + os.pathsep + "/usr/sbin"}

    def run(self, *args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), env=self.env, capture_output=True, text=True,
                              check=check, timeout=timeout)

    def save(self) -> None:
        Path(self.root, "cluster.json").write_text(json.dumps(asdict(self)))

    @classmethod
    def load(cls, root: str | Path) -> "Cluster":
        return cls(**json.loads(Path(root, "cluster.json").read_text()))

    def stop(self) -> None:
        """SIGTERM every daemon by its pid (slurmd, slurmctld, slurmdbd, mariadbd, munged), SIGKILL what is left."""
        for name in ("slurmd", "slurmctld", "slurmdbd", "mariadbd", "munged"):
            pid = self.pids.get(name)
            if pid:
                _terminate(pid)
        self.pids.clear()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child of ours counts as gone
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass
    return True


def _terminate(pid: int, grace: float = 10.0) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    end = time.monotonic() + grace
    while time.monotonic() < end:
        if not _alive(pid):
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _wait_pidfile(path: Path, log: Path, what: str, timeout: float = 30.0) -> int:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            pid = int(path.read_text().split()[0])
            if _alive(pid):
                return pid
        time.sleep(0.1)
    tail = log.read_text()[-2000:] if log.exists() else "(no log)"
    raise RuntimeError(f"{what} did not start within {timeout:.0f} s; its log ends:\n{tail}")


SLURM_CONF = """\
# generated by tests/slurm/cluster.py for one test session; nothing here is in /etc
ClusterName=ccbench
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser={user}
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={root}/munge/munge.socket
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool/%n
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig={root}/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
{accounting}
JobCompType=jobcomp/none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
MinJobAge=600
KillWait=5
InactiveLimit=0
Waittime=0
SlurmctldTimeout=30
SlurmdTimeout=60
# a job is requeued (preemption, `scontrol requeue`) and may run again
JobRequeue=1
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN
PartitionName={partition} Nodes={node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
"""


SLURMDBD_CONF = """\
# generated by tests/slurm/cluster.py
AuthType=auth/munge
AuthInfo=socket={root}/munge/munge.socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort={dbd_port}
SlurmUser={user}
PidFile={root}/slurmdbd.pid
LogFile={root}/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={db_port}
StorageUser={user}
StorageLoc=slurm_acct_db
"""


def _start_accounting(root: Path, env: dict, user: str, cluster: "Cluster") -> str:
    """MariaDB (its own data directory, TCP on a free loopback port) and slurmdbd on it; returns
    the ``slurm.conf`` lines that point slurmctld at it."""
    db_port, dbd_port = _free_ports(2)
    data = root / "mariadb"
    log = root / "log" / "mariadb.log"
    subprocess.run([_which("mariadb-install-db"), f"--datadir={data}", f"--user={user}",
                    "--auth-root-authentication-method=normal", "--skip-test-db"],
                   env=env, check=True, capture_output=True, timeout=120)
    subprocess.Popen([_which("mariadbd"), "--no-defaults", f"--datadir={data}", f"--user={user}",
                      f"--port={db_port}", "--bind-address=127.0.0.1", f"--socket={root}/mariadb.sock",
                      f"--pid-file={root}/mariadb.pid", f"--log-error={log}", "--skip-grant-tables",
                      "--innodb-buffer-pool-size=16M", "--innodb-log-file-size=8M"],
                     env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)
    cluster.pids["mariadbd"] = _wait_pidfile(root / "mariadb.pid", log, "mariadbd")
    end = time.monotonic() + 30
    while time.monotonic() < end:  # listening?
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", db_port)) == 0:
                break
        time.sleep(0.2)
    dbd_conf = root / "slurmdbd.conf"
    dbd_conf.write_text(SLURMDBD_CONF.format(root=root, dbd_port=dbd_port, db_port=db_port, user=user))
    os.chmod(dbd_conf, 0o600)
    subprocess.run([_which("slurmdbd")], env={**env, "SLURM_CONF": str(root / "slurm.conf")},
                   check=True, capture_output=True)
    cluster.pids["slurmdbd"] = _wait_pidfile(root / "slurmdbd.pid", root / "log" / "slurmdbd.log", "slurmdbd")
    end = time.monotonic() + 30
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", dbd_port)) == 0:
                break
        time.sleep(0.2)
    return (f"AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=127.0.0.1\n"
            f"AccountingStoragePort={dbd_port}\n"
            # the munge socket for the slurmdbd connection (else the default one in /run)
            f"AccountingStoragePass={root}/munge/munge.socket")


def start(root: str | Path | None = None, timeout: float = 60.0, accounting: bool | None = None) -> Cluster:
    """Start munged, slurmctld and slurmd under ``root`` (a new temporary directory when None) and
    wait until the node is idle; with ``accounting`` (default: when slurmdbd and MariaDB are
    installed) also MariaDB and slurmdbd, so ``sacct`` answers. Raises (with the daemon's log)
    and stops what it started when a daemon does not come up."""
    t0 = time.monotonic()
    root = Path(root or tempfile.mkdtemp(prefix="ccbench-slurm-")).resolve()
    for sub in ("munge", "state", "spool", "log"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    # munged checks that its directories are not writable by others
    os.chmod(root, 0o755)
    os.chmod(root / "munge", 0o700)
    res = node_resources()
    (root / "spool" / res["name"]).mkdir(exist_ok=True)
    ctld_port, slurmd_port = _free_ports(2)
    import pwd

    user = pwd.getpwuid(os.getuid()).pw_name
    conf = root / "slurm.conf"
    (root / "plugstack.conf").write_text("")
    cluster = Cluster(root=str(root), conf=str(conf), node=res["name"], cpus=res["cpus"],
                      memory_mb=res["memory_mb"])
    env = cluster.env
    if accounting is None:
        accounting = not missing_binaries(accounting=True)
    try:
        key = root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        munge_log = root / "log" / "munged.log"
        subprocess.run([_which("munged"), "--force", f"--key-file={key}", f"--socket={root}/munge/munge.socket",
                        f"--pid-file={root}/munge/munged.pid", f"--log-file={munge_log}",
                        f"--seed-file={root}/munge/munged.seed"], env=env, check=True, capture_output=True)
        cluster.pids["munged"] = _wait_pidfile(root / "munge" / "munged.pid", munge_log, "munged")
        acct = (_start_accounting(root, env, user, cluster) if accounting
                else "AccountingStorageType=accounting_storage/none")
        conf.write_text(SLURM_CONF.format(root=root, node=res["name"], ctld_port=ctld_port, slurmd_port=slurmd_port,
                                          user=user, cpus=res["cpus"], memory_mb=res["memory_mb"],
                                          partition=PARTITION, accounting=acct))
        subprocess.run([_which("slurmctld"), "-i", "-f", str(conf)], env=env, check=True, capture_output=True)
        cluster.pids["slurmctld"] = _wait_pidfile(root / "slurmctld.pid", root / "log" / "slurmctld.log",
                                                  "slurmctld")
        subprocess.run([_which("slurmd"), "-f", str(conf)], env=env, check=True, capture_output=True)
        cluster.pids["slurmd"] = _wait_pidfile(root / "slurmd.pid", root / "log" / "slurmd.log", "slurmd")
        cluster.save()
        end = time.monotonic() + timeout
        state = ""
        while time.monotonic() < end:
            out = cluster.run("sinfo", "-h", "-N", "-o", "%T", check=False, timeout=20)
            state = out.stdout.strip()
            if state in ("idle", "mixed", "allocated"):
                break
            time.sleep(0.3)
        else:
            raise RuntimeError(f"the node did not become idle within {timeout:.0f} s (state {state!r}); "
                               f"slurmd log:\n{(root / 'log' / 'slurmd.log').read_text()[-2000:]}")
    except BaseException:
        cluster.stop()
        raise
    cluster.bring_up_s = round(time.monotonic() - t0, 2)
    cluster.save()
    return cluster


def stop(root: str | Path) -> None:
    Cluster.load(root).stop()


def main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "start":
        missing = missing_binaries()
        if missing:
            print(f"cannot start a SLURM cluster: not installed: {', '.join(missing)} "
                  "(apt-get install slurmctld slurmd slurm-client munge)", file=sys.stderr)
            return 2
        c = start(argv[1] if len(argv) > 1 else None)
        print(c.root)
        print(f"SLURM up in {c.bring_up_s} s: node {c.node}, {c.cpus} CPUs, {c.memory_mb} MB; "
              f"export SLURM_CONF={c.conf}", file=sys.stderr)
        return 0
    if len(argv) == 2 and argv[0] == "stop":
        stop(argv[1])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
