"""The app's ``--help`` describes the default job it runs: its text is written in
``configs/config.yaml`` beside the defaults it describes, and once said "every metric" while
the default metrics option is the standard set."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs"


def _default(group: str) -> str:
    main = yaml.safe_load((CONFIGS / "config.yaml").read_text(encoding="utf-8"))
    return next(d[group] for d in main["defaults"] if isinstance(d, dict) and group in d)


def test_the_help_names_the_default_metric_set():
    main = yaml.safe_load((CONFIGS / "config.yaml").read_text(encoding="utf-8"))
    header = " ".join(main["hydra"]["help"]["header"].split())
    option = yaml.safe_load((CONFIGS / "metrics" / f"{_default('metrics')}.yaml").read_text())
    assert option["names"] == ["standard"]
    assert f"the standard metrics at K={option['k']}" in header
    assert "every metric at" not in header


def test_the_help_names_the_default_data_split_and_model():
    main = yaml.safe_load((CONFIGS / "config.yaml").read_text(encoding="utf-8"))
    header = " ".join(main["hydra"]["help"]["header"].split())
    assert (_default("dataset"), _default("split"), _default("model")) == (
        "synthetic",
        "random",
        "als",
    )
    assert "(synthetic data, random split, ALS," in header
