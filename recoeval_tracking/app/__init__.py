"""The ``recoeval-track`` Hydra application: configs, the console command, the MLflow sweep
callback and the plain-Python job behind them.

Hydra and OmegaConf are imported only inside this package (:mod:`.cli`, :mod:`.schema`,
:mod:`.callbacks`); :func:`recoeval_tracking.app.pipeline.run_job` takes a plain dict.
"""
