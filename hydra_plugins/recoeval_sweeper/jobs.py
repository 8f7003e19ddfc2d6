"""A launched job's outcome, read as the recoeval sweepers need it (``hydra/sweeper=recoeval``
and ``hydra/sweeper=optuna``)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["job_error", "raise_failures"]


def job_error(result: Any) -> BaseException | None:
    """The error a launched job failed with, or None when it completed.

    Read without Hydra's ``JobReturn.return_value``, which writes ``Error executing job with
    overrides: [...]`` to standard error before raising: the job has already said why it
    failed, in its own words (``recoeval-track: job #N of the sweep failed: ...``)."""
    from hydra.core.utils import JobStatus

    if result.status == JobStatus.COMPLETED:
        return None
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            _ = result.return_value  # raises the job's error
        except BaseException as err:  # noqa: BLE001 - the job's own error, handed back
            return err
    return None


def raise_failures(
    returns: Any,
    after: str | None = None,
    errors: Mapping[int, BaseException | None] | None = None,
    sweep_dir: str | Path | None = None,
) -> None:
    """Raise :class:`~recoeval_tracking.app.errors.SweepJobsFailed` naming every launched job
    that failed (each has said why), caused by the first one's error; nothing when none did.
    ``returns`` is the launcher's batches of results, in launch order; ``after`` says what the
    sweep did then (default: the other jobs ran); ``errors``: the :func:`job_error` of results
    the sweeper has already read, by ``id(result)`` (each job's error is read once). With
    ``sweep_dir``, the sweep's record says first how many jobs ran and which failed
    (:func:`~recoeval_tracking.tracking.sweeps.note_sweep_outcome`): the parent run then
    closes as a sweep that finished, its failed jobs named."""
    from recoeval_tracking.app.errors import SweepJobsFailed
    from recoeval_tracking.tracking.sweeps import note_sweep_outcome

    known = errors or {}
    results = [r for batch in returns for r in batch]
    overrides = [[str(o) for o in (getattr(r, "overrides", None) or [])] for r in results]
    common = set.intersection(*map(set, overrides)) if len(overrides) > 1 else set()
    failures = []
    for i, r in enumerate(results):
        error = known[id(r)] if id(r) in known else job_error(r)
        if error is not None:  # named by what sets it apart from the sweep's other jobs
            own = [o for o in overrides[i] if o not in common]
            failures.append((_job_num(r, i), own, error))
    if sweep_dir is not None:
        named = [f"#{num} ({' '.join(own)})" if own else f"#{num}" for num, own, _ in failures]
        note_sweep_outcome(sweep_dir, len(results), named, after)
    if failures:
        extra = {"after": after} if after else {}
        raise SweepJobsFailed(failures, len(results), **extra) from failures[0][2]


def _job_num(result: Any, index: int) -> Any:
    """The job's number in the sweep (``hydra.job.num``, the number it said it failed under),
    else its place among the results."""
    try:
        return result.hydra_cfg.hydra.job.num
    except Exception:  # noqa: BLE001 - a result without Hydra's config
        return index
