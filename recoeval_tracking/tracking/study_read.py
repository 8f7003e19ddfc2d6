"""A sweep's study record read back from MLflow: how its tested configurations were chosen.

A sweep's parent run holds the study's record as tags (written by
:func:`~recoeval_tracking.tracking.sweeps.study_tags`): ``recoeval.protocol`` (the one line),
``recoeval.budget.<system>`` and ``recoeval.equal_budgets``. :func:`sweep_study` reads them
back for the runs of one sweep, so that the report command and ``rt.compare`` given MLflow run
ids state the protocol the sweep ran rather than guessing it from the runs' folders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .client import _TAG_PREFIX
from .search import search_runs_for_report

__all__ = ["sweep_study"]

_BUDGET = _TAG_PREFIX + "budget."


def sweep_study(
    found: Sequence[Mapping[str, Any]], *, tracking_uri: str | None = None
) -> dict[str, Any] | None:
    """The study record of the sweep that ``found`` belongs to, from its parent run's tags.

    Parameters
    ----------
    found : list of dict
        Runs as :func:`~recoeval_tracking.tracking.search.search_runs_for_report` returns them
        (their ``tags`` name their sweep: ``recoeval.sweep_id``).
    tracking_uri : str, optional
        The store the runs were read from.

    Returns
    -------
    dict or None
        ``protocol`` (the parent's one line), ``budgets`` (system -> its budget text) and
        ``equal_budgets``; None when the runs are not all of one sweep, when its parent records
        no protocol (a sweep logged before fair studies), or when the parent cannot be read
        (the protocol is then read from the runs' own folders).
    """
    sweeps = {(info.get("tags") or {}).get(_TAG_PREFIX + "sweep_id") for info in found}
    if len(sweeps) != 1 or None in sweeps:
        return None
    try:
        parents = search_runs_for_report(
            tracking_uri=tracking_uri, sweep_id=str(sweeps.pop()), include_parents=True
        )
    except Exception:  # noqa: BLE001 - the protocol line is read from the runs then
        return None
    for info in parents:
        tags = info.get("tags") or {}
        if tags.get(_TAG_PREFIX + "sweep_parent") == "true" and tags.get(_TAG_PREFIX + "protocol"):
            return {
                "protocol": tags[_TAG_PREFIX + "protocol"],
                "budgets": {k[len(_BUDGET) :]: v for k, v in tags.items() if k.startswith(_BUDGET)},
                "equal_budgets": tags.get(_TAG_PREFIX + "equal_budgets", "true") == "true",
            }
    return None
