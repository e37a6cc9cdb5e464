"""Method defaults live once, in the estimators: a method YAML holds ``name`` and deviations.

For every file in ``conf/method``: composing it gives the estimator's
``get_params()`` plus exactly the values the file declares, every declared
value is a real parameter that differs from the default it replaces (a
repeated default is the duplication this test exists to stop), and every
registered method has a file.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import ccbench_conf
import pytest
import yaml
from hydra import compose, initialize_config_module

import ccbench
from ccbench.running.check_plugin import builtin_methods, config_problems

METHOD_DIR = Path(ccbench_conf.__file__).parent / "method"
FILES = sorted(METHOD_DIR.glob("*.yaml"))


@pytest.fixture(scope="module", autouse=True)
def _hydra():
    with initialize_config_module("ccbench_conf", version_base="1.3"):
        yield


def _compose(stem: str) -> dict:
    return dict(compose("config", overrides=[f"method={stem}"]).method)


def _own_values(path: Path) -> dict:
    """The values a file writes itself (not those its defaults list brings in)."""
    text = yaml.safe_load(path.read_text()) or {}
    return {k: v for k, v in text.items() if k != "defaults"}


def _parent_values(path: Path) -> dict:
    text = yaml.safe_load(path.read_text()) or {}
    parents = [d for d in text.get("defaults", []) if isinstance(d, str) and d != "_self_"]
    merged = {}
    for parent in parents:
        merged.update(_compose(parent))
    return merged


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_method_yaml_is_defaults_plus_declared_deviations(path):
    composed = _compose(path.stem)
    spec = ccbench.registry.get_method_spec(composed["name"])
    problems = config_problems(spec, composed, _own_values(path), _parent_values(path), file=path.name)
    assert not problems, "; ".join(problems)


def test_every_registered_method_has_a_config():
    stems = {p.stem for p in FILES}
    # ccbench's own methods: a plugin's config lives in its package (`ccbench check-plugin NAME`)
    missing = sorted(s.name for s in builtin_methods(load=False) if s.name not in stems)
    assert not missing, f"no conf/method/<name>.yaml for {missing}"


def test_methods_that_need_k_get_it_from_the_harness():
    for spec in builtin_methods():
        path = METHOD_DIR / f"{spec.name}.yaml"
        if spec.needs_n_clusters and path.exists():
            assert "n_clusters" in _compose(spec.name), f"{path.name} lacks n_clusters (true_k, an int or from_method)"
        if spec.needs_n_clusters:
            assert "n_clusters" in inspect.signature(spec.estimator).parameters


def test_any_estimator_parameter_can_be_overridden_without_plus():
    """Files list only deviations, so the group nodes stay open: `method.n_init=1` just works."""
    cfg = compose("config", overrides=["method=kmeans", "method.n_init=1", "dataset.missing=impute"])
    assert cfg.method.n_init == 1 and cfg.dataset.missing == "impute"
    cfg = compose("config", overrides=["experiment=scap_artificial", "method.p=3"])
    assert cfg.method.p == 3 and cfg.method.similarity == "precomputed"
