"""Reports: compare runs user by user, with intervals and paired significance tests.

:func:`build_report` aligns the per-user tables of several runs (:class:`RunData`), checks that
they are comparable (:func:`comparability`: same data and split; each metric over the runs that
define it alike, every left-out one named with its reason) and
computes every interval and test into a :class:`Report`; :func:`write_report` renders it as a
self-contained HTML page and Markdown (the renderers, :mod:`.render`, read the comparison only
through its read-only view, :mod:`.view`). The statistics it computes are plain functions on arrays
in :mod:`recoeval_tracking.stats` (``paired_comparison``, ``mean_ci``, ``adjust_pvalues``, ...),
usable on any paired per-user values; the names that moved there still read from here, with a
:class:`DeprecationWarning`, for one release.
"""

from __future__ import annotations

from ._moved import moved_names
from .comparability import Comparability, check_comparable, comparability
from .compare import Comparison, compare
from .posthoc import POSTHOCS, pairwise_cliques, pairwise_tests
from .power import detectable_text
from .render import (  # importing the renderers registers Comparison.to_html, to_latex, ...
    catalogue_table,
    headline_metrics,
    metric_table,
    render_figures,
    render_html,
    render_markdown,
    summary_table,
    write_report,
)
from .replicates import (
    aggregate_replicates,
    check_replicates,
    default_group_by,
    guess_replicate_key,
)
from .report import TESTS, Report, SliceTable, build_report
from .runs import FINGERPRINT_KINDS, RunData, fingerprints_from
from .slices import SLICE_KINDS, user_popularity_share
from .stats import FAMILIES, significance_mark

__all__ = [
    "compare",
    "Comparison",
    # runs and their comparability
    "RunData",
    "comparability",
    "Comparability",
    "check_comparable",
    "fingerprints_from",
    "FINGERPRINT_KINDS",
    # the report
    "build_report",
    "Report",
    "SliceTable",
    "TESTS",
    "SLICE_KINDS",
    "user_popularity_share",
    # replicates (runs that differ only by a seed)
    "guess_replicate_key",
    "default_group_by",
    "check_replicates",
    "aggregate_replicates",
    # the report's statistical settings and words (the statistics: recoeval_tracking.stats)
    "significance_mark",
    "FAMILIES",
    "detectable_text",
    # post-hoc by pairs, labelled with the systems' names
    "POSTHOCS",
    "pairwise_tests",
    "pairwise_cliques",
    # rendering
    "summary_table",
    "catalogue_table",
    "headline_metrics",
    "metric_table",
    "render_figures",
    "render_html",
    "render_markdown",
    "write_report",
]


__getattr__ = moved_names(__name__)
