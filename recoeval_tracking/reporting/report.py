"""Reports comparing runs: which model is better, by how much, and whether the difference is real.

:func:`build_report` works on plain data (:class:`RunData`: a run's per-user table, curves,
params and fingerprints), wherever it came from (job directories or a tracking store), and
returns a :class:`Report` of tables that :mod:`recoeval_tracking.reporting.render` turns into
HTML and Markdown.

Comparability first: runs are compared only when their data, split and metric-definition
fingerprints agree; otherwise :func:`build_report` refuses with a message naming what differs
(``allow_mismatch=True`` proceeds and marks every table). Users are aligned by their original id;
a user absent from a run, or NaN there, is counted and reported, never silently dropped: a run's
mean is over its own defined users (it equals the logged mean), a paired comparison is over the
users defined in both runs (the count is in the table).

Statistics (:mod:`recoeval_tracking.reporting.stats`): per run and metric the mean with its
t and percentile-bootstrap intervals; per run against the baseline the mean difference with both
intervals, the paired t, Wilcoxon signed-rank and sign-flip randomisation tests, Cohen's ``d_z``,
and p-values adjusted over the family of every (run, metric) comparison of one table (one slice
group) with Holm (default), Bonferroni or Benjamini-Hochberg.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import InputError, check_int, param_error
from ..metrics.registry import greater_is_better
from . import stats as st

__all__ = ["RunData", "Report", "SliceTable", "build_report", "user_popularity_share",
           "FINGERPRINT_KINDS", "TESTS", "SLICE_KINDS"]

#: The fingerprints that must agree for runs to be compared.
FINGERPRINT_KINDS = ("data", "split", "definitions")
#: Tests whose adjusted p-value can set the significance marks.
TESTS = ("t", "wilcoxon", "randomization")
#: Kinds of user slices accepted by :func:`build_report`.
SLICE_KINDS = ("quantiles", "threshold", "activity", "cold_warm", "popularity")

_ID_COLUMNS = ("user_id", "n_train", "n_test", "nan_reason", "n_tied_topk")
_P_COLUMN = {"t": "p_t_adj", "wilcoxon": "p_wilcoxon_adj", "randomization": "p_randomization_adj"}
_NOT_SWEPT_PREFIXES = ("tracking.", "hydra.", "definitions.", "output.", "mlflow.")


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

@dataclass
class RunData:
    """One run as the report sees it.

    Attributes
    ----------
    run_id : str
        Its tracking run id (or any unique label, e.g. the job directory for local runs).
    name : str
        Shown in the tables.
    per_user : pandas.DataFrame
        ``user_id`` (original ids), optionally ``n_train``/``n_test``, one column per metric.
    params : dict
        Flattened config (``model.factors``...): the swept ones become x axes.
    curves : pandas.DataFrame or None
        The ``curves.csv`` layout: ``k``, ``<curve>``, ``<curve>_ci95_low/high``.
    fingerprints : dict
        ``data``, ``split``, ``definitions`` (missing when not recorded).
    metrics : dict
        Means as logged (for cross-checks; not used in the statistics).
    tags : dict
        Tracking tags (``recoeval.sweep_id``...), for selecting the baseline by tag.
    source : str
        Where the run came from (``mlflow run <id>`` or a path).
    config : dict or None
        The run's resolved config, nested (``config.yaml``), when known.
    """

    run_id: str
    name: str
    per_user: pd.DataFrame
    params: dict[str, Any] = field(default_factory=dict)
    curves: pd.DataFrame | None = None
    fingerprints: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    source: str = ""
    config: dict[str, Any] | None = None

    @classmethod
    def from_job_dir(cls, path: str | Path, *, run_id: str | None = None,
                     name: str | None = None, params: Mapping[str, Any] | None = None,
                     tags: Mapping[str, str] | None = None, source: str | None = None
                     ) -> RunData:
        """Read a job directory written by :func:`recoeval_tracking.jobdir.write_job_dir`.

        The data and split fingerprints come from ``dataset.json`` (``data_fingerprint`` or
        ``fingerprint``; ``split_fingerprint``, also accepted nested as ``split.fingerprint``),
        the definitions fingerprint from ``definitions.json``; params are the flattened
        ``config.yaml`` updated with ``params``.
        """
        from ..jobdir import read_job_dir
        from ..jobdir.redact import flatten_config

        job = read_job_dir(path)
        flat: dict[str, Any] = dict(flatten_config(job.config)) if job.config else {}
        flat.update(params or {})
        label = name or (",".join(job.overrides) if job.overrides else Path(path).name)
        return cls(run_id=run_id or str(Path(path)), name=label,
                   per_user=job.per_user if job.per_user is not None else pd.DataFrame(),
                   params=flat, curves=job.curves if len(job.curves) else None,
                   fingerprints=fingerprints_from(job.dataset, job.fingerprint),
                   metrics=dict(job.metrics), tags=dict(tags or {}),
                   source=source or str(Path(path)), config=job.config)


def fingerprints_from(dataset: Mapping[str, Any] | None, definitions_fp: str | None
                      ) -> dict[str, str]:
    """``{"data", "split", "definitions"}`` from a ``dataset.json`` dict and the definitions
    fingerprint, tolerant of the key spellings in use (missing ones are left out)."""
    ds = dict(dataset or {})
    out: dict[str, str] = {}
    data_fp = ds.get("data_fingerprint") or ds.get("fingerprint")
    split_fp = ds.get("split_fingerprint")
    for key in ("data", "dataset"):
        sub = ds.get(key)
        if isinstance(sub, Mapping) and not data_fp:
            data_fp = sub.get("fingerprint") or sub.get("data_fingerprint")
    sub = ds.get("split")
    if isinstance(sub, Mapping) and not split_fp:
        split_fp = sub.get("fingerprint") or sub.get("split_fingerprint")
    if data_fp:
        out["data"] = str(data_fp)
    if split_fp:
        out["split"] = str(split_fp)
    if definitions_fp:
        out["definitions"] = str(definitions_fp)
    return out


def user_popularity_share(train: Any, test: Any, *, user_ids: Any = None,
                          head: float = 0.2) -> pd.DataFrame:
    """Share of each user's test items that are popular, for the popular/long-tail slice.

    The popular head is the ``ceil(head * n_items)`` items with the most training interactions
    (ties by lower item index); a user's share is ``|T_u ∩ head| / |T_u|`` over their test items
    ``T_u`` (NaN without test items).

    Parameters
    ----------
    train, test : scipy.sparse matrix or Interactions
        Users x items, same shape.
    user_ids : array-like, optional
        Original id of each row (taken from an Interactions container when given one).
    head : float
        Fraction of the catalogue counted as popular, in (0, 1).

    Returns
    -------
    pandas.DataFrame
        Columns ``user_id`` and ``test_popular_share``.
    """
    import scipy.sparse as sp

    func = "user_popularity_share"
    if user_ids is None and hasattr(test, "user_ids"):
        user_ids = test.user_ids
    train_m = getattr(train, "matrix", train)
    test_m = getattr(test, "matrix", test)
    if not sp.issparse(train_m) or not sp.issparse(test_m) or train_m.shape != test_m.shape:
        raise param_error("test", func, "a sparse users x items matrix of the same shape as "
                          "'train' (or Interactions)", test_m)
    if isinstance(head, bool) or not isinstance(head, (int, float)) or not 0 < head < 1:
        raise param_error("head", func, "a fraction strictly between 0 and 1", head)
    n_items = train_m.shape[1]
    counts = np.asarray((sp.csr_array(train_m) != 0).sum(axis=0)).ravel()
    n_head = math.ceil(head * n_items)
    order = np.lexsort((np.arange(n_items), -counts))
    popular = np.zeros(n_items, dtype=np.float64)
    popular[order[:n_head]] = 1.0
    T = (sp.csr_array(test_m) != 0).astype(np.float64)
    n_test = np.asarray(T.sum(axis=1)).ravel()
    hits = T @ popular
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n_test > 0, hits / np.maximum(n_test, 1), np.nan)
    ids = np.arange(T.shape[0]) if user_ids is None else np.asarray(user_ids)
    return pd.DataFrame({"user_id": ids, "test_popular_share": share})


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

def _check_runs(runs: Any, func: str) -> list[RunData]:
    if isinstance(runs, RunData) or not isinstance(runs, Sequence) or not runs:
        raise param_error("runs", func, "a non-empty list of RunData", runs)
    seen: set[str] = set()
    for i, r in enumerate(runs):
        if not isinstance(r, RunData):
            raise param_error("runs", func, "a list of RunData", f"{r!r} at position {i}",
                              got_is_text=True)
        if r.run_id in seen:
            raise param_error("runs", func, "runs with distinct run ids",
                              f"{r.run_id!r} twice", got_is_text=True)
        seen.add(r.run_id)
        if not isinstance(r.per_user, pd.DataFrame) or "user_id" not in r.per_user.columns:
            raise param_error("runs", func, "runs whose per_user table has a 'user_id' column",
                              f"run {r.name!r} ({r.run_id}) without it", got_is_text=True)
        if r.per_user["user_id"].duplicated().any():
            dup = r.per_user["user_id"][r.per_user["user_id"].duplicated()].iloc[0]
            raise param_error("runs", func, "per-user tables with one row per user",
                              f"user {dup!r} twice in run {r.name!r} ({r.run_id})",
                              got_is_text=True)
    return list(runs)


def check_comparable(runs: Sequence[RunData]) -> list[str]:
    """What differs between the runs' data, split and definitions fingerprints.

    A fingerprint recorded for some runs and not for others counts as a difference; one recorded
    for none is not checked. Returns one message per differing kind (empty list: comparable).
    """
    problems = []
    for kind in FINGERPRINT_KINDS:
        values: dict[str, list[str]] = {}
        for r in runs:
            values.setdefault(r.fingerprints.get(kind) or "<not recorded>", []).append(r.name)
        if len(values) > 1 and not (len(values) == 1 and "<not recorded>" in values):
            parts = []
            for fp, names in values.items():
                shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more"
                                                if len(names) > 4 else "")
                parts.append(f"{fp} ({shown})")
            problems.append(f"the {kind} fingerprint differs: " + " vs ".join(parts))
    return problems


def _lower_better(metric: str, prefixes: Sequence[str]) -> bool:
    """Lower is better for ``metric``: by the metric registry (``mpr``, ``*_seconds``), or when
    its name starts with one of the user's extra ``prefixes``."""
    return not greater_is_better(metric) or metric.startswith(tuple(prefixes))


def _resolve_baseline(baseline: Any, runs: list[RunData], metrics: list[str],
                      lower: Sequence[str], func: str) -> RunData:
    if baseline is None:
        return runs[0]
    if not isinstance(baseline, str):
        raise param_error("baseline", func, "a run id or name, 'tag:<key>=<value>', "
                          "'best:<metric>' or 'worst:<metric>'", baseline)
    for r in runs:
        if baseline == r.run_id:
            return r
    named = [r for r in runs if r.name == baseline]
    if len(named) == 1:
        return named[0]
    if baseline.startswith("tag:") and "=" in baseline:
        key, value = baseline[4:].split("=", 1)
        tagged = [r for r in runs if r.tags.get(key) == value]
        if len(tagged) == 1:
            return tagged[0]
        raise param_error("baseline", func, "a tag that exactly one run carries", baseline,
                          f"{len(tagged)} runs carry it.")
    if baseline.startswith(("best:", "worst:")):
        which, metric = baseline.split(":", 1)
        if metric not in metrics:
            raise param_error("baseline", func, f"best:/worst: with a reported metric {metrics}",
                              baseline)
        means = np.array([np.nanmean(r.per_user[metric].to_numpy(dtype=np.float64))
                          if r.per_user[metric].notna().any() else np.nan for r in runs])
        if np.all(np.isnan(means)):
            raise param_error("baseline", func, "a metric defined for some run", baseline)
        high = (which == "best") != _lower_better(metric, lower)
        return runs[int(np.nanargmax(means) if high else np.nanargmin(means))]
    raise param_error("baseline", func, "a run id or name of a selected run, "
                      "'tag:<key>=<value>', 'best:<metric>' or 'worst:<metric>'", baseline,
                      "Known runs: " + ", ".join(f"{r.name} ({r.run_id})" for r in runs[:10]))


def _resolve_metrics(metrics: Any, runs: list[RunData], func: str) -> list[str]:
    per_run = [[c for c in r.per_user.columns if c not in _ID_COLUMNS
                and pd.api.types.is_numeric_dtype(r.per_user[c])] for r in runs]
    common = [c for c in per_run[0] if all(c in cols for cols in per_run[1:])]
    if metrics is None:
        if not common:
            raise param_error("runs", func, "runs sharing at least one per-user metric column",
                              "no common metric column", got_is_text=True)
        return common
    if isinstance(metrics, str):
        metrics = [metrics]
    metrics = list(metrics)
    if not metrics:
        return common
    for m in metrics:
        lacking = [r.name for r, cols in zip(runs, per_run) if m not in cols]
        if lacking:
            raise param_error("metrics", func, f"metrics every run has (common: {common})",
                              f"{m!r}, missing from {', '.join(lacking[:5])}", got_is_text=True)
    return metrics


def _slice_groups(spec: Mapping[str, Any], users: pd.DataFrame, func: str
                  ) -> tuple[str, list[tuple[str, np.ndarray]]]:
    """Name of the slice and its groups as (label, row positions) over the aligned users."""
    if not isinstance(spec, Mapping):
        raise param_error("slices", func, "a list of dicts with a 'kind' key", spec)
    kind = spec.get("kind")
    if kind not in SLICE_KINDS:
        raise param_error("slices", func, f"slices whose 'kind' is one of {list(SLICE_KINDS)}",
                          kind)
    defaults = {"activity": ("quantiles", "n_train", None),
                "cold_warm": ("threshold", "n_train", ["cold", "warm"]),
                "popularity": ("threshold", "test_popular_share", ["long_tail", "popular"])}
    base, column, labels = defaults.get(kind, (kind, None, None))
    column = spec.get("column", column)
    labels = spec.get("labels", labels)
    name = str(spec.get("name", kind))
    if column is None or column not in users.columns:
        raise param_error("slices", func, f"a slice over a known user column "
                          f"{[c for c in users.columns if c != 'user_id']}",
                          f"{name!r} over {column!r}", "Give user_features with that column "
                          "(e.g. user_popularity_share(train, test)).", got_is_text=True)
    values = pd.to_numeric(users[column], errors="coerce")
    groups: list[tuple[str, np.ndarray]] = []
    if base == "quantiles":
        q = check_int(spec.get("q", 4), "slices.q", func, minimum=2)
        cats = pd.qcut(values, q, duplicates="drop")
        for i, interval in enumerate(cats.cat.categories):
            idx = np.flatnonzero((cats == interval).to_numpy())
            lo = max(float(interval.left), float(values.min()))
            groups.append((f"Q{i + 1}: {column} {lo:g} to {float(interval.right):g}", idx))
    else:
        default_threshold = {"cold_warm": 5, "popularity": 0.5}.get(kind)
        threshold = spec.get("threshold", default_threshold)
        if threshold is None or isinstance(threshold, bool) \
                or not isinstance(threshold, (int, float)):
            raise param_error("slices", func, "a numeric 'threshold' for a threshold slice",
                              threshold)
        lab = list(labels or [f"{column} < {threshold:g}", f"{column} >= {threshold:g}"])
        below = (values < threshold).to_numpy()
        above = (values >= threshold).to_numpy()
        groups = [(f"{lab[0]} ({column} < {threshold:g})", np.flatnonzero(below)),
                  (f"{lab[1]} ({column} >= {threshold:g})", np.flatnonzero(above))]
        if values.isna().any():
            groups.append((f"{column} unknown", np.flatnonzero(values.isna().to_numpy())))
    return name, [(label, idx) for label, idx in groups if idx.size]


def _tables(values: dict[str, np.ndarray], present: np.ndarray, rows: np.ndarray,
            runs: list[RunData], b: int, metrics: list[str], *, confidence: float,
            n_bootstrap: int, n_permutations: int, seed: int, correction: str, test: str,
            alpha: float, lower: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Summary and comparison tables over the aligned users at positions ``rows``."""
    R = len(runs)
    others = [j for j in range(R) if j != b]
    cols: list[np.ndarray] = []
    for m in metrics:
        X = values[m][rows]
        cols.append(X)
        if others:
            cols.append(X[:, others] - X[:, [b]])
    big = np.concatenate(cols, axis=1) if cols else np.empty((rows.size, 0))
    if n_bootstrap > 0 and rows.size:
        boot = st.bootstrap_means(big, n_bootstrap, seed)
        boot_low, boot_high = st._percentile_bounds(boot, confidence)
    else:
        boot_low = boot_high = np.full(big.shape[1], np.nan)
    diff_cols = [np.arange(i * (R + len(others)) + R, (i + 1) * (R + len(others)))
                 for i in range(len(metrics))]
    p_perm = (st.randomization_pvalues(big[:, np.concatenate(diff_cols)], n_permutations, seed)
              if others and rows.size else np.array([]))
    pres = present[rows]

    summary_rows = []
    comp_rows = []
    for i, m in enumerate(metrics):
        X = values[m][rows]
        offset = i * (R + len(others))
        for j, r in enumerate(runs):
            mean, lo, hi, n = st.t_interval(X[:, j], confidence)
            n_present = int(pres[:, j].sum())
            summary_rows.append({
                "run_id": r.run_id, "run": r.name, "metric": m, "mean": mean, "t_low": lo,
                "t_high": hi, "boot_low": float(boot_low[offset + j]),
                "boot_high": float(boot_high[offset + j]), "n": n, "n_nan": n_present - n,
                "n_missing": int(rows.size - n_present)})
        for c, j in enumerate(others):
            x, y = X[:, j], X[:, b]
            d = x - y
            mean, lo, hi, n = st.t_interval(d, confidence)
            t_stat, p_t = st.paired_t_test(x, y)
            w_stat, p_w = st.wilcoxon_test(x, y)
            comp_rows.append({
                "run_id": runs[j].run_id, "run": runs[j].name, "metric": m, "mean_diff": mean,
                "t_low": lo, "t_high": hi, "boot_low": float(boot_low[offset + R + c]),
                "boot_high": float(boot_high[offset + R + c]), "n_pairs": n, "t_stat": t_stat,
                "p_t": p_t, "w_stat": w_stat, "p_wilcoxon": p_w,
                "p_randomization": float(p_perm[i * len(others) + c]) if n else math.nan,
                "cohens_dz": st.cohens_dz(x, y)})
    summary = pd.DataFrame(summary_rows, columns=[
        "run_id", "run", "metric", "mean", "t_low", "t_high", "boot_low", "boot_high", "n",
        "n_nan", "n_missing"])
    comp = pd.DataFrame(comp_rows, columns=[
        "run_id", "run", "metric", "mean_diff", "t_low", "t_high", "boot_low", "boot_high",
        "n_pairs", "t_stat", "p_t", "w_stat", "p_wilcoxon", "p_randomization", "cohens_dz"])
    for name in ("t", "wilcoxon", "randomization"):
        comp[f"p_{name}_adj"] = st.adjust_pvalues(comp[f"p_{name}"].to_numpy(dtype=np.float64),
                                                  correction) if len(comp) else []
    comp["mark"] = [significance_mark(p, diff, _lower_better(m, lower), alpha)
                    for p, diff, m in zip(comp[_P_COLUMN[test]], comp["mean_diff"],
                                          comp["metric"])] if len(comp) else []
    return summary, comp


def significance_mark(p: float, diff: float, lower_is_better: bool = False,
                      alpha: float = 0.05) -> str:
    """``▲``/``▼`` (better/worse than the baseline) followed by ``*`` (p < alpha), ``**``
    (p < 0.01) or ``***`` (p < 0.001) for an adjusted p-value; empty when not significant."""
    if p is None or not np.isfinite(p) or not np.isfinite(diff) or p >= alpha or diff == 0:
        return ""
    stars = "***" if p < 0.001 else "**" if p < 0.01 else "*"
    better = (diff < 0) if lower_is_better else (diff > 0)
    return ("▲" if better else "▼") + stars


def _swept_params(runs: list[RunData]) -> list[str]:
    keys: dict[str, None] = {}
    for r in runs:
        for k in r.params:
            keys.setdefault(str(k), None)
    out = []
    for k in keys:
        if k.startswith(_NOT_SWEPT_PREFIXES):
            continue
        vals = {str(r.params.get(k)) for r in runs}
        if len(vals) > 1:
            out.append(k)
    return out


def build_report(runs: Sequence[RunData], baseline: str | None = None, *,
                 metrics: Sequence[str] | str | None = None,
                 slices: Sequence[Mapping[str, Any]] | None = None, correction: str = "holm",
                 test: str = "t", n_permutations: int = 1000, n_bootstrap: int = 1000,
                 seed: int = 0, confidence: float = 0.95, alpha: float = 0.05,
                 allow_mismatch: bool = False, user_features: pd.DataFrame | None = None,
                 lower_is_better: Sequence[str] = (),
                 config: Mapping[str, Any] | None = None) -> Report:
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
        Adjustment over the family of every (run, metric) comparison of one table.
    test : {"t", "wilcoxon", "randomization"}
        The test whose adjusted p-value sets the marks (``▲***``...).
    n_permutations : int
        Random sign vectors of the randomisation test (stated in the report).
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

    Returns
    -------
    Report

    Raises
    ------
    InputError
        When the fingerprints differ and ``allow_mismatch`` is False (the message names what
        differs), or for bad arguments.
    """
    func = "build_report"
    runs = _check_runs(runs, func)
    if correction not in st.CORRECTIONS:
        raise param_error("correction", func, f"one of {list(st.CORRECTIONS)}", correction)
    if test not in TESTS:
        raise param_error("test", func, f"one of {list(TESTS)}", test)
    n_permutations = check_int(n_permutations, "n_permutations", func, minimum=1)
    n_bootstrap = check_int(n_bootstrap, "n_bootstrap", func, minimum=0)
    seed = check_int(seed, "seed", func, minimum=0)
    confidence = st._check_confidence(confidence, func)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise param_error("alpha", func, "a number strictly between 0 and 1", alpha)
    if not isinstance(allow_mismatch, bool):
        raise param_error("allow_mismatch", func, "a bool", allow_mismatch)
    if user_features is not None and (not isinstance(user_features, pd.DataFrame)
                                      or "user_id" not in user_features.columns):
        raise param_error("user_features", func, "a DataFrame with a 'user_id' column or None",
                          user_features)
    if slices is not None and (isinstance(slices, (str, Mapping))
                               or not isinstance(slices, Sequence)):
        raise param_error("slices", func, "a list of slice dicts or None", slices)
    lower = tuple(lower_is_better)

    mismatches = check_comparable(runs)
    if mismatches and not allow_mismatch:
        raise InputError(
            "The runs given to build_report are not comparable: " + "; ".join(mismatches)
            + ". Select runs evaluated on the same data, split and metric definitions, or pass "
            "allow_mismatch=True (report config: allow_mismatch=true) to compare them anyway; "
            "the tables are then marked.")

    metrics = _resolve_metrics(metrics, runs, func)
    base = _resolve_baseline(baseline, runs, metrics, lower, func)
    runs = [base] + [r for r in runs if r is not base]
    b = 0

    # Align users by original id over the union of every run's users.
    union = pd.Index(pd.unique(np.concatenate([r.per_user["user_id"].to_numpy()
                                               for r in runs])))
    N, R = len(union), len(runs)
    present = np.zeros((N, R), dtype=bool)
    values = {m: np.full((N, R), np.nan) for m in metrics}
    users = pd.DataFrame({"user_id": union.to_numpy()})
    for j, r in enumerate(runs):
        pos = union.get_indexer(r.per_user["user_id"].to_numpy())
        present[pos, j] = True
        for m in metrics:
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

    settings = {"correction": correction, "test": test, "n_permutations": n_permutations,
                "n_bootstrap": n_bootstrap, "seed": seed, "confidence": confidence,
                "alpha": alpha, "allow_mismatch": allow_mismatch,
                "lower_is_better": list(lower)}
    kw: dict[str, Any] = {"confidence": confidence, "n_bootstrap": n_bootstrap,
                          "n_permutations": n_permutations, "seed": seed,
                          "correction": correction, "test": test, "alpha": alpha,
                          "lower": lower}
    summary, comparisons = _tables(values, present, np.arange(N), runs, b, metrics, **kw)

    slice_tables: list[SliceTable] = []
    for spec in slices or []:
        name, groups = _slice_groups(spec, users, func)
        for label, idx in groups:
            s, c = _tables(values, present, idx, runs, b, metrics, **kw)
            slice_tables.append(SliceTable(name, label, int(idx.size), s, c))

    coverage = pd.DataFrame({
        "run_id": [r.run_id for r in runs], "run": [r.name for r in runs],
        "users_union": N, "users_missing": (~present).sum(axis=0).astype(int)})
    for m in metrics:
        coverage[f"nan_{m}"] = (present & np.isnan(values[m])).sum(axis=0).astype(int)
    inputs = pd.DataFrame({
        "run_id": [r.run_id for r in runs], "run": [r.name for r in runs],
        "source": [r.source for r in runs],
        **{f"{k}_fingerprint": [r.fingerprints.get(k, "") for r in runs]
           for k in FINGERPRINT_KINDS}})
    return Report(runs=runs, baseline=base.run_id, metrics=metrics, summary=summary,
                  comparisons=comparisons, slices=slice_tables, coverage=coverage,
                  inputs=inputs, mismatches=mismatches, swept_params=_swept_params(runs),
                  settings=settings, config=dict(config or {}))
