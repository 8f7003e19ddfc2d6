"""Runs that differ only by a seed are replicates: one row per group, spread between seeds.

:func:`aggregate_replicates` turns the runs of a sweep over ``seed`` (or any ``replicate_key``)
into one :class:`RunData` per group (``group_by`` params, default every swept param but the
replicate key) whose "users" are the replicates: each row holds a replicate's mean per metric.
The report's statistics then apply unchanged: a group's mean is the mean over replicates, its
intervals show the between-replicate spread (n = replicates), and comparisons against the
baseline group are paired by replicate (the same seed gives the same split to every group).

Within one replicate the runs must share their data and split (:func:`check_replicates`);
across replicates they may differ (a seed draws the split, and synthetic data too).

Which param makes replicates: :func:`guess_replicate_key` reads a swept ``seed`` as one;
:func:`detect_replicate_key` also the folds of a k-fold split (``split.fold``, any swept
``*.fold``), and only when the runs are not comparable as they are. Each group then gets the
@1..K curves and catalogue-level values of its runs (:func:`group_curves_and_catalogue`): the
mean over replicates at each k, with its Student-t interval over replicates.

Replicates that draw their own split share training data, so their paired tests need Nadeau &
Bengio's correction (:func:`~recoeval_tracking.stats.corrected_resampled_t`);
:func:`replicate_design` finds its ``n_test / n_train`` from the runs and each group carries it
(its tags :data:`DESIGN_TAGS`), so every comparison of the groups applies it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._validation import param_error
from ..stats import t_interval
from .comparability import check_comparable, check_replicates, swept_params
from .runs import RunData

__all__ = [
    "aggregate_replicates",
    "check_replicates",
    "guess_replicate_key",
    "default_group_by",
    "detect_replicate_key",
    "group_curves_and_catalogue",
    "ReplicateDesign",
    "replicate_design",
    "design_of",
    "DESIGN_TAGS",
]

#: The tags of a replicate group that carry its design: ``n_test / n_train`` and how it was found.
DESIGN_TAGS = ("recoeval.replicate_test_train_ratio", "recoeval.replicate_design")

#: ``n_test / n_train`` assumed when the runs record neither their sizes nor their design: the
#: package's default splits (5 folds: 1/4; a random holdout of 0.2: 0.2/0.8).
DEFAULT_RATIO = 0.25


@dataclass(frozen=True)
class ReplicateDesign:
    """What the paired tests over replicates need: ``ratio``, Nadeau-Bengio's ``n_test /
    n_train`` (0: no correction, the replicates share one split), and ``basis``, how it was
    found (for the page)."""

    ratio: float
    basis: str

    @property
    def text(self) -> str:
        """The correction in words."""
        if self.ratio == 0:
            return f"plain paired t ({self.basis})"
        return (
            f"Nadeau-Bengio corrected t, variance (1/J + n_test/n_train) s^2 with "
            f"n_test/n_train = {self.ratio:.3g} ({self.basis})"
        )


def replicate_design(runs: Sequence[RunData], replicate_key: str) -> ReplicateDesign:
    """Nadeau & Bengio's ``n_test / n_train`` for the replicates over ``replicate_key``.

    * Every run records its split and every replicate has the same one (only the model's seed
      changes): no correction (ratio 0), the plain paired t answers that question.
    * Else, from the runs' ``n_test`` and ``n_train`` columns: the mean over runs of
      ``sum(n_test) / sum(n_train)`` (a k-fold split gives ``1/(k-1)``, a random holdout of
      ``f`` gives ``f/(1-f)``);
    * else from the params: ``*.n_folds`` (``k``) for folds, ``*.test_fraction`` (``f``);
    * else :data:`DEFAULT_RATIO` (1/4, the package's default splits), said so.
    """
    splits = [r.fingerprints.get("split") for r in runs]
    if all(splits) and len(set(splits)) == 1 and len(runs) > 1:
        return ReplicateDesign(0.0, "every replicate on one split: only the model's seed changes")
    ratios = []
    for r in runs:
        cols = r.per_user.columns
        if "n_test" in cols and "n_train" in cols:
            n_train = float(np.nansum(r.per_user["n_train"].to_numpy(dtype=np.float64)))
            n_test = float(np.nansum(r.per_user["n_test"].to_numpy(dtype=np.float64)))
            if n_train > 0 and n_test > 0:
                ratios.append(n_test / n_train)
    if ratios and len(ratios) == len(runs):
        return ReplicateDesign(float(np.mean(ratios)), "the replicates' test and training entries")
    params = _first_params(runs, ("n_folds", "test_fraction"))
    fold = replicate_key.rsplit(".", 1)[-1] == "fold"
    if fold and "n_folds" in params and float(params["n_folds"]) >= 2:
        k = float(params["n_folds"])
        return ReplicateDesign(1.0 / (k - 1.0), f"{k:g} folds: 1/(k-1)")
    if "test_fraction" in params and 0 < float(params["test_fraction"]) < 1:
        f = float(params["test_fraction"])
        return ReplicateDesign(f / (1.0 - f), f"test fraction {f:g}: f/(1-f)")
    return ReplicateDesign(
        DEFAULT_RATIO,
        "assumed: the runs record neither their test and training sizes nor their design; "
        "1/4 is 5 folds or a test fraction of 0.2, the package's default splits",
    )


def _first_params(runs: Sequence[RunData], leaves: Sequence[str]) -> dict[str, Any]:
    """The value of a param whose last part is one of ``leaves``, when every run that has it
    agrees on it (``{leaf: value}``)."""
    out: dict[str, Any] = {}
    for leaf in leaves:
        values = {
            str(v)
            for r in runs
            for k, v in r.params.items()
            if k.rsplit(".", 1)[-1] == leaf and v is not None and str(v) != "None"
        }
        if len(values) == 1:
            try:
                out[leaf] = float(values.pop())
            except ValueError:
                pass
    return out


def design_of(runs: Sequence[RunData]) -> ReplicateDesign | None:
    """The design the replicate groups carry (:func:`aggregate_replicates`), or None for runs
    that are no replicate groups."""
    tags: Mapping[str, str] = runs[0].tags if runs else {}
    if DESIGN_TAGS[0] not in tags:
        return None
    return ReplicateDesign(float(tags[DESIGN_TAGS[0]]), str(tags.get(DESIGN_TAGS[1], "")))


def guess_replicate_key(runs: Sequence[RunData]) -> str | None:
    """``seed`` (or a swept ``*.seed``) when the runs' data or split fingerprints differ and
    such a param is swept: a sweep over seeds is read as replicates. None otherwise."""
    if not check_comparable(runs):
        return None
    seeds = [k for k in swept_params(runs) if k == "seed" or k.endswith(".seed")]
    return min(seeds, key=lambda k: (k.count("."), k)) if seeds else None


def default_group_by(runs: Sequence[RunData], replicate_key: str) -> list[str]:
    """Every swept param but the replicate key and those that follow it (``split.seed`` set
    from ``seed`` by interpolation: equal to it wherever set)."""

    def follows(k: str) -> bool:
        return all(str(r.params.get(k)) in ("None", str(r.params.get(replicate_key))) for r in runs)

    return [k for k in swept_params(runs) if k != replicate_key and not follows(k)]


def _group_name(key: tuple[str, ...], group_by: list[str], shown: set[str]) -> str:
    """The group's name from the ``shown`` keys of ``group_by``: the model and what varies
    among the runs of one model (``als f=16``), not every setting one model has and another
    lacks."""
    if not group_by:
        return "all runs"
    return (
        " ".join(
            v if k == "model.name" else f"{k.rsplit('.', 1)[-1]}={v}"
            for k, v in zip(group_by, key)
            if v != "None" and k in shown
        )
        or "all runs"
    )


def _shown_keys(runs: Sequence[RunData], keys: list[str]) -> set[str]:
    """``model.name`` and the keys of ``keys`` with two or more values among one model's runs
    (all of ``keys`` when no run names its model)."""
    if not any("model.name" in r.params for r in runs):
        return set(keys)
    shown = {"model.name"}
    for k in keys:
        per_model: dict[str, set[str]] = {}
        for r in runs:
            per_model.setdefault(str(r.params.get("model.name")), set()).add(str(r.params.get(k)))
        if any(len(v) > 1 for v in per_model.values()):
            shown.add(k)
    return shown


def aggregate_replicates(
    runs: Sequence[RunData],
    replicate_key: str,
    group_by: Sequence[str] | None = None,
    func: str = "build_report",
) -> list[RunData]:
    """One run per group whose rows are the replicates (``user_id`` = the replicate's value of
    ``replicate_key``) and whose metric columns are each replicate's mean over its users; each
    group's tags carry the replicates' design (:func:`replicate_design`, :func:`design_of`)."""
    if any(replicate_key not in r.params for r in runs):
        lacking = [r.name for r in runs if replicate_key not in r.params]
        raise param_error(
            "replicate_key",
            func,
            "a param every run has",
            replicate_key,
            f"Runs without it: {', '.join(lacking[:5])}.",
        )
    keys = list(group_by) if group_by else default_group_by(runs, replicate_key)
    groups: dict[tuple[str, ...], list[RunData]] = {}
    for r in runs:
        groups.setdefault(tuple(str(r.params.get(k)) for k in keys), []).append(r)
    shown = _shown_keys(runs, keys)
    design = replicate_design(runs, replicate_key)
    out = []
    for key, members in groups.items():
        reps = [str(r.params[replicate_key]) for r in members]
        if len(set(reps)) < len(reps):
            raise param_error(
                "group_by",
                func,
                f"keys that leave one run per group and {replicate_key}",
                keys,
                f"Group {key} has {replicate_key} "
                f"values {reps}; add the other swept keys to group_by.",
            )
        group = _group_run(members, reps, key, keys, shown)
        group.tags[DESIGN_TAGS[0]] = repr(design.ratio)
        group.tags[DESIGN_TAGS[1]] = design.basis
        out.append(group)
    return out


def _group_run(
    members: list[RunData], reps: list[str], key: tuple[str, ...], keys: list[str], shown: set[str]
) -> RunData:
    rows: list[dict[str, Any]] = []
    for r, rep in zip(members, reps):
        row: dict[str, Any] = {"user_id": rep}
        for c in r.per_user.columns:
            if (
                c != "user_id"
                and pd.api.types.is_numeric_dtype(r.per_user[c])
                and c not in ("n_train", "n_test", "n_tied_topk")
            ):
                v = r.per_user[c].to_numpy(dtype=np.float64)
                row[c] = float(np.nanmean(v)) if np.any(~np.isnan(v)) else np.nan
        rows.append(row)
    first = members[0]
    params = {k: v for k, v in zip(keys, key)}
    fps = {m: first.metric_fingerprint(m) for m in first.per_user.columns}
    name = _group_name(key, keys, shown)
    return RunData(
        run_id="group:" + (",".join(f"{k}={v}" for k, v in params.items()) or "all"),
        name=name,
        per_user=pd.DataFrame(rows),
        params=params,
        fingerprints={},
        tags=dict(first.tags),
        source=", ".join(r.source for r in members),
        metric_fingerprints={k: v for k, v in fps.items() if v},
    )


def detect_replicate_key(runs: Sequence[RunData]) -> str | None:
    """The param whose values are replicates of one experiment, or None.

    A sweep over seeds (:func:`~recoeval_tracking.reporting.replicates.guess_replicate_key`)
    or over the folds of a k-fold split (``split.fold``, any swept ``*.fold``): each value
    draws another split of the same data, so the runs differ in their split fingerprint while
    the runs of one value share theirs. Nothing is detected when the runs are comparable as
    they are, or when the runs of one value do not share their data and split."""
    runs = list(runs)
    if not check_comparable(runs):
        return None
    key = guess_replicate_key(runs)
    if key and not check_replicates(runs, key):
        return key
    # a swept seed that only tells models apart (model.seed: None for one model, 0 for
    # another) is no replicate: the runs of one of its values must share their split
    keys = [k for k in swept_params(runs) if k.rsplit(".", 1)[-1] in ("seed", "fold")]
    for k in sorted(keys, key=lambda k: (k.count("."), k)):
        if not check_replicates(runs, k):
            return k
    return None


def group_curves_and_catalogue(groups: list[RunData], runs: list[RunData]) -> None:
    """Give each replicate group the @1..K curves and catalogue-level metrics of its runs: the
    mean over replicates at each k with its Student-t 95% interval over replicates (n =
    replicates, like the tables), and the mean of each logged value."""
    for g in groups:
        members = [
            r for r in runs if all(str(r.params.get(k)) == str(v) for k, v in g.params.items())
        ]
        if not members:
            continue
        logged: dict[str, list[float]] = {}
        for r in members:
            for k, v in r.metrics.items():
                if v is not None and math.isfinite(float(v)):
                    logged.setdefault(k, []).append(float(v))
        g.metrics = {k: float(np.mean(v)) for k, v in logged.items() if len(v) == len(members)}
        curves = [r.curves for r in members if r.curves is not None and len(r.curves)]
        if len(curves) != len(members):
            continue
        names = [
            c
            for c in curves[0].columns
            if c != "k"
            and not c.endswith(("_ci95_low", "_ci95_high"))
            and all(c in other.columns for other in curves)
        ]
        ks = curves[0]["k"].to_numpy()
        if not names or any(
            len(c) != len(ks) or not np.array_equal(c["k"].to_numpy(), ks) for c in curves
        ):
            continue
        out = {"k": ks}
        for name in names:
            stack = np.column_stack([c[name].to_numpy(dtype=np.float64) for c in curves])
            cols = [t_interval(row) for row in stack]
            out[name] = np.array([c[0] for c in cols])
            out[f"{name}_ci95_low"] = np.array([c[1] for c in cols])
            out[f"{name}_ci95_high"] = np.array([c[2] for c in cols])
        g.curves = pd.DataFrame(out)
