"""One Dask cluster for the distributed-evaluation tests: ``LocalCluster(n_workers=2,
threads_per_worker=1, processes=True)``, started once per package (a worker process loads the
compiled kernels once) and kept whole (a worker killed by a test comes back), and small data
with many tied scores, so that the tie keys matter.

The folder is not named ``distributed`` so that it never shadows the ``distributed`` package.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("distributed")


def tied_data(m: int = 300, n: int = 90, p: int = 4, seed: int = 0):
    """Train and test (disjoint, test values 1..3) and integer factors in {-1, 0, 1}, so that
    many scores tie; a few users without test entries and one without train entries."""
    rng = np.random.default_rng(seed)
    train = (rng.random((m, n)) < 0.08).astype(np.float64)
    test = ((rng.random((m, n)) < 0.06) & (train == 0)) * rng.integers(1, 4, (m, n))
    test[:5] = 0  # no test entry: NaN by rule
    train[7] = 0  # cold start (evaluated: consider_cold_start is True)
    A = rng.integers(-1, 2, (m, p)).astype(np.float64)
    B = rng.integers(-1, 2, (n, p)).astype(np.float64)
    return sp.csr_array(train), sp.csr_array(test.astype(np.float64)), A, B


#: How long the cluster waits for a killed worker to come back before it drops it for good.
#: Dask's default, 15 s, dropped a worker killed again within 15 s of a kill (a test that kills
#: one after another), or whose restart took 15 s on a busy machine: the cluster then had one
#: worker (which took every shard) or none (a run waited for ever). The nannies restart every
#: worker the tests kill; the cluster must keep them.
LOST_WORKER_TIMEOUT = "1h"


@pytest.fixture(scope="package")
def client():
    import dask
    from distributed import Client, LocalCluster

    with (
        dask.config.set({"distributed.deploy.lost-worker-timeout": LOST_WORKER_TIMEOUT}),
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


@pytest.fixture(autouse=True)
def _both_workers(request):
    """Each test that uses the cluster starts with both workers up: a worker killed by the
    test before comes back through its nanny, which takes seconds on a busy machine; a test
    started meanwhile saw one worker take every shard (and a kill then left none)."""
    if "client" in request.fixturenames:
        request.getfixturevalue("client").wait_for_workers(2, timeout=180)
    yield


@pytest.fixture(scope="package")
def data():
    return tied_data()
