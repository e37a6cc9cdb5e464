"""Start-up that does not grow with the sweep: composing the configs of a sweep's jobs.

``hydra/sweeper=ccbench`` composes each job before any job runs (validation) and hands the
config to the launcher. Hydra composes one job in about 0.1 s (YAML, defaults list, merges);
the sweeper composes once per distinct set of group choices and copies that template for
each job, applying its value overrides (``ComposeOnceLoader.compose``). ``time_compose``
composes ``n_jobs`` jobs of a leaderboard-like grid: 24 data sets x 2 methods (48 templates)
x ``n_jobs / 48`` values of ``seed``; ``time_compose_hydra`` is Hydra's own, per job, on a
few jobs (the baseline; divide by its ``n_jobs``).
"""

from __future__ import annotations

import itertools
import tempfile

from .common import smoke_or

DATASETS = ["iris_uci", "wine_uci", "soybean_small", "zoo", "glass", "ecoli", "ionosphere", "voting", "housing",
            "wdbc", "balance", "credit", "breast_cancer_wisconsin", "pima", "yeast", "mfeat_fac", "mfeat_pix",
            "segmentation", "sick", "splice", "promoters", "hepatitis", "parkinsons", "spectf"]


def _grid(n_jobs: int) -> list[list[str]]:
    cells = itertools.product(range(-(-n_jobs // (len(DATASETS) * 2))), DATASETS, ["kmeans", "pck_means"])
    return [[f"dataset={d}", "supervision=pairs_mid", f"method={m}", f"seed={s}"] for s, d, m in cells][:n_jobs]


def _loader_and_master():
    import ccbench.running.app  # noqa: F401 - registers ccbench_schema and the sweeper
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra._internal.utils import create_config_search_path
    from hydra.types import RunMode

    loader = ConfigLoaderImpl(config_search_path=create_config_search_path("pkg://ccbench_conf"))
    master = loader.load_configuration(
        "config", overrides=["experiment=leaderboard", f"hydra.sweep.dir={tempfile.mkdtemp()}"],
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
