"""The ``recoeval`` option of Hydra's ``hydra/sweeper`` group (registered on import).

Its settings are those of Hydra's basic sweeper (``hydra.sweeper.max_batch_size``,
``hydra.sweeper.params``); the baselines are the app's top-level ``baselines`` setting.
"""

# No ``from __future__ import annotations``: Hydra's plugin scan runs this module without
# registering it in sys.modules, where dataclasses cannot resolve string annotations.
from dataclasses import dataclass
from typing import Dict, Optional

from hydra.core.config_store import ConfigStore

__all__ = ["RecoevalSweeperConf", "TARGET"]

#: The class Hydra instantiates for ``hydra/sweeper=recoeval``.
TARGET = "hydra_plugins.recoeval_sweeper.sweeper.RecoevalSweeper"


@dataclass
class RecoevalSweeperConf:
    """Settings of ``hydra/sweeper=recoeval``: those of Hydra's basic sweeper.

    ``max_batch_size`` (null: every job in one batch) bounds how many jobs the launcher is
    handed at a time; ``params`` holds sweep entries as overrides, beside the command line's.
    """

    _target_: str = TARGET
    max_batch_size: Optional[int] = None
    params: Optional[Dict[str, str]] = None


ConfigStore.instance().store(
    group="hydra/sweeper", name="recoeval", node=RecoevalSweeperConf, provider="recoeval_tracking"
)
