"""Per-user files of other tools, read as runs and compared (recoeval_tracking.reporting.
per_user_files).

Each file is written here by hand in the layout its tool writes (the tool's code is cited beside
each writer); the statistics through the files are checked against scipy on the same arrays,
computed here from the values written. The cross-checks at the end make real files with ranx,
PyTerrier and the trec_eval program when they are installed (skipped otherwise).
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import recoeval_tracking as rt
from recoeval_tracking import InputError
from recoeval_tracking.reporting.per_user_files import (
    FORMATS,
    SOURCE_FORMAT_TAG,
    project_name,
    read_per_user,
)

FAST = {"n_bootstrap": 0, "n_permutations": 200}


# ------------------------------------------------------------------------------ the writers


def write_trec_eval_q(path, runid, values, qids):
    """As ``trec_eval -q`` prints: per query, each measure as ``%-22s\\t%s\\t%6.4f``
    (usnistgov/trec_eval meas_print_single.c ``te_print_single_meas_a_cut``), then the summary
    rows of query ``all``: ``runid`` (m_runid.c, ``%-22s\\t%s\\t%s``), ``num_q`` and the means
    (meas_print_final.c)."""
    lines = []
    for i, q in enumerate(qids):
        lines += [f"{m:<22}\t{q}\t{v[i]:6.4f}" for m, v in values.items()]
    lines.append(f"{'runid':<22}\tall\t{runid}")
    lines.append(f"{'num_q':<22}\tall\t{len(qids)}")
    lines += [f"{m:<22}\tall\t{np.mean(v):6.4f}" for m, v in values.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def as_printed(values):
    """The values as ``%6.4f`` leaves them."""
    return np.array([float(f"{v:6.4f}") for v in values])


def write_ranx(path, values, qids):
    """ranx's ``Run.scores`` (``{metric: {q_id: score}}``, ranx/meta/evaluate.py) saved with
    ``json.dump``."""
    scores = {m: {str(q): float(v[i]) for i, q in enumerate(qids)} for m, v in values.items()}
    path.write_text(json.dumps(scores))
    return path


def write_pyterrier(path, systems, qids):
    """PyTerrier's per-query frame, columns ``name, qid, measure, value`` sorted by name and qid
    (pyterrier/_evaluation/_rendering.py ``perquery``), written as ``pt.Experiment``'s
    ``save_dir`` writes ``perquery.csv`` (``to_csv(index=False)``)."""
    rows = [
        [name, q, m, v[i]]
        for name, values in systems.items()
        for i, q in enumerate(qids)
        for m, v in values.items()
    ]
    frame = pd.DataFrame(rows, columns=["name", "qid", "measure", "value"])
    frame.sort_values(["name", "qid"]).to_csv(path, index=False)
    return path


def lenskit_frame(values, users):
    """LensKit's per-list metrics: one row per list with the list key ``user_id`` on the index
    and one column per metric label (lenskit/metrics/_collect.py ``list_metrics``)."""
    return pd.DataFrame(values, index=pd.Index(users, name="user_id"))


def write_warprec(folder, model, k, values, users):
    """WarpRec's ``write_results_per_user`` (warprec/data/writer/base_writer.py): one file per
    cutoff, ``{model}_k_{k}_per_user_{timestamp}.tsv`` with the timestamp ``%d.%m.%Y_%H-%M-%S``,
    ``user_id`` then one column per metric class name, tab-separated, no index."""
    path = folder / f"{model}_k_{k}_per_user_22.11.2026_10-00-00.tsv"
    pd.DataFrame({"user_id": users, **values}).to_csv(path, sep="\t", index=False)
    return path


def _two_systems(n=30, seed=0):
    rng = np.random.default_rng(seed)
    a = {"ndcg_cut_10": rng.uniform(0, 1, n), "P_10": rng.integers(0, 11, n) / 10}
    b = {"ndcg_cut_10": np.clip(a["ndcg_cut_10"] + rng.normal(0.05, 0.1, n), 0, 1)}
    b["P_10"] = np.clip(a["P_10"] + rng.integers(-1, 3, n) / 10, 0, 1)
    a["recip_rank"] = 1 / rng.integers(1, 20, n)
    b["recip_rank"] = 1 / rng.integers(1, 20, n)
    return a, b


# ------------------------------------------------------------------- trec_eval -q compared


def test_two_trec_eval_files_give_scipy_paired_tests(tmp_path):
    qids = [str(q) for q in range(301, 331)]
    a, b = _two_systems()
    fa = write_trec_eval_q(tmp_path / "bm25.txt", "bm25", a, qids)
    fb = write_trec_eval_q(tmp_path / "dph.txt", "dph", b, qids)
    cmp = rt.compare({"bm25": str(fa), "dph": fb}, baseline="bm25", **FAST)
    assert set(cmp.metrics) == {"ndcg_at_10", "p_at_10", "rr"}
    for theirs, ours in (("ndcg_cut_10", "ndcg_at_10"), ("P_10", "p_at_10")):
        x, y = as_printed(a[theirs]), as_printed(b[theirs])
        row = cmp.table(ours).loc["dph"]
        assert row["n"] == 30  # the 'all' rows are no user
        assert row["mean"] == pytest.approx(y.mean(), abs=1e-12)
        assert row["p_t"] == pytest.approx(stats.ttest_rel(y, x).pvalue, rel=1e-9)
        d = y - x
        assert row["p_wilcoxon"] == pytest.approx(stats.wilcoxon(d[d != 0]).pvalue, rel=1e-9)
        assert row["cohens_dz"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-9)
        t = stats.t.ppf(0.975, 29) * x.std(ddof=1) / math.sqrt(30)
        base = cmp.table(ours).loc["bm25"]
        assert (base["t_low"], base["t_high"]) == pytest.approx((x.mean() - t, x.mean() + t))


def test_a_list_of_files_is_named_by_their_runid(tmp_path):
    qids = [str(q) for q in range(1, 11)]
    a, b = _two_systems(10)
    files = [
        write_trec_eval_q(tmp_path / "a.txt", "BM25", a, qids),
        write_trec_eval_q(tmp_path / "b.txt", "DPH", b, qids),
    ]
    cmp = rt.compare(files, **FAST)
    assert cmp.systems == ["BM25", "DPH"]
    run = read_per_user(files[0])
    assert run.tags == {SOURCE_FORMAT_TAG: "trec_eval"}
    assert run.source.startswith(f"trec_eval -q file {files[0]} (sha256 ")
    assert run.fingerprints["file"] in run.source
    assert list(run.per_user["user_id"]) == list(range(1, 11))  # plain integers as numbers


# ---------------------------------------------------------------------- every format read


def _frame_checks(run, expected, users):
    assert list(run.per_user["user_id"]) == users
    assert list(run.per_user.columns) == ["user_id", *expected]
    for name, values in expected.items():
        np.testing.assert_allclose(run.per_user[name].to_numpy(), values, rtol=0, atol=1e-12)


def test_ranx_scores_json(tmp_path):
    qids = ["q_1", "q_2", "q_3"]
    values = {"ndcg@10": [0.5, 0.25, 1.0], "mrr": [1, 0.5, 0], "map": [0.1, 0.2, 0.3]}
    run = read_per_user(write_ranx(tmp_path / "run.json", values, qids))
    # ranx's ndcg@10 is ours (linear gains, log2(rank + 1)), mrr the reciprocal rank; its map
    # without a cutoff reads the whole run, whose depth the file does not say: kept
    _frame_checks(
        run, {"ndcg_at_10": values["ndcg@10"], "rr": values["mrr"], "map": values["map"]}, qids
    )
    assert run.tags[SOURCE_FORMAT_TAG] == "ranx"


def test_two_tools_files_reach_the_statistics_from_the_top_level_package(tmp_path):
    """A ranx user's own files: ``rt.read_per_user`` then ``rt.stats``, user by user (the paired
    t-test as scipy gives it on the values written)."""
    qids = [f"q_{i:02d}" for i in range(12)]
    rng = np.random.default_rng(3)
    a = {"ndcg@10": rng.uniform(0, 1, 12)}
    b = {"ndcg@10": np.clip(a["ndcg@10"] + rng.normal(0.05, 0.1, 12), 0, 1)}
    ra = rt.read_per_user(write_ranx(tmp_path / "a.json", a, qids))
    rb = rt.read_per_user(write_ranx(tmp_path / "b.json", b, qids), name="B")
    assert rb.name == "B" and list(ra.per_user["user_id"]) == qids
    c = rt.stats.paired_comparison(rb.per_user["ndcg_at_10"], ra.per_user["ndcg_at_10"])
    assert c.n_pairs == 12
    assert c.p_t == pytest.approx(stats.ttest_rel(b["ndcg@10"], a["ndcg@10"]).pvalue, rel=1e-9)


def test_a_train_frame_gives_files_their_activity_slices(tmp_path):
    """A file holds no train counts: ``train=`` counts each user's train entries (an item once),
    so that the slices by activity group the users; every form of ``train`` gives the same
    counts, and a train of other users is refused."""
    import scipy.sparse as sp

    qids = ["1", "2", "3", "4"]
    a = {"ndcg_cut_10": [0.1, 0.2, 0.3, 0.4]}
    b = {"ndcg_cut_10": [0.2, 0.1, 0.5, 0.6]}
    fa = write_trec_eval_q(tmp_path / "a.txt", "a", a, qids)
    fb = write_trec_eval_q(tmp_path / "b.txt", "b", b, qids)
    # users 1 and 2 have 1 and 2 train items (item 7 of user 2 twice), user 3 has 6, user 4 none
    train = pd.DataFrame(
        {"user": [1, 2, 2, 2, 3, 3, 3, 3, 3, 3, 9], "item": [5, 6, 7, 7, 1, 2, 3, 4, 5, 6, 1]}
    )
    runs = {"a": rt.read_per_user(fa, train=train), "b": rt.read_per_user(fb, train=train)}
    assert list(runs["a"].per_user["n_train"]) == [1, 2, 6, 0]
    matrix = sp.csr_array((np.ones(9), ([1, 2, 2, 3, 3, 3, 3, 3, 3], [5, 6, 7, 1, 2, 3, 4, 5, 6])))
    assert list(rt.read_per_user(fa, train=matrix).per_user["n_train"]) == [1, 2, 6, 0]
    inter = rt.from_dataframe(train, {"user": "user", "item": "item"}, duplicates="sum")
    assert list(rt.read_per_user(fa, train=inter).per_user["n_train"]) == [1, 2, 6, 0]
    cmp = rt.compare(runs, slices=[{"kind": "cold_warm", "threshold": 2}], **FAST)
    groups = {t.group: t.n_users for t in cmp.report.slices}
    assert groups == {"cold (n_train < 2)": 2, "warm (n_train >= 2)": 2}
    # the users' fingerprint is their ids': a file read without train still compares
    mixed = rt.compare({"a": runs["a"], "b": rt.read_per_user(fb)}, **FAST)
    assert mixed.table("ndcg_at_10").loc["b", "n"] == 4
    with pytest.raises(InputError, match="The 'train' parameter of read_per_user must be"):
        rt.read_per_user(fa, train=pd.DataFrame({"user": ["u7"], "item": [1]}))
    # without train, a slice by activity is refused with the way to give it
    bare = {"a": rt.read_per_user(fa), "b": rt.read_per_user(fb)}
    with pytest.raises(InputError, match=r"rt\.read_per_user\(path, train=train\)"):
        rt.compare(bare, slices=[{"kind": "cold_warm", "threshold": 2}], **FAST)


def test_pyterrier_perquery_csv_with_two_systems(tmp_path):
    qids = [1, 2, 3, 4]
    systems = {
        "BM25": {"nDCG@10": [0.1, 0.2, 0.3, 0.4], "RR": [1, 0.5, 0.25, 0], "AP": [0.3] * 4},
        "DPH": {"nDCG@10": [0.2, 0.2, 0.5, 0.1], "RR": [1, 1, 0.5, 0], "AP": [0.1] * 4},
    }
    path = write_pyterrier(tmp_path / "perquery.csv", systems, qids)
    both = rt.compare([path], **FAST)
    assert both.systems == ["BM25", "DPH"]
    # ir_measures' nDCG@10 is trec_eval's ndcg_cut_10, RR its recip_rank; AP (map) kept
    want = {"ndcg_at_10": systems["DPH"]["nDCG@10"], "rr": systems["DPH"]["RR"]}
    want["AP"] = systems["DPH"]["AP"]
    _frame_checks(read_per_user(path, system="DPH"), want, qids)
    one = rt.compare({"DPH": path, "BM25": path}, **FAST)
    assert one.systems == ["DPH", "BM25"]
    with pytest.raises(InputError) as err:
        rt.compare({"bm25": path, "DPH": path}, **FAST)
    assert "'bm25' for" in str(err.value) and "which holds BM25, DPH" in str(err.value)


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_lenskit_list_metrics(tmp_path, suffix):
    users = [10, 11, 12]
    values = {
        "NDCG@10": [0.5, 0.0, 0.25],
        "Recall@10": [0.5, 0.0, 1.0],
        "Precision@10": [0.1, 0.0, 0.2],
        "RecipRank": [1.0, 0.0, 0.5],
    }
    frame = lenskit_frame(values, users)
    path = tmp_path / f"metrics.{suffix}"
    frame.to_csv(path) if suffix == "csv" else frame.to_parquet(path)
    run = read_per_user(path)
    assert run.tags[SOURCE_FORMAT_TAG] == "lenskit"
    # LensKit's Recall@N is hits / min(|T|, N): this project's tp (truncated precision); its
    # NDCG (binary gains, the first two ranks weigh alike) is the lenskit profile's ndcg_bin_jk
    expected = {
        "ndcg_bin_jk_at_10": values["NDCG@10"],
        "tp_at_10": values["Recall@10"],
        "p_list_at_10": values["Precision@10"],
        "rr": values["RecipRank"],
    }
    _frame_checks(run, expected, users)


def test_lenskit_columns_take_the_lenskit_profiles_metrics(tmp_path):
    """A frame as LensKit writes it for two users at k = 5, its values from LensKit's code
    (lenskit/metrics/ranking/_pr.py, _map.py, _dcg.py, _recip.py, _hit.py) worked by hand. User
    0's list is 3 items long, 4 relevant items: Precision divides by the list's length (2/3,
    not P@5 = 2/5), AveragePrecision by min(|T|, |L|) = 3 ((1 + 2/3) / 3, not TAP@5's / 4). The
    file's columns are the lenskit profile's metrics, which give the same values here."""
    import scipy.sparse as sp

    jk = 1 / math.log2(3)  # rank 3 under max(1, log2 r); ranks 1 and 2 are undiscounted
    values = {
        "Precision@5": [2 / 3, 1 / 5],
        "Recall@5": [2 / 4, 1.0],
        "AveragePrecision@5": [(1 + 2 / 3) / 3, 1 / 4],
        "NDCG@5": [(1 + jk) / (1 + 1 + jk + 1 / 2), 1 / 2],
        "RecipRank@5": [1.0, 1 / 4],
        "Hit@5": [1.0, 1.0],
    }
    lenskit_frame(values, [0, 1]).to_csv(tmp_path / "lenskit.csv")
    run = read_per_user(tmp_path / "lenskit.csv")
    names = ["p_list", "tp", "tap_list", "ndcg_bin_jk", "rr", "hit"]
    expected = {f"{n}_at_5": v for n, v in zip(names, values.values(), strict=True)}
    _frame_checks(run, expected, [0, 1])
    train = sp.csr_array(([1.0, 1.0], ([0, 1], [7, 7])), shape=(2, 8))
    test = sp.csr_array((np.ones(5), ([0, 0, 0, 0, 1], [1, 2, 4, 5, 2])), shape=(2, 8))
    ranked = np.array([[1, 3, 2, -1, -1], [0, 3, 6, 2, 5]])
    ours = rt.evaluate(train, test, ranked=ranked, k=5, profile="lenskit").per_user
    for name in expected:
        np.testing.assert_allclose(ours[name], run.per_user[name], rtol=0, atol=1e-12)


def test_warprec_per_user_file_takes_its_cutoff_from_the_name(tmp_path):
    users = ["u1", "u2", "u3"]
    values = {"Precision": [0.1, 0.2, np.nan], "nDCG": [0.3, 0.0, np.nan], "MAP": [0.2, 0, 0.5]}
    run = read_per_user(write_warprec(tmp_path, "ItemKNN", 10, values, users))
    assert run.name == "ItemKNN" and run.tags[SOURCE_FORMAT_TAG] == "warprec"
    # Precision = hits / k; MAP divides by min(|T|, k) (TAP); nDCG's gain 2^(rel+1)-1 is the
    # warprec profile's ndcg_exp1
    want = {
        "p_at_10": values["Precision"],
        "ndcg_exp1_at_10": values["nDCG"],
        "tap_at_10": values["MAP"],
    }
    _frame_checks(run, want, users)


@pytest.mark.parametrize("sep", [",", "\t"])
def test_plain_long_and_wide_tables(tmp_path, sep):
    long = pd.DataFrame(
        {"user": ["a", "b", "a", "b"], "metric": ["ndcg_at_10"] * 2 + ["hit_at_5"] * 2}
    )
    long["value"] = [0.5, 0.25, 1.0, 0.0]
    long.to_csv(tmp_path / "long.csv", sep=sep, index=False)
    run = read_per_user(tmp_path / "long.csv")
    assert run.tags[SOURCE_FORMAT_TAG] == "long"
    _frame_checks(run, {"ndcg_at_10": [0.5, 0.25], "hit_at_5": [1.0, 0.0]}, ["a", "b"])
    wide = pd.DataFrame({"userId": ["a", "b"], "ndcg_at_10": [0.5, 0.25], "Recall@10": [1, 0]})
    wide.to_parquet(tmp_path / "wide.parquet")
    run = read_per_user(tmp_path / "wide.parquet")
    assert run.tags[SOURCE_FORMAT_TAG] == "wide"  # a column that is no LensKit label
    _frame_checks(run, {"ndcg_at_10": [0.5, 0.25], "Recall@10": [1, 0]}, ["a", "b"])
    wide.to_csv(tmp_path / "wide.csv", sep=sep)  # with its unnamed index: no metric
    _frame_checks(
        read_per_user(tmp_path / "wide.csv"),
        {"ndcg_at_10": [0.5, 0.25], "Recall@10": [1, 0]},
        ["a", "b"],
    )


def test_names_are_mapped_only_where_the_definition_is_the_same():
    # trec_eval's map, set_P, num_rel_ret and the like are at the run's depth, which the file
    # does not say; ranx's ndcg@10-l2 is at another relevance level; a plain table's names are
    # its own; LensKit's Precision divides by the list's length, AveragePrecision by
    # min(|T|, |L|)
    same = ["map", "set_P", "num_rel_ret", "gm_map_x", "ndcg"]
    expected = {
        "trec_eval": {"ndcg_cut_10": "ndcg_at_10", "P_10": "p_at_10", "recall_20": "r_at_20"}
        | {"map_cut_100": "ap_at_100", "recip_rank": "rr", "Rprec": "rprec"}
        | {"success_5": "hit_at_5", **{name: name for name in same}},
        "pyterrier": {"nDCG@10": "ndcg_at_10", "P(rel=2)@10": "P(rel=2)@10"},
        "ranx": {"precision@5": "p_at_5", "ndcg_burges@5": "ndcg_exp_at_5", "f1@10": "f1_at_10"}
        | {"r-precision": "rprec", "ndcg@10-l2": "ndcg@10-l2"},
        "lenskit": {"NDCG@10": "ndcg_bin_jk_at_10", "Precision@10": "p_list_at_10"}
        | {"AveragePrecision@10": "tap_list_at_10"},
        "wide": {"P_10": "P_10"},
    }
    got = {
        fmt: {name: project_name(fmt, name) for name in names} for fmt, names in expected.items()
    }
    assert got == expected


# ------------------------------------------------------------------------------- refusals


def test_an_unknown_format_names_the_formats_tried_and_its_first_line(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("these are my notes\nand more\n")
    with pytest.raises(InputError) as err:
        rt.compare({"a": path, "b": path}, **FAST)
    text = str(err.value)
    assert text.startswith("The 'runs' parameter of compare must be a per-user file in a format")
    assert all(f"{name}: " in text for name in FORMATS)
    assert f"Got {path}, whose first line is 'these are my notes' instead." in text
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)))
    with pytest.raises(InputError, match="whose first line is"):
        read_per_user(binary)


def test_a_forced_format_reads_or_says_why_not(tmp_path):
    frame = lenskit_frame({"Recall@10": [0.5, 1.0]}, [1, 2])
    frame.to_csv(tmp_path / "m.csv")
    assert "Recall@10" in read_per_user(tmp_path / "m.csv", format="wide").per_user.columns
    with pytest.raises(InputError, match=r"was read as trec_eval .* line 1 has 1 tab-sep"):
        read_per_user(tmp_path / "m.csv", format="trec_eval")
    with pytest.raises(InputError, match="The 'format' parameter of compare must be one of"):
        rt.compare({"a": tmp_path / "m.csv"}, format="trec")


def test_files_of_different_users_are_refused_naming_both(tmp_path):
    a, b = _two_systems(10)
    fa = write_trec_eval_q(tmp_path / "a.txt", "a", a, [str(q) for q in range(1, 11)])
    fb = write_trec_eval_q(tmp_path / "b.txt", "b", b, [*map(str, range(1, 10)), "11"])
    with pytest.raises(InputError) as err:
        rt.compare({"bm25": fa, "dph": fb}, **FAST)
    text = str(err.value)
    assert text.startswith("The runs given to compare are not comparable: bm25 (trec_eval -q ")
    assert f"file {fa}" in text and f"file {fb}" in text
    assert "1 only in bm25 (10); 1 only in dph (11)" in text
    assert "allow_mismatch=True" in text
    cmp = rt.compare({"bm25": fa, "dph": fb}, allow_mismatch=True, **FAST)
    assert cmp.table("ndcg_at_10").loc["dph", "n_pairs"] == 9
    assert "NOT COMPARABLE" in str(cmp)


def test_a_metric_of_two_tools_is_left_out_named(tmp_path):
    qids = [str(q) for q in range(1, 9)]
    a, b = _two_systems(8)
    fa = write_trec_eval_q(tmp_path / "a.txt", "a", a, qids)
    fb = write_ranx(tmp_path / "b.json", {"ndcg@10": b["ndcg_cut_10"]}, qids)
    cmp = rt.compare({"trec": fa, "ranx": fb}, metrics=["ndcg_at_10"], **FAST)
    left = cmp.left_out.set_index("system")
    assert left.loc["ranx", "reason"].startswith("defined differently from trec")


def test_ambiguous_or_repeated_values_are_refused(tmp_path):
    qids = [1, 2]
    both = {"S": {"ndcg_cut_10": [0.1, 0.2], "nDCG@10": [0.1, 0.2]}}
    with pytest.raises(InputError, match="'ndcg_cut_10' and 'nDCG@10', which are both ndcg_at_10"):
        read_per_user(write_pyterrier(tmp_path / "p.csv", both, qids))
    long = pd.DataFrame({"user": [1, 1], "metric": ["x", "x"], "value": [0.1, 0.2]})
    long.to_csv(tmp_path / "l.csv", index=False)
    with pytest.raises(InputError, match="gives user 1 several values of x"):
        read_per_user(tmp_path / "l.csv")
    report = {"stat_test": "student", "metrics": ["ndcg@10"], "model_names": ["a"], "a": {}}
    (tmp_path / "report.json").write_text(json.dumps(report))
    with pytest.raises(InputError, match="ranx Report .* means only"):
        read_per_user(tmp_path / "report.json")


def test_ids_that_are_no_plain_integers_stay_text(tmp_path):
    write_trec_eval_q(tmp_path / "a.txt", "a", {"P_5": [0.2, 0.4]}, ["0301", "302"])
    assert list(read_per_user(tmp_path / "a.txt").per_user["user_id"]) == ["0301", "302"]


# ---------------------------------------------------------------------- the report command


def test_the_report_reads_select_files(tmp_path):
    from recoeval_tracking.app.report import run_report

    qids = [str(q) for q in range(1, 21)]
    a, b = _two_systems(20, seed=3)
    write_trec_eval_q(tmp_path / "bm25.txt", "bm25", a, qids)
    write_trec_eval_q(tmp_path / "dph.txt", "dph", b, qids)
    cfg = {
        "select": {"files": ["bm25.txt", "dph.txt"], "format": "trec_eval"},
        "baseline": "bm25",
        "metrics": ["ndcg_at_10"],
        "slices": [],
        "output": {"dir": "out", "markdown": "report.md", "log_to_mlflow": False},
        **FAST,
    }
    out = run_report(cfg, tmp_path)
    rep = out["report"]
    row = rep.comparisons.set_index("run").loc["dph"]
    x, y = as_printed(a["ndcg_cut_10"]), as_printed(b["ndcg_cut_10"])
    assert row["p_t"] == pytest.approx(stats.ttest_rel(y, x).pvalue, rel=1e-9)
    source = rep.inputs.set_index("run").loc["dph", "source"]
    assert source.startswith(f"trec_eval -q file {tmp_path / 'dph.txt'} (sha256 ")
    assert rep.runs[1].fingerprints["file"] in (tmp_path / "out/report.md").read_text()


# -------------------------------------------------------- real files of the tools themselves


def _qrels_and_runs(n_queries=12, seed=0):
    rng = np.random.default_rng(seed)
    qrels = {
        f"q{q}": {f"d{d}": 1 for d in rng.choice(40, 5, replace=False)} for q in range(n_queries)
    }
    runs = [
        {
            f"q{q}": {f"d{d}": float(20 - r) for r, d in enumerate(rng.permutation(40)[:20])}
            for q in range(n_queries)
        }
        for _ in range(2)
    ]
    return qrels, runs


@pytest.mark.slow  # importing ranx compiles its numba metrics
def test_ranx_run_scores_and_its_own_t_test(tmp_path):
    ranx = pytest.importorskip("ranx")
    qrels, (ra, rb) = _qrels_and_runs()
    runs = [ranx.Run(ra, name="a"), ranx.Run(rb, name="b")]
    report = ranx.compare(ranx.Qrels(qrels), runs, ["ndcg@10", "mrr"], stat_test="student")
    for run in runs:
        with open(tmp_path / f"{run.name}.json", "w") as f:
            json.dump(run.scores, f)
    cmp = rt.compare({r.name: tmp_path / f"{r.name}.json" for r in runs}, **FAST)
    table = cmp.table("ndcg_at_10")
    assert table.loc["b", "mean"] == pytest.approx(report.results["b"]["ndcg@10"], rel=1e-12)
    p = report.comparisons[frozenset({"a", "b"})]["ndcg@10"]["p_value"]
    assert table.loc["b", "p_t"] == pytest.approx(p, rel=1e-9)


@pytest.mark.slow  # importing PyTerrier takes seconds
def test_pyterrier_save_dir_perquery_csv(tmp_path):
    pt = pytest.importorskip("pyterrier")
    measures = pytest.importorskip("ir_measures")
    qrels, runs = _qrels_and_runs(seed=1)
    qrels_df = pd.DataFrame(
        [(q, d, 1) for q, docs in qrels.items() for d in docs], columns=["qid", "docno", "label"]
    )
    topics = pd.DataFrame({"qid": list(qrels), "query": "x"})
    res = [
        pd.DataFrame(
            [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
            columns=["qid", "docno", "score"],
        ).assign(rank=lambda f: f.groupby("qid")["score"].rank(ascending=False, method="first") - 1)
        for run in runs
    ]
    ndcg = measures.nDCG @ 10
    kw = dict(eval_metrics=[ndcg, measures.RR], names=["bm25", "dph"])
    pt.Experiment(res, topics, qrels_df, save_dir=str(tmp_path), **kw)
    theirs = pt.Experiment(res, topics, qrels_df, baseline=0, **kw).set_index("name")
    cmp = rt.compare([tmp_path / "perquery.csv"], **FAST)
    table = cmp.table("ndcg_at_10")
    assert table.loc["dph", "mean"] == pytest.approx(theirs.loc["dph", "nDCG@10"], rel=1e-12)
    assert table.loc["dph", "p_t"] == pytest.approx(theirs.loc["dph", "nDCG@10 p-value"], rel=1e-9)


def test_the_trec_eval_program_output(tmp_path):
    program = shutil.which("trec_eval")
    if program is None:
        pytest.skip("the trec_eval program is not on PATH")
    qrels, runs = _qrels_and_runs(seed=2)
    (tmp_path / "qrels").write_text(
        "".join(f"{q} 0 {d} 1\n" for q, docs in qrels.items() for d in docs)
    )
    files = []
    for name, run in zip(("a", "b"), runs):
        lines = [
            f"{q} Q0 {d} {r} {s} {name}\n"
            for q, docs in run.items()
            for r, (d, s) in enumerate(docs.items(), start=1)
        ]
        (tmp_path / f"{name}.run").write_text("".join(lines))
        out = subprocess.run(
            [program, "-q", "-m", "ndcg_cut.10", "-m", "P.10", "qrels", f"{name}.run"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (tmp_path / f"{name}.txt").write_text(out)
        files.append(tmp_path / f"{name}.txt")
    cmp = rt.compare(files, **FAST)
    assert cmp.systems == ["a", "b"]  # trec_eval's runid: the run file's last column

    def ndcg(path):  # the program's per-query lines, read here on their own
        fields = [line.split("\t") for line in path.read_text().splitlines()]
        return {q: float(v) for m, q, v in fields if m.strip() == "ndcg_cut_10" and q != "all"}

    x, y = ndcg(files[0]), ndcg(files[1])
    x, y = np.array([x[q] for q in sorted(y)]), np.array([y[q] for q in sorted(y)])
    row = cmp.table("ndcg_at_10").loc["b"]
    assert row["p_t"] == pytest.approx(stats.ttest_rel(y, x).pvalue, rel=1e-9)
