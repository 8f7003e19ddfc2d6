"""Bad inputs to the Python API that used to give a wrong answer or a raw error: id maps paired
by position, duplicates accepted silently, ids that break the per-user table, options the
engine cannot hold. Each now follows a stated policy (with a warning) or raises an
``InputError`` naming the argument."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from recoeval_tracking import InputError, calc_reco_metrics, evaluate
from recoeval_tracking.data import align, from_dataframe, load_csv
from recoeval_tracking.options import EvalOptions


def _frame(users, items):
    return from_dataframe(pd.DataFrame({"user": users, "item": items}))


# ---------------------------------------------------------------------------------------------
# id maps
# ---------------------------------------------------------------------------------------------


def test_train_and_test_with_different_id_maps_are_refused():
    train = _frame([1, 2, 3, 3], [1, 2, 3, 1])
    test = _frame([1, 2, 4], [2, 3, 1])  # user 4 is cold; users 1, 2 keep their ids
    with pytest.raises(
        InputError,
        match=r"different user id maps .*1 test ids are not in "
        r"train \(e.g. \[4\]\).*align",
    ):
        evaluate(train, test, item_biases=np.arange(3.0))
    same_users = _frame([1, 2, 3], [5, 6, 7])
    with pytest.raises(InputError, match="different item id maps"):
        evaluate(train, same_users, item_biases=np.arange(3.0))


def test_aligned_ids_report_a_cold_user_as_cold():
    train, test = align(_frame([1, 2, 3, 3], [1, 2, 3, 1]), _frame([1, 2, 4], [2, 3, 5]))
    assert list(train.user_ids) == list(test.user_ids) == [1, 2, 3, 4]
    assert list(train.item_ids) == [1, 2, 3, 5]
    res = evaluate(train, test, item_biases=np.arange(4.0), k=2, metrics=["p"])
    row = res.per_user.set_index("user_id").loc[4]
    assert row["n_train"] == 0 and row["n_test"] == 1  # not another user's train count
    assert res.per_user.set_index("user_id").loc[3, "nan_reason"] == "no_test"


def test_repeated_user_ids_are_refused():
    test = sp.csr_array(np.eye(3))
    with pytest.raises(InputError, match="'user_ids' parameter of evaluate must be unique"):
        evaluate(None, test, item_biases=np.arange(3.0), user_ids=["a", "a", "b"])


# ---------------------------------------------------------------------------------------------
# duplicates
# ---------------------------------------------------------------------------------------------


def test_duplicate_test_entries_are_summed_with_a_warning():
    rows, cols = [0, 0, 0, 1], [1, 1, 2, 2]
    dup = sp.coo_array((np.ones(4), (rows, cols)), shape=(2, 4))
    merged = sp.csr_array(dup)  # scipy's rule: one entry, value 2
    with pytest.warns(UserWarning, match=r"'test' matrix .* 1 duplicate \(user, item\) entries"):
        got = evaluate(None, dup, item_biases=np.arange(4.0)[::-1].copy(), k=2, metrics=["ndcg"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = evaluate(
            None, merged, item_biases=np.arange(4.0)[::-1].copy(), k=2, metrics=["ndcg"]
        )
    pd.testing.assert_frame_equal(got.per_user, want.per_user)


def test_repeated_items_in_ranked_lists_count_once_with_a_warning():
    test = sp.csr_array(([1.0, 1.0], ([0, 0], [1, 2])), shape=(1, 5))
    with pytest.warns(UserWarning, match="repeat an item 2 times"):
        got = evaluate(None, test, ranked=np.array([[1, 1, 1, 2]]), k=2, metrics=["p", "hit"])
    assert got.per_user["p_at_2"].iloc[0] == 1.0  # [1, 2]: both relevant, counted once each
    df = pd.DataFrame({"user": [0, 0, 0], "item": [3, 1, 3], "rank": [1, 2, 3]})
    with pytest.warns(UserWarning, match="repeat an item 1 times"):
        got = evaluate(None, test, ranked=df, k=2, metrics=["p"])
    assert got.per_user["p_at_2"].iloc[0] == 0.5


# ---------------------------------------------------------------------------------------------
# ids at load
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "users,match",
    [
        ([10**30, 1], "out of the 64-bit integer range"),
        ([1.5, 2.0], "not an integer in the 64-bit range"),
        ([1, "a"], "mix types"),
        ([True, False], "of type bool"),
    ],
)
def test_bad_ids_are_refused_at_load(users, match):
    with pytest.raises(InputError, match=match):
        from_dataframe(pd.DataFrame({"user": users, "item": [1, 2]}))


def test_good_ids_load():
    assert list(_frame(["b", "a"], [1, 2]).user_ids) == ["a", "b"]
    assert list(_frame([2.0, 1.0], [1, 2]).user_ids) == [1.0, 2.0]
    assert list(_frame([-3, 2**62], [1, 2]).user_ids) == [-3, 2**62]


def test_csv_ids_beyond_64_bits_name_the_line(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text(f"user,item\n1,1\n{10**30},2\n")
    with pytest.raises(InputError, match=r"user id 10{30} in column 'user' at line 3 of"):
        load_csv(p)
    p.write_text("user,item,value,timestamp\n1,2\n")
    with pytest.raises(InputError, match="as many fields as the header"):
        load_csv(p)
    p.write_text("user,item\n1,2\n")
    with pytest.raises(InputError, match="'encoding' parameter of load_csv"):
        load_csv(p, encoding="no-such-encoding")


# ---------------------------------------------------------------------------------------------
# options
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options,match",
    [
        ({"seed": 2**64}, "'seed' parameter of evaluate must be an int between 0 and"),
        ({"seed": -1}, "'seed' parameter"),
        ({"block_rows": -1.0}, "'block_rows' parameter"),
        ({"block_rows": 2.5}, "'block_rows' parameter"),
        ({"block_rows": 2**65}, "'block_rows' parameter"),
        ({"profile": ["a"]}, "'profile' parameter of evaluate must be a name"),
        ({"profile": {"a": 1}}, "'profile' parameter"),
        ({"ties": ["a"]}, "'ties' parameter of evaluate must be a name"),
        ({"metrics": 5}, "'metrics' parameter of evaluate must be a metric name"),
        ({"cumulative": "yes"}, "'cumulative' parameter of evaluate must be a bool"),
        ({"consider_cold_start": "no"}, "'consider_cold_start' parameter"),
        ({"nthreads": 0}, "'nthreads' parameter"),
        ({"nthreads": -5}, "'nthreads' parameter"),
        ({"nthreads": 2**70}, "'nthreads' parameter"),
        ({"serendipity_top_n": 2**70}, "'serendipity_top_n' parameter"),
        ({"min_pos_test": 2**65}, "'min_pos_test' parameter"),
        ({"backend": None}, "'backend' parameter"),
    ],
)
def test_bad_options_name_the_argument(options, match):
    test = sp.csr_array(np.eye(4))
    with pytest.raises(InputError, match=match):
        evaluate(None, test, item_biases=np.arange(4.0), k=2, **options)
    with pytest.raises(InputError, match=match):
        EvalOptions(k=2, **options).checked()


# ---------------------------------------------------------------------------------------------
# a broken sparse structure (checked before scipy's unchecked C++ code reads it)
# ---------------------------------------------------------------------------------------------

_BROKEN = {
    "inflated": (
        "X.indptr[3] += 50000",
        r"indptr is non-decreasing. Got an indptr that "
        r"decreases after row 3",
    ),
    "decreasing": ("X.indptr[5] = X.indptr[4] - 1", "indptr is non-decreasing"),
    "short_data": (
        "X.data = X.data[:-3]",
        r"data and indices have the same length. Got 17 "
        r"stored values for 20 indices",
    ),
    "past_end": (
        "X.indptr[-1] += 3",
        r"indptr ends at most at the number of stored entries "
        r"\(20\). Got indptr\[-1\] = 23",
    ),
    "column": ("X.indices[0] = 99", r"column indices lie in \[0, 12\). Got a column index 99"),
    "start": ("X.indptr[0] = 1", "indptr starts at 0"),
    "indptr_length": ("X.indptr = X.indptr[:-1]", "indptr has n_rows . 1 = 9 values"),
}

_ENTRIES = {
    "evaluate": "'test' parameter of evaluate",
    "calc": "'X_test' parameter of calc_reco_metrics",
    "interactions": "'matrix' parameter of Interactions",
}
_CRASH_SCRIPT = """
import gc, sys, numpy as np, scipy.sparse as sp
import recoeval_tracking as rt
for case, edit in {edits!r}:
    for entry in {entries!r}:
        rows = np.repeat(np.arange(8), [3, 2, 4, 1, 3, 2, 3, 2])
        cols = (np.arange(20) * 5) % 12
        X = sp.csr_array((np.ones(20), (rows, cols)), shape=(8, 12))
        assert X.nnz == 20
        exec(edit)
        try:
            if entry == "evaluate":
                rt.evaluate(None, X, item_biases=np.arange(12.0), k=3, metrics=["p"])
            elif entry == "calc":
                rt.calc_reco_metrics(None, X, np.ones((8, 2)), np.ones((12, 2)), k=3)
            else:
                rt.data.Interactions(X, np.arange(8), np.arange(12))
        except rt.InputError as err:
            print("INPUTERROR", case, entry, err, flush=True)
        del X
        gc.collect()
        print("ALIVE", case, entry, flush=True)
"""


@pytest.fixture(scope="module")
def broken_csr_process(tmp_path_factory) -> subprocess.CompletedProcess:
    """Every broken structure given to every entry point, one after the other, in one
    subprocess (a crash must not take the tests down with it): each case's lines are printed
    and flushed as it ends, so a crash shows which case it came in."""
    script = tmp_path_factory.mktemp("broken-csr") / "broken.py"
    edits = [(case, _BROKEN[case][0]) for case in sorted(_BROKEN)]
    script.write_text(_CRASH_SCRIPT.format(edits=edits, entries=list(_ENTRIES)), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=600
    )


@pytest.mark.parametrize("case", sorted(_BROKEN))
@pytest.mark.parametrize("entry", sorted(_ENTRIES))
def test_a_broken_csr_structure_is_refused_naming_the_parameter(case, entry, broken_csr_process):
    """One inflated indptr value used to crash the process (scipy's sum_duplicates and
    sort_indices write out of bounds): run in a subprocess (one for every case), which must
    survive each case and print the named error."""
    done = broken_csr_process
    _, match = _BROKEN[case]
    lines = done.stdout.splitlines()
    assert f"ALIVE {case} {entry}" in lines, (done.returncode, done.stderr[-2000:])
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    line = next(x for x in lines if x.startswith(f"INPUTERROR {case} {entry} "))
    assert _ENTRIES[entry] in line and re.search(match, line), line


def test_unsigned_index_arrays_are_read_as_the_same_matrix():
    X = sp.csr_array(np.array([[0, 1.0, 0, 1.0], [1.0, 0, 0, 0], [0, 0, 1.0, 1.0]]))
    U = sp.csr_array(X, copy=True)
    U.indices = U.indices.astype(np.uint64)
    U.indptr = U.indptr.astype(np.uint64)
    kw = dict(item_biases=np.array([4.0, 3.0, 2.0, 1.0]), k=2, metrics=["p", "ndcg"])
    got, want = evaluate(None, U, **kw), evaluate(None, X, **kw)
    pd.testing.assert_frame_equal(got.per_user, want.per_user)
    assert list(got.per_user["p_at_2"]) == [0.5, 0.5, 0.0]  # top 2 is items 0, 1 for each


def test_coo_and_csc_inputs_are_checked_too():
    coo = sp.coo_array((np.ones(2), (np.array([0, 1]), np.array([1, 2]))), shape=(2, 3))
    coo.col[1] = 7
    with pytest.raises(
        InputError,
        match=r"'test' parameter of evaluate .*column indices lie in "
        r"\[0, 3\). Got a column index 7",
    ):
        evaluate(None, coo, item_biases=np.arange(3.0), k=1)
    csc = sp.csc_array(np.eye(3))
    csc.indices[1] = 5
    with pytest.raises(InputError, match=r"'test' parameter .*row indices lie in \[0, 3\)"):
        evaluate(None, csc, item_biases=np.arange(3.0), k=1)
    ok = sp.csc_array(np.array([[0, 1.0, 0], [1.0, 0, 1.0]]))
    got = evaluate(None, ok, item_biases=np.array([3.0, 2.0, 1.0]), k=1, metrics=["p"])
    assert list(got.per_user["p_at_1"]) == [0.0, 1.0]  # item 0 first: user 1's positive


def test_broken_sparse_item_features_are_refused_by_name():
    features = sp.csr_array(np.eye(4)[:, :2] + 0.5)
    features.indptr[2] += 5000
    with pytest.raises(InputError, match="'item_features' parameter of evaluate .*indptr is non"):
        evaluate(
            None,
            sp.csr_array(np.eye(4)),
            item_biases=np.arange(4.0),
            k=2,
            metrics=["ils"],
            item_features=features,
        )


# ---------------------------------------------------------------------------------------------
# complex values (numpy would drop the imaginary part with a mere ComplexWarning)
# ---------------------------------------------------------------------------------------------


def test_complex_inputs_are_refused():
    test = sp.csr_array(np.eye(3))
    with pytest.raises(InputError, match="'test' parameter of evaluate must be real-valued"):
        evaluate(None, test.astype(complex), item_biases=np.arange(3.0), k=1)
    with pytest.raises(InputError, match="'scores' parameter of evaluate must be a real-valued"):
        evaluate(None, test, scores=np.eye(3) + 1j, k=1)
    with pytest.raises(InputError, match="'A' parameter of evaluate must be a real-valued"):
        evaluate(None, test, A=np.ones((3, 2)) * 1j, B=np.ones((3, 2)), k=1)
    with pytest.raises(InputError, match="'item_biases' parameter of evaluate must be a real"):
        evaluate(None, test, item_biases=np.arange(3.0) + 0j, k=1)
    with pytest.raises(InputError, match="'scorer' passed to evaluate must return real numbers"):
        evaluate(None, test, scorer=lambda u: np.ones((len(u), 3)) + 2j, k=1)
    with pytest.raises(InputError, match="'X_train' parameter of calc_reco_metrics must be real"):
        calc_reco_metrics(sp.csr_array((3, 3)) * 1j, test, np.ones((3, 2)), np.ones((3, 2)), k=1)


# ---------------------------------------------------------------------------------------------
# unclear errors of the app, a partitioned dataset and sync
# ---------------------------------------------------------------------------------------------


def test_a_model_config_without_target_says_so():
    from recoeval_tracking.app.errors import EXIT_USAGE, error_message
    from recoeval_tracking.app.pipeline import build_model

    with pytest.raises(InputError) as err:
        build_model({"lam": 5.0}, None, label="nt")
    status, message = error_message(err.value)
    assert status == EXIT_USAGE
    assert "model=nt has no _target_" in message and "its keys: lam" in message
    assert "model.name" not in message


def test_a_bad_progress_setting_refuses_a_sweep_before_its_parent_run(tmp_path):
    """The app's entry point runs in this process (:func:`commands.run_main`: its exit status
    and output as the command's)."""
    from commands import run_main

    proc = run_main(["-m", "progress=5", "model=popularity,random", "dataset.n_users=50"], tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "progress" in proc.stderr and "['auto', 'true', 'false']" in proc.stderr
    assert "Got '5'" in proc.stderr
    assert not (tmp_path / "multirun").exists() and not (tmp_path / "mlflow.db").exists()


def _manifest_case(tmp_path, edit):
    import json

    from recoeval_tracking.data import open_partitioned, write_partitioned
    from recoeval_tracking.data._partitioned import LAYOUT_FILE

    X = sp.csr_array(np.eye(6)[:, :5])
    write_partitioned(tmp_path / "ds", X, sp.csr_array((6, 5)), users_per_part=4)
    path = tmp_path / "ds" / LAYOUT_FILE
    manifest = json.loads(path.read_text())
    edit(manifest)
    path.write_text(json.dumps(manifest))
    with pytest.raises(InputError) as err:
        open_partitioned(tmp_path / "ds")
    return str(err.value), str(path)


@pytest.mark.parametrize(
    "edit,match",
    [
        (lambda m: m.pop("n_items"), r"lacks the count n_items \(key 'n_items'\)"),
        (
            lambda m: m["parts"][1].pop("users"),
            r"gives no users count for its part 1 .*"
            r"\(key 'parts\[1\]\.users'\)",
        ),
        (lambda m: m["parts"][0].update(users="4"), r"gives '4' users count for its part 0"),
        (lambda m: m.update(n_users=7), r"says 7 users where its parts hold 6 \(key 'n_users'\)"),
        (lambda m: m["parts"][0].pop("file"), r"lists part 0 without its file name"),
    ],
)
def test_a_manifest_missing_a_key_names_the_manifest_and_the_key(tmp_path, edit, match):
    message, path = _manifest_case(tmp_path, edit)
    assert path in message and re.search(match, message), message


def test_sync_refuses_a_malformed_tracking_uri(tmp_path, capsys):
    from recoeval_tracking.app.sync import main

    assert main([str(tmp_path), "--tracking-uri", ":::"]) == 2
    err = capsys.readouterr().err
    assert "--tracking-uri must be a URI with a scheme" in err and "':::'" in err
    assert "maintenance" not in err


def test_sync_prints_its_problems_on_standard_error(tmp_path, capsys):
    from recoeval_tracking.app.sync import main
    from recoeval_tracking.jobdir.markers import PENDING

    job = tmp_path / "no-results"
    job.mkdir()
    (job / PENDING).write_text('{"tracking_uri": "sqlite:///x.db", "upload": {}}')
    assert main([str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert f"skipped {job}:" in err and "skipped" not in out
