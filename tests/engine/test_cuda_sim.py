"""The ``cuda`` backend under numba's CUDA simulator, against the CPU engine, on every path.

These tests run only in a process started with ``NUMBA_ENABLE_CUDASIM=1`` (numba reads it once,
when it loads): ``tests/engine/test_cuda_backend.py`` starts one. The simulator must not leak
into the rest of the suite, which runs the CPU engine compiled by numba's CPU target.

Under the simulator the GPU kernel (:mod:`recoeval_tracking.engine.cuda_kernels`) runs one
simulated thread per user and the scores come from the host, so both backends see the very same
scores: every per-user value, curve, top-K list and aggregate must be identical (NaN where NaN).
The cases are those of ``test_paths.py`` (every tie policy, float32 and float64, cumulative or
not, catalogues past one counting chunk, many positives, -inf and NaN scores, all-equal users,
tiny pools, cold start, thresholds), run with every metric and with the top-K metrics only (the
counts then stop early), in blocks of 1 to 3 users.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt

from .test_paths import CHUNK, TEST_VALUES, Case, _run, _topk_only_metrics, make_case

pytestmark = pytest.mark.skipif(
    os.environ.get("NUMBA_ENABLE_CUDASIM") != "1",
    reason="runs in its own process under NUMBA_ENABLE_CUDASIM=1 (test_cuda_backend.py)",
)

TIES = ["noise", "index", "optimistic", "pessimistic", "average", "index_desc"]
#: Seeds of test_paths.make_case: with the seeds below every tie policy, both dtypes, cumulative
#: and not, every score mode and the NaN rules occur (checked by test_cases_cover_the_paths).
SEEDS = list(range(48))


def _evaluate(case: Case, backend: str, metrics, block_rows: int) -> rt.Results:
    return _run(case, metrics, backend=backend, block_rows=block_rows)


def _assert_same(cpu: rt.Results, gpu: rt.Results, what: str) -> None:
    pd.testing.assert_frame_equal(gpu.per_user, cpu.per_user, check_exact=True, obj=what)
    assert sorted(gpu.curves_per_user) == sorted(cpu.curves_per_user), what
    for name, curve in cpu.curves_per_user.items():
        np.testing.assert_array_equal(gpu.curves_per_user[name], curve, f"{what}: {name}")
    np.testing.assert_array_equal(gpu.topk, cpu.topk, what)
    assert gpu.aggregates.keys() == cpu.aggregates.keys(), what
    for name, value in cpu.aggregates.items():
        np.testing.assert_array_equal(gpu.aggregates[name], value, f"{what}: {name}")


@pytest.mark.parametrize("seed", SEEDS)
def test_simulated_gpu_matches_cpu_on_every_path(seed: int) -> None:
    case = make_case(seed, TIES)
    block_rows = 1 + seed % 3
    for metrics in ("all", _topk_only_metrics(case.ties)):
        cpu = _evaluate(case, "cpu", metrics, block_rows)
        gpu = _evaluate(case, "cuda", metrics, block_rows)
        label = "all" if metrics == "all" else "top-K only"
        _assert_same(cpu, gpu, f"seed {seed} ({label}): {case.describe()}")


@pytest.mark.parametrize("seed", range(12))
def test_simulated_gpu_matches_cpu_under_warprecs_ties(seed: int) -> None:
    """``ties="warprec"`` (WarpRec's per-user keys, :func:`~recoeval_tracking.engine.ranks.
    warprec_key`) on the paths of the cases above: the GPU pass ranks the positives exactly and
    lists the top K by those keys, as the CPU does."""
    case = make_case(seed, ["warprec"])
    for metrics in ("all", _topk_only_metrics(case.ties)):
        cpu = _evaluate(case, "cpu", metrics, 1 + seed % 3)
        gpu = _evaluate(case, "cuda", metrics, 1 + seed % 3)
        label = "all" if metrics == "all" else "top-K only"
        _assert_same(cpu, gpu, f"warprec, seed {seed} ({label}): {case.describe()}")


def test_cases_cover_the_paths() -> None:
    """The seeds above reach what the backend must agree on (so a seed list that stopped doing
    so fails here rather than passing with less coverage)."""
    cases = [make_case(s, TIES) for s in SEEDS]
    assert {c.ties for c in cases} == set(TIES)
    assert {c.dtype for c in cases} == {np.float32, np.float64}
    assert {c.cumulative for c in cases} == {True, False}
    assert any(np.isnan(c.S).any() for c in cases)
    assert any(np.isneginf(c.S).any() for c in cases)
    assert any(c.shape[1] > CHUNK for c in cases)
    assert any(c.train is not None and (np.diff(c.train.indptr) == 0).any() for c in cases)
    assert any((np.diff(c.test.indptr) >= 48).any() for c in cases)


def _data(m: int = 23, n: int = 70, p: int = 4, seed: int = 5):
    """Integer factors in [-2, 2] (many tied scores, every product exact), biases in {0, 1}."""
    rng = np.random.default_rng(seed)
    A = rng.integers(-2, 3, (m, p)).astype(np.float32)
    B = rng.integers(-2, 3, (n, p)).astype(np.float32)
    bias = rng.integers(0, 2, n).astype(np.float32)
    cells = rng.random((m, n))
    tr_r, tr_c = np.nonzero(cells < 0.15)
    te_r, te_c = np.nonzero(cells > 0.85)
    train = sp.csr_array((np.ones(tr_r.size), (tr_r, tr_c)), shape=(m, n))
    test = sp.csr_array((rng.choice(TEST_VALUES, te_r.size), (te_r, te_c)), shape=(m, n))
    return train, test, A, B, bias


def test_factors_scorer_and_biases_through_the_simulated_backend() -> None:
    """Factors with item biases, a scorer callable and biases alone: the sources the GPU driver
    treats apart (on a GPU: a device GEMM, the scorer's own arrays) agree with the CPU engine."""
    train, test, A, B, bias = _data()
    sources = {
        "factors": dict(A=A, B=B, item_biases=bias),
        "scorer": dict(scorer=lambda users: A[users] @ B.T),
        "biases": dict(item_biases=bias),
    }
    for name, source in sources.items():
        for ties in ("noise", "pessimistic", "average"):
            runs = [
                rt.evaluate(
                    train,
                    test,
                    **source,
                    metrics="all",
                    k=6,
                    ties=ties,
                    cumulative=True,
                    backend=backend,
                    block_rows=8,
                    nthreads=1,
                )
                for backend in ("cpu", "cuda")
            ]
            _assert_same(*runs, f"{name}, ties={ties}")


def test_app_runs_with_metrics_backend_cuda(tmp_path) -> None:
    """``recoeval-track metrics.backend=cuda`` runs the job on the (simulated) GPU backend, and
    its metrics equal those of the same job with ``metrics.backend=cpu``."""
    import json

    from commands import run_command

    args = [
        "model=popularity",
        "metrics.k=5",
        "plots=false",
        "progress=false",
        "nthreads=1",
        "dataset.n_users=40",
        "dataset.n_items=30",
        "tracking=none",
    ]
    means = {}
    for backend in ("cuda", "cpu"):
        cwd = tmp_path / backend
        cwd.mkdir()
        proc = run_command([*args, f"metrics.backend={backend}"], cwd)
        assert proc.returncode == 0, proc.stderr[-3000:]
        [found] = list(cwd.rglob("metrics.json"))
        config = (found.parent / "config.yaml").read_text()
        assert f"backend: {backend}" in config
        means[backend] = {
            k: v for k, v in json.loads(found.read_text()).items() if not k.endswith("_seconds")
        }
    assert len(means["cuda"]) > 10
    assert means["cuda"] == means["cpu"]


def test_bench_gpu_runs_under_the_simulator() -> None:
    """benchmarks/bench_gpu.py runs end to end (tiny sizes, numpy in place of CuPy): a check of
    the script, not of its timings. Every line it must print is there."""
    from ._process import run_python

    proc = run_python(
        [
            "benchmarks/bench_gpu.py",
            "--repeat",
            "1",
            "--sizes",
            "60x80x4",
            "--cpu-sizes",
            "60x80x4",
        ],
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "SIMULATED" in out and "floor: GEMM + train mask + top-10" in out
    for label in ("numpy factors", "CuPy factors", "CuPy scorer", "all metrics"):
        assert "backend=cuda, " in out and label in out, label
    assert out.count("ratio to floor") == 4 and out.count("peak device memory") == 4
    assert "backend=cpu, 10 metrics" in out
