"""The protocol of a fair study, as one job sees it: which part it evaluates, and the one line
every surface prints about how a study's winner was chosen.

A job whose split has a validation part fits on train and is evaluated on validation (every
item not in train ranked); then, unless it is a sweep's *selection* job, a new model of the
same config refits on train + validation (``refit=false``: the first fit is kept) and is
evaluated once on test (every item not in train or validation ranked). The job's top-level
``phase`` says which:

``auto`` (default)
    Validation then test when the split has a validation part; test only otherwise.
``selection``
    Validation only: the job of one configuration among those a sweep chooses from. Its
    metrics are all named ``val_<metric>``; it has no test number.
``test``
    As ``auto``; set by a sweep on the job of the configuration it chose.

The sweep (``hydra/sweeper=recoeval`` and ``hydra/sweeper=optuna``) owns the phases: see
:func:`protocol_line` for what it says of them. Design: "A fair study" in ``DESIGN.md``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._validation import InputError, param_error

__all__ = [
    "PHASES",
    "SEARCH_SPACE",
    "Protocol",
    "Applied",
    "Validated",
    "read_protocol",
    "check_validation_users",
    "protocol_line",
    "has_validation_setting",
]

logger = logging.getLogger(__name__)

#: The key of a model config naming what a sweep tunes it over (never passed to the model).
SEARCH_SPACE = "search_space"
#: Accepted values of the top-level ``phase`` setting.
PHASES = ("auto", "selection", "test")
#: Split settings that make a validation part (a non-null, non-zero, non-false value).
VALIDATION_SETTINGS = (
    "validation_fraction",
    "validation_count",
    "validation_n",
    "validation",
    "validation_cut",
    "validation_quantile",
)


def has_validation_setting(split: Mapping[str, Any]) -> bool:
    """Whether a ``split`` config section asks for a validation part (any of
    :data:`VALIDATION_SETTINGS` set to a value other than null, 0 or false)."""
    return any(split.get(key) not in (None, 0, False) for key in VALIDATION_SETTINGS)


@dataclass(frozen=True)
class Protocol:
    """The job's ``phase`` and ``refit`` settings, checked."""

    phase: str = "auto"
    refit: bool = True

    def check_split(self, split: Any) -> None:
        """Refuse ``phase=selection`` on a split without a validation part, and a validation
        part the split strategy left empty."""
        validation = getattr(split, "validation", None)  # a stored split has none
        if validation is not None and validation.nnz == 0:
            raise InputError(
                f"The split's validation part is empty ({split!r}): no entry is left to "
                "evaluate on. Raise the validation setting (split.validation_fraction, "
                "split.validation_n...) or lower split.min_train."
            )
        if self.phase == "selection" and not getattr(split, "has_validation", False):
            raise InputError(
                "phase=selection evaluates a configuration on the split's validation part, "
                f"and this split has none ({split!r}). Give the split one "
                "(split.validation_fraction=0.1, split.validation_n=1...) or drop phase."
            )

    def applied(self, split: Any, validation: Validated | None, can_refit: bool) -> Applied:
        """What the job did: the part its main results were evaluated on, and its record."""
        part = "validation" if validation is not None and self.phase == "selection" else "test"
        # a stored split read by reference has no phases: its own fingerprint
        evaluated = split.fingerprint if validation is None else split.part_fingerprint(part)
        return Applied(
            part=part,
            phase=self.phase if validation is not None else "auto",
            validation=validation is not None,
            refit=bool(self.refit and can_refit and validation is not None and part == "test"),
            split_fingerprint=split.fingerprint,
            evaluated_fingerprint=evaluated,
        )


@dataclass(frozen=True)
class Applied:
    """The protocol a job ran (see :meth:`Protocol.applied`)."""

    part: str
    phase: str
    validation: bool
    refit: bool
    split_fingerprint: str
    evaluated_fingerprint: str

    def record(self) -> dict[str, Any]:
        """Entries of ``dataset.json``: ``split_fingerprint`` becomes the fingerprint of what
        was evaluated (the part and what the ranking excluded), so runs evaluated on
        validation and on test are never paired; ``protocol`` holds the rest."""
        return {
            "split_fingerprint": self.evaluated_fingerprint,
            "protocol": {
                "evaluated_on": self.part,
                "phase": self.phase,
                "validation": self.validation,
                "refit": self.refit,
                "split_fingerprint": self.split_fingerprint,
            },
        }


@dataclass
class Validated:
    """A job's evaluation on the validation part: its results, and what ``metrics.json``
    holds of it (``val_<metric>``, ``val_users_without_validation``)."""

    results: Any
    extra: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from ..jobdir.io import validation_metrics

        self.extra = {**validation_metrics(self.results), **self.extra}


def read_protocol(cfg: Mapping[str, Any]) -> Protocol:
    """The top-level ``phase`` and ``refit`` settings of a job config, checked."""
    phase = cfg.get("phase", "auto")
    phase = "auto" if phase is None else phase
    if phase not in PHASES:
        raise param_error("phase", "run_job", f"one of {list(PHASES)}", phase)
    refit = cfg.get("refit", True)
    refit = True if refit is None else refit
    if not isinstance(refit, bool):
        raise param_error("refit", "run_job", "true or false", refit)
    return Protocol(phase=str(phase), refit=refit)


def check_validation_users(split: Any, shown: int = 5) -> int:
    """Count (and name, in a warning) the test users without any validation entry: the
    selection never sees them. Returns the count; refuses a validation part no test user
    has."""
    import numpy as np

    val = split.validation.user_counts() > 0
    test = split.test.user_counts() > 0
    missing = np.flatnonzero(test & ~val)
    if not np.any(val):
        raise InputError(
            f"The split's validation part has no user to evaluate ({split!r}). Raise the "
            "validation setting (split.validation_fraction, split.validation_n...)."
        )
    if missing.size:
        ids = ", ".join(str(u) for u in split.test.user_ids[missing[:shown]])
        more = f" and {missing.size - shown} more" if missing.size > shown else ""
        logger.warning(
            "%d of %d test users have no validation entry (%s%s): the choice on validation "
            "does not see them; they are still evaluated on test.",
            missing.size,
            int(np.count_nonzero(test)),
            ids,
            more,
        )
    return int(missing.size)


def protocol_line(
    *,
    on_validation: bool,
    objective: str | None,
    configurations: Mapping[str, int],
    refit: bool = True,
    whole_space: Iterable[str] = (),
    failures: Mapping[str, tuple[int, int, int]] | None = None,
) -> str:
    """How a study's reported configurations were chosen, in one line.

    ``configurations`` gives the number of configurations (or trials) each system was chosen
    among; ``whole_space`` names the systems that ran their whole search space, smaller than
    the others' budget. With a validation part: ``"chosen on validation by val NDCG@10 among
    3 configurations per system, tested once (refit on train + validation)"``; without one:
    ``"chosen on the test split (optimistic: the best of 4 configurations per system on the
    data it is reported on)"``. Unequal budgets are named system by system. ``failures``
    (system -> its failed selection jobs, its selection jobs, its failed test jobs) adds what
    the failed jobs took away: ``"; failed jobs: cosine 2 of 6 configurations on validation
    (not chosen from)"``, ``"mine's tested one (no test number)"``.
    """
    return _chosen_line(
        on_validation, objective, configurations, refit, set(whole_space)
    ) + _failures_text(failures or {})


def _failures_text(failures: Mapping[str, tuple[int, int, int]]) -> str:
    parts = []
    for name, (failed, jobs, test_failed) in failures.items():
        if failed:
            parts.append(
                f"{name} {failed} of {jobs} configuration{'s' if jobs != 1 else ''} on "
                "validation (not chosen from)"
            )
        if test_failed:
            many = f" {test_failed} tested configurations" if test_failed > 1 else "'s tested one"
            parts.append(f"{name}{many} (no test number)")
    return "; failed jobs: " + ", ".join(parts) if parts else ""


def _chosen_line(
    on_validation: bool,
    objective: str | None,
    configurations: Mapping[str, int],
    refit: bool,
    whole: set[str],
) -> str:
    counts = sorted(set(int(n) for n in configurations.values()))
    if len(counts) == 1:
        n = counts[0]
        among = f"{n} configuration{'s' if n != 1 else ''} per system"
    else:
        among = (
            f"up to {counts[-1]} configurations per system ("
            + ", ".join(
                f"{name} {n}" + (": its whole search space" if name in whole else "")
                for name, n in configurations.items()
            )
            + ")"
        )
    metric = _label(objective)
    if on_validation:
        refit_text = "refit on train + validation" if refit else "no refit"
        return f"chosen on validation by val {metric} among {among}, tested once ({refit_text})"
    if max(counts, default=1) <= 1:
        return (
            "one configuration per system, evaluated on test (no validation part; nothing "
            "was chosen)"
        )
    return (
        f"chosen on the test split (optimistic: the best of {among} on the data it is reported on)"
    )


def _label(metric: str | None) -> str:
    """``ndcg_at_10`` -> ``NDCG@10`` (as the report writes metrics)."""
    if not metric:
        return "the objective"
    fam, sep, cut = str(metric).rpartition("_at_")
    return f"{fam.upper()}@{cut}" if sep and cut.isdigit() else str(metric)
