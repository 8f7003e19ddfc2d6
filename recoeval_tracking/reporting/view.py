"""The comparison as its renderers see it: a read-only view, and the model's words they print.

The model (:mod:`.compare`, :mod:`.report`, :mod:`.verdicts`, :mod:`.runs`, ...) computes every
table and verdict; the renderers (:mod:`recoeval_tracking.reporting.render`: the page's content,
HTML, Markdown, LaTeX, figures) only show them. They receive a :class:`ComparisonView`,
:class:`ReportView`, :class:`SliceView` and :class:`RunView` (protocols: what a renderer may
read, attributes and methods that compute), which :class:`~.compare.Comparison`,
:class:`~.report.Report`, :class:`~.report.SliceTable` and :class:`~.runs.RunData` are as they
are. The view is read-only by rule: the renderers import nothing of the model but this module
and set no attribute of anything (``tests/test_layers.py`` checks both), and mypy checks that a
renderer reads nothing the protocols leave out. A change of the page's look touches only the
renderers and the template (``reporting/templates/report.html.j2``); a new number the page shows
is added to the model, then to a protocol here.

The model's words the pages print beside the tables (the small-n mark, a coverage as a
percentage, a rope and the power basis in words, the protocol line, the baselines' order and the
critical-difference cliques) are re-exported here from the modules that define them, so each is
still defined once. The protocol box's text (:func:`protocol_text`) says each count of failed
jobs once: in the protocol line, not again in the budgets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import pandas as pd

from .._validation import param_error
from .compare import Comparison
from .equivalence import rope_text
from .left_out import compared_metrics, left_out_lines, uncompared_line
from .multisystem import SMALL_N_MARK, cd_cliques
from .power import POWER_BASIS
from .report import Report, baseline_ids
from .report import protocol_text as _protocol_text
from .stats import percent

__all__ = [
    "compared_metrics",
    "left_out_lines",
    "uncompared_line",
    "RunView",
    "SliceView",
    "ReportView",
    "ComparisonView",
    "as_view",
    "baseline_ids",
    "protocol_text",
    "rope_text",
    "percent",
    "cd_cliques",
    "SMALL_N_MARK",
    "POWER_BASIS",
]


@runtime_checkable
class RunView(Protocol):
    """One run as the pages show it (:class:`~.runs.RunData`)."""

    run_id: str
    name: str
    per_user: pd.DataFrame
    params: dict[str, Any]
    curves: pd.DataFrame | None
    source: str
    metrics: dict[str, float]


@runtime_checkable
class SliceView(Protocol):
    """The tables of one user group of one slice (:class:`~.report.SliceTable`)."""

    slice: str
    group: str
    n_users: int
    summary: pd.DataFrame
    comparisons: pd.DataFrame


@runtime_checkable
class ReportView(Protocol):
    """The tables of one dataset's comparison (:class:`~.report.Report`; its attributes say
    what each holds)."""

    runs: Sequence[RunView]
    baseline: str
    metrics: list[str]
    summary: pd.DataFrame
    comparisons: pd.DataFrame
    slices: Sequence[SliceView]
    coverage: pd.DataFrame
    inputs: pd.DataFrame
    mismatches: list[str]
    swept_params: list[str]
    settings: Mapping[str, Any]
    config: Mapping[str, Any]
    notes: list[str]
    left_out: pd.DataFrame

    def run(self, run_id: str) -> RunView: ...


@runtime_checkable
class ComparisonView(Protocol):
    """Systems compared on one dataset or several (:class:`~.compare.Comparison`; its methods
    say what each returns): the structure, the tables and the verdicts the pages show."""

    reports: Mapping[str, ReportView]
    report: ReportView
    datasets: list[str]
    multi_dataset: bool
    n_runs: int
    rope: Any
    cd_posthoc: str
    settings: Mapping[str, Any]
    metrics: list[str]
    systems: list[str]
    baseline: str

    def lower_is_better(self, metric: str) -> bool: ...
    def summary(self, dataset: str | None = None) -> pd.DataFrame: ...
    def win_tie_loss(
        self, metric: str | None = None, dataset: str | None = None
    ) -> pd.DataFrame: ...
    def effects(self, *args: Any, **kwargs: Any) -> pd.DataFrame: ...
    def against_baselines(self, *args: Any, **kwargs: Any) -> pd.DataFrame: ...
    def verdicts(self, *args: Any, **kwargs: Any) -> pd.DataFrame: ...
    def dataset_table(self, metric: str) -> pd.DataFrame: ...
    def friedman(self, metric: str) -> Any: ...
    def critical_difference(self, metric: str) -> float: ...
    def posthoc(self, metric: str, *args: Any, **kwargs: Any) -> pd.DataFrame: ...
    def pairwise_posthoc(self, metric: str, test: str = "wilcoxon") -> pd.DataFrame: ...
    def cd_diagram(self, metric: str, posthoc: str | None = None) -> Any: ...
    def to_latex(self, *args: Any, **kwargs: Any) -> str: ...


def as_view(obj: Any, func: str) -> ComparisonView:
    """What a renderer shows: a comparison as it is, a report (:func:`~.report.build_report`)
    as the comparison over its one dataset; anything else is refused, naming ``func``."""
    if isinstance(obj, Comparison):
        return obj
    if isinstance(obj, Report):
        return Comparison.from_report(obj)
    raise param_error(
        "report", func, "a Comparison (from compare) or a Report (from build_report)", obj
    )


def protocol_text(settings: Mapping[str, Any]) -> str:
    """The protocol box's text (:func:`.report.protocol_text`: the protocol, each system's
    budget, the split's leakage), each count of failed jobs said once: when the protocol line
    names the failed jobs (``...; failed jobs: cosine 2 of 6 configurations on validation (not
    chosen from)``), the budgets leave their own count of them out
    (:func:`~recoeval_tracking.tracking.sweeps.budget_without_failures`)."""
    from ..tracking.sweeps import budget_without_failures, protocol_names_failures

    budgets = settings.get("budgets") or {}
    if budgets and protocol_names_failures(settings.get("protocol")):
        shown = {k: budget_without_failures(str(v)) for k, v in budgets.items()}
        settings = {**settings, "budgets": shown}
    return _protocol_text(settings)
