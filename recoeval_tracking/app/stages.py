"""A job's stages as the terminal sees them (:func:`timed_stage`: a line when a stage starts,
its seconds when it ends), and their records: the dataset and split record (``dataset.json``)
and what the run left out.

(The stage functions themselves, load, prepare, split and build, are in
:mod:`recoeval_tracking.app.pipeline`.)
"""

from __future__ import annotations

import atexit
import gc
import logging
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from .._heartbeat import heartbeat

__all__ = [
    "dataset_record",
    "log_left_out",
    "absolute_path",
    "timed_stage",
    "STAGE_VERBS",
    "prep_steps",
    "quick_exit",
]

logger = logging.getLogger("recoeval_tracking.app.pipeline")

#: What the line at a stage's start says it is doing.
STAGE_VERBS = {"load": "loading", "prepare": "preparing", "split": "splitting", "fit": "fitting"}


def prep_steps(dataset: Mapping[str, Any]) -> list[str]:
    """The preparation steps a ``dataset`` config section asks for, by key (none: the
    ``prepare`` stage has nothing to do and says nothing)."""
    conv = dataset.get("implicit")
    steps = (
        ["implicit"]
        if isinstance(conv, Mapping)
        and (conv.get("method") is not None or conv.get("threshold") is not None)
        else []
    )
    return steps + [
        k for k in ("min_user_interactions", "min_item_interactions", "k_core") if dataset.get(k)
    ]


@contextmanager
def timed_stage(
    timings: dict[str, float], stage: str, what: Any = None, *, quiet: bool = False
) -> Iterator[None]:
    """Run a stage: log ``"<verb> <what> ..."`` when it starts (a stage can take tens of
    seconds, compiling included, and a silent terminal looks like a hang) and store its seconds
    in ``timings[stage]`` when it ends, failed or not.

    Parameters
    ----------
    timings : dict
        Seconds per stage, updated in place.
    stage : str
        A key of :data:`STAGE_VERBS` (another name is logged as is).
    what : object, optional
        What the stage works on (the dataset's name, the split's strategy, the model), shown
        after the verb.
    quiet : bool
        No line at the start (a stage with nothing to do, as preparation without steps).
    """
    verb = STAGE_VERBS.get(stage, stage)
    if not quiet:
        logger.info("%s %s...", verb, what) if what not in (None, "") else logger.info(
            "%s...", verb
        )
    t0 = time.perf_counter()
    try:
        with heartbeat(verb, logger.info) if not quiet else nullcontext():
            yield
    finally:
        timings[stage] = time.perf_counter() - t0


def absolute_path(path: Any, base_dir: Path | None) -> Any:
    """``path`` made absolute from ``base_dir`` when it is a relative path (str); else as is."""
    if isinstance(path, str) and path and base_dir is not None and not Path(path).is_absolute():
        return str((base_dir / path).resolve())
    return path


def dataset_record(X: Any, split: Any, dataset: Mapping[str, Any], base: Path) -> dict[str, Any]:
    """``dataset.json``: sizes, fingerprints of the data and the split, preparation steps, the
    data's relevance rule (``relevance``: ``relevance_level``, ``gains``; a stored split's from
    its manifest) and ``leakage``: how much the split lets training see the future
    (:func:`~recoeval_tracking.splitting.measure_leakage`; None when the data have no
    timestamps, or the split is a stored one read by reference)."""
    from ..splitting import Split, measure_leakage

    stats = X.stats()
    rule = getattr(X, "relevance", None) or getattr(getattr(X, "ds", None), "relevance", None)
    info: dict[str, Any] = {
        "name": dataset.get("name") or X.name or dataset.get("kind"),
        "kind": dataset.get("kind"),
        **{k: v for k, v in stats.items() if k != "fingerprint"},
        "data_fingerprint": stats["fingerprint"],
        "split_fingerprint": split.fingerprint,
        "split": split.summary(),
        "train_interactions": split.train.nnz,
        "test_interactions": split.test.nnz,
        "preparation": [str(r) for r in X.reports],
        "leakage": measure_leakage(split) if isinstance(split, Split) else None,
    }
    if rule is not None:
        info["relevance"] = rule.record()
    if dataset.get("path"):
        info["source"] = absolute_path(dataset["path"], base)
    return info


def log_left_out(results: Any) -> None:
    """One warning naming the metrics the run could not compute and why (ranked top-K input
    has no score for the items outside the lists, so the whole-ranking metrics are left out;
    the reasons are also in ``definitions.json`` under ``left_out``). ILS and diversity of a
    model without item vectors are no fault of the run: the summary's last line names them."""
    from ..metrics.protocol import VECTORS_REASON
    from ..metrics.results import left_out_by_reason

    grouped = left_out_by_reason(getattr(results, "definitions", None) or {})
    for reason, names in grouped.items():
        if reason != VECTORS_REASON:  # a property of the model, not a fault: the summary says it
            logger.warning("left out %d metrics (%s): %s", len(names), reason, ", ".join(names))


def quick_exit() -> None:
    """Make the interpreter's exit skip its garbage collections over the loaded modules: a
    command that has loaded MLflow, pandas, numba, matplotlib and Hydra spends 1.4 s after its
    last line in them (a 2-core AMD EPYC), for nothing a finished command needs. At exit,
    after every handler registered later (``atexit`` runs the last registered first),
    :func:`gc.freeze` moves every object out of the collector's reach; objects are still
    released by their reference counts, files closed and logs flushed as before. Registered
    once per process by the console entry points."""
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
