"""Users read from storage by the workers: a split written as a partitioned dataset and factor
files evaluated on a 2-worker LocalCluster give, bit for bit, the per-user values of the local
engine and of the in-memory Dask path on the same split; a missing or corrupt part ends the
run with one paragraph naming the file; a worker killed mid-run costs only its shards."""

from __future__ import annotations

import os
import signal

import numpy as np
import pandas as pd
import pytest

from recoeval_tracking import evaluate
from recoeval_tracking._validation import InputError
from recoeval_tracking.data import write_partitioned
from recoeval_tracking.distributed import evaluate_from_storage, evaluate_on_dask
from recoeval_tracking.jobdir import begin_job_dir, read_job_dir, write_job_dir
from recoeval_tracking.options import EvalOptions

from .test_dask import ALL, assert_same_per_user
from .test_dask_faults import _busy_with_a_shard, _in_thread, _wait, slow_scorer


@pytest.fixture(scope="module")
def stored(data, tmp_path_factory):
    """The tied split written in parts of 40 users, its factors as .npy files."""
    train, test, A, B = data
    root = tmp_path_factory.mktemp("stored")
    ds = write_partitioned(root / "split", train, test, users_per_part=40)
    np.save(root / "A.npy", A)
    np.save(root / "B.npy", B)
    return root, ds


@pytest.fixture(scope="module")
def local(data):
    train, test, A, B = data
    return evaluate(train, test, A=A, B=B, **ALL)


@pytest.mark.parametrize("shards", [1, 3, None])
def test_values_read_from_storage_are_those_of_the_local_and_in_memory_runs(
    client, data, stored, local, shards, tmp_path
):
    train, test, A, B = data
    root, ds = stored
    opts = EvalOptions(**ALL)
    memory = evaluate_on_dask(client, train, test, opts, A=A, B=B, shards=shards)
    job = begin_job_dir(tmp_path / "job")
    got = evaluate_from_storage(
        client,
        (root / "split").as_uri(),
        opts,
        user_factors=root / "A.npy",
        item_factors=root / "B.npy",
        shards=shards,
        per_user_dir=job / "per_user.parquet",
    )
    assert got.n_shards == (shards or 8)  # by default one per part
    assert len(got.per_user) == 0  # the table stayed on the workers' disk
    back = pd.read_parquet(job / "per_user.parquet")
    assert_same_per_user(local.per_user, back)
    assert_same_per_user(memory.per_user, back)
    pd.testing.assert_frame_equal(local.mean_ci(), got.mean_ci(), rtol=1e-12, atol=1e-15)
    assert got.nan_counts == local.nan_counts
    for name in ("coverage_at_5", "gini_at_5", "personalisation_at_5", "novelty_at_5"):
        if name in local.aggregates:  # integer counts: exactly the local value
            assert got.aggregates[name] == local.aggregates[name], name
    assert got.aggregates.keys() == local.aggregates.keys()
    write_job_dir(got, job, plots=False)  # the job folder reads the parts as one table
    assert_same_per_user(local.per_user, read_job_dir(job).per_user)


def test_factors_in_parquet_give_the_values_of_the_npy_files(client, data, stored, local):
    """User factors as a Parquet list column in row groups of 25 users (not aligned with the
    parts of 40: a task reads the groups that hold its rows), item factors as one Parquet column
    per factor: the per-user values of the local engine, bit for bit."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    train, test, A, B = data
    root, ds = stored
    pq.write_table(pa.table({"factors": pa.array(list(A))}), root / "A.parquet", row_group_size=25)
    pq.write_table(pa.table({f"f{j}": B[:, j] for j in range(B.shape[1])}), root / "B.parquet")
    got = evaluate_from_storage(
        client,
        ds,
        EvalOptions(**ALL),
        user_factors=root / "A.parquet",
        item_factors=root / "B.parquet",
        shards=3,
    )
    assert_same_per_user(local.per_user, got.per_user)


def test_item_biases_and_a_scorer_read_only_the_rows(client, data, stored):
    train, test, A, B = data
    root, ds = stored
    for kwargs, want_kwargs in (
        (
            dict(user_factors=root / "A.npy", item_factors=B, item_biases=B[:, 0]),
            dict(A=A, B=B, item_biases=B[:, 0]),
        ),
        (dict(item_biases=B[:, 1]), dict(item_biases=B[:, 1])),
        (dict(scorer=lambda users: A[users] @ B.T), dict(scorer=lambda u: A[u] @ B.T)),
    ):
        want = evaluate(train, test, k=5, ties="index", **want_kwargs)
        got = evaluate_from_storage(client, ds, EvalOptions(k=5, ties="index"), shards=3, **kwargs)
        assert_same_per_user(want.per_user, got.per_user)


def test_a_missing_part_is_named_before_any_task_runs(client, data, stored, tmp_path):
    train, test, A, B = data
    write_partitioned(tmp_path / "ds", train, test, users_per_part=100)
    (tmp_path / "ds" / "users" / "part-000002.parquet").unlink()
    with pytest.raises(InputError) as err:
        evaluate_from_storage(
            client, tmp_path / "ds", EvalOptions(k=5), scorer=lambda u: A[u] @ B.T
        )
    text = str(err.value)
    assert "part-000002.parquet" in text and "is missing" in text and "\n" not in text


def test_a_corrupt_part_read_by_a_worker_is_named(client, data, tmp_path):
    train, test, A, B = data
    write_partitioned(tmp_path / "ds", train, test, users_per_part=100)
    path = tmp_path / "ds" / "users" / "part-000001.parquet"
    path.write_bytes(b"PAR1" + os.urandom(200) + b"PAR1")
    np.save(tmp_path / "A.npy", A)
    with pytest.raises(InputError) as err:
        evaluate_from_storage(
            client,
            tmp_path / "ds",
            EvalOptions(k=5),
            user_factors=tmp_path / "A.npy",
            item_factors=B,
            shards=3,
        )
    text = str(err.value)
    assert str(path) in text and "corrupt or truncated" in text and "\n" not in text


def test_bad_references_name_the_argument(client, data, stored, tmp_path):
    train, test, A, B = data
    root, ds = stored
    np.save(tmp_path / "short.npy", A[:10])
    with pytest.raises(
        InputError,
        match="'user_factors'.*one row per user of the dataset "
        r"\(300",
    ):
        evaluate_from_storage(
            client, ds, EvalOptions(k=5), user_factors=tmp_path / "short.npy", item_factors=B
        )
    with pytest.raises(InputError, match="'item_factors'"):
        evaluate_from_storage(client, ds, EvalOptions(k=5), user_factors=root / "A.npy")
    with pytest.raises(InputError, match="'item_factors'.*does not exist"):
        evaluate_from_storage(
            client,
            ds,
            EvalOptions(k=5),
            user_factors=root / "A.npy",
            item_factors=tmp_path / "none.npy",
        )
    with pytest.raises(InputError, match="not a partitioned dataset"):
        evaluate_from_storage(client, tmp_path, EvalOptions(k=5), item_biases=B[:, 0])


def test_a_worker_killed_mid_run_costs_only_its_shards(client, data, stored):
    train, test, A, B = data
    root, ds = stored
    want = evaluate(train, test, scorer=slow_scorer(A, B, 0.0), metrics="all", k=5)
    pids = client.run(os.getpid)
    thread, box = _in_thread(
        lambda: evaluate_from_storage(
            client,
            ds,
            EvalOptions(metrics="all", k=5, block_rows=10),
            scorer=slow_scorer(A, B, 0.15),
            shards=4,
        )
    )
    busy = _busy_with_a_shard(client)
    os.kill(pids[busy[0]], signal.SIGKILL)
    thread.join(120)
    assert "error" not in box, box.get("error")
    got = box["value"]
    assert pids[busy[0]] not in got.workers
    assert_same_per_user(want.per_user, got.per_user)
    assert _wait(lambda: len(client.scheduler_info()["workers"]) == 2, 60)


# ---------------------------------------------------------------------------------------------
# the app: dataset=parquet_partitioned
# ---------------------------------------------------------------------------------------------


def _cfg(root, backend, model=None, **dataset):
    return {
        "dataset": {"kind": "parquet_partitioned", "path": str(root / "split"), **dataset},
        "split": {"name": "random", "seed": 0},
        "model": model
        or {
            "name": "factors_file",
            "user_factors": str(root / "A.npy"),
            "item_factors": str(root / "B.npy"),
        },
        "metrics": {"names": ["ndcg", "ap", "coverage"], "k": 5, "ties": "noise", "seed": 3},
        "tracking": {"enabled": False},
        "backend": backend,
        "plots": False,
        "progress": "false",
        "nthreads": 1,
    }


def test_the_app_reads_a_stored_split_by_reference_on_dask_and_whole_on_cpu(
    client, data, stored, tmp_path, monkeypatch
):
    from recoeval_tracking.app.pipeline import run_job
    from recoeval_tracking.data import PartitionedDataset

    train, test, A, B = data
    root, ds = stored
    want = evaluate(
        train, test, A=A, B=B, metrics=["ndcg", "ap", "coverage"], k=5, ties="noise", seed=3
    )
    loaded: list[str] = []
    real_load = PartitionedDataset.load
    monkeypatch.setattr(
        PartitionedDataset, "load", lambda self: loaded.append(self.url) or real_load(self)
    )
    dask = {"kind": "dask", "address": client.scheduler.address, "shards": 3}
    out = run_job(_cfg(root, dask), tmp_path / "dask", echo=False)
    assert loaded == []  # never the user side in this process
    assert (tmp_path / "dask" / "per_user.parquet").is_dir()
    job = read_job_dir(tmp_path / "dask")
    assert_same_per_user(want.per_user, job.per_user)
    assert out["dataset"]["split"]["strategy"] == "stored"
    assert out["dataset"]["n_users"] == 300 and out["dataset"]["parts"] == 8
    assert out["metrics"]["coverage_at_5"] == want.aggregates["coverage_at_5"]
    run_job(_cfg(root, {"kind": "cpu"}), tmp_path / "cpu", echo=False)
    assert len(loaded) == 1  # backend=cpu loads the stored split whole
    assert_same_per_user(want.per_user, read_job_dir(tmp_path / "cpu").per_user)


def test_the_app_refuses_preparation_of_a_stored_split(stored, tmp_path):
    from recoeval_tracking.app.pipeline import run_job

    root, _ = stored
    with pytest.raises(
        InputError, match="dataset.k_core cannot be applied to dataset=parquet_partitioned"
    ):
        run_job(_cfg(root, {"kind": "cpu"}, k_core=3), tmp_path / "job", echo=False)


def test_the_command_names_a_missing_part_in_one_paragraph(client, data, tmp_path):
    """What the command says, run in this process (its exit status and stderr as the console
    script's): the message comes before any task runs, so no process of its own is needed."""
    from commands import run_main

    train, test, A, B = data
    write_partitioned(tmp_path / "split", train, test, users_per_part=100)
    np.save(tmp_path / "A.npy", A)
    np.save(tmp_path / "B.npy", B)
    (tmp_path / "split" / "users" / "part-000001.parquet").unlink()
    args = [
        "dataset=parquet_partitioned",
        "dataset.path=split",
        "model=factors_file",
        "model.user_factors=A.npy",
        "model.item_factors=B.npy",
        "backend=dask",
        f"backend.address={client.scheduler.address}",
        "tracking=none",
        "metrics.k=5",
        "plots=false",
        "progress=false",
        "hydra.run.dir=job",
    ]
    proc = run_main(args, tmp_path)
    assert proc.returncode != 0, proc.stderr
    assert "part-000001.parquet" in proc.stderr and "is missing" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_remote_file_system_is_read_through_fsspec(data, local):
    """The dataset and both factor files on fsspec's in-memory file system (a remote store's
    code path: every open, listing and ranged read goes through fsspec, no local path), read by
    the threads of an in-process cluster (the memory file system is one process's)."""
    import fsspec
    from distributed import Client, LocalCluster

    train, test, A, B = data
    fs = fsspec.filesystem("memory")
    write_partitioned("memory://remote/split", train, test, users_per_part=40)
    for name, array in (("A", A), ("B", B)):
        with fs.open(f"/remote/{name}.npy", "wb") as fh:
            np.save(fh, array)
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as c,
    ):
        got = evaluate_from_storage(
            c,
            "memory://remote/split",
            EvalOptions(**ALL),
            user_factors="memory://remote/A.npy",
            item_factors="memory://remote/B.npy",
            shards=3,
        )
    assert_same_per_user(local.per_user, got.per_user)
    fs.rm("/remote", recursive=True)
