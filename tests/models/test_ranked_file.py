"""Recommendations made elsewhere, read from CSV, Parquet and TREC run files.

The fixture is small enough to check by hand: three users (``u1``..``u3``), five items
(10..50), K = 2.

* ``u1`` has item 10 in train and {20, 30} in test; its file list is 10, 30, 40, 20, 30: 10 is
  skipped (a train item), the repeated 30 counts once at its best rank, so the top 2 are
  30, 40: P@2 = 1/2, R@2 = 1/2, NDCG@2 = 1 / (1 + 1/log2 3) = 0.61315.
* ``u2`` has {10} in test and the list 40, 10: P@2 = 1/2, R@2 = 1, NDCG@2 = 1/log2 3 = 0.63093.
* ``u3`` has {50} in test and no list in the file: every metric 0.
* one row names an unknown user (``u9``) and one an unknown item (99): counted, not evaluated.
"""

from __future__ import annotations

import json
import logging
import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from recoeval_tracking import InputError, evaluate
from recoeval_tracking.models import RankedFileModel, read_ranked_file

USERS = np.array(["u1", "u2", "u3"])
ITEMS = np.array([10, 20, 30, 40, 50])
ROWS = [
    ("u1", 10, 1, 0.9),
    ("u1", 30, 2, 0.8),
    ("u1", 40, 3, 0.7),
    ("u1", 20, 4, 0.6),
    ("u1", 30, 5, 0.5),
    ("u2", 40, 1, 0.9),
    ("u2", 10, 2, 0.8),
    ("u9", 10, 1, 0.9),
    ("u2", 99, 3, 0.1),
]
EXPECTED = {
    "p_at_2": [0.5, 0.5, 0.0],
    "r_at_2": [0.5, 1.0, 0.0],
    "ndcg_at_2": [1 / (1 + 1 / math.log2(3)), 1 / math.log2(3), 0.0],
    "hit_at_2": [1.0, 1.0, 0.0],
}


def _split():
    train = sp.csr_array(([1.0], ([0], [0])), shape=(3, 5))
    test = sp.csr_array((np.ones(4), ([0, 0, 1, 2], [1, 2, 0, 4])), shape=(3, 5))
    return train, test


def _evaluate(path, **kw):
    train, test = _split()
    model = RankedFileModel(path, **kw).fit(train, user_ids=USERS, item_ids=ITEMS)
    res = evaluate(
        train, test, **model.eval_inputs(2), k=2, metrics=["p", "r", "ndcg", "hit"], user_ids=USERS
    )
    return model, res


def _check(res):
    for name, values in EXPECTED.items():
        np.testing.assert_allclose(res.per_user[name].to_numpy(), values, rtol=1e-12)


def test_csv_with_ranks(tmp_path, caplog):
    path = tmp_path / "recs.csv"
    pd.DataFrame(ROWS, columns=["user", "item", "rank", "score"]).drop(columns="score").to_csv(
        path, index=False
    )
    with caplog.at_level(logging.WARNING):
        model, res = _evaluate(path)
    _check(res)
    c = model.counts
    assert (
        c["unknown_users"],
        c["unknown_items"],
        c["rows_dropped_unknown"],
        c["repeated_items"],
        c["users_with_lists"],
    ) == (1, 1, 2, 1, 2)
    text = caplog.text
    assert "2 of 9 rows" in text and "1 unknown users, 1 unknown items" in text
    assert "1 repeated (user, item) rows" in text


def test_parquet_with_scores_and_other_column_names(tmp_path):
    path = tmp_path / "recs.parquet"
    df = pd.DataFrame(ROWS, columns=["uid", "iid", "pos", "relevance"]).drop(columns="pos")
    df.to_parquet(path)
    _, res = _evaluate(path, user_col="uid", item_col="iid", score_col="relevance")
    _check(res)


def test_trec_run_is_ordered_by_score_as_trec_eval_does(tmp_path):
    # the rank column disagrees with the scores on purpose: trec_eval sorts by score
    lines = [f"{u} Q0 {i} {99 - r} {s} run1" for u, i, r, s in ROWS]
    path = tmp_path / "recs.run"
    path.write_text("\n".join(lines) + "\n")
    _, res = _evaluate(path)
    _check(res)
    df = read_ranked_file(path)
    assert list(df[df.user == "u1"].item) == ["10", "30", "40", "20", "30"]


def test_lists_shorter_than_k_are_padded(tmp_path):
    path = tmp_path / "short.csv"
    pd.DataFrame([("u2", 10, 1)], columns=["user", "item", "rank"]).to_csv(path, index=False)
    train, test = _split()
    model = RankedFileModel(path).fit(train, user_ids=USERS, item_ids=ITEMS)
    res = evaluate(train, test, **model.eval_inputs(3), k=3, metrics=["p", "hit"])
    np.testing.assert_allclose(res.per_user["p_at_3"], [0.0, 1 / 3, 0.0])
    np.testing.assert_allclose(res.per_user["hit_at_3"], [0.0, 1.0, 0.0])


def test_whole_ranking_metrics_are_left_out_with_the_reason(tmp_path):
    path = tmp_path / "recs.csv"
    pd.DataFrame(ROWS, columns=["user", "item", "rank", "score"]).to_csv(path, index=False)
    train, test = _split()
    model = RankedFileModel(path).fit(train, user_ids=USERS, item_ids=ITEMS)
    res = evaluate(train, test, **model.eval_inputs(2), k=2, metrics="standard")
    left = res.definitions["left_out"]
    assert {"roc_auc", "pr_auc"} <= set(left) and "roc_auc" not in res.per_user
    vectors = {"ils", "diversity"}  # no item vectors either, and said so
    assert all("score for every item" in r for m, r in left.items() if m not in vectors)
    assert all("needs item vectors" in left[m] for m in vectors & set(left))


def test_bad_files_name_the_argument(tmp_path):
    path = tmp_path / "recs.csv"
    pd.DataFrame({"user": ["u1"], "item": [10]}).to_csv(path, index=False)
    with pytest.raises(InputError, match="rank_col.*orders each list"):
        _evaluate(path)
    with pytest.raises(InputError, match="'user_col'.*columns"):
        _evaluate(path, user_col="uid")
    with pytest.raises(InputError, match="'path'.*no such file"):
        RankedFileModel(tmp_path / "missing.csv")
    odd = tmp_path / "recs.xlsx"
    odd.write_text("x")
    with pytest.raises(InputError, match="'format'"):
        RankedFileModel(odd)


def test_trec_run_tied_scores_are_ordered_by_docno_descending(tmp_path):
    # trec_eval sorts a topic's documents by score, then by docno in descending order (as text);
    # u1 (test {20, 30}) lists 40 at 0.9 and 30, 50 tied at 0.5: the order is 40, 50, 30, so
    # P@2 = 0 (an ascending tie order, 40, 30, would give 1/2)
    lines = ["u1 Q0 30 1 0.5 run1", "u1 Q0 40 2 0.9 run1", "u1 Q0 50 3 0.5 run1"]
    path = tmp_path / "ties.run"
    path.write_text("\n".join(lines) + "\n")
    df = read_ranked_file(path)
    assert list(df.item) == ["40", "50", "30"]
    train, test = _split()
    model = RankedFileModel(path).fit(train, user_ids=USERS, item_ids=ITEMS)
    res = evaluate(train, test, **model.eval_inputs(2), k=2, metrics=["p"])
    assert res.per_user["p_at_2"].iloc[0] == 0.0


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_file_with_only_a_score_column_is_ordered_by_score_descending(tmp_path, suffix):
    # no rank column and no score_col: the 'score' column orders each list, higher first. u2's
    # list is 40 (0.1), 10 (0.9): read as scores the top 1 is 10, its test item (hit 1); read as
    # ranks it would be 40 (hit 0). u1's top 1 is 30 (0.8; 10 at 0.9 is a train item)
    rows = [("u1", 10, 0.9), ("u1", 40, 0.2), ("u1", 30, 0.8), ("u2", 40, 0.1), ("u2", 10, 0.9)]
    df = pd.DataFrame(rows, columns=["user", "item", "score"])
    path = tmp_path / f"recs.{suffix}"
    df.to_csv(path, index=False) if suffix == "csv" else df.to_parquet(path)
    read = read_ranked_file(path)
    assert list(read[read.user == "u2"].sort_values("key").item) == [10, 40]
    train, test = _split()
    model = RankedFileModel(path).fit(train, user_ids=USERS, item_ids=ITEMS)
    res = evaluate(train, test, **model.eval_inputs(1), k=1, metrics=["hit"], missing_users="skip")
    np.testing.assert_array_equal(res.per_user["hit_at_1"], [1.0, 1.0, np.nan])


@pytest.mark.parametrize("columns", [[0, 1, 2, 3, 4], [3, 2, 4, 0, 1]], ids=["sorted", "shuffled"])
def test_a_tied_score_goes_to_the_lower_item_id_whatever_the_row_order(tmp_path, columns):
    # u1 (test {20, 30}, train {10}) lists 40 then 30, tied at 0.5: the lower id, 30, goes
    # first, so P@1 = 1 (the rows' order would put 40 first: P@1 = 0); the same with the
    # dataset's columns not in id order (a tie is broken by the id, not the column)
    path = tmp_path / "ties.csv"
    pd.DataFrame({"user": ["u1", "u1"], "item": [40, 30], "score": [0.5, 0.5]}).to_csv(
        path, index=False
    )
    ids = ITEMS[columns]
    col = {int(v): j for j, v in enumerate(ids)}
    train = sp.csr_array(([1.0], ([0], [col[10]])), shape=(3, 5))
    test = sp.csr_array(
        (np.ones(4), ([0, 0, 1, 2], [col[20], col[30], col[10], col[50]])), shape=(3, 5)
    )
    test.sort_indices()
    model = RankedFileModel(path, missing_users="skip").fit(train, user_ids=USERS, item_ids=ids)
    res = evaluate(train, test, **model.eval_inputs(1), k=1, metrics=["p"])
    np.testing.assert_array_equal(res.per_user["p_at_1"], [1.0, np.nan, np.nan])


BAD_FILES = {
    # name: (content, what the error must say: the line, what was expected, what was got)
    "five_fields.run": (
        "u1 Q0 10 1 0.9 run1\nu1 Q0 20 2 0.8\n",
        r"6 whitespace-separated fields.*Got 5 field\(s\), 'u1 Q0 20 2 0.8', on line 2",
    ),
    "rank_one.run": (
        "u1 Q0 10 1 0.9 run1\nu1 Q0 20 one 0.8 run1\n",
        r"rank field that is a finite number >= 0.*Got 'one' on line 2",
    ),
    "score_high.run": (
        "u1 Q0 10 1 0.9 run1\n\nu1 Q0 20 2 high run1\n",
        r"score field that is a number, not NaN.*Got 'high' on line 3",
    ),
    "score_nan.run": ("u1 Q0 10 1 nan run1\n", r"score field.*Got 'nan' on line 1"),
    "a_csv.run": (
        "user,item,rank\nu1,10,1\n",
        r"6 whitespace-separated fields.*Got 1 field\(s\), 'user,item,rank', on line 1.*"
        r"format=csv",
    ),
    "empty.run": ("", r"at least one line.*Got no line"),
    "negative_rank.csv": (
        "user,item,rank\nu1,10,1\nu1,20,-1\n",
        r"'rank' column that is a finite number >= 0.*Got -1 on line 3",
    ),
    "header_only.csv": ("user,item,rank\n", r"at least one row.*Got a header .* and no row"),
    "nan_score.csv": ("user,item,score\nu1,10,0.5\nu1,20,\n", r"'score' column.*Got nan on line 3"),
    "text_rank.csv": ("user,item,rank\nu1,10,first\n", r"'rank' column.*Got 'first' on line 2"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_files_that_cannot_order_a_list_are_refused_with_file_and_line(tmp_path, name):
    content, message = BAD_FILES[name]
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(InputError, match=r"The 'path' parameter of RankedFileModel") as err:
        read_ranked_file(path)
    assert repr(str(path)) in str(err.value)
    assert "Reading" not in str(err.value)  # one message, not wrapped in another
    assert __import__("re").search(message, str(err.value)), str(err.value)


def test_parquet_with_a_negative_rank_names_the_row(tmp_path):
    path = tmp_path / "recs.parquet"
    pd.DataFrame({"user": ["u1", "u1"], "item": [10, 20], "rank": [1, -2]}).to_parquet(path)
    with pytest.raises(InputError, match=r"Got -2 on row 2 in"):
        read_ranked_file(path)


def _partial_file(tmp_path):
    """A file with lists for u1 and u2 only (u3, an evaluated user, has none)."""
    path = tmp_path / "partial.csv"
    rows = [("u1", 30, 1), ("u1", 40, 2), ("u2", 40, 1), ("u2", 10, 2)]
    pd.DataFrame(rows, columns=["user", "item", "rank"]).to_csv(path, index=False)
    return path


def test_users_without_a_list_score_zero_by_default_and_are_counted(tmp_path):
    with pytest.warns(
        UserWarning,
        match=r"1 of 3 evaluated users \(33\.3%\) have no list.*"
        r"user ids \['u3'\].*missing_users='zero'",
    ):
        _, res = _evaluate(_partial_file(tmp_path))
    _check(res)  # the values of every user as before: u3 scores 0
    src = res.definitions["source"]
    assert (src["missing_users"], src["users_without_list"], src["evaluated_users"]) == (
        "zero",
        1,
        3,
    )
    assert src["share_without_list"] == pytest.approx(1 / 3)
    assert "no_list" not in res.definitions["nan_rules"]


def test_missing_users_skip_leaves_them_out_of_the_means(tmp_path):
    _, zero = _evaluate(_partial_file(tmp_path))
    with pytest.warns(UserWarning, match="1 of 3 evaluated users.*'no_list'"):
        _, res = _evaluate(_partial_file(tmp_path), missing_users="skip")
    assert list(res.per_user["nan_reason"]) == ["", "", "no_list"]
    for name, values in EXPECTED.items():
        np.testing.assert_allclose(res.per_user[name].to_numpy(), values[:2] + [np.nan])
        assert res.means[name] == pytest.approx(np.mean(values[:2]))
    assert res.nan_counts.get("no_list") == 1
    assert "no_list" in res.definitions["nan_rules"]
    assert res.fingerprint != zero.fingerprint  # the means differ: not the same definition


def test_missing_users_error_names_the_count_and_ids(tmp_path):
    with pytest.raises(
        InputError,
        match=r"'missing_users' parameter of RankedFileModel is "
        r"'error', and 1 of 3 evaluated users .* user ids \['u3'\]",
    ):
        _evaluate(_partial_file(tmp_path), missing_users="error")
    with pytest.raises(InputError, match=r"'missing_users'.*one of \['zero', 'skip', 'error'\]"):
        RankedFileModel(_partial_file(tmp_path), missing_users="drop")


def test_a_file_that_lists_every_evaluated_user_warns_nothing(tmp_path, recwarn):
    path = tmp_path / "full.csv"
    rows = [("u1", 30, 1), ("u2", 10, 1), ("u3", 50, 1)]
    pd.DataFrame(rows, columns=["user", "item", "rank"]).to_csv(path, index=False)
    _, res = _evaluate(path, missing_users="error")
    assert res.definitions["source"]["users_without_list"] == 0
    assert not [w for w in recwarn if "no list" in str(w.message)]


@pytest.mark.slow
def test_the_app_counts_users_without_a_list_and_refuses_them_on_request(tmp_path):
    """A file with lists for 20 of the synthetic data's users: the job says how many evaluated
    users have none (terminal and definitions.json); model.missing_users=error is a usage
    error (exit 2) naming the key. The command's entry point runs in this process
    (:func:`commands.run_main`: its exit status and output, warnings included, as the
    command's)."""
    from commands import run_main

    rng = np.random.default_rng(0)
    rows = [(u, int(i), r + 1) for u in range(20) for r, i in enumerate(rng.choice(80, 10, False))]
    pd.DataFrame(rows, columns=["user", "item", "rank"]).to_csv(tmp_path / "recs.csv", index=False)
    small = ["dataset.n_users=150", "dataset.n_items=80", "plots=false", "progress=false"]
    base = ["model=ranked_file", "model.path=recs.csv", "tracking=none", *small]
    proc = run_main([*base, "hydra.run.dir=zero"], tmp_path, show_warnings=True)
    assert proc.returncode == 0, proc.stderr
    src = json.loads((tmp_path / "zero" / "definitions.json").read_text())["definitions"]["source"]
    per_user = pd.read_parquet(tmp_path / "zero" / "per_user.parquet")
    evaluated = per_user[per_user.nan_reason == ""]
    without = int((~evaluated.user_id.isin(range(20))).sum())  # every user of the file is known
    assert without > 0
    assert (src["users_without_list"], src["evaluated_users"]) == (without, len(evaluated))
    assert f"{without} of {len(evaluated)} evaluated users" in proc.stdout + proc.stderr
    proc = run_main([*base, "model.missing_users=error", "hydra.run.dir=err"], tmp_path)
    assert proc.returncode == 2
    assert "model.missing_users" in proc.stderr and f"{without} of" in proc.stderr
