"""``hydra/sweeper=ccbench``: Hydra's basic sweeper, each job's config composed once (and checked).

The basic sweeper composes every job of a batch to validate it (so a bad
override fails before any job runs), then the launcher composes every job again
to run it. Composing one ccbench job costs about 0.1 s (YAML parsing and
OmegaConf merges), which made the 12-job quick start spend 1.3 s composing
configs it had already composed. This sweeper keeps the validation pass and
hands the launcher the config that pass produced; everything else (the
cartesian product, ``params``, ``max_batch_size``) is the basic sweeper's.
Two additions: the validation pass also checks every job's group keys and
values (:mod:`ccbench.running.validate`; a bad sweep stops before its first job), and
a data-set suite among the ``dataset`` choices (``dataset=uci_all``) is
replaced by its members (:func:`ccbench.datasets.expand_suites`).
"""

# No `from __future__ import annotations`: Hydra's plugin scan executes this
# module before it is in sys.modules, where string annotations break @dataclass.
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.config_store import ConfigStore
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig


@dataclass
class AppendConf:
    """``hydra.sweeper.append.<key>=[a,b]``: values added to a swept key's list (:func:`append_values`).
    The five choosable groups are declared, so no ``+`` is needed; another key takes ``+hydra.sweeper.append.<key>``."""

    method: Any = None
    dataset: Any = None
    supervision: Any = None
    constraints: Any = None
    noise: Any = None


@dataclass
class CCBenchSweeperConf:
    _target_: str = "hydra_plugins.ccbench_sweeper.ccbench_sweeper.CCBenchSweeper"
    max_batch_size: Optional[int] = None
    params: Optional[Dict[str, str]] = None
    # values added to a swept key's list instead of replacing it:
    # `ccbench experiment=leaderboard hydra.sweeper.append.method=[my_method]`
    append: AppendConf = field(default_factory=AppendConf)


ConfigStore.instance().store(group="hydra/sweeper", name="ccbench", node=CCBenchSweeperConf, provider="ccbench")


class ComposeOnceLoader:
    """A config loader that returns each job's config composed by the validation pass.

    The first ``load_sweep_config`` for a job's overrides composes and keeps the
    result; the next call with the same overrides (the launcher's) takes it
    out, so a config is handed out once and the cache empties as jobs launch.
    Everything else is the wrapped loader's.
    """

    def __init__(self, loader: Any):
        self._loader = loader
        self._composed: dict = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def load_sweep_config(self, master_config: DictConfig, sweep_overrides: List[str]) -> DictConfig:
        key = (id(master_config), tuple(sweep_overrides))
        if key in self._composed:
            return self._composed.pop(key)
        config = self._loader.load_sweep_config(master_config, sweep_overrides)
        self._composed[key] = config
        return config

    def __getstate__(self) -> dict:
        # launchers that pickle themselves (submitit) must not ship the cache
        return {"_loader": self._loader, "_composed": {}}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)


def append_values(params: Optional[Dict[str, str]], arguments: List[str],
                  append: Optional[Dict[str, Any]]) -> tuple:
    """``(params, arguments)`` with ``append``'s values added to each key's sweep list.

    ``append`` maps a key (``method``) to a value or a list of values (``[my_method, other]``,
    or ``"a,b"``); they extend the command line's ``key=...`` when it has one, else the
    experiment's ``hydra.sweeper.params`` list, else they become the key's list. A value
    already in the list is not added twice.
    """
    params = dict(params or {})
    arguments = list(arguments)
    for key, extra in (append or {}).items():
        if extra is None:
            continue
        items = str(extra).split(",") if isinstance(extra, (str, int, float)) else list(extra)
        values = [str(v).strip() for v in items]
        at = next((i for i, a in enumerate(arguments) if a.split("=", 1)[0] == key), None)
        current = arguments[at].split("=", 1)[1] if at is not None else params.get(key)
        have = [v for v in str(current).split(",") if v] if current is not None else []
        merged = ",".join(have + [v for v in values if v and v not in have])
        if at is not None:
            arguments[at] = f"{key}={merged}"
        else:
            params[key] = merged
    return params, arguments


class CCBenchSweeper(BasicSweeper):
    """Hydra's ``BasicSweeper`` whose launcher reuses the validated job configs, with ``append``."""

    def __init__(self, max_batch_size: Optional[int] = None, params: Optional[Dict[str, str]] = None,
                 append: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(max_batch_size=max_batch_size, params=params)
        self.append = append

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        context = HydraContext(config_loader=ComposeOnceLoader(hydra_context.config_loader),
                               callbacks=hydra_context.callbacks)
        super().setup(hydra_context=context, task_function=task_function, config=config)

    def sweep(self, arguments: List[str]) -> Any:
        """The basic sweep, with data-set suites (``dataset=uci_all``) expanded to their members."""
        from ccbench.datasets import expand_suites

        if self.append:
            params, arguments = append_values(self.params, list(arguments), self.append)
            self.params = params
        if self.params:
            self.params = dict(a.split("=", 1) for a in expand_suites([f"{k}={v}" for k, v in self.params.items()]))
        return super().sweep(expand_suites(list(arguments)))

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        """Compose every job (as the basic sweeper does) and check it before any job starts.

        Every group key against its target's parameters, names and values
        (:func:`ccbench.running.validate.refuse_bad_jobs`): a typo stops the sweep with
        one line per problem instead of turning every trial into an error row.
        """
        from ccbench.running.validate import refuse_bad_jobs

        loader = self.hydra_context.config_loader
        refuse_bad_jobs(lambda overrides: loader.load_sweep_config(self.config, list(overrides)), batch)
