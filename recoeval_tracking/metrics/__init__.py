"""Metric registry, the native ``evaluate`` API and the recometrics-compatible function.

The names are loaded from their module on first use (:mod:`recoeval_tracking._lazy`): reading
a job folder or logging it to MLflow needs :class:`Results` and the registry, not the engine
(numba), whose import ``evaluate`` pulls in. ``evaluate`` is both a name of this package and
its module's name: importing the module ``recoeval_tracking.metrics.evaluate`` leaves the
package's ``evaluate`` the function, as an eager ``from .evaluate import evaluate`` did.
"""

import sys
import types
from typing import TYPE_CHECKING, Any

from .._lazy import lazy_names

if TYPE_CHECKING:  # the names as the type checker reads them
    from .compat import calc_reco_metrics
    from .evaluate import evaluate
    from .profiles import PROFILES
    from .rating import global_auc, log_loss, mae, rmse
    from .registry import METRICS, MetricSpec
    from .results import Results

_MODULES = {
    ".compat": ("calc_reco_metrics",),
    ".evaluate": ("evaluate",),
    ".profiles": ("PROFILES",),
    ".rating": ("global_auc", "log_loss", "mae", "rmse"),
    ".registry": ("METRICS", "MetricSpec"),
    ".results": ("Results",),
}

__all__ = [
    "evaluate",
    "calc_reco_metrics",
    "METRICS",
    "MetricSpec",
    "Results",
    "PROFILES",
    "rmse",
    "mae",
    "log_loss",
    "global_auc",
]

__getattr__, __dir__ = lazy_names(__name__, _MODULES)


class _Package(types.ModuleType):
    """This package: the import system sets a submodule as an attribute of its package once it
    is loaded; for the module ``evaluate`` the attribute is the function of that name."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "evaluate" and isinstance(value, types.ModuleType):
            value = value.evaluate
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
