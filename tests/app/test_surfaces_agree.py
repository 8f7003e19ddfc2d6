"""One (dataset, split, model), one answer: ``rt.evaluate`` in Python, ``recoeval-track`` in a
fresh process, the user's own Hydra app (door 3, ``evaluate_job``) and ``evaluate_from_storage``
on an in-process Dask cluster give bit-identical per-user tables, because every surface takes
the relevance rule from the loaded data (MovieLens: ratings >= 4 are the positives, gain 1; the
loader's signature holds that default, and the app's dataset config derives it from there).

The data is a small explicit-rating file in MovieLens 100K's ``u.data`` format (tab-separated
``user item rating timestamp``), so the test always runs and exercises the MovieLens loader's
rule; the model is item popularity (the package's own, and in the user's app a class of the
user's that scores the same train counts).
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from commands import run_command, run_process

import recoeval_tracking as rt
from recoeval_tracking.data import write_partitioned
from recoeval_tracking.options import EvalOptions

from .conftest import assert_ok

K = 10
# the app's metrics=standard: names [standard], k=10, ties noise with seed ${seed} (0 here)
OPTIONS = {"metrics": "standard", "k": K, "seed": 0}


def _write_ratings(path: Path) -> None:
    """60 users x 40 items, 1..5 stars with every value present (so the level matters), one
    timestamp per rating."""
    rng = np.random.default_rng(7)
    rows = []
    t = 880_000_000
    for user in range(1, 61):
        items = rng.choice(np.arange(1, 41), size=int(rng.integers(6, 16)), replace=False)
        for item in items:
            t += int(rng.integers(1, 100))
            rows.append(f"{user}\t{item}\t{int(rng.integers(1, 6))}\t{t}")
    path.write_text("\n".join(rows) + "\n")


USER_APP_CONFIG = """
defaults:
  - dataset: movielens_100k
  - split: random
  - metrics: standard
  - tracking: none
  - model: mypop
  - _self_

seed: 0
progress: "false"
plots: false

hydra:
  searchpath:
    - pkg://recoeval_tracking.configs
"""

USER_MODEL = '''
import numpy as np


class MyPopularity:
    """The user's popularity: each item's train users, the same score for every user."""

    def fit(self, train):
        self.counts = np.bincount(train.indices, minlength=train.shape[1]).astype(np.float64)
        return self

    def score_users(self, user_indices):
        return np.tile(self.counts, (len(user_indices), 1))
'''

USER_TRAIN = """
import hydra
from hydra.utils import instantiate

from recoeval_tracking.app import evaluate_job, load_split


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg):
    data = load_split(cfg)
    model = instantiate(cfg.model).fit(data.train)
    return evaluate_job(cfg, model, data)


if __name__ == "__main__":
    main()
"""


def _user_app(root: Path) -> Path:
    """The user's own Hydra training app (door 3), in a folder outside the repository."""
    (root / "conf" / "model").mkdir(parents=True)
    (root / "my_models").mkdir()
    (root / "conf" / "config.yaml").write_text(USER_APP_CONFIG)
    (root / "conf" / "model" / "mypop.yaml").write_text("_target_: my_models.pop.MyPopularity\n")
    (root / "my_models" / "__init__.py").write_text("")
    (root / "my_models" / "pop.py").write_text(textwrap.dedent(USER_MODEL))
    (root / "train.py").write_text(textwrap.dedent(USER_TRAIN))
    return root


def _same_per_user(a: pd.DataFrame, b: pd.DataFrame, surface: str) -> None:
    """Same columns and dtypes, every value bit-identical (NaN where NaN)."""
    assert list(a.columns) == list(b.columns), surface
    assert len(a) == len(b), surface
    for c in a.columns:
        x, y = a[c].to_numpy(), b[c].to_numpy()
        assert x.dtype == y.dtype, (surface, c)
        if x.dtype.kind == "f":
            assert np.array_equal(x.view(np.int64), y.view(np.int64)), (surface, c)
        else:
            assert np.array_equal(x, y), (surface, c)


def test_python_app_user_app_and_storage_give_one_per_user_table(tmp_path):
    data = tmp_path / "u.data"
    _write_ratings(data)

    # 1. Python, as a notebook would
    X = rt.load_dataset("movielens_100k", path=data)
    split = rt.make_split("random", X, seed=0)
    model = rt.make_model("popularity").fit(split.train.matrix)
    res = rt.evaluate(split.train, split.test, scores=model.score_source(), **OPTIONS)
    want = res.per_user
    # the MovieLens rule was applied, and is said: ratings 1..3 are not positives
    assert res.definitions["relevance_level"] == 4.0 and res.definitions["gains"] == "binary"
    assert "relevance: test entries >= 4 are the positives, with gain 1" in res.summary()
    no_positive = (split.test.matrix.max(axis=1).toarray().ravel() < 4) & (
        split.test.user_counts() > 0
    )
    assert no_positive.any()  # users whose test ratings are all below 4: NaN by that rule
    assert (want["nan_reason"][no_positive] == "no_positive").all()

    # 2. recoeval-track, in a fresh process
    job = tmp_path / "app_job"
    proc = run_command(
        [
            "dataset=movielens_100k",
            f"dataset.path={data}",
            "model=popularity",
            "metrics=standard",
            "tracking=none",
            "seed=0",
            "progress=false",
            "plots=false",
            f"hydra.run.dir={job}",
        ],
        tmp_path,
    )
    assert_ok(proc)
    assert "relevance: test entries >= 4 are the positives, with gain 1" in proc.stdout + (
        proc.stderr
    )
    _same_per_user(want, pd.read_parquet(job / "per_user.parquet"), "recoeval-track")

    # 3. the user's own Hydra app (door 3), its own model class
    app = _user_app(tmp_path / "user_app")
    user_job = tmp_path / "user_job"
    proc = run_process(
        [sys.executable, "train.py", f"dataset.path={data}", f"hydra.run.dir={user_job}"], app
    )
    assert_ok(proc)
    _same_per_user(want, pd.read_parquet(user_job / "per_user.parquet"), "door 3")

    # 4. evaluate_from_storage: the split written by user, its manifest carrying the rule
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    from recoeval_tracking.distributed import evaluate_from_storage

    ds = write_partitioned(tmp_path / "stored", split.train, split.test, users_per_part=25)
    assert ds.relevance == X.relevance
    with (
        LocalCluster(n_workers=1, threads_per_worker=1, processes=False) as cluster,
        Client(cluster) as client,
    ):
        stored = evaluate_from_storage(
            client, ds, EvalOptions(**OPTIONS), item_biases=model.item_scores_
        )
    _same_per_user(want, stored.per_user, "evaluate_from_storage")


@pytest.mark.parametrize(
    ("kind", "level", "gains"),
    [
        ("movielens_100k", 4.0, "binary"),
        ("movielens_1m", 4.0, "binary"),
        ("movielens_latest", 4.0, "binary"),
        ("csv", None, "graded"),
        ("parquet", None, "graded"),
        ("synthetic", None, "graded"),
    ],
)
def test_the_app_config_takes_its_rule_from_the_loader_signature(kind, level, gains):
    """One source of the default: the dataset config's schema derives ``relevance_level`` and
    ``gains`` from the loader's signature, and the YAML file does not set them again."""
    import dataclasses
    import inspect

    import yaml
    from commands import REPO_ROOT

    from recoeval_tracking.app.schema import SCHEMAS
    from recoeval_tracking.data import DATASETS

    params = inspect.signature(DATASETS[kind]).parameters
    assert (params["relevance_level"].default, params["gains"].default) == (level, gains)
    schema = {f.name: f.default for f in dataclasses.fields(SCHEMAS["dataset"][kind])}
    assert (schema["relevance_level"], schema["gains"]) == (level, gains)
    yaml_file = yaml.safe_load((REPO_ROOT / "configs" / "dataset" / f"{kind}.yaml").read_text())
    assert not {"relevance_level", "gains"} & set(yaml_file)
