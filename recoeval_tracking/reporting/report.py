"""Reports comparing runs: which model is better, by how much, and whether the difference is real.

:func:`build_report` works on plain data (:class:`RunData`: a run's per-user table, curves,
params and fingerprints), wherever it came from (job directories or a tracking store), and
returns a :class:`Report` of tables that :mod:`recoeval_tracking.reporting.render` turns into
HTML and Markdown.

Comparability first (:func:`~recoeval_tracking.reporting.comparability.comparability`, the rule
of ``rt.compare`` and the report command alike): runs are compared only when their data and split
fingerprints agree; otherwise :func:`build_report` refuses with a message naming what differs
(``allow_mismatch=True`` proceeds and marks every table). Each metric is compared over the runs
whose definition of it agrees (one fingerprint per metric, whatever the score source); every
left-out (metric, run) is named with its reason (``notes``, ``left_out``). Runs
that differ only by a seed are replicates (``replicate_key``): they are aggregated per group,
with the between-replicate spread (:mod:`recoeval_tracking.reporting.replicates`). Users are aligned by their original id;
a user absent from a run, or NaN there, is counted and reported, never silently dropped: a run's
mean is over its own defined users (it equals the logged mean), a paired comparison is over the
users defined in both runs (the count is in the table).

Statistics (:mod:`recoeval_tracking.reporting.stats`): per run and metric the mean with its
t and percentile-bootstrap intervals; per run against the baseline the mean difference with both
intervals, the paired t, Wilcoxon signed-rank and sign-flip randomisation tests, Cohen's ``d_z``,
and p-values adjusted with Holm (default), Bonferroni or Benjamini-Hochberg over a family: each
metric's comparisons with the baseline (default) or every (run, metric) comparison of one table
(one slice group).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import stats as st
from .._validation import check_int, check_unit_open, param_error
from ..stats import corrected_resampled_t, too_few_pairs
from ..stats._intervals import _percentile_bounds
from .comparability import (
    LEFT_OUT_COLUMNS,
    apply_labels,
    check_comparable,
    check_labels,
    check_option_names,
    comparability,
    resolve_metrics,
)
from .comparability import swept_params as _swept_params
from .multisystem import SMALL_N_MARK, small_n_mark
from .replicates import (
    aggregate_replicates,
    default_group_by,
    design_of,
    detect_replicate_key,
    group_curves_and_catalogue,
)
from .runs import (
    FINGERPRINT_KINDS,
    RunData,
    _check_runs,
    _lower_better,
    _resolve_baseline,
    fingerprints_from,
)
from .slices import SLICE_KINDS, slice_groups, user_popularity_share
from .stats import FAMILIES, permutations_for, significance_mark

__all__ = [
    "RunData",
    "Report",
    "SliceTable",
    "build_report",
    "user_popularity_share",
    "detect_replicate_key",
    "small_n_mark",
    "SMALL_N_MARK",
    "FINGERPRINT_KINDS",
    "TESTS",
    "FAMILIES",
    "SLICE_KINDS",
    "check_comparable",
    "fingerprints_from",
    "significance_mark",
    "permutations_for",
    "baseline_ids",
    "against_baseline",
]

#: Tests whose adjusted p-value can set the significance marks.
TESTS = ("t", "wilcoxon", "randomization")

_P_COLUMN = {"t": "p_t_adj", "wilcoxon": "p_wilcoxon_adj", "randomization": "p_randomization_adj"}


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------


@dataclass
class SliceTable:
    """The tables of one user group of one slice."""

    slice: str
    group: str
    n_users: int
    summary: pd.DataFrame
    comparisons: pd.DataFrame


@dataclass
class Report:
    """Everything a rendered report shows.

    Attributes
    ----------
    runs : list of RunData
        In report order (the baseline first).
    baseline : str
        The baseline's run id.
    metrics : list of str
    summary : pandas.DataFrame
        One row per (run, metric): ``run_id, run, metric, mean, t_low, t_high, boot_low,
        boot_high, n, n_nan, n_missing``.
    comparisons : pandas.DataFrame
        One row per (run other than the baseline, metric): ``run_id, run, metric, mean_diff,
        t_low, t_high, boot_low, boot_high, n_pairs, t_stat, p_t, w_stat, p_wilcoxon,
        p_randomization, cohens_dz, p_t_adj, p_wilcoxon_adj, p_randomization_adj, mark``.
    slices : list of SliceTable
    coverage : pandas.DataFrame
        Per run: users in the union of all runs, users missing from the run, and per metric
        the users NaN in it.
    inputs : pandas.DataFrame
        Per run: ``run_id, run, source`` and the fingerprints.
    mismatches : list of str
        What differs between the runs' fingerprints (empty when comparable).
    swept_params : list of str
        Params that differ between runs.
    settings : dict
        The statistical settings (correction, test, permutations, resamples, seed...).
    config : dict
        The report's own config as given by the caller (written into the page).
    notes : list of str
        Metrics not compared over every run, and which runs they leave out.
    left_out : pandas.DataFrame
        One row per left-out (metric, run) with the full reason (``metric, system, run_id,
        left_out, reason``; ``left_out`` is ``"values"``, or ``"test"`` for a run that keeps
        its mean of a metric the baseline is left out of).
    """

    runs: list[RunData]
    baseline: str
    metrics: list[str]
    summary: pd.DataFrame
    comparisons: pd.DataFrame
    slices: list[SliceTable]
    coverage: pd.DataFrame
    inputs: pd.DataFrame
    mismatches: list[str]
    swept_params: list[str]
    settings: dict[str, Any]
    config: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    left_out: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=LEFT_OUT_COLUMNS))
    _against: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    @property
    def comparable(self) -> bool:
        """True when every fingerprint agreed."""
        return not self.mismatches

    def run(self, run_id: str) -> RunData:
        """The run with this id."""
        for r in self.runs:
            if r.run_id == run_id:
                return r
        raise KeyError(run_id)


# ---------------------------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------------------------


def _tables(
    values: dict[str, np.ndarray],
    present: np.ndarray,
    rows: np.ndarray,
    runs: list[RunData],
    b: int,
    metrics: list[str],
    *,
    confidence: float,
    n_bootstrap: int,
    n_permutations: int | str,
    seed: int,
    correction: str,
    family: str,
    test: str,
    alpha: float,
    lower: Sequence[str],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Summary and comparison tables over the aligned users at positions ``rows``."""
    R = len(runs)
    others = [j for j in range(R) if j != b]
    n_permutations = permutations_for(n_permutations, family, len(metrics), len(others))
    cols: list[np.ndarray] = []
    for m in metrics:
        X = values[m][rows]
        cols.append(X)
        if others:
            cols.append(X[:, others] - X[:, [b]])
    big = np.concatenate(cols, axis=1) if cols else np.empty((rows.size, 0))
    if n_bootstrap > 0 and rows.size:
        boot = st.bootstrap_means(big, n_bootstrap, seed)
        boot_low, boot_high = _percentile_bounds(boot, confidence)
    else:
        boot_low = boot_high = np.full(big.shape[1], np.nan)
    diff_cols = [
        np.arange(i * (R + len(others)) + R, (i + 1) * (R + len(others)))
        for i in range(len(metrics))
    ]
    p_perm = (
        st.randomization_pvalues(big[:, np.concatenate(diff_cols)], n_permutations, seed)
        if others and rows.size
        else np.array([])
    )
    pres = present[rows]

    summary_rows, comp_rows = [], []
    for i, m in enumerate(metrics):
        X = values[m][rows]
        offset = i * (R + len(others))
        for j, r in enumerate(runs):
            mean, lo, hi, n = st.t_interval(X[:, j], confidence)
            n_present = int(pres[:, j].sum())
            summary_rows.append(
                {
                    "run_id": r.run_id,
                    "run": r.name,
                    "metric": m,
                    "mean": mean,
                    "t_low": lo,
                    "t_high": hi,
                    "boot_low": float(boot_low[offset + j]),
                    "boot_high": float(boot_high[offset + j]),
                    "n": n,
                    "n_nan": n_present - n,
                    "n_missing": int(rows.size - n_present),
                }
            )
        for c, j in enumerate(others):
            x, y = X[:, j], X[:, b]
            d = x - y
            mean, lo, hi, n = st.t_interval(d, confidence)
            t_stat, p_t = st.paired_t_test(x, y)
            w_stat, p_w = st.wilcoxon_test(x, y)
            comp_rows.append(
                {
                    "run_id": runs[j].run_id,
                    "run": runs[j].name,
                    "metric": m,
                    "mean_diff": mean,
                    "t_low": lo,
                    "t_high": hi,
                    "boot_low": float(boot_low[offset + R + c]),
                    "boot_high": float(boot_high[offset + R + c]),
                    "n_pairs": n,  # and the
                    "n_nonzero": int(np.count_nonzero(d[~np.isnan(d)])),  # pairs with a sign
                    "t_stat": t_stat,
                    "p_t": p_t,
                    "w_stat": w_stat,
                    "p_wilcoxon": p_w,
                    "p_randomization": float(p_perm[i * len(others) + c]) if n else math.nan,
                    "cohens_dz": st.cohens_dz(x, y),
                }
            )
    summary = pd.DataFrame(
        summary_rows,
        columns=[
            "run_id",
            "run",
            "metric",
            "mean",
            "t_low",
            "t_high",
            "boot_low",
            "boot_high",
            "n",
            "n_nan",
            "n_missing",
        ],
    )
    comp = pd.DataFrame(
        comp_rows,
        columns=[
            "run_id",
            "run",
            "metric",
            "mean_diff",
            "t_low",
            "t_high",
            "boot_low",
            "boot_high",
            "n_pairs",
            "n_nonzero",
            "t_stat",
            "p_t",
            "w_stat",
            "p_wilcoxon",
            "p_randomization",
            "cohens_dz",
        ],
    )
    for name in ("t", "wilcoxon", "randomization"):
        raw = comp[f"p_{name}"].to_numpy(dtype=np.float64)
        adj = np.empty_like(raw)
        groups = (
            comp.groupby("metric", sort=False).indices.values()
            if family == "metric"
            else [np.arange(len(comp))]
        )
        for idx in groups:
            adj[idx] = st.adjust_pvalues(raw[idx], correction) if len(idx) else raw[idx]
        comp[f"p_{name}_adj"] = adj
    family_size = (
        comp.groupby("metric", sort=False)["run_id"].transform("size")
        if family == "metric"
        else pd.Series(len(comp), index=comp.index)
    )
    # zero differences carry no sign: Wilcoxon drops them and sign flips leave them alone, so
    # only the non-zero ones can take a distribution-free p below alpha; with none, the runs
    # agree on every user and there is nothing to mark
    comp["small_n"] = (
        [
            n > 0 and too_few_pairs(int(n), int(size), correction, alpha, n_permutations)
            for n, size in zip(comp["n_nonzero"], family_size)
        ]
        if len(comp)
        else []
    )
    comp["mark"] = (
        [
            small_n_mark(significance_mark(p, diff, _lower_better(m, lower), alpha), small)
            for p, diff, m, small in zip(
                comp[_P_COLUMN[test]], comp["mean_diff"], comp["metric"], comp["small_n"]
            )
        ]
        if len(comp)
        else []
    )
    return summary, comp


def build_report(
    runs: Sequence[RunData],
    baseline: str | None = None,
    *,
    metrics: Sequence[str] | str | None = None,
    slices: Sequence[Mapping[str, Any]] | None = None,
    correction: str = "holm",
    test: str = "t",
    n_permutations: int | str = "auto",
    n_bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    alpha: float = 0.05,
    allow_mismatch: bool = False,
    user_features: pd.DataFrame | None = None,
    lower_is_better: Sequence[str] = (),
    config: Mapping[str, Any] | None = None,
    replicate_key: str | None = None,
    group_by: Sequence[str] | None = None,
    family: str = "metric",
    labels: Mapping[str, str] | None = None,
    _check_names: bool = True,
    _func: str = "build_report",
) -> Report:
    """Compare runs on the same users: means with intervals, paired tests against a baseline.

    Parameters
    ----------
    runs : list of RunData
        At least one run; two or more for comparisons.
    baseline : str, optional
        A run id or name, ``"tag:<key>=<value>"`` (the one run carrying that tag),
        ``"best:<metric>"`` or ``"worst:<metric>"`` (by mean). Default: the first run.
    metrics : list of str, optional
        Per-user metric columns to report (default: every one all runs share).
    slices : list of dict, optional
        User groups, each reported with the same tables. ``{"kind": "activity", "q": 4}``
        (quantiles of ``n_train``), ``{"kind": "cold_warm", "threshold": 5}`` (``n_train`` below
        the threshold is cold), ``{"kind": "popularity", "threshold": 0.5}`` (share of test items
        among the popular head, column ``test_popular_share`` from ``user_features``, see
        :func:`user_popularity_share`), or generic ``{"kind": "quantiles"|"threshold",
        "column": ..., "q"|"threshold": ..., "labels": [...], "name": ...}``.
    correction : {"holm", "bonferroni", "bh", "none"}
        Adjustment over each family of comparisons (``family``).
    test : {"t", "wilcoxon", "randomization"}
        The test whose adjusted p-value sets the marks (``▲***``...).
    n_permutations : int or "auto"
        Random sign vectors of the randomisation test (stated in the report). ``"auto"``: enough
        for the smallest adjusted p-value of the family to reach 0.0005 (``2000 m`` for ``m``
        comparisons, between 1,000 and 100,000). With ``n`` users and ``2^n`` at most this
        number, every sign vector is enumerated (the exact test).
    n_bootstrap : int
        Bootstrap resamples of the percentile intervals (0 leaves them out).
    seed : int
        Seed of every resampling (bootstrap and randomisation): same seed, same report.
    confidence : float
        Coverage of every interval.
    alpha : float
        Level below which an adjusted p-value is marked significant.
    allow_mismatch : bool
        Compare runs whose fingerprints differ (the tables are then marked).
    user_features : pandas.DataFrame, optional
        More per-user columns for slices (``user_id`` plus columns).
    lower_is_better : list of str
        Extra metric-name prefixes where lower is better (direction of marks, best/worst),
        besides the metrics the registry marks so
        (:func:`recoeval_tracking.metrics.registry.greater_is_better`: ``mpr``, ``*_seconds``).
    config : dict, optional
        The report's config, written into the page so that it can be regenerated.
    replicate_key : str, optional
        A param whose values are replicates (``seed``, ``split.fold``): runs are aggregated per
        group, one row per replicate holding its mean; the split must agree only within a
        replicate. ``"auto"``: :func:`detect_replicate_key` (seeds or folds that changed the
        split), else none.
    group_by : list of str, optional
        The params that form the groups (default: every swept param but ``replicate_key``).
    family : {"metric", "table"}
        What p-values are adjusted over: each metric's comparisons with the baseline (default;
        a metric's conclusions do not depend on how many other metrics are shown) or every
        (run, metric) comparison of a table (stricter, one family for the whole table).
    labels : dict, optional
        A display name per run: ``{run id or name (a replicate group's name): label}``, shown
        in every table, the LaTeX table and the figures. A key that names no run is refused.

    Returns
    -------
    Report

    Raises
    ------
    InputError
        When the fingerprints differ and ``allow_mismatch`` is False (the message names what
        differs), or for bad arguments: a name in ``metrics``, ``baseline``,
        ``lower_is_better``, ``group_by`` or ``labels`` that the runs do not have is refused,
        listing the known names.
    """
    func = _func
    runs = _check_runs(runs, func)
    settings = _check_settings(func, **setting_options(locals()))
    labels = check_labels(labels, func)
    if _check_names:
        check_option_names(runs, lower_is_better=lower_is_better, group_by=group_by, func=func)
    if replicate_key is not None and not isinstance(replicate_key, str):
        raise param_error(
            "replicate_key", func, "a param name (str), 'auto' or None", replicate_key
        )
    if replicate_key == "auto":
        replicate_key = detect_replicate_key(runs)
    # the one rule of rt.compare and the report: data and split first (raises unless allowed)
    mismatches = comparability(
        runs, replicate_key=replicate_key, allow_mismatch=allow_mismatch, func=func
    ).mismatches
    swept = _swept_params(runs)
    settings["n_runs"] = len(runs)
    settings.update(study_protocol(runs))
    notes: list[str] = []
    if replicate_key:
        runs_in, runs = runs, aggregate_replicates(runs, replicate_key, group_by, func)
        _name_groups(runs, runs_in, replicate_key)
        settings["replicate_key"] = replicate_key
        settings["group_by"] = list(group_by or default_group_by(runs_in, replicate_key))
        group_curves_and_catalogue(runs, runs_in)
        swept = _swept_params(runs)
    elif group_by:
        notes.append(
            f"group_by ({', '.join(group_by)}) not used: it forms replicate groups "
            "and these runs have no replicate key"
        )
    metrics = resolve_metrics(metrics, runs, func)
    base = _resolve_baseline(baseline, runs, metrics, settings["lower_is_better"], func)
    runs = [base] + [r for r in runs if r is not base]
    runs, used = apply_labels(runs, labels, func, strict=_check_names)
    base = runs[0]
    settings["labels"] = {k: labels[k] for k in labels if k in used}
    # then each metric over the runs that define it alike (the runs were checked above)
    verdict = comparability(runs, metrics, base, check_runs=False, func=func)
    aligned = _align(runs, metrics, user_features, verdict.excluded)
    notes = verdict.notes(runs) + notes
    if replicate_key and slices:  # a row is a replicate's mean: there are no users to slice
        notes.append(
            f"slices ({', '.join(str(dict(s).get('kind')) for s in slices)}) left out: "
            f"with replicates over {replicate_key} each row is one replicate's mean, "
            "not a user"
        )
        slices = []
    summary, comparisons, slice_tables = _all_tables(aligned, runs, metrics, slices, settings, func)
    summary, comparisons = verdict.drop(summary), verdict.drop(comparisons, tests=True)
    for t in slice_tables:
        t.summary, t.comparisons = verdict.drop(t.summary), verdict.drop(t.comparisons, True)
    return Report(
        runs=runs,
        baseline=base.run_id,
        metrics=metrics,
        summary=summary,
        comparisons=comparisons,
        slices=slice_tables,
        coverage=_coverage(aligned, runs, metrics),
        inputs=_inputs(runs),
        mismatches=mismatches,
        swept_params=swept,
        settings=settings,
        config=dict(config or {}),
        notes=notes,
        left_out=verdict.table,
    )


def study_protocol(runs: Sequence[RunData]) -> dict[str, Any]:
    """How the compared configurations were chosen, for every surface of the report:
    ``protocol`` (one line), ``budgets`` (system -> its budget, when known),
    ``equal_budgets`` and ``leakage`` (one line, when the data had timestamps).

    The sweep's record (``study["sweep"]`` of a run read from MLflow: its parent's
    ``protocol``, ``budgets``, ``equal_budgets``) states the protocol of the runs that carry
    it; otherwise each run's own record (``study["protocol"]``, from its job folder) says
    what it was evaluated on: tested once after a validation part, or evaluated on test with
    no validation part (optimistic if the choice among configurations was made on the same
    test data). A run that records nothing (a ``Results`` made in a notebook, whose split
    part no other run shares) is named as such, never counted as either; when no run
    records anything there is no line."""
    out: dict[str, Any] = {}
    given = next((dict(r.study["sweep"]) for r in runs if r.study.get("sweep")), {})
    if given.get("protocol"):
        out["protocol"] = str(given["protocol"])
        out["budgets"] = dict(given.get("budgets") or {})
        out["equal_budgets"] = bool(given.get("equal_budgets", True))
        others = [r for r in runs if not r.study.get("sweep")]
        if others:
            out["protocol"] += "; outside the sweep: " + _runs_protocol(others, alone=False)
    elif any(r.study.get("protocol") for r in runs):
        out["protocol"] = _runs_protocol(runs, alone=True)
    leaks = [r.study.get("leakage") for r in runs if r.study.get("leakage")]
    if leaks:
        from ..splitting import leakage_line

        out["leakage"] = leakage_line(leaks[0])
    return out


_OPTIMISTIC = (
    "if these runs were chosen among others on the same test data, their numbers are optimistic"
)
_NOT_RECORDED = "protocol not recorded"


def _run_protocol(record: Mapping[str, Any] | None) -> str:
    """What one run's folder says it was evaluated on (:data:`_NOT_RECORDED` when nothing)."""
    rec = dict(record or {})
    if not rec:
        return _NOT_RECORDED
    if rec.get("evaluated_on") == "validation":
        role = "" if rec.get("from_fingerprint") else " (a selection run, never tested)"
        return f"evaluated on the validation part only{role}"
    if rec.get("validation") and rec.get("from_fingerprint"):  # a notebook's: its part only
        return (
            "evaluated on test after a validation part; how it was chosen is not recorded "
            f"(same split part as {rec['from_fingerprint']})"
        )
    if rec.get("validation"):
        refit = {True: " (refit on train + validation)", False: " (no refit)"}.get(
            rec.get("refit"), ""
        )
        return f"evaluated once on test after a validation part{refit}"
    return "evaluated on the test split with no validation part"


def _names(runs: Sequence[RunData], shown: int = 5) -> str:
    names = [r.name for r in runs]
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _runs_protocol(runs: Sequence[RunData], *, alone: bool) -> str:
    """The protocol line read from the runs' own records: one sentence when they agree (and
    ``alone``: no sweep's line precedes it), else the runs of each protocol named."""
    groups: dict[str, list[RunData]] = {}
    for r in runs:
        groups.setdefault(_run_protocol(r.study.get("protocol")), []).append(r)
    if alone and len(groups) == 1:
        (text,) = groups
        if text.startswith("evaluated once on test after"):
            return (
                "each run " + text + "; the choice among configurations is not recorded in the "
                "job folders"
            )
        if text.startswith("evaluated on the test split"):
            return f"{text}: {_OPTIMISTIC}"
    parts = []
    for text, members in groups.items():
        if text == _NOT_RECORDED:
            one = len(members) == 1
            parts.append(f"{_names(members)}: {'its' if one else 'their'} protocol is not recorded")
            continue
        extra = f" ({_OPTIMISTIC})" if text.startswith("evaluated on the test split") else ""
        parts.append(f"{_names(members)}: {text}{extra}")
    return "; ".join(parts)


def protocol_text(settings: Mapping[str, Any]) -> str:
    """The protocol, each system's budget (saying when they are unequal) and the split's
    leakage, in sentences; empty when the report knows none of them."""
    parts = []
    if settings.get("protocol"):
        parts.append(f"Protocol: {settings['protocol']}.")
    budgets = settings.get("budgets") or {}
    if budgets:
        head = "Budgets" if settings.get("equal_budgets", True) else "Unequal budgets"
        parts.append(f"{head}: " + "; ".join(f"{k} {v}" for k, v in budgets.items()) + ".")
    if settings.get("leakage"):
        leak = str(settings["leakage"]).rstrip(".")
        parts.append(leak[:1].upper() + leak[1:] + ".")
    return " ".join(parts)


def setting_options(scope: Mapping[str, Any]) -> dict[str, Any]:
    """The options :func:`_check_settings` checks, by name, from the ``locals()`` of
    :func:`build_report` or :func:`~.compare.compare` (whose parameters share those names)."""
    return {name: scope[name] for name in _SETTING_NAMES}


def _check_settings(
    func: str,
    *,
    correction: Any,
    test: Any,
    n_permutations: Any,
    n_bootstrap: Any,
    seed: Any,
    confidence: Any,
    alpha: Any,
    allow_mismatch: Any,
    user_features: Any,
    slices: Any,
    lower_is_better: Any,
    family: Any,
) -> dict[str, Any]:
    """Check :func:`build_report`'s options (:func:`~.compare.compare` checks them before it
    reads any run); returns the statistical settings of the report."""
    if correction not in st.CORRECTIONS:
        raise param_error("correction", func, f"one of {list(st.CORRECTIONS)}", correction)
    if test not in TESTS:
        raise param_error("test", func, f"one of {list(TESTS)}", test)
    if n_permutations != "auto":
        n_permutations = check_int(n_permutations, "n_permutations", func, minimum=1)
    n_bootstrap = check_int(n_bootstrap, "n_bootstrap", func, minimum=0)
    seed = check_int(seed, "seed", func, minimum=0)
    confidence = check_unit_open(confidence, "confidence", func)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise param_error("alpha", func, "a number strictly between 0 and 1", alpha)
    if not isinstance(allow_mismatch, bool):
        raise param_error("allow_mismatch", func, "a bool", allow_mismatch)
    if user_features is not None and (
        not isinstance(user_features, pd.DataFrame) or "user_id" not in user_features.columns
    ):
        raise param_error(
            "user_features", func, "a DataFrame with a 'user_id' column or None", user_features
        )
    if slices is not None and (
        isinstance(slices, (str, Mapping)) or not isinstance(slices, Sequence)
    ):
        raise param_error("slices", func, "a list of slice dicts or None", slices)
    if family not in FAMILIES:
        raise param_error("family", func, f"one of {list(FAMILIES)}", family)
    return {
        "correction": correction,
        "test": test,
        "n_permutations": n_permutations,
        "n_bootstrap": n_bootstrap,
        "seed": seed,
        "confidence": confidence,
        "alpha": alpha,
        "allow_mismatch": allow_mismatch,
        "lower_is_better": list(lower_is_better),
        "family": family,
    }


#: The options :func:`_check_settings` checks, in the order of its signature.
_SETTING_NAMES = tuple(inspect.signature(_check_settings).parameters)[1:]


@dataclass
class _Aligned:
    """Every run's users aligned by original id over the union of the runs' users."""

    union: pd.Index
    present: np.ndarray  # users x runs: the user is in the run's per-user table
    values: dict[str, np.ndarray]  # metric -> users x runs (NaN: missing or undefined)
    users: pd.DataFrame  # user_id, n_train, n_test and the user features, for slices


def _align(
    runs: list[RunData],
    metrics: list[str],
    user_features: pd.DataFrame | None,
    excluded: Mapping[str, Mapping[str, str]] | None = None,
) -> _Aligned:
    union = pd.Index(pd.unique(np.concatenate([r.per_user["user_id"].to_numpy() for r in runs])))
    N, R = len(union), len(runs)
    present = np.zeros((N, R), dtype=bool)
    values = {m: np.full((N, R), np.nan) for m in metrics}
    users = pd.DataFrame({"user_id": union.to_numpy()})
    for j, r in enumerate(runs):
        pos = union.get_indexer(r.per_user["user_id"].to_numpy())
        present[pos, j] = True
        for m in metrics:
            if r.run_id not in (excluded or {}).get(m, {}):
                values[m][pos, j] = r.per_user[m].to_numpy(dtype=np.float64)
        for col in ("n_train", "n_test"):
            if col in r.per_user.columns:
                if col not in users.columns:
                    users[col] = np.nan
                fill = users[col].isna().to_numpy()[pos]
                users.loc[pos[fill], col] = r.per_user[col].to_numpy(dtype=np.float64)[fill]
    if user_features is not None:
        extra = user_features.drop_duplicates("user_id").set_index("user_id")
        for col in extra.columns:
            users[col] = extra[col].reindex(union).to_numpy()
    return _Aligned(union, present, values, users)


def _all_tables(
    aligned: _Aligned,
    runs: list[RunData],
    metrics: list[str],
    slices: Sequence[Mapping[str, Any]] | None,
    settings: Mapping[str, Any],
    func: str,
) -> tuple[pd.DataFrame, pd.DataFrame, list[SliceTable]]:
    """The tables over every user, then over each group of each slice (the baseline is run 0)."""
    kw: dict[str, Any] = {
        k: settings[k]
        for k in (
            "confidence",
            "n_bootstrap",
            "n_permutations",
            "seed",
            "correction",
            "family",
            "test",
            "alpha",
        )
    }
    kw["lower"] = tuple(settings["lower_is_better"])
    summary, comparisons = _tables(
        aligned.values, aligned.present, np.arange(len(aligned.union)), runs, 0, metrics, **kw
    )
    settings["n_permutations_used"] = permutations_for(
        settings["n_permutations"], settings["family"], len(metrics), len(runs) - 1
    )
    slice_tables: list[SliceTable] = []
    for spec in slices or []:
        name, groups = slice_groups(spec, aligned.users, func)
        for label, idx in groups:
            s, c = _tables(aligned.values, aligned.present, idx, runs, 0, metrics, **kw)
            slice_tables.append(SliceTable(name, label, int(idx.size), s, c))
    return summary, comparisons, slice_tables


def _coverage(aligned: _Aligned, runs: list[RunData], metrics: list[str]) -> pd.DataFrame:
    present = aligned.present
    coverage = pd.DataFrame(
        {
            "run_id": [r.run_id for r in runs],
            "run": [r.name for r in runs],
            "users_union": len(aligned.union),
            "users_missing": (~present).sum(axis=0).astype(int),
        }
    )
    for m in metrics:
        coverage[f"nan_{m}"] = (present & np.isnan(aligned.values[m])).sum(axis=0).astype(int)
    return coverage


def _inputs(runs: list[RunData]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run_id": [r.run_id for r in runs],
            "run": [r.name for r in runs],
            "source": [r.source for r in runs],
            **{
                f"{k}_fingerprint": [r.fingerprints.get(k, "") for r in runs]
                for k in FINGERPRINT_KINDS
            },
        }
    )


# ---------------------------------------------------------------------------------------------
# Every baseline
# ---------------------------------------------------------------------------------------------

#: The tag of a sweep's baselines: their place in ``baselines=[...]`` (0 is the first).
BASELINE_RANK_TAG = "recoeval.baseline_rank"


def baseline_ids(report: Report) -> list[str]:
    """The run ids of the report's baselines in the order the sweep named them (tag
    :data:`BASELINE_RANK_TAG`, a replicate group's from its runs); the report's own baseline
    alone when no run carries the tag."""
    ranked = sorted(
        (int(str(r.tags.get(BASELINE_RANK_TAG))), i, r.run_id)
        for i, r in enumerate(report.runs)
        if str(r.tags.get(BASELINE_RANK_TAG, "")).isdigit()
    )
    return [run_id for _, _, run_id in ranked] or [report.baseline]


def against_baseline(report: Report, baseline: str) -> pd.DataFrame:
    """The comparisons table of every other run against the run ``baseline`` (an id of
    ``report.runs``), computed as :func:`build_report` computes ``report.comparisons`` (the
    same tests, corrections over each metric's comparisons with that baseline, marks and,
    over replicates that draw their own split, Nadeau-Bengio's corrected t). For the report's
    own baseline it is ``report.comparisons`` itself."""
    if baseline == report.baseline:
        return report.comparisons
    if baseline in report._against:
        return report._against[baseline]
    base = report.run(baseline)
    runs = [base] + [r for r in report.runs if r is not base]
    verdict = comparability(runs, report.metrics, base, check_runs=False, func="build_report")
    aligned = _align(runs, report.metrics, None, verdict.excluded)
    s = report.settings
    _, comp = _tables(
        aligned.values,
        aligned.present,
        np.arange(len(aligned.union)),
        runs,
        0,
        report.metrics,
        confidence=s["confidence"],
        n_bootstrap=s["n_bootstrap"],
        n_permutations=s["n_permutations"],
        seed=s["seed"],
        correction=s["correction"],
        family=s["family"],
        test=s["test"],
        alpha=s["alpha"],
        lower=tuple(s["lower_is_better"]),
    )
    comp = verdict.drop(comp, tests=True)
    from dataclasses import replace

    other = replace(report, runs=runs, baseline=baseline, comparisons=comp, settings=dict(s))
    correct_replicate_tests(other)
    report._against[baseline] = other.comparisons
    return other.comparisons


def _name_groups(groups: list[RunData], runs: Sequence[RunData], replicate_key: str) -> None:
    """Name a replicate group after its runs when its params do not name its model (a model of
    the user's, ``_target_``, has no ``model.name``; the group was ``all runs`` or only its
    swept values): the runs' common name without the replicate's word (``mypop fold=0``,
    ``mypop fold=1`` -> ``mypop``)."""
    last = replicate_key.rsplit(".", 1)[-1]
    taken = {g.name for g in groups}
    for g in groups:
        unnamed = g.name == "all runs" or str(g.params.get("model.name", "")) == "None"
        if not unnamed:
            continue
        members = [
            r for r in runs if all(str(r.params.get(k)) == str(v) for k, v in g.params.items())
        ]
        names = {
            " ".join(w for w in r.name.split() if not w.startswith(f"{last}=")) for r in members
        }
        if len(names) == 1:
            name = names.pop()
            if name and name not in taken:
                taken.discard(g.name)
                taken.add(name)
                g.name = name


def correct_replicate_tests(report: Report) -> None:
    """Over replicates that draw their own split (folds, seeds; their groups carry the design,
    :func:`~.replicates.replicate_design`), the t-test of each comparison becomes Nadeau &
    Bengio's corrected resampled t (:func:`~recoeval_tracking.stats.corrected_resampled_t`): ``t_low``,
    ``t_high``, ``t_stat``, ``p_t``, ``p_t_adj`` and, when the t-test sets them, the marks.
    The plain paired t over replicates that share training data overstates significance.
    ``settings["replicate_correction"]`` says which applies (the Wilcoxon and randomisation
    columns are left as they are: they have no such correction). Recomputed from the values,
    so applying it twice changes nothing."""
    design = design_of(report.runs)
    if design is None:
        return
    s = report.settings
    s["replicate_correction"] = design.text
    s["replicate_ratio"] = design.ratio
    comp = report.comparisons
    if design.ratio == 0 or not len(comp):
        return
    base = report.run(report.baseline).per_user.set_index("user_id")
    for idx in comp.index:
        metric = comp.at[idx, "metric"]
        run = report.run(comp.at[idx, "run_id"]).per_user.set_index("user_id")
        pair = pd.concat([run[metric], base[metric]], axis=1, join="inner").to_numpy(float)
        r = corrected_resampled_t(
            pair[:, 0],
            pair[:, 1],
            test_train_ratio=design.ratio,
            confidence=s["confidence"],
        )
        comp.loc[idx, ["t_low", "t_high", "t_stat", "p_t"]] = [r.low, r.high, r.t, r.p]
    raw = comp["p_t"].to_numpy(dtype=np.float64)
    adj = np.empty_like(raw)
    groups = (
        comp.groupby("metric", sort=False).indices.values()
        if s.get("family", "metric") == "metric"
        else [np.arange(len(comp))]
    )
    for rows in groups:
        adj[rows] = st.adjust_pvalues(raw[rows], s["correction"]) if len(rows) else raw[rows]
    comp["p_t_adj"] = adj
    if s["test"] == "t":
        lower = s.get("lower_is_better", ())
        comp["mark"] = [
            small_n_mark(
                significance_mark(p, diff, _lower_better(m, lower), s["alpha"]), bool(small)
            )
            for p, diff, m, small in zip(
                comp["p_t_adj"], comp["mean_diff"], comp["metric"], comp["small_n"]
            )
        ]
