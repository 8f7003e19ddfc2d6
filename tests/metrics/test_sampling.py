"""The sampled-negative protocol: what is drawn, and that the metrics are those of the candidates.

The metric values are checked against an independent construction: the same candidates given to
a full-catalogue evaluation with every other item moved into the user's train row (so that the
pool is the candidates), with tied scores and the index tie policy (candidates keep the
catalogue's order).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.metrics.sampling import sample_candidates

NEG = {"n": 15, "by": "uniform", "seed": 4, "per_positive": False}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    m, n = 40, 120
    cell = rng.choice(3, size=(m, n), p=[0.8, 0.12, 0.08])
    cell[0] = 0  # a user without train or test
    tr = sp.csr_array((cell == 1).astype(float))
    te = sp.csr_array((cell == 2).astype(float) * rng.integers(1, 4, (m, n)))
    scores = rng.integers(0, 6, (m, n)).astype(float)  # many ties
    return tr, te, scores


@pytest.mark.parametrize("by", ["uniform", "popularity"])
@pytest.mark.parametrize("per_positive", [False, True])
def test_candidates_are_positives_and_fresh_negatives(data, by, per_positive):
    tr, te, _ = data
    neg = {**NEG, "by": by, "per_positive": per_positive}
    cand = sample_candidates(tr, te, neg)
    pop = np.bincount(tr.indices, minlength=tr.shape[1])
    for u in range(te.shape[0]):
        c = cand[u][cand[u] >= 0]
        pos = set(te.indices[te.indptr[u] : te.indptr[u + 1]].tolist())
        train = set(tr.indices[tr.indptr[u] : tr.indptr[u + 1]].tolist())
        if not pos:
            assert c.size == 0
            continue
        negs = set(c.tolist()) - pos
        assert pos <= set(c.tolist()) and not negs & train and list(c) == sorted(set(c))
        want = NEG["n"] * (len(pos) if per_positive else 1)
        allowed = [
            i
            for i in range(tr.shape[1])
            if i not in pos | train and (by == "uniform" or pop[i] > 0)
        ]
        assert len(negs) == min(want, len(allowed))
        if by == "popularity":
            assert all(pop[i] > 0 for i in negs)  # probability proportional to train count
    again = sample_candidates(tr, te, neg)
    np.testing.assert_array_equal(cand, again)
    other = sample_candidates(tr, te, {**neg, "seed": 5})
    assert not np.array_equal(cand, other)


def test_metrics_are_those_of_the_candidates(data):
    tr, te, scores = data
    cand = sample_candidates(tr, te, NEG)
    m, n = te.shape
    # every non-candidate item of a user with positives goes to its train row
    extra = np.ones((m, n), dtype=bool)
    for u in range(m):
        extra[u, cand[u][cand[u] >= 0]] = False
    extra[np.diff(te.indptr) == 0] = False
    moved = sp.csr_array((tr.toarray() > 0) | extra, dtype=float)
    kw = dict(scores=scores, k=5, metrics=["all", "gauc"], ties="index", nthreads=1)
    sampled = rt.evaluate(tr, te, negatives=NEG, **kw)
    full = rt.evaluate(moved, te, **kw)
    cols = [c for c in sampled.per_user.columns if c not in ("n_train",)]
    pd.testing.assert_frame_equal(sampled.per_user[cols], full.per_user[cols])
    assert sampled.aggregates["gauc"] == pytest.approx(full.aggregates["gauc"], abs=1e-12)
    np.testing.assert_array_equal(sampled.per_user["n_train"], np.diff(tr.indptr))
    assert "coverage" in sampled.definitions["left_out"]
    assert sampled.definitions["negatives"]["n"] == NEG["n"]
    assert sampled.fingerprint != rt.evaluate(tr, te, **kw).fingerprint


def test_identical_at_any_thread_count_and_block_size(data):
    tr, te, scores = data
    one = rt.evaluate(tr, te, scores=scores, k=5, metrics="all", negatives=NEG, nthreads=1)
    two = rt.evaluate(
        tr, te, scores=scores, k=5, metrics="all", negatives=NEG, nthreads=2, block_rows=3
    )
    pd.testing.assert_frame_equal(one.per_user, two.per_user)


def test_bad_negatives_and_list_metrics_are_refused(data):
    tr, te, scores = data
    with pytest.raises(rt.InputError, match="negatives"):
        rt.evaluate(tr, te, scores=scores, negatives={"n": 0})
    with pytest.raises(rt.InputError, match="negatives"):
        rt.evaluate(tr, te, scores=scores, negatives={"n": 5, "by": "often"})
    with pytest.raises(rt.InputError, match="novelty"):
        rt.evaluate(tr, te, scores=scores, negatives=NEG, metrics=["p", "novelty"])
    lists = np.tile(np.arange(5), (te.shape[0], 1))
    with pytest.raises(rt.InputError, match="ranked"):
        rt.evaluate(tr, te, ranked=lists, k=5, negatives=NEG)


def test_users_without_a_positive_under_a_relevance_level():
    """trec_eval's rule (zero: averaged in as 0; qrels.comment.test topic 2024-36302 in
    trec_eval's tests is such a topic) against recometrics' (NaN, reason no_positive)."""
    test = sp.csr_array(np.array([[2.0, 0, 1.0, 0, 0], [1.0, 0, 1.0, 0, 0]]))
    scores = np.array([[3.0, 2.0, 1.0, 0.5, 0.0], [3.0, 2.0, 1.0, 0.5, 0.0]])
    kw = dict(
        scores=scores,
        k=2,
        metrics=["p", "ndcg", "rprec", "mpr", "bpref"],
        relevance_level=2,
        nthreads=1,
    )
    zero = rt.evaluate(None, test, no_positive="zero", ties="index", **kw).per_user
    nan = rt.evaluate(None, test, no_positive="nan", ties="index", **kw).per_user
    assert zero["nan_reason"].tolist() == ["", ""] and nan["nan_reason"][1] == "no_positive"
    for col in ("p_at_2", "ndcg_at_2", "rprec", "bpref_at_2"):
        assert zero[col][1] == 0.0 and np.isnan(nan[col][1])
    assert np.isnan(zero["mpr"][1])
    # user 0: item 0 (value 2) is the positive, item 2 (value 1) judged non-relevant
    assert zero["p_at_2"][0] == 0.5 and zero["bpref_at_2"][0] == 1.0
    assert zero.equals(rt.evaluate(None, test, profile="trec_eval", **kw).per_user)


def test_a_profile_with_sampled_negatives_leaves_its_list_metrics_out():
    """A profile's own metric set under sampled negatives: the metrics of the top-K lists are
    left out and recorded (the user named none of them); naming one is refused."""
    rng = np.random.default_rng(0)
    tr = sp.csr_array((rng.random((30, 50)) < 0.2).astype(float))
    te = sp.csr_array(((rng.random((30, 50)) < 0.1) & (tr.toarray() == 0)).astype(float))
    A, B = rng.random((30, 4)), rng.random((50, 4))
    neg = {"n": 10, "by": "uniform", "seed": 0}
    res = rt.evaluate(tr, te, A=A, B=B, profile="recbole", k=5, negatives=neg)
    assert {"arp", "tailpercentage", "coverage"} <= set(res.definitions["left_out"])
    assert "hit_at_5" in res.per_user.columns and "arp_at_5" not in res.per_user.columns
    with pytest.raises(rt.InputError, match=r"Got \['arp'\]"):
        rt.evaluate(tr, te, A=A, B=B, profile="recbole", metrics=["hit", "arp"], k=5, negatives=neg)


def test_catalogue_scores_are_gathered_in_bounded_blocks():
    """The candidates' scores are gathered from the catalogue's in blocks of at most
    ``BLOCK_BYTES`` of catalogue scores, whatever the catalogue: memory stays bounded."""
    from recoeval_tracking.engine.driver import BLOCK_BYTES

    m, n = 20, 300_000
    rng = np.random.default_rng(3)
    te = sp.csr_array((np.ones(m), (np.arange(m), rng.choice(n, m, replace=False))), shape=(m, n))
    asked = []

    def scorer(users):
        asked.append(len(users))
        return np.random.default_rng(int(users[0])).random((len(users), n))

    res = rt.evaluate(
        None,
        te,
        scorer=scorer,
        metrics=["hit", "ndcg"],
        k=5,
        negatives={"n": 50, "by": "uniform", "seed": 0},
    )
    assert res.per_user["hit_at_5"].notna().all()
    assert sum(asked) >= m and max(asked) <= BLOCK_BYTES // (n * 8) == 6, asked
