"""Faults of a distributed evaluation: a worker killed mid-evaluation (SIGKILL by PID) is
survived through Dask's rescheduling with identical values; a lost scheduler raises a clear
error and leaves the job folder marked INCOMPLETE, never half-written as a result."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from commands import clean_env, run_main  # tests/ is on sys.path (tests/conftest.py)

from recoeval_tracking import evaluate
from recoeval_tracking._validation import InputError
from recoeval_tracking.distributed import DistributedError, evaluate_on_dask
from recoeval_tracking.jobdir import begin_job_dir, job_dir_state, read_job_dir
from recoeval_tracking.options import EvalOptions

from .test_dask import assert_same_per_user


def slow_scorer(A, B, pause):
    """A scorer that takes ``pause`` seconds per block (shipped to the workers by value)."""

    def score(users):
        time.sleep(pause)
        return A[users] @ B.T

    return score


def _in_thread(fn):
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as err:  # noqa: BLE001 - handed to the test
            box["error"] = err

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


def _wait(predicate, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


#: Seconds a run with a fault may take on a busy 2-core machine (a quiet one: a few): past
#: it, the run is taken for hung (a run that hung once waited on a dead worker for ever).
RUN_LIMIT = 240


def _ended(thread, box, seconds: float):
    """The value of the run in ``thread``, which must have ended within ``seconds``."""
    thread.join(seconds)
    assert not thread.is_alive(), f"the evaluation did not end within {seconds} s"
    assert "error" not in box, box.get("error")
    return box["value"]


def _busy_with_a_shard(client) -> list[str]:
    """The workers running an evaluation shard, once one does (asserted within 60 s)."""
    busy: list[str] = []

    def running() -> bool:
        busy[:] = [
            w
            for w, keys in client.processing().items()
            if any("recoeval-shard" in str(k) for k in keys)
        ]
        return bool(busy)

    assert _wait(running, 60), "no shard started"
    return busy


def test_a_worker_killed_mid_evaluation_is_survived_with_identical_values(client, data):
    train, test, A, B = data
    want = evaluate(train, test, scorer=slow_scorer(A, B, 0.0), metrics="all", k=5)
    pids = client.run(os.getpid)
    score = slow_scorer(A, B, 0.15)
    thread, box = _in_thread(
        lambda: evaluate_on_dask(
            client,
            train,
            test,
            EvalOptions(metrics="all", k=5, block_rows=10),
            scorer=score,
            shards=4,
        )
    )
    busy = _busy_with_a_shard(client)
    time.sleep(0.5)  # the shard is mid-way (about 30 blocks of 0.15 s)
    victim = pids[busy[0]]
    os.kill(victim, signal.SIGKILL)
    got = _ended(thread, box, RUN_LIMIT)
    assert victim not in got.workers  # its shards ran again elsewhere
    assert_same_per_user(want.per_user, got.per_user)
    assert got.aggregates == pytest.approx(want.aggregates, rel=1e-13)
    assert _wait(lambda: len(client.scheduler_info()["workers"]) == 2, 60)  # nanny restarted it


def test_every_worker_killed_mid_evaluation_is_survived_with_identical_values(client, data):
    """Both workers killed while the shards run: every copy of the shared inputs (the item
    side) is lost with them, so the shards cannot simply run again; the inputs are sent again
    to the restarted workers and the shards not yet gathered run again."""
    train, test, A, B = data
    want = evaluate(train, test, scorer=slow_scorer(A, B, 0.0), metrics=["ndcg", "ap"], k=5)
    pids = client.run(os.getpid)
    score = slow_scorer(A, B, 0.1)
    opts = EvalOptions(metrics=["ndcg", "ap"], k=5, block_rows=10)
    thread, box = _in_thread(
        lambda: evaluate_on_dask(client, train, test, opts, scorer=score, shards=4)
    )
    _busy_with_a_shard(client)
    for pid in pids.values():
        os.kill(pid, signal.SIGKILL)
    got = _ended(thread, box, RUN_LIMIT)
    assert not set(pids.values()) & set(got.workers)
    assert_same_per_user(want.per_user, got.per_user)


def _data_traps():
    """Two functions for ``client.run`` (shipped by value): one makes a worker die (SIGKILL)
    the first time a peer or the scheduler asks it to send or copy data, a worker lost while
    the shared inputs move between workers; the other takes the trap away."""

    def die_when_asked_for_data(dask_worker):
        async def die(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)

        dask_worker.handlers["gather"] = die
        dask_worker.handlers["get_data"] = die

    def alive_again(dask_worker):
        dask_worker.handlers["gather"] = dask_worker.gather
        dask_worker.handlers["get_data"] = dask_worker.get_data

    return die_when_asked_for_data, alive_again


def test_a_worker_lost_while_the_shared_data_moves_does_not_hang_the_run(client, data):
    """The run ends, with the values of a run without a fault, when a worker dies as the
    shared inputs are copied to or from it. Sending them with scatter(broadcast=True) hung
    for ever there: the scheduler's replication retried the dead worker's address in a loop
    (dask/distributed#5704)."""
    train, test, A, B = data
    want = evaluate(train, test, A=A, B=B, metrics=["ndcg", "ap"], k=5)
    victim = sorted(client.scheduler_info()["workers"])[0]
    trap, untrap = _data_traps()
    client.run(trap, workers=[victim])
    try:
        opts = EvalOptions(metrics=["ndcg", "ap"], k=5)
        thread, box = _in_thread(lambda: evaluate_on_dask(client, train, test, opts, A=A, B=B))
        got = _ended(thread, box, RUN_LIMIT)
    finally:  # the victim, when nothing asked it for data (a dead one is not waited for)
        if victim in client.scheduler_info()["workers"]:
            client.run(untrap, workers=[victim])
    assert_same_per_user(want.per_user, got.per_user)


@pytest.fixture
def scheduler(tmp_path):
    """A scheduler and one worker in their own processes (so the scheduler can be killed)."""
    file = tmp_path / "scheduler.json"
    env = clean_env()
    sched = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_scheduler",
            "--scheduler-file",
            str(file),
            "--port",
            "0",
            "--no-dashboard",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert _wait(lambda: file.is_file() and file.stat().st_size > 0, 60)
    time.sleep(0.3)
    address = json.loads(file.read_text())["address"]
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            address,
            "--nthreads",
            "1",
            "--no-nanny",
            "--no-dashboard",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield sched, address
    finally:
        for proc in (worker, sched):
            proc.kill()
            proc.wait(10)


@pytest.mark.parametrize("beside", ["alone", "another_client"])
def test_a_lost_scheduler_is_a_clear_error_and_the_job_folder_stays_incomplete(
    scheduler, data, tmp_path, request, beside
):
    if beside == "another_client":  # a client of another cluster in the process (a notebook's)
        request.getfixturevalue("client")
    sched, address = scheduler
    train, test, A, B = data
    job = begin_job_dir(tmp_path / "job")
    thread, box = _in_thread(
        lambda: evaluate(
            train, test, scorer=slow_scorer(A, B, 0.2), k=5, block_rows=10, client=address
        )
    )
    from distributed import Client

    with Client(address, timeout=30) as watcher:
        assert _wait(lambda: any(watcher.processing().values()), 60), "no shard started"
    sched.kill()
    thread.join(60)
    assert not thread.is_alive()
    err = box.get("error")
    assert isinstance(err, DistributedError), box
    assert address in str(err) and "lost" in str(err) and "INCOMPLETE" in str(err)
    assert job_dir_state(job) == "incomplete"
    with pytest.raises(InputError, match="INCOMPLETE"):
        read_job_dir(job)


def test_an_unreachable_scheduler_fails_the_job_and_leaves_its_folder_incomplete(tmp_path):
    from recoeval_tracking.app.pipeline import run_job

    cfg = {
        "dataset": {"kind": "synthetic", "n_users": 40, "n_items": 30, "seed": 0},
        "split": {"name": "random", "seed": 0},
        "model": {"name": "popularity"},
        "metrics": {"names": ["ndcg"], "k": 5},
        "tracking": {"enabled": False},
        "backend": {"kind": "dask", "address": "tcp://127.0.0.1:9", "timeout": 2.0},
        "plots": False,
        "progress": "false",
        "nthreads": 1,
    }
    out = tmp_path / "job"
    with pytest.raises(
        DistributedError, match="could not reach the Dask scheduler at tcp://127.0.0.1:9"
    ):
        run_job(cfg, out, echo=False)
    assert job_dir_state(out) == "incomplete"
    assert not (out / "metrics.json").exists()


def test_hydra_backend_dask_gives_the_values_of_backend_cpu(client, tmp_path):
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from recoeval_tracking.app.pipeline import run_job
    from recoeval_tracking.app.schema import register_configs

    register_configs()

    configs = Path(__file__).resolve().parents[2] / "configs"
    common = [
        "dataset.n_users=150",
        "dataset.n_items=50",
        "model=popularity",
        "tracking=none",
        "metrics.k=5",
        "plots=false",
        "progress=false",
        "nthreads=1",
    ]

    with initialize_config_dir(version_base="1.3", config_dir=str(configs)):
        cpu = compose("config", overrides=common)
        dask = compose(
            "config",
            overrides=[
                *common,
                "backend=dask",
                f"backend.address={client.scheduler.address}",
                "backend.shards=3",
                "backend.per_user_parts=true",
            ],
        )
        local = compose("config", overrides=[*common, "backend=dask", "backend.n_workers=1"])
    assert cpu.backend.kind == "cpu" and dask.backend.kind == "dask"
    assert local.backend.address is None and dask.backend.threads_per_worker == 1
    jobs = {}
    for name, cfg in (("cpu", cpu), ("dask", dask), ("local", local)):
        jobs[name] = run_job(OmegaConf.to_container(cfg, resolve=True), tmp_path / name, echo=False)
    want = read_job_dir(tmp_path / "cpu")
    for name in ("dask", "local"):
        got = read_job_dir(tmp_path / name)
        assert_same_per_user(want.per_user, got.per_user)
        for key, value in want.metrics.items():
            if not key.endswith("_seconds"):
                assert got.metrics[key] == pytest.approx(value, rel=1e-12, nan_ok=True), key
    assert (tmp_path / "dask" / "per_user.parquet").is_dir()
    assert np.isfinite(jobs["dask"]["metrics"]["ndcg_at_5"])


def test_the_command_reports_an_unreachable_scheduler_in_one_paragraph(tmp_path):
    """What ``recoeval-track`` says and leaves: its entry point runs in this process (its exit
    status and stderr as the process would give them)."""
    args = [
        "backend=dask",
        "backend.address=tcp://127.0.0.1:9",
        "backend.timeout=2",
        "model=popularity",
        "tracking=none",
        "dataset.n_users=40",
        "dataset.n_items=30",
        "metrics.k=5",
        "plots=false",
        "progress=false",
        "hydra.run.dir=job",
    ]
    proc = run_main(args, tmp_path)
    assert proc.returncode != 0
    assert "could not reach the Dask scheduler at tcp://127.0.0.1:9" in proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert job_dir_state(tmp_path / "job") == "incomplete"


# ---------------------------------------------------------------------------------------------
# a worker lost while the shared data is sent (evaluate_from_storage's first seconds)
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stored_split(data, tmp_path_factory):
    train, test, A, B = data
    root = tmp_path_factory.mktemp("stored-faults")
    from recoeval_tracking.data import write_partitioned

    write_partitioned(root / "split", train, test, users_per_part=60)
    np.save(root / "A.npy", A)
    return root


def _from_storage(client, root, B, **kw):
    from recoeval_tracking.distributed import evaluate_from_storage

    return evaluate_from_storage(
        client,
        root / "split",
        EvalOptions(metrics=["ndcg", "p"], k=5),
        user_factors=root / "A.npy",
        item_factors=B,
        **kw,
    )


def _comm_closed():
    from distributed.comm.core import CommClosedError

    return CommClosedError(
        "in <TCP (closed) ConnectionPool.scatter local=tcp://127.0.0.1:1 "
        "remote=tcp://127.0.0.1:2>: Stream is closed"
    )


def test_a_worker_lost_while_the_data_is_sent_is_survived(client, data, stored_split, monkeypatch):
    """The error a worker killed during the scatter raises (seen with a SIGKILL 0.3 s into a
    run sending 64 MB of item factors): the data is sent again to the workers left, and the
    values are those of a run without a fault."""
    _, _, _, B = data
    want = _from_storage(client, stored_split, B)
    real = client.scatter
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise _comm_closed()
        return real(*args, **kwargs)

    monkeypatch.setattr(client, "scatter", flaky)
    got = _from_storage(client, stored_split, B)
    assert len(calls) == 2
    assert_same_per_user(want.per_user, got.per_user)
    assert got.aggregates == pytest.approx(want.aggregates, rel=1e-13)


def test_a_scatter_that_keeps_failing_ends_in_one_paragraph(
    client, data, stored_split, monkeypatch
):
    _, _, _, B = data

    def broken(*args, **kwargs):
        raise _comm_closed()

    monkeypatch.setattr(client, "scatter", broken)
    with pytest.raises(DistributedError) as info:
        _from_storage(client, stored_split, B)
    text = str(info.value)
    assert "a Dask worker was lost while the evaluation's shared data was sent" in text
    assert "3 times" in text and "INCOMPLETE" in text and "\n" not in text


@pytest.mark.slow
def test_a_worker_killed_in_the_first_second_is_survived(client, tmp_path):
    """A real SIGKILL of a worker 0.3 s into a run whose item side is large (32 MB to send to
    each worker): the run ends with the values of a run without a fault, whether the kill
    met the sending of the data (sent again) or the shards (rescheduled)."""
    import scipy.sparse as sp

    from recoeval_tracking.data import write_partitioned

    assert _wait(lambda: len(client.scheduler_info()["workers"]) == 2, 60)
    rng = np.random.default_rng(5)
    m, n, p = 400, 20000, 200
    train = sp.random(m, n, density=0.002, format="csr", random_state=1)
    test = sp.random(m, n, density=0.001, format="csr", random_state=2)
    test = sp.csr_array(test - test.multiply(train > 0))
    write_partitioned(tmp_path / "split", sp.csr_array(train), test, users_per_part=50)
    np.save(tmp_path / "A.npy", rng.standard_normal((m, p)))
    B = rng.standard_normal((n, p))
    want = _from_storage(client, tmp_path, B)
    pids = client.run(os.getpid)
    thread, box = _in_thread(lambda: _from_storage(client, tmp_path, B))
    time.sleep(0.3)
    os.kill(next(iter(pids.values())), signal.SIGKILL)
    assert_same_per_user(want.per_user, _ended(thread, box, RUN_LIMIT).per_user)
    assert _wait(lambda: len(client.scheduler_info()["workers"]) == 2, 60)
