"""The ``warprec`` profile against WarpRec 2.2.8 itself (``pip install warprec``: Python >= 3.12,
so this module skips in the 3.11 environment; see docs/guides/profiles.md for the one to run it).

WarpRec's numbers come from its own code: an ``Evaluator`` (``warprec/evaluation/evaluator.py``)
runs the step its ``evaluate`` loop runs on each batch (``_compute_metrics_step``: relevance
blocks, ``rank_top_k`` and every metric's ``update``) on the scores with the train items at -inf
(``warprec/data/ranking.py:mask_seen_pairs``), for the users with a test entry (its
``EvaluationDataset.users_with_eval``); ``compute_results`` gives each metric per user (float32)
or as one number. Nothing here is computed by this package on WarpRec's side.

Agreement to 1e-6 on MovieLens 100K (ratings as test values, so nDCG's gains are graded) for
Precision, Recall, nDCG, nDCGRendle2020, MAP, MRR, HitRate per user and Gini and ShannonEntropy,
on untied scores, on popularity scores (every user's top k tied: the Evaluator's per-user draw,
a hash of (seed 42, user, item) in ``top_k_breaking_ties``, which the profile's
``ties="warprec"`` reproduces, list for list) and for generated lists with scores (items outside
the catalogue, repeated items, train items) read by WarpRec's ``ProxyRecommender`` from a file.
Departures shown, not hidden (the profile's ``not_reproduced``):

* a metric class updated on its own (without the Evaluator's tie generator) takes
  ``torch.topk``'s order of tied scores: users whose top-k holds no tie agree;
* a list shorter than k (ranked input): WarpRec fills it with unlisted items, drawn;
* a test value <= 0 is not relevant on either side, but WarpRec's nDCG keeps a negative one as a
  negative gain (``discounted_relevance`` replaces only the values > 0);
* a user whose test values are all <= 0 is NaN on both sides, but WarpRec's Gini and
  ShannonEntropy still count that user's list;
* a user with at most k items outside train: WarpRec fills the list with train items (at -inf)
  and scores P, R and HitRate; here those are NaN (the package's ``pool_le_k`` rule) and the
  order-dependent metrics agree.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.metrics.profiles import PROFILES

from ._peer_lists import ml100k, top_lists

# warprec first: where it is missing (Python < 3.12) the module skips without importing torch
# (2 s of each worker's collection)
pytest.importorskip("warprec")
torch = pytest.importorskip("torch")
evaluator = pytest.importorskip("warprec.evaluation.evaluator")
ranking = pytest.importorskip("warprec.data.ranking")
proxy = pytest.importorskip("warprec.recommenders.proxy")

K = 10
ALIASES = PROFILES["warprec"]["aliases"]
PER_USER = ["Precision", "Recall", "nDCG", "nDCGRendle2020", "MAP", "MRR", "HitRate"]
GLOBAL = ["Gini", "ShannonEntropy"]


def warprec_values(
    train: sp.csr_array, test: sp.csr_array, scores: np.ndarray, k: int, ties: str = "hash"
) -> tuple[dict[str, np.ndarray | float], np.ndarray]:
    """WarpRec's per-user values (NaN for the users it does not evaluate) and global values,
    and its top-k lists; ``ties="topk"`` drops the Evaluator's tie generator, so that the lists
    are ``torch.topk``'s (as a metric class computes them when updated on its own)."""
    ev = evaluator.Evaluator(PER_USER + GLOBAL, [k], train_set=sp.csr_matrix(train))
    if ties == "topk":
        ev.tie_g = None
    users = np.flatnonzero(np.diff(test.indptr) > 0)  # EvaluationDataset.users_with_eval
    preds = torch.tensor(np.asarray(scores, dtype=np.float64)[users])
    ranking.mask_seen_pairs(preds, sp.csr_matrix(train)[users])
    ground = torch.tensor(test.toarray()[users], dtype=torch.float32)
    ev._compute_metrics_step(preds, ground, torch.from_numpy(users), None)
    lists = ranking.rank_top_k(preds, k, ev.tie_g, torch.from_numpy(users))[1].numpy()
    out: dict[str, np.ndarray | float] = {}
    for name, value in ev.compute_results()[k].items():
        out[name] = value if isinstance(value, float) else value.numpy().astype(np.float64)
    return out, np.asarray(lists)


def ours(train, test, scores, k=K, **kw):
    return rt.evaluate(train, test, scores=scores, k=k, profile="warprec", return_topk=True, **kw)


def column(res: rt.Results, name: str, k: int = K) -> np.ndarray:
    return res.per_user[f"{ALIASES[name]}_at_{k}"].to_numpy(dtype=np.float64)


@pytest.fixture(scope="module")
def data():
    return ml100k()


def test_ml100k_untied_scores_agree_user_by_user(data):
    train, test, scores = data
    theirs, _ = warprec_values(train, test, scores["untied"], K)
    res = ours(train, test, scores["untied"])
    for name in PER_USER:
        np.testing.assert_allclose(column(res, name), theirs[name], atol=1e-6, err_msg=name)
    for name in GLOBAL:
        assert res.aggregates[f"{ALIASES[name]}_at_{K}"] == pytest.approx(theirs[name], abs=1e-6)
    assert np.nanmean(theirs["nDCG"]) > 0.0  # the lists do hit some positives


def test_ml100k_tied_scores_agree_user_by_user(data):
    """Popularity scores: every user's top k holds a tie, drawn by the Evaluator per user from
    (seed 42, user, item); the profile draws the same lists and every value agrees. The draw is
    not the item index order (the profile with ``ties="index"`` lists otherwise), and another
    seed draws other lists."""
    train, test, scores = data
    theirs, lists = warprec_values(train, test, scores["tied"], K)
    res = ours(train, test, scores["tied"])
    assert (res.per_user["n_tied_topk"].to_numpy() > 0).all()
    np.testing.assert_array_equal(res.topk, lists)
    for name in PER_USER:
        np.testing.assert_allclose(column(res, name), theirs[name], atol=1e-6, err_msg=name)
    for name in GLOBAL:
        key = f"{ALIASES[name]}_at_{K}"
        assert res.aggregates[key] == pytest.approx(theirs[name], abs=1e-6), name
    by_index = ours(train, test, scores["tied"], ties="index")
    assert (by_index.topk != lists).any(axis=1).sum() > 100
    assert (ours(train, test, scores["tied"], seed=7).topk != lists).any(axis=1).sum() > 100
    assert "ties" not in PROFILES["warprec"]["not_reproduced"]
    assert res.definitions["ties"] == "warprec" and res.definitions["ties_seed"] == 42


def test_ml100k_tied_scores_agree_with_torch_topk_where_the_top_k_holds_no_tie(data):
    """A metric class updated on its own ranks by ``torch.topk`` (no tie generator): popularity
    scores, untied for every other user by a small distinct perturbation; every user whose list
    differs from the profile's has a tie in its top k (``n_tied_topk > 0``), and every user
    without one gets WarpRec's numbers."""
    train, test, scores = data
    S = scores["tied"].copy()
    S[::2] += 1e-6 * np.random.default_rng(2).random(S[::2].shape)
    theirs, lists = warprec_values(train, test, S, K, ties="topk")
    res = ours(train, test, S)
    differ = (res.topk != lists).any(axis=1)
    tied = res.per_user["n_tied_topk"].to_numpy() > 0
    assert differ.any() and (tied[differ]).all()
    assert (~tied).sum() == 75  # the perturbed users, whose values are compared below
    for name in PER_USER:
        np.testing.assert_allclose(
            column(res, name)[~tied], theirs[name][~tied], atol=1e-6, err_msg=name
        )


def test_ml100k_generated_lists_agree_through_its_proxy_recommender(data, tmp_path):
    """Each user's 15 best items with distinct scores, every 3rd list's first item replaced
    by one outside the catalogue, every 4th with a repeated item (WarpRec sums its scores), every
    5th with a train item: WarpRec reads the file with its ProxyRecommender and evaluates its
    score matrix; the profile's means (``compare_profiles``, its list rules) are WarpRec's."""
    train, test, scores = data
    m, n = test.shape
    rng = np.random.default_rng(1)
    rows = []
    for u, items in enumerate(top_lists(train, scores["untied"], K + 5).tolist()):
        if u % 3 == 0:
            items[0] = n + 7
        if u % 4 == 0:
            items[5] = items[2]
        if u % 5 == 0:
            items[1] = int(train.indices[train.indptr[u]])
        values = np.sort(rng.random(len(items)))[::-1] + 1.0
        rows += [(u, i, float(v)) for i, v in zip(items, values, strict=True)]
    ranked = pd.DataFrame(rows, columns=["user", "item", "score"])
    path = tmp_path / "recs.tsv"
    ranked.to_csv(path, sep="\t", header=False, index=False)
    info = {
        "item_mapping": {i: i for i in range(n)},
        "user_mapping": {u: u for u in range(m)},
        "n_users": m,
        "n_items": n,
    }
    params = {"recommendation_file": str(path), "separator": "\t", "header": False}
    model = proxy.ProxyRecommender(params, info)
    theirs, _ = warprec_values(train, test, model.predict(torch.arange(m)).numpy(), K)
    table = rt.compare_profiles(train, test, ranked=ranked, k=K, profiles="warprec").table
    value = dict(zip(table["name"], table["value"], strict=True))
    for name in PER_USER + GLOBAL:
        want = theirs[name] if name in GLOBAL else np.nanmean(theirs[name])
        assert value[name] == pytest.approx(want, abs=1e-6), name


def test_a_short_list_is_filled_by_the_evaluators_draw_per_user(tmp_path):
    """Three users list the same two items (a list shorter than k = 6, read by the
    ProxyRecommender): WarpRec fills each list with unlisted items of score 0, drawn per user by
    its Evaluator (torch.topk alone would give every user the same ones); the profile's list
    stays short, and its score matrix given as scores draws the same items."""
    m, n, k = 3, 40, 6
    ranked = pd.DataFrame({"user": [0, 0, 1, 1, 2, 2], "item": [5, 9] * 3, "score": [2, 1] * 3})
    path = tmp_path / "recs.tsv"
    ranked.to_csv(path, sep="\t", header=False, index=False)
    info = {"item_mapping": {i: i for i in range(n)}, "user_mapping": {u: u for u in range(m)}}
    params = {"recommendation_file": str(path), "separator": "\t", "header": False}
    model = proxy.ProxyRecommender(params, {**info, "n_users": m, "n_items": n})
    scores = model.predict(torch.arange(m)).numpy()
    train = sp.csr_array((m, n))
    test = sp.csr_array((np.ones(m), (np.arange(m), [9, 20, 30])), shape=(m, n))
    _, drawn = warprec_values(train, test, scores, k)
    _, by_topk = warprec_values(train, test, scores, k, ties="topk")
    assert (drawn[:, :2] == [5, 9]).all() and (by_topk[:, :2] == [5, 9]).all()
    assert len({tuple(row) for row in drawn[:, 2:]}) == m  # a draw of its own for each user
    assert len({tuple(row) for row in by_topk[:, 2:]}) == 1
    padded = np.full((m, k), -1)
    padded[:, :2] = [5, 9]
    res = rt.evaluate(train, test, ranked=padded, k=k, profile="warprec", return_topk=True)
    assert (res.topk[:, 2:] == -1).all()
    assert "drawn per user" in PROFILES["warprec"]["not_reproduced"]["short_list"]
    # its score matrix given as scores: the same draw (ties="warprec", seed 42)
    matrix = rt.evaluate(train, test, scores=scores, k=k, profile="warprec", return_topk=True)
    np.testing.assert_array_equal(matrix.topk, drawn)


def _small() -> tuple[sp.csr_array, sp.csr_array, np.ndarray]:
    """Five users, eight items, k = 3. 0: graded positives; 1: one test value, -1 (no
    positive); 2: six train items, so two candidates for k = 3; 3: a positive tied with four
    other items at the top; 4: a test value -2 listed first, a positive (3) second."""
    train, test = np.zeros((5, 8)), np.zeros((5, 8))
    test[0, [1, 4, 6]] = [5.0, 2.0, 1.0]
    test[1, 2] = -1.0
    train[2, :6] = 1.0
    test[2, 7] = 3.0
    test[3, [0, 5]] = [1.0, 4.0]
    test[4, [0, 2]] = [-2.0, 3.0]
    scores = np.array(
        [
            [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2],
            [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8],
            [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.9, 0.1],
            [0.5, 0.9, 0.5, 0.5, 0.5, 0.5, 0.1, 0.2],
            [0.9, 0.1, 0.8, 0.2, 0.3, 0.4, 0.5, 0.6],
        ]
    )
    return sp.csr_array(train), sp.csr_array(test), scores


def test_adversarial_users_agree_where_the_profile_says():
    train, test, scores = _small()
    theirs, _ = warprec_values(train, test, scores, 3)
    res = ours(train, test, scores, k=3)
    val = {name: column(res, name, 3) for name in PER_USER}
    for name in PER_USER:
        # user 0 (graded gains); user 1 (no positive): NaN on both sides; user 3 (a positive
        # tied with four other items at the top): the same draw of the tied items
        for u in (0, 1, 3):
            assert val[name][u] == pytest.approx(theirs[name][u], abs=1e-6, nan_ok=True), name
        assert math.isnan(theirs[name][1])
    for name in ("nDCG", "nDCGRendle2020", "MAP", "MRR"):  # order-dependent: user 2 agrees
        assert val[name][2] == pytest.approx(theirs[name][2], abs=1e-6), name
    for name in ("Precision", "Recall", "HitRate"):  # pool of 2 <= k: pool_le_k here
        assert math.isnan(val[name][2]) and not math.isnan(theirs[name][2]), name
    assert "pool_le_k" in PROFILES["warprec"]["not_reproduced"]
    for name in ("Precision", "Recall", "nDCGRendle2020", "MAP", "MRR", "HitRate"):
        assert val[name][4] == pytest.approx(theirs[name][4], abs=1e-6), name  # -2 not relevant


def test_warprecs_ndcg_keeps_a_negative_test_value_as_a_negative_gain():
    """User 4: item 0 (test value -2) first, item 2 (3: gain 2^4 - 1 = 15) second. WarpRec's DCG
    is -2 / log2(2) + 15 / log2(3) over the ideal 15; here -2 is not relevant (gain 0)."""
    train, test, scores = _small()
    theirs, _ = warprec_values(train, test, scores, 3)
    res = ours(train, test, scores, k=3)
    assert theirs["nDCG"][4] == pytest.approx((-2.0 + 15.0 / math.log2(3.0)) / 15.0, abs=1e-6)
    assert column(res, "nDCG", 3)[4] == pytest.approx(1.0 / math.log2(3.0))
    assert "negative_values" in PROFILES["warprec"]["not_reproduced"]


def test_warprecs_gini_counts_the_lists_of_users_without_a_positive():
    """Users 0 and 1 only (no ties, no short pool): WarpRec's Gini and ShannonEntropy count user
    1's list although user 1 has no positive; the profile's equal them once user 1's value is
    made positive (which changes no list), and differ without."""
    train, test, scores = _small()
    train, test, scores = train[:2], test[:2], scores[:2]
    theirs, _ = warprec_values(train, test, scores, 3)
    positive = test.copy()
    positive.data = np.abs(positive.data)
    counted = ours(train, positive, scores, k=3).aggregates
    left_out = ours(train, test, scores, k=3).aggregates
    for name in GLOBAL:
        key = f"{ALIASES[name]}_at_3"
        assert counted[key] == pytest.approx(theirs[name], abs=1e-6), name
        assert left_out[key] != pytest.approx(theirs[name], abs=1e-6), name
    assert "no_positive_lists" in PROFILES["warprec"]["not_reproduced"]
