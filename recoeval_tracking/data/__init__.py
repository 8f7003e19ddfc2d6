"""Interactions data: the container, loaders, synthetic data and preparation steps.

Everything downstream (splits, evaluation, per-user tables) works on one container,
:class:`Interactions`: a users x items CSR matrix, optional timestamps with the same pattern, and
the maps between original ids and row/column indices, and the data's relevance rule
(:class:`Relevance`: which test entries are positives, and their gains).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

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

#: Each module -> its public names, loaded on first use (the loaders pull in pandas and the
#: synthetic generator numba; ``Interactions`` alone does not need numba).
_MODULES: dict[str, tuple[str, ...]] = {
    "._build": ("build_interactions", "factorize_sorted"),
    "._partitioned": (
        "FactorRows",
        "PartitionedDataset",
        "PartitionedWriter",
        "open_partitioned",
        "write_partitioned",
    ),
    "._interactions": ("DUPLICATE_POLICIES", "Interactions", "PrepReport", "gini"),
    "._loaders": (
        "DATASETS",
        "from_dataframe",
        "load_csv",
        "load_dataset",
        "load_movielens_1m",
        "load_movielens_100k",
        "load_movielens_latest",
        "load_parquet",
    ),
    "._prepare": ("IMPLICIT_METHODS", "align", "filter_min_interactions", "k_core", "to_implicit"),
    "._relevance": ("EVERY_ENTRY", "GAINS", "RATINGS", "Relevance"),
    "._synthetic": ("make_synthetic",),
}

__getattr__, __dir__ = lazy_names(__name__, _MODULES)
__all__ = [name for names in _MODULES.values() for name in names]
