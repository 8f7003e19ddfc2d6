#!/usr/bin/env bash
# Sweeps with recoeval-track: copy a line, run it from any directory.
#
# Every job writes its results to multirun/<date>/<time>/<job number>/ (per_user.parquet,
# metrics.json, curves.csv, plots/, the resolved config in .hydra/) and logs one MLflow run to
# ./mlflow.db; each sweep is one parent run with the jobs as children, closed with a leaderboard.
# Browse them with:  mlflow ui --backend-store-uri sqlite:///mlflow.db
#
# Model-specific settings (model.factors) only exist for the model that has them: sweep them
# with that model (first sweep), and sweep models with their defaults (second sweep).
set -euo pipefail

# 1. ALS: factors x regularization (2 x 2 = 4 jobs), two jobs at a time with the joblib launcher.
recoeval-track -m model=als model.factors=16,64 model.regularization=0.01,0.1 \
    hydra/launcher=joblib hydra.launcher.n_jobs=2

# 2. Every baseline on the same data and split (the split depends only on the data and seed).
recoeval-track -m model=als,item_knn,popularity,random

# 3. MovieLens 100K (download it from GroupLens first): ALS against popularity, three seeds.
#    recoeval-track -m dataset=movielens_100k dataset.path=/path/to/ml-100k/u.data \
#        model=als,popularity seed=0,1,2 hydra/launcher=joblib

# 4. Five-fold cross-validation: one job per fold.
#    recoeval-track -m split=kfold split.fold=0,1,2,3,4 model=als

# Re-run one job exactly from the config it saved:
#    recoeval-track --config-path "$PWD/multirun/<date>/<time>/0/.hydra" --config-name config
