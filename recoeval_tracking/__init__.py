"""recoeval_tracking: full-catalog evaluation of implicit-feedback recommenders.

The public API is re-exported here; the modules behind it are private.
"""

from __future__ import annotations

__version__ = "0.1.0"

from ._validation import InputError
from .scores import (
    BiasScores,
    CallableScores,
    DenseScores,
    FactorScores,
    RankedLists,
    ScoreSource,
)

__all__ = [
    "__version__",
    "InputError",
    "ScoreSource",
    "FactorScores",
    "BiasScores",
    "DenseScores",
    "CallableScores",
    "RankedLists",
]
