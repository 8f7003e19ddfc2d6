"""The ``trec_eval10`` profile against trec_eval 10.0 (usnistgov/trec_eval, tag v10.0): its
rounding change (``m_iprec_at_recall.c`` and ``m_11pt_avg.c`` turn the recall rho into the
cutoff ``lround(rho R)`` where 9 took ``(long) (rho R + 0.9)``) and its new ``unj`` measure
(``m_unjudged.c``).

``iprec_user`` is trec_eval's loop written out (reverse over the ranking, the running maximum of
the precision, the value at each cutoff) for both roundings; it gives the expected values by
hand and on MovieLens 100K at relevance level 4. With a trec_eval 10.0 binary named by
``RECOEVAL_TREC_EVAL10`` (``make`` in a checkout of the v10.0 tag), its own ``-q`` output gives
the same numbers topic by topic; pytrec_eval bundles 9.x, whose numbers the ``trec_eval``
profile keeps.
"""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt

from ._judgements import qrels_and_run
from ._peer_lists import ml100k

RHOS = [j / 10 for j in range(11)]


def _lround(x: float) -> int:
    return int(math.floor(x + 0.5)) if x - math.floor(x) != 0.5 else int(math.floor(x)) + 1


def iprec_user(ranks: list[int], version: int) -> list[float]:
    """trec_eval's interpolated precisions at the 11 recalls for the sorted 1-based ranks of
    every relevant document (all retrieved), 9.x or 10.0 cutoffs."""
    R = len(ranks)
    cut = [(int(rho * R + 0.9) if version == 9 else _lround(rho * R)) for rho in RHOS]
    values = [0.0] * 11
    current = 10
    while current >= 0 and cut[current] > R:
        current -= 1
    best, rel_so_far = 0.0, R
    relevant = set(ranks)
    for i in range(max(ranks), 0, -1):
        if rel_so_far == 0:
            break
        best = max(best, rel_so_far / i)
        if i in relevant:
            while current >= 0 and rel_so_far == cut[current]:
                values[current] = best
                current -= 1
            rel_so_far -= 1
    while current >= 0:
        values[current] = best
        current -= 1
    return values


def test_the_rounding_change_by_hand():
    """Relevant documents at ranks 1, 4, 5, 10 (R = 4): at recall 0.3, 9.x cuts at
    (long) 2.1 = 2 relevant documents (precision 0.6 from there on), 10.0 at lround(1.2) = 1
    (precision 1); at 0.8, 9.x cuts at 4 (0.4), 10.0 at 3 (0.6)."""
    v9 = iprec_user([1, 4, 5, 10], 9)
    v10 = iprec_user([1, 4, 5, 10], 10)
    assert v9 == [1.0, 1.0, 1.0, 0.6, 0.6, 0.6, 0.6, 0.6, 0.4, 0.4, 0.4]
    assert v10 == [1.0, 1.0, 1.0, 1.0, 0.6, 0.6, 0.6, 0.6, 0.6, 0.4, 0.4]
    scores = np.zeros((1, 12))
    scores[0, [0, 3, 4, 9]] = [12, 9, 8, 3]
    scores[0, [1, 2, 5, 6, 7, 8, 10, 11]] = [11, 10, 7, 6, 5, 4, 2, 1]
    test = sp.csr_array((np.ones(4), ([0] * 4, [0, 3, 4, 9])), shape=(1, 12))
    res = rt.evaluate(None, test, scores=scores, k=5, profile="trec_eval10")
    row = res.per_user.iloc[0]
    assert [row[f"iprec10_at_recall_{r:.2f}"] for r in RHOS] == pytest.approx(v10)
    assert row["11pt_avg10"] == pytest.approx(7.8 / 11)
    old = rt.evaluate(None, test, scores=scores, k=5, profile="trec_eval").per_user.iloc[0]
    assert [old[f"iprec_at_recall_{r:.2f}"] for r in RHOS] == pytest.approx(v9)
    assert old["11pt_avg"] == pytest.approx(7.2 / 11)


def test_unj_by_hand():
    """Level 4: a list of 5 at k = 5 with a positive (rated 5), a judged non-relevant item
    (rated 2) and three items without a test entry: unj = 3/5."""
    test = sp.csr_array((np.array([5.0, 2.0]), ([0, 0], [0, 1])), shape=(1, 9))
    scores = np.array([[9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]])
    res = rt.evaluate(None, test, scores=scores, k=5, profile="trec_eval10", relevance_level=4.0)
    assert res.per_user["unj_at_5"][0] == pytest.approx(3 / 5)


@pytest.fixture(scope="module")
def data():
    train, test, scores = ml100k()
    return train, test, scores["untied"]


def test_ml100k_interpolated_precisions(data):
    train, test, S = data
    res = rt.evaluate(train, test, scores=S, k=10, profile="trec_eval10", relevance_level=4.0)
    ranked = np.lexsort((-np.broadcast_to(np.arange(S.shape[1]), S.shape), -S), axis=1)
    differ = 0
    for u in range(test.shape[0]):
        lo, hi = test.indptr[u], test.indptr[u + 1]
        rel = set(test.indices[lo:hi][test.data[lo:hi] >= 4].tolist())
        if not rel:
            continue
        train_u = set(train.indices[train.indptr[u] : train.indptr[u + 1]].tolist())
        pool = [i for i in ranked[u] if i not in train_u]
        ranks = [r for r, i in enumerate(pool, start=1) if i in rel]
        want = iprec_user(ranks, 10)
        got = [res.per_user[f"iprec10_at_recall_{r:.2f}"][u] for r in RHOS]
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=str(u))
        assert res.per_user["11pt_avg10"][u] == pytest.approx(np.mean(want), rel=1e-12)
        differ += iprec_user(ranks, 9) != want
    assert differ  # the two roundings give other numbers on these users


def test_installed_trec_eval10_topic_by_topic(data, tmp_path: Path):
    binary = os.environ.get("RECOEVAL_TREC_EVAL10")
    if not binary or not Path(binary).exists():
        pytest.skip("RECOEVAL_TREC_EVAL10 does not name a trec_eval 10.0 binary")
    train, test, S = data
    qrels, run = qrels_and_run(train, test, S)
    (tmp_path / "qrels").write_text(
        "".join(f"{q} 0 {d} {v}\n" for q, docs in qrels.items() for d, v in docs.items())
    )
    (tmp_path / "run").write_text(
        "".join(f"{q} Q0 {d} 0 {s!r} r\n" for q, docs in run.items() for d, s in docs.items())
    )
    out = subprocess.run(
        [binary, "-q", "-l", "4", "-m", "iprec_at_recall", "-m", "11pt_avg", "-m", "unj"]
        + [str(tmp_path / "qrels"), str(tmp_path / "run")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    values = {}
    for line in out.splitlines():
        name, q, v = line.split()
        values[(name, q)] = float(v)
    res = rt.evaluate(train, test, scores=S, k=10, profile="trec_eval10", relevance_level=4.0)
    pu = res.per_user
    checked = 0
    for u in range(test.shape[0]):
        q = f"u{u}"
        if ("11pt_avg", q) not in values:
            continue
        for r in RHOS:
            want = values[(f"iprec_at_recall_{r:.2f}", q)]
            assert pu[f"iprec10_at_recall_{r:.2f}"][u] == pytest.approx(want, abs=5e-5), (q, r)
        assert pu["11pt_avg10"][u] == pytest.approx(values[("11pt_avg", q)], abs=5e-5)
        if not math.isnan(pu["unj_at_10"][u]):  # a user with a positive
            assert pu["unj_at_10"][u] == pytest.approx(values[("unj_10", q)], abs=5e-5)
        checked += 1
    assert checked > 100
