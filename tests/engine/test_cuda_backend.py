"""The ``cuda`` backend from this process: its simulator suite run in a process of its own, and
the clear error a machine without a GPU gives, from the Python API and from the app.

numba reads ``NUMBA_ENABLE_CUDASIM`` once, when it loads; this process runs the CPU engine, so
the simulated kernels (``test_cuda_sim.py``) run in a child process with the variable set.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from commands import clean_env, run_command

import recoeval_tracking as rt
from recoeval_tracking.engine.backends import unavailable
from recoeval_tracking.options import EvalOptions

from ._process import run_python


def _simulating() -> bool:
    return os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


no_gpu = pytest.mark.skipif(
    _simulating() or unavailable("cuda") is None,
    reason="a CUDA GPU (or the simulator) is available here",
)


@pytest.mark.slow  # ~15 s: the simulated GPU kernels and the CPU engine, both as Python
@pytest.mark.skipif(_simulating(), reason="already in the simulator's process")
def test_simulated_kernels_match_the_cpu_engine() -> None:
    """tests/engine/test_cuda_sim.py and test_cuda_sim_inputs.py under NUMBA_ENABLE_CUDASIM=1,
    in a child process: every test there runs and passes (none skipped).

    The simulator runs the GPU kernels as Python; the child runs the CPU engine they are
    compared with as Python too (NUMBA_DISABLE_JIT=1, the engine's coverage mode): on a cold
    cache the child otherwise compiled the CPU kernels with its own argument types for 35-40 s,
    and the compiled CPU engine is checked against the slow references by the rest of the
    suite."""
    env = clean_env()
    env["NUMBA_ENABLE_CUDASIM"] = "1"
    env["NUMBA_DISABLE_JIT"] = "1"
    proc = run_python(
        [
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",  # one process: the parent's worker is already one of the cores
            "-x",
            "tests/engine/test_cuda_sim.py",
            "tests/engine/test_cuda_sim_inputs.py",
        ],
        env=env,
        timeout=900,
    )
    tail = proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    summary = proc.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "skipped" not in summary and "failed" not in summary, tail


def _tiny() -> tuple[sp.csr_array, sp.csr_array, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    train = sp.csr_array((rng.random((6, 9)) < 0.3).astype(np.float64))
    test = sp.csr_array(((rng.random((6, 9)) > 0.7) & (train.toarray() == 0)).astype(np.float64))
    return train, test, rng.random((6, 2)), rng.random((9, 2))


@no_gpu
def test_without_a_gpu_the_option_names_the_extra() -> None:
    """No GPU, driver or CUDA library: EvalOptions and evaluate() refuse ``backend="cuda"``
    before any work, with what is missing and the command that installs it."""
    with pytest.raises(
        rt.InputError,
        match=r"The 'backend' parameter of evaluate must be a "
        r"backend that can run on this machine.*recoeval_tracking\[cuda\]",
    ):
        EvalOptions(backend="cuda").checked()
    train, test, A, B = _tiny()
    with pytest.raises(rt.InputError, match=r"pip install \"recoeval_tracking\[cuda\]\""):
        rt.evaluate(train, test, A=A, B=B, k=3, backend="cuda")
    # the CPU backend is untouched
    assert rt.evaluate(train, test, A=A, B=B, k=3, backend="cpu").n_users_evaluated > 0


@no_gpu
def test_without_a_gpu_the_driver_raises_its_own_error() -> None:
    """Called directly (below the options' check), the driver refuses with the same message."""
    from recoeval_tracking.engine import cuda_driver

    with pytest.raises(cuda_driver.BackendUnavailable, match=r"recoeval_tracking\[cuda\]"):
        cuda_driver.run_scores(None, None, np.float32, np.arange(3), np.zeros(3, np.int8))


@no_gpu
def test_app_metrics_backend_cuda_without_a_gpu_is_a_usage_error(tmp_path: Path) -> None:
    """``recoeval-track metrics.backend=cuda`` on this machine: exit 2 and one paragraph naming
    the key and the extra, no traceback, before the data is read (the CSV file does not exist:
    its error would come first otherwise)."""
    args = [
        "dataset=csv",
        f"dataset.path={tmp_path / 'absent.csv'}",
        "model=popularity",
        "metrics.names=[p,ndcg]",
        "metrics.k=5",
        "plots=false",
        "progress=false",
        "nthreads=1",
        "tracking=none",
        "metrics.backend=cuda",
    ]
    proc = run_command(args, tmp_path)
    last = (proc.stderr.strip().splitlines() or [""])[-1]
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "absent.csv" not in proc.stderr
    assert last.startswith(
        "recoeval-track: metrics.backend must be an engine backend that can "
        "run on this machine; got 'cuda'."
    ), last
    assert 'pip install "recoeval_tracking[cuda]"' in last, last


def test_gpu_arrays_with_backend_cpu_are_refused_without_a_copy() -> None:
    """Factors on the GPU with ``backend="cpu"``: an error naming the argument, the array (from
    its metadata) and ``backend="cuda"``; nothing converted to a host array. Runs anywhere (the
    check reads the array's type only)."""
    from ._device_fake import FakeDeviceArray

    train, test, A, B = _tiny()
    Ad = FakeDeviceArray(A.astype(np.float32))
    with pytest.raises(
        rt.InputError,
        match=(
            r"The 'A' parameter of evaluate must be a host \(numpy\) array with "
            r"backend='cpu'\. Got a GPU array \(\w+\.FakeDeviceArray\) of shape \(6, 2\) and "
            r"dtype float32 instead\. Pass backend=\"cuda\" to evaluate it on the GPU"
        ),
    ):
        rt.evaluate(train, test, A=Ad, B=B, k=3)
    bd = FakeDeviceArray(np.ones(9))
    with pytest.raises(rt.InputError, match=r"The 'item_biases' parameter .* backend='cpu'"):
        rt.evaluate(train, test, item_biases=bd, k=3)
    assert Ad.host_copies == 0 and bd.host_copies == 0


def test_gpu_arrays_with_a_dask_client_are_refused() -> None:
    """With a Dask client the factors travel to the workers: GPU arrays are refused (before any
    cluster is reached) with what to give instead."""
    from recoeval_tracking.distributed import evaluate_on_dask

    from ._device_fake import FakeDeviceArray

    train, test, A, B = _tiny()
    Bd = FakeDeviceArray(B)
    with pytest.raises(
        rt.InputError,
        match=r"The 'B' parameter of evaluate must be a host "
        r"\(numpy\) array when a Dask client is given",
    ):
        evaluate_on_dask("tcp://127.0.0.1:9", train, test, EvalOptions(), A=A, B=Bd)
    assert Bd.host_copies == 0


@no_gpu
def test_bench_gpu_without_a_gpu_says_what_is_missing() -> None:
    """benchmarks/bench_gpu.py on a machine without a GPU: one line naming what is missing and
    the extra, no traceback, nothing measured."""
    proc = run_python(["benchmarks/bench_gpu.py"], env=clean_env())
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stderr.startswith(
        "bench_gpu: nothing measured. The 'cuda' engine backend cannot run here:"
    ), proc.stderr
    assert 'pip install "recoeval_tracking[cuda]"' in proc.stderr
    assert "floor" not in proc.stdout
