"""The ``optuna`` option of Hydra's ``hydra/sweeper`` group (registered on import).

Every field is set on the command line as ``hydra.sweeper.<field>=...``.
"""

# No ``from __future__ import annotations``: Hydra's plugin scan runs this module without
# registering it in sys.modules, where dataclasses cannot resolve string annotations.
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from hydra.core.config_store import ConfigStore

__all__ = ["OptunaSweeperConf", "SAMPLERS"]

#: Optuna samplers by name (``hydra.sweeper.sampler``).
SAMPLERS = ("tpe", "random", "cmaes", "qmc")


@dataclass
class OptunaSweeperConf:
    """Settings of ``hydra/sweeper=optuna``.

    ``n_trials`` trials are added to the study by this command (a resumed study keeps its
    earlier ones); ``n_jobs`` trials are asked at a time and launched as one batch by the
    configured launcher (``hydra/launcher=joblib``, ``submitit_local``, ``submitit_slurm``).
    ``direction`` null takes the objective's direction from the metric registry. ``storage``
    is an Optuna storage URL (``sqlite:///optuna.db``; null keeps the study in memory) and
    ``study_name`` the study to create or resume in it. ``seed`` seeds the sampler.
    ``n_startup_trials`` (TPE) is the number of random trials before the model takes over
    (null: Optuna's default, 10). ``params`` holds search-space entries as overrides
    (``{model.factors: int(interval(8,64))}``), beside those of the command line.
    """

    _target_: str = "hydra_plugins.recoeval_optuna_sweeper.optuna_sweeper.OptunaSweeper"
    n_trials: int = 20
    n_jobs: int = 1
    sampler: str = "tpe"
    seed: Optional[int] = None
    n_startup_trials: Optional[int] = None
    direction: Optional[str] = None
    storage: Optional[str] = None
    study_name: str = "recoeval"
    params: Dict[str, Any] = field(default_factory=dict)


ConfigStore.instance().store(
    group="hydra/sweeper", name="optuna", node=OptunaSweeperConf, provider="recoeval_tracking"
)
