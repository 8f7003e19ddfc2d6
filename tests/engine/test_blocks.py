"""Results do not depend on the block size or the thread count.

The driver (engine/driver.py) scores a bounded block of users at a time and evaluates each user
alone: a factor model's blocks are scored and evaluated by worker threads, each with its own
buffer, a scorer that is not thread-safe is called block by block and each block's users are
evaluated on several threads. With small-integer factors every score is exact whatever the
GEMM's shape, so every arrangement must agree bit for bit under every tie policy, metric set and
cutoff mode, including users with NaN scores, all-equal scores and ``-inf`` scores (item biases
of ``-inf``) that tie with the masked train items.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt

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


#: (block_rows, nthreads): one user per block, small blocks, blocks that do not divide the
#: users, and one block for all of them.
ARRANGEMENTS = ((None, 2), (1, 2), (5, 2), (16, 1), (200, 2), (7, 3))


class _Scorer:
    """A scorer callable that does not declare itself thread-safe: the driver calls it block by
    block from one thread."""

    def __init__(self, A, B, bias):
        self.S = A @ B.T + bias

    def __call__(self, users):
        return self.S[users]


@pytest.mark.parametrize(
    "ties", ["noise", "index", "index_desc", "optimistic", "pessimistic", "average"]
)
@pytest.mark.parametrize("metrics", ["topk", "all"])
def test_any_block_and_thread_count_gives_the_same_values(ties, metrics):
    tr, te, A, B, bias = _data()
    names = TOPK if metrics == "topk" else ALL
    kw = dict(metrics=names, k=7, ties=ties, seed=3, cumulative=True, return_topk=True)
    factors = dict(A=A, B=B, item_biases=bias)
    expected = rt.evaluate(tr, te, nthreads=1, **factors, **kw)
    reasons = set(expected.per_user["nan_reason"])
    assert {"nan_score", ""} <= reasons
    scorer = _Scorer(A, B, bias)
    for block_rows, nthreads in ARRANGEMENTS:
        label = f"block_rows={block_rows} threads={nthreads}"
        got = rt.evaluate(tr, te, nthreads=nthreads, block_rows=block_rows, **factors, **kw)
        _assert_same(got, expected, f"factors {label}")
        got = rt.evaluate(tr, te, scorer=scorer, nthreads=nthreads, block_rows=block_rows, **kw)
        _assert_same(got, expected, f"scorer {label}")
    # without the top-K list the ranks come from counts that stop once beyond K
    kw["return_topk"] = False
    expected = rt.evaluate(tr, te, nthreads=1, **factors, **kw)
    for block_rows, nthreads in ARRANGEMENTS[1:3]:
        got = rt.evaluate(tr, te, nthreads=nthreads, block_rows=block_rows, **factors, **kw)
        _assert_same(got, expected, f"no list: block_rows={block_rows} threads={nthreads}")


def test_single_cutoff_and_all_equal_users_on_every_arrangement():
    """Only K filled (the count stops early at K), without item biases (a user with all-equal
    scores)."""
    tr, te, A, B, _ = _data(seed=9)
    for ties in ("noise", "pessimistic", "average"):
        for listed in (True, False):
            kw = dict(A=A, B=B, metrics=TOPK, k=4, ties=ties, return_topk=listed)
            expected = rt.evaluate(tr, te, nthreads=1, **kw)
            assert "all_equal" in set(expected.per_user["nan_reason"])
            _assert_same(
                rt.evaluate(tr, te, nthreads=2, block_rows=3, **kw),
                expected,
                f"{ties} list={listed}",
            )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_factors_do_not_depend_on_blocks_or_threads(dtype):
    """With real-valued factors each score is one BLAS dot product; the blocks are multiples of
    16 users, so the values do not depend on the block size or the thread count."""
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
    first = rt.evaluate(tr, te, nthreads=1, block_rows=16, **kw)
    assert np.isfinite(first.per_user["roc_auc"]).sum() > 200
    for block_rows, nthreads in ((64, 2), (32, 2), (None, 1), (None, 2)):
        got = rt.evaluate(tr, te, nthreads=nthreads, block_rows=block_rows, **kw)
        _assert_same(got, first, f"block_rows={block_rows} threads={nthreads}")


def test_progress_counts_every_evaluated_user():
    tr, te, A, B, _ = _data(m=30, n=80, seed=2)
    for kw in (dict(A=A, B=B), dict(scores=A @ B.T)):
        seen = []
        res = rt.evaluate(
            tr, te, metrics=TOPK, k=5, nthreads=2, block_rows=4, progress=seen.append, **kw
        )
        # the users the NaN rules leave to the engine (the kernel itself finds NaN scores)
        ok = res.per_user["nan_reason"].isin(["", "nan_score", "all_equal"]).sum()
        assert sum(seen) == ok and len(seen) >= 2


@pytest.mark.parametrize("ties", ["noise", "index", "index_desc"])
def test_the_list_kernel_of_a_total_order_gives_what_the_ranked_one_gives(ties):
    """@k metrics and the top-K list under a total order of ties run ``block_topk_list``; with a
    whole-ranking metric beside them, ``block_exact_list``. Their @k values and lists agree on
    ties, NaN and all-equal users, ``-inf`` scores and a user with many positives."""
    tr, te, A, B, bias = _data()
    S = A @ B.T + bias

    def run(metrics):
        return rt.evaluate(
            tr, te, scores=S, metrics=metrics, k=6, ties=ties, return_topk=True, nthreads=1
        )

    at_k = run(TOPK + ["coverage"])
    with_whole = run(TOPK + ["coverage", "roc_auc"])
    assert at_k.topk is not None and (at_k.topk >= 0).any()
    np.testing.assert_array_equal(at_k.topk, with_whole.topk)
    cols = [c for c in at_k.per_user.columns if c != "roc_auc"]
    pd.testing.assert_frame_equal(at_k.per_user[cols], with_whole.per_user[cols], check_exact=True)


@pytest.mark.parametrize("ties", ["noise", "index", "index_desc", "warprec"])
@pytest.mark.parametrize("with_list", [False, True])
def test_the_exact_kernels_give_what_the_policies_kernels_give_under_a_total_order(
    ties, with_list, monkeypatch
):
    """Under a total order of ties the whole-ranking metrics run ``block_exact`` (or
    ``block_exact_list``), which leave out the tie policies' ranks; ``block_ranked`` (or
    ``block_ranked_list``), which branches to the same exact ranks there, gives every value and
    list bit for bit, NaN and all-equal users, ``-inf`` scores and many positives included."""
    from recoeval_tracking.engine import kernels

    tr, te, A, B, bias = _data()
    S = A @ B.T + bias
    metrics = ALL + (["coverage"] if with_list else [])

    def run():
        return rt.evaluate(
            tr, te, scores=S, metrics=metrics, k=6, ties=ties, return_topk=with_list, nthreads=2
        )

    chosen = []
    pick = kernels.block_kernel

    def noted(plan):
        chosen.append(pick(plan))
        return chosen[-1]

    monkeypatch.setattr(kernels, "block_kernel", noted)
    exact = run()
    assert chosen[-1] is (kernels.block_exact_list if with_list else kernels.block_exact)
    monkeypatch.setattr(
        kernels,
        "block_kernel",
        lambda plan: kernels.block_ranked_list if plan.want_topk else kernels.block_ranked,
    )
    ranked = run()
    pd.testing.assert_frame_equal(exact.per_user, ranked.per_user, check_exact=True)
    if with_list:
        np.testing.assert_array_equal(exact.topk, ranked.topk)
    assert exact.per_user["roc_auc"].notna().sum() > 40
