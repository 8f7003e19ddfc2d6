"""A training script of the user's own, evaluated and tracked by recoeval_tracking.

    python train.py                                  # one job: train EASE, evaluate, log
    python train.py -m model.lam=100,500,2000        # a sweep: one MLflow parent, 3 children
    python train.py -m model.lam=100,500,2000 'baselines=[popularity,random]'   # + 2 baselines
    python train.py -m hydra/sweeper=optuna hydra.sweeper.n_trials=8 \
        'model.lam=tag(log,interval(10,5000))'       # a search over lam (objective: ndcg_at_10)
    recoeval-track-report                            # the report over the last sweep
"""

import hydra
from hydra.utils import instantiate
from omegaconf import DictConfig

from recoeval_tracking.app import evaluate_job, load_split


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> dict:
    data = load_split(cfg)  # recoeval_tracking's dataset and split groups
    model = instantiate(cfg.model).fit(data.train)  # the user's own training
    return evaluate_job(cfg, model, data)  # metrics, job folder, MLflow run, objective


if __name__ == "__main__":
    main()
