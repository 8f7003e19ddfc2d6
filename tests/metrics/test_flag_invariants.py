"""The registry's flags say what a metric's values do: checked on values, for every metric.

* ``at_k``: the value depends on the cutoff K (a metric of the top-K list or of the ranks up to
  K) exactly when the flag is set; whole-ranking metrics are the same at every K.
* ``order_free``: the value is unchanged when the order inside each user's top-K list is
  reversed (the list's set kept) exactly when the flag is set.

A wrong flag names the column wrongly (``arp`` without ``_at_10``) or gives NaN by the rule for
order-free metrics on a pool of K items or fewer, so neither may drift from the definitions.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt

K = 5


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(11)
    m, n = 150, 300  # more items than 150 lists of 3 cover: coverage varies with K
    cell = rng.choice(3, size=(m, n), p=[0.85, 0.1, 0.05])
    r, c = np.nonzero(cell == 1)
    Xtr = sp.csr_array((np.ones(r.size), (r, c)), shape=(m, n))
    r, c = np.nonzero(cell == 2)
    Xte = sp.csr_array((rng.integers(1, 4, r.size).astype(float), (r, c)), shape=(m, n))
    S = rng.standard_normal((m, n))  # no ties
    feats = rng.standard_normal((n, 6))
    return Xtr, Xte, S, feats


def _every() -> list[str]:
    return ["all"] + [n for n, s in rt.METRICS.items() if s.extra_pass]


@pytest.fixture(scope="module")
def runs(case):
    """Evaluations at K=3 and K=8, and at K with the top-K order reversed (made once)."""
    Xtr, Xte, S, feats = case

    def run(S, k):
        # serendipity's "popular" set is the 5 most popular items, so it can vary; test
        # entries of value 1 are judged non-relevant (relevance level 2), so bpref can vary
        return rt.evaluate(
            Xtr,
            Xte,
            scores=S,
            metrics=_every(),
            k=k,
            item_features=feats,
            serendipity_top_n=5,
            relevance_level=2,
            nthreads=1,
        )

    return {
        "k3": run(S, 3),
        "k8": run(S, 8),
        "base": run(S, K),
        "flipped": run(_reversed_top_k(case, K), K),
    }


def _values(res, name: str, k: int) -> np.ndarray:
    """The metric's per-user column, or its aggregate as a one-element array."""
    for col in (f"{name}_at_{k}", name):
        if col in res.per_user.columns:
            return res.per_user[col].to_numpy(dtype=float)
        if col in res.aggregates:
            return np.array([res.aggregates[col]], dtype=float)
    raise AssertionError(f"{name} has no column or aggregate at k={k}")


def _reversed_top_k(case, k: int) -> np.ndarray:
    """The scores with the order of each user's top-k pool items reversed (same set)."""
    Xtr, _, S, _ = case
    S2 = S.copy()
    train = Xtr.toarray() > 0
    for u in range(S.shape[0]):
        pool = np.flatnonzero(~train[u])
        top = pool[np.argsort(-S[u, pool], kind="stable")[:k]]
        S2[u, top] = S[u, top[::-1]]
    return S2


@pytest.mark.parametrize("name", list(rt.METRICS))
def test_at_k_flag_is_whether_the_value_depends_on_k(runs, name):
    va, vb = _values(runs["k3"], name, 3), _values(runs["k8"], name, 8)
    same = np.allclose(va, vb, rtol=0, atol=1e-12, equal_nan=True)
    assert same != rt.METRICS[name].at_k, (name, rt.METRICS[name].at_k)


@pytest.mark.parametrize("name", [n for n, s in rt.METRICS.items() if s.at_k])
def test_order_free_flag_is_whether_the_order_inside_the_list_matters(runs, name):
    va, vb = _values(runs["base"], name, K), _values(runs["flipped"], name, K)
    assert not np.isnan(va).all(), name
    same = np.allclose(va, vb, rtol=0, atol=1e-12, equal_nan=True)
    assert same == rt.METRICS[name].order_free, (name, rt.METRICS[name].order_free)
