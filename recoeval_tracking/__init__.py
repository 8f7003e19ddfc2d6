"""recoeval_tracking: full-catalog evaluation of implicit-feedback recommenders.

The public API is re-exported here; the modules behind it are private. Every name is loaded on
first use (module ``__getattr__``): ``import recoeval_tracking`` loads neither the numba kernels,
pandas, pyarrow, MLflow, Hydra, matplotlib nor Dask (tests/test_import_cost.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:  # the names as static tools see them; at run time they load on first use
    from ._validation import InputError
    from .data import Interactions, from_dataframe, load_dataset, make_synthetic
    from .metrics import METRICS, Results, calc_reco_metrics
    from .metrics.agreement import compare_profiles
    from .metrics.evaluate import evaluate
    from .models import MODELS, make_model
    from .reporting.compare import Comparison, compare
    from .reporting.per_user_files import read_per_user
    from .scores import (
        BiasScores,
        CallableScores,
        DenseScores,
        FactorScores,
        RankedLists,
        ScoreSource,
    )
    from .selection import Selection, select_and_test
    from .splitting import SPLITS, Split, cross_validate, make_split, split_reco_train_test
    from .tracking import log_results

#: Public name -> the module it lives in (relative to this package).
_LAZY: dict[str, str] = {
    "InputError": "._validation",
    "Interactions": ".data",
    "load_dataset": ".data",
    "make_synthetic": ".data",
    "from_dataframe": ".data",
    "Split": ".splitting",
    "SPLITS": ".splitting",
    "make_split": ".splitting",
    "split_reco_train_test": ".splitting",
    "cross_validate": ".splitting",
    "MODELS": ".models",
    "make_model": ".models",
    # tracking/ is the only package that imports mlflow (about 2 s)
    "log_results": ".tracking",
    "evaluate": ".metrics",
    "calc_reco_metrics": ".metrics",
    "Results": ".metrics",
    "METRICS": ".metrics",
    "ScoreSource": ".scores",
    "FactorScores": ".scores",
    "BiasScores": ".scores",
    "DenseScores": ".scores",
    "CallableScores": ".scores",
    "RankedLists": ".scores",
    # the report's statistics and renderers
    "compare": ".reporting.compare",
    "Comparison": ".reporting.compare",
    "compare_profiles": ".metrics.agreement",
    # other tools' per-user files (trec_eval -q, ranx, PyTerrier, LensKit, WarpRec, tables)
    "read_per_user": ".reporting.per_user_files",
    "select_and_test": ".selection",
    "Selection": ".selection",
}

__all__ = ["__version__", *_LAZY]

_SUBPACKAGES = frozenset(
    {
        "app",
        "data",
        "distributed",
        "engine",
        "jobdir",
        "metrics",
        "models",
        "options",
        "reporting",
        "scores",
        "splitting",
        "stats",
        "tracking",
    }
)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        if name in _SUBPACKAGES:  # ``rt.metrics`` and the like, as before the names were lazy
            return importlib.import_module(f".{name}", __name__)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
