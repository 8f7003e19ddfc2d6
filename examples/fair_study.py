"""The optimism of choosing on test, measured: a fair study beside the same study chosen on test.

Each system (item-KNN over a grid of neighbours, the user's model here; popularity and ALS as
baselines, tuned over the same number of configurations drawn from their ``search_space``, as
``recoeval-track -m ... 'baselines=[popularity,als]'`` draws them) is evaluated two ways on one
split of MovieLens 100K (random, 20% test, 10% validation, seed 0):

* **fair**: every configuration fitted on train and compared on validation; the chosen one
  refit on train + validation and tested once (``rt.select_and_test``);
* **chosen on test**: every configuration refit on train + validation and evaluated on test, the
  best test value reported (what a sweep without a validation part reports).

The difference is the optimism of choosing on the data one reports on. Usage::

    python examples/fair_study.py path/to/ml-100k/u.data
"""

from __future__ import annotations

import sys

import pandas as pd

import recoeval_tracking as rt
from recoeval_tracking.app.study import draw_configurations, space_configurations

NEIGHBOURS = [10, 20, 50, 100, 200]  # the grid of the system under study
METRIC = "ndcg_at_10"


def configurations() -> dict[str, dict[str, dict]]:
    """Per system, its configurations: item-KNN's grid, and for each baseline as many drawn
    from its search space (the app's draw: seed 0) as the grid has."""
    from omegaconf import OmegaConf

    from recoeval_tracking.app.task import option_node

    out = {"item_knn": {f"neighbours={n}": {"neighbours": n} for n in NEIGHBOURS}}
    for name in ("popularity", "als"):
        node = option_node("model", name)
        space = OmegaConf.to_container(node.search_space)
        drawn = draw_configurations(space_configurations(space, name), len(NEIGHBOURS), seed=0)
        out[name] = {" ".join(f"{k}={v}" for k, v in p.items()): p for p in drawn}
    return out


def main(path: str) -> pd.DataFrame:
    X = rt.load_dataset("movielens_100k", path=path)
    split = rt.make_split("random", X, test_fraction=0.2, validation_fraction=0.1, seed=0)
    test = split.test_split()
    rows = []
    for system, configs in configurations().items():
        makers = {
            label: (lambda s=system, p=params: rt.make_model(s, **p))
            for label, params in configs.items()
        }
        sel = rt.select_and_test(split, makers, objective=METRIC, metrics=["ndcg"])
        on_test = {}
        for label, make in makers.items():  # the optimistic protocol: every one on test
            model = make()
            model.fit(test.train.matrix, user_ids=test.train.user_ids, item_ids=test.train.item_ids)
            res = rt.evaluate(
                test.train,
                test.test,
                **model.eval_inputs(10, test.test_users),
                k=10,
                seed=0,
                metrics=["ndcg"],
            )
            on_test[label] = res.means[METRIC]
        best_on_test = max(on_test, key=on_test.get)
        fair = sel.test.means[METRIC]
        rows.append(
            {
                "system": system,
                "configurations": len(configs),
                "chosen on validation": sel.chosen,
                "its test NDCG@10": fair,
                "chosen on test": best_on_test,
                "best test NDCG@10": on_test[best_on_test],
                "optimism": on_test[best_on_test] - fair,
            }
        )
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.float_format", "{:.4f}".format):
        print(table.to_string(index=False))
    return table


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "u.data")
