"""The fused pass of factor models gives the block path's results, for any tile, block and thread
count.

The fused pass (engine/fused.py) merges each tile of scores into running per-user state (a top-K
heap with its root's tie count, per-positive counts across tiles); the block path
(engine/kernels.py) counts over each user's whole score row. With small-integer factors every
score is exact whatever the GEMM's shape, so the two must agree bit for bit under every tie
policy, metric set and cutoff mode, including users with NaN scores, all-equal scores and
``-inf`` scores (item biases of ``-inf``) that tie with the masked train items.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.engine import driver

TOPK = ["p", "tp", "r", "ap", "tap", "ndcg", "hit", "rr"]
ALL = TOPK + ["roc_auc", "pr_auc"]


def _data(m=90, n=300, p=3, seed=5):
    rng = np.random.default_rng(seed)
    A = rng.integers(-2, 3, (m, p)).astype(np.float64)
    B = rng.integers(-2, 3, (n, p)).astype(np.float64)  # integer scores: many ties
    A[3] = np.nan  # a user with NaN scores
    A[4] = 0.0  # a user whose scores are all equal
    bias = rng.integers(0, 2, n).astype(np.float64)
    bias[
        rng.choice(n, min(12, n // 4), replace=False)
    ] = -np.inf  # -inf scores tie with masked train items
    cells = rng.random((m, n))
    tr_r, tr_c = np.nonzero(cells < 0.15)
    te_r, te_c = np.nonzero(cells > 0.93)
    # one user with many positives (the binary-search count)
    many = min(80, n // 2)
    te_r = np.concatenate([te_r, np.full(many, 7)])
    te_c = np.concatenate([te_c, rng.choice(n, many, replace=False)])
    te = sp.csr_array(
        (rng.integers(1, 6, te_r.size).astype(np.float64), (te_r, te_c)), shape=(m, n)
    )
    te.sum_duplicates()
    tr = sp.csr_array((np.ones(tr_r.size), (tr_r, tr_c)), shape=(m, n))
    tr = tr - tr.multiply(te > 0)  # train and test are disjoint
    tr.eliminate_zeros()
    return sp.csr_array(tr), te, A, B, bias


def _assert_same(a, b, label):
    pd.testing.assert_frame_equal(a.per_user, b.per_user, check_exact=True, obj=label)
    if a.topk is not None or b.topk is not None:
        np.testing.assert_array_equal(a.topk, b.topk, err_msg=label)
    assert a.curves_per_user.keys() == b.curves_per_user.keys()
    for key in a.curves_per_user:
        np.testing.assert_array_equal(
            a.curves_per_user[key], b.curves_per_user[key], err_msg=f"{label} {key}"
        )


def _with_driver(monkeypatch, **kw):
    monkeypatch.setattr(driver, "run_scores", functools.partial(_ORIGINAL, **kw))


_ORIGINAL = driver.run_scores


@pytest.mark.parametrize(
    "ties", ["noise", "index", "index_desc", "optimistic", "pessimistic", "average"]
)
@pytest.mark.parametrize("metrics", ["topk", "all"])
def test_fused_equals_block_path_for_any_tile_block_and_threads(monkeypatch, ties, metrics):
    tr, te, A, B, bias = _data()
    names = TOPK if metrics == "topk" else ALL
    kw = dict(
        A=A,
        B=B,
        item_biases=bias,
        metrics=names,
        k=7,
        ties=ties,
        seed=3,
        cumulative=True,
        return_topk=True,
    )
    _with_driver(monkeypatch, fused=False)
    expected = rt.evaluate(tr, te, nthreads=1, **kw)
    reasons = set(expected.per_user["nan_reason"])
    assert {"nan_score", ""} <= reasons
    for tile, block_rows, nthreads in (
        (64, None, 1),
        (64, 5, 2),
        (128, 1, 2),
        (37, 16, 1),
        (None, 200, 2),
    ):
        _with_driver(monkeypatch, fused=True, tile_items=tile)
        got = rt.evaluate(tr, te, nthreads=nthreads, block_rows=block_rows, **kw)
        _assert_same(got, expected, f"tile={tile} block_rows={block_rows} threads={nthreads}")
    # without the top-K list the ranks come from counts that stop once beyond K
    kw["return_topk"] = False
    _with_driver(monkeypatch, fused=False)
    expected = rt.evaluate(tr, te, nthreads=1, **kw)
    for tile, block_rows, nthreads in ((64, 5, 2), (37, 16, 1)):
        _with_driver(monkeypatch, fused=True, tile_items=tile)
        got = rt.evaluate(tr, te, nthreads=nthreads, block_rows=block_rows, **kw)
        _assert_same(got, expected, f"no list: tile={tile} block_rows={block_rows}")


def test_fused_single_cutoff_equals_block_path(monkeypatch):
    """Only K filled (the count of the block path stops early at K; the fused pass reads the
    list), without item biases (a user with all-equal scores)."""
    tr, te, A, B, _ = _data(seed=9)
    for ties in ("noise", "pessimistic", "average"):
        for listed in (True, False):
            kw = dict(A=A, B=B, metrics=TOPK, k=4, ties=ties, return_topk=listed)
            _with_driver(monkeypatch, fused=False)
            expected = rt.evaluate(tr, te, nthreads=1, **kw)
            assert "all_equal" in set(expected.per_user["nan_reason"])
            _with_driver(monkeypatch, fused=True, tile_items=64)
            _assert_same(
                rt.evaluate(tr, te, nthreads=2, block_rows=3, **kw),
                expected,
                f"{ties} list={listed}",
            )


def test_fused_pool_smaller_than_k(monkeypatch):
    """Users whose pool holds fewer than K items: the heap never fills."""
    tr, te, A, B, bias = _data(m=20, n=12, seed=4)
    kw = dict(A=A, B=B, metrics=ALL, k=10, ties="noise", return_topk=True, min_items_pool=1)
    _with_driver(monkeypatch, fused=False)
    expected = rt.evaluate(tr, te, nthreads=1, **kw)
    _with_driver(monkeypatch, fused=True, tile_items=64)
    _assert_same(rt.evaluate(tr, te, nthreads=1, **kw), expected, "pool < K")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_float_factors_do_not_depend_on_blocks_or_threads(monkeypatch, dtype):
    """With real-valued factors each score is one BLAS main-kernel dot product wherever its user
    and item sit in a tile (tiles of multiples of 64 items, blocks of multiples of 16 users), so
    results do not depend on the block size, the tile width or the thread count."""
    rng = np.random.default_rng(11)
    m, n, p = 300, 700, 24
    A = rng.standard_normal((m, p)).astype(dtype)
    B = rng.standard_normal((n, p)).astype(dtype)
    te = sp.random_array((m, n), density=0.03, format="csr", rng=rng)
    te.data[:] = rng.integers(1, 6, te.nnz)
    tr = sp.random_array((m, n), density=0.1, format="csr", rng=rng)
    tr = sp.csr_array(tr - tr.multiply(te > 0))
    tr.eliminate_zeros()
    kw = dict(A=A, B=B, metrics="all", k=10, return_topk=True, cumulative=True)
    _with_driver(monkeypatch, fused=True, tile_items=64)
    first = rt.evaluate(tr, te, nthreads=1, block_rows=16, **kw)
    assert np.isfinite(first.per_user["roc_auc"]).sum() > 200
    for tile, block_rows, nthreads in ((128, 64, 2), (320, 32, 2), (None, None, 1)):
        _with_driver(monkeypatch, fused=True, tile_items=tile)
        got = rt.evaluate(tr, te, nthreads=nthreads, block_rows=block_rows, **kw)
        _assert_same(got, first, f"tile={tile} block_rows={block_rows} threads={nthreads}")


def test_fused_pass_only_for_factor_models_and_reports_progress(monkeypatch):
    """A dense score source has no factors to tile: ``fused=True`` leaves it on the block path
    (same values); a factor model on the fused pass reports every evaluated user's progress."""
    tr, te, A, B, _ = _data(m=30, n=80, seed=2)
    S = A @ B.T
    _with_driver(monkeypatch, fused=False)
    expected = rt.evaluate(tr, te, scores=S, metrics=TOPK, k=5, nthreads=1)
    _with_driver(monkeypatch, fused=True, tile_items=64)
    _assert_same(
        rt.evaluate(tr, te, scores=S, metrics=TOPK, k=5, nthreads=1),
        expected,
        "dense scores with fused=True",
    )
    seen = []
    res = rt.evaluate(tr, te, A=A, B=B, metrics=TOPK, k=5, nthreads=1, progress=seen.append)
    # the users the NaN rules leave to the engine (the kernel itself finds NaN scores)
    ok = res.per_user["nan_reason"].isin(["", "nan_score", "all_equal"]).sum()
    assert sum(seen) == ok and len(seen) >= 1
