"""A launched job's outcome, read as the recoeval sweepers need it (``hydra/sweeper=recoeval``
and ``hydra/sweeper=optuna``)."""

from __future__ import annotations

import contextlib
import io
from typing import Any

__all__ = ["job_error"]


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
