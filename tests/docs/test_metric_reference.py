"""The metric reference page is written from the registry: every registered metric, its formula,
direction and profiles appear, and the built page shows each of them."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from recoeval_tracking.metrics.definitions import NAN_RULES
from recoeval_tracking.metrics.profiles import PROFILES
from recoeval_tracking.metrics.registry import METRICS

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reference" / "metrics.md"


def _hook():
    spec = importlib.util.spec_from_file_location(
        "metric_reference", ROOT / "docs" / "hooks" / "metric_reference.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOK = _hook()


def test_page_holds_the_markers_and_mkdocs_runs_the_hook():
    text = PAGE.read_text(encoding="utf-8")
    for mark in (HOOK.TABLE_MARK, HOOK.DETAILS_MARK, HOOK.NAN_MARK):
        assert mark in text
    assert "docs/hooks/metric_reference.py" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_every_registered_metric_has_a_row_and_a_section():
    page = HOOK.render(PAGE.read_text(encoding="utf-8"))
    rows = re.findall(r"^\| \[`([^`]+)`\]\(#", page, flags=re.MULTILINE)
    sections = re.findall(r"^### `([^`]+)` \{#", page, flags=re.MULTILINE)
    assert rows == list(METRICS)
    assert sections == list(METRICS)
    for spec in METRICS.values():
        assert spec.formula in page


def test_direction_and_profiles_come_from_the_code():
    details = HOOK.metric_details()
    body = {
        name: text
        for name, text in re.findall(
            r"^### `([^`]+)` \{#[^}]+\}\n(.*?)(?=^### |\Z)", details, flags=re.MULTILINE | re.DOTALL
        )
    }
    assert set(body) == set(METRICS)
    for name, spec in METRICS.items():
        lower = "lower is better" in body[name]
        assert lower == (not spec.greater_is_better), name
        for profile, definition in PROFILES.items():
            listed = f"`{profile}`" in body[name].split("**Profiles**:")[1]
            assert listed == (name in definition["metrics"]), (name, profile)
    # two facts checked from the definitions: MPR is minimised, RecBole calls ndcg_bin "ndcg"
    assert "lower is better" in body["mpr"]
    assert "`recbole` (`ndcg`)" in body["ndcg_bin"]


def test_nan_rules_listed_in_order():
    listed = re.findall(r"^\d+\. `([^`]+)`", HOOK.nan_rules(), flags=re.MULTILINE)
    assert listed == list(NAN_RULES)


def test_built_site_shows_every_metric(tmp_path):
    """Build the site (strict: a broken link or reference fails) and read the metric page."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    pytest.importorskip("mkdocstrings_handlers.python")
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "site"), strict=True)
    build(config)
    html = (tmp_path / "site" / "reference" / "metrics" / "index.html").read_text(encoding="utf-8")
    for name in METRICS:
        assert f'id="{HOOK.anchor(name)}"' in html, name
    api = (tmp_path / "site" / "reference" / "api" / "evaluate" / "index.html").read_text(
        encoding="utf-8"
    )
    assert 'id="recoeval_tracking.metrics.evaluate.evaluate"' in api
    for parameter in ("train", "test", "metrics", "ties", "profile"):
        assert f"<code>{parameter}</code>" in api, parameter
