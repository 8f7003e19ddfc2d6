"""The console commands and the Hydra application behind them.

* ``recoeval-track`` (:mod:`.cli`): the Hydra app; its schema (:mod:`.schema`), the MLflow sweep
  callback (:mod:`.callbacks`) and the plain-Python job (:func:`.pipeline.run_job`, which takes a
  plain dict and runs without Hydra);
* ``recoeval-track-report`` (:mod:`.report`): reports over runs, from a sweep id, runs or job
  folders;
* ``recoeval-track-sync`` (:mod:`.sync`): uploads job folders left pending.

Hydra and OmegaConf are imported only inside this package.
"""
