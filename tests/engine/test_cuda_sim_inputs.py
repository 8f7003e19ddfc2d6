"""GPU arrays handed to the ``cuda`` backend, and a shard's global user offset, under numba's CUDA
simulator (run in a process of its own by ``test_cuda_backend.py``, as ``test_cuda_sim.py``).

The GPU arrays are :class:`~._device_fake.FakeDeviceArray`: host memory behind the CUDA Array
Interface, which the simulated backend views in place. Every test asserts that no conversion to a
host array was made (the fake counts them) and compares with the CPU backend given the same
values as numpy arrays; the GEMM is watched to see that it reads the given memory itself.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.engine import cuda_arrays

from ._device_fake import FakeDeviceArray
from .test_cuda_sim import _assert_same, _data

pytestmark = pytest.mark.skipif(
    os.environ.get("NUMBA_ENABLE_CUDASIM") != "1",
    reason="runs in its own process under NUMBA_ENABLE_CUDASIM=1 (test_cuda_backend.py)",
)


#: The settings of the runs here (every metric, noise ties, curves and lists); tests change some.
SETTINGS = dict(
    metrics="all",
    k=6,
    ties="noise",
    cumulative=True,
    return_topk=True,
    block_rows=8,
    nthreads=1,
)


def _run(train, test, backend: str, **kw) -> rt.Results:
    return rt.evaluate(train, test, backend=backend, **(SETTINGS | kw))


@pytest.fixture
def gemm_reads(monkeypatch):
    """The arrays each device GEMM multiplied (``A``, ``B``), recorded."""
    seen = []
    gemm = cuda_arrays.gemm_block

    def spy(xp, A, B, ones, users, out):
        seen.append((A, B))
        return gemm(xp, A, B, ones, users, out)

    monkeypatch.setattr(cuda_arrays, "gemm_block", spy)
    return seen


@pytest.mark.parametrize("ties", ["noise", "pessimistic", "average"])
def test_device_factors_are_multiplied_in_place(gemm_reads, ties) -> None:
    """A and B on the "GPU": the values of the CPU backend given numpy arrays, no host copy,
    and the GEMM reads the given memory itself."""
    train, test, A, B, _ = _data()
    Ad, Bd = FakeDeviceArray(A), FakeDeviceArray(B)
    gpu = _run(train, test, "cuda", A=Ad, B=Bd, ties=ties)
    cpu = _run(train, test, "cpu", A=A, B=B, ties=ties)
    _assert_same(cpu, gpu, f"device factors, ties={ties}")
    assert Ad.host_copies == 0 and Bd.host_copies == 0
    assert gemm_reads and all(
        np.shares_memory(a, A) and np.shares_memory(b, B) for a, b in gemm_reads
    )


def test_device_factors_with_biases_and_a_host_factor(gemm_reads) -> None:
    """Device A and biases with host B: B (biases appended) is copied to the device, A read in
    place; the CPU backend's values."""
    train, test, A, B, bias = _data(seed=6)
    Ad, bd = FakeDeviceArray(A), FakeDeviceArray(bias)
    gpu = _run(train, test, "cuda", A=Ad, B=B, item_biases=bd)
    cpu = _run(train, test, "cpu", A=A, B=B, item_biases=bias)
    _assert_same(cpu, gpu, "device A and biases")
    assert Ad.host_copies == 0 and bd.host_copies == 0
    assert gemm_reads and all(np.shares_memory(a, A) for a, _ in gemm_reads)


def test_device_biases_alone() -> None:
    train, test, _, _, bias = _data(seed=7)
    bd = FakeDeviceArray(bias)
    gpu = _run(train, test, "cuda", item_biases=bd, ties="index")
    cpu = _run(train, test, "cpu", item_biases=bias, ties="index")
    _assert_same(cpu, gpu, "device biases")
    assert bd.host_copies == 0


def test_float64_device_factors_and_host_side_options() -> None:
    """float64 factors; ``inf_scores="nan"`` scores each block on the device and transforms it on
    the host: still the CPU backend's values, and still no copy of the factors."""
    train, test, A, B, _ = _data(seed=8)
    A, B = A.astype(np.float64), B.astype(np.float64)
    A[3, 0] = np.inf  # an infinite score for user 3: NaN under inf_scores="nan"
    Ad, Bd = FakeDeviceArray(A), FakeDeviceArray(B)
    gpu = _run(train, test, "cuda", A=Ad, B=Bd, inf_scores="nan")
    cpu = _run(train, test, "cpu", A=A, B=B, inf_scores="nan")
    _assert_same(cpu, gpu, "float64, inf_scores=nan")
    assert Ad.host_copies == 0 and Bd.host_copies == 0


def test_a_scorer_returning_device_arrays() -> None:
    train, test, A, B, _ = _data(seed=9)
    returned = []

    def scorer(users):
        returned.append(FakeDeviceArray(A[users] @ B.T))
        return returned[-1]

    gpu = _run(train, test, "cuda", scorer=scorer)
    cpu = _run(train, test, "cpu", scorer=lambda users: A[users] @ B.T)
    _assert_same(cpu, gpu, "device scorer")
    assert returned and all(r.host_copies == 0 for r in returned)


@pytest.mark.parametrize(
    ("kw", "says"),
    [
        (
            {"A": np.ones((22, 4), np.float32)},
            r"The 'A' parameter of evaluate must be an array with one row per user \(23 rows, as "
            r"X_test\)\. Got an array of shape \(22, 4\) instead",
        ),
        (
            {"B": np.ones(70, np.float32)},
            r"The 'B' parameter of evaluate must be a 2-d array\. Got a GPU array "
            r"\(\w+\.FakeDeviceArray\) of shape \(70,\) and dtype float32 instead",
        ),
        (
            {"B": np.ones((70, 3), np.float32)},
            r"must have the same number of factors \(columns\)\. Got A with shape \(23, 4\) and B "
            r"with shape \(70, 3\)",
        ),
        (
            {"B": np.ones((69, 4), np.float32)},
            r"The 'B' parameter of evaluate must be an array with one row per item \(70 rows",
        ),
        (
            {"A": np.ones((23, 4), np.complex64)},
            r"The 'A' parameter of evaluate must be a numeric \(float32 or float64\) array\. Got a "
            r"GPU array \(\w+\.FakeDeviceArray\) of shape \(23, 4\) and dtype complex64",
        ),
        (
            {"item_biases": np.ones(71, np.float32)},
            r"The 'item_biases' parameter of evaluate must be a 1-d array with one value per item "
            r"\(70\)\. Got an array of shape \(71,\)",
        ),
    ],
)
def test_bad_device_arrays_name_the_argument(kw, says) -> None:
    """Shape and dtype errors name the argument, what was expected and what was got, read from
    the arrays' metadata: no host copy."""
    train, test, A, B, _ = _data()
    given = {"A": A, "B": B} | kw
    fakes = {k: FakeDeviceArray(v) for k, v in given.items()}
    with pytest.raises(rt.InputError, match=says):
        _run(train, test, "cuda", **fakes)
    assert all(f.host_copies == 0 for f in fakes.values())


def test_a_device_score_matrix_is_refused() -> None:
    train, test, A, B, _ = _data()
    S = FakeDeviceArray(A @ B.T)
    with pytest.raises(
        rt.InputError,
        match=r"The 'scores' parameter of evaluate must be a host "
        r"array or a ScoreSource\..*scorer=lambda users: S\[users\]",
    ):
        _run(train, test, "cuda", scores=S)
    assert S.host_copies == 0


def _tied_shards():
    """Factors in {-1, 0, 1}: most scores tie, so the seeded tie keys decide the top-K lists
    and the noise ranks."""
    rng = np.random.default_rng(11)
    m, n = 40, 30
    train = sp.csr_array((rng.random((m, n)) < 0.1).astype(np.float64))
    test = sp.csr_array(
        ((rng.random((m, n)) < 0.12) & (train.toarray() == 0))
        * rng.integers(1, 4, (m, n)).astype(np.float64)
    )
    A = rng.integers(-1, 2, (m, 3)).astype(np.float64)
    B = rng.integers(-1, 2, (n, 3)).astype(np.float64)
    return train, test, A, B


def test_a_shard_on_the_gpu_draws_the_tie_keys_of_its_global_users() -> None:
    """Rows [lo, hi) evaluated alone with ``user_base=lo`` (what a Dask shard runs) on the cuda
    path: the values and top-K lists of those users in the whole run on the CPU, noise ties
    included; with ``user_base=0`` they differ (the test sees the offset)."""
    from recoeval_tracking.metrics.beyond import train_popularity
    from recoeval_tracking.metrics.evaluate import compute, shape
    from recoeval_tracking.options import EvalOptions

    train, test, A, B = _tied_shards()
    lo, hi = 13, 31
    opts = EvalOptions(**(SETTINGS | dict(k=5, block_rows=4)))
    whole = shape(compute(train, test, opts, A=A, B=B))

    def shard(backend: str, base: int) -> rt.Results:
        o = dataclasses.replace(opts, backend=backend)
        raw = compute(
            train[lo:hi],
            test[lo:hi],
            o,
            A=A[lo:hi],
            B=B,
            user_base=base,
            user_ids=np.arange(lo, hi),
        )
        return shape(raw, popularity=train_popularity(train))  # the list metrics' popularity

    gpu = shard("cuda", lo)
    want = whole.per_user.iloc[lo:hi].reset_index(drop=True)
    pd.testing.assert_frame_equal(gpu.per_user.reset_index(drop=True), want, check_exact=True)
    np.testing.assert_array_equal(gpu.topk, whole.topk[lo:hi])
    for name, curve in whole.curves_per_user.items():
        np.testing.assert_array_equal(gpu.curves_per_user[name], curve[lo:hi], name)
    _assert_same(shard("cpu", lo), gpu, "shard, cpu and cuda")
    assert not np.array_equal(shard("cuda", 0).topk, whole.topk[lo:hi])


def test_dask_runs_the_cuda_backend_on_its_shards() -> None:
    """``evaluate(client=...)`` with ``backend="cuda"`` (workers in this process): the values of
    a local CPU run."""
    distributed = pytest.importorskip("distributed")
    train, test, A, B = _tied_shards()
    kw = dict(metrics=["p", "ndcg", "roc_auc"], k=5, ties="noise", nthreads=1)
    local = rt.evaluate(train, test, A=A, B=B, **kw)
    with distributed.Client(
        processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0"
    ) as client:
        res = rt.evaluate(train, test, A=A, B=B, client=client, backend="cuda", **kw)
    pd.testing.assert_frame_equal(
        res.per_user.reset_index(drop=True), local.per_user.reset_index(drop=True), check_exact=True
    )
