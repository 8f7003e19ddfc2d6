"""Invariants every registered metric keeps (looping over ``recoeval_tracking.METRICS``).

* the cumulative column at k equals the single-K result at k;
* results do not depend on the thread count or on the block size, also with noise tie-breaking;
* permuting the user rows permutes the results;
* float32 inputs agree with float64 inputs to float32 precision;
* a perfect ranking scores 1 on every normalised metric (where the metric can reach 1);
* each NaN rule, alone, gives NaN for every metric with its documented reason.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from reference import NAN_REASONS

import recoeval_tracking as rt

from ._engine_adapter import calc

K = 6


def _registry(with_vectors: bool = True) -> list[str]:
    """Every registered metric that has a per-user column (aggregates are checked apart).

    Intra-list similarity needs item vectors, which a dense score array does not carry.
    """
    return [
        name
        for name, spec in rt.METRICS.items()
        if spec.stage != "aggregate" and (with_vectors or name not in ("ils", "diversity"))
    ]


def _aggregates() -> list[str]:
    return [name for name, spec in rt.METRICS.items() if spec.stage == "aggregate"]


def _column(name: str, k: int, per_user) -> str | None:
    for col in (f"{name}_at_{k}", name):
        if col in per_user.columns:
            return col
    return None


def _split(m: int, n: int, seed: int, p_train: float = 0.25, p_test: float = 0.2):
    rng = np.random.default_rng(seed)
    cell = rng.choice(3, size=(m, n), p=[1 - p_train - p_test, p_train, p_test])
    r, c = np.nonzero(cell == 1)
    Xtr = sp.csr_array((rng.integers(1, 5, r.size).astype(float), (r, c)), shape=(m, n))
    r, c = np.nonzero(cell == 2)
    Xte = sp.csr_array((rng.integers(1, 4, r.size).astype(float), (r, c)), shape=(m, n))
    return Xtr, Xte


@pytest.fixture(scope="module")
def data():
    m, n, p = 120, 40, 4
    rng = np.random.default_rng(7)
    Xtr, Xte = _split(m, n, 8)
    A = rng.standard_normal((m, p))
    B = rng.standard_normal((n, p))
    tied = rng.integers(0, 3, size=(m, n)).astype(np.float64)  # many ties
    return {"Xtr": Xtr, "Xte": Xte, "A": A, "B": B, "tied": tied}


def _evaluate(data, *, k=K, scores=None, **kw):
    if scores is None:
        kw.setdefault("A", data["A"])
        kw.setdefault("B", data["B"])
    else:
        kw["scores"] = scores
    kw.setdefault("nthreads", 1)
    # "all" leaves out gauc (average-rank ties beside the run's policy): name it too
    every = ["all"] + [n for n, s in rt.METRICS.items() if s.extra_pass]
    return rt.evaluate(data["Xtr"], data["Xte"], metrics=every, k=k, **kw)


@pytest.mark.parametrize("ties, tied", [("noise", False), ("noise", True), ("index", True)])
def test_cumulative_column_equals_single_k(data, ties, tied):
    scores = data["tied"] if tied else None
    cum = _evaluate(data, scores=scores, ties=ties, cumulative=True)
    for j in range(1, K + 1):
        single = _evaluate(data, k=j, scores=scores, ties=ties)
        for name in _registry():
            col = _column(name, j, single.per_user)
            if col is None:
                # intra-list similarity needs item vectors, which dense scores do not have
                assert scores is not None and name in ("ils", "diversity"), name
                assert name not in single.definitions["metrics"]
                continue
            got_single = single.per_user[col].to_numpy()
            curve = cum.curves_per_user.get(f"{name}_at_k")
            if curve is not None:
                np.testing.assert_allclose(
                    curve[:, j - 1],
                    got_single,
                    rtol=0,
                    atol=1e-12,
                    equal_nan=True,
                    err_msg=f"{name}@{j} ({ties})",
                )
            else:  # whole-ranking metric: the same in every run
                np.testing.assert_array_equal(
                    cum.per_user[_column(name, K, cum.per_user)], got_single, err_msg=name
                )
    # at least one top-K curve per cumulative run, and they have K columns
    assert cum.curves_per_user and all(v.shape == (120, K) for v in cum.curves_per_user.values())


def test_calc_reco_metrics_cumulative_column_equals_single_k(data):
    S = data["tied"]
    eye = np.eye(S.shape[1])
    cum = calc(data["Xtr"], data["Xte"], S, eye, K, noise=True, cumulative=True)
    for j in range(1, K + 1):
        single = calc(data["Xtr"], data["Xte"], S, eye, j, noise=True)
        for name, arr in cum.items():
            if arr.ndim == 2:
                np.testing.assert_allclose(
                    arr[:, j - 1],
                    single[name],
                    rtol=0,
                    atol=1e-12,
                    equal_nan=True,
                    err_msg=f"{name}@{j}",
                )
            else:
                np.testing.assert_array_equal(arr, single[name], err_msg=name)


@pytest.mark.parametrize("tied", [False, True])
def test_threads_and_blocks_do_not_change_results(data, tied):
    scores = data["tied"] if tied else None
    base = _evaluate(data, scores=scores, ties="noise", cumulative=True, nthreads=1)
    for kw in ({"nthreads": 2}, {"nthreads": 2, "block_rows": 7}, {"nthreads": 1, "block_rows": 1}):
        other = _evaluate(data, scores=scores, ties="noise", cumulative=True, **kw)
        for name in _registry(with_vectors=scores is None):
            col = _column(name, K, base.per_user)
            np.testing.assert_array_equal(
                base.per_user[col].to_numpy(),
                other.per_user[col].to_numpy(),
                err_msg=f"{name} {kw}",
            )
        for key, curve in base.curves_per_user.items():
            np.testing.assert_array_equal(curve, other.curves_per_user[key], err_msg=key)
        assert set(base.aggregates) == {
            f"{a}_at_{K}" if rt.METRICS[a].at_k else a for a in _aggregates()
        }
        assert base.aggregates == other.aggregates, kw
    # calc_reco_metrics too, with noise on tied scores
    S = data["tied"]
    eye = np.eye(S.shape[1])
    one = calc(data["Xtr"], data["Xte"], S, eye, K, noise=True, nthreads=1)
    two = calc(data["Xtr"], data["Xte"], S, eye, K, noise=True, nthreads=2)
    for name in one:
        np.testing.assert_array_equal(one[name], two[name], err_msg=name)


@pytest.mark.parametrize("ties, tied", [("noise", False), ("index", True)])
def test_permuting_users_permutes_results(data, ties, tied):
    perm = np.random.default_rng(3).permutation(data["Xte"].shape[0])
    scores = data["tied"] if tied else None
    base = _evaluate(data, scores=scores, ties=ties, cumulative=True)
    permuted_data = {
        "Xtr": data["Xtr"][perm],
        "Xte": data["Xte"][perm],
        "A": data["A"][perm],
        "B": data["B"],
    }
    other = _evaluate(
        permuted_data, scores=None if scores is None else scores[perm], ties=ties, cumulative=True
    )
    for name in _registry(with_vectors=scores is None):
        col = _column(name, K, base.per_user)
        np.testing.assert_array_equal(
            base.per_user[col].to_numpy()[perm], other.per_user[col].to_numpy(), err_msg=name
        )
    for key, curve in base.curves_per_user.items():
        np.testing.assert_array_equal(curve[perm], other.curves_per_user[key], err_msg=key)
    np.testing.assert_array_equal(
        base.per_user["nan_reason"].to_numpy()[perm], other.per_user["nan_reason"].to_numpy()
    )


def test_float32_agrees_with_float64(data):
    A32 = data["A"].astype(np.float32)
    B32 = data["B"].astype(np.float32)
    r32 = _evaluate(data, A=A32, B=B32, cumulative=True)
    r64 = _evaluate(data, A=A32.astype(np.float64), B=B32.astype(np.float64), cumulative=True)
    for name in _registry():
        col = _column(name, K, r32.per_user)
        v32 = r32.per_user[col].to_numpy()
        assert v32.dtype == np.float64
        np.testing.assert_allclose(
            v32, r64.per_user[col].to_numpy(), rtol=0, atol=1e-5, equal_nan=True, err_msg=name
        )
    c32 = calc(data["Xtr"], data["Xte"], A32, B32, K, noise=True)
    c64 = calc(data["Xtr"], data["Xte"], A32.astype(float), B32.astype(float), K, noise=True)
    for name in c32:
        np.testing.assert_allclose(
            c32[name], c64[name], rtol=0, atol=1e-5, equal_nan=True, err_msg=name
        )


def test_perfect_ranking_scores_one():
    m, n, k = 30, 20, 4
    rng = np.random.default_rng(11)
    Xtr, Xte = _split(m, n, 12, p_train=0.2, p_test=0.25)
    # Perfect scores: positives above negatives, higher test value higher; all distinct.
    S = rng.permutation(m * n).reshape(m, n) / (m * n)  # distinct in [0, 1)
    dense_test = Xte.toarray()
    S = np.where(dense_test > 0, 10.0 * dense_test + 1.0 + S, S)
    res = rt.evaluate(Xtr, Xte, scores=S, metrics="all", k=k, ties="index", nthreads=1)
    pu = res.per_user
    n_test = np.diff(Xte.indptr)
    pool = n - np.diff(Xtr.indptr)
    ok = (n_test > 0) & (pool > n_test) & (pool >= 2)  # has positives and negatives
    big = ok & (pool > k)
    assert ok.sum() >= 15 and big.sum() >= 15
    ones = {
        "p": big & (n_test >= k),
        "tp": big,
        "r": big & (n_test <= k),
        "hit": big,
        "ap": ok & (n_test <= k),
        "tap": ok,
        "ndcg": ok,
        "rr": ok,
        "roc_auc": ok,
        "pr_auc": ok,
    }
    for name, mask in ones.items():
        col = _column(name, k, pu)
        np.testing.assert_allclose(pu[col].to_numpy()[mask], 1.0, rtol=0, atol=1e-12, err_msg=name)
    # below 1 exactly where the definition caps it
    np.testing.assert_allclose(
        pu[f"p_at_{k}"].to_numpy()[big & (n_test < k)], (n_test / k)[big & (n_test < k)]
    )
    np.testing.assert_allclose(
        pu[f"r_at_{k}"].to_numpy()[big & (n_test > k)], (k / n_test)[big & (n_test > k)]
    )
    np.testing.assert_allclose(
        pu[f"ap_at_{k}"].to_numpy()[ok & (n_test > k)], (k / n_test)[ok & (n_test > k)]
    )


def _nan_rule_cases():
    """One user per rule, plus users that trigger none; 6 items, k = 3."""
    n = 6
    rows = {
        # name: (train items, test {item: value}, scores, expected reason)
        "clean": ([0], {1: 1.0, 3: 2.0}, [6, 5, 4, 3, 2, 1], ""),
        "no_test": ([0], {}, [6, 5, 4, 3, 2, 1], "no_test"),
        "min_pos_test": ([0], {1: 1.0}, [6, 5, 4, 3, 2, 1], "min_pos_test"),
        "min_items_pool": ([0, 1, 2, 3], {4: 1.0, 5: 1.0}, [6, 5, 4, 3, 2, 1], "min_items_pool"),
        "cold_start": ([], {1: 1.0, 2: 1.0}, [6, 5, 4, 3, 2, 1], "cold_start"),
        "nan_score": ([0], {1: 1.0, 2: 1.0}, [6, 5, math.nan, 3, 2, 1], "nan_score"),
        "nan_in_train": ([0], {1: 1.0, 2: 1.0}, [math.nan, 5, 4, 3, 2, 1], ""),
        "all_equal": ([0], {1: 1.0, 2: 1.0}, [9, 1, 1, 1, 1, 1], "all_equal"),
        "only_positives": ([0, 1], {2: 1.0, 3: 2.0, 4: 1.0, 5: 1.0}, [6, 5, 4, 4.5, 3, 2], ""),
        "pool_le_k": ([0, 1, 2], {4: 1.0, 5: 2.0}, [6, 5, 4, 1, 3, 2], ""),
    }
    return n, rows


def test_each_nan_rule_alone():
    n, rows = _nan_rule_cases()
    names = list(rows)
    tr_r, tr_c, te_r, te_c, te_v, S = [], [], [], [], [], []
    for u, name in enumerate(names):
        train, test, scores, _ = rows[name]
        tr_r += [u] * len(train)
        tr_c += train
        te_r += [u] * len(test)
        te_c += list(test)
        te_v += list(test.values())
        S.append(scores)
    m = len(names)
    Xtr = sp.csr_array((np.ones(len(tr_r)), (tr_r, tr_c)), shape=(m, n))
    Xte = sp.csr_array((np.array(te_v), (te_r, te_c)), shape=(m, n))
    S = np.array(S, dtype=float)
    # min_items_pool=3 only hits the user with a pool of 2; min_pos_test=2 only the user with 1.
    kw = dict(min_pos_test=2, min_items_pool=3, consider_cold_start=False)
    k = 3
    for ties in ("index", "noise"):
        res = rt.evaluate(Xtr, Xte, scores=S, metrics="all", k=k, ties=ties, nthreads=1, **kw)
        pu = res.per_user.set_index(np.array(names))
        metric_cols = res.metric_columns
        for name in names:
            expected = rows[name][3]
            assert pu.loc[name, "nan_reason"] == expected, name
            vals = pu.loc[name, metric_cols].to_numpy(dtype=float)
            if expected:
                assert np.all(np.isnan(vals)), name
        assert not pu.loc["clean", metric_cols].isna().any()
        assert not pu.loc["nan_in_train", metric_cols].isna().any()
        only = pu.loc["only_positives"]
        assert only[f"ndcg_at_{k}"] == pytest.approx(1.0)  # scores follow the values: 2 first
        # the DCG and NDCG families (any gain) are defined, every other accuracy metric is NaN;
        # the beyond-accuracy metrics describe the list itself and stay defined
        accuracy = {_column(n, k, pu) for n, spec in rt.METRICS.items() if spec.stage == "kernel"}
        gains = {
            _column(n, k, pu) for n, spec in rt.METRICS.items() if spec.family in ("ndcg", "dcg")
        }
        assert all(math.isnan(only[c]) for c in metric_cols if c in accuracy and c not in gains)
        assert all(not math.isnan(only[c]) for c in gains if c in metric_cols)
        assert all(not math.isnan(only[c]) for c in metric_cols if c not in accuracy)
        small = pu.loc["pool_le_k"]  # pool {3, 4, 5} of 3 <= k, ranked [4, 5, 3]
        for c in ("p", "tp", "r", "hit"):
            assert math.isnan(small[f"{c}_at_{k}"]), c
        assert small[f"ap_at_{k}"] == 1.0 and small[f"tap_at_{k}"] == 1.0
        assert small[f"rr_at_{k}"] == 1.0
        assert small[f"ndcg_at_{k}"] == pytest.approx(
            (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)), abs=1e-12
        )
        assert small["roc_auc"] == 1.0 and small["pr_auc"] == 1.0
        counts = res.nan_counts
        assert counts == dict.fromkeys(NAN_REASONS, 1)  # one user of each reason
    # consider_cold_start only applies with a train matrix; with X_train=None it is ignored.
    res = rt.evaluate(
        None,
        Xte,
        scores=np.nan_to_num(S, nan=-5.0),
        metrics="all",
        k=k,
        ties="index",
        consider_cold_start=False,
        nthreads=1,
    )
    assert "cold_start" not in set(res.per_user["nan_reason"])
    # calc_reco_metrics applies the same rules
    out = calc(Xtr, Xte, S, np.eye(n), k, **kw)
    for u, name in enumerate(names):
        if rows[name][3]:
            assert all(math.isnan(out[mname][u]) for mname in out), name
