"""recoeval_tracking: full-catalog evaluation of implicit-feedback recommenders.

The public API is re-exported here; the modules behind it are private.
"""

from __future__ import annotations

__version__ = "0.1.0"

from ._validation import InputError
from .data import Interactions, from_dataframe, load_dataset, make_synthetic
from .metrics import METRICS, Results, calc_reco_metrics, evaluate
from .models import MODELS, make_model
from .scores import (
    BiasScores,
    CallableScores,
    DenseScores,
    FactorScores,
    RankedLists,
    ScoreSource,
)
from .splitting import SPLITS, Split, cross_validate, make_split, split_reco_train_test

__all__ = [
    "__version__",
    "InputError",
    "Interactions",
    "load_dataset",
    "make_synthetic",
    "from_dataframe",
    "Split",
    "SPLITS",
    "make_split",
    "split_reco_train_test",
    "cross_validate",
    "MODELS",
    "make_model",
    "log_results",
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
    "compare",
    "Comparison",
]


def __getattr__(name: str):
    # log_results lives in tracking/, the only package that imports mlflow (about 2 s): load it
    # only when asked for.
    if name == "log_results":
        from .tracking import log_results

        return log_results
    # compare pulls in the report's statistics and renderers: loaded when first asked for.
    if name in ("compare", "Comparison"):
        import importlib

        return getattr(importlib.import_module(".reporting.compare", __name__), name)
    raise AttributeError(f"module 'recoeval_tracking' has no attribute {name!r}")
