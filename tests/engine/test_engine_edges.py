"""The engine lines that the path tests (tests/engine/test_paths.py) cannot reach through
``evaluate``: the backend seam's error, the stale-cache guard of the kernels' disk cache, and the
top-K list of an empty pool (``evaluate`` never hands the kernel a user whose pool is empty: the
``min_items_pool`` rule makes it undefined first)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from recoeval_tracking.engine import backends, driver, topk
from recoeval_tracking.engine import kernels as kn
from recoeval_tracking.engine.codes import Tie


def test_get_backend_names_the_known_ones():
    assert backends.get_backend("cpu") is driver
    known = r"unknown engine backend 'tpu'; known: \['cpu', 'cuda'\]"
    with pytest.raises(KeyError, match=known):
        backends.get_backend("tpu")


class _FakeCache:
    def __init__(self, path):
        self.cache_path = str(path)


class _FakeKernel:
    def __init__(self, path):
        self._cache = _FakeCache(path)


def _digest() -> str:
    """The documented stamp: sha256 over every engine source, name then bytes, by file name."""
    sources = sorted(Path(kn.__file__).parent.glob("*.py"))
    h = hashlib.sha256()
    for p in sources:
        h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()


def test_stale_cache_index_files_are_dropped_once(tmp_path, monkeypatch):
    """A cache whose stamp differs from the engine's sources loses the index files of the
    engine's modules (and only those); the stamp is then rewritten and a second call keeps the
    index files written since."""
    monkeypatch.setattr(kn, "block_ranked", _FakeKernel(tmp_path))
    (tmp_path / "engine-sources.sha256").write_text("an older digest")
    stale = [
        tmp_path / "ranks.topk_items-1.py311.nbi",
        tmp_path / "fill.fill_metrics-2.nbi",
        tmp_path / "kernels._eval_user-3.py311.nbi",
    ]
    other = [
        tmp_path / "ranks.topk_items-1.py311.1.nbc",  # data files stay (no index: unused)
        tmp_path / "someone_else.f-1.nbi",
    ]
    for p in stale + other:
        p.write_text("x")
    kn._drop_stale_caches()
    assert not any(p.exists() for p in stale)
    assert all(p.exists() for p in other)
    assert (tmp_path / "engine-sources.sha256").read_text() == _digest()
    assert not list(tmp_path.glob("engine-sources.*.tmp"))
    fresh = tmp_path / "ranks.topk_items-1.py311.nbi"
    fresh.write_text("x")
    kn._drop_stale_caches()  # the stamp matches: nothing is removed
    assert fresh.exists()


def test_stale_cache_guard_is_best_effort(tmp_path, monkeypatch):
    """No cache attribute (NUMBA_DISABLE_JIT) or an unwritable folder: nothing happens."""
    monkeypatch.setattr(kn, "block_ranked", object())
    kn._drop_stale_caches()
    missing = tmp_path / "not" / "there"
    monkeypatch.setattr(kn, "block_ranked", _FakeKernel(missing))
    kn._drop_stale_caches()
    assert not missing.exists()


@pytest.mark.parametrize("tie", [Tie.NOISE, Tie.INDEX, Tie.INDEX_DESC])
def test_top_k_list_of_an_empty_pool(tie):
    """Every item in train: the list is all padding and no item ties with it."""
    s = np.full(4, -np.inf)  # train items are masked to -inf before the list is built
    tr_idx = np.arange(4, dtype=np.int64)
    row = np.zeros(3, dtype=np.int64)
    assert topk.topk_items(s, 7, 0, int(tie), tr_idx, 0, 4, 3, row) == 0
    assert row.tolist() == [-1, -1, -1]


def test_top_k_list_of_a_short_pool():
    """One item outside train, K = 3: the list holds it, then padding."""
    s = np.array([-np.inf, 0.5, -np.inf, -np.inf])
    tr_idx = np.array([0, 2, 3], dtype=np.int64)
    row = np.zeros(3, dtype=np.int64)
    assert topk.topk_items(s, 7, 0, int(Tie.NOISE), tr_idx, 0, 3, 3, row) == 0
    assert row.tolist() == [1, -1, -1]


def test_average_ties_without_a_positive_gain():
    """ties="average" for a user whose test values give no positive gain: NDCG and its graded
    variant are NaN (the documented rule), binary NDCG is defined; with distinct scores every tie
    policy ranks alike, so it equals the value under ties="index"."""
    import scipy.sparse as sp

    import recoeval_tracking as rt

    test = sp.csr_array((np.array([-1.0, 0.0]), (np.array([0, 1]), np.array([1, 3]))), shape=(2, 5))
    S = np.array([[0.9, 0.5, 0.1, 0.3, 0.7], [0.2, 0.4, 0.6, 0.8, 0.1]])
    names = ["ndcg", "ndcg_exp", "ndcg_bin"]
    avg = rt.evaluate(None, test, scores=S, metrics=names, k=3, ties="average", nthreads=1)
    idx = rt.evaluate(None, test, scores=S, metrics=names, k=3, ties="index", nthreads=1)
    for col in ("ndcg_at_3", "ndcg_exp_at_3"):
        assert np.isnan(avg.per_user[col]).all(), col
    # user 0: its positive at rank 3 -> 1 / log2(4); user 1: at rank 1 -> 1
    np.testing.assert_allclose(avg.per_user["ndcg_bin_at_3"], [0.5, 1.0], rtol=1e-12)
    np.testing.assert_allclose(idx.per_user["ndcg_bin_at_3"], [0.5, 1.0], rtol=1e-12)


@pytest.mark.parametrize(
    "n_items,itemsize,n_rows,expected",
    [
        (20_000, 4, 10**6, 1024),  # 1,024 users' scores (82 MB) fit in 128 MiB
        (100_000, 4, 10**6, 335),  # 128 MiB // 400,000 bytes a user
        (100_000, 8, 10**6, 167),  # float64: half as many
        (1_682, 4, 10**6, 2_493),  # small catalogue: 16 MiB // 6,728 bytes, more than 1,024
        (10_000_000, 4, 10**6, 8),  # 128 MiB holds 3 users: never fewer than 8
        (20_000, 4, 100, 100),  # never more than the users to score
    ],
)
def test_block_rows_bound_the_scores_and_amortise_the_gemm(n_items, itemsize, n_rows, expected):
    """A block holds 1,024 users where 128 MiB of scores allow it (BLAS packs the item factors once
    per call), more on a catalogue where 16 MiB hold more, at least 8 and at most the users."""
    assert driver.default_block_rows(n_items, itemsize, n_rows) == expected
