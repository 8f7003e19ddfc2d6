"""The job's stages for ``dataset=parquet_partitioned``: a split stored by user
(:func:`recoeval_tracking.data.write_partitioned`), never loaded whole when it need not be.

* ``backend=dask`` with a ``factors_file`` model given as ``.npy`` or ``.parquet`` files
  (``model.user_factors`` rows in the dataset's user order, ``model.item_factors``): the
  evaluation reads the users by reference
  (:func:`recoeval_tracking.distributed.evaluate_from_storage`): this process opens the
  dataset's manifest and item side and reads the item factors; each worker reads its own parts
  and rows of the user factors, and writes its part of ``per_user.parquet`` into the job folder
  (which must be on a file system every worker can write). Nothing user-sized is held here.
* otherwise (``backend=cpu``, or a model that must be fitted on the train matrix) the stored
  split is loaded whole (:meth:`~recoeval_tracking.data.PartitionedDataset.load`), the model
  fitted on its train part, and the evaluation runs as for any dataset.

The stored split is the split: the ``split`` section is not applied (``dataset.json`` records
``strategy: stored``), and the preparation keys of the ``dataset`` section are refused (prepare
the data before writing it).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import InputError
from ..options import EvalOptions

__all__ = ["KIND", "run_stored_stages"]

logger = logging.getLogger(__name__)

#: The dataset kind read by this module.
KIND = "parquet_partitioned"
_PREP_DEFAULTS = {"min_user_interactions": 0, "min_item_interactions": 0, "k_core": 0}


class StoredData:
    """What the job records of a stored dataset, from its manifest (``dataset.json``)."""

    def __init__(self, ds: Any) -> None:
        self.ds = ds
        self.name = ds.name
        self.reports: list[Any] = []
        self.n_users, self.n_items = ds.n_users, ds.n_items
        self.nnz = ds.stats()["interactions"]

    def stats(self) -> dict[str, Any]:
        return {**self.ds.stats(), "has_timestamps": False}


class _Count:
    def __init__(self, nnz: int) -> None:
        self.nnz = int(nnz)


class StoredSplit:
    """The stored split as the job records it (sizes and fingerprint from the manifest)."""

    def __init__(self, ds: Any) -> None:
        m = ds.manifest
        self.fingerprint = str(m["fingerprint"])
        self.train, self.test = _Count(m["train_interactions"]), _Count(m["test_interactions"])
        self._summary = {
            "strategy": "stored",
            "params": {"path": ds.url},
            "fingerprint": self.fingerprint,
            "train_interactions": self.train.nnz,
            "test_interactions": self.test.nnz,
            "test_users": int(m.get("test_users", -1)),
        }

    def summary(self) -> dict[str, Any]:
        return dict(self._summary)

    def __repr__(self) -> str:
        return (
            f"Split('stored', train={self.train.nnz}, test={self.test.nnz}, "
            f"fingerprint={self.fingerprint!r})"
        )


def _check_section(dataset: dict[str, Any]) -> None:
    conv = dataset.get("implicit") or {}
    changed = [f"dataset.{k}" for k, v in _PREP_DEFAULTS.items() if (dataset.get(k) or 0) != v]
    changed += [
        f"dataset.implicit.{k}"
        for k in ("method", "threshold")
        if isinstance(conv, dict) and conv.get(k) is not None
    ]
    if changed:
        raise InputError(
            f"{', '.join(changed)} cannot be applied to dataset={KIND}: it is a "
            "stored split, read as written. Prepare the data before writing it "
            "(recoeval_tracking.data.write_partitioned), or leave these settings "
            "at their defaults."
        )


def _by_reference(model: Any, backend: dict[str, Any]) -> bool:
    from ..models._factors_file import FactorsFileModel

    return (
        backend["kind"] == "dask"
        and isinstance(model, FactorsFileModel)
        and model.user_factors is not None
        and model.item_factors is not None
    )


def run_stored_stages(
    dataset: dict[str, Any],
    model: Any,
    options: EvalOptions,
    backend: dict[str, Any],
    out: Path,
    base: Path,
    evaluate_split: Any,
) -> tuple[Any, Any, Any, dict[str, float]]:
    """Open (or load) the stored split, fit the model when it must be, and evaluate.

    ``evaluate_split(split, model)`` is the job's own ``eval`` stage, used when the split is
    loaded whole. Returns ``(data record, split, results, timings)``.
    """
    from ..data import open_partitioned
    from ..splitting import Split
    from .precheck import check_k_against_items
    from .stages import absolute_path

    _check_section(dataset)
    path = dataset.get("path")
    if not path:
        raise InputError(
            f"dataset.path must name the folder of the partitioned dataset "
            f"(dataset={KIND}); got {path!r}."
        )
    url = str(path) if "://" in str(path) else absolute_path(path, base)
    timings: dict[str, float] = {}
    t = time.perf_counter()
    ds = open_partitioned(url)
    timings["load"] = time.perf_counter() - t
    check_k_against_items(options.k, ds.n_items)
    logger.info(
        "data: %s (%d users x %d items, %d parts, stored split)",
        ds.name or url,
        ds.n_users,
        ds.n_items,
        len(ds.parts),
    )
    if _by_reference(model, backend):
        from ..distributed import cluster_client, evaluate_from_storage
        from ..jobdir import FILES

        with cluster_client(
            backend.get("address"),
            n_workers=backend.get("n_workers", 2),
            threads_per_worker=backend.get("threads_per_worker", 1),
            timeout=float(backend.get("timeout", 30.0)),
        ) as client:
            results = evaluate_from_storage(
                client,
                ds,
                options,
                user_factors=model.user_factors,
                item_factors=model.item_factors,
                item_biases=model.item_biases,
                shards=backend.get("shards"),
                per_user_dir=out / FILES["per_user"],
                func=f"dataset={KIND}",
            )
        timings["eval"] = float(results.timings.get("eval", 0.0))
        return StoredData(ds), StoredSplit(ds), results, timings
    if backend["kind"] == "dask":
        logger.info(
            "dataset=%s: the model %s is not a factors_file model of factor files, so "
            "the stored split is loaded whole in this process",
            KIND,
            model.name,
        )
    t = time.perf_counter()
    train, test = ds.load()
    timings["load"] += time.perf_counter() - t
    per_user = pd.DataFrame(
        {"user_id": train.user_ids, "n_train": train.user_counts(), "n_test": test.user_counts()}
    )
    split = Split(
        train=train,
        test=test,
        validation=None,
        strategy="stored",
        params={"path": url},
        fingerprint=str(ds.manifest["fingerprint"]),
        per_user=per_user,
        details={
            "users_without_test": int(np.sum((per_user["n_test"] == 0) & (per_user["n_train"] > 0)))
        },
    )
    t = time.perf_counter()
    model.fit(train.matrix, user_ids=train.user_ids, item_ids=train.item_ids)
    timings["fit"] = time.perf_counter() - t
    results = evaluate_split(split, model)
    timings["eval"] = float(results.timings.get("eval", 0.0))
    return StoredData(ds), split, results, timings
