"""``gauc`` from one engine pass, under every tie policy.

gauc's per-user AUC gives tied items their average rank (RecBole's ``Collector._average_rank``)
whatever the tie policy of the other metrics. The engine fills it in the same pass from the
raw-score counts of each positive (items above, items tied), in ``O(|T|)`` per user: it is
checked here per user against the slow reference (``reference.auc_average_ranks``, pair by
pair) and against a second engine pass with ``ties="average"`` (its ``roc_auc``), on tied
scores, ``-inf`` scores and train items, for every tie policy, on one thread and on several,
from scores and from factors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import reference as ref
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.metrics.beyond import AUC_AVERAGE_TIES
from recoeval_tracking.metrics.evaluate import compute
from recoeval_tracking.options import EvalOptions

TIES = ["noise", "index", "index_desc", "optimistic", "pessimistic", "average"]


def _case(seed: int, m: int = 40, n: int = 25):
    """Integer-valued factors (many tied scores), a few -inf scores, train and test entries."""
    rng = np.random.default_rng(seed)
    cell = rng.choice(3, size=(m, n), p=[0.5, 0.25, 0.25])
    train = sp.csr_array((cell == 1).astype(np.float64))
    test = sp.csr_array((cell == 2).astype(np.float64) * rng.integers(1, 4, (m, n)))
    A = rng.integers(-1, 2, (m, 2)).astype(np.float64)
    B = rng.integers(-1, 2, (n, 2)).astype(np.float64)
    S = A @ B.T
    S[rng.random((m, n)) < 0.05] = -np.inf
    return train, test, A, B, S


def _reference(train, test, S) -> np.ndarray:
    m, n = S.shape
    out = np.full(m, np.nan)
    for u in range(m):
        tr = set(train.indices[train.indptr[u] : train.indptr[u + 1]].tolist())
        lo, hi = test.indptr[u], test.indptr[u + 1]
        pos = dict(zip(test.indices[lo:hi].tolist(), test.data[lo:hi].tolist()))
        out[u] = ref.auc_average_ranks(S[u], [i for i in range(n) if i not in tr], pos)
    return out


def _weighted(auc: np.ndarray, test) -> float:
    n_test = np.diff(test.indptr)
    ok = ~np.isnan(auc)
    return float((auc[ok] * n_test[ok]).sum() / n_test[ok].sum())


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("seed", [0, 1])
def test_one_pass_auc_per_user_equals_reference_and_second_pass(ties, seed):
    train, test, _, _, S = _case(seed)
    opts = EvalOptions(metrics=["gauc"], k=5, ties=ties, nthreads=1)
    raw = compute(train, test, opts, scores=S)
    if ties == "average":  # the roc_auc column itself is the average-rank AUC
        assert AUC_AVERAGE_TIES not in raw.aux
        mine = raw.whole[[s.name for s in raw.whole_specs].index("roc_auc")]
    else:
        assert raw.whole.shape[0] == len(raw.whole_specs) + 1  # one extra row, same pass
        mine = raw.aux[AUC_AVERAGE_TIES]
    want = _reference(train, test, S)
    defined = raw.reason == 0
    np.testing.assert_allclose(mine[defined], want[defined], rtol=0, atol=1e-12)
    second = (
        rt.evaluate(train, test, scores=S, metrics=["roc_auc"], k=5, ties="average", nthreads=1)
        .per_user["roc_auc"]
        .to_numpy()
    )
    np.testing.assert_allclose(mine[defined], second[defined], rtol=0, atol=1e-12)
    assert np.isnan(mine[~defined]).all()
    res = rt.evaluate(train, test, scores=S, metrics=["gauc", "p"], k=5, ties=ties, nthreads=1)
    assert res.aggregates["gauc"] == pytest.approx(_weighted(second, test), abs=1e-12)


@pytest.mark.parametrize("ties", ["index", "noise", "pessimistic"])
def test_one_pass_auc_on_threads_blocks_and_factors(ties):
    train, test, A, B, _ = _case(3, m=60, n=30)
    S = A @ B.T
    auc = _reference(train, test, S)
    kw = dict(metrics=["gauc"], k=4, ties=ties)
    res = rt.evaluate(train, test, scores=S, nthreads=2, block_rows=7, **kw)
    defined = (res.per_user["nan_reason"] == "").to_numpy()
    assert 0 < defined.sum() < len(defined)  # some users have all scores equal: NaN
    want = _weighted(np.where(defined, auc, np.nan), test)
    assert res.aggregates["gauc"] == pytest.approx(want, abs=1e-12)
    factors = rt.evaluate(train, test, A=A, B=B, nthreads=2, **kw).aggregates["gauc"]
    assert factors == pytest.approx(want, abs=1e-12)


def test_recbole_example_under_every_policy():
    """One user, scores [2, 1, 1, 0], positives items 0 and 1: RecBole's GAUC is 0.875 (the
    tied pair counts 1/2) under any tie policy of the other metrics."""
    test = sp.csr_array(np.array([[1.0, 1.0, 0.0, 0.0]]))
    S = np.array([[2.0, 1.0, 1.0, 0.0]])
    for ties in TIES:
        res = rt.evaluate(None, test, scores=S, k=1, metrics=["gauc"], ties=ties, nthreads=1)
        assert res.aggregates["gauc"] == pytest.approx(0.875, abs=1e-15), ties
    assert not math.isnan(res.aggregates["gauc"])
