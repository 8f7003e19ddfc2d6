"""Per-user checks against installed peers on MovieLens 100K, with and without tied scores.

The split is the package's random per-user holdout (20 %, seed 0). Two score sources: item
popularity (train counts: heavy ties) and seeded random float32 factors (no ties). Each peer is
optional (``pytest.importorskip``):

* **implicit** (``ranking_metrics_at_k`` and ``model.recommend``): under ``ties="implicit"``
  (the implicit profile) every user's top-10 list is implicit's list, item for item, and the
  profile's means are its ``precision``, ``map`` and ``ndcg``.
* **trec_eval** (``pytrec_eval``) at relevance level 4 (ratings 1-3 are judged non-relevant;
  users whose test ratings are all below 4 count 0, as trec_eval averages them in) under the
  trec_eval profile: on a run holding each user's pool, ``map``, ``gm_map``, ``Rprec``,
  ``recip_rank``, ``iprec_at_recall_*``, ``11pt_avg``, ``P_10``, ``recall_10``,
  ``map_cut_10``; on a run of the top-10 list, ``bpref`` and the ``set_*`` measures and
  ``num_rel_ret``. Not compared under a level: ``ndcg_cut``, whose gains in trec_eval are the
  values of every judged document, those below the level included (the level applies to its
  binary measures only), while the level here removes them from the test set
  (``test_crosscheck_libs`` checks ``ndcg_cut`` without a level).
* **recometrics**: a +-inf score makes the user NaN under the recometrics profile.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from shared_paths import shared_file

import recoeval_tracking as rt

from ._judgements import qrels_and_run

K = 10
N_USERS = 200


@pytest.fixture(scope="module")
def ml100k():
    from recoeval_tracking.data import load_movielens_100k
    from recoeval_tracking.splitting import random_holdout

    split = random_holdout(load_movielens_100k(shared_file("ml-100k", "u.data")), 0.2, seed=0)
    tr = sp.csr_array(split.train.matrix)[:N_USERS]
    te = sp.csr_array(split.test.matrix)[:N_USERS]
    n = tr.shape[1]
    pop = np.bincount(tr.indices, minlength=n).astype(np.float32)
    rng = np.random.default_rng(0)
    factors = (
        rng.standard_normal((N_USERS, 8)).astype(np.float32),
        rng.standard_normal((n, 8)).astype(np.float32),
    )
    sources = {"tied": (np.ones((N_USERS, 1), np.float32), pop[:, None].copy()), "untied": factors}
    return tr, te, sources


def _int32(X):
    X = sp.csr_matrix(X)
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X


@pytest.mark.parametrize("scores", ["tied", "untied"])
def test_implicit_lists_and_means(ml100k, scores):
    pytest.importorskip("implicit")
    from implicit.cpu.als import AlternatingLeastSquares
    from implicit.evaluation import ranking_metrics_at_k

    tr, te, sources = ml100k
    A, B = sources[scores]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # implicit warns about the BLAS thread pool
        model = AlternatingLeastSquares(factors=A.shape[1])
    model.user_factors, model.item_factors = A, B
    theirs = ranking_metrics_at_k(
        model, _int32(tr), _int32(te), K=K, show_progress=False, num_threads=1
    )
    ids, _ = model.recommend(np.arange(N_USERS), _int32(tr), N=K)
    res = rt.evaluate(tr, te, A=A, B=B, k=K, profile="implicit", return_topk=True, nthreads=1)
    np.testing.assert_array_equal(res.topk, ids)  # every user's list, item for item
    has = np.diff(te.indptr) > 0
    assert res.aggregates[f"p_pooled_at_{K}"] == pytest.approx(theirs["precision"], abs=1e-12)
    for ours, name in ((f"tap_at_{K}", "map"), (f"ndcg_bin_at_{K}", "ndcg")):
        assert np.mean(res.per_user[ours].to_numpy()[has]) == pytest.approx(theirs[name], abs=1e-12)
    if scores == "tied":  # the index order gives other lists on these ties
        idx = rt.evaluate(
            tr, te, A=A, B=B, k=K, profile="implicit", ties="index", return_topk=True, nthreads=1
        )
        assert not np.array_equal(idx.topk, ids)


FULL_RUN = {
    "map": "pr_auc",
    "Rprec": "rprec",
    "11pt_avg": "11pt_avg",
    **{f"iprec_at_recall_{j / 10:.2f}": f"iprec_at_recall_{j / 10:.2f}" for j in range(11)},
    f"P_{K}": f"p_at_{K}",
    f"recall_{K}": f"r_at_{K}",
    f"map_cut_{K}": f"ap_at_{K}",
}
LIST_RUN = {
    "bpref": f"bpref_at_{K}",
    "set_P": f"p_at_{K}",
    "set_recall": f"r_at_{K}",
    "set_F": f"f1_at_{K}",
    "set_relative_P": f"tp_at_{K}",
    "set_map": f"set_map_at_{K}",
    "num_rel_ret": f"hits_at_{K}",
}


@pytest.mark.parametrize("scores", ["tied", "untied"])
def test_trec_eval_profile_new_measures(ml100k, scores):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    tr, te, sources = ml100k
    A, B = sources[scores]
    S = A.astype(np.float64) @ B.T.astype(np.float64)
    kw = dict(k=K, profile="trec_eval", relevance_level=4, nthreads=1)
    res = rt.evaluate(tr, te, scores=S, return_topk=True, **kw)
    pu = res.per_user
    assert res.definitions["relevance_level"] == 4.0 and "zero" in res.definitions["no_positive"]
    rr_full = rt.evaluate(tr, te, scores=S, metrics=["rr"], **{**kw, "k": S.shape[1]}).per_user[
        f"rr_at_{S.shape[1]}"
    ]
    qrels, run = qrels_and_run(tr, te, S)
    full = pytrec_eval.RelevanceEvaluator(
        qrels,
        {
            "map",
            "gm_map",
            "Rprec",
            "iprec_at_recall",
            "11pt_avg",
            "recip_rank",
            f"P.{K}",
            f"recall.{K}",
            f"map_cut.{K}",
        },
        relevance_level=4,
    ).evaluate(run)
    _, top = qrels_and_run(tr, te, S, lists=res.topk)
    listed = pytrec_eval.RelevanceEvaluator(
        qrels, {"bpref", "set", "num_rel_ret"}, relevance_level=4
    ).evaluate(top)
    zero_users = 0
    for q in full:
        u = int(q[1:])
        assert pu["nan_reason"][u] == "", q
        zero_users += pu["n_test"][u] == 0
        for measure, col in FULL_RUN.items():
            assert pu[col][u] == pytest.approx(full[q][measure], abs=1e-12), (q, measure)
        for measure, col in LIST_RUN.items():
            assert pu[col][u] == pytest.approx(listed[q][measure], abs=1e-12), (q, measure)
        assert rr_full[u] == pytest.approx(full[q]["recip_rank"], abs=1e-12), q
    assert zero_users > 0  # users whose ratings are all below 4 are averaged in as 0
    gm = math.exp(np.mean([full[q]["gm_map"] for q in full]))
    assert res.aggregates["gm_map"] == pytest.approx(gm, abs=1e-12)


def test_recometrics_profile_makes_infinite_scores_nan(ml100k):
    """An item whose factor is infinite scores +-inf for every user: recometrics returns NaN
    for every user, as the recometrics profile does (reason nan_score); by default the
    infinite scores are ranked."""
    recometrics = pytest.importorskip("recometrics")
    tr, te, sources = ml100k
    A, B = (x.astype(np.float64) for x in sources["untied"])
    B = B.copy()
    B[0] = 0.0
    B[0, 0] = np.inf
    theirs = recometrics.calc_reco_metrics(
        sp.csr_matrix(tr), sp.csr_matrix(te), A, B, k=K, as_df=False, nthreads=1
    )
    ours = rt.evaluate(tr, te, A=A, B=B, k=K, profile="recometrics", nthreads=1).per_user
    outside = np.array(
        [0 not in tr.indices[tr.indptr[u] : tr.indptr[u + 1]] for u in range(N_USERS)]
    )
    assert outside.sum() > 100
    assert np.isnan(np.asarray(theirs["P@K"], dtype=float)[outside]).all()
    assert (ours["nan_reason"][outside] == "nan_score").all()
    ranked = rt.evaluate(
        tr, te, A=A, B=B, k=K, profile="recometrics", inf_scores="rank", nthreads=1
    ).per_user
    assert (ranked["nan_reason"][outside] == "").all()


@pytest.mark.slow  # importing ranx and building its typed dicts takes ~10 s
def test_ranx_new_measures_per_user(ml100k):
    """ranx at relevance level 4 (``-l4``; judgements below it are judged non-relevant) on
    the untied scores: ``hits``, ``f1``, ``dcg_burges``, ``rbp.8`` and ``bpref`` on a run of
    each user's top-10 list, ``r-precision`` on a run of its pool. Users with judgements but no
    rating >= 4 get 0 under the profile (ranx's ``clean_qrels`` leaves them nothing and its
    measures return 0.0; its ``_bpref`` raises ZeroDivisionError on them, so they are compared
    apart, without ranx). bpref also differs for a user without a judged non-relevant item: ranx
    divides 0 by 0 (NaN) where trec_eval, and this project, count each listed positive as 1."""
    ranx = pytest.importorskip("ranx")
    tr, te, sources = ml100k
    A, B = (x.astype(np.float64) for x in sources["untied"])
    S = A @ B.T
    res = rt.evaluate(
        tr, te, scores=S, k=K, profile="ranx", relevance_level=4, return_topk=True, nthreads=1
    )
    pu = res.per_user
    has_pos = np.array(
        [(te.data[te.indptr[u] : te.indptr[u + 1]] >= 4).any() for u in range(N_USERS)]
    )
    users = [u for u in range(N_USERS) if pu["nan_reason"][u] == "" and has_pos[u]]
    without = [u for u in range(N_USERS) if pu["nan_reason"][u] == "" and not has_pos[u]]
    assert without  # judged users without a rating >= 4: 0 for every measure, averaged in
    for col in (
        f"hits_at_{K}",
        f"f1_at_{K}",
        f"dcg_exp_at_{K}",
        f"rbp_at_{K}",
        f"bpref_at_{K}",
        "rprec",
    ):
        assert (pu[col].to_numpy()[without] == 0.0).all(), col
    judged = {u for u in users if (te.data[te.indptr[u] : te.indptr[u + 1]] < 4).any()}
    qrels, top = qrels_and_run(tr, te, S, lists=res.topk)
    _, full = qrels_and_run(tr, te, S)
    keep = [f"u{u}" for u in users]
    q = ranx.Qrels({k: qrels[k] for k in keep})
    names = {
        f"hits@{K}-l4": f"hits_at_{K}",
        f"f1@{K}-l4": f"f1_at_{K}",
        f"dcg_burges@{K}-l4": f"dcg_exp_at_{K}",
        "rbp.8-l4": f"rbp_at_{K}",
        "bpref-l4": f"bpref_at_{K}",
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on_top = ranx.evaluate(
            q, ranx.Run({k: top[k] for k in keep}), list(names), return_mean=False
        )
        on_full = ranx.evaluate(
            q, ranx.Run({k: full[k] for k in keep}), ["r-precision-l4"], return_mean=False
        )
    order = [int(x[1:]) for x in q.keys()]
    assert len(order) >= 150
    for metric, col in names.items():
        got = np.asarray(on_top[metric], dtype=float)
        mine = pu[col].to_numpy()[order]
        if metric.startswith("bpref"):
            has = np.array([u in judged for u in order])
            got, mine = got[has], mine[has]
        np.testing.assert_allclose(mine, got, rtol=0, atol=1e-12, err_msg=metric)
    rprec = on_full["r-precision-l4"] if isinstance(on_full, dict) else on_full  # one metric
    np.testing.assert_allclose(
        pu["rprec"].to_numpy()[order], np.asarray(rprec, dtype=float), rtol=0, atol=1e-12
    )
