"""Interactions data: the container, loaders, synthetic data and preparation steps.

Everything downstream (splits, evaluation, per-user tables) works on one container,
:class:`Interactions`: a users x items CSR matrix, optional timestamps with the same pattern, and
the maps between original ids and row/column indices, and the data's relevance rule
(:class:`Relevance`: which test entries are positives, and their gains).
"""

from __future__ import annotations

from ._build import build_interactions, factorize_sorted
from ._factor_rows import FactorRows
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
