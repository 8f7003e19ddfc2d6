"""Jobs on other machines agree on one sweep parent through the store alone.

Processes that share no memory and take no lock each call :func:`find_or_create_sweep_parent`
for the same sweep id at the same moment (a barrier) and log a child under what it got. However
many parents the race leaves, closing the sweep (:func:`finish_sweep_parent`) ends with one
active parent holding every child.

They are forked by a ``forkserver``: a fresh interpreter, not this one (no store, connection or
lock of the test process is inherited), that imports MLflow and the sweep functions once, so
that each job does not pay that import again (with ``spawn``, 4 x 2-3 s of CPU). The jobs open
their own store connections after the fork, as jobs on other machines would.
"""

from __future__ import annotations

import multiprocessing as mp

import pytest

from recoeval_tracking.tracking.sweeps import (
    create_sweep_parent,
    find_or_create_sweep_parent,
    find_sweep_parent_run,
    finish_sweep_parent,
)

N_JOBS = 4


def _job(uri: str, sweep_id: str, barrier, out) -> None:
    from mlflow import MlflowClient

    barrier.wait(timeout=120)
    parent = find_or_create_sweep_parent(sweep_id, tracking_uri=uri, experiment="race")
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("race")
    child = client.create_run(
        exp.experiment_id, tags={"mlflow.parentRunId": parent, "recoeval.sweep_id": sweep_id}
    )
    client.log_metric(child.info.run_id, "ndcg_at_10", 0.1 + len(child.info.run_id) % 7 / 10)
    client.set_terminated(child.info.run_id, "FINISHED")
    out.put((parent, child.info.run_id))


def _active(client, exp_id: str, sweep_id: str):
    runs = client.search_runs(
        [exp_id], filter_string=f"tags.`recoeval.sweep_id` = '{sweep_id}'", max_results=100
    )
    parents = [r for r in runs if r.data.tags.get("recoeval.sweep_parent") == "true"]
    children = [r for r in runs if r.data.tags.get("recoeval.sweep_parent") != "true"]
    return parents, children


@pytest.fixture
def forkserver():
    """The ``forkserver`` context, its server importing MLflow and this module once; stopped
    (and waited for) afterwards, so that no idle server outlives the test and its CPU time is
    counted with the test's."""
    from multiprocessing import forkserver as server

    ctx = mp.get_context("forkserver")
    # no effect if this worker already started its forkserver: the jobs then import on demand
    ctx.set_forkserver_preload(["mlflow", "recoeval_tracking.tracking.sweeps", __name__])
    yield ctx
    server._forkserver._stop()


def test_racing_jobs_end_with_one_parent(store_uri, forkserver):
    from mlflow import MlflowClient

    create_sweep_parent(tracking_uri=store_uri, experiment="race", sweep_id="warmup")
    ctx = forkserver
    barrier, out = ctx.Barrier(N_JOBS), ctx.Queue()
    procs = [
        ctx.Process(target=_job, args=(store_uri, "racing0001", barrier, out))
        for _ in range(N_JOBS)
    ]
    for p in procs:
        p.start()
    got = [out.get(timeout=240) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    client = MlflowClient(store_uri)
    exp_id = client.get_experiment_by_name("race").experiment_id
    first = find_sweep_parent_run(client, exp_id, "racing0001")
    assert first is not None
    # every job linked to a parent that was the first one it saw; losers deleted their own
    assert {p for p, _ in got} <= {
        r.info.run_id for r in client.search_runs([exp_id], run_view_type=3, max_results=100)
    }
    finish_sweep_parent(first.info.run_id, tracking_uri=store_uri, metrics=["ndcg_at_10"])
    parents, children = _active(client, exp_id, "racing0001")
    assert [p.info.run_id for p in parents] == [first.info.run_id]
    assert sorted(c.info.run_id for c in children) == sorted(c for _, c in got)
    assert all(c.data.tags["mlflow.parentRunId"] == first.info.run_id for c in children)
    closed = client.get_run(first.info.run_id)
    assert closed.info.status == "FINISHED"
    assert closed.data.metrics["sweep_jobs"] == N_JOBS
    best = max(c.data.metrics["ndcg_at_10"] for c in children)
    assert closed.data.metrics["best_ndcg_at_10"] == pytest.approx(best)


def test_a_found_parent_is_reused_and_duplicates_are_adopted(store_uri):
    """Deterministic form of the race: two parents exist for one sweep (two jobs created at the
    same moment, each keeping its own) and a child under each."""
    from mlflow import MlflowClient

    a = create_sweep_parent(tracking_uri=store_uri, experiment="race", sweep_id="dup0000001")
    b = create_sweep_parent(tracking_uri=store_uri, experiment="race", sweep_id="dup0000001")
    client = MlflowClient(store_uri)
    first = min(
        (client.get_run(a.run_id), client.get_run(b.run_id)),
        key=lambda r: (r.info.start_time, r.info.run_id),
    )
    assert (
        find_or_create_sweep_parent("dup0000001", tracking_uri=store_uri, experiment="race")
        == first.info.run_id
    )
    kids = [
        client.create_run(
            a.experiment_id, tags={"mlflow.parentRunId": p, "recoeval.sweep_id": "dup0000001"}
        )
        for p in (a.run_id, b.run_id)
    ]
    other = b.run_id if first.info.run_id == a.run_id else a.run_id
    finish_sweep_parent(other, tracking_uri=store_uri)  # whichever the launcher knew
    parents, children = _active(client, a.experiment_id, "dup0000001")
    assert [p.info.run_id for p in parents] == [other]
    assert sorted(c.info.run_id for c in children) == sorted(k.info.run_id for k in kids)
    assert all(c.data.tags["mlflow.parentRunId"] == other for c in children)
