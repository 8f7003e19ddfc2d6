#!/usr/bin/env bash
# Search vs grid: ALS factors and regularization on MovieLens 100K, 16 jobs each.
#
#   bash examples/search_als.sh /path/to/ml-100k/u.data [work dir]
#
# 1. An Optuna search (hydra/sweeper=optuna, TPE seeded, 5 random trials then the model),
#    16 trials over factors in [8, 64] and regularization in [0.001, 1] on a log scale,
#    maximising ndcg_at_10 (the direction comes from the metric registry).
# 2. The 4 x 4 grid over the same box: factors 8,16,32,64 x regularization 0.001,0.01,0.1,1.
# Both log to <work dir>/mlflow.db (one sweep parent each; the search's parent holds
# best_ndcg_at_10 as it improves, and the best parameters as tags), then the best of each is
# printed. Same data, split (random 20% per user, seed 0) and ALS iterations for every job.
set -euo pipefail

U_DATA=$(realpath "${1:?give the path of MovieLens 100K u.data}")
WORK=${2:-search-vs-grid}
mkdir -p "$WORK" && cd "$WORK"
COMMON=(dataset=movielens_100k "dataset.path=$U_DATA" model=als plots=false progress=false)

recoeval-track -m hydra/sweeper=optuna objective=ndcg_at_10 \
    hydra.sweeper.n_trials=16 hydra.sweeper.seed=0 hydra.sweeper.n_startup_trials=5 \
    hydra.sweeper.storage="sqlite:///$PWD/optuna.db" hydra.sweeper.study_name=als-ml100k \
    'model.factors=int(interval(8,64))' 'model.regularization=tag(log,interval(0.001,1))' \
    "${COMMON[@]}" hydra.sweep.dir=multirun/search

recoeval-track -m model.factors=8,16,32,64 model.regularization=0.001,0.01,0.1,1 \
    "${COMMON[@]}" hydra.sweep.dir=multirun/grid

python - <<'PY'
import json
from pathlib import Path

for name in ("search", "grid"):
    jobs = [json.loads(p.read_text()) | {"dir": p.parent.name}
            for p in Path("multirun", name).glob("*/metrics.json")]
    cfgs = {j["dir"]: __import__("yaml").safe_load(
        (Path("multirun", name, j["dir"], "config.yaml")).read_text())["model"] for j in jobs}
    best = max(jobs, key=lambda j: j["ndcg_at_10"])
    m = cfgs[best["dir"]]
    print(f"{name:6s} jobs={len(jobs):2d}  best ndcg_at_10={best['ndcg_at_10']:.4f} "
          f"[{best['ndcg_at_10_ci95_low']:.4f}, {best['ndcg_at_10_ci95_high']:.4f}]  "
          f"factors={m['factors']} regularization={m['regularization']:.4g}")
PY
