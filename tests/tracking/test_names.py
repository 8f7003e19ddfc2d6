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


def test_optuna_searches_are_swept_keys():
    """Optuna's search spaces as the command line writes them: a cast or a tag around
    interval/range/choice is a sweep; a function call that is not one is a value."""
    search = [
        "hydra/sweeper=optuna",
        "model=cosknn",
        "model.neighbours=int(interval(5,200))",
        "model.shrink=tag(log, interval(0.1,100))",
        "model.alpha=float(range(1,3))",
        "model.note=str(abc)",
        "hydra.sweeper.n_trials=3",
    ]
    assert swept_keys(search) == ["model.neighbours", "model.shrink", "model.alpha"]


def test_trial_names_carry_the_trial_values_floats_to_four_digits():
    from hydra_plugins.recoeval_optuna_sweeper.search_space import format_override

    keys = ["model.neighbours", "model.shrink"]
    names = []
    for neighbours, shrink in ((57, 3.141592653589793), (57, 0.012345678), (8, 12.0)):
        job = [
            "model=cosknn",
            format_override("model.neighbours", neighbours),
            format_override("model.shrink", shrink),
        ]
        # a _target_ model has no model.name: the app passes its config option's name
        names.append(
            short_run_name(
                {"model": {"_target_": "m.CosineItemKNN"}}, job, keys, model_name="cosknn"
            )
        )
    assert names == [
        "cosknn neighbours=57 shrink=3.142",
        "cosknn neighbours=57 shrink=0.01235",
        "cosknn neighbours=8 shrink=12",
    ]
    # without the config option's name, the class names the model
    assert short_run_name({"model": {"_target_": "m.CosineItemKNN"}}, job, keys) == (
        "CosineItemKNN neighbours=8 shrink=12"
    )


def test_a_swept_file_is_named_by_its_stem():
    sweep = ["model=ranked_file", "model.path=a.csv,runs/b.run,/data/c.csv"]
    assert swept_keys(sweep) == ["model.path"]
    cfg = {"model": {"name": "ranked_file"}}
    names = [
        short_run_name(cfg, ["model=ranked_file", f"model.path={p}"], ["model.path"])
        for p in ("a.csv", "runs/b.run", "/data/c.csv")
    ]
    assert names == ["ranked_file a", "ranked_file b", "ranked_file c"]
    # folders, schemes, credentials and query strings never enter a name
    secret = "model.path=https://bob:pw@host/x/recs.parquet?token=abc"
    assert short_run_name(cfg, [secret], ["model.path"]) == "ranked_file recs"
    # a plain run of a file names it too
    assert short_run_name(cfg, ["model.path=/d/recs.csv"]) == "ranked_file recs"


def test_a_label_is_the_name_and_the_swept_values_follow():
    cfg = {**ML, "label": "CosKNN (ours)"}
    assert short_run_name(cfg, ["model=als", "label=CosKNN (ours)"]) == "CosKNN (ours)"
    job = ["model=als", "model.factors=64", "label=CosKNN (ours)"]
    assert short_run_name(cfg, job, ["model.factors"]) == "CosKNN (ours) f=64"
    # a swept label is not repeated
    assert short_run_name(cfg, job, ["label", "model.factors"]) == "CosKNN (ours) f=64"
