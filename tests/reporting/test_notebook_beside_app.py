"""A notebook's ``Results`` sits beside the app's runs (issue #47, items 1 and 2; #44).

The app runs a job on a small synthetic split (``tracking=none``); the same evaluation in
Python, ``rt.evaluate(split, ...)`` with the defaults, carries the split fingerprint the job's
``dataset.json`` records, breaks ties with the same seed, and defines every metric alike
(whether curves were computed and other metrics' settings enter no metric's fingerprint), so
``rt.compare({"app": job, "notebook": results})`` with its defaults pairs them user by user.
Results of two random splits, and two job folders of different data, are refused with both
fingerprints named.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recoeval_tracking as rt
from recoeval_tracking._validation import InputError
from recoeval_tracking.app.pipeline import run_job

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ for the app's tiny config
from app.test_pipeline import tiny_config  # noqa: E402

N_USERS, N_ITEMS = 150, 80


def _app_config(data_seed: int = 0, n_users: int = N_USERS) -> dict:
    """The app's job: synthetic data, a random split (seed 0), popularity (heavy score ties),
    metrics=standard at K=10 with curves, ties noise with the top-level seed 0."""
    metrics = {
        "names": ["standard"],
        "profile": None,
        "k": 10,
        "cumulative": True,
        "ties": "noise",
        "seed": 0,
    }
    cfg = tiny_config(model={"name": "popularity"}, metrics=metrics)
    cfg["dataset"] = {**cfg["dataset"], "n_users": n_users, "n_items": N_ITEMS, "seed": data_seed}
    return cfg


def _notebook_split(data_seed: int = 0, split_seed: int = 0):
    X = rt.make_synthetic(n_users=N_USERS, n_items=N_ITEMS, seed=data_seed)
    return rt.make_split("random", X, seed=split_seed, min_train=1)


def _popularity_results(split, **options):
    """The notebook's evaluation, with rt.evaluate's defaults (no seed given)."""
    part = split.test_split()
    model = rt.make_model("popularity").fit(part.train.matrix)
    return rt.evaluate(split, scores=model.score_source(), metrics="standard", k=10, **options)


@pytest.fixture(scope="module")
def app_job(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("app") / "job"
    run_job(_app_config(), out, echo=False)
    return out


def test_notebook_results_pair_with_the_app_job_by_default(app_job):
    split = _notebook_split()
    results = _popularity_results(split)  # no curves: the app's job computed them
    recorded = json.loads((app_job / "dataset.json").read_text())
    assert results.split_fingerprint == split.fingerprint == recorded["split_fingerprint"]

    cmp = rt.compare({"app": app_job, "notebook": results})
    assert cmp.left_out.empty  # no metric left out for either system
    assert set(cmp.systems) == {"app", "notebook"}
    summary = cmp.summary()
    assert set(summary["metric"]) >= {"p_at_10", "ndcg_at_10", "aplt_at_10"}
    nb = summary[summary["system"] == "notebook"]
    assert (nb["wins"] == 0).all() and (nb["losses"] == 0).all()

    # identical per-user values, bit for bit (the tie seed is the app's)
    job = pd.read_parquet(app_job / "per_user.parquet").set_index("user_id")
    mine = results.per_user.set_index("user_id").loc[job.index]
    assert (job["n_tied_topk"] > 0).any() if "n_tied_topk" in job else True
    for col in results.metric_columns:
        a, b = job[col].to_numpy(np.float64), mine[col].to_numpy(np.float64)
        assert np.array_equal(a, b, equal_nan=True), col


def test_the_old_tie_seed_gives_other_values_on_tied_users(app_job):
    """Popularity ties items of equal counts: the notebook's former default (seed=1) drew other
    orders, so tied users' values differed from the app's while the means were close."""
    split = _notebook_split()
    new, old = _popularity_results(split), _popularity_results(split, seed=1)
    assert not np.array_equal(
        new.per_user["ap_at_10"].to_numpy(), old.per_user["ap_at_10"].to_numpy(), equal_nan=True
    )


def test_results_of_two_random_splits_are_refused_naming_both():
    a, b = _notebook_split(split_seed=0), _notebook_split(split_seed=1)
    assert a.fingerprint != b.fingerprint
    # a random split of one fraction keeps every user's counts: only the split tells them apart
    assert a.per_user["n_train"].equals(b.per_user["n_train"])
    with pytest.raises(InputError) as err:
        rt.compare({"a": _popularity_results(a), "b": _popularity_results(b)})
    assert a.fingerprint in str(err.value) and b.fingerprint in str(err.value)
    assert "split fingerprint differs" in str(err.value)


def test_results_of_a_splits_parts_two_splits_refused_by_the_parts():
    """Evaluated on the parts (no split fingerprint), the parts' fingerprints stand in."""
    runs = {}
    for seed in (0, 1):
        s = _notebook_split(split_seed=seed)
        model = rt.make_model("popularity").fit(s.train.matrix)
        runs[f"split{seed}"] = rt.evaluate(s.train, s.test, scores=model.score_source())
    with pytest.raises(InputError, match="the evaluated users or parts differ"):
        rt.compare(runs)


def test_parts_results_beside_a_job_say_how_to_carry_the_split(app_job):
    split = _notebook_split()
    model = rt.make_model("popularity").fit(split.train.matrix)
    results = rt.evaluate(split.train, split.test, scores=model.score_source(), metrics="standard")
    with pytest.raises(InputError) as err:
        rt.compare({"app": app_job, "notebook": results})
    text = str(err.value)
    assert "<not recorded>" in text and "rt.evaluate(split, ...)" in text
    assert "replicate_key" not in text.split(".")[0]  # not the 'seed' no run of it has


def test_a_split_and_test_together_are_refused():
    split = _notebook_split()
    with pytest.raises(InputError, match="'test'"):
        rt.evaluate(split, split.test, item_biases=np.zeros(N_ITEMS))
    with pytest.raises(InputError, match="'test'"):
        rt.evaluate(split.train, item_biases=np.zeros(N_ITEMS))


def test_a_validation_split_is_evaluated_on_test_with_validation_excluded():
    X = rt.make_synthetic(n_users=N_USERS, n_items=N_ITEMS, seed=0)
    split = rt.make_split("random", X, seed=0, validation_fraction=0.1)
    res = rt.evaluate(split, item_biases=np.arange(N_ITEMS, dtype=float), k=5)
    part = split.test_split()
    assert res.split_fingerprint == part.fingerprint != split.fingerprint
    assert np.array_equal(res.per_user["n_train"].to_numpy(), part.train.user_counts())
    val = rt.evaluate(split.validation_split(), item_biases=np.arange(N_ITEMS, dtype=float), k=5)
    assert val.split_fingerprint == split.validation_split().fingerprint


def test_two_job_folders_of_different_data_are_refused_naming_both(app_job, tmp_path):
    """Another size of the synthetic data (``dataset.n_users`` tells them apart): one run each
    is no study over two datasets, but a comparison of two data mixed up (a seed of the data
    would draw replicates)."""
    other = tmp_path / "other"
    run_job(_app_config(n_users=N_USERS - 10), other, echo=False)
    fps = [
        json.loads((p / "dataset.json").read_text())["data_fingerprint"] for p in (app_job, other)
    ]
    assert fps[0] != fps[1]
    with pytest.raises(InputError) as err:
        rt.compare({"a": app_job, "b": other})
    text = str(err.value)
    assert "data fingerprint differs" in text and fps[0] in text and fps[1] in text
    assert "different datasets" in text
    # said to be two datasets, they are (one system in each)
    named = rt.compare({"d150": {"pop": app_job}, "d140": {"pop": other}})
    assert named.datasets == ["d150", "d140"]
