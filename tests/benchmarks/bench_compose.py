"""Start-up that does not grow with the sweep: composing the configs of a sweep's jobs.

``hydra/sweeper=ccbench`` composes each job before any job runs (validation) and hands the
config to the launcher. Hydra composes one job in about 0.1 s (YAML, defaults list, merges);
the sweeper composes once per distinct set of group choices and copies that template for
each job, applying its value overrides (``ComposeOnceLoader.compose``). ``time_compose``
composes ``n_jobs`` jobs of the leaderboard's grid (24 data sets x 12 supervisions x 22
methods: 56 templates), repeated over ``seed``; ``time_compose_hydra`` is Hydra's own, per
job, on a few jobs (the baseline; divide by its ``n_jobs``).
"""

from __future__ import annotations

import itertools
import tempfile

from .common import smoke_or

def _leaderboard_grid() -> tuple[list[str], ...]:
    from pathlib import Path

    import yaml

    conf = Path(__file__).resolve().parents[2] / "conf" / "experiment" / "leaderboard.yaml"
    params = yaml.safe_load(conf.read_text())["hydra"]["sweeper"]["params"]
    return tuple(params[k].split(",") for k in ("dataset", "supervision", "method"))


def _grid(n_jobs: int) -> list[list[str]]:
    """The leaderboard's grid (24 data sets x 12 supervisions x 22 methods), repeated with
    another ``seed`` until it has ``n_jobs`` jobs."""
    datasets, supervisions, methods = _leaderboard_grid()
    per_seed = len(datasets) * len(supervisions) * len(methods)
    cells = itertools.product(range(-(-n_jobs // per_seed)), datasets, supervisions, methods)
    return [[f"dataset={d}", f"supervision={s}", f"method={m}", f"seed={seed}"]
            for seed, d, s, m in cells][:n_jobs]


def _loader_and_master():
    import ccbench.running.app  # noqa: F401 - registers ccbench_schema and the sweeper
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra._internal.utils import create_config_search_path
    from hydra.types import RunMode

    loader = ConfigLoaderImpl(config_search_path=create_config_search_path("pkg://ccbench_conf"))
    master = loader.load_configuration(
        "config", overrides=["experiment=leaderboard", f"hydra.sweep.dir={tempfile.mkdtemp()}",
                             "hydra/launcher=slurm"],
        run_mode=RunMode.MULTIRUN)
    return loader, master


class ComposeSweep:
    """Compose every job of a sweep as the ccbench sweeper does (templates included)."""

    param_names = ["n_jobs"]
    params = (smoke_or([1000, 10000], [100]),)
    timeout = 600
    number = 1
    repeat = 1

    def setup(self, n_jobs):
        from hydra_plugins.ccbench_sweeper.ccbench_sweeper import ComposeOnceLoader

        self.loader, self.master = _loader_and_master()
        self.grid = _grid(n_jobs)
        self.fast = ComposeOnceLoader

    def time_compose(self, n_jobs):
        fast = self.fast(self.loader)
        for overrides in self.grid:
            fast.compose(self.master, overrides)


class ComposeSweepHydra:
    """Hydra's own ``load_sweep_config``, once per job (what each job cost before)."""

    param_names = ["n_jobs"]
    params = (smoke_or([20], [2]),)
    timeout = 300
    number = 1
    repeat = 1

    def setup(self, n_jobs):
        self.loader, self.master = _loader_and_master()
        self.grid = _grid(n_jobs)

    def time_compose_hydra(self, n_jobs):
        for overrides in self.grid:
            self.loader.load_sweep_config(self.master, overrides)
