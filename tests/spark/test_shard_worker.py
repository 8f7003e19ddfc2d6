"""A Spark Python worker's garbage collector: the objects a reused worker holds are set aside
(``gc.freeze``) from its second task on, so that the full collection ``pyspark.daemon`` runs
after every task no longer walks the engine's modules; outside a Spark task (a driver, a
notebook) the collector is left as it is."""

from __future__ import annotations

import gc

import pytest

from recoeval_tracking.spark import _shard


@pytest.fixture
def unfrozen():
    assert gc.get_freeze_count() == 0  # nothing in the test process freezes on its own
    yield
    gc.unfreeze()


def test_a_worker_freezes_from_its_second_task(monkeypatch, unfrozen):
    monkeypatch.setattr(_shard, "_task_context", lambda: object())
    monkeypatch.setattr(_shard, "_WORKER_TASKS", [0])
    _shard.settle_worker()  # the first task: the daemon's collection has not run yet
    assert gc.get_freeze_count() == 0
    _shard.settle_worker()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    made = [[] for _ in range(10_000)]  # tracked objects a third freeze would take
    _shard.settle_worker()  # later tasks freeze nothing more (frozen objects may be freed)
    assert gc.get_freeze_count() <= frozen  # a third freeze would add the 10,000 lists
    del made
    cycle: list = []
    cycle.append(cycle)  # garbage made after the freeze is collected as before
    del cycle
    assert gc.collect() >= 1


def test_outside_a_spark_task_nothing_is_frozen(monkeypatch, unfrozen):
    monkeypatch.setattr(_shard, "_task_context", lambda: None)
    monkeypatch.setattr(_shard, "_WORKER_TASKS", [0])
    for _ in range(3):
        _shard.settle_worker()
    assert gc.get_freeze_count() == 0
    assert _shard._WORKER_TASKS == [0]


def test_the_task_context_is_none_on_the_driver():
    pytest.importorskip("pyspark")
    assert _shard._task_context() is None
