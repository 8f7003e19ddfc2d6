"""Interactions data: the container, loaders, synthetic data and preparation steps.

Everything downstream (splits, evaluation, per-user tables) works on one container,
:class:`Interactions`: a users x items CSR matrix, optional timestamps with the same pattern, and
the maps between original ids and row/column indices, and the data's relevance rule
(:class:`Relevance`: which test entries are positives, and their gains).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as static tools see them
    from ._build import build_interactions, factorize_sorted
    from ._interactions import DUPLICATE_POLICIES, Interactions, PrepReport, gini
    from ._loaders import (
        DATASETS,
        from_dataframe,
        load_csv,
        load_dataset,
        load_movielens_1m,
        load_movielens_100k,
        load_movielens_latest,
        load_parquet,
    )
    from ._partitioned import (
        FactorRows,
        PartitionedDataset,
        PartitionedWriter,
        open_partitioned,
        write_partitioned,
    )
    from ._prepare import (
        IMPLICIT_METHODS,
        align,
        filter_min_interactions,
        k_core,
        to_implicit,
    )
    from ._relevance import EVERY_ENTRY, GAINS, RATINGS, Relevance
    from ._synthetic import make_synthetic

#: Public name -> the module it lives in: loaded on first use (the loaders pull in pandas and
#: the synthetic generator numba; ``Interactions`` alone does not need numba).
_LAZY: dict[str, str] = {
    "build_interactions": "._build",
    "factorize_sorted": "._build",
    "FactorRows": "._partitioned",
    "DUPLICATE_POLICIES": "._interactions",
    "Interactions": "._interactions",
    "PrepReport": "._interactions",
    "gini": "._interactions",
    "DATASETS": "._loaders",
    "from_dataframe": "._loaders",
    "load_csv": "._loaders",
    "load_dataset": "._loaders",
    "load_movielens_1m": "._loaders",
    "load_movielens_100k": "._loaders",
    "load_movielens_latest": "._loaders",
    "load_parquet": "._loaders",
    "PartitionedDataset": "._partitioned",
    "PartitionedWriter": "._partitioned",
    "open_partitioned": "._partitioned",
    "write_partitioned": "._partitioned",
    "IMPLICIT_METHODS": "._prepare",
    "align": "._prepare",
    "filter_min_interactions": "._prepare",
    "k_core": "._prepare",
    "to_implicit": "._prepare",
    "EVERY_ENTRY": "._relevance",
    "GAINS": "._relevance",
    "RATINGS": "._relevance",
    "Relevance": "._relevance",
    "make_synthetic": "._synthetic",
}

__all__ = [
    "Interactions",
    "PrepReport",
    "Relevance",
    "RATINGS",
    "EVERY_ENTRY",
    "GAINS",
    "DUPLICATE_POLICIES",
    "gini",
    "build_interactions",
    "factorize_sorted",
    "load_movielens_100k",
    "load_movielens_1m",
    "load_movielens_latest",
    "load_csv",
    "load_parquet",
    "from_dataframe",
    "make_synthetic",
    "write_partitioned",
    "open_partitioned",
    "PartitionedDataset",
    "PartitionedWriter",
    "FactorRows",
    "load_dataset",
    "DATASETS",
    "filter_min_interactions",
    "k_core",
    "to_implicit",
    "align",
    "IMPLICIT_METHODS",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
