"""The top-level ``seed`` reaches the seeded setting of every option of every group, and the
metrics section's ``seed`` reaches the evaluation options.

The configs are composed from where the app itself finds them (the installed package
``recoeval_tracking.configs``, else the checkout's ``configs/``), so that a mutated copy of the
package (tools/mutate.py) is what is checked.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from recoeval_tracking.app.cli import CONFIG_PACKAGE, config_path
from recoeval_tracking.app.schema import register_configs
from recoeval_tracking.options import EvalOptions


def _config_dir() -> Path:
    where = config_path()
    if where.startswith("pkg://"):
        spec = importlib.util.find_spec(CONFIG_PACKAGE)
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(where)


CONFIGS = _config_dir()
#: group -> {option: the key holding its seed}; an option missing here has no seeded step.
SEEDED = {
    "dataset": {"synthetic": "seed"},
    "split": {p.stem: "seed" for p in (CONFIGS / "split").glob("*.yaml")},
    "model": {"als": "seed", "random": "seed", "implicit": "random_state"},
    "metrics": {p.stem: "seed" for p in (CONFIGS / "metrics").glob("*.yaml")},
}


@pytest.fixture(scope="module")
def composed():
    register_configs()  # the schemas the configs' defaults lists name
    with initialize_config_dir(version_base="1.3", config_dir=str(CONFIGS)):
        yield lambda overrides: OmegaConf.to_container(
            compose("config", overrides=overrides), resolve=True
        )


def _find(node, key):
    """The value of ``key`` anywhere in the mapping ``node`` (model params may be nested)."""
    if isinstance(node, dict):
        if key in node:
            return node[key]
        for v in node.values():
            found = _find(v, key)
            if found is not None:
                return found
    return None


def test_every_seeded_option_is_listed():
    for group in ("dataset", "model"):
        for p in (CONFIGS / group).glob("*.yaml"):
            text = p.read_text()
            assert ("${seed}" in text) == (p.stem in SEEDED[group]), p


@pytest.mark.parametrize(
    "group,option", [(g, o) for g, opts in SEEDED.items() for o in sorted(opts)]
)
def test_top_level_seed_reaches_each_option(composed, group, option):
    key = SEEDED[group][option]
    for seed in (7, 12345):
        plain = composed([f"{group}={option}", f"seed={seed}"])
        assert _find(plain[group], key) == seed, (group, option, seed)


@pytest.mark.parametrize("seed", [0, 5, 2**63])
def test_metrics_seed_reaches_the_options(seed):
    assert EvalOptions.from_config({"names": ["p"], "seed": seed}).seed == seed
