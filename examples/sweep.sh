#!/usr/bin/env bash
# Sweeps with recoeval-track, each followed by its report. Run from any directory:
#   bash examples/sweep.sh [/path/to/ml-100k/u.data]
#
# Every job writes its results to multirun/<date>/<time>/<job number>/ (per_user.parquet,
# metrics.json, curves.csv, plots/, the resolved config in .hydra/) and logs one MLflow run to
# ./mlflow.db; each sweep is one parent run with the jobs as children, closed with a leaderboard,
# and prints the address of its jobs side by side. Browse them with:
#   mlflow ui --backend-store-uri sqlite:///mlflow.db
#
# Model-specific settings (model.factors) only exist for the model that has them: sweep them
# with that model (first sweep), and sweep models with their defaults (second sweep).
set -euo pipefail

# The id of the newest sweep under multirun/ (recoeval_sweep.json in its folder).
last_sweep() {
    python - <<'PY'
import json, pathlib
newest = max(pathlib.Path("multirun").glob("*/*/recoeval_sweep.json"), key=lambda p: p.stat().st_mtime)
print(json.loads(newest.read_text())["sweep_id"])
PY
}

# 1. ALS: factors x regularization (2 x 2 = 4 jobs), two jobs at a time with the joblib launcher.
recoeval-track -m model=als model.factors=16,64 model.regularization=0.01,0.1 \
    hydra/launcher=joblib hydra.launcher.n_jobs=2
recoeval-track-report select.sweep_id="$(last_sweep)" output.dir=report_als_grid

# 2. Every baseline on the same data and split (the split depends only on the data and seed).
recoeval-track -m model=als,item_knn,popularity,random
recoeval-track-report select.sweep_id="$(last_sweep)" output.dir=report_models

# 3. Three seeds of ALS and popularity (a new split per seed): the report treats the seeds as
#    replicates (replicate_key=auto) and compares the models over them.
recoeval-track -m model=als,popularity seed=0,1,2
recoeval-track-report select.sweep_id="$(last_sweep)" output.dir=report_seeds

# 4. MovieLens 100K, when its u.data is given (download it from GroupLens first).
if [ $# -ge 1 ]; then
    recoeval-track -m dataset=movielens_100k dataset.path="$1" model=als,item_knn,popularity,random
    recoeval-track-report select.sweep_id="$(last_sweep)" output.dir=report_ml100k
fi

# More, to copy:
#   Five-fold cross-validation, one job per fold:
#     recoeval-track -m split=kfold split.fold=0,1,2,3,4 model=als
#   Re-run one job exactly from the config it saved:
#     recoeval-track --config-path "$PWD/multirun/<date>/<time>/0/.hydra" --config-name config
