"""A topic that retrieves nothing: trec_eval's ``-c`` test (``make quicktest``) and the rule
that bpref and rbp follow beside P, R, AP and F1.

Inputs are trec_eval's ``test/qrels.test`` (topics 301-303) and ``test/results.trunc`` (topic
301 with 500 documents, 303 with 84, 302 with none); the expected values are trec_eval's
published output ``test/out.test.aqc`` (``trec_eval -m all_trec -q -c``: with ``-c`` a topic of
the qrels missing from the run is averaged in with 0 for every measure). Files kept verbatim in
``data/trec_eval/`` (usnistgov/trec_eval; see that folder's README).

The run enters as ranked lists (trec_eval's order: score descending, ties by docno
descending), topic 302 with an empty list: evaluated (its ``nan_reason`` is empty) with nothing
retrieved.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt

from .test_trec_eval_quicktest import DATA, HALF_UNIT, judged, read_out

K = 500


def read_run(path) -> dict[str, dict[str, float]]:
    """``qid Q0 docno rank score tag [ignored...]``: results.trunc has text after the tag,
    which trec_eval ignores."""
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            qid, _, docno, _rank, score = line.split()[:5]
            run.setdefault(qid, {})[docno] = float(score)
    return run


@pytest.fixture(scope="module")
def truncated():
    _, run, topics, col, test = judged("qrels.test", "results.trunc", read_run)
    expected = read_out(DATA / "out.test.aqc")
    lists = np.full((len(topics), K), -1, dtype=np.int64)
    for u, q in enumerate(topics):
        docs = run.get(q, {})
        ranked = sorted(sorted(docs, reverse=True), key=lambda d: -docs[d])
        lists[u, : len(ranked)] = [col[d] for d in ranked]
    res = rt.evaluate(
        None,
        test,
        ranked=lists,
        k=K,
        profile="trec_eval",
        nthreads=1,
        metrics=["p", "r", "ap", "f1", "bpref", "rbp"],
        rbp_persistence=0.9,
        cumulative=True,
    )
    return topics, run, expected, res


def test_the_empty_topic_is_evaluated(truncated):
    topics, run, expected, res = truncated
    assert topics == ["301", "302", "303"] and "302" not in run
    assert expected[("num_ret", "302")] == "0"
    assert list(res.per_user["nan_reason"]) == ["", "", ""]


@pytest.mark.parametrize(
    "measure, column",
    [
        ("bpref", f"bpref_at_{K}"),
        ("rbp", f"rbp_at_{K}"),
        ("map", f"ap_at_{K}"),
        ("P_5", "p@5"),
        ("recall_5", "r@5"),
        ("set_recall", f"r_at_{K}"),
    ],
)
def test_trec_eval_dash_c_values(truncated, measure, column):
    """Per topic and the ``all`` line of out.test.aqc: topic 302 scores 0 and is averaged in
    (bpref all 0.1510, where leaving 302 out gives (0.1230 + 0.3300) / 2 = 0.2265; rbp with
    trec_eval's default persistence 0.9, all 0.1679). set_P and set_F are over the documents
    retrieved (84 for topic 303), not over k = 500: not compared."""
    topics, _, expected, res = truncated
    if "@" in column:
        name, k = column.split("@")
        values = res.curves_per_user[f"{name}_at_k"][:, int(k) - 1]
    else:
        values = res.per_user[column].to_numpy()
    for u, q in enumerate(topics):
        assert abs(values[u] - float(expected[(measure, q)])) <= HALF_UNIT, (measure, q)
    assert values[topics.index("302")] == 0.0
    assert abs(np.mean(values) - float(expected[(measure, "all")])) <= HALF_UNIT


def _ranked_at_2(test, lists, metrics, **kw) -> rt.Results:
    """Ranked lists of two items at relevance level 1."""
    return rt.evaluate(
        None, test, ranked=lists, k=2, relevance_level=1, metrics=metrics, nthreads=1, **kw
    )


def test_empty_list_by_hand():
    """Two users with ranked input: user 0 lists its positive first, user 1 lists nothing
    (positive item 2, judged non-relevant item 3 at relevance level 1). bpref and rbp of user 1
    are 0 (an empty sum: nothing retrieved), as its P, R, AP and F1 are; the means average it
    in. User 0: bpref 1 (no judged non-relevant above its only positive), rbp (1 - 0.8) * 1."""
    test = sp.csr_array((np.array([1.0, 1.0, 0.0]), ([0, 1, 1], [0, 2, 3])), shape=(2, 5))
    lists = np.array([[0, 1], [-1, -1]])
    res = _ranked_at_2(test, lists, ["p", "r", "ap", "f1", "bpref", "rbp"], rbp_persistence=0.8)
    pu = res.per_user
    assert list(pu["nan_reason"]) == ["", ""]
    for col, want in {
        "p_at_2": [0.5, 0.0],
        "r_at_2": [1.0, 0.0],
        "ap_at_2": [1.0, 0.0],
        "f1_at_2": [2 / 3, 0.0],
        "bpref_at_2": [1.0, 0.0],
        "rbp_at_2": [0.2, 0.0],
    }.items():
        np.testing.assert_allclose(pu[col].to_numpy(), want, rtol=0, atol=1e-12, err_msg=col)
    assert "0 for an empty list" in res.definitions["metrics"]["bpref"]
    assert "0 for an empty list" in res.definitions["metrics"]["rbp"]


def test_every_nan_of_bpref_and_rbp_has_a_reason():
    """Users not evaluated (no test entry; no positive under no_positive='nan') are the only
    NaN of bpref and rbp, each with its reason."""
    test = sp.csr_array((np.array([1.0, 0.0]), ([0, 1], [0, 1])), shape=(3, 4))
    lists = np.array([[-1, -1], [0, 1], [1, 2]])
    res = _ranked_at_2(test, lists, ["p", "bpref", "rbp"], no_positive="nan").per_user
    assert list(res["nan_reason"]) == ["", "no_positive", "no_test"]
    for col in ("bpref_at_2", "rbp_at_2"):
        v = res[col].to_numpy()
        assert v[0] == 0.0
        assert np.isnan(v[1:]).all()
        assert (res["nan_reason"][np.isnan(v)] != "").all()
