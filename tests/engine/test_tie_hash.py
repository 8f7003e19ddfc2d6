"""``ties="warprec"``: WarpRec's per-user tie draw, against a slow reference from its source.

WarpRec 2.2.8 (warprec/data/ranking.py) ranks a row of its Evaluator that holds equal scores by
score, then by ``_tie_keys(seed, users, items)`` (larger first): MurmurHash3's 32-bit finaliser
of the user's part (user x ``_GOLDEN``, xor the seed folded to 32 bits, mixed twice) xor the
item's part (item x ``_GOLDEN`` + 1, mixed once), mixed, its top ``_KEY_BITS`` = 30 bits. The
reference (``warprec_tie_key`` of tests/reference.py) re-computes that with Python integers
modulo 2**32, step by step as the source does it with torch's int32 (no code of the package);
the tests here rank each user's pool by (score, key, item index) with :func:`sorted`, and
:func:`reference.metrics_at_k` computes the metrics of that ranking from their definitions.
Where warprec is importable (Python >= 3.12), its own ``_tie_keys`` and ``top_k_breaking_ties``
are checked too; CI's Python 3.11 skips those.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from reference import (
    FMIX32_STEPS,
    WARPREC_GOLDEN,
    fmix32,
    metrics_at_k,
    warprec_tie_key,
)

import recoeval_tracking as rt

_M32 = 0xFFFFFFFF


def test_the_reference_finaliser_is_murmurhash3s():
    """fmix32 written out: ``h ^= h >> 16; h *= 0x85ebca6b; h ^= h >> 13; h *= 0xc2b2ae35;
    h ^= h >> 16`` (MurmurHash3, its 32-bit finaliser), here for h = 1 by hand."""
    h = 1
    h = (h * 0x85EBCA6B) & _M32  # 1 >> 16 is 0
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    assert fmix32(1) == h and fmix32(0) == 0


def _case(seed: int = 3, m: int = 7, n: int = 40):
    """Scores in {0, 1, 2} (about 13 items tied at each), a third of the users with train
    items, graded positives; one user with 4 items outside train (pool <= k)."""
    rng = np.random.default_rng(seed)
    S = rng.integers(0, 3, size=(m, n)).astype(np.float64)
    train = np.zeros((m, n))
    test = np.zeros((m, n))
    for u in range(m):
        perm = rng.permutation(n)
        n_train = n - 4 if u == m - 1 else (int(rng.integers(1, 12)) if u % 3 == 0 else 0)
        train[u, perm[:n_train]] = 1.0
        pos = perm[n_train : n_train + int(rng.integers(1, 4))]
        test[u, pos] = rng.integers(1, 6, size=pos.size)
    return sp.csr_array(train), sp.csr_array(test), S


def _expected(train, test, S, k: int, seed: int):
    """Each user's ranking of its pool by (score desc, WarpRec's key desc, index), its top k
    and its metrics by :func:`reference.metrics_at_k`."""
    lists, values = [], []
    for u in range(S.shape[0]):
        seen = set(train.indices[train.indptr[u] : train.indptr[u + 1]].tolist())
        pool = [i for i in range(S.shape[1]) if i not in seen]
        order = sorted(pool, key=lambda i: (-S[u, i], -warprec_tie_key(seed, u, i), i))
        lo, hi = test.indptr[u], test.indptr[u + 1]
        truth = dict(zip(test.indices[lo:hi].tolist(), test.data[lo:hi].tolist(), strict=True))
        lists.append((order + [-1] * k)[:k])
        values.append(metrics_at_k(order, truth, k))
    return np.array(lists), values


METRICS = ["p", "r", "ap", "ndcg", "rr", "hit", "roc_auc", "pr_auc"]


@pytest.mark.parametrize("seed", [None, 42, 7, 2**40 + 3])
def test_lists_and_metrics_follow_warprecs_key(seed):
    """Every top-k list and every metric (top-k and whole-ranking) is the reference's, at
    WarpRec's default seed (``seed`` left out: 42) and at others (a seed past 32 bits folded);
    the default takes 42, and the tie draw is not the item index order here."""
    train, test, S = _case()
    k = 5
    res = rt.evaluate(
        train, test, scores=S, k=k, ties="warprec", seed=seed, metrics=METRICS, return_topk=True
    )
    want_lists, want = _expected(train, test, S, k, 42 if seed is None else seed)
    np.testing.assert_array_equal(res.topk, want_lists)
    for name in METRICS:
        col = f"{name}_at_{k}" if rt.METRICS[name].at_k else name
        expected = [v[name] for v in want]
        np.testing.assert_allclose(res.per_user[col], expected, atol=1e-12, err_msg=name)
    assert res.definitions["ties_seed"] == (42 if seed is None else seed)
    by_index = rt.evaluate(train, test, scores=S, k=k, ties="index", return_topk=True)
    assert (by_index.topk != res.topk).any(axis=1).sum() >= 5


def test_the_seed_and_the_user_change_the_draw():
    """One row of tied scores given to two users: each gets a draw of its own, and another
    seed draws another one (so the key reads both)."""
    n, k = 30, 6
    S = np.ones((2, n))
    S[:, 0] = 2.0  # not all equal: the users are evaluated
    test = sp.csr_array((np.ones(2), ([0, 1], [1, 2])), shape=(2, n))
    train = sp.csr_array((2, n))
    lists = {
        s: rt.evaluate(train, test, scores=S, k=k, ties="warprec", seed=s, return_topk=True).topk
        for s in (42, 43)
    }
    for s, got in lists.items():
        np.testing.assert_array_equal(got, _expected(train, test, S, k, s)[0])
    assert (lists[42][0] != lists[42][1]).any() and (lists[42] != lists[43]).any()


def _colliding_items(seed: int, user: int) -> tuple[int, int]:
    """Two items with the same 30-bit key for ``user``: the first repeat over items 0, 1, ...
    (about 2**15 of them by the birthday bound), found with numpy's vectorised copy of the
    reference (checked against it on the pair)."""
    items = np.arange(200_000, dtype=np.uint64)
    m32 = np.uint64(_M32)

    def fmix(x):
        for shift, mult in FMIX32_STEPS:
            x = x ^ (x >> np.uint64(shift))
            if mult is not None:
                x = (x * np.uint64(mult)) & m32
        return x

    folded = (seed ^ (seed >> 32)) & _M32
    user_part = np.uint64(fmix32(fmix32(((user * WARPREC_GOLDEN) & _M32) ^ folded)))
    keys = fmix(user_part ^ fmix((items * np.uint64(WARPREC_GOLDEN) + np.uint64(1)) & m32))
    keys = keys >> np.uint64(2)
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    dup = int(np.flatnonzero(counts > 1)[0])
    i = int(first[dup])
    j = int(np.flatnonzero(keys == keys[i])[1])
    assert warprec_tie_key(seed, user, i) == warprec_tie_key(seed, user, j)
    return i, j


def test_equal_keys_go_by_item_index():
    """Two items whose keys collide, tied at the top of a user's row: the lower index first.
    WarpRec leaves such a pair to ``torch.topk``, whose order of equal keys is its own (lower
    index first on a row of the two items alone, the higher one first within a batch of whole
    rows, seen with torch 2 on CPU); each of the k adjacent pairs at the top of a tie of t items
    has equal keys with odds of about t / 2**30."""
    i, j = _colliding_items(42, 0)
    n = j + 1
    S = np.zeros((1, n))
    S[0, [i, j]] = 1.0
    test = sp.csr_array(([1.0], ([0], [j])), shape=(1, n))
    res = rt.evaluate(
        sp.csr_array((1, n)), test, scores=S, k=2, ties="warprec", metrics=["rr"], return_topk=True
    )
    assert res.topk[0].tolist() == [i, j]
    assert res.per_user["rr_at_2"].iloc[0] == 0.5


def test_a_bad_tie_policy_lists_warprec():
    train, test, S = _case()
    with pytest.raises(rt.InputError, match=r"'ties'.*'warprec'.*Got 'warprek'"):
        rt.evaluate(train, test, scores=S, ties="warprek")


# -- WarpRec's own code, where it is installed (Python >= 3.12) -------------------------------


def _warprec_ranking():
    pytest.importorskip("warprec")  # first: without it, torch is not imported for nothing
    return pytest.importorskip("warprec.data.ranking")


def test_the_reference_is_warprecs_tie_keys():
    ranking = _warprec_ranking()
    import torch

    users = [0, 1, 2, 941, 2**20 + 7, 2**31 - 1]
    items = list(range(0, 1700, 13))
    for seed in (0, 42, 7, 2**32 + 5, 2**64 - 1):
        theirs = ranking._tie_keys(seed, torch.tensor(users), torch.tensor(items)).numpy()
        mine = [[warprec_tie_key(seed, u, i) for i in items] for u in users]
        np.testing.assert_array_equal(theirs, mine, err_msg=f"seed {seed}")


def test_warprecs_top_k_breaking_ties_gives_the_same_lists():
    """WarpRec's ``top_k_breaking_ties`` on the same scores, train items at -inf (its
    ``mask_seen_pairs``), a generator seeded 42 (its Evaluator's default), the users' rows as
    its user indices: the lists of every user whose pool holds more than k items."""
    ranking = _warprec_ranking()
    import torch

    train, test, S = _case()
    k = 5
    preds = torch.tensor(S)
    ranking.mask_seen_pairs(preds, sp.csr_matrix(train))
    gen = torch.Generator().manual_seed(42)
    users = torch.arange(S.shape[0])
    _, theirs = ranking.top_k_breaking_ties(preds, k, gen, users)
    res = rt.evaluate(train, test, scores=S, k=k, ties="warprec", return_topk=True)
    big = (S.shape[1] - np.diff(train.indptr)) > k
    assert big.sum() == S.shape[0] - 1
    np.testing.assert_array_equal(res.topk[big], theirs.numpy()[big])
