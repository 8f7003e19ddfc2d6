"""Cross-checks with other libraries, on the cells where their definitions agree with ours.

Each library is optional (``pytest.importorskip``):

* ``recometrics`` (0.1.6, the Python package of the R function our contract documents): every
  metric, on tie-free scores with ``min_pos_test=1``; cumulative NDCG only up to the user's number of
  test items (past it recometrics repeats the value at that count, a known departure from its
  documentation; we compute it).
* ``implicit`` (``implicit.evaluation.ranking_metrics_at_k``), through ``profile="implicit"``:
  its ``precision`` is our ``p_pooled`` (sum(hits) / sum(min(K, |test|))), its ``map`` the mean of
  our TAP@K, its ``ndcg`` our binary-gain ``ndcg_bin``. Its ``auc`` is not compared: it counts
  train items as negatives and approximates the order past K.
* ``ranx`` (``ranx.evaluate``), through ``profile="ranx"``: per-query precision@k, recall@k, map@k
  (our AP@K), ndcg@k (linear gain), ndcg_burges@k (``ndcg_exp``), mrr@k, hit_rate@k and map
  without cutoff (our PR-AUC), with the run holding each user's pool (train items left out); and
  dcg@k (our ``dcg``, asked beside the profile's metrics).

* ``trec_eval`` (through ``pytrec_eval``, the ``pytrec-eval-terrier`` build), through
  ``profile="trec_eval"``: P, recall, map_cut, ndcg_cut, map and recip_rank, exact with ties too
  (trec_eval orders tied documents by docno descending: ``ties="index_desc"``).

implicit and ranx order tied scores in an implementation-defined way (a heap, an unstable sort),
so on tied data their values are checked to lie between our pessimistic and optimistic policies.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from reference import METRICS, TOPK_METRICS

import recoeval_tracking as rt

from ._engine_adapter import CALC_KEYS, calc
from ._judgements import qrels_and_run

K = 5


def _data(seed: int, m: int = 60, n: int = 30, p: int = 4, graded: bool = True, dtype=np.float64):
    rng = np.random.default_rng(seed)
    cell = rng.choice(3, size=(m, n), p=[0.55, 0.25, 0.2])
    cell[:4] = np.where(cell[:4] == 1, 0, cell[:4])  # a few cold-start users
    values = rng.integers(1, 4, (m, n)) if graded else np.ones((m, n))
    Xtr = sp.csr_matrix((cell == 1).astype(dtype) * rng.integers(1, 4, (m, n)))
    Xte = sp.csr_matrix((cell == 2).astype(dtype) * values)
    A = rng.standard_normal((m, p)).astype(dtype)
    B = rng.standard_normal((n, p)).astype(dtype)
    return Xtr, Xte, A, B


# ----------------------------------------------------------------------------- recometrics


def _theirs(recometrics, Xtr, Xte, A, B, k: int, **kw):
    """recometrics' metrics, every one of them, as arrays (tie-free scores unless noise is asked)."""
    kw = dict(break_ties_with_noise=False) | kw
    return recometrics.calc_reco_metrics(
        Xtr, Xte, A, B, k=k, all_metrics=True, as_df=False, nthreads=1, **kw
    )


def _assert_same(ours, theirs, atol: float) -> None:
    for name in METRICS:
        np.testing.assert_allclose(
            ours[name],
            np.asarray(theirs[CALC_KEYS[name]], dtype=float),
            rtol=0,
            atol=atol,
            equal_nan=True,
            err_msg=name,
        )


@pytest.mark.parametrize("k", [1, 3, K])
@pytest.mark.parametrize("noise", [False, True])
def test_recometrics_single_k(k, noise):
    recometrics = pytest.importorskip("recometrics")
    Xtr, Xte, A, B = _data(1)
    theirs = _theirs(recometrics, Xtr, Xte, A, B, k, break_ties_with_noise=noise)
    ours = calc(Xtr, Xte, A, B, k, noise=noise)
    assert np.sum(~np.isnan(ours["p"])) >= 30  # the comparison covers many defined users
    _assert_same(ours, theirs, atol=1e-9)


def test_recometrics_cumulative():
    recometrics = pytest.importorskip("recometrics")
    Xtr, Xte, A, B = _data(2)
    theirs = _theirs(recometrics, Xtr, Xte, A, B, K, cumulative=True)
    ours = calc(Xtr, Xte, A, B, K, cumulative=True)
    n_test = np.diff(Xte.indptr)
    for name in METRICS:
        mine = ours[name]
        other = np.asarray(theirs[CALC_KEYS[name]], dtype=float)
        if name == "ndcg":  # agree up to the number of test items only
            upto = np.arange(1, K + 1)[None, :] <= n_test[:, None]
            mine, other = np.where(upto, mine, 0.0), np.where(upto, other, 0.0)
        np.testing.assert_allclose(mine, other, rtol=0, atol=1e-9, equal_nan=True, err_msg=name)


def test_recometrics_float32():
    recometrics = pytest.importorskip("recometrics")
    Xtr, Xte, A, B = _data(3, dtype=np.float32)
    theirs = _theirs(recometrics, Xtr, Xte, A, B, K)
    _assert_same(calc(Xtr, Xte, A, B, K), theirs, atol=1e-5)


def test_recometrics_thresholds_where_it_honours_them():
    # recometrics applies min_items_pool and consider_cold_start (not min_pos_test): compare those.
    recometrics = pytest.importorskip("recometrics")
    Xtr, Xte, A, B = _data(4)
    kw = dict(min_items_pool=24, consider_cold_start=False)
    theirs = _theirs(recometrics, Xtr, Xte, A, B, K, **kw)
    ours = calc(Xtr, Xte, A, B, K, **kw)
    assert 5 <= np.sum(np.isnan(ours["ap"])) <= 55
    _assert_same(ours, theirs, atol=1e-9)


# -------------------------------------------------------------------------------- implicit


@pytest.mark.parametrize("tied", [False, True])
def test_implicit_profile_reproduces_ranking_metrics_at_k(tied):
    pytest.importorskip("implicit")
    from implicit.cpu.als import AlternatingLeastSquares
    from implicit.evaluation import ranking_metrics_at_k

    Xtr, Xte, A, B = _data(5, graded=False, dtype=np.float32)
    if tied:  # coarse factors: many equal scores
        A, B = np.round(A).astype(np.float32), np.round(B).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # implicit warns about the BLAS thread pool
        model = AlternatingLeastSquares(factors=A.shape[1])
    model.user_factors = A
    model.item_factors = B
    theirs = ranking_metrics_at_k(model, Xtr, Xte, K=K, show_progress=False, num_threads=1)

    if tied:
        # implicit orders tied items by where its top-K heap happens to keep them (neither item
        # index nor its reverse), so only the bounds over all tie orderings can be checked
        lo = rt.evaluate(
            Xtr, Xte, A=A, B=B, k=K, nthreads=1, profile="implicit", ties="pessimistic"
        ).means
        hi = rt.evaluate(
            Xtr, Xte, A=A, B=B, k=K, nthreads=1, profile="implicit", ties="optimistic"
        ).means
        for theirs_key, ours_key in (
            ("precision", f"p_pooled_at_{K}"),
            ("map", f"tap_at_{K}"),
            ("ndcg", f"ndcg_bin_at_{K}"),
        ):
            assert lo[ours_key] - 1e-9 <= theirs[theirs_key] <= hi[ours_key] + 1e-9, theirs_key
        assert lo[f"p_pooled_at_{K}"] < hi[f"p_pooled_at_{K}"]  # the ties do matter here
        return
    res = rt.evaluate(Xtr, Xte, A=A, B=B, k=K, nthreads=1, profile="implicit")
    has = np.diff(Xte.indptr) > 0
    pu = res.per_user
    assert res.means[f"p_pooled_at_{K}"] == pytest.approx(theirs["precision"], abs=1e-9)
    assert np.mean(pu[f"tap_at_{K}"].to_numpy()[has]) == pytest.approx(theirs["map"], abs=1e-9)
    assert np.mean(pu[f"ndcg_bin_at_{K}"].to_numpy()[has]) == pytest.approx(
        theirs["ndcg"], abs=1e-9
    )


# ------------------------------------------------------------------------------------ ranx


@pytest.mark.slow  # importing ranx and building its typed dicts takes ~10 s
@pytest.mark.parametrize("tied", [False, True])
def test_ranx_profile_per_user(tied):
    ranx = pytest.importorskip("ranx")
    Xtr, Xte, A, B = _data(6, m=40)
    Xtr, Xte = sp.csr_array(Xtr), sp.csr_array(Xte)
    if tied:
        A, B = np.round(A), np.round(B)
    # zero-padded query ids: ranx orders queries by id
    qrels, run = qrels_and_run(Xtr, Xte, A @ B.T, qid="u{:05d}")
    names = {
        f"precision@{K}": "p",
        f"recall@{K}": "r",
        f"map@{K}": "ap",
        f"ndcg@{K}": "ndcg",
        f"ndcg_burges@{K}": "ndcg_exp",
        f"mrr@{K}": "rr",
        f"hit_rate@{K}": "hit",
        "map": "pr_auc",
        f"dcg@{K}": "dcg",
    }
    kw = dict(k=K, nthreads=1, profile="ranx", metrics=list(names.values()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba type-safety warnings inside ranx
        theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), list(names), return_mean=False)
    users = np.array([int(q[1:]) for q in ranx.Qrels(qrels).keys()])
    ours = rt.evaluate(Xtr, Xte, A=A, B=B, **kw).per_user
    # users whose pool scores are all equal are NaN by our rule; ranx scores them anyway
    defined = ours["nan_reason"].to_numpy()[users] == ""
    assert set(ours["nan_reason"].to_numpy()[users][~defined]) <= {"all_equal"}
    assert defined.sum() >= 0.8 * len(users)
    if tied:
        # ranx orders tied documents as its (unstable) sort leaves them, neither by id nor by
        # reverse id: each of its per-user values must lie between our pessimistic and
        # optimistic values, which bound every ordering of the ties
        lo = rt.evaluate(Xtr, Xte, A=A, B=B, ties="pessimistic", **kw).per_user
        hi = rt.evaluate(Xtr, Xte, A=A, B=B, ties="optimistic", **kw).per_user
    for metric, name in names.items():
        col = f"{name}_at_{K}" if name in TOPK_METRICS or name == "ndcg_exp" else name
        got = np.asarray(theirs[metric], dtype=float)[defined]
        if tied:
            assert np.all(lo[col].to_numpy()[users][defined] - 1e-9 <= got), metric
            assert np.all(got <= hi[col].to_numpy()[users][defined] + 1e-9), metric
            continue
        mine = ours[col].to_numpy()[users][defined]
        assert not np.isnan(mine).any(), metric
        np.testing.assert_allclose(mine, got, rtol=0, atol=1e-9, err_msg=metric)


# ------------------------------------------------------------------------------- trec_eval


@pytest.mark.parametrize("tied", [False, True])
def test_trec_eval_profile_per_user(tied):
    """trec_eval itself (through pytrec_eval): ties go by docno descending, which the profile's
    index_desc policy reproduces with zero-padded item indices as docnos; exact with ties too."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    Xtr, Xte, A, B = _data(8, m=40)
    Xtr, Xte = sp.csr_array(Xtr), sp.csr_array(Xte)
    if tied:
        A, B = np.round(A), np.round(B)
    n = Xte.shape[1]
    qrels, run = qrels_and_run(Xtr, Xte, A @ B.T)
    measures = {
        f"P_{K}": "p",
        f"recall_{K}": "r",
        f"map_cut_{K}": "ap",
        f"ndcg_cut_{K}": "ndcg",
        "map": "pr_auc",
    }
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(measures) | {"recip_rank"}).evaluate(run)
    ours = rt.evaluate(Xtr, Xte, A=A, B=B, k=K, nthreads=1, profile="trec_eval").per_user
    # trec_eval's recip_rank has no cutoff: our RR at k = the number of items
    rr_full = rt.evaluate(
        Xtr, Xte, A=A, B=B, k=n, nthreads=1, metrics=["rr"], ties="index_desc"
    ).per_user[f"rr_at_{n}"]
    checked = 0
    for q, vals in theirs.items():
        u = int(q[1:])
        if ours["nan_reason"][u]:
            assert ours["nan_reason"][u] == "all_equal"  # NaN by our rule; trec_eval scores it
            continue
        for measure, name in measures.items():
            col = name if name == "pr_auc" else f"{name}_at_{K}"
            assert ours[col][u] == pytest.approx(vals[measure], abs=1e-9), (q, measure)
        assert rr_full[u] == pytest.approx(vals["recip_rank"], abs=1e-9), q
        checked += 1
    assert checked >= 0.8 * len(theirs)
    if tied:  # the tie order matters on this data: ascending index gives other numbers
        asc = rt.evaluate(Xtr, Xte, A=A, B=B, k=K, nthreads=1, metrics=["ap"], ties="index")
        assert not np.allclose(asc.per_user[f"ap_at_{K}"], ours[f"ap_at_{K}"], equal_nan=True)
