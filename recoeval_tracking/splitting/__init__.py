"""Split strategies returning train/test (and validation) parts of the input's shape.

Strategies are small functions registered in :data:`SPLITS`; :func:`make_split` runs one by
name with plain arguments. :func:`split_reco_train_test` is a drop-in for recometrics' function
and :func:`cross_validate` runs a caller-supplied evaluation over folds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:  # the names as static tools see them
    from ._cv import cross_validate
    from ._leakage import LEAKAGE_PHASES, leakage_line, measure_leakage
    from ._recometrics import recometrics_split, split_reco_train_test
    from ._split import TEST, TRAIN, VALIDATION, Split, split_from_parts, union_of
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

#: Each module -> its public names, loaded on first use (the strategies bring in the
#: numba kernels of recometrics' split; ``Split`` alone does not).
_MODULES: dict[str, tuple[str, ...]] = {
    "._cv": ("cross_validate",),
    "._leakage": ("LEAKAGE_PHASES", "leakage_line", "measure_leakage"),
    "._recometrics": ("recometrics_split", "split_reco_train_test"),
    "._split": ("TEST", "TRAIN", "VALIDATION", "Split", "split_from_parts", "union_of"),
    "._strategies": (
        "SPLITS",
        "kfold",
        "leave_n_out",
        "leave_one_out",
        "make_split",
        "random_holdout",
        "temporal_global",
        "temporal_user",
        "user_kfold",
    ),
}

__getattr__, __dir__ = lazy_names(__name__, _MODULES)
__all__ = [name for names in _MODULES.values() for name in names]
