"""trec_eval's own test data (``make quicktest``) through the trec_eval profile.

The inputs are trec_eval's ``test/qrels.comment.test`` and ``test/results.comment.test``
(three TREC topics, 500 retrieved documents each, relevance 0/1, comment lines included) and
the expected values are trec_eval's published output for them, ``test/out.test.aq``
(``trec_eval -m all_trec -q``; see ``data/trec_eval/README.md`` for the source). The out file
prints four decimals, so a value is reproduced when it is within half a unit of the last digit;
the same inputs through installed ``pytrec_eval`` (trec_eval 9.0.8) are compared at full
precision.

How the run is handed to the engine: one user per topic, one item per document named in the
qrels or the run, items indexed in ascending ``strcmp`` order of their docnos. Each topic's
retrieved documents get their score and every other document ``-inf`` (ranked after the run,
``inf_scores="rank"``); the scores, not the rank column, decide the order, as in trec_eval
(``form_res_rels``: score descending, ties by docno descending, i.e. the profile's
``ties="index_desc"``). Judgements of 0 are stored test entries below the profile's relevance
level 1: judged non-relevant (bpref), not positives.

What a run of 500 documents means for the mapping: trec_eval's measures see only the retrieved
documents, so its whole-run measures are our top-K metrics at k = 500 (``map`` = AP@500,
``ndcg`` = NDCG@500, ``recip_rank`` = RR@500, ``set_*`` at 500, ``num_rel_ret`` = hits@500,
``bpref`` = bpref@500); ``Rprec`` is our ``rprec`` (every topic has at most 500 relevant
documents, so ranks 1..R are all retrieved). Our whole-ranking measures rank the unretrieved
relevant documents after the run where trec_eval counts them as never found, so
``iprec_at_recall_*`` and ``11pt_avg`` are compared on topic 303 only (all its relevant
documents are retrieved); the list of what is not expressible is in the README ("trec_eval's
test values").
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt

DATA = Path(__file__).parent / "data" / "trec_eval"
RUN_LENGTH = 500
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500)  # P_1000 etc. lie beyond the run: not compared
HALF_UNIT = 5e-5 + 1e-12  # the out file's four decimals
IPREC = [f"iprec_at_recall_{j / 10:.2f}" for j in range(11)]


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """trec_eval's qrels format: ``qid iter docno rel`` per line; ``#`` lines are comments."""
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        qid, _, docno, rel = line.split()
        qrels.setdefault(qid, {})[docno] = int(rel)
    return qrels


def read_run(path: Path) -> dict[str, dict[str, float]]:
    """trec_eval's run format: ``qid Q0 docno rank score tag``; the rank column is ignored."""
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        qid, _, docno, _rank, score, _tag = line.split()
        run.setdefault(qid, {})[docno] = float(score)
    return run


def read_out(path: Path) -> dict[tuple[str, str], str]:
    """``measure<TAB>qid<TAB>value`` lines of a ``trec_eval -q`` output."""
    out = {}
    for line in path.read_text().splitlines():
        measure, qid, value = (x.strip() for x in line.split("\t"))
        out[(measure, qid)] = value
    return out


def judged(qrels_file: str, run_file: str, read_run=read_run) -> tuple:
    """The qrels and the run of ``DATA``'s files, one user per topic (sorted), one item per docno
    of the qrels or the run (``col``: in ``strcmp`` order, str order for ASCII docnos), and the
    judgements as the test matrix: ``qrels, run, topics, col, test``."""
    qrels = read_qrels(DATA / qrels_file)
    run = read_run(DATA / run_file)
    topics = sorted(qrels)
    docnos = sorted({d for q in topics for d in qrels[q]} | {d for q in run for d in run[q]})
    col = {d: j for j, d in enumerate(docnos)}
    rows, cols, vals = [], [], []
    for u, q in enumerate(topics):
        for d, rel in qrels[q].items():
            rows.append(u), cols.append(col[d]), vals.append(float(rel))
    test = sp.csr_array((vals, (rows, cols)), shape=(len(topics), len(docnos)))
    return qrels, run, topics, col, test


@pytest.fixture(scope="module")
def quicktest():
    qrels, run, topics, col, test = judged("qrels.comment.test", "results.comment.test")
    expected = read_out(DATA / "out.test.aq")
    scores = np.full(test.shape, -np.inf)
    for u, q in enumerate(topics):
        for d, s in run[q].items():
            scores[u, col[d]] = s
    metrics = [
        "p",
        "r",
        "ap",
        "ndcg",
        "tp",
        "hit",
        "hits",
        "f1",
        "set_map",
        "rr",
        "rprec",
        "bpref",
        "11pt_avg",
        *IPREC,
    ]
    res = rt.evaluate(
        None,
        test,
        scores=scores,
        k=RUN_LENGTH,
        metrics=metrics,
        cumulative=True,
        profile="trec_eval",
        return_topk=True,
        nthreads=1,
    )
    return topics, qrels, run, expected, res


def ours_by_measure(res, topics) -> dict[str, dict[str, float]]:
    """Our value of each trec_eval measure we express, per topic."""
    pu, curves, K = res.per_user, res.curves_per_user, RUN_LENGTH
    at = {
        name: lambda k, name=name: curves[f"{name}_at_k"][:, k - 1]
        for name in ("p", "r", "ap", "ndcg", "tp", "hit")
    }
    table = {}
    for k in CUTOFFS:
        table.update(
            {
                f"P_{k}": at["p"](k),
                f"recall_{k}": at["r"](k),
                f"map_cut_{k}": at["ap"](k),
                f"ndcg_cut_{k}": at["ndcg"](k),
                f"relative_P_{k}": at["tp"](k),
            }
        )
    for k in (1, 5, 10):
        table[f"success_{k}"] = at["hit"](k)
    table.update(
        {
            "map": pu[f"ap_at_{K}"],
            "ndcg": pu[f"ndcg_at_{K}"],
            "recip_rank": pu[f"rr_at_{K}"],
            "set_P": pu[f"p_at_{K}"],
            "set_recall": pu[f"r_at_{K}"],
            "set_relative_P": pu[f"tp_at_{K}"],
            "set_map": pu[f"set_map_at_{K}"],
            "set_F": pu[f"f1_at_{K}"],
            "num_rel_ret": pu[f"hits_at_{K}"],
            "num_rel": pu["n_test"],
            "Rprec": pu["rprec"],
            "bpref": pu[f"bpref_at_{K}"],
        }
    )
    out = {m: {q: float(np.asarray(v)[u]) for u, q in enumerate(topics)} for m, v in table.items()}
    complete = "303"  # every relevant document of topic 303 is retrieved
    u = topics.index(complete)
    for m in [*IPREC, "11pt_avg"]:
        out[m] = {complete: float(pu[m][u])}
    return out


def test_fixture_counts_match_trec_eval_output(quicktest):
    """The transcribed inputs give trec_eval's own counts per topic (num_ret, num_rel,
    num_rel_ret, num_nonrel_judged_ret and the relevance string of the top 10)."""
    topics, qrels, run, expected, _ = quicktest
    assert topics == ["301", "302", "303"]
    for q in topics:
        by_docno = sorted(run[q], reverse=True)  # then a stable sort by score descending
        ranked = sorted(by_docno, key=lambda d: -run[q][d])
        rel = [qrels[q].get(d, -1) for d in ranked]
        assert str(len(ranked)) == expected[("num_ret", q)]
        assert str(sum(r > 0 for r in qrels[q].values())) == expected[("num_rel", q)]
        assert str(sum(r > 0 for r in rel)) == expected[("num_rel_ret", q)]
        assert str(sum(r == 0 for r in rel)) == expected[("num_nonrel_judged_ret", q)]
        assert (
            "'" + "".join("1" if r > 0 else "0" for r in rel[:10]) + "'"
            == expected[("relstring", q)]
        )


def test_profile_reproduces_trec_eval_out_file(quicktest):
    """Every per-topic value of out.test.aq the profile expresses, within the printed
    precision (177 values)."""
    topics, _, _, expected, res = quicktest
    assert res.definitions["relevance_level"] == 1.0
    ours = ours_by_measure(res, topics)
    checked = 0
    for measure, per_topic in ours.items():
        for q, value in per_topic.items():
            want = float(expected[(measure, q)])
            assert abs(value - want) <= HALF_UNIT, (measure, q, value, want)
            checked += 1
    assert checked == 177


def test_profile_reproduces_trec_eval_summary_lines(quicktest):
    """The ``all`` lines: trec_eval's mean over the three topics (``num_*`` are sums)."""
    topics, _, _, expected, res = quicktest
    ours = ours_by_measure(res, topics)
    checked = 0
    for measure, per_topic in ours.items():
        if len(per_topic) < len(topics):
            continue  # iprec_at_recall_* and 11pt_avg: topic 303 only
        values = list(per_topic.values())
        value = sum(values) if measure.startswith("num_") else float(np.mean(values))
        assert abs(value - float(expected[(measure, "all")])) <= HALF_UNIT, measure
        checked += 1
    assert checked == 55


def test_profile_matches_pytrec_eval_at_full_precision(quicktest):
    """The same parsed inputs through pytrec_eval (trec_eval 9.0.8): equal to 1e-12 for every
    value compared above, and pytrec_eval itself gives the out file's values."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    topics, qrels, run, expected, res = quicktest
    theirs = pytrec_eval.RelevanceEvaluator(qrels, pytrec_eval.supported_measures).evaluate(run)
    compared = 0
    for (measure, q), want in expected.items():
        if q in theirs and measure in theirs[q] and measure != "relstring":
            assert abs(theirs[q][measure] - float(want)) <= HALF_UNIT, (measure, q)
            compared += 1
    assert compared == 270  # every per-topic numeric line of the out file (90 a topic)
    for measure, per_topic in ours_by_measure(res, topics).items():
        for q, value in per_topic.items():
            assert value == pytest.approx(theirs[q][measure], abs=1e-12), (measure, q)


def test_engine_order_is_trec_eval_order(quicktest):
    """Our top-500 list of each topic is the run sorted as trec_eval sorts it (score
    descending, ties by docno descending); the run has ties (topic 301: FBIS3-3586 and
    FBIS3-3622 at 2.785274: the larger docno first, as in the run's own rank column)."""
    topics, _, run, _, res = quicktest
    docnos = sorted(
        {d for q in run for d in run[q]}
        | {d for q in res_qrels(quicktest) for d in res_qrels(quicktest)[q]}
    )
    assert run["301"]["FBIS3-3586"] == run["301"]["FBIS3-3622"]
    for u, q in enumerate(topics):
        by_docno = sorted(run[q], reverse=True)
        want = sorted(by_docno, key=lambda d: -run[q][d])
        assert [docnos[j] for j in res.topk[u]] == want, q
    assert res.definitions["ties"] == "index_desc"


def res_qrels(quicktest):
    return quicktest[1]
