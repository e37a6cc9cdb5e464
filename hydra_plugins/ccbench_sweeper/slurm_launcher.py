"""``hydra/launcher=slurm``: Hydra's submitit SLURM launcher with three changes.

- Before submitting, what each task asks for is checked against the partition
  (:func:`ccbench.running.slurm.request_problems`), and the array's length against the
  cluster's ``MaxArraySize`` (:func:`~ccbench.running.slurm.array_problems`): a request no
  node can satisfy stops the sweep at once (exit status 2, one line per problem) instead of
  an ``sbatch`` error or a task pending forever.
- It waits for every task, then names every task that did not finish (killed, cancelled,
  out of memory, timed out too often) with the cells it ran, and exits 1; Hydra's own stops
  at the first such task with submitit's traceback while the others still run.
- With packed cells (``hydra.sweeper.cells_per_task``), a task's cells are all named.
"""

from typing import Any, List, Sequence

from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, filter_overrides
from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher
from omegaconf import OmegaConf


def _asks_memory(params: dict) -> bool:
    extra = params.get("additional_parameters") or {}
    return any(params.get(k) or extra.get(k) for k in ("mem", "mem_per_cpu", "mem_per_gpu"))


class CCBenchSlurmLauncher(SlurmLauncher):
    """See the module docstring."""

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        import logging
        from pathlib import Path

        import submitit

        from ccbench.running.slurm import array_problems, default_mem_gb, failure_report, request_problems
        from ccbench.running.validate import ConfigProblems

        assert self.config is not None and len(job_overrides) > 0
        params = dict(self.params)
        if params.get("mem_gb") is None and not _asks_memory(params):
            params["mem_gb"] = default_mem_gb(params.get("partition"))
        problems = request_problems(params) + array_problems(len(job_overrides))
        if problems:
            raise ConfigProblems(["SLURM cannot run these tasks: " + p for p in problems])
        log = logging.getLogger(__name__)
        init_keys = {"max_num_timeout", "submitit_folder"}
        executor = submitit.AutoExecutor(cluster=self._EXECUTOR, folder=params["submitit_folder"],
                                         slurm_max_num_timeout=params.get("max_num_timeout", 0))
        baseparams = set(OmegaConf.structured(BaseQueueConf).keys())
        executor.update_parameters(**{k if k in baseparams else f"{self._EXECUTOR}_{k}": v
                                      for k, v in params.items() if k not in init_keys})
        log.info(f"Submitit '{self._EXECUTOR}' sweep output dir : {self.config.hydra.sweep.dir}")
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        job_params: List[Any] = []
        for idx, overrides in enumerate(job_overrides, start=initial_job_idx):
            log.info(f"\t#{idx} : {' '.join(filter_overrides(overrides))}")
            job_params.append((list(overrides), "hydra.sweep.dir", idx, f"job_id_for_{idx}", Singleton.get_state()))
        jobs = executor.map_array(self, *zip(*job_params))
        returns, failed = [], []
        for job, (overrides, _, idx, _, _) in zip(jobs, job_params):
            try:
                returns.append(job.results()[0])
            except Exception as exc:  # noqa: BLE001 - every task is waited for, then all are named
                state = job.watcher.get_state(job.job_id, mode="force")
                detail = str(exc).strip().splitlines()
                detail = [d for d in detail if d.strip()]
                what = f"SLURM state {state}" + (f"; {detail[-1].strip()}" if detail else "")
                failed.append((job.job_id, what, self.cells_of(idx, overrides)))
        if failed:
            raise SystemExit(failure_report(failed))
        return returns

    def cells_of(self, job_num: int, overrides: Sequence[str]) -> List[str]:
        """The cells (override lines) a task runs: its own, plus the packed ones."""
        cells = [" ".join(filter_overrides(overrides))]
        pack = getattr(self.task_function, "pack_of", None)
        if pack is not None:
            cells += [" ".join(filter_overrides(o)) for o in pack(job_num)]
        return cells
