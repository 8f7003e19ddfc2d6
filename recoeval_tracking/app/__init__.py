"""The console commands and the Hydra application behind them.

* ``recoeval-track`` (:mod:`.cli`): the Hydra app; its schema (:mod:`.schema`), the MLflow sweep
  callback (:mod:`.callbacks`) and the plain-Python job (:func:`.pipeline.run_job`, which takes a
  plain dict and runs without Hydra);
* ``recoeval-track-report`` (:mod:`.report`): reports over runs, from a sweep id, runs or job
  folders;
* ``recoeval-track-sync`` (:mod:`.sync`): uploads job folders left pending.

* the user's own Hydra app (:mod:`.plugin`): :func:`load_split` and :func:`evaluate_job`
  give a task of theirs our data, splits, metrics, job folder and tracking.

Hydra and OmegaConf are imported only inside this package.
"""

from typing import Any

__all__ = ["evaluate_job", "load_split", "JobData"]


def __getattr__(name: str) -> Any:
    # loaded on first use: the console commands import this package too
    if name in __all__:
        from . import plugin

        return getattr(plugin, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
