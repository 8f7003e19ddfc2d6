"""Run names: short (< 40 characters), distinct within a sweep, never a path or a secret."""

from __future__ import annotations

from recoeval_tracking.tracking.names import MAX_NAME_CHARS, short_run_name, swept_keys

ML = {"dataset": {"kind": "movielens_100k", "name": None}, "model": {"name": "als"}}


def test_sweep_names_hold_the_swept_keys_only():
    sweep = [
        "dataset=movielens_100k",
        "dataset.path=../shared/data/ml-100k/u.data",
        "model=als,item_knn,popularity,random",
        "tracking.uri=http://u:pw@host",
    ]
    assert swept_keys(sweep) == ["model"]
    names = []
    for model in ("als", "item_knn", "popularity", "random"):
        job = [
            "dataset=movielens_100k",
            "dataset.path=../shared/data/ml-100k/u.data",
            f"model={model}",
            "tracking.uri=http://u:pw@host",
        ]
        names.append(short_run_name({**ML, "model": {"name": model}}, job, ["model"]))
    assert names == ["als", "item_knn", "popularity", "random"]
    job = ["model=als", "model.factors=64", "model.regularization=0.1", "seed=3"]
    assert short_run_name(ML, job, ["model.factors", "model.regularization"]) == "als f=64 reg=0.1"


def test_a_list_value_is_one_value_not_a_sweep():
    sweep = [
        "model.lam=100,1000",
        "metrics.names=[ndcg,p,r]",
        "model.layers=[64,32],[128]",
        "model.opts={a:1,b:2}",
        "model.tag='x,y'",
    ]
    assert swept_keys(sweep) == ["model.lam", "model.layers"]


def test_plain_run_is_named_after_dataset_and_model():
    job = [
        "dataset=movielens_100k",
        "dataset.path=/data/u.data",
        "model=als",
        "tracking.password=secret",
    ]
    assert short_run_name(ML, job) == "movielens_100k als"


def test_long_names_are_cut_keeping_the_job_number():
    job = [f"model.option_{i}=value_{i}" for i in range(10)]
    keys = [j.split("=")[0] for j in job]
    name = short_run_name(ML, job, keys, suffix="#7")
    assert len(name) <= MAX_NAME_CHARS < 40 and name.endswith("#7")
