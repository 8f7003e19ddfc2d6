"""recoeval_tracking: full-catalog evaluation of implicit-feedback recommenders.

The public API is re-exported here; the modules behind it are private.
"""

from __future__ import annotations

__version__ = "0.1.0"

from ._validation import InputError
from .metrics import METRICS, Results, calc_reco_metrics, evaluate
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
    "evaluate",
    "calc_reco_metrics",
    "Results",
    "METRICS",
    "ScoreSource",
    "FactorScores",
    "BiasScores",
    "DenseScores",
    "CallableScores",
    "RankedLists",
]
