"""A cold kernel compiled on two cores (engine/compiling.py): the helper's callees are loaded,
not compiled again, and the results are those of the usual path."""

from __future__ import annotations

import json
import os

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from numba import types

import recoeval_tracking as rt
from recoeval_tracking.engine import compiling, kernels

from ._process import run_python

#: A new process on an empty numba cache: ``evaluate(metrics="all")`` (the top-K list kernel)
#: on the inputs of :func:`_inputs` (saved by the test in ``sys.argv[1]``) with numba's compile
#: events recorded; prints the functions it compiled and its per-user NDCG@5 and ROC-AUC.
_COLD = r"""
import json, sys
import numpy as np, scipy.sparse as sp
from numba.core import event
import recoeval_tracking as rt

compiled = []

class Recorder(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        f = ev.data["dispatcher"].py_func
        if f.__module__.startswith("recoeval_tracking"):
            compiled.append(f.__name__)

event.register("numba:compile", Recorder())
from recoeval_tracking.engine import compiling
said = []
compiling.when_callees_done(lambda: said.append(len(compiled)))
saved = np.load(sys.argv[1])
train, test = sp.csr_array(saved["train"]), sp.csr_array(saved["test"])
res = rt.evaluate(train, test, A=saved["A"], B=saved["B"], metrics="all", k=5, nthreads=1)
print(json.dumps({"compiled": compiled, "said": said,
                  "ndcg": res.per_user["ndcg_at_5"].tolist(),
                  "auc": res.per_user["roc_auc"].tolist()}))
"""


def _inputs():
    rng = np.random.default_rng(3)
    m, n = 60, 90
    A = rng.standard_normal((m, 4)).astype(np.float32)
    B = rng.standard_normal((n, 4)).astype(np.float32)
    cells = rng.random((m, n))
    train = sp.csr_array((cells < 0.15).astype(np.float64))
    test = sp.csr_array(((cells > 0.85) * rng.integers(1, 4, (m, n))).astype(np.float64))
    return train, test, A, B


def test_a_cold_kernel_loads_the_helpers_callees_and_gives_the_same_values(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("RECOEVAL_WARM_UP", None)
    train, test, A, B = _inputs()
    saved = tmp_path / "inputs.npz"
    np.savez(saved, train=train.toarray(), test=test.toarray(), A=A, B=B)
    proc = run_python(["-c", _COLD, str(saved)], env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    compiled = out["compiled"]
    here, there = compiling.callees("exact_list", "float32")
    # the helper's callees were written to the cache by the helper and only loaded here
    assert not {d.py_func.__name__ for d, _ in there} & set(compiled), compiled
    # this process's own callees compiled once each: the kernel called them with the types
    # callees() lists (a second compile would be a signature the list got wrong)
    mine = [d.py_func.__name__ for d, _ in here]
    assert all(compiled.count(name) == 1 for name in mine), compiled
    assert compiled.count("block_exact_list") == 1
    # the one-core-free hook (the warm-up child's line to its job) ran once, before the
    # kernel's own compile: when this process's callees or the helper's were done
    (at,) = out["said"]
    assert "block_exact_list" in compiled[at:], (out["said"], compiled)
    # the values of the usual path (this process: kernels from the suite's cache)
    res = rt.evaluate(train, test, A=A, B=B, metrics="all", k=5, nthreads=1)
    np.testing.assert_array_equal(out["ndcg"], res.per_user["ndcg_at_5"].to_numpy())
    np.testing.assert_array_equal(out["auc"], res.per_user["roc_auc"].to_numpy())
    assert np.isfinite(out["ndcg"]).sum() > 40


def test_a_compiled_kernel_is_ready_and_another_signature_is_not():
    train, test, A, B = _inputs()
    rt.evaluate(train, test, A=A, B=B, metrics=["p"], k=5, nthreads=1)  # block_topk, float32
    sig = compiling.kernel_signature("float32")
    assert compiling.is_ready(kernels.block_topk, sig)
    other = (sig[0], types.Array(types.int32, 1, "C"), *sig[2:])  # int32 user rows
    assert not compiling.is_ready(kernels.block_topk, other)


@pytest.mark.parametrize(
    ("name", "metrics", "ties"),
    [
        ("topk", ["p", "ndcg"], "noise"),
        ("topk_list", ["p", "coverage"], "noise"),
        ("exact", ["p", "roc_auc"], "noise"),
        ("exact_list", ["p", "roc_auc", "coverage"], "index"),
        ("ranked", ["p", "roc_auc"], "optimistic"),
    ],
)
def test_the_callees_are_listed_with_the_types_the_kernel_calls_them_with(name, metrics, ties):
    """Once the kernel is compiled (or loaded) for these inputs, numba's cache holds every
    callee of both halves with the signature ``callees`` lists: a signature listed wrong would
    be compiled in vain by the helper (the kernel would compile its own)."""
    train, test, A, B = _inputs()
    rt.evaluate(train, test, A=A, B=B, metrics=metrics, k=5, ties=ties, nthreads=1)
    assert compiling.KERNELS[name] is kernels.block_kernel(_plan(metrics, ties))
    here, there = compiling.callees(name, "float32")
    for dispatcher, sig in here + there:
        assert compiling.is_ready(dispatcher, sig), (dispatcher.py_func.__name__, sig)


def _plan(metrics, ties):
    """The kernels' plan of ``metrics`` under ``ties`` (full ranks when a whole-ranking metric
    is asked, the top-K list for coverage)."""
    from recoeval_tracking.engine.codes import Tie

    _, _, plan, _ = compiling._sample_records()
    return plan._replace(
        full_ranks="roc_auc" in metrics,
        want_topk="coverage" in metrics,
        tie_mode=int(Tie[ties.upper()]),
    )


def test_no_helper_is_started_when_turned_off_or_on_one_core(monkeypatch):
    monkeypatch.setenv("RECOEVAL_WARM_UP", "0")
    assert compiling._start_helper("ranked", "float32") is None
    monkeypatch.delenv("RECOEVAL_WARM_UP")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert compiling._start_helper("ranked", "float32") is None
    # where there is no affinity call (macOS, Windows), the machine's core count decides
    monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert compiling._start_helper("ranked", "float32") is None


def test_the_helper_refuses_an_unknown_kernel():
    proc = run_python(["-m", "recoeval_tracking.engine.compiling", "ranked_sorted", "float32"])
    assert proc.returncode == 2 and "'ranked_sorted float32'" in proc.stderr
    assert "topk, topk_list, exact, exact_list, ranked, ranked_list, average, average_list" in (
        proc.stderr
    )


def test_compile_all_compiles_each_kernel_not_ready_once_per_dtype(monkeypatch):
    """``compiling all``: every kernel of KERNELS for each dtype, skipping the ready ones (a
    second call compiles nothing), and each listed callee not ready. Stand-in kernels, so that
    the test compiles in milliseconds."""
    from numba import njit

    def made():
        @njit(cache=False)
        def kernel(S, rows):
            return S[0, 0] + rows[0]

        return kernel

    stand_ins = {"first": made(), "second": made()}
    monkeypatch.setattr(compiling, "KERNELS", stand_ins)
    monkeypatch.setattr(
        compiling,
        "kernel_signature",
        lambda dtype: (
            types.Array(numba.from_dtype(np.dtype(dtype)), 2, "C"),
            types.Array(types.int64, 1, "C"),
        ),
    )
    # no disk cache for the stand-ins: ready means compiled in this process
    monkeypatch.setattr(compiling, "is_ready", lambda kernel, sig: tuple(sig) in kernel.overloads)
    callee = made()  # a callee whose cache entry went missing is compiled again
    monkeypatch.setattr(
        compiling,
        "callees",
        lambda name, dtype: ([(callee, compiling.kernel_signature(dtype))], []),
    )
    stand_ins["second"].compile(compiling.kernel_signature("float64"))  # ready already
    assert compiling.compile_all() == ["first float32", "second float32", "first float64"]
    assert all(len(k.overloads) == 2 for k in (*stand_ins.values(), callee))
    assert compiling.compile_all(("float64",)) == []


def test_compile_all_refuses_an_unknown_dtype():
    proc = run_python(["-m", "recoeval_tracking.engine.compiling", "all", "float16"])
    assert proc.returncode == 2 and "or all [DTYPE ...]; got 'all float16'" in proc.stderr
