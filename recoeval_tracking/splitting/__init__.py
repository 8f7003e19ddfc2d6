"""Split strategies returning train/test (and validation) parts of the input's shape.

Strategies are small functions registered in :data:`SPLITS`; :func:`make_split` runs one by
name with plain arguments. :func:`split_reco_train_test` is a drop-in for recometrics' function
and :func:`cross_validate` runs a caller-supplied evaluation over folds.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

#: Public name -> the module it lives in: loaded on first use (the strategies bring in the
#: numba kernels of recometrics' split; ``Split`` alone does not).
_LAZY: dict[str, str] = {
    "cross_validate": "._cv",
    "LEAKAGE_PHASES": "._leakage",
    "leakage_line": "._leakage",
    "measure_leakage": "._leakage",
    "recometrics_split": "._recometrics",
    "split_reco_train_test": "._recometrics",
    "TEST": "._split",
    "TRAIN": "._split",
    "VALIDATION": "._split",
    "Split": "._split",
    "split_from_parts": "._split",
    "union_of": "._split",
    "SPLITS": "._strategies",
    "kfold": "._strategies",
    "leave_n_out": "._strategies",
    "leave_one_out": "._strategies",
    "make_split": "._strategies",
    "random_holdout": "._strategies",
    "temporal_global": "._strategies",
    "temporal_user": "._strategies",
    "user_kfold": "._strategies",
}

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
    "measure_leakage",
    "leakage_line",
    "LEAKAGE_PHASES",
    "split_from_parts",
    "union_of",
    "TRAIN",
    "TEST",
    "VALIDATION",
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
