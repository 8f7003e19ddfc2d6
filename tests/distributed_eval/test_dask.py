"""Distributed evaluation on a 2-worker LocalCluster gives the local engine's values: per-user
values bit-identical for any number of shards (the tie keys of a shard's rows are those of their
global rows), means and intervals equal up to float summation order, catalogue metrics exactly
equal (merged from per-item counts), and the per-user table written by the workers as Parquet
parts reads back through the job directory."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from recoeval_tracking import evaluate
from recoeval_tracking._validation import InputError
from recoeval_tracking.distributed import ShardedResults, evaluate_on_dask, shard_bounds
from recoeval_tracking.jobdir import begin_job_dir, job_dir_state, read_job_dir, write_job_dir
from recoeval_tracking.metrics.evaluate import compute
from recoeval_tracking.options import EvalOptions

ALL = dict(metrics="all", k=5, cumulative=True, return_topk=True, ties="noise", seed=3)


def assert_same_per_user(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """Same columns, same dtypes, every value bit-identical (NaN where NaN)."""
    assert list(a.columns) == list(b.columns)
    for c in a.columns:
        x, y = a[c].to_numpy(), b[c].to_numpy()
        assert x.dtype == y.dtype, c
        if x.dtype.kind == "f":
            assert np.array_equal(x.view(np.int64), y.view(np.int64)), c  # bit for bit
        else:
            assert np.array_equal(x, y), c


@pytest.fixture(scope="module")
def local(data):
    train, test, A, B = data
    return evaluate(train, test, A=A, B=B, **ALL)


def test_shards_hold_about_the_same_number_of_test_entries():
    n_test = np.array([50, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 40, 2, 0, 0])
    b = shard_bounds(n_test, 3)
    assert b[0] == 0 and b[-1] == len(n_test) and np.all(np.diff(b) > 0)
    per_shard = np.add.reduceat(n_test, b[:-1])
    assert per_shard.sum() == n_test.sum()
    # a shard ends at the first row where a third of the entries is reached: 50 | 8+40 | 2
    assert list(per_shard) == [50, 48, 2]
    assert list(shard_bounds(np.zeros(4, dtype=int), 3)) == [0, 4]


def test_a_shard_draws_the_tie_keys_of_its_global_rows(data):
    """Locally, rows lo..m evaluated alone with user_base=lo give the values of the whole run;
    without it the tie keys of other users are drawn, and the values differ."""
    train, test, A, B = data
    opts = EvalOptions(metrics=["ndcg", "ap", "roc_auc"], k=5, ties="noise", seed=3)
    whole = compute(train, test, opts, A=A, B=B)
    lo = 120
    shifted = compute(train[lo:], test[lo:], opts, A=A[lo:], B=B, user_base=lo)
    unshifted = compute(train[lo:], test[lo:], opts, A=A[lo:], B=B)
    assert np.array_equal(shifted.out, whole.out[:, lo:], equal_nan=True)
    assert np.array_equal(shifted.whole, whole.whole[:, lo:], equal_nan=True)
    assert not np.array_equal(unshifted.out, whole.out[:, lo:], equal_nan=True)


@pytest.mark.parametrize("shards", [1, 2, 3, 7])
def test_per_user_values_are_bit_identical_for_any_number_of_shards(client, data, local, shards):
    train, test, A, B = data
    got = evaluate_on_dask(client, train, test, EvalOptions(**ALL), A=A, B=B, shards=shards)
    assert isinstance(got, ShardedResults) and got.n_shards == shards
    assert_same_per_user(local.per_user, got.per_user)
    assert local.curves_per_user.keys() == got.curves_per_user.keys()
    for name, arr in local.curves_per_user.items():
        assert np.array_equal(arr, got.curves_per_user[name], equal_nan=True), name
    assert np.array_equal(local.topk, got.topk)
    assert got.fingerprint == local.fingerprint


def test_means_intervals_and_catalogue_metrics_are_merged_exactly(client, data, local):
    train, test, A, B = data
    got = evaluate(train, test, A=A, B=B, client=client, **ALL)
    # which worker runs a shard is the scheduler's choice (on a busy machine one worker may
    # take every shard); what the evaluation guarantees is every shard merged exactly once:
    # the default 2 shards per worker thread, each user's row once, in order, and the counts
    # of the intervals (mean_ci's n, below) those of the local run
    assert got.n_shards == len(got.workers) == 4
    assert got.per_user["user_id"].tolist() == local.per_user["user_id"].tolist()
    pd.testing.assert_frame_equal(local.mean_ci(), got.mean_ci(), rtol=1e-12, atol=1e-15)
    pd.testing.assert_frame_equal(local.curves, got.curves, rtol=1e-12, atol=1e-15)
    pd.testing.assert_frame_equal(local.curves_ci(), got.curves_ci(), rtol=1e-12, atol=1e-15)
    assert got.nan_counts == local.nan_counts
    assert local.nan_counts["no_test"] >= 5 and local.nan_counts["all_equal"] > 0
    assert got.n_users_evaluated == local.n_users_evaluated
    counted = [
        "coverage_at_5",
        "aggregated_diversity_at_5",
        "entropy_at_5",
        "gini_at_5",
        "personalisation_at_5",
        "gini_items_at_5",
        "entropy_mean_at_5",
    ]
    for name in counted:  # from summed integer counts: exactly the local value
        assert got.aggregates[name] == local.aggregates[name], name
    # from summed parts (numerators and denominators, sums of logarithms)
    parted = [
        k for k in local.aggregates if k.startswith(("p_pooled", "gm_map", "pop_rsp", "pop_reo"))
    ]
    assert len(parted) == 4, sorted(local.aggregates)
    for name in parted:
        assert got.aggregates[name] == pytest.approx(
            local.aggregates[name], rel=1e-12, nan_ok=True
        ), name
    named = dict(ALL, metrics=["gauc"])  # out of "all" (average-rank ties), named here
    assert evaluate(train, test, A=A, B=B, client=client, **named).aggregates[
        "gauc"
    ] == pytest.approx(evaluate(train, test, A=A, B=B, **named).aggregates["gauc"], rel=1e-13)
    # coverage by its definition, from the lists of the evaluated users
    ok = (local.per_user["nan_reason"] == "").to_numpy()
    listed = np.unique(local.topk[ok][local.topk[ok] >= 0])
    assert got.aggregates["coverage_at_5"] == len(listed) / B.shape[0]
    # the means are not an average of shard means: shards of unequal sizes would bias that
    assert got.means["ndcg_at_5"] == pytest.approx(
        np.nanmean(local.per_user["ndcg_at_5"]), rel=1e-13
    )


def test_any_score_source_and_tie_policy(client, data):
    train, test, A, B = data
    dense = A @ B.T
    ranked = np.argsort(-dense, axis=1, kind="stable")[:, :8]
    cases = [
        dict(scorer=lambda users: A[users] @ B.T, ties="index"),  # shipped with cloudpickle
        dict(scores=dense, ties="pessimistic"),
        dict(ranked=ranked),
        dict(item_biases=B[:, 0], ties="average"),
        dict(A=A, B=B, profile="recbole"),
        dict(A=A, B=B, user_ids=np.array([f"u{7 * i}" for i in range(A.shape[0])][::-1])),
    ]
    for case in cases:
        want = evaluate(train, test, k=5, **case)
        got = evaluate(train, test, k=5, client=client, **case)
        assert_same_per_user(want.per_user, got.per_user)
        assert want.aggregates.keys() == got.aggregates.keys()


def _parts_into(job, client, data, shards: int):
    """Every metric on Dask, the per-user values left as parts in the job folder."""
    train, test, A, B = data
    return evaluate_on_dask(
        client,
        train,
        test,
        EvalOptions(**ALL),
        A=A,
        B=B,
        shards=shards,
        per_user_dir=job / "per_user.parquet",
    )


def test_the_per_user_parts_read_back_through_the_job_folder(client, data, local, tmp_path):
    job = begin_job_dir(tmp_path / "job")
    assert job_dir_state(job) == "incomplete"
    got = _parts_into(job, client.scheduler.address, data, shards=4)
    assert len(got.per_user) == 0 and list(got.per_user.columns) == list(local.per_user.columns)
    assert sorted(p.name for p in (job / "per_user.parquet").iterdir()) == [
        f"part-{j:06d}.parquet" for j in range(4)
    ]
    assert got.means.keys() == local.means.keys()
    for key, value in local.means.items():
        assert got.means[key] == pytest.approx(value, rel=1e-12, nan_ok=True), key
    write_job_dir(got, job, plots=False)
    back = read_job_dir(job)
    assert job_dir_state(job) == "complete"
    assert_same_per_user(local.per_user, back.per_user)
    assert back.metrics["ndcg_at_5"] == pytest.approx(local.means["ndcg_at_5"], rel=1e-12)
    assert back.metrics["coverage_at_5"] == local.aggregates["coverage_at_5"]
    assert not math.isnan(back.metrics["ndcg_at_5_ci95_low"])
    # the same folder rewritten by a local run holds one file again
    write_job_dir(local, job, plots=False)
    assert (job / "per_user.parquet").is_file()
    assert_same_per_user(local.per_user, read_job_dir(job).per_user)


def test_bad_clients_and_options_are_refused_with_the_argument_named(client, data):
    train, test, A, B = data
    with pytest.raises(InputError, match="'client'"):
        evaluate(train, test, A=A, B=B, client=42)
    with pytest.raises(InputError, match="'shards'"):
        evaluate_on_dask(client, train, test, EvalOptions(), A=A, B=B, shards=0)


def test_a_job_folder_with_per_user_parts_goes_to_mlflow_and_back(
    client, data, local, tmp_path, store_uri
):
    from recoeval_tracking.tracking.runs import log_job_dir
    from recoeval_tracking.tracking.search import download_job_artifacts

    job = begin_job_dir(tmp_path / "job")
    got = _parts_into(job, client, data, shards=3)
    write_job_dir(got, job, plots=False)
    run_id = log_job_dir(job, tracking_uri=store_uri)
    back = read_job_dir(download_job_artifacts(run_id, tmp_path / "down", tracking_uri=store_uri))
    assert sorted(p.name for p in (tmp_path / "down" / "per_user.parquet").iterdir()) == [
        f"part-{j:06d}.parquet" for j in range(3)
    ]
    assert_same_per_user(local.per_user, back.per_user)


def test_moments_of_disjoint_parts_merge_into_those_of_the_whole():
    from recoeval_tracking.distributed.shards import Moments

    rng = np.random.default_rng(5)
    values = rng.normal(3.0, 2.0, 1001)
    values[rng.random(1001) < 0.1] = np.nan
    cuts = [0, 1, 200, 201, 650, 1001]  # an empty part and parts of one value included
    merged = Moments.of(values[:0])
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        merged = merged.merge(Moments.of(values[lo:hi]))
    v = values[~np.isnan(values)]
    assert int(merged.n) == v.size
    assert float(merged.sum) == pytest.approx(v.sum(), rel=1e-13)
    assert float(merged.m2) == pytest.approx(((v - v.mean()) ** 2).sum(), rel=1e-12)


def test_users_without_a_list_are_counted_over_every_shard(client, data):
    """Lists from (user, item) pairs for the even users only: the count of evaluated users
    without a list is the whole run's (not one shard's), and ``skip`` makes exactly those users
    NaN in every shard, as locally."""
    from recoeval_tracking import RankedLists

    train, test, A, B = data
    m = test.shape[0]
    top = np.argsort(-(A @ B.T), axis=1, kind="stable")[:, :8]
    users = np.repeat(np.arange(0, m, 2), 8)
    items = top[::2].ravel()
    ranks = np.tile(np.arange(8.0), users.size // 8)
    evaluated = int((np.diff(test.indptr) > 0).sum())
    odd_evaluated = int((np.diff(test.indptr)[1::2] > 0).sum())
    for rule in ("zero", "skip"):
        lists = RankedLists.from_pairs(users, items, ranks, m, missing_users=rule)
        with pytest.warns(UserWarning, match=f"{odd_evaluated} of {evaluated} evaluated users"):
            want = evaluate(train, test, ranked=lists, k=5)
        got = evaluate_on_dask(client, train, test, EvalOptions(k=5), ranked=lists, shards=4)
        assert_same_per_user(want.per_user, got.per_user)
        assert got.definitions["source"] == want.definitions["source"]
        assert want.definitions["source"]["users_without_list"] == odd_evaluated
        assert got.fingerprint == want.fingerprint
    assert (got.per_user["nan_reason"] == "no_list").sum() == odd_evaluated
    lists = RankedLists.from_pairs(users, items, ranks, m, missing_users="error")
    with pytest.raises(InputError, match=f"{odd_evaluated} of {evaluated} evaluated users"):
        evaluate_on_dask(client, train, test, EvalOptions(k=5), ranked=lists, shards=4)
