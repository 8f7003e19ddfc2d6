"""The job without Hydra: run_job on plain dicts, its files, stages and reproducibility."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recoeval_tracking import InputError, _heartbeat
from recoeval_tracking.app.pipeline import (
    build_model,
    load_data,
    prepare_data,
    progress_mode,
    run_job,
    split_data,
    tracking_uri_for,
)
from recoeval_tracking.data import make_synthetic

from .conftest import RESULT_FILES


def tiny_config(**changes) -> dict:
    cfg = {
        "dataset": {
            "kind": "synthetic",
            "n_users": 150,
            "n_items": 80,
            "seed": 0,
            "implicit": {"method": None, "threshold": None, "alpha": 1.0, "epsilon": 1.0},
            "min_user_interactions": 0,
            "min_item_interactions": 0,
            "k_core": 0,
        },
        "split": {
            "name": "random",
            "seed": 0,
            "test_fraction": None,
            "test_count": None,
            "min_train": 1,
        },
        "model": {"name": "als", "factors": 8, "iterations": 4, "seed": 0},
        "metrics": {
            "names": ["all"],
            "profile": None,
            "k": 10,
            "cumulative": True,
            "ties": "noise",
            "seed": 0,
        },
        "tracking": {"enabled": False, "uri": None, "experiment": "recoeval"},
        "seed": 0,
        "nthreads": 1,
        "progress": "false",
        "plots": False,
    }
    for key, value in changes.items():
        section, _, leaf = key.partition("__")
        if leaf:
            cfg[section] = {**cfg[section], leaf: value}
        else:
            cfg[section] = value
    return cfg


@pytest.fixture(scope="module")
def tiny_job(tmp_path_factory):
    out = tmp_path_factory.mktemp("job")
    result = run_job(tiny_config(plots=True), out, overrides=["model.factors=8"], echo=False)
    return out, result


def test_job_directory_holds_every_file(tiny_job):
    out, result = tiny_job
    for name in RESULT_FILES:
        assert (out / name).is_file(), name
    assert (out / "plots" / "curves.png").is_file()
    assert (out / "plots" / "per_user_ndcg_at_10.png").is_file()
    assert result["job_dir"] == str(out) and result["run_id"] is None


def test_metrics_json_means_and_timings(tiny_job):
    out, result = tiny_job
    metrics = json.loads((out / "metrics.json").read_text())
    per_user = pd.read_parquet(out / "per_user.parquet")
    # the means are the plain means of the per-user column over the users where it is defined
    for column in ("ndcg_at_10", "p_at_10", "roc_auc"):
        values = per_user[column].to_numpy()
        assert metrics[column] == pytest.approx(np.nanmean(values), rel=1e-12)
        assert result["metrics"][column] == pytest.approx(metrics[column], rel=1e-12)
    assert metrics["users_evaluated"] == int((per_user["nan_reason"] == "").sum())
    for stage in ("load", "prepare", "split", "fit", "eval", "total"):
        assert metrics[f"{stage}_seconds"] >= 0.0
    assert metrics["total_seconds"] >= metrics["fit_seconds"] + metrics["eval_seconds"] - 1e-6


def test_curves_end_at_the_means_at_k(tiny_job):
    out, _ = tiny_job
    metrics = json.loads((out / "metrics.json").read_text())
    curves = pd.read_csv(out / "curves.csv")
    assert curves["k"].tolist() == list(range(1, 11))
    # the cumulative curve at k = K is the metric at K (same users, same definition)
    for name in ("ndcg", "p", "r", "hit"):
        assert curves[f"{name}_at_k"].iloc[-1] == pytest.approx(metrics[f"{name}_at_10"], rel=1e-12)
    # P@1 is the fraction of evaluated users whose first item is a hit: equal to Hit@1
    assert curves["p_at_k"].iloc[0] == pytest.approx(curves["hit_at_k"].iloc[0], rel=1e-12)


def test_dataset_json_and_config(tiny_job):
    out, _ = tiny_job
    ds = json.loads((out / "dataset.json").read_text())
    X = make_synthetic(150, 80, seed=0)
    assert ds["data_fingerprint"] == X.fingerprint()
    assert ds["interactions"] == X.nnz == ds["train_interactions"] + ds["test_interactions"]
    assert ds["split"]["strategy"] == "random" and len(ds["split_fingerprint"]) == 16
    import yaml

    assert yaml.safe_load((out / "config.yaml").read_text())["model"]["factors"] == 8
    assert yaml.safe_load((out / "overrides.yaml").read_text()) == ["model.factors=8"]


def _per_user(cfg, path) -> pd.DataFrame:
    run_job(cfg, path, echo=False)
    return pd.read_parquet(Path(path) / "per_user.parquet")


def test_same_config_same_per_user_metrics(tmp_path, tiny_job):
    out, _ = tiny_job
    again = _per_user(tiny_config(plots=True), tmp_path / "again")
    pd.testing.assert_frame_equal(
        again, pd.read_parquet(out / "per_user.parquet"), check_exact=True
    )


@pytest.mark.parametrize(
    "model",
    [
        {"name": "als", "factors": 8, "iterations": 4, "seed": 0},
        {"name": "item_knn", "neighbours": 20},
    ],
)
def test_thread_count_does_not_change_per_user_metrics(tmp_path, model):
    one = _per_user(tiny_config(model=model, nthreads=1), tmp_path / "one")
    two = _per_user(tiny_config(model=model, nthreads=2), tmp_path / "two")
    pd.testing.assert_frame_equal(one, two, check_exact=True)


def test_seed_changes_the_split(tmp_path):
    a = json.loads(
        (
            Path(run_job(tiny_config(split__seed=0), tmp_path / "a", echo=False)["job_dir"])
            / "dataset.json"
        ).read_text()
    )
    b = json.loads(
        (
            Path(run_job(tiny_config(split__seed=1), tmp_path / "b", echo=False)["job_dir"])
            / "dataset.json"
        ).read_text()
    )
    assert a["data_fingerprint"] == b["data_fingerprint"]
    assert a["split_fingerprint"] != b["split_fingerprint"]


def test_csv_dataset_with_a_relative_path(tmp_path):
    X = make_synthetic(60, 40, seed=3)
    X.to_dataframe().to_csv(tmp_path / "ratings.csv", index=False)
    cfg = tiny_config(
        dataset={"kind": "csv", "path": "ratings.csv", "sep": ",", "header": True, "columns": None},
        model={"name": "popularity"},
        metrics={"names": ["ndcg"], "k": 5},
    )
    result = run_job(cfg, tmp_path / "job", base_dir=tmp_path, echo=False)
    assert result["dataset"]["interactions"] == X.nnz
    assert result["dataset"]["source"] == str((tmp_path / "ratings.csv").resolve())
    assert set(result["metrics"]) == {"ndcg_at_5"}


def test_kfold_folds_partition_the_interactions():
    X = make_synthetic(80, 50, seed=1)
    tests = [
        split_data(X, {"name": "kfold", "n_folds": 3, "fold": f, "seed": 0}).test for f in range(3)
    ]
    # every stored entry is in exactly one fold's test part: the parts add up to the data
    assert sum(t.nnz for t in tests) == X.nnz
    total = sum(t.matrix for t in tests)
    assert abs(total - X.matrix).max() == 0.0
    with pytest.raises(InputError, match="split.fold"):
        split_data(X, {"name": "kfold", "n_folds": 3, "fold": 3, "seed": 0})
    with pytest.raises(InputError, match="split.fold"):
        split_data(X, {"name": "random", "fold": 1, "seed": 0})


def test_value_threshold_keeps_the_values_of_kept_entries():
    X = make_synthetic(100, 60, seed=2)
    Y = prepare_data(X, {"implicit": {"method": None, "threshold": 4}})
    values = np.asarray(X.matrix.data)
    assert Y.nnz == int(np.count_nonzero(values >= 4))
    assert np.all(Y.matrix.data >= 4) and set(np.unique(Y.matrix.data)) <= {4.0, 5.0}
    B = prepare_data(X, {"implicit": {"method": "binarize", "threshold": 4}})
    assert B.nnz == Y.nnz and np.all(B.matrix.data == 1.0)
    with pytest.raises(InputError, match="empty after preparation"):
        prepare_data(X, {"implicit": {"method": None, "threshold": 6}})


def test_progress_bars_when_asked(tmp_path, capfd):
    # "true" forces the evaluation bar even off a terminal (ALS draws its bar on terminals only)
    run_job(tiny_config(progress="true"), tmp_path / "bars", echo=False)
    err = capfd.readouterr().err
    assert "eval:" in err and "/150" in err
    run_job(tiny_config(progress="false"), tmp_path / "quiet", echo=False)
    err = capfd.readouterr().err
    assert "ALS:" not in err and "eval:" not in err


def test_progress_modes():
    assert progress_mode("auto") is None
    assert progress_mode("true") is False and progress_mode(True) is False
    assert progress_mode("false") is True and progress_mode(False) is True
    with pytest.raises(InputError, match="'progress'"):
        progress_mode("sometimes")


def test_local_store_is_in_the_base_directory(tmp_path):
    assert tracking_uri_for({"uri": None}, tmp_path) == f"sqlite:///{tmp_path.resolve()}/mlflow.db"
    assert tracking_uri_for({"uri": "http://127.0.0.1:5000"}, tmp_path) == "http://127.0.0.1:5000"


def test_bad_config_names_the_setting(tmp_path):
    with pytest.raises(InputError, match="'split' section"):
        run_job({"dataset": {"kind": "synthetic"}}, tmp_path)
    with pytest.raises(InputError, match="nthreads"):
        run_job(tiny_config(nthreads=0), tmp_path)


def test_default_als_beats_popularity_on_the_default_synthetic_data(tmp_path, hydra_defaults):
    """The embedded default data (2000 x 1000 synthetic, seed 0, random split) with the configs'
    ALS and popularity. Measured: ALS ndcg_at_10 = 0.2529, popularity 0.1458."""
    ndcg = {}
    for model in ("als", "popularity"):
        cfg = {
            **hydra_defaults(model),
            "tracking": {"enabled": False},
            "plots": False,
            "progress": "false",
            "nthreads": 2,
        }
        cfg["metrics"] = {**cfg["metrics"], "names": ["ndcg"]}
        ndcg[model] = run_job(cfg, tmp_path / model, echo=False)["metrics"]["ndcg_at_10"]
    assert ndcg["als"] > 0.22 and ndcg["popularity"] < 0.18
    assert ndcg["als"] - ndcg["popularity"] > 0.07


@pytest.fixture(scope="module")
def hydra_defaults():
    """The composed default config with ``model=<name>``, as a plain dict."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from recoeval_tracking.app import schema  # noqa: F401 - registers the schema

    configs = Path(__file__).resolve().parents[2] / "configs"

    def _compose(model: str) -> dict:
        with initialize_config_dir(version_base="1.3", config_dir=str(configs)):
            return OmegaConf.to_container(
                compose("config", overrides=[f"model={model}"]), resolve=True
            )

    return _compose


def test_model_file_paths_are_taken_from_the_base_directory(tmp_path):
    rng = np.random.default_rng(0)
    np.savez(
        tmp_path / "factors.npz", user_factors=rng.random((5, 2)), item_factors=rng.random((4, 2))
    )
    model = build_model(
        {
            "name": "factors_file",
            "path": "factors.npz",
            "user_factors": None,
            "item_factors": None,
            "item_biases": None,
        },
        None,
        tmp_path,
    )
    assert model.path == str((tmp_path / "factors.npz").resolve())
    np.save(tmp_path / "U.npy", rng.random((5, 2)))
    np.save(tmp_path / "V.npy", rng.random((4, 2)))
    model = build_model(
        {
            "name": "factors_file",
            "path": None,
            "user_factors": "U.npy",
            "item_factors": str(tmp_path / "V.npy"),
            "item_biases": None,
        },
        None,
        tmp_path,
    )
    assert (model.path, model.item_biases) == (None, None)
    assert model.user_factors == str((tmp_path / "U.npy").resolve())
    assert model.item_factors == str(tmp_path / "V.npy")


@pytest.mark.parametrize("disable, shown", [(None, True), (False, True), (True, False)])
def test_models_with_a_progress_parameter_get_the_progress_flag(disable, shown):
    assert build_model({"name": "als", "factors": 2}, disable).progress is shown
    assert build_model({"name": "popularity", "weighted": True}, disable).params() == {
        "weighted": True
    }


def test_implicit_model_takes_its_params_mapping():
    pytest.importorskip("implicit")
    model = build_model(
        {
            "name": "implicit",
            "model_name": "bpr",
            "params": {"factors": 4, "iterations": 2, "random_state": 3},
        },
        True,
    )
    assert model.params() == {
        "model_name": "bpr",
        "progress": False,
        "factors": 4,
        "iterations": 2,
        "random_state": 3,
    }


def test_dataset_label_reaches_only_the_loaders_that_take_one(tmp_path):
    X = load_data(
        {
            "kind": "synthetic",
            "name": "mine",
            "n_users": 40,
            "n_items": 30,
            "n_interactions": None,
            "seed": 2,
            "implicit": {},
            "k_core": 0,
        }
    )
    assert X.fingerprint() == make_synthetic(40, 30, seed=2).fingerprint()
    X.to_dataframe().to_csv(tmp_path / "data.csv", index=False)
    for name, expected in (("mine", "mine"), (None, "data.csv")):
        Y = load_data({"kind": "csv", "name": name, "path": "data.csv", "columns": None}, tmp_path)
        assert Y.name == expected and Y.nnz == X.nnz


def test_none_reaches_the_split_strategy_as_its_signature_means_it():
    from recoeval_tracking.splitting import random_holdout, recometrics_split

    X = make_synthetic(60, 40, seed=4)
    # recometrics: users_test_fraction=None means "max_test_users users", not the default 0.1
    split = split_data(
        X, {"name": "recometrics", "seed": 1, "users_test_fraction": None, "max_test_users": 7}
    )
    direct = recometrics_split(X, users_test_fraction=None, max_test_users=7, seed=1)
    assert split.details["selected_test_users"] == 7
    assert split.fingerprint == direct.fingerprint
    # random: test_fraction=None is the strategy's own default (0.2)
    split = split_data(X, {"name": "random", "seed": 0, "test_fraction": None, "test_count": None})
    assert split.fingerprint == random_holdout(X, test_fraction=0.2, seed=0).fingerprint


def test_a_cold_job_waits_for_the_warm_up_child_and_opens_the_store_meanwhile(
    tmp_path, monkeypatch, caplog
):
    """The path of README's first command on a fresh install, with a stand-in child (a process
    that sleeps for a second) so that nothing compiles: the job says it waits, ticks while it
    waits, and MLflow's store is opened in the meantime, before the upload."""
    import logging
    import subprocess
    import sys

    from recoeval_tracking.app import precheck
    from recoeval_tracking.metrics import warm
    from recoeval_tracking.tracking import pending

    started, preloaded = [], []

    def start(options, dtype):
        started.append((options.k, dtype))
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.0)"])
        return warm.WarmUp(proc, dtype)

    real_preload = pending.preload
    monkeypatch.setenv("RECOEVAL_WARM_UP", "1")
    monkeypatch.setattr(precheck, "kernel_cache_is_cold", lambda: True)
    monkeypatch.setattr(warm, "start", start)
    monkeypatch.setattr(_heartbeat, "TICK_SECONDS", 0.2)
    monkeypatch.setattr(pending, "preload", lambda uri: (preloaded.append(uri), real_preload(uri)))
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    cfg = tiny_config(tracking={"enabled": True, "uri": uri, "experiment": "cold"})
    with caplog.at_level(logging.INFO, logger="recoeval_tracking"):
        result = run_job(cfg, tmp_path / "job", echo=False)
    said = [r.getMessage() for r in caplog.records]
    assert started == [(10, "float32")]  # the options' K and the dtype ALS scores in
    waiting = said.index("waiting for the metric kernels compiling in a second process...")
    ticks = [m for m in said[waiting:] if m.startswith("... still compiling the metric kernels (")]
    assert ticks  # (MLflow's own lines about the new store's tables may come between)
    assert preloaded == [uri]  # during the wait, before the upload's own line
    assert said.index(f"logging the job to MLflow ({uri}, experiment 'cold')...") > waiting
    assert result["run_id"] is not None and result["metrics"]["ndcg_at_10"] > 0


def test_the_warm_up_child_compiles_the_dtype_the_model_most_likely_scores_in(monkeypatch):
    """ALS scores in float32; a user's own class, known only after its fit, most often in
    numpy's float64: a child compiling the other dtype is stopped and the job compiles alone."""
    from recoeval_tracking.app import pipeline, precheck
    from recoeval_tracking.metrics import warm
    from recoeval_tracking.options import EvalOptions

    started = []
    monkeypatch.setenv("RECOEVAL_WARM_UP", "1")
    monkeypatch.setattr(precheck, "kernel_cache_is_cold", lambda: True)
    monkeypatch.setattr(warm, "start", lambda options, dtype: started.append(dtype))
    options, cpu = EvalOptions.from_config({"names": ["p"], "k": 5}), {"kind": "cpu"}
    pipeline._warm_up(options, {"name": "als", "factors": 8}, cpu)
    pipeline._warm_up(options, {"_target_": "mymodels.knn.CosineKNN", "neighbours": 10}, cpu)
    pipeline._warm_up(options, {"_target_": "mymodels.Torchy", "dtype": "float32"}, cpu)
    assert started == ["float32", "float64", "float32"]


def test_an_evaluation_without_a_progress_bar_says_it_is_still_at_work(monkeypatch, caplog):
    import logging
    import time

    from recoeval_tracking.app import pipeline

    monkeypatch.setattr(_heartbeat, "TICK_SECONDS", 0.05)
    monkeypatch.setattr(pipeline, "_evaluate_now", lambda *a: time.sleep(0.3) or "results")
    model = type("M", (), {"eval_inputs": lambda self, k, users: {}})()
    monkeypatch.setattr(
        "recoeval_tracking.metrics.inputs.with_data_relevance", lambda options, tr, te: options
    )
    split = type("S", (), {"train": None, "test": None, "test_users": None})()
    options = type("O", (), {"k": 5})()
    with caplog.at_level(logging.INFO, logger="recoeval_tracking.app.pipeline"):
        got = pipeline._evaluate(split, model, options, None, {}, None, beat=True)
        said = [r.getMessage() for r in caplog.records]
        caplog.clear()
        pipeline._evaluate(split, model, options, None, {}, None, beat=False)
    assert got == "results"
    assert len(said) >= 3 and all(s.startswith("... still evaluating (") for s in said)
    assert caplog.records == []  # with a bar the bar shows the work


def test_the_terminal_says_how_long_the_folder_and_the_upload_took(tmp_path, caplog, store_uri):
    import logging
    import re

    uri = store_uri
    cfg = tiny_config(plots=True, tracking={"enabled": True, "uri": uri, "experiment": "t"})
    with caplog.at_level(logging.INFO, logger="recoeval_tracking"):
        result = run_job(cfg, tmp_path / "job", echo=True)
    said = "\n".join(r.getMessage() for r in caplog.records)
    timings = re.search(r"^timings: (.*)$", said, re.M)
    assert timings, said
    written = re.search(
        r"; job directory written in ([0-9.]+) s \(plots ([0-9.]+) s\)$", timings[1]
    )
    assert written and 0 < float(written[2]) <= float(written[1]), timings[1]
    run = re.search(r"^MLflow run (\w+) in (\S+) \(logged in ([0-9.]+) s\)$", said, re.M)
    assert run and run[1] == result["run_id"] and run[2] == uri and float(run[3]) > 0, said


@pytest.mark.parametrize("address", [None, "tcp://scheduler:8786"])
def test_the_jobs_own_dask_cluster_keeps_a_worker_its_nanny_restarts(
    monkeypatch, tmp_path, address
):
    """distributed drops a lost worker for good once ``lost-worker-timeout`` (15 s by default)
    has passed without it: a worker killed twice within 15 s, or slow to restart on a busy
    machine, was gone for the rest of the job. The job's own LocalCluster (backend=dask) waits
    far longer, as the cluster of tests/distributed_eval does; a scheduler of the user's keeps
    its own rule."""
    distributed = pytest.importorskip("distributed")
    import contextlib

    import dask

    import recoeval_tracking.distributed as ours
    from recoeval_tracking.app import pipeline
    from recoeval_tracking.distributed import on_dask

    default = dask.config.get("distributed.deploy.lost-worker-timeout")
    seen = {}

    @contextlib.contextmanager
    def started(*args, **kwargs):  # the cluster, or the client of a running scheduler
        seen.setdefault("timeout", dask.config.get("distributed.deploy.lost-worker-timeout"))
        yield object()

    monkeypatch.setattr(distributed, "LocalCluster", started)
    monkeypatch.setattr(distributed, "Client", lambda *a, **k: started())
    monkeypatch.setattr(on_dask, "_client_for", started)
    monkeypatch.setattr(ours, "evaluate_on_dask", lambda *a, **k: "evaluated")
    split = type("Split", (), {"train": None, "test": None})()
    backend = {"kind": "dask", "address": address}
    assert pipeline._evaluate_now(split, {}, None, None, backend, tmp_path) == "evaluated"
    if address is None:
        assert dask.utils.parse_timedelta(seen["timeout"]) >= 600
    else:
        assert seen["timeout"] == default
    assert dask.config.get("distributed.deploy.lost-worker-timeout") == default  # put back
