"""``ccbench fetch <overrides...>``: fetch and verify every data set a run needs, ahead of it.

For offline cluster nodes: run it where there is network (or on the shared
file system the nodes read), with the same overrides as the run. It composes
the configuration as the sweep would (experiment, sweeper ``params``, the
command line's comma lists, data-set suites), keeps the distinct ``dataset``
groups, and checks each one (:func:`ccbench.datasets.fetch_dataset`): UCI files
downloaded if absent and always re-hashed against the manifest's sha256, a CSV
against its ``dataset.sha256``, OpenML sets cached under ``<data dir>/openml``.

Exit status 0 when everything is present and verified, 1 when any file is
missing or corrupt (each named), 2 for a command line that names unknown
options.
"""

from __future__ import annotations

import itertools
import sys

from .config import canonical_json

__all__ = ["needed_datasets", "fetch"]


def _compose(overrides: list[str], *, hydra: bool = False):
    from hydra import compose

    return compose("config", overrides=overrides, return_hydra_config=hydra)


def needed_datasets(args: list[str]) -> list[dict]:
    """The distinct ``dataset`` groups (with ``plugins``) the sweep of ``args`` would run, in order."""
    from hydra import initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from . import app  # noqa: F401 - registers the schema and hydra/sweeper=ccbench
    from ..datasets import expand_suites

    app.register_method_configs(app.command_line_searchpaths(args))  # method=<a plugin's method>
    parser = OverridesParser.create()
    given = expand_suites([a for a in args if not a.startswith("-") and "=" in a])
    fixed = [str(a) for a, o in zip(given, parser.parse_overrides(given)) if not o.is_sweep_override()]
    GlobalHydra.instance().clear()
    with initialize_config_module("ccbench_conf", version_base="1.3"):
        master = _compose(fixed, hydra=True)
        from hydra_plugins.ccbench_sweeper.ccbench_sweeper import append_values

        swept, given = append_values(master.hydra.sweeper.get("params"), given, master.hydra.sweeper.get("append"))
        fixed = [str(a) for a, o in zip(given, parser.parse_overrides(given)) if not o.is_sweep_override()]
        params = [f"{k}={v}" for k, v in swept.items()]
        # the command line replaces a key the experiment sweeps, as Hydra's basic sweeper does
        by_key: dict[str, list[str]] = {}
        for o in parser.parse_overrides(expand_suites(params + given)):
            if o.key_or_group == "dataset" or o.key_or_group.startswith("dataset.") or o.key_or_group == "plugins":
                values = list(o.sweep_string_iterator()) if o.is_sweep_override() else [o.get_value_element_as_str()]
                by_key[o.key_or_group] = [f"{o.key_or_group}={v}" for v in values]
        seen, out = set(), []
        for job in itertools.product(*by_key.values()):
            cfg = _compose(fixed + list(job)) if job else _compose(fixed)
            entry = {"dataset": dict(cfg.dataset), "plugins": list(cfg.plugins or [])}
            key = canonical_json(entry)
            if key not in seen:
                seen.add(key)
                out.append(entry)
    GlobalHydra.instance().clear()
    return out


def fetch(args: list[str]) -> int:
    """Fetch and verify the data sets of ``args``; print one line per file; exit status."""
    from omegaconf import OmegaConf

    from hydra.core.override_parser.overrides_parser import OverridesParser

    from .. import registry
    from ..datasets import fetch_dataset
    from .validate import check_command_line

    from .app import command_line_searchpaths, register_method_configs

    register_method_configs(command_line_searchpaths(args))  # method=<a plugin's method>, as the sweep
    given = [a for a in args if not a.startswith("-") and "=" in a]
    problems = check_command_line(OverridesParser.create().parse_overrides(given))
    if problems:
        print("ccbench fetch: error:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    failed = 0
    for entry in needed_datasets(args):
        registry.load_plugins(entry["plugins"])
        options = OmegaConf.to_container(OmegaConf.create(entry["dataset"]), resolve=True)
        for what, problem in fetch_dataset(options.pop("name"), **options):
            if problem is None:
                print(f"ok      {what}")
            else:
                failed += 1
                print(f"FAILED  {what}: {problem}", file=sys.stderr)
    if failed:
        print(f"ccbench fetch: {failed} data file(s) missing or corrupt (above); a run would fail on them",
              file=sys.stderr)
        return 1
    return 0
