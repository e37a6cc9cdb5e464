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
from collections import defaultdict
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
    # cells run one after another in one launcher job (one SLURM array task): imports and start-up
    # are paid once per task; a killed task loses at most the cell it was running
    cells_per_task: int = 1
    # at most this many launcher jobs per batch (cells_per_task raised to fit); null: no limit
    max_tasks: Optional[int] = None


ConfigStore.instance().store(group="hydra/sweeper", name="ccbench", node=CCBenchSweeperConf, provider="ccbench")


_NODE_ATTRIBUTES = ({"_metadata", "_parent", "_flags_cache", "_content"},
                    {"_metadata", "_parent", "_flags_cache", "_val"},
                    {"enum_type", "fields"})  # an EnumNode's too: its enum class and a name -> member map


def _clonable(node: Any) -> bool:
    """Whether :func:`_clone` copies ``node`` whole: every node of it has only the attributes
    OmegaConf 2.3 gives a node (a later OmegaConf that adds one makes the sweeper fall back to
    Hydra's composition instead of copying half a node)."""
    from omegaconf import DictConfig, ListConfig
    from omegaconf.nodes import EnumNode, ValueNode

    attributes = set(node.__dict__)
    if isinstance(node, (DictConfig, ListConfig)):
        if attributes != _NODE_ATTRIBUTES[0]:
            return False
        content = node.__dict__["_content"]
        children = content.values() if isinstance(content, dict) else content if isinstance(content, list) else ()
        return all(_clonable(child) for child in children)
    if isinstance(node, EnumNode):
        attributes -= _NODE_ATTRIBUTES[2]
    return isinstance(node, ValueNode) and attributes == _NODE_ATTRIBUTES[1]


def _clone(node: Any, parent: Any = None, replace: Optional[dict] = None) -> Any:
    """A copy of an OmegaConf node tree, made node by node without validating anything.

    Why not ``copy.deepcopy`` or ``pickle``: both are generic (a memo, ``__reduce_ex__``,
    OmegaConf's ``__setstate__`` re-deriving each node's types) and cost 8-10 us a node; a job's
    config has about 190 nodes (150 of them Hydra's own node), so that was most of a job's
    composition. Here a node is a new object with the source's attributes: its metadata copied
    (own ``flags`` dict, empty resolver cache), its children cloned, its parent the copy's.
    Values are shared (they are immutable: str, int, float, bool, None, enums; an
    EnumNode's enum class and member map too).
    ``replace`` maps a child's key to the node to clone in its place, or to a ``replace`` of
    its own for that child (how a job is put together from its templates). Only for trees
    :func:`_clonable` accepted."""
    cls = type(node)
    new = object.__new__(cls)
    attributes = new.__dict__
    attributes.update(node.__dict__)
    meta = attributes["_metadata"]
    copied = object.__new__(type(meta))
    copied.__dict__.update(meta.__dict__)
    copied.__dict__["flags"] = dict(meta.flags)
    copied.__dict__["resolver_cache"] = defaultdict(dict)
    attributes["_metadata"] = copied
    attributes["_parent"] = parent
    attributes["_flags_cache"] = None
    content = attributes.get("_content")
    if type(content) is dict:
        if replace:
            attributes["_content"] = {
                k: (_clone(v, new, r) if isinstance(r := replace.get(k), dict) else _clone(r or v, new))
                for k, v in content.items()}
        else:
            attributes["_content"] = {k: _clone(v, new) for k, v in content.items()}
    elif type(content) is list:
        attributes["_content"] = [_clone(v, new) for v in content]
    return new


def _set_lines(parent: Any, key: str, lines: List[str]) -> None:
    """``parent[key] = lines`` for a list of strings (``hydra.overrides.task``), each item a
    :func:`_clone` of the list's first item with its value and index set: OmegaConf's assignment
    validates and wraps every item (a quarter of a job's composition). A list without an item to
    copy is assigned the usual way."""
    items = parent._get_node(key)
    content = items.__dict__["_content"]
    if not isinstance(content, list) or not content:
        parent[key] = lines
        return
    prototype, new = content[0], []
    for i, line in enumerate(lines):
        item = _clone(prototype, items)
        item._metadata.key = i
        item._set_value(line)
        new.append(item)
    items.__dict__["_content"] = new


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
        config = self.compose(master_config, sweep_overrides)
        self._composed[key] = config
        return config

    def compose(self, master_config: DictConfig, sweep_overrides: List[str]) -> DictConfig:
        """Hydra's ``load_sweep_config``, composed by Hydra once per distinct set of group choices.

        Hydra composes the first job's group choices (the base) once, and each group option
        once more (the base with that one choice changed: a template); a job is a copy of the
        template of its choices, or, when it changes two or more groups, a copy of the base with
        each changed group's top-level keys (and ``hydra.runtime.choices`` entries) taken from
        that group's template (:meth:`_parts`; any overlap or a change outside those keys gets a
        template of its own). The copy is :func:`_clone`'s (no validation: every node comes from
        a config Hydra composed). Then its value overrides (``key=v``, ``+key=v``, ``++key=v``,
        ``~key``) are applied the way Hydra applies them after composition
        (``_apply_overrides_to_config``, struct mode) and Hydra's bookkeeping
        (``hydra.overrides.task``, ``override_dirname``) redone. About 1 ms a job instead of about
        100 ms (``tests/benchmarks/bench_compose.py``). Anything else (a group added or deleted,
        a package ``@``, a sweep, ``hydra.*``) goes to Hydra. ``tests/test_scaleout.py`` checks the
        result equals Hydra's.
        """
        fast = self._split(master_config, sweep_overrides)
        if fast is None:
            return self._loader.load_sweep_config(master_config, sweep_overrides)
        parsed, groups, values = fast
        from hydra._internal.config_loader_impl import ConfigLoaderImpl, get_overrides_dirname
        from omegaconf import OmegaConf

        parts = self._parts(master_config, groups)
        if parts is None:
            template = self._template(master_config, groups)
            if template is None:
                return self._loader.load_sweep_config(master_config, sweep_overrides)
            config, dirname = _clone(template[0]), template[1]
        else:
            base, dirname = self._template(master_config, self._base(groups))
            config = _clone(base, None, parts)
        ConfigLoaderImpl._apply_overrides_to_config(values, config)
        app = [o for o in parsed if not o.is_hydra_override()]
        hydra_node = config._get_node("hydra")
        _set_lines(hydra_node._get_node("overrides"), "task", [o.input_line for o in app])
        hydra_node._get_node("job")._get_node("override_dirname")._set_value(get_overrides_dirname(
            overrides=app, kv_sep=dirname[0], item_sep=dirname[1], exclude_keys=dirname[2]))
        OmegaConf.copy_cache(from_config=master_config, to_config=config)
        return config

    def _template(self, master_config: DictConfig, groups: List[Any]) -> Any:
        """(config, override_dirname settings) of a set of group choices, composed by Hydra once
        and never changed (jobs get :func:`_clone` copies); None when it cannot be cloned."""
        tkey = (id(master_config), tuple(o.input_line for o in groups))
        templates = self.__dict__.setdefault("_templates", {})
        if tkey not in templates:
            composed = self._loader.load_sweep_config(master_config, [o.input_line for o in groups])
            d = composed.hydra.job.config.override_dirname
            templates[tkey] = (composed, (d.kv_sep, d.item_sep, list(d.exclude_keys))) if _clonable(composed) \
                else None
        return templates[tkey]

    def _base(self, groups: List[Any]) -> List[Any]:
        """The group choices of the first job composed: every other job is assembled from it."""
        return self.__dict__.setdefault("_base_groups", list(groups))

    def _option(self, master_config: DictConfig, base: List[Any], i: int, choice: Any) -> Any:
        """What choosing ``choice`` instead of the base's ``i``-th group choice changes, as a
        :func:`_clone` ``replace`` (its changed top-level keys and ``hydra.runtime.choices``
        entries, the nodes of the option's template), or None when it changes anything else
        (a key added or removed, the hydra node beyond the choices)."""
        options = self.__dict__.setdefault("_options", {})
        okey = (id(master_config), tuple(o.input_line for o in base), i, choice.input_line)
        if okey not in options:
            from omegaconf import OmegaConf

            groups = list(base)
            groups[i] = choice
            templates = self._template(master_config, groups), self._template(master_config, base)
            result = None
            if templates[0] is not None and templates[1] is not None:
                option = templates[0][0]
                t, b = OmegaConf.to_container(option), OmegaConf.to_container(templates[1][0])
                if set(t) == set(b):
                    th, bh = t.pop("hydra"), dict(b)["hydra"]
                    tc, bc = th["runtime"].pop("choices"), dict(bh["runtime"])["choices"]
                    bh = {**bh, "runtime": {k: v for k, v in bh["runtime"].items() if k != "choices"}}
                    for node in (th, bh):
                        node["overrides"] = {**node["overrides"], "task": None}
                        node["job"] = {**node["job"], "override_dirname": None}
                    if th == bh and set(tc) == set(bc):
                        choices = option.hydra.runtime.choices
                        result = {k: option._get_node(k) for k in t if t[k] != b[k]}
                        changed = {k: choices._get_node(k) for k, v in tc.items() if bc[k] != v}
                        if changed:
                            result["hydra"] = {"runtime": {"choices": changed}}
            options[okey] = result
        return options[okey]

    def _parts(self, master_config: DictConfig, groups: List[Any]) -> Optional[dict]:
        """A job whose group choices differ from the base's in two or more groups, as a
        :func:`_clone` ``replace`` of the base: one template per changed choice (composed once
        each: a grid of 24 data sets x 22 methods x 9 supervisions composes 53 templates, not
        4,752); None when a template of its own is needed (at most one changed group, different
        groups, changes that overlap)."""
        base = self._base(groups)
        if [o.key_or_group for o in groups] != [o.key_or_group for o in base]:
            return None
        changed = [(i, o) for i, o in enumerate(groups) if o.input_line != base[i].input_line]
        if len(changed) < 2:
            return None
        parts = [self._option(master_config, base, i, o) for i, o in changed]
        if any(p is None for p in parts):
            return None
        keys = [k for p in parts for k in p if k != "hydra"]
        choices = [k for p in parts for k in p.get("hydra", {}).get("runtime", {}).get("choices", {})]
        if len(keys) != len(set(keys)) or len(choices) != len(set(choices)):
            return None
        replace: dict = {"hydra": {"runtime": {"choices": {}}}}
        for p in parts:
            replace.update({k: v for k, v in p.items() if k != "hydra"})
            replace["hydra"]["runtime"]["choices"].update(p.get("hydra", {}).get("runtime", {}).get("choices", {}))
        return replace

    def _split(self, master_config: DictConfig, sweep_overrides: List[str]) -> Any:
        """(parsed sweep overrides, group-choice overrides, value overrides), or None when the
        fast path does not apply: a group added (``+group=x``) or deleted (``~group``), a
        package (``group@pkg=x``), a sweep (``a,b``), a ``hydra.*`` value. A value override with
        ``+``, ``++`` or ``~`` is fine: Hydra too applies those after composing."""
        from hydra.core.override_parser.overrides_parser import OverridesParser

        parser = self.__dict__.get("_parser")
        if parser is None:
            parser = self.__dict__["_parser"] = OverridesParser.create()
        memo = self.__dict__.setdefault("_parsed", {})  # a sweep has few distinct override lines
        try:
            parsed = []
            for line in sweep_overrides:
                if line not in memo:
                    memo[line] = parser.parse_override(line)
                parsed.append(memo[line])
        except Exception:  # noqa: BLE001 - Hydra says what is wrong
            return None
        repo = getattr(self._loader, "repository", None)
        if repo is None:
            return None
        groups, values = [], []
        is_group = self.__dict__.setdefault("_is_group", {})
        for o in parsed:
            if o.package is not None or o.is_sweep_override():
                return None
            key = o.key_or_group
            if key.startswith("hydra") and "/" not in key and "." in key:  # hydra.x=...: Hydra handles it
                return None
            if key not in is_group:
                is_group[key] = repo.group_exists(key)
            if is_group[key] and (o.is_add() or o.is_delete() or o.is_force_add()):
                return None
            (groups if is_group[key] else values).append(o)
        return parsed, groups, values

    def __getstate__(self) -> dict:
        # launchers that pickle themselves (submitit) must not ship the caches
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


#: ``<sweep dir>/.ccbench_packs.<digest>.json``: one pack map per grid (batch) launched into a sweep
#: directory, named by a digest of its content, so two commands packing into one directory at once
#: each read their own map (one shared name let the second command's map replace the first's: the
#: first command's tasks ran the second's cells and two of its own were never run).
PACKS_GLOB = ".ccbench_packs.*.json"


def packs_name(packs: Dict[int, List[Any]]) -> str:
    """The file name of pack map ``packs`` (``job num -> [(cell num, overrides)]``):
    ``.ccbench_packs.<first 16 hex digits of the SHA-256 of its canonical JSON>.json``. Equal maps
    share a name (and a content); different maps cannot overwrite each other."""
    import hashlib
    import json

    text = json.dumps({str(k): v for k, v in sorted(packs.items())}, sort_keys=True)
    return f".ccbench_packs.{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"


class PackedTask:
    """The task function of a packed sweep: runs its job's own cell, then the cells packed with it.

    Each packed cell is a Hydra job of its own (composed from its overrides, its own output
    directory, ``on_job_start``/``on_job_end`` callbacks), run by Hydra's ``run_job`` inside the
    task. Which cells go with which launcher job (``job num -> [(cell num, overrides)]``) is written
    once per batch to ``<sweep dir>/.ccbench_packs.<digest>.json`` (:func:`packs_name`) and read by
    the task, so a launcher that pickles itself per task (submitit) does not ship the whole map to
    every task; the task carries only the file's name (``packs_file``), so grids launched into one
    sweep directory at once never read each other's map.
    """

    def __init__(self, task_function: TaskFunction, hydra_context: HydraContext, config: DictConfig):
        self.task_function = task_function
        self.hydra_context = hydra_context
        self.config = config
        self.packs: Dict[int, List[Any]] = {}
        self.packs_file: Optional[str] = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "packs": {}}

    def _packs_file(self) -> Any:
        from pathlib import Path

        sweep = Path(str(self.config.hydra.sweep.dir))
        if self.packs_file is not None:
            return sweep / self.packs_file
        found = sorted(sweep.glob(PACKS_GLOB))  # a task made without add(): only an unambiguous map
        if len(found) > 1:
            raise RuntimeError(f"{sweep} holds {len(found)} pack maps ({', '.join(f.name for f in found)}) and "
                               "this task does not say which is its own")
        return found[0] if found else sweep / packs_name({})

    def add(self, packs: Dict[int, List[Any]]) -> None:
        """Record (and write) which cells each launcher job runs after its own."""
        import json
        import os

        self.packs.update(packs)
        self.packs_file = packs_name(self.packs)
        path = self._packs_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({str(k): v for k, v in self.packs.items()}))
        os.replace(tmp, path)

    def pack_of(self, job_num: int) -> List[List[str]]:
        """Overrides of the cells launcher job ``job_num`` runs after its own."""
        if not self.packs:
            import json

            path = self._packs_file()
            if path.exists():
                self.packs = {int(k): v for k, v in json.loads(path.read_text()).items()}
        return [overrides for _, overrides in self.packs.get(job_num, [])]

    def __call__(self, cfg: DictConfig) -> Any:
        from hydra.core.hydra_config import HydraConfig
        from hydra.core.utils import run_job
        from omegaconf import open_dict

        outer = HydraConfig.get().job
        ret = self.task_function(cfg)
        self.pack_of(outer.num)
        failed = None
        for cell_num, overrides in self.packs.get(outer.num, []):
            config = self.hydra_context.config_loader.load_sweep_config(self.config, list(overrides))
            with open_dict(config.hydra.job) as job:
                job.id = f"{outer.id}_{cell_num}"
                job.num = cell_num
            result = run_job(hydra_context=self.hydra_context, task_function=self.task_function, config=config,
                             job_dir_key="hydra.sweep.dir", job_subdir_key="hydra.sweep.subdir")
            if failed is None and result.status.name == "FAILED":
                failed = result
        if failed is not None:  # as an unpacked job would: the failure reaches the sweeper
            _ = failed.return_value
        return ret


def pack_by_class(classes: Sequence[Any], cells_per_task: int, max_tasks: Optional[int] = None) -> List[List[int]]:
    """Packs of cell indices: consecutive cells of one resource class (``classes[i]``, e.g. the
    memory a cell's method needs; ``None`` for all when the launcher has no classes), at most
    ``k`` a pack. A pack never mixes classes, because its task gets one resource request: a cell
    that needs 8 GB packed with 4 GB ones made the whole task ask for 8 GB (or be killed).

    ``k`` is ``cells_per_task``, raised until the packs number at most ``max_tasks``: with ``C``
    classes of ``n_c`` cells that is ``sum_c ceil(n_c / k) <= max_tasks`` (at ``k = max n_c`` there are
    ``C`` packs, the fewest possible). Classes keep the order of their first cell; cells their order."""
    groups: Dict[Any, List[int]] = {}
    for i, c in enumerate(classes):
        groups.setdefault(c, []).append(i)
    sizes = [len(g) for g in groups.values()]
    k = max(1, int(cells_per_task))
    if max_tasks and sizes:
        k = max(k, -(-len(classes) // int(max_tasks)))
        while k < max(sizes) and sum(-(-s // k) for s in sizes) > int(max_tasks):
            k += 1
    return [g[i:i + k] for g in groups.values() for i in range(0, len(g), k)]


class _PackingLauncher:
    """Wraps the launcher: launches one job per pack of up to ``cells_per_task`` consecutive cells of
    one resource class (the launcher's ``resource_class(overrides)``, if it has one: :func:`pack_by_class`)."""

    def __init__(self, launcher: Any, task: PackedTask, cells_per_task: int, max_tasks: Optional[int]):
        self._launcher = launcher
        self._task = task
        self._k = max(1, int(cells_per_task))
        self._max_tasks = max_tasks

    def __getattr__(self, name: str) -> Any:
        return getattr(self._launcher, name)

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Any:
        class_of = getattr(self._launcher, "resource_class", None)
        classes = [class_of(o) for o in job_overrides] if class_of is not None else [None] * len(job_overrides)
        packs = pack_by_class(classes, self._k, self._max_tasks)
        self._task.add({initial_job_idx + p: [[initial_job_idx + j, list(job_overrides[j])] for j in pack[1:]]
                        for p, pack in enumerate(packs)})
        try:
            return self._launcher.launch([job_overrides[pack[0]] for pack in packs], initial_job_idx=initial_job_idx)
        finally:
            composed = getattr(self._task.hydra_context.config_loader, "_composed", None)
            if composed is not None:  # configs of packed cells composed here but run elsewhere
                composed.clear()


class _IncompleteCellsOnly:
    """Wraps a launcher whose tasks each pay a start-up (``submits_incomplete_cells_only``: SLURM):
    launches only the cells that are not complete (:func:`ccbench.running.harness.cell_is_complete`:
    every trial has a row a resume would keep, in the cell's own output directory), so a resume
    after one lost task of 906 submits that task's cells, not the whole grid again. A cell whose
    output directory cannot be known before it runs (a ``hydra.sweep.subdir`` naming the job's
    number) is launched: a complete one then runs no trial."""

    def __init__(self, launcher: Any, config_loader: Any, config: DictConfig):
        self._launcher = launcher
        self._loader = config_loader
        self._config = config

    def __getattr__(self, name: str) -> Any:
        return getattr(self._launcher, name)

    def _complete(self, overrides: Sequence[str]) -> bool:
        from pathlib import Path

        from omegaconf import OmegaConf

        from ccbench.running.harness import cell_is_complete

        try:
            config = self._loader.load_sweep_config(self._config, list(overrides))
            out = Path(str(OmegaConf.select(config, "hydra.sweep.dir"))) / str(
                OmegaConf.select(config, "hydra.sweep.subdir", throw_on_missing=True))
            return cell_is_complete(cell_view(config), out)
        except Exception:  # noqa: BLE001 - unknown: launch it (its job decides what to run)
            return False

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Any:
        import sys

        todo = [o for o in job_overrides if not self._complete(o)]
        if len(todo) < len(job_overrides):
            print(f"ccbench: {len(job_overrides) - len(todo)} of {len(job_overrides)} cells are complete (every "
                  f"trial has a row in its results store); submitting the other {len(todo)}", file=sys.stderr,
                  flush=True)
        if not todo:
            return []
        return self._launcher.launch(todo, initial_job_idx=initial_job_idx)


class CCBenchSweeper(BasicSweeper):
    """Hydra's ``BasicSweeper`` whose launcher reuses the validated job configs, with ``append``."""

    def __init__(self, max_batch_size: Optional[int] = None, params: Optional[Dict[str, str]] = None,
                 append: Optional[Dict[str, Any]] = None, cells_per_task: int = 1,
                 max_tasks: Optional[int] = None) -> None:
        super().__init__(max_batch_size=max_batch_size, params=params)
        self.append = append
        self.cells_per_task = cells_per_task
        self.max_tasks = max_tasks

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        context = HydraContext(config_loader=ComposeOnceLoader(hydra_context.config_loader),
                               callbacks=hydra_context.callbacks)
        packing = self.cells_per_task > 1 or self.max_tasks is not None
        if packing:
            task_function = PackedTask(task_function, context, config)
        super().setup(hydra_context=context, task_function=task_function, config=config)
        if packing:
            self.launcher = _PackingLauncher(self.launcher, task_function, self.cells_per_task, self.max_tasks)
        if getattr(self.launcher, "submits_incomplete_cells_only", False):
            self.launcher = _IncompleteCellsOnly(self.launcher, context.config_loader, config)

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
        refuse_bad_jobs(lambda overrides: cell_view(loader.load_sweep_config(self.config, list(overrides))), batch)


def cell_view(config: DictConfig) -> dict:
    """The job's cell as :func:`ccbench.running.config.to_cell` reads it (every root key but
    ``hydra``, resolved), without the ``masked_copy`` ``to_cell`` makes of a config: that copy
    re-validated every node and was a third of the leaderboard's start-up. Each key is resolved
    where it is, in the job's config."""
    from omegaconf import Container, OmegaConf

    cell = {}
    for key in config.keys():
        if key == "hydra":
            continue
        node = config._get_node(key)
        if isinstance(node, Container):
            cell[key] = OmegaConf.to_container(node, resolve=True)
        else:
            cell[key] = "???" if node._is_missing() else config[key]
    return cell
