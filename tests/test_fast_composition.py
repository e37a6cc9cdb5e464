"""The ccbench sweeper's composition (issue 40, item 4): a job's config put together from configs
Hydra composed once per set of group choices is Hydra's own config for that job, node for node.

``ComposeOnceLoader.compose`` copies templates with ``_clone`` (no validation) and sets Hydra's
bookkeeping by hand, so equality is checked on everything a node holds (type, metadata, flags,
value), not only on ``OmegaConf.to_container``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from omegaconf import DictConfig, ListConfig, OmegaConf, open_dict

from hydra_plugins.ccbench_sweeper.ccbench_sweeper import ComposeOnceLoader

CONF = Path(__file__).resolve().parents[1] / "conf"


def _loader_and_master(*overrides):
    import ccbench.running.app  # noqa: F401 - registers ccbench_schema
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra._internal.utils import create_config_search_path
    from hydra.types import RunMode

    loader = ConfigLoaderImpl(config_search_path=create_config_search_path("pkg://ccbench_conf"))
    return loader, loader.load_configuration("config", overrides=list(overrides), run_mode=RunMode.MULTIRUN)


def _nodes(node, path="") -> list:
    """Every node of a config: path, class, metadata (types, key, flags) and, for a leaf, its raw value."""
    meta = node._metadata
    row = (path, type(node).__name__, str(meta.ref_type), str(meta.object_type), meta.optional, meta.key,
           dict(meta.flags), meta.flags_root, str(getattr(meta, "key_type", None)),
           str(getattr(meta, "element_type", None)))
    if isinstance(node, (DictConfig, ListConfig)):
        content = node.__dict__["_content"]
        if isinstance(content, dict):
            children = list(content.items())
        elif isinstance(content, list):
            children = list(enumerate(content))
        else:
            return [(*row, repr(content))]
        rows = [row]
        for key, child in children:
            assert child._get_parent() is node, f"{path}.{key}: not parented to its container"
            rows += _nodes(child, f"{path}.{key}")
        return rows
    return [(*row, repr(node._value()))]


def _as_a_job_sees_it(cfg):
    """What the harness reads once Hydra's ``run_job`` set the job's number and directory."""
    with open_dict(cfg):
        cfg.merge_with({"hydra": {"runtime": {"output_dir": "out"}, "job": {"num": 7, "id": "7"}}})
    return OmegaConf.to_container(cfg, resolve=True)


def _assert_equal(ours, hydras, overrides):
    assert _nodes(ours) == _nodes(hydras), overrides
    assert ours.hydra.job.override_dirname == hydras.hydra.job.override_dirname
    assert list(ours.hydra.overrides.task) == list(hydras.hydra.overrides.task)
    assert _as_a_job_sees_it(ours) == _as_a_job_sees_it(hydras), overrides


def _leaderboard_sample(n: int) -> list:
    params = yaml.safe_load((CONF / "experiment" / "leaderboard.yaml").read_text())["hydra"]["sweeper"]["params"]
    datasets, supervisions, methods = (params[k].split(",") for k in ("dataset", "supervision", "method"))
    grid = [[f"dataset={d}", f"supervision={s}", f"method={m}"] for d in datasets for s in supervisions
            for m in methods]
    return [grid[0]] + grid[1::max(1, len(grid) // n)][:n]


@pytest.fixture(scope="module")
def leaderboard(tmp_path_factory):
    from hydra.core.utils import setup_globals

    setup_globals()  # Hydra's resolvers (now, ...), as a job has them
    return _loader_and_master("experiment=leaderboard", f"hydra.sweep.dir={tmp_path_factory.mktemp('s')}",
                              "hydra/launcher=local")


def test_leaderboard_jobs_equal_hydras_own_node_for_node(leaderboard):
    """A spread of the leaderboard's grid (three groups changed per job, assembled from templates),
    and the same jobs again with a seed (a value override on a copy)."""
    loader, master = leaderboard
    fast = ComposeOnceLoader(loader)
    sample = _leaderboard_sample(12)
    for overrides in sample + [o + ["seed=3"] for o in sample[:4]]:
        _assert_equal(fast.compose(master, overrides), loader.load_sweep_config(master, overrides), overrides)
    assert sum(v is not None for v in fast._options.values()) >= 3  # jobs were assembled from templates


UNUSUAL = [
    ["dataset=iris_uci", "supervision=pairs_mid", "method=scssap", "+method.extra=1"],  # a key added
    ["dataset=iris_uci", "supervision=pairs_mid", "method=scssap", "++method.penalty=4"],  # force-added
    ["dataset=wine_uci", "supervision=pairs_mid", "method=kmeans", "~method.n_clusters"],  # a key deleted
    ["dataset=wine_uci", "supervision=labels", "method=kmeans", "~dataset.preprocess"],
    ["dataset=iris_uci", "supervision=pairs_mid", "method=kmeans", "hydra/launcher=slurm"],  # a nested group
    ["dataset=iris_uci", "method=kmeans", "supervision=pairs_high", "constraints.per_point=0.3"],
    ["dataset=glass", "supervision=pairs_mid", "method=mpck_means", "method.max_iter=7", "n_trials=3"],
    ["dataset=wine_uci", "supervision=unconstrained", "method=ap", "trial_timeout=20"],
    ["dataset=iris_uci", "supervision=labels_noisy", "method=kmeans", "noise.rate=0.2"],
]


def test_value_adds_deletes_and_nested_groups_equal_hydras_own(leaderboard):
    """``+key=``, ``++key=``, ``~key`` on values are applied after composition (as Hydra applies
    them); a nested group (``hydra/launcher``) is one more group choice of a template."""
    loader, master = leaderboard
    fast = ComposeOnceLoader(loader)
    for overrides in UNUSUAL:
        assert fast._split(master, overrides) is not None, overrides  # the fast route, not Hydra's
        _assert_equal(fast.compose(master, overrides), loader.load_sweep_config(master, overrides), overrides)


def test_group_adds_and_deletes_go_to_hydra_and_still_equal(leaderboard):
    loader, master = leaderboard
    fast = ComposeOnceLoader(loader)
    for overrides in (["dataset=iris_uci", "method=kmeans", "~supervision"],
                      ["dataset=iris_uci", "method=kmeans", "supervision=labels", "+experiment=leaderboard_smoke"],
                      ["dataset=iris_uci", "method=kmeans,ap"]):
        assert fast._split(master, overrides) is None, overrides
    overrides = ["dataset=iris_uci", "method=kmeans", "~supervision"]
    _assert_equal(fast.compose(master, overrides), loader.load_sweep_config(master, overrides), overrides)


def test_a_job_is_a_copy_changing_it_changes_no_other_job(leaderboard):
    """Jobs share no node with their templates: what run_job and the harness write into one job's
    config (job number, a group key, a flag) is not in the next job composed from the same templates."""
    loader, master = leaderboard
    fast = ComposeOnceLoader(loader)
    overrides = _leaderboard_sample(3)[2]
    first = fast.compose(master, overrides)
    with open_dict(first):
        first.hydra.job.num = 99
        first.method.extra = "x"
        first.dataset.name = "changed"
        first.hydra.overrides.task.append("x=1")
        OmegaConf.set_readonly(first.hydra, True)
    _assert_equal(fast.compose(master, overrides), loader.load_sweep_config(master, overrides), overrides)


def test_the_validation_pass_reads_the_cell_to_cell_reads(leaderboard):
    """The sweeper checks each job on ``cell_view(config)`` (no copy of the config): the same cell
    ``to_cell`` builds from the config, interpolations resolved."""
    from ccbench.running.config import to_cell
    from hydra_plugins.ccbench_sweeper.ccbench_sweeper import cell_view

    loader, master = leaderboard
    fast = ComposeOnceLoader(loader)
    for overrides in _leaderboard_sample(4) + UNUSUAL[:3]:
        config = fast.compose(master, overrides)
        with open_dict(config):
            config.method.copied = "${seed}"  # an interpolation to resolve
        assert "hydra" not in cell_view(config)
        assert to_cell(cell_view(config)) == to_cell(config), overrides
        assert cell_view(config)["method"]["copied"] == config.seed
