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
    """``compose("config", overrides)``, unresolved."""
    register_configs()  # the schemas the configs' defaults lists name
    with initialize_config_dir(version_base="1.3", config_dir=str(CONFIGS)):
        yield lambda overrides: compose("config", overrides=overrides)


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
    """The seed given on the command line is the option's; another top-level seed set in the
    same composed config is the option's in turn (the option reads it, it holds no copy of it):
    one composition serves both seeds."""
    key = SEEDED[group][option]
    cfg = composed([f"{group}={option}", "seed=7"])
    plain = OmegaConf.to_container(cfg, resolve=True)
    assert _find(plain[group], key) == 7, (group, option, 7)
    cfg.seed = 12345
    plain = OmegaConf.to_container(cfg, resolve=True)
    assert _find(plain[group], key) == 12345, (group, option, 12345)


@pytest.mark.parametrize("seed", [0, 5, 2**63])
def test_metrics_seed_reaches_the_options(seed):
    assert EvalOptions.from_config({"names": ["p"], "seed": seed}).seed == seed
