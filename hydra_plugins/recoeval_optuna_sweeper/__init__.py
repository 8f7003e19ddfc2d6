"""``hydra/sweeper=optuna``: a Hydra sweeper that searches with Optuna (3 or later).

Hydra finds this package through the ``hydra_plugins`` namespace package; importing
:mod:`.config` registers the ``optuna`` option of the ``hydra/sweeper`` group, and
:class:`.optuna_sweeper.OptunaSweeper` is the plugin. Optuna samples every trial; the plugin only
turns Hydra's override grammar into Optuna distributions (:mod:`.search_space`), launches each
batch of trials with the configured launcher and reports their objective back.
"""
