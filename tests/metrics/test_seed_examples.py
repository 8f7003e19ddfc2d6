"""The engine reproduces the published worked examples (shared/reference/seed_examples.json).

Every expected value that recometrics' definitions cover (P, TP, R, AP, TAP, linear NDCG, RR,
catalog ROC-AUC, PR-AUC) is checked through calc_reco_metrics (factors, item biases only, float32
factors) and through evaluate (dense scores); the exponential-gain NDCG values and Hivemall's in-list AUC
through the engine's variant metrics ``ndcg_exp`` and ``auc_topk``; the top-K ones also from ranked
lists. The raw (linear-gain) DCG values through the engine's ``dcg`` metric, from scores and from
ranked lists. The expected numbers are the published ones, not engine output.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from reference import METRICS, TOPK_METRICS, seed_checks

from ._engine_adapter import calc, run_evaluate


def _checks(seed_examples):
    """The checks of metrics recometrics defines (linear NDCG) plus the exponential NDCG ones."""
    out = []
    for case in seed_examples["cases"]:
        for c in seed_checks(case):
            if c.metric in METRICS:
                out.append(c)
    return out


def _engine_name(check) -> str | None:
    """The engine's registry name for a check's quantity (None when it has no counterpart)."""
    if check.metric == "ndcg" and check.ndcg_gain == "exponential":
        return "ndcg_exp"
    if check.metric == "auc_topk_list":
        return "auc_topk"
    return check.metric if check.metric in METRICS else None


def _test_matrix(check):
    rows, cols, vals = [], [], []
    for u in range(check.n_users):
        for j, v in sorted(check.test.items()):
            rows.append(u), cols.append(j), vals.append(v)
    return sp.csr_array(
        (np.array(vals), (np.array(rows), np.array(cols))), shape=(check.n_users, check.n_items)
    )


def _k(check):
    return check.k if check.k is not None else 1


def _assert_all_users(got, check, what):
    assert got.shape == (check.n_users,), what
    np.testing.assert_allclose(
        got,
        np.full(check.n_users, check.expected),
        rtol=0,
        atol=check.tol,
        err_msg=f"{check.case} {check.label} via {what}",
    )


def test_seed_checks_cover_the_engine_metrics(seed_examples):
    checks = _checks(seed_examples)
    linear = [c for c in checks if c.ndcg_gain == "linear"]
    assert len(linear) == 24
    assert len(checks) - len(linear) == 3  # Hivemall's two and the blog's exponential NDCG
    assert {c.metric for c in checks} == {"p", "r", "ap", "tap", "rr", "ndcg", "roc_auc", "pr_auc"}


def test_calc_reco_metrics_factors(seed_examples):
    for c in _checks(seed_examples):
        if c.ndcg_gain != "linear":
            continue
        X = _test_matrix(c)
        A = np.ones((c.n_users, 1))
        B = c.scores[:, None].copy()
        for noise in (False, True):  # no ties: noise cannot change anything
            got = calc(None, X, A, B, _k(c), noise=noise)[c.metric]
            _assert_all_users(got, c, f"calc_reco_metrics(A, B, noise={noise})")
        got = calc(None, X, A.astype(np.float32), B.astype(np.float32), _k(c))[c.metric]
        np.testing.assert_allclose(
            got, c.expected, rtol=0, atol=1e-6, err_msg=f"{c.case} {c.label} via float32 factors"
        )


def test_calc_reco_metrics_item_biases_only(seed_examples):
    for c in _checks(seed_examples):
        if c.ndcg_gain != "linear":
            continue
        got = calc(None, _test_matrix(c), None, None, _k(c), item_biases=c.scores.copy())
        _assert_all_users(got[c.metric], c, "calc_reco_metrics(item_biases only)")


def test_calc_reco_metrics_dataframe_columns(seed_examples):
    c = seed_examples["by_name"]["hivemall_binary"]
    (check,) = [x for x in seed_checks(c) if x.label == "ap_at_k" and x.k == 4]
    df = __import__("recoeval_tracking").calc_reco_metrics(
        None,
        _test_matrix(check),
        np.ones((3, 1)),
        check.scores[:, None].copy(),
        k=4,
        recall=True,
        break_ties_with_noise=False,
        nthreads=1,
    )
    assert list(df.columns) == ["P@4", "R@4", "AP@4", "NDCG@4"]
    np.testing.assert_allclose(df["P@4"], 0.5, atol=1e-12)
    np.testing.assert_allclose(df["R@4"], 2 / 3, atol=1e-12)
    np.testing.assert_allclose(df["AP@4"], 0.5555555555555555, atol=1e-12)
    np.testing.assert_allclose(df["NDCG@4"], 0.7039180890341349, atol=1e-12)


def test_evaluate_variant_metrics(seed_examples):
    """Exponential NDCG and Hivemall's in-list AUC, as the engine's named variant metrics."""
    import recoeval_tracking as rt

    done = 0
    for case in seed_examples["cases"]:
        for c in seed_checks(case):
            name = _engine_name(c)
            if name not in ("ndcg_exp", "auc_topk"):
                continue
            if name not in rt.METRICS:
                pytest.skip(f"the engine has no {name} metric")
            S = np.tile(c.scores, (c.n_users, 1))
            values, _, _ = run_evaluate(None, _test_matrix(c), c.k, scores=S, metrics=[name])
            _assert_all_users(values[name], c, f"evaluate(metrics=[{name!r}])")
            done += 1
    assert done == 3 + 2  # three exponential NDCG values, Hivemall's in-list AUC at k=4 and k=2


def test_evaluate_dcg(seed_examples):
    """The published unnormalised DCG values, as the engine's ``dcg`` metric."""
    done = 0
    for case in seed_examples["cases"]:
        for c in seed_checks(case):
            if c.metric != "dcg":
                continue
            assert c.ndcg_gain == "linear" and c.k is not None
            S = np.tile(c.scores, (c.n_users, 1))
            for ties in ("index", "noise", "average"):
                values, _, _ = run_evaluate(
                    None, _test_matrix(c), c.k, scores=S, ties=ties, metrics=["dcg"]
                )
                _assert_all_users(values["dcg"], c, f"evaluate(metrics=['dcg'], ties={ties})")
            ranked = np.tile(np.array(c.ranking[: c.k], dtype=np.int64), (c.n_users, 1))
            values, _, _ = run_evaluate(None, _test_matrix(c), c.k, ranked=ranked, metrics=["dcg"])
            _assert_all_users(values["dcg"], c, "evaluate(ranked, metrics=['dcg'])")
            done += 1
    assert done >= 1


@pytest.mark.parametrize("ties", ["index", "noise"])
def test_evaluate_dense_scores(seed_examples, ties):
    for c in _checks(seed_examples):
        S = np.tile(c.scores, (c.n_users, 1))
        values, reasons, _ = run_evaluate(None, _test_matrix(c), _k(c), scores=S, ties=ties)
        assert list(reasons) == [""] * c.n_users
        _assert_all_users(values[_engine_name(c)], c, f"evaluate(scores, ties={ties})")


def test_evaluate_cumulative_column(seed_examples):
    # The cumulative curve at the example's k is the published value too.
    for c in _checks(seed_examples):
        if c.metric not in TOPK_METRICS or c.k is None:
            continue
        k_max = c.n_items
        S = np.tile(c.scores, (c.n_users, 1))
        values, _, _ = run_evaluate(None, _test_matrix(c), k_max, scores=S, cumulative=True)
        _assert_all_users(
            values[_engine_name(c)][:, c.k - 1], c, f"evaluate(cumulative, k={k_max})"
        )


def test_evaluate_ranked_lists(seed_examples):
    for c in _checks(seed_examples):
        if c.metric not in TOPK_METRICS or c.k is None or c.k >= c.n_items:
            continue
        ranked = np.tile(np.array(c.ranking[: c.k], dtype=np.int64), (c.n_users, 1))
        values, _, res = run_evaluate(
            None, _test_matrix(c), c.k, ranked=ranked, metrics=[_engine_name(c)]
        )
        assert res.topk_only
        _assert_all_users(values[_engine_name(c)], c, "evaluate(ranked)")
