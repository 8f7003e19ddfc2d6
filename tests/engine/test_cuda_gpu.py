"""The ``cuda`` backend on a real GPU, against the CPU engine. Skipped without a CUDA GPU (and
under the simulator, whose tests are ``test_cuda_sim.py``).

Scores on a grid of halves are exact in float32 whichever GEMM computes them, so both backends
see the same scores there and every per-user value must be identical; with continuous factors
the GEMMs round differently, and the values must agree within 1e-6 where no two scores of a user
are closer than the rounding.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.engine.backends import unavailable

pytestmark = pytest.mark.skipif(
    os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or unavailable("cuda") is not None,
    reason='needs a CUDA GPU with numba-cuda and CuPy (pip install "recoeval_tracking[cuda]")',
)

TIES = ["noise", "index", "optimistic", "pessimistic", "average", "index_desc"]


def _data(m: int = 300, n: int = 500, p: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    cells = rng.random((m, n))
    tr_r, tr_c = np.nonzero(cells < 0.05)
    te_r, te_c = np.nonzero(cells > 0.97)
    train = sp.csr_array((np.ones(tr_r.size), (tr_r, tr_c)), shape=(m, n))
    test = sp.csr_array(
        (rng.integers(1, 4, te_r.size).astype(np.float64), (te_r, te_c)), shape=(m, n)
    )
    A = (rng.integers(-3, 4, (m, p)) * 0.5).astype(np.float32)
    B = rng.integers(-3, 4, (n, p)).astype(np.float32)
    return train, test, A, B


def _both(train, test, **kw) -> tuple[rt.Results, rt.Results]:
    return tuple(
        rt.evaluate(
            train,
            test,
            metrics="all",
            k=10,
            cumulative=True,
            backend=b,
            block_rows=64,
            return_topk=True,
            **kw,
        )
        for b in ("cpu", "cuda")
    )


@pytest.mark.parametrize("ties", TIES)
def test_exact_scores_give_identical_values(ties: str) -> None:
    train, test, A, B = _data()
    cpu, gpu = _both(train, test, A=A, B=B, item_biases=np.ones(B.shape[0], np.float32), ties=ties)
    pd.testing.assert_frame_equal(gpu.per_user, cpu.per_user, check_exact=True)
    for name, curve in cpu.curves_per_user.items():
        np.testing.assert_array_equal(gpu.curves_per_user[name], curve, name)
    np.testing.assert_array_equal(gpu.topk, cpu.topk)


def test_continuous_scores_agree_within_1e6() -> None:
    train, test, _, _ = _data(seed=1)
    rng = np.random.default_rng(1)
    A = rng.standard_normal((train.shape[0], 16)).astype(np.float32)
    B = rng.standard_normal((train.shape[1], 16)).astype(np.float32)
    S = np.sort(A.astype(np.float64) @ B.T.astype(np.float64), axis=1)
    if (np.diff(S, axis=1) < 1e-4).any(axis=1).all():
        pytest.skip("every user has near-tied scores: the data above should be reseeded")
    cpu, gpu = _both(train, test, A=A, B=B, ties="index")
    near = (np.diff(S, axis=1) < 1e-4).any(axis=1)
    cols = cpu.metric_columns
    np.testing.assert_allclose(
        gpu.per_user.loc[~near, cols].to_numpy(dtype=float),
        cpu.per_user.loc[~near, cols].to_numpy(dtype=float),
        atol=1e-6,
    )


def test_cupy_and_torch_scorers_are_taken_on_the_device() -> None:
    """A scorer returning CuPy arrays or PyTorch CUDA tensors gives the CPU engine's values."""
    import cupy as cp

    train, test, A, B = _data(seed=2)
    cpu = rt.evaluate(train, test, A=A, B=B, metrics="all", k=10, ties="index")
    Ad, Bd = cp.asarray(A), cp.asarray(B)
    scorers = {"cupy": lambda users: Ad[cp.asarray(users)] @ Bd.T}
    try:
        import torch

        if torch.cuda.is_available():
            At, Bt = torch.as_tensor(A, device="cuda"), torch.as_tensor(B, device="cuda")
            scorers["torch"] = lambda users: At[torch.as_tensor(users, device="cuda")] @ Bt.T
    except ImportError:
        pass
    for name, scorer in scorers.items():
        gpu = rt.evaluate(
            train,
            test,
            scorer=scorer,
            metrics="all",
            k=10,
            ties="index",
            backend="cuda",
            block_rows=50,
        )
        pd.testing.assert_frame_equal(gpu.per_user, cpu.per_user, check_exact=True, obj=name)


def test_cupy_and_torch_factors_are_read_in_place() -> None:
    """A and B (and item biases) as CuPy arrays and PyTorch CUDA tensors: the CPU engine's values
    (scores on a grid of halves: exact), and the source's device arrays are the given memory."""
    import cupy as cp

    from recoeval_tracking.metrics.device_inputs import device_factors

    train, test, A, B = _data(seed=3)
    bias = np.ones(B.shape[0], np.float32)
    cpu = rt.evaluate(
        train, test, A=A, B=B, item_biases=bias, metrics="all", k=10, ties="noise", return_topk=True
    )
    given = {"cupy": (cp.asarray(A), cp.asarray(B), cp.asarray(bias))}
    try:
        import torch

        if torch.cuda.is_available():
            given["torch"] = tuple(torch.as_tensor(x, device="cuda") for x in (A, B, bias))
    except ImportError:
        pass
    for name, (Ad, Bd, bd) in given.items():
        gpu = rt.evaluate(
            train,
            test,
            A=Ad,
            B=Bd,
            item_biases=bd,
            metrics="all",
            k=10,
            ties="noise",
            return_topk=True,
            backend="cuda",
            block_rows=50,
        )
        pd.testing.assert_frame_equal(gpu.per_user, cpu.per_user, check_exact=True, obj=name)
        np.testing.assert_array_equal(gpu.topk, cpu.topk, name)
        src = device_factors(Ad, Bd, None, A.shape[0], B.shape[0], "cuda", "evaluate")
        ptr = Ad.data.ptr if name == "cupy" else Ad.data_ptr()
        assert src.A_device.data.ptr == ptr, name
