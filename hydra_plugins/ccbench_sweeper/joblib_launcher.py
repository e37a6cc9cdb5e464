"""``hydra/launcher=local``: Hydra's joblib launcher, each job composed once.

Hydra's joblib launcher sends every worker the config loader and has it compose the job
again (``execute_job``), after the sweeper composed it to check it: two compositions per job,
the second one Hydra's full one (a worker's unpickled loader has none of the sweeper's
templates). This launcher ships each job its config as the sweeper composed it (in a
stand-in loader that only returns it), so a job is composed once, in the main process.
"""

from typing import Any, List, Sequence

from hydra.core.utils import JobReturn
from hydra.types import HydraContext
from hydra_plugins.hydra_joblib_launcher.joblib_launcher import JoblibLauncher


class Composed:
    """A config loader that returns one job's config, composed already."""

    def __init__(self, config: Any):
        self.config = config

    def load_sweep_config(self, master_config: Any, sweep_overrides: List[str]) -> Any:
        return self.config


class CCBenchJoblibLauncher(JoblibLauncher):
    """See the module docstring."""

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        import logging
        from pathlib import Path

        from hydra.core.singleton import Singleton
        from hydra.core.utils import configure_log, filter_overrides, setup_globals
        from hydra_plugins.hydra_joblib_launcher._core import execute_job, process_joblib_cfg
        from joblib import Parallel, delayed

        assert self.config is not None and self.task_function is not None and self.hydra_context is not None
        log = logging.getLogger(__name__)
        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        joblib_cfg = self.joblib
        joblib_cfg["backend"] = "loky"
        process_joblib_cfg(joblib_cfg)
        log.info("Joblib.Parallel({}) is launching {} jobs".format(
            ",".join(f"{k}={v}" for k, v in joblib_cfg.items()), len(job_overrides)))
        log.info(f"Launching jobs, sweep output dir : {sweep_dir}")
        for idx, overrides in enumerate(job_overrides):
            log.info(f"\t#{idx} : {' '.join(filter_overrides(overrides))}")
        singleton_state = Singleton.get_state()
        loader, callbacks = self.hydra_context.config_loader, self.hydra_context.callbacks

        def context(overrides: Sequence[str]) -> HydraContext:
            config = loader.load_sweep_config(self.config, list(overrides))
            return HydraContext(config_loader=Composed(config), callbacks=callbacks)

        runs = Parallel(**joblib_cfg)(
            delayed(execute_job)(initial_job_idx + idx, overrides, context(overrides), self.config,
                                 self.task_function, singleton_state)
            for idx, overrides in enumerate(job_overrides))
        assert isinstance(runs, list)
        return runs
