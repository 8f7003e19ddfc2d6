"""Each library profile, value by value, against the formulas of the library it names.

``evaluate(..., profile=name)`` must give, on the same ranking, the numbers the library computes.
The formulas below are written out from each library's documentation and code (RecBole's
``recbole.evaluator.metrics``, implicit's ``evaluation.pyx``, ranx's metric docs, trec_eval's
``P``/``recall``/``map_cut``/``ndcg_cut``/``recip_rank``/``map``, Hivemall's "Ranking Measures"
page), independently of the package and of tests/reference.py. The ranking each library sees is
the pool sorted by score with the library's own order for tied scores: item index ascending
(RecBole's ``torch.topk``, implicit, ranx, Hivemall lists) or descending (trec_eval sorts tied
documents by docno descending; docnos are the zero-padded item indices).

The data are built so that the variants a profile could be confused with give other numbers:
graded test values (linear, exponential and binary NDCG differ), users with more positives than
K (AP over |T| and over min(K, |T|) differ), positives tied with negatives across the cutoff (the
two index orders differ), and pools larger than K (every metric defined).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from reference import warprec_tie_key

import recoeval_tracking as rt
from recoeval_tracking.metrics.profiles import PROFILES

K = 4
N_ITEMS = 12

# user: (train items, {test item: value}, scores)
USERS = [
    # a tie of five items (3..7) across the cutoff holds positives 3 and 6
    ([11], {3: 1.0, 6: 3.0, 9: 2.0}, [9.0, 8.0, 1.0, 5.0, 5.0, 5.0, 5.0, 5.0, 0.5, 4.0, 0.0, 7.0]),
    # distinct scores, graded values
    (
        [0, 1],
        {2: 3.0, 5: 1.0, 8: 2.0, 10: 1.0},
        [0.0, 0.0, 6.0, 9.0, 8.0, 2.5, 7.0, 1.0, 5.0, 3.0, 4.0, 2.0],
    ),
    # six positives > K, heavy ties
    (
        [],
        {0: 2.0, 1: 1.0, 4: 1.0, 7: 3.0, 8: 1.0, 11: 2.0},
        [2.0, 3.0, 3.0, 2.0, 3.0, 1.0, 1.0, 2.0, 3.0, 1.0, 1.0, 2.0],
    ),
    # one positive, tied with negatives of lower and higher index
    ([2, 3, 4], {6: 2.0}, [1.0, 6.0, 0.0, 0.0, 0.0, 6.0, 6.0, 6.0, 2.0, 1.5, 3.0, 0.5]),
    # five positives in a tie with four negatives at the top
    (
        [10],
        {1: 1.0, 3: 2.0, 5: 1.0, 7: 1.0, 9: 3.0},
        [4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 1.0, 0.0, 2.0],
    ),
]


def _data(users=USERS):
    m = len(users)
    tr_r, tr_c, te_r, te_c, te_v = [], [], [], [], []
    for u, (train, test, _) in enumerate(users):
        tr_r += [u] * len(train)
        tr_c += train
        te_r += [u] * len(test)
        te_c += list(test)
        te_v += list(test.values())
    train = sp.csr_array((np.ones(len(tr_r)), (tr_r, tr_c)), shape=(m, N_ITEMS))
    test = sp.csr_array((np.array(te_v), (te_r, te_c)), shape=(m, N_ITEMS))
    scores = np.array([s for _, _, s in users], dtype=np.float64)
    return train, test, scores


def _ranked(u: int, tie_order: str, users=USERS) -> list[int]:
    """The pool of user u sorted by score, ties by item index ascending or descending, or
    (``"warprec"``) by WarpRec's tie key at its default seed 42, larger first."""
    train, _, scores = users[u]
    pool = [i for i in range(N_ITEMS) if i not in train]
    if tie_order == "warprec":
        return sorted(pool, key=lambda i: (-scores[i], -warprec_tie_key(42, u, i), i))
    sign = 1 if tie_order == "asc" else -1
    return sorted(pool, key=lambda i: (-scores[i], sign * i))


def _evaluate(profile: str, users=USERS, **kw) -> rt.Results:
    train, test, scores = _data(users)
    return rt.evaluate(train, test, scores=scores, k=K, profile=profile, nthreads=1, **kw)


def _column(res: rt.Results, profile: str, library_name: str) -> np.ndarray:
    name = PROFILES[profile]["aliases"][library_name]
    col = f"{name}_at_{K}" if rt.METRICS[name].at_k else name
    return res.per_user[col].to_numpy(dtype=np.float64)


def _agrees(profile: str, library_user, library_name: str, order: str = "asc") -> None:
    """The profile's column of ``library_name`` is the library's formula ``library_user``,
    user by user, on each user's ranking in the library's tie ``order``."""
    want = [library_user(_ranked(u, order), _rel(u), K)[library_name] for u in range(len(USERS))]
    got = _column(_evaluate(profile), profile, library_name)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def _aggregate(res: rt.Results, profile: str, library_name: str) -> float:
    name = PROFILES[profile]["aliases"][library_name]
    key = f"{name}_at_{K}" if rt.METRICS[name].at_k else name
    return res.aggregates[key]


def _rel(u: int, users=USERS) -> dict[int, float]:
    return users[u][1]


def _dcg(gains: list[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


# --------------------------------------------------------------------------------------------
# Library formulas (per user, on the library's ranking of the pool)
# --------------------------------------------------------------------------------------------


def recbole_user(ranking: list[int], rel: dict[int, float], k: int) -> dict[str, float]:
    """RecBole: pos_index = [item in truth] over the top-k; metrics from recbole.evaluator."""
    pos = [1 if i in rel else 0 for i in ranking[:k]]
    hits = sum(pos)
    first = next((j for j, p in enumerate(pos, start=1) if p), None)
    # MAP@k: sum_{r<=k} P@r * rel_r / min(k, |T|)
    ap = sum(sum(pos[:r]) / r for r in range(1, k + 1) if pos[r - 1]) / min(k, len(rel))
    # NDCG@k: binary relevance, IDCG over min(|T|, k) ones
    ndcg = _dcg([float(p) for p in pos]) / _dcg([1.0] * min(len(rel), k))
    return {
        "hit": float(hits > 0),
        "mrr": 0.0 if first is None else 1.0 / first,
        "ndcg": ndcg,
        "precision": hits / k,
        "recall": hits / len(rel),
        "map": ap,
    }


def recbole_user_auc(scores: list[float], pool: list[int], rel: dict[int, float]) -> float:
    """RecBole's per-user AUC of GAUC: descending ranks with tied scores given their average
    rank (collector._average_rank), AUC = (M (n + 1) - M (M + 1) / 2 - sum rank_i) / (M (n - M))."""
    desc = sorted(pool, key=lambda i: -scores[i])
    rank: dict[int, float] = {}
    j = 0
    while j < len(desc):
        e = j
        while e + 1 < len(desc) and scores[desc[e + 1]] == scores[desc[j]]:
            e += 1
        for x in range(j, e + 1):
            rank[desc[x]] = (j + 1 + e + 1) / 2.0
        j = e + 1
    M, n = len(rel), len(pool)
    return (M * (n + 1) - M * (M + 1) / 2 - sum(rank[i] for i in rel)) / (M * (n - M))


def implicit_user(ranking: list[int], rel: dict[int, float], k: int) -> dict[str, float]:
    """implicit.evaluation: precision's numerator and denominator (pooled over users), AP over
    min(k, |likes|), NDCG with binary gains over the ideal of min(k, |likes|) hits."""
    ids = ranking[:k]
    hit = 0
    ap = 0.0
    dcg = 0.0
    for i, item in enumerate(ids):
        if item in rel:
            hit += 1
            ap += hit / (i + 1.0)
            dcg += 1.0 / math.log2(i + 2)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(rel))))
    return {
        "hits": hit,
        "denominator": min(k, len(rel)),
        "map": ap / min(k, len(rel)),
        "ndcg": dcg / idcg,
    }


def ranx_user(ranking: list[int], rel: dict[int, float], k: int) -> dict[str, float]:
    """ranx: precision, recall, map@k (over |qrels|), ndcg (Jarvelin: linear gains), ndcg_burges
    (2^rel - 1), mrr, hit_rate; map without cutoff over the whole ranking."""
    top = ranking[:k]
    hits = [1 if i in rel else 0 for i in top]

    def ap(run: list[int]) -> float:
        found = 0
        total = 0.0
        for j, i in enumerate(run, start=1):
            if i in rel:
                found += 1
                total += found / j
        return total / len(rel)

    ideal = sorted(rel.values(), reverse=True)[:k]
    first = next((j for j, h in enumerate(hits, start=1) if h), None)
    return {
        "precision": sum(hits) / k,
        "recall": sum(hits) / len(rel),
        "map": ap(top),
        "ndcg": _dcg([rel.get(i, 0.0) for i in top]) / _dcg(ideal),
        "ndcg_burges": _dcg([2 ** rel[i] - 1 if i in rel else 0.0 for i in top])
        / _dcg([2**v - 1 for v in ideal]),
        "mrr": 0.0 if first is None else 1.0 / first,
        "hit_rate": float(sum(hits) > 0),
        "map_full": ap(ranking),
    }


def trec_eval_user(ranking: list[int], rel: dict[int, float], k: int) -> dict[str, float]:
    """trec_eval on a run that retrieves the top-k documents (for the @k measures) or the whole
    ranking (``map``): P_k, recall_k, map_cut_k (over the number of relevant), ndcg_cut_k (gains
    are the judgement values), recip_rank, map."""
    r = ranx_user(ranking, rel, k)
    return {
        "P": r["precision"],
        "recall": r["recall"],
        "map_cut": r["map"],
        "ndcg_cut": r["ndcg"],
        "recip_rank": r["mrr"],
        "map": r["map_full"],
    }


def hivemall_user(ranking: list[int], rel: dict[int, float], k: int) -> dict[str, float]:
    """Hivemall's precision, recall, average_precision (over the hits in the top k), auc (pairs inside the
    list; 0.5 without a pair, as documented by the project), mrr, ndcg (binary: IDCG over
    min(|truth|, k)) and graded ndcg (2^rel - 1)."""
    top = ranking[:k]
    hits = [1 if i in rel else 0 for i in top]
    # AveragePrecision divides by the hits in the top k since Hivemall's 2017 fix
    ap = sum(sum(hits[:n]) / n for n in range(1, k + 1) if hits[n - 1]) / max(sum(hits), 1)
    pos = [j for j, h in enumerate(hits) if h]
    neg = [j for j, h in enumerate(hits) if not h]
    pairs = len(pos) * len(neg)
    auc = sum(1 for p in pos for q in neg if p < q) / pairs if pairs else 0.5
    first = next((j for j, h in enumerate(hits, start=1) if h), None)
    ideal = sorted(rel.values(), reverse=True)[:k]
    return {
        "precision": sum(hits) / k,
        "recall": sum(hits) / len(rel),
        "map": ap,
        "auc": auc,
        "mrr": 0.0 if first is None else 1.0 / first,
        "ndcg": _dcg([float(h) for h in hits]) / _dcg([1.0] * min(len(rel), k)),
        "ndcg_graded": _dcg([2 ** rel[i] - 1 if i in rel else 0.0 for i in top])
        / _dcg([2**v - 1 for v in ideal]),
    }


LIBRARY_TIES = {
    "recbole": "asc",
    "implicit": "asc",
    "ranx": "asc",
    "hivemall": "asc",
    "trec_eval": "desc",
    "spark": "asc",
}
PROFILE_TIES = {
    "recometrics": "noise",
    "recbole": "index",
    "implicit": "implicit",
    "ranx": "index",
    "hivemall": "index",
    "trec_eval": "index_desc",
    "spark": "index",
    "elliot": "index",
    "warprec": "warprec",
    "lenskit": "index",
    "torchmetrics": "index",
    "recommenders": "index",
    "recommenders_spark": "index",
    "cornac": "pessimistic",
    "rectools": "index",
    "trec_eval10": "index_desc",
}


def elliot_user(ranking: list[int], rel: dict[int, float], k: int) -> dict[str, float]:
    """Elliot 0.3.1 (``elliot/evaluation/metrics/accuracy``) at relevance_threshold 0: binary
    relevance for Precision, Recall, MRR, HR and MAP; nDCG with the gain ``2^(v - 0 + 1) - 1``
    (``DiscountedRelevance``) and the ideal over the ``min(|gains|, k)`` largest gains; MAP the
    average over n = 1..k of the precision of the first n items."""
    top = ranking[:k]
    hits = [i for i in top if i in rel]
    gains = {i: 2.0 ** (v + 1) - 1 for i, v in rel.items()}
    idcg = sum(g / math.log2(r + 2) for r, g in enumerate(sorted(gains.values())[::-1][:k]))
    dcg = sum(gains.get(i, 0.0) / math.log2(r + 2) for r, i in enumerate(top))
    first = next((r for r, i in enumerate(top, start=1) if i in rel), None)
    return {
        "Precision": len(hits) / k,
        "Recall": len(hits) / len(rel),
        "nDCG": dcg / idcg if dcg > 0 else 0.0,
        "MAP": float(np.mean([sum(1 for i in top[:n] if i in rel) / n for n in range(1, k + 1)])),
        "MRR": 0.0 if first is None else 1.0 / first,
        "HR": 1.0 if hits else 0.0,
    }


def warprec_user(ranking: list[int], rel: dict[int, float], k: int) -> dict[str, float]:
    """WarpRec 2.2.8 (``warprec/evaluation/metrics/accuracy``): binary relevance ``target > 0``;
    nDCG over ``discounted_relevance`` = ``2^(target + 1) - 1`` with the ideal
    ``topk(target, k)``; nDCGRendle2020 the same on binary relevance; MAP sums precision at
    the hits over ``min(|T|, k)``."""
    top = ranking[:k]
    binary = [1.0 if i in rel else 0.0 for i in top]
    disc = [2.0 ** (rel[i] + 1) - 1 if i in rel else 0.0 for i in top]
    ideal = sorted((2.0 ** (v + 1) - 1 for v in rel.values()), reverse=True)[:k]
    prec_at = np.cumsum(binary) / np.arange(1, k + 1)
    first = next((r for r, b in enumerate(binary, start=1) if b), None)
    return {
        "Precision": sum(binary) / k,
        "Recall": sum(binary) / len(rel),
        "nDCG": _dcg(disc) / _dcg(ideal),
        "nDCGRendle2020": _dcg(binary) / _dcg([1.0] * min(k, len(rel))),
        "MAP": float((prec_at * binary).sum() / min(len(rel), k)),
        "MRR": 0.0 if first is None else 1.0 / first,
        "HitRate": 1.0 if sum(binary) else 0.0,
    }


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


def test_the_data_separates_the_variants():
    """The hand-built users make the confusable definitions differ (else the tests below could
    not tell them apart)."""
    asc = [_ranked(u, "asc") for u in range(len(USERS))]
    desc = [_ranked(u, "desc") for u in range(len(USERS))]
    assert any(
        a[:K] != d[:K] and set(a[:K]) & set(_rel(u)) != set(d[:K]) & set(_rel(u))
        for u, (a, d) in enumerate(zip(asc, desc))
    )
    assert any(
        len(_rel(u)) > K and any(i in _rel(u) for i in asc[u][:K]) for u in range(len(USERS))
    )
    # linear and binary gains give different NDCG for some user
    lin = [ranx_user(asc[u], _rel(u), K)["ndcg"] for u in range(len(USERS))]
    binary = [recbole_user(asc[u], _rel(u), K)["ndcg"] for u in range(len(USERS))]
    assert not np.allclose(lin, binary)
    for _u, (train, test, _) in enumerate(USERS):  # every user defined at K
        pool = N_ITEMS - len(train)
        assert pool > K and 0 < len(test) < pool


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_profile_selects_its_metrics_and_tie_policy(profile):
    res = _evaluate(profile)
    assert res.definitions["ties"] == PROFILE_TIES[profile]
    assert res.definitions.get("profile") == profile
    assert set(res.definitions["metrics"]) >= set(PROFILES[profile]["metrics"])
    assert set(PROFILES[profile]["aliases"].values()) == set(PROFILES[profile]["metrics"])


@pytest.mark.parametrize("library_name", ["hit", "mrr", "ndcg", "precision", "recall", "map"])
def test_recbole_profile(library_name):
    _agrees("recbole", recbole_user, library_name)


def test_recbole_map_is_over_min_k_and_t_and_ndcg_is_binary():
    """The two definitions RecBole departs from recometrics with, spelled out on one user with
    six positives, graded values and a top-4 list [1, 2, 4, 8] (ties by index) of 4 hits."""
    res = _evaluate("recbole")
    u = 2
    top = _ranked(u, "asc")[:K]
    assert top == [1, 2, 4, 8] and all(i in _rel(u) or i == 2 for i in top)
    # hits at ranks 1, 3, 4: P@1 = 1, P@3 = 2/3, P@4 = 3/4, over min(4, 6) = 4
    assert _column(res, "recbole", "map")[u] == pytest.approx((1 + 2 / 3 + 3 / 4) / 4)
    # binary gains at ranks 1, 3, 4 over the ideal of 4 ones
    want = (1 + 1 / math.log2(4) + 1 / math.log2(5)) / sum(1 / math.log2(i + 2) for i in range(4))
    assert _column(res, "recbole", "ndcg")[u] == pytest.approx(want)


def test_recbole_gauc_weights_users_by_positives():
    """GAUC = sum_u |T_u| AUC_u / sum_u |T_u|, on tie-free users (RecBole's average ranks then
    coincide with any order)."""

    def tie_free(user) -> bool:
        train, _, scores = user
        pool = [scores[i] for i in range(N_ITEMS) if i not in train]
        return len(set(pool)) == len(pool)

    users = [u for u in USERS if tie_free(u)] + [
        ([], {0: 1.0, 5: 2.0}, [float(x) for x in range(N_ITEMS)]),
        ([3], {11: 1.0, 1: 1.0, 7: 2.0}, [float((7 * x) % N_ITEMS) for x in range(N_ITEMS)]),
    ]
    res = _evaluate("recbole", users=users)
    aucs = []
    for train, test, scores in users:
        pool = [i for i in range(N_ITEMS) if i not in train]
        aucs.append(recbole_user_auc(scores, pool, test))
    weights = [len(t) for _, t, _ in users]
    want = sum(a * w for a, w in zip(aucs, weights)) / sum(weights)
    assert _aggregate(res, "recbole", "gauc") == pytest.approx(want, abs=1e-12)
    assert want != pytest.approx(float(np.mean(aucs)))  # weighting matters here


def test_recbole_gauc_with_tied_scores():
    """RecBole's GAUC gives tied items their average rank (Collector._average_rank), whatever
    the order the profile's top-K metrics use."""
    res = _evaluate("recbole")
    aucs, weights = [], []
    for train, test, scores in USERS:
        pool = [i for i in range(N_ITEMS) if i not in train]
        aucs.append(recbole_user_auc(scores, pool, test))
        weights.append(len(test))
    want = sum(a * w for a, w in zip(aucs, weights)) / sum(weights)
    assert _aggregate(res, "recbole", "gauc") == pytest.approx(want, abs=1e-12)


def implicit_select(scores: list[float], train: list[int], k: int) -> list[int]:
    """implicit's ``select`` (implicit/cpu/select.h), literally: scan the items in index order,
    push ``(score, item)`` onto a min-heap while it holds fewer than k pairs or the score beats
    the heap's smallest score (popping the smallest pair first), then sort the heap by decreasing
    pair. Train items score ``-finfo.max`` (``_topk_batch``'s filter)."""
    import heapq

    heap: list[tuple[float, int]] = []
    for col, s in enumerate(scores):
        s = -np.finfo(np.float64).max if col in train else s
        if len(heap) < k or s > heap[0][0]:
            if len(heap) >= k:
                heapq.heappop(heap)
            heapq.heappush(heap, (s, col))
    return [c for _, c in sorted(heap, reverse=True)]


def test_implicit_profile():
    res = _evaluate("implicit")
    per_user = [
        implicit_user(implicit_select(s, tr, K), _rel(u), K) for u, (tr, _, s) in enumerate(USERS)
    ]
    # implicit's selection is neither index order: here it changes a user's map
    asc = [implicit_user(_ranked(u, "asc"), _rel(u), K)["map"] for u in range(len(USERS))]
    assert not np.allclose([r["map"] for r in per_user], asc)
    # precision is pooled: total hits over the total of min(K, |likes|)
    want = sum(r["hits"] for r in per_user) / sum(r["denominator"] for r in per_user)
    assert _aggregate(res, "implicit", "precision") == pytest.approx(want, abs=1e-12)
    assert want != pytest.approx(np.mean([r["hits"] / r["denominator"] for r in per_user]))
    for name in ("map", "ndcg"):
        np.testing.assert_allclose(
            _column(res, "implicit", name),
            [r[name] for r in per_user],
            rtol=0,
            atol=1e-12,
            err_msg=name,
        )
    # the means implicit reports: every user has a like, so each counts once
    for name in ("map", "ndcg"):
        assert res.means[f"{PROFILES['implicit']['aliases'][name]}_at_{K}"] == pytest.approx(
            np.mean([r[name] for r in per_user])
        )


@pytest.mark.parametrize(
    "library_name",
    ["precision", "recall", "map", "ndcg", "ndcg_burges", "mrr", "hit_rate", "map_full"],
)
def test_ranx_profile(library_name):
    _agrees("ranx", ranx_user, library_name)


@pytest.mark.parametrize(
    "library_name", ["P", "recall", "map_cut", "ndcg_cut", "recip_rank", "map"]
)
def test_trec_eval_profile(library_name):
    _agrees("trec_eval", trec_eval_user, library_name, "desc")


@pytest.mark.parametrize("library_name", ["Precision", "Recall", "nDCG", "MAP", "MRR", "HR"])
def test_elliot_profile(library_name):
    _agrees("elliot", elliot_user, library_name)


@pytest.mark.parametrize(
    "library_name", ["Precision", "Recall", "nDCG", "nDCGRendle2020", "MAP", "MRR", "HitRate"]
)
def test_warprec_profile(library_name):
    _agrees("warprec", warprec_user, library_name, order="warprec")


def test_elliot_and_warprec_gini_run_opposite_ways():
    """Elliot's Gini is one minus WarpRec's (both over the item counts of full top-K lists:
    ``gini_index.py`` of each, 0.3.1 and 2.2.8), on the same lists (ties by item index, as
    Elliot's, rather than by WarpRec's draw)."""
    elliot, warprec = _evaluate("elliot"), _evaluate("warprec", ties="index")
    g = _aggregate(warprec, "warprec", "Gini")
    assert 0.0 < g < 1.0
    assert _aggregate(elliot, "elliot", "Gini") == pytest.approx(1.0 - g)


def test_trec_eval_orders_ties_by_decreasing_docno():
    """User 3's only positive (item 6) ties at 6.0 with items 1, 5 and 7: trec_eval puts 7 first,
    then 6 (RR 1/2); ascending order would put 1 and 5 first (RR 1/3)."""
    res = _evaluate("trec_eval")
    assert _ranked(3, "desc")[:2] == [7, 6]
    assert _column(res, "trec_eval", "recip_rank")[3] == pytest.approx(1 / 2)
    assert _column(_evaluate("ranx"), "ranx", "mrr")[3] == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    "library_name", ["precision", "recall", "map", "auc", "mrr", "ndcg", "ndcg_graded"]
)
def test_hivemall_profile(library_name):
    _agrees("hivemall", hivemall_user, library_name)


def _hivemall_case(ranked: list, truth: list, k: int, profile_metric: str) -> float:
    """One of Hivemall's test cases as a user: the ranked list gets decreasing scores, unlisted
    truth items (and one spare item) score below it; the value of the metric at k."""
    items = list(dict.fromkeys(list(ranked) + list(truth) + ["spare"]))
    index = {x: j for j, x in enumerate(items)}
    n = len(items)
    scores = np.full((1, n), -1.0)
    for r, x in enumerate(ranked):
        scores[0, index[x]] = float(len(ranked) - r)
    truth = list(dict.fromkeys(truth))
    test = sp.csr_array(
        (np.ones(len(truth)), ([0] * len(truth), [index[x] for x in truth])), shape=(1, n)
    )
    res = rt.evaluate(
        None, test, scores=scores, k=k, metrics=[profile_metric], ties="index", nthreads=1
    )
    return float(res.per_user[f"{profile_metric}_at_{k}"][0])


@pytest.mark.parametrize(
    "ranked, truth, k, expected",
    [
        # hivemall BinaryResponsesMeasuresTest.testAP
        ([1, 3, 2, 6], [1, 2, 4], 4, 1.0 / 2.0 * (1.0 / 1.0 + 2.0 / 3.0)),
        ([1, 3, 2, 6], [1, 2, 4], 3, 1.0 / 2.0 * (1.0 / 1.0 + 2.0 / 3.0)),
        ([1, 3, 2, 6], [1, 2, 4], 2, 1.0),
        ([3, 1, 2, 6], [1, 2, 4], 2, 1.0 / 2.0),
        ([3, 1, 2, 6], [1, 2, 3], 2, 1.0 / 2.0 * (1.0 / 1.0 + 2.0 / 2.0)),
        ([3, 1], [1, 2], 2, 1.0 / 2.0),
        # testAPString, testAPString10 (repeated "x" truth entries are one item)
        (list("abcdefg"), list("axxdxx"), 6, 0.75),
        (list("abcdefghij"), list("axcxef"), 10, 1 / 4 * (1 + 2 / 3 + 3 / 5 + 4 / 6)),
        (list("abcdefghij"), list("axcxef"), 5, 1 / 3 * (1 + 2 / 3 + 3 / 5)),
    ],
)
def test_hivemall_average_precision_unit_tests(ranked, truth, k, expected):
    """Hivemall's BinaryResponsesMeasuresTest.testAP* values (AveragePrecision over the hits)
    through the hivemall profile's MAP (``ap_hits``)."""
    name = PROFILES["hivemall"]["aliases"]["map"]
    assert _hivemall_case(ranked, truth, k, name) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "library_name, ranked, truth, k, expected",
    [
        ("ndcg", [1, 3, 2, 6], [1, 2, 4], 4, 0.7039180890341348),
        ("ndcg", [1, 3, 2, 6], [1, 2, 4], 2, 0.6131471927654585),
        ("ndcg", [3, 2, 1, 6], [1], 2, 0.0),
        ("ndcg", [3, 2, 1, 6], [1], 3, 0.5),
        ("recall", [1, 3, 2, 6], [1, 2, 4], 4, 0.6666666666666666),
        ("recall", [1, 3, 2, 6], [1, 2, 4], 2, 0.3333333333333333),
        ("precision", [1, 3, 2, 6], [1, 2, 4], 4, 0.5),
        ("precision", [1, 3, 2, 6], [1, 2, 4], 2, 0.5),
        ("mrr", [1, 3, 2, 6], [1, 2, 4], 4, 1.0),
        ("mrr", [6, 2, 3, 1], [1, 2, 4], 4, 0.5),
        ("mrr", [6, 2, 3, 1], [1, 2, 4], 1, 0.0),
        ("hit", [1, 3, 2, 6], [1, 2, 4], 4, 1.0),
        ("hit", [1, 3, 2, 6], [1, 2, 4], 2, 1.0),
        ("hit", [5, 6], [1, 2, 4], 2, 0.0),
        ("auc", [1, 3, 2, 6], [1, 2, 4], 4, 0.75),
        ("auc", [1, 3, 2, 6], [1, 2, 4], 2, 1.0),
        ("auc", [1, 3, 2, 6], [7, 8, 9, 10], 4, 0.5),
    ],
)
def test_hivemall_binary_responses_unit_tests(library_name, ranked, truth, k, expected):
    """Hivemall's BinaryResponsesMeasuresTest values through the hivemall profile (Hivemall's
    tests assert them to 1e-4; here they hold to 1e-12). Not expressible: the empty-list cases
    of testRecallEmpty/testPrecisionEmpty (no truth: a user without a positive is NaN here) and
    the all-true-positive AUC case (a pool of positives only is NaN here)."""
    name = PROFILES["hivemall"]["aliases"][library_name]
    assert _hivemall_case(ranked, truth, k, name) == pytest.approx(expected, abs=1e-12)


def test_hivemall_auc_without_a_pair_is_one_half():
    """A list without a (positive, negative) pair scores 0.5: at K=1 no list has a pair."""
    train, test, scores = _data()
    res = rt.evaluate(train, test, scores=scores, k=1, profile="hivemall", nthreads=1)
    col = f"{PROFILES['hivemall']['aliases']['auc']}_at_1"
    for u in range(len(USERS)):
        assert res.per_user[col][u] == 0.5  # a list of one item has no pair


def test_recometrics_profile_on_distinct_scores():
    """recometrics: linear NDCG, AP over |T|, TAP over min(K, |T|), catalog ROC-AUC and PR-AUC;
    with distinct scores the noise tie-breaking cannot change the ranking."""
    users = [
        ([0], {3: 2.0, 7: 1.0, 9: 3.0}, [float((5 * x) % N_ITEMS) for x in range(N_ITEMS)]),
        ([], {1: 1.0, 2: 1.0, 4: 2.0, 6: 1.0, 10: 3.0}, [float(x) for x in range(N_ITEMS)]),
        ([5, 6], {0: 1.0}, [float(-x) for x in range(N_ITEMS)]),
    ]
    res = _evaluate("recometrics", users=users)
    for u, (_train, rel, _scores) in enumerate(users):
        ranking = _ranked(u, "asc", users)
        top = ranking[:K]
        hits = [1 if i in rel else 0 for i in top]
        psum = sum(sum(hits[:n]) / n for n in range(1, K + 1) if hits[n - 1])
        pos_ranks = [j for j, i in enumerate(ranking, start=1) if i in rel]
        n_neg = len(ranking) - len(rel)
        want = {
            "P": sum(hits) / K,
            "TP": sum(hits) / min(K, len(rel)),
            "R": sum(hits) / len(rel),
            "AP": psum / len(rel),
            "TAP": psum / min(K, len(rel)),
            "NDCG": _dcg([rel.get(i, 0.0) for i in top])
            / _dcg(sorted(rel.values(), reverse=True)[:K]),
            "Hit": float(sum(hits) > 0),
            "RR": next((1 / j for j, h in enumerate(hits, start=1) if h), 0.0),
            "ROC_AUC": sum(n_neg - (r - 1 - t) for t, r in enumerate(pos_ranks))
            / (len(rel) * n_neg),
            "PR_AUC": sum((t + 1) / r for t, r in enumerate(pos_ranks)) / len(rel),
        }
        for name, value in want.items():
            got = _column(res, "recometrics", name)[u]
            assert got == pytest.approx(value, abs=1e-12), (u, name)


@pytest.mark.parametrize("k, expected", [(3, 0.918770780535), (2, 0.812891283859)])
def test_hivemall_graded_ndcg_unit_test(k, expected):
    """Hivemall GradedResponsesMeasuresTest.testNDCG: recommended relevances [5, 2, 4, 1, 3]
    (the truth's top relevances 5, 4, 3), exponential gains 2^rel - 1; Hivemall asserts 1e-4,
    the values hold to 1e-12."""
    rel = [5.0, 2.0, 4.0, 1.0, 3.0]
    scores = np.array([[5.0, 4.0, 3.0, 2.0, 1.0, 0.0]])  # item 5: a negative below the list
    test = sp.csr_array((np.array(rel), ([0] * 5, range(5))), shape=(1, 6))
    res = rt.evaluate(None, test, scores=scores, k=k, profile="hivemall", nthreads=1)
    name = PROFILES["hivemall"]["aliases"]["ndcg_graded"]
    assert res.per_user[f"{name}_at_{k}"][0] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("profile", ["ranx", "trec_eval", "recbole", "hivemall", "spark"])
def test_profiles_take_ranked_lists(profile):
    """Ranked top-K input under a profile: the top-K metrics from the lists the library would
    see equal those from the scores; the whole-ranking metrics are left out and recorded."""
    train, test, scores = _data()
    lists = np.array([_ranked(u, LIBRARY_TIES[profile])[:K] for u in range(len(USERS))])
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ranked = rt.evaluate(train, test, ranked=lists, k=K, profile=profile, nthreads=1)
    full = _evaluate(profile)
    whole = {
        s
        for s in PROFILES[profile]["metrics"]
        if rt.METRICS[s].kind == "whole"
        or any(rt.METRICS[x].kind == "whole" for x in rt.METRICS[s].needs)
    }
    assert whole == (
        set(ranked.definitions.get("left_out", {})) & set(PROFILES[profile]["metrics"])
    )
    assert not whole or any("left out" in str(w.message) for w in caught)
    at_k = [f"{s}_at_{K}" for s in PROFILES[profile]["metrics"] if rt.METRICS[s].kind == "at_k"]
    np.testing.assert_allclose(
        ranked.per_user[at_k].to_numpy(dtype=float),
        full.per_user[at_k].to_numpy(dtype=float),
        rtol=0,
        atol=1e-12,
    )
