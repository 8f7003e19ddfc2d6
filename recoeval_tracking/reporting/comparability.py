"""The one rule of what a comparison holds, shared by :func:`~recoeval_tracking.reporting.
compare.compare` (``rt.compare``) and the report command (both build through
:func:`~recoeval_tracking.reporting.report.build_report`, which calls :func:`comparability`).

* **Runs** are comparable when their data and split fingerprints agree
  (:func:`check_comparable`). ``Results`` of ``rt.evaluate(split, ...)`` record the split
  part's fingerprint as a job folder does (it covers the data), so a notebook's results pair
  with the app's jobs of the same split. Other ``Results`` are told apart by their evaluated
  users (ids and train counts, :func:`users_fingerprint`) and, when they were evaluated on
  interactions containers, the fingerprints of those parts, so that two datasets or two
  random splits are never paired user by user. Otherwise the comparison is refused with both fingerprints and the
  runs named, unless the caller allows it (``allow_mismatch=True``; report config
  ``allow_mismatch=true``), and then every table is marked.
* **A metric** is compared over the runs whose own definition of it agrees (one fingerprint per
  metric, :func:`~recoeval_tracking.metrics.definitions.metric_fingerprints`), whatever the
  score source: a top-K metric from ranked lists and from scores is the same metric.
* **Every left-out** (metric, system) is named with its reason (:class:`Comparability`: the
  notes of the page, the table of :attr:`Comparison.left_out`): missing from the run, evaluated
  at another K, defined differently; a system whose baseline is left out of a metric keeps its
  mean but gets no test.
* **Names in options** (``metrics=``, ``baseline=``, ``lower_is_better=``, ``group_by=``,
  ``labels=``) must name something the runs have; unknown names are refused with a message
  listing the known ones.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import InputError, param_error
from ..metrics.registry import spec_for_key
from .runs import RunData

__all__ = [
    "Comparability",
    "comparability",
    "check_comparable",
    "check_replicates",
    "metric_exclusions",
    "users_fingerprint",
    "check_option_names",
    "check_labels",
    "apply_labels",
    "resolve_metrics",
    "metric_names",
    "RUN_KINDS",
    "LEFT_OUT_COLUMNS",
]

#: The fingerprints that must agree for runs to be compared at all.
RUN_KINDS = ("data", "split")
#: The columns of :meth:`Comparability.table` (and :attr:`Comparison.left_out`).
LEFT_OUT_COLUMNS = ["metric", "system", "run_id", "left_out", "reason"]
_ID_COLUMNS = ("user_id", "n_train", "n_test", "nan_reason", "n_tied_topk")
_AT_K = re.compile(r"^(?P<base>.+)_at_(?P<k>\d+)$")


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------


def users_fingerprint(per_user: pd.DataFrame, parts: str = "") -> str:
    """A short hash of the users a run was evaluated on: each user's id and train count
    (``n_train``), in id order. The same data and split give the same one, whatever the model
    and the metrics; it stands in for the data and split fingerprints of ``Results`` objects,
    which do not record them. The relevance rule does not enter it (``n_test`` counts
    positives). ``parts``, the fingerprint of the train and test interactions evaluated
    (``Results.parts_fingerprint``), enters it when given: two random splits of one fixed
    fraction keep every user's train count."""
    ids = per_user["user_id"].astype(str).to_numpy()
    n_train = (
        per_user["n_train"].to_numpy(dtype=np.float64)
        if "n_train" in per_user.columns
        else np.full(ids.size, np.nan)
    )
    order = np.argsort(ids, kind="stable")
    text = "\n".join(f"{u}:{t:g}" for u, t in zip(ids[order], n_train[order]))
    if parts:
        text += f"\nparts:{parts}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _names(names: list[str]) -> str:
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def check_comparable(runs: Sequence[RunData], kinds: Sequence[str] = RUN_KINDS) -> list[str]:
    """What differs between the runs' data and split fingerprints (``kinds``).

    A fingerprint recorded for some runs and not for others counts as a difference; one recorded
    for none is not checked. A run that records a split fingerprint and no data fingerprint
    (``Results`` of ``rt.evaluate(split, ...)``) is not checked on its data: the split
    fingerprint hashes the data's, so agreeing splits share their data. When no run records any of ``kinds`` and every run records its
    ``users`` fingerprint (``Results`` objects, :func:`users_fingerprint`), the users are
    compared instead. Returns one message per differing kind (empty list: comparable).
    """
    problems = []
    recorded = [k for k in kinds if any(r.fingerprints.get(k) for r in runs)]
    for kind in recorded:
        values: dict[str, list[str]] = {}
        for r in runs:
            if kind == "data" and not r.fingerprints.get(kind) and r.fingerprints.get("split"):
                continue  # a split fingerprint covers the data (it hashes the data's)
            values.setdefault(r.fingerprints.get(kind) or "<not recorded>", []).append(r.name)
        if len(values) > 1:
            parts = [f"{fp} ({_names(names)})" for fp, names in values.items()]
            problems.append(f"the {kind} fingerprint differs: " + " vs ".join(parts))
    if not recorded and runs and all(r.fingerprints.get("users") for r in runs):
        users: dict[str, list[RunData]] = {}
        for r in runs:
            users.setdefault(r.fingerprints["users"], []).append(r)
        if len(users) > 1:
            parts = [
                f"{fp} ({len(members[0].per_user)} users: {_names([m.name for m in members])})"
                for fp, members in users.items()
            ]
            problems.append(
                "the evaluated users or parts differ (these Results record no split "
                "fingerprint; their users and train counts, and the fingerprints of the "
                "train and test interactions evaluated, stand in): users fingerprint "
                + " vs ".join(parts)
            )
    return problems


def check_replicates(runs: Sequence[RunData], replicate_key: str) -> list[str]:
    """What differs between the data and split fingerprints of runs of one replicate (same
    value of ``replicate_key``)."""
    problems: list[str] = []
    by_rep: dict[str, list[RunData]] = {}
    for r in runs:
        by_rep.setdefault(str(r.params.get(replicate_key)), []).append(r)
    for rep, members in by_rep.items():
        problems += [f"{replicate_key}={rep}: {p}" for p in check_comparable(members)]
    return problems


# ---------------------------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------------------------


def _missing_reason(run: RunData, metric: str) -> tuple[str, str]:
    """Why ``run`` has no ``metric`` column, short and in full: evaluated at another K, or
    not at all."""
    m = _AT_K.match(metric)
    if m:
        others = sorted(
            {
                int(x.group("k"))
                for c in run.per_user.columns
                if (x := _AT_K.match(str(c)))
                and x.group("base") == m.group("base")
                and x.group("k") != m.group("k")
            }
        )
        if others:
            short = f"evaluated at k={', '.join(map(str, others))}"
            return short, f"{short}, not at k={m.group('k')}"
    spec = spec_for_key(metric)
    if spec is not None and spec.needs_item_vectors:
        return (
            "not computed, needs item vectors",
            f"no {metric} column: {spec.name} needs item vectors (a factor model's item "
            "factors, or item_features=), and a model without them gets none",
        )
    return "missing", f"no {metric} column"


def metric_exclusions(
    runs: Sequence[RunData], metrics: Sequence[str], baseline: RunData
) -> dict[str, dict[str, str]]:
    """Per metric, the runs it is not compared over and why: ``{metric: {run_id: reason}}``.

    A run is left out of a metric when it lacks the metric's column (``"missing"``, or
    ``"evaluated at k=5"`` when it has the metric at another K only) or defines it
    differently from the reference run (``"defined differently"``): the baseline when it has
    the metric, else the first run that has it.
    """
    return {
        m: {run_id: short for run_id, (short, _) in left.items()}
        for m, left in _exclusions(runs, metrics, baseline).items()
    }


def _exclusions(
    runs: Sequence[RunData], metrics: Sequence[str], baseline: RunData
) -> dict[str, dict[str, tuple[str, str]]]:
    """``{metric: {run_id: (short reason, full reason)}}``."""
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for m in metrics:
        having = [r for r in runs if m in r.per_user.columns]
        ref = baseline if baseline in having else (having[0] if having else None)
        left: dict[str, tuple[str, str]] = {}
        for r in runs:
            if r not in having:
                left[r.run_id] = _missing_reason(r, m)
            elif ref is not None and r.metric_fingerprint(m) != ref.metric_fingerprint(m):
                left[r.run_id] = (
                    "defined differently",
                    (
                        f"defined differently from {ref.name}: definition fingerprint "
                        f"{r.metric_fingerprint(m) or '<not recorded>'} vs "
                        f"{ref.metric_fingerprint(m) or '<not recorded>'}"
                    ),
                )
        if left:
            out[m] = left
    return out


@dataclass
class Comparability:
    """What a comparison holds and what it leaves out, with the reasons.

    Attributes
    ----------
    mismatches : list of str
        The data/split fingerprints that differ (empty: the runs are comparable); non-empty
        only when the caller allowed it.
    excluded : dict
        ``{metric: {run_id: reason}}``: the runs a metric is not compared over (their rows are
        left out of the tables).
    untested : dict
        ``{metric: [run_id, ...]}``: runs that keep their mean of a metric the baseline is left
        out of, so without a test against the baseline.
    table : pandas.DataFrame
        One row per left-out (metric, system): ``metric, system, run_id, left_out`` (``"values"``
        or ``"test"``) and the full ``reason``.
    """

    mismatches: list[str] = field(default_factory=list)
    excluded: dict[str, dict[str, str]] = field(default_factory=dict)
    untested: dict[str, list[str]] = field(default_factory=dict)
    table: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=LEFT_OUT_COLUMNS))

    def notes(self, runs: Sequence[RunData]) -> list[str]:
        """One line per metric not compared over every run (the page's notes)."""
        names = {r.run_id: r.name for r in runs}
        notes = []
        for m, left in self.excluded.items():
            by_reason: dict[str, list[str]] = {}
            for run_id, reason in left.items():
                by_reason.setdefault(reason, []).append(names[run_id])
            parts = "; ".join(f"{', '.join(n)}: {reason}" for reason, n in by_reason.items())
            kept = [r.name for r in runs if r.run_id not in left]
            if len(kept) == 1:
                notes.append(f"{m} is in {kept[0]} only, so not compared ({parts})")
            else:
                notes.append(f"{m} is compared over {', '.join(kept)} only ({parts})")
        return notes

    def drop(self, table: pd.DataFrame, tests: bool = False) -> pd.DataFrame:
        """``table`` without the (run, metric) rows left out; with ``tests``, also without the
        comparisons against a baseline that is left out of the metric."""
        if not len(table) or not (self.excluded or (tests and self.untested)):
            return table
        keep = [
            run_id not in self.excluded.get(m, {})
            and not (tests and run_id in self.untested.get(m, ()))
            for run_id, m in zip(table["run_id"], table["metric"])
        ]
        return table[keep].reset_index(drop=True)


_NOT_SWEPT_PREFIXES = ("tracking.", "hydra.", "definitions.", "output.", "mlflow.")


def swept_params(runs: Sequence[RunData]) -> list[str]:
    """The params (flattened keys) whose values differ between runs, tracking and Hydra's own
    left out."""
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


def not_comparable(
    mismatches: list[str], runs: Sequence[RunData] = (), func: str = "build_report"
) -> InputError:
    """The refusal of runs whose data or split fingerprints differ: what differs (both
    fingerprints and the runs of each), how to go on anyway, and the replicate key that would
    make them comparable when one fits."""
    candidates = [k for k in swept_params(list(runs)) if _replicate_like(k)]
    fitting = [k for k in candidates if not check_replicates(list(runs), k)]
    candidates = fitting or candidates
    hint = (
        f" If {', '.join(candidates)} only draws replicates (seeds, folds), pass "
        f"replicate_key={candidates[0]} (report config: replicate_key={candidates[0]})."
        if candidates
        else ""
    )
    text = "; ".join(mismatches)
    if "<not recorded>" in text and "split fingerprint" in text:
        hint += (
            " Results evaluated on a split's parts (rt.evaluate(split.train, split.test, ...)) "
            "record no split fingerprint: evaluate the Split itself, rt.evaluate(split, ...), "
            "and they carry the one a job of that split records."
        )
    if "data fingerprint differs" in text:
        hint += (
            " If these are different datasets, say so: compare({dataset: {name: run}}) or "
            "dataset_key=<the param naming the dataset> (report config: dataset_key=...)."
        )
    return InputError(
        f"The runs given to {func} are not comparable: "
        + text
        + ". Select runs evaluated on the same data, split and metric definitions, or pass "
        "allow_mismatch=True (report config: allow_mismatch=true) to compare them anyway; "
        "the tables are then marked." + hint
    )


def _replicate_like(key: str) -> bool:
    leaf = key.rsplit(".", 1)[-1]
    return leaf in ("seed", "fold", "repeat", "replicate")


def comparability(
    runs: Sequence[RunData],
    metrics: Sequence[str] = (),
    baseline: RunData | None = None,
    *,
    replicate_key: str | None = None,
    allow_mismatch: bool = False,
    check_runs: bool = True,
    func: str = "compare",
) -> Comparability:
    """The comparability of ``runs``: the one rule of ``rt.compare`` and the report.

    Parameters
    ----------
    runs : list of RunData
    metrics : list of str
        The metric columns to compare (empty: the runs only).
    baseline : RunData, optional
        The run the others are tested against (default the first).
    replicate_key : str, optional
        Runs are replicates over this param: their data and split must agree within a value.
    allow_mismatch : bool
        Go on when the data or split fingerprints differ (the mismatches are returned).
    check_runs : bool
        Check the data and split fingerprints (False for runs already checked, such as
        replicate groups).
    func : str
        The function named in errors.

    Raises
    ------
    InputError
        When the data or split fingerprints differ and ``allow_mismatch`` is False: the message
        names both fingerprints and the runs of each.
    """
    runs = list(runs)
    mismatches: list[str] = []
    if check_runs:
        mismatches = (
            check_replicates(runs, replicate_key) if replicate_key else check_comparable(runs)
        )
        if mismatches and not allow_mismatch:
            raise not_comparable(mismatches, runs, func)
    if not metrics or not runs:
        return Comparability(mismatches)
    base = baseline if baseline is not None else runs[0]
    full = _exclusions(runs, metrics, base)
    excluded = {m: {r: short for r, (short, _) in left.items()} for m, left in full.items()}
    untested: dict[str, list[str]] = {}
    rows = []
    for m, left in full.items():
        for r in runs:
            if r.run_id in left:
                rows.append([m, r.name, r.run_id, "values", left[r.run_id][1]])
        if base.run_id in left:
            kept = [r for r in runs if r is not base and r.run_id not in left]
            untested[m] = [r.run_id for r in kept]
            rows += [
                [
                    m,
                    r.name,
                    r.run_id,
                    "test",
                    f"no test: the baseline {base.name} is "
                    f"left out of {m} ({left[base.run_id][1]})",
                ]
                for r in kept
            ]
    return Comparability(
        mismatches, excluded, untested, pd.DataFrame(rows, columns=LEFT_OUT_COLUMNS)
    )


# ---------------------------------------------------------------------------------------------
# Names given in options
# ---------------------------------------------------------------------------------------------


def metric_names(runs: Sequence[RunData]) -> list[str]:
    """Every metric a run has: per-user metric columns, then logged (catalogue) metrics."""
    names: dict[str, None] = {}
    for r in runs:
        for c in r.per_user.columns:
            if c not in _ID_COLUMNS and pd.api.types.is_numeric_dtype(r.per_user[c]):
                names.setdefault(str(c), None)
    for r in runs:
        for c in r.metrics:
            names.setdefault(str(c), None)
    return list(names)


def _known_text(known: Sequence[str], given: str, limit: int = 30) -> str:
    close = difflib.get_close_matches(given, list(known), n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    shown = ", ".join(known[:limit]) + (
        f" and {len(known) - limit} more" if len(known) > limit else ""
    )
    return f"The known names: {shown or 'none'}.{hint}"


def _as_names(value: Any, option: str, func: str) -> list[str]:
    if value is None:
        return []
    if (
        isinstance(value, str)
        or not isinstance(value, Sequence)
        or not all(isinstance(v, str) for v in value)
    ):
        raise param_error(option, func, "a list of names (str)", value)
    return list(value)


def resolve_metrics(metrics: Any, runs: Sequence[RunData], func: str) -> list[str]:
    """The metric columns to compare: ``metrics`` (a name or a list; each one some run must
    have, else refused listing the known ones), or every per-user metric column of the runs."""
    common = [m for m in metric_names(runs) if any(m in r.per_user.columns for r in runs)]
    if metrics is None:
        if not common:
            raise param_error(
                "runs",
                func,
                "runs with at least one per-user metric column",
                "no metric column",
                got_is_text=True,
            )
        return common
    if isinstance(metrics, str):
        metrics = [metrics]
    metrics = list(metrics)
    if not metrics:
        return common
    for m in metrics:
        if m not in common:
            raise param_error(
                "metrics",
                func,
                "per-user metric columns some run has",
                f"{m!r} (missing from every run)",
                _known_text(common, str(m)),
                got_is_text=True,
            )
    return metrics


def check_option_names(
    runs: Sequence[RunData],
    *,
    lower_is_better: Any = (),
    group_by: Any = None,
    func: str = "compare",
) -> None:
    """Refuse a ``lower_is_better`` prefix that starts no metric of the runs, and a
    ``group_by`` key that is no param of any run, listing the known names."""
    metrics = metric_names(runs)
    for prefix in _as_names(lower_is_better, "lower_is_better", func):
        if not any(m.startswith(prefix) for m in metrics):
            raise param_error(
                "lower_is_better",
                func,
                "metric-name prefixes that start a metric of the runs",
                f"{prefix!r} (it starts no metric)",
                _known_text(metrics, prefix),
                got_is_text=True,
            )
    params = list(dict.fromkeys(str(k) for r in runs for k in r.params))
    for key in _as_names(group_by, "group_by", func):
        if key not in params:
            raise param_error(
                "group_by",
                func,
                "params of the runs",
                f"{key!r} (no run has this param)",
                _known_text(params, key),
                got_is_text=True,
            )


def check_labels(labels: Any, func: str) -> dict[str, str]:
    """``labels`` as a plain ``{name or run id: display name}`` dict (None: empty)."""
    if labels is None:
        return {}
    if not isinstance(labels, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in labels.items()
    ):
        raise param_error(
            "labels",
            func,
            "a mapping from a run's name or id to its display name (non-empty str)",
            labels,
        )
    return dict(labels)


def apply_labels(
    runs: list[RunData], labels: Mapping[str, str], func: str, strict: bool = True
) -> tuple[list[RunData], set[str]]:
    """``runs`` with their display names: each run whose id or name is a key of ``labels``
    takes its value as its name. Returns the runs and the keys used; with ``strict``, a key
    that names no run is refused, listing the known names. Two runs may not end up with one
    name."""
    used: set[str] = set()
    out = []
    for r in runs:
        key = r.run_id if r.run_id in labels else (r.name if r.name in labels else None)
        if key is None:
            out.append(r)
            continue
        used.add(key)
        out.append(dataclasses.replace(r, name=labels[key]))
    unknown = [k for k in labels if k not in used]
    if strict and unknown:
        known = list(dict.fromkeys([r.name for r in runs] + [r.run_id for r in runs]))
        raise param_error(
            "labels",
            func,
            "keys that are the names or ids of the compared runs",
            f"{unknown[0]!r} (it names no run)",
            _known_text(known, unknown[0]),
            got_is_text=True,
        )
    names = [r.name for r in out]
    dup = sorted(n for n in {labels[k] for k in used} if names.count(n) > 1)
    if dup:
        raise InputError(
            f"The 'labels' parameter of {func} gives two runs the display name "
            f"{dup[0]!r}; give each run its own."
        )
    return out, used
