"""The config of ``recoeval-track-report``: its schema and where its YAML lives.

The report's config is its own (``report_conf/report.yaml`` beside this module), not a part of
``recoeval-track``'s config folder, so that ``metrics=[ndcg_at_10,p_at_10]`` is a plain list and
not taken for ``recoeval-track``'s ``metrics`` config group. The YAML holds the values and their
comments; :class:`ReportConfig` holds the types, so that a misspelt key or a value of the wrong type
is refused before any run is read, in one paragraph (:func:`report_key_hint` suggests the close
spellings).
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from omegaconf import MISSING

__all__ = ["ReportConfig", "CONFIG_DIR", "register_report_schema", "report_key_hint", "PROG"]

PROG = "recoeval-track-report"
#: The folder of ``report.yaml``.
CONFIG_DIR = Path(__file__).resolve().parent / "report_conf"


@dataclass
class TrackingSection:
    uri: Optional[str] = MISSING
    experiment: str = MISSING


@dataclass
class SelectSection:
    sweep_id: Optional[str] = MISSING
    experiment: Optional[str] = MISSING
    run_ids: list[str] = MISSING
    filter: Optional[str] = MISSING
    job_dirs: list[str] = MISSING
    files: list[str] = MISSING
    format: Optional[str] = MISSING


@dataclass
class OutputSection:
    dir: str = MISSING
    html: Optional[str] = MISSING
    markdown: Optional[str] = MISSING
    latex: Optional[str] = MISSING
    title: str = MISSING
    log_to_mlflow: bool = MISSING
    artifact_path: Optional[str] = MISSING


@dataclass
class ReportConfig:
    """The types of ``report.yaml``'s settings (its values are in the YAML)."""

    tracking: TrackingSection = field(default_factory=TrackingSection)
    select: SelectSection = field(default_factory=SelectSection)
    baseline: Optional[str] = MISSING
    metrics: list[str] = MISSING
    replicate_key: Optional[str] = MISSING
    group_by: list[str] = MISSING
    dataset_key: Optional[str] = MISSING
    correction: str = MISSING
    family: str = MISSING
    test: str = MISSING
    alpha: float = MISSING
    confidence: float = MISSING
    n_bootstrap: int = MISSING
    n_permutations: Any = MISSING  # an int or "auto"; build_report checks it
    seed: int = MISSING
    # a number, "x%" or a dict metric -> either; Any so that each form passes (compare checks it)
    rope: Any = MISSING
    posthoc: str = MISSING
    allow_mismatch: bool = MISSING
    lower_is_better: list[str] = MISSING
    # a display name per run ({run name or id: label}); Any with null in the YAML, so that the
    # command line can give a whole mapping (a typed dict is closed to new keys)
    labels: Any = MISSING
    slices: list[dict[str, Any]] = MISSING
    popularity_head: float = MISSING
    output: OutputSection = field(default_factory=OutputSection)


def register_report_schema() -> None:
    """Store :class:`ReportConfig` as ``report_schema`` in Hydra's ConfigStore (``report.yaml``
    lists it first in its defaults)."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="report_schema", node=ReportConfig)


def _fields(node: type) -> dict[str, Any]:
    return {f.name: f for f in dataclasses.fields(node)}


def report_key_hint(key: str) -> str:
    """What to change for an unknown key of the report's config: the close spellings."""
    see = f"`{PROG} --cfg job` prints the config with every setting."
    head, _, leaf = key.partition(".")
    top = _fields(ReportConfig)
    factory = top[head].default_factory if head in top else dataclasses.MISSING
    if leaf and factory is not dataclasses.MISSING and dataclasses.is_dataclass(factory()):
        known = [f"{head}.{name}" for name in _fields(type(top[head].default_factory()))]
    else:
        known = list(top)
    close = difflib.get_close_matches(key, known, n=3)
    if close:
        return f"Did you mean {', '.join(close)}? {see}"
    return f"The settings are: {', '.join(known)}. {see}"


def report_input_key(message: str) -> str | None:
    """The report setting a library error is about (``The 'n_bootstrap' parameter of compare``
    -> ``n_bootstrap``, ``'runs'`` -> ``select``, a job folder -> ``select.job_dirs``), or
    None when it names none."""
    import re

    m = re.match(r"The '([\w.]+)' parameter of ([\w.]+) ", message)
    if not m:
        return None
    name, func = m.groups()
    if func in ("read_job_dir", "RunData.from_job_dir") and name == "path":
        return "select.job_dirs"
    if func == "compare":
        if name == "runs":
            return "select"
        if name in _fields(ReportConfig):
            return name
    return None
