"""Records of a job's stages: the dataset and split record (``dataset.json``) and what the
run left out.

(The stage functions themselves, load, prepare, split and build, are in
:mod:`recoeval_tracking.app.pipeline`.)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["dataset_record", "log_left_out", "absolute_path"]

logger = logging.getLogger("recoeval_tracking.app.pipeline")


def absolute_path(path: Any, base_dir: Path | None) -> Any:
    """``path`` made absolute from ``base_dir`` when it is a relative path (str); else as is."""
    if isinstance(path, str) and path and base_dir is not None and not Path(path).is_absolute():
        return str((base_dir / path).resolve())
    return path


def dataset_record(X: Any, split: Any, dataset: Mapping[str, Any], base: Path
                    ) -> dict[str, Any]:
    """``dataset.json``: sizes, fingerprints of the data and the split, preparation steps, and
    the data's relevance rule (``relevance``: ``relevance_level``, ``gains``; a stored split's
    from its manifest)."""
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
    }
    if rule is not None:
        info["relevance"] = rule.record()
    if dataset.get("path"):
        info["source"] = absolute_path(dataset["path"], base)
    return info


def log_left_out(results: Any) -> None:
    """One warning naming the metrics the run could not compute and why (ranked top-K input
    has no score for the items outside the lists, so the whole-ranking metrics are left out;
    the reasons are also in ``definitions.json`` under ``left_out``)."""
    left = dict((getattr(results, "definitions", None) or {}).get("left_out") or {})
    by_reason: dict[str, list[str]] = {}
    for name, reason in left.items():
        by_reason.setdefault(str(reason), []).append(name)
    for reason, names in by_reason.items():
        logger.warning("left out %d metrics (%s): %s", len(names), reason,
                       ", ".join(sorted(names)))
