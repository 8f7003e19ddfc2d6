"""``hydra/sweeper=recoeval``: Hydra's basic grid sweeper, plus baselines and a check of every
job before any runs.

``recoeval-track`` selects it by default (``configs/config.yaml``); a Hydra app of the user's
own selects it with ``- override hydra/sweeper: recoeval`` in its defaults list. Importing
:mod:`.config` registers the option; :class:`.sweeper.RecoevalSweeper` is the plugin.
"""
