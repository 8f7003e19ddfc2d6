"""Split strategies returning train/test (and validation) parts of the input's shape.

Strategies are small functions registered in :data:`SPLITS`; :func:`make_split` runs one by
name with plain arguments. :func:`split_reco_train_test` is a drop-in for recometrics' function
and :func:`cross_validate` runs a caller-supplied evaluation over folds.
"""

from __future__ import annotations

from ._cv import cross_validate
from ._recometrics import recometrics_split, split_reco_train_test
from ._split import TEST, TRAIN, VALIDATION, Split, split_from_parts
from ._strategies import (
    SPLITS,
    kfold,
    leave_n_out,
    leave_one_out,
    make_split,
    random_holdout,
    temporal_global,
    temporal_user,
    user_kfold,
)

__all__ = [
    "Split",
    "SPLITS",
    "make_split",
    "random_holdout",
    "leave_one_out",
    "leave_n_out",
    "temporal_global",
    "temporal_user",
    "kfold",
    "user_kfold",
    "split_reco_train_test",
    "recometrics_split",
    "cross_validate",
    "split_from_parts",
    "TRAIN",
    "TEST",
    "VALIDATION",
]
